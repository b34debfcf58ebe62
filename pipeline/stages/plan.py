"""Stage 2, plan: decide the leg's shape (stop counts within the level's ranges) and a route
of pages through the crawl, each page with facts of the level's extraction kinds."""
from __future__ import annotations

from pipeline.model import Leg, Plan, Relation
from pipeline.stages.base import Rejected, StageContext, rng_for
from pipeline.stages.build import CONVERTIBLE_UNITS, ENTITY_ROLES, has_usable_facts, usable_facts
from pipeline.stages.crawl import bridge_degree
from pipeline.stages.facts import hop_modes
from pipeline.stages.hops import hops_from, offers_choice, walkable
from pipeline.stages.llm_steps import plan_route

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


WALK_BUDGET = 2000
LLM_CHAINS = 4       # chains offered to an LLM planner   # pages a chain walk may try before the attempt is given up


def walk(leg: Leg, ctx: StageContext, rng, n_hops: int, n_choices: int, modes: tuple[str, ...],
         fits=lambda route: True, met: dict | None = None) -> tuple[list[str], list[Relation]] | None:
    """A chain of ``n_hops`` hops from the seed (``hops.hops_from``), at least ``n_choices`` of them
    choices, through pages that each offer a fact, whose whole route ``fits`` (offers what the leg's
    roadblocks need); hubs drawn seldom. A randomised depth-first walk: a dead end steps back.
    ``met["chain"]`` is set when the walk met a whole chain that did not fit (why it failed)."""
    budget = [WALK_BUDGET]
    full = frozenset(leg.metadata.get("full_pages", ()))   # pages on as many of the run's routes as it allows

    def extend(route: list[str], relations: list[Relation], choices_left: int):
        if len(relations) == n_hops:
            if choices_left > 0:
                return None
            if fits(route):
                return route, relations
            if met is not None:
                met["chain"] = True
            return None
        budget[0] -= 1
        if budget[0] < 0:
            return None
        options = [h for h in hops_from(route[-1], ctx)
                   if h.target not in route and h.target not in full
                   and has_usable_facts(h.target, ctx, hop_modes(modes))]
        if choices_left >= n_hops - len(relations):
            options = [h for h in options if h.relation.kind == "choice"]
        def weight(h) -> float:   # hubs seldom; while choices are owed, toward choices and pages that offer one
            w = 1.0 / (1 + bridge_degree(h.target, ctx))
            if choices_left > 0:
                w *= (8.0 if h.relation.kind == "choice" else 1.0) * (4.0 if offers_choice(h.target, ctx) else 1.0)
            return w
        weights = [weight(h) for h in options]
        tried = 0
        while options and tried < 6:   # up to six walkable options, drawn by weight (the check is dear: drawn first)
            k = rng.choices(range(len(options)), weights=weights)[0]
            h = options.pop(k)
            weights.pop(k)
            if not walkable(h, route[-1], route[1:] + [h.target], ctx):
                continue
            tried += 1
            found = extend(route + [h.target], relations + [h.relation], choices_left - (h.relation.kind == "choice"))
            if found:
                return found
        return None
    return extend([leg.seed_title], [], n_choices)


def crawl_offers_choice(leg: Leg, ctx: StageContext) -> bool:
    """Does a page of the leg's crawl offer a choice hop (a sentence naming two to five countries whose
    figures differ)? Where none does (the Ray Charles archive alone: songs, albums and a singer, no
    sentence naming countries), a leg owes the fewest choices its level allows (none for easy and medium,
    whose draw of one choice failed every such leg there) instead of one its neighbourhood does not offer
    (a walk may still meet one past the crawl: it is not held to the crawl's pages). Asked only once a
    walk owing more failed, so a leg whose walk found its choices is planned as before."""
    return any(offers_choice(title, ctx) for title, _ in leg.crawl.pages)


def run(leg: Leg, ctx: StageContext) -> Leg:
    """A route of pages from the seed, each reached through the one before by a hop (issue 21): the
    level sets the number of hops and of choices among them; the shape (stops, roadblocks, detours)
    is drawn among those the route fills."""
    preset = ctx.presets[leg.level]
    rng = rng_for(leg, "plan")
    if leg.crawl is None:
        raise Rejected("plan: the leg has not been crawled")
    modes = preset.extraction
    if not usable_facts(leg.seed_title, ctx, modes):
        raise Rejected(f"plan: the seed {leg.seed_title!r} has no extractable fact")
    if not hops_from(leg.seed_title, ctx):
        raise Rejected(f"plan: the seed {leg.seed_title!r} names no page a hop can reach")
    lo, hi = preset.hops
    options = [s for s in shapes(preset) if lo + 1 <= s[3] <= hi + 1]
    if not options:
        raise Rejected(f"plan: no shape of {preset.name} holds {lo}-{hi} hops")
    k, r, d, p = options[rng.randrange(len(options))]
    n_choices = rng.randint(*preset.choices) if preset.choices[1] else 0
    needs = ("place", "country") if leg.variant == "dag" else ENTITY_ROLES

    def offers_entity(route: list[str]) -> bool:
        return any(f.role in needs or (leg.variant != "dag" and f.unit in CONVERTIBLE_UNITS)
                   for t in route for f in usable_facts(t, ctx, modes if t == leg.seed_title else hop_modes(modes)))
    met: dict = {}
    found = walk(leg, ctx, rng, p - 1, min(n_choices, p - 1), modes, offers_entity, met)
    if found is None and n_choices > preset.choices[0] and not crawl_offers_choice(leg, ctx):
        n_choices = preset.choices[0]   # no page of the crawl offers a choice: the fewest the level allows
        found = walk(leg, ctx, rng, p - 1, min(n_choices, p - 1), modes, offers_entity, met)
    if found is None:
        # say which is missing: the chain itself (pages that each offer a fact, one hop to the next), or
        # on the chains the walk met, the entity the leg's roadblocks need
        chained = bool(met.get("chain"))
        raise Rejected(f"plan: no chain of {p - 1} hops ({n_choices} of them choices) from {leg.seed_title!r} "
                       + ("through pages offering " + ("a place or a country to fork" if leg.variant == "dag" else
                                                       "an entity a roadblock can take") if chained else
                          "through pages that each offer a fact"))
    route, relations = found
    seed_page = ctx.page(leg.seed_title)
    leg.theme = (f"A chain of {p - 1} hop{'s' if p > 2 else ''} from {seed_page.title} "
                 f"({seed_page.description or seed_page.infobox_type or 'a page'})")
    if ctx.llm is not None:   # the LLM picks the most thematic of a few chains and names the theme
        chains = {tuple(route): relations}
        for _ in range(LLM_CHAINS * 3):
            if len(chains) >= LLM_CHAINS:
                break
            more = walk(leg, ctx, rng, p - 1, min(n_choices, p - 1), modes, offers_entity)
            if more is not None:
                chains.setdefault(tuple(more[0]), more[1])
        offered = [list(c) for c in chains]
        leg.theme, route = plan_route(ctx.llm, leg.seed_title, p, offered,
                                      lambda t: (ctx.page(t).description if ctx.page(t) else "") or "")
        relations = chains[tuple(route)]
    depth = dict(leg.crawl.pages)
    leg.plan = Plan(stops=k, roadblocks=r, detours=d, pages=p, route=route,
                    depth=max(depth.get(t, 0) for t in route), relations=relations)
    return leg
