"""Stage 5, link: how the agent reaches each page stop. A page the plan reached by a hop (issue 21)
keeps its hop, and the chain must hold (no page it hops from dropped since). For other legs (AAR
imports, legs re-linked by hand): ``link_follow`` when an earlier page on
the route links to it, otherwise ``search_query``: a query built from what the page is
(never its title, when possible) that the search tool must rank within the top k."""
from __future__ import annotations

import re

from pipeline.model import (
    COMPUTE,
    DETOUR,
    FINISH_LINE,
    LINK_FOLLOW,
    MERGE,
    ROUTE_INFO,
    SEARCH_QUERY,
    TOOL_CALL,
    Leg,
    Transition,
)
from pipeline.stages.base import Rejected, StageContext

STOPWORDS = {"a", "an", "the", "of", "and", "or", "in", "on", "at", "to", "for", "from", "by", "with", "is", "was", "are", "were", "be", "as", "its", "it", "his", "her", "their", "this", "that"}


def query_words(page, leg_titles: set[str]) -> list[str]:
    """Distinctive words describing a page, without words of any leg page title."""
    banned = {w.lower() for t in leg_titles for w in re.findall(r"\w+", t)}
    text = " ".join(filter(None, [page.description, page.infobox_type or "", page.lead[:300]]))
    words: list[str] = []
    for w in re.findall(r"[A-Za-z][A-Za-z-]{2,}", text):
        lw = w.lower()
        if lw in STOPWORDS or lw in banned or lw in (x.lower() for x in words):
            continue
        words.append(w)
    return words


def find_query(ctx: StageContext, page, leg_titles: set[str]) -> tuple[str, str]:
    """A query that ranks the page in the top k: descriptive first, the title only as last resort."""
    k = int(ctx.generation["search_top_k"])
    words = query_words(page, leg_titles)
    for n in (4, 6, 8, 12):
        if len(words) < min(n, 3):
            break
        query = " ".join(words[:n])
        if page.title in ctx.search_titles(query, k):
            return query, "descriptive"
    query = page.title
    if page.title in ctx.search_titles(query, k):
        return query, "title"
    raise Rejected(f"link: no search query finds {page.title!r} in the top {k}")


def run(leg: Leg, ctx: StageContext) -> Leg:
    leg_titles = {s.page_title for s in leg.stops if s.kind == ROUTE_INFO}
    visited: list[int] = []
    obscurity = []
    for stop in leg.stops:
        if stop.kind != ROUTE_INFO:
            stop.transition = Transition(kind=COMPUTE if stop.kind in (DETOUR, MERGE, FINISH_LINE) else TOOL_CALL)
            continue
        if not visited:
            stop.transition = Transition(kind=LINK_FOLLOW, target_url=stop.page_url)  # the seed is given
            visited.append(stop.index)
            continue
        if stop.transition is not None and stop.transition.relation is not None:   # a hop of the plan
            if stop.transition.from_stop is None or leg.stops[stop.transition.from_stop].kind != ROUTE_INFO:
                raise Rejected(f"link: the chain breaks before stop {stop.index} (the page it hops from was dropped)")
            obscurity.append(f"hop_{stop.transition.relation.kind}")
            visited.append(stop.index)
            continue
        source = None
        for i in reversed(visited):
            page = ctx.page(leg.stops[i].page_title)
            if page and any(l.title == stop.page_title for l in page.links):
                source = i
                break
        if source is not None:
            stop.transition = Transition(kind=LINK_FOLLOW, from_stop=source, target_url=stop.page_url)
            obscurity.append("direct_link")
            stop.depends_on = sorted(set(stop.depends_on) | {source})
            visited.append(stop.index)
            continue
        else:
            query, how = find_query(ctx, ctx.page(stop.page_title), leg_titles)
            stop.transition = Transition(kind=SEARCH_QUERY, from_stop=visited[-1], search_query=query,
                                         target_url=stop.page_url)
            obscurity.append("search_" + how)
        stop.depends_on = sorted(set(stop.depends_on) | {stop.transition.from_stop})
        visited.append(stop.index)
    leg.metadata["bridges"] = obscurity
    hops = sum(s.kind == ROUTE_INFO for s in leg.stops) - 1
    lo = ctx.presets[leg.level].hops[0] if leg.level in ctx.presets else 0
    if leg.plan is not None and leg.plan.relations and hops < lo:
        raise Rejected(f"link: {hops} hops survive, the level needs at least {lo}")
    return leg
