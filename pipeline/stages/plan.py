"""Stage 2, plan: decide the leg's shape (stop counts within the level's ranges) and a route
of pages through the crawl, each page with facts of the level's extraction kinds."""
from __future__ import annotations

from pipeline.model import Leg, Plan
from pipeline.stages.base import Rejected, StageContext, rng_for
from pipeline.stages.build import CONVERTIBLE_UNITS, ENTITY_ROLES, resolved
from pipeline.stages.facts import page_facts
from pipeline.stages.llm_steps import plan_route


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
    usable, facts_of = {}, {}
    for title in sorted(depth):
        page = ctx.page(title)
        facts = [f for f in (resolved(f, ctx) for f in page_facts(page, preset.extraction)) if f] if page else []
        if facts:
            usable[title], facts_of[title] = page, facts
    if leg.seed_title not in usable:
        raise Rejected(f"plan: the seed {leg.seed_title!r} has no extractable fact")
    options = [s for s in shapes(preset) if s[3] <= len(usable)]
    if not options:
        raise Rejected(f"plan: only {len(usable)} usable pages within depth {preset.crawl_depth}")
    k, r, d, p = options[rng.randrange(len(options))]
    # DAG legs fork a place or a country, and every roadblock takes its entity from the route: the
    # route must hold a page offering what the leg's roadblocks need
    def forkable(title: str) -> bool:
        if leg.variant == "dag":
            return any(f.role in ("place", "country") for f in facts_of[title])
        return any(f.role in ENTITY_ROLES or f.unit in CONVERTIBLE_UNITS for f in facts_of[title])
    if not any(forkable(t) for t in usable):
        raise Rejected("plan: no page within reach offers " + ("a place or a country to fork" if leg.variant == "dag"
                       else "an entity a roadblock can take (a place, a country, a date, a company, a measure)"))
    # Walk outwards: each next page is linked from a page already on the route (prefer the last one),
    # or, where no link goes on, named by one (the agent searches for it).
    route = [leg.seed_title]
    while len(route) < p:
        frontier = []
        for step in (edges, crawl.mentions):   # linked from the route, else named by it (a search bridge)
            for src in reversed(route):
                frontier = [t for t in step.get(src, []) if t in usable and t not in route]
                if frontier:
                    break
            if frontier:
                break
        if not frontier:  # nothing linked or named: reach another crawled page through search
            frontier = [t for t in usable if t not in route]
        if not frontier:
            break
        if not any(forkable(t) for t in route):
            frontier = [t for t in frontier if forkable(t)] or frontier
        route.append(frontier[rng.randrange(len(frontier))])
    if not any(forkable(t) for t in route):
        fork = sorted(t for t in usable if forkable(t) and t not in route)
        if fork and len(route) > 1:
            route[-1] = fork[rng.randrange(len(fork))]
        elif fork:
            route.append(fork[rng.randrange(len(fork))])
    if len(route) < p:
        raise Rejected(f"plan: route needs {p} pages, found {len(route)}")
    seed_page = usable[leg.seed_title]
    leg.theme = (f"A route of {p} page{'s' if p > 1 else ''} from {seed_page.title} "
                 f"({seed_page.description or seed_page.infobox_type or 'a page'})")
    if ctx.llm is not None:  # the LLM picks a thematic route among the reachable pages
        near = sorted(usable, key=lambda t: (depth[t], t))[:40]
        if leg.variant == "dag" and not any(forkable(t) for t in near):
            near = near[:39] + [t for t in route if forkable(t)][:1]
        leg.theme, route = plan_route(ctx.llm, leg.seed_title, p, [(t, usable[t].description or "") for t in near])
        if leg.variant == "dag" and not any(forkable(t) for t in route):
            raise Rejected("plan: the LLM route offers no place or country to fork")

    leg.plan = Plan(stops=k, roadblocks=r, detours=d, pages=p, route=route, depth=max(depth[t] for t in route))
    return leg
