"""Stage 2, plan: decide the leg's shape (stop counts within the level's ranges) and a route
of pages through the crawl, each page with facts of the level's extraction kinds."""
from __future__ import annotations

from pipeline.model import Leg, Plan
from pipeline.stages.base import Rejected, StageContext, rng_for
from pipeline.stages.build import CONVERTIBLE_UNITS, ENTITY_ROLES, resolved, searched_facts
from pipeline.stages.crawl import bridge_degree
from pipeline.stages.facts import page_facts
from pipeline.stages.llm_steps import plan_route
from pipeline.stages.verbalize import find_leak, page_names

HUB_MENTIONS = 20   # a page named by this many pages (France, Latin) is a hub: routes look past it


def shapes(preset) -> list[tuple[int, int, int, int]]:
    """Every (stops, roadblocks, detours, pages) the preset allows; pages = stops - roadblocks - detours - 1."""
    out = []
    for k in range(preset.stops[0], preset.stops[1] + 1):
        for r in range(preset.roadblocks[0], preset.roadblocks[1] + 1):
            for d in range(preset.detours[0], preset.detours[1] + 1):
                p = k - r - d - 1
                if p >= 1:
                    out.append((k, r, d, p))
    return out


def run(leg: Leg, ctx: StageContext) -> Leg:
    preset = ctx.presets[leg.level]
    rng = rng_for(leg, "plan")
    crawl = leg.crawl
    if crawl is None:
        raise Rejected("plan: the leg has not been crawled")
    depth = {t: d for t, d in crawl.pages}
    edges = crawl.edges
    usable, facts_of, searched = {}, {}, {}
    for title in sorted(depth):
        page = ctx.page(title)
        facts = [f for f in (resolved(f, ctx) for f in page_facts(page, preset.extraction)) if f] if page else []
        if facts:
            usable[title], facts_of[title] = page, facts

    def by_search(title: str) -> list:
        """What a search may reach the page for (never its subject, which the results name)."""
        if title not in searched:
            searched[title] = searched_facts(usable[title], facts_of[title], ctx)
        return searched[title]
    if leg.seed_title not in usable:
        raise Rejected(f"plan: the seed {leg.seed_title!r} has no extractable fact")
    linked_to = {t for src in usable for t in edges.get(src, [])}
    options = [s for s in shapes(preset) if s[3] <= len(usable)]
    if not options:
        raise Rejected(f"plan: only {len(usable)} usable pages within depth {preset.crawl_depth}")
    longest = max(s[3] for s in options)
    # DAG legs fork a place or a country, and every roadblock takes its entity from the route: the
    # route must hold a page offering what the leg's roadblocks need
    def offers(facts) -> bool:
        if leg.variant == "dag":
            return any(f.role in ("place", "country") for f in facts)
        return any(f.role in ENTITY_ROLES or f.unit in CONVERTIBLE_UNITS for f in facts)

    def forkable(title: str, route: list[str] | None = None) -> bool:
        """Does the page offer an entity as the route reaches it (by a link from an earlier route
        page, or the seed; else by a search, which leaves its subject out)?"""
        earlier = None if route is None else route[:route.index(title)] if title in route else route
        linked = title == leg.seed_title or (
            title in linked_to if earlier is None else any(title in edges.get(t, []) for t in earlier))
        return offers(facts_of[title] if linked else by_search(title))
    if not any(forkable(t) for t in usable):
        raise Rejected("plan: no page within reach offers " + ("a place or a country to fork" if leg.variant == "dag"
                       else "an entity a roadblock can take (a place, a country, a date, a company, a measure)"))
    def clashes(title: str, route: list[str]) -> bool:
        """Would a search for the page name a route page (its description names one, or one's names
        it)? Its clue could then not describe it (``verbalize.circumlocution_options``)."""
        if any(title in edges.get(t, []) for t in route):
            return False   # followed by a link: a clue has other ways to describe it
        others = [t for t in route if t != leg.seed_title]
        mine = names_of(title)
        return bool(find_leak(usable[title].description or "", [n for t in others for n in names_of(t)])
                    or any(find_leak(usable[t].description or "", mine) for t in others))

    def names_of(title: str) -> list[str]:
        return sorted(ctx.memo(f"page_names|{title}", lambda: page_names(title, ctx)), key=len, reverse=True)
    def off_hub(titles: list[str]) -> str:
        """One of ``titles``, each drawn in inverse proportion to the ways a route can arrive at it
        (``crawl.bridge_degree``: France, or a page naming a dozen hubs, seldom), so that legs spread
        over the snapshot instead of meeting at the same few pages."""
        return rng.choices(titles, weights=[1 / (1 + bridge_degree(t, ctx)) for t in titles])[0]
    # Walk outwards: each next page is linked from a page already on the route, or named together with
    # one (its text names the page or the page's names it: the agent searches for it); where only hubs
    # go on, any crawled page a search reaches. A page reached by a search must offer a fact other than
    # its subject. Drawing from the whole route's neighbours (not the last page's alone), hubs seldom,
    # keeps legs from meeting at the pages a hub's lead names (issue 14: 29% distinct pages).
    route = [leg.seed_title]
    while len(route) < longest:
        frontier = []
        for src in reversed(route):   # linked from the route or named with one of its pages (a search bridge)
            frontier += [t for t in edges.get(src, []) if t in usable and t not in route and t not in frontier]
            frontier += [t for t in crawl.mentions.get(src, []) if t in usable and t not in route and t not in frontier
                         and (any(t in edges.get(x, []) for x in route) or by_search(t))]
        if all(ctx.store.mention_count(t) >= HUB_MENTIONS for t in frontier):
            # nothing linked or named but hubs: reach another crawled page through search as well
            frontier += [t for t in usable if t not in route and t not in frontier and by_search(t)]
        if not frontier:
            break
        if not any(forkable(t, route) for t in route):
            frontier = [t for t in frontier if forkable(t, route + [t])] or frontier
        frontier = [t for t in frontier if not clashes(t, route)] or frontier
        route.append(off_hub(frontier))
    # the shape is drawn among those the route can fill (a lead-only seed may reach few pages)
    fitting = [s for s in options if s[3] <= len(route)]
    if not fitting:
        raise Rejected(f"plan: route needs {min(s[3] for s in options)} pages, found {len(route)}")
    k, r, d, p = fitting[rng.randrange(len(fitting))]
    route = route[:p]
    if not any(forkable(t, route) for t in route):
        fork = sorted(t for t in usable if t not in route and forkable(t, route[:-1] if len(route) > 1 else route))
        if fork and len(route) > 1:
            route[-1] = off_hub(fork)
        elif fork:
            route.append(off_hub(fork))
    if len(route) < p:
        raise Rejected(f"plan: route needs {p} pages, found {len(route)}")
    seed_page = usable[leg.seed_title]
    leg.theme = (f"A route of {p} page{'s' if p > 1 else ''} from {seed_page.title} "
                 f"({seed_page.description or seed_page.infobox_type or 'a page'})")
    if ctx.llm is not None:  # the LLM picks a thematic route among the reachable pages
        near = sorted(usable, key=lambda t: (depth[t], t))[:40]
        if leg.variant == "dag" and not any(forkable(t) for t in near):
            near = near[:39] + [t for t in route if forkable(t, route)][:1]
        leg.theme, route = plan_route(ctx.llm, leg.seed_title, p, [(t, usable[t].description or "") for t in near])
        if leg.variant == "dag" and not any(forkable(t, route) for t in route):
            raise Rejected("plan: the LLM route offers no place or country to fork")

    leg.plan = Plan(stops=k, roadblocks=r, detours=d, pages=p, route=route, depth=max(depth[t] for t in route))
    return leg
