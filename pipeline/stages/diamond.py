"""Stage 6, diamond-augment (DAG variant): fork a place or country stop into two independent
tool branches and merge them. Each diamond adds three stops (two branches and a merge) right
after its source's last consumer; the finish line is recomposed so the merge feeds y*."""
from __future__ import annotations

from pipeline import expressions
from pipeline.catalog import diamond_types, roadblock_templates
from pipeline.execute import StopFailed, count_is_clear, run_stop
from pipeline.model import MERGE, ROUTE_INFO, WIDE, Leg, Stop
from pipeline.stages import link
from pipeline.stages.base import Rejected, StageContext, reindex, rng_for
from pipeline.stages.build import entity_key, make_roadblock
from pipeline.stages.prevalidate import asks_nothing, compose_finish
from pipeline.tools.registry import absorbed


def _signature(stop: Stop, named: dict[int, str]) -> tuple:
    """What makes two roadblocks the same question (issue 21): template and what its inputs name
    (``named``: stop index -> entity key; Italy reached by two stops is one input); the drawn
    parameters do not count (airports within 20 and within 40 km of one capital are one search)."""
    if stop.kind != "roadblock":
        return ("", stop.index)
    spec = stop.roadblock
    return (stop.template, tuple(named.get(i, str(i)) for i in (spec.inputs if spec else ())))


def run(leg: Leg, ctx: StageContext) -> Leg:
    if leg.variant != "dag":
        return leg
    preset = ctx.presets[leg.level]
    rng = rng_for(leg, "diamond")
    wanted = rng.randint(*preset.diamonds)
    types = diamond_types()
    templates = roadblock_templates()
    sources = [s for s in leg.stops if s.kind == ROUTE_INFO and s.fact and s.fact.role in ("place", "country")]
    if not sources:
        raise Rejected("diamond: no place or country stop to fork")
    made, attempts, reasons = 0, 0, []
    used_pairs: dict[tuple[int, str], int] = {}  # a pair may fork twice (other dates, categories)
    while made < wanted and attempts < 8 * wanted and sources:
        attempts += 1
        waiting = [s for s in sources if s.awaiting_diamond and not s.diamond]
        if waiting:  # a stop kept only for a diamond is forked first
            source = waiting[0]
        else:
            source = sources[(made + attempts) % len(sources)] if attempts > len(sources) else sources[rng.randrange(len(sources))]
        kinds = sorted(k for k, t in types.items() if t["source"] == source.fact.role
                       and used_pairs.get((source.index, k), 0) < 2
                       and ((ctx.settings.allow_simulated and ctx.settings.simulated_templates) or not any(templates[b].get("simulated_only") for b in t["branches"])))
        if not kinds:
            if waiting:
                sources.remove(source)  # nothing can fork it now: it is dropped below
            continue
        kind = kinds[rng.randrange(len(kinds))]
        used_pairs[(source.index, kind)] = used_pairs.get((source.index, kind), 0) + 1
        spec = types[kind]
        number = made + 1
        named = {s.index: entity_key(s) for s in leg.stops if s.kind == ROUTE_INFO and s.fact}
        taken = {_signature(s, named) for s in leg.stops}
        branches = []
        for b in spec["branches"]:
            for _ in range(4):  # redraw parameters (dates, categories) until the question is new
                branch = make_roadblock(b, templates[b], [source.index], rng, source)
                if _signature(branch, named) not in taken:
                    break
            branches.append(branch)
        if any(_signature(b, named) in taken for b in branches):
            reasons.append(f"{kind} on stop {source.index}: a branch would repeat an existing roadblock")
            continue
        values = {s.index: s.value for s in leg.stops}
        calls = []
        try:
            for b in branches:
                first = len(calls)
                b.value = run_stop(b, values, ctx.toolbox, calls)
                count_is_clear(b, calls[first:], ctx.toolbox)
        except StopFailed as exc:
            reasons.append(f"{kind} on stop {source.index}: {exc}")
            absorbed(exc, f"the {kind} diamond on stop {source.index} not made for this attempt")
            continue
        if any(asks_nothing(b, b.value) for b in branches):
            reasons.append(f"{kind} on stop {source.index}: a branch asks a distance from a place to itself "
                           f"(blind race 7, R24)")
            continue
        if not ctx.settings.simulated_templates and any(t.provenance == "simulated" for t in calls):
            reasons.append(f"{kind} on stop {source.index}: a branch is answered by a simulated provider here "
                           f"(real data first)")
            continue
        base = len(leg.stops)
        for n, b in enumerate(branches):
            b.index, b.diamond, b.diamond_role = base + n, number, "branch"
        merge_kind = spec["merge"][rng.randrange(len(spec["merge"]))]
        expr = expressions.merge_expression(merge_kind, base, base + 1)
        merge_value = expressions.evaluate(expr, {base: branches[0].value, base + 1: branches[1].value})
        if merge_value in (0, 1):
            merge_kind = "sum"
            expr = expressions.merge_expression("sum", base, base + 1)
            merge_value = branches[0].value + branches[1].value
        merge = Stop(index=base + 2, kind=MERGE, description=f"diamond merge: {merge_kind}", depends_on=[base, base + 1],
                     page_url=source.page_url, page_title=source.page_title, template=kind, expression=expr,
                     value=merge_value, value_type="number", diamond=number, diamond_role="merge",
                     operation=merge_kind)
        source.diamond = source.diamond or number
        source.diamond_role = source.diamond_role or "source"
        leg.stops.extend(branches + [merge])
        made += 1
    if made < preset.diamonds[0]:
        raise Rejected(f"diamond: made {made} diamonds, the level needs {preset.diamonds[0]} ({'; '.join(reasons[:3])})")
    # page stops kept for a diamond that none forked feed nothing: drop them
    unforked = {s.index for s in leg.stops if s.awaiting_diamond and not s.diamond}
    if 0 in unforked:
        raise Rejected("diamond: the seed's fact was kept for a diamond that could not be made")
    for s in leg.stops:
        s.awaiting_diamond = False
    if len(leg.stops) - len(unforked) - 3 * made - len(leg.stops_of(WIDE)) < preset.stops[0]:
        raise Rejected(f"diamond: dropping {len(unforked)} unforked page stops leaves fewer than {preset.stops[0]} stops")
    # move the finish line to the end, the new stops just before it
    finish = next(s for s in leg.stops if s.kind == "finish_line")
    order = [s.index for s in leg.stops if s is not finish and s.index not in unforked] + [finish.index]
    reindex(leg, order)
    if any(s.kind == ROUTE_INFO and s.index and s.transition and s.transition.from_stop is None for s in leg.stops):
        # a dropped page was the one the route went on from: bridge the kept pages again
        link.run(leg, ctx)
    compose_finish(leg, "diamond")
    leg.metadata["diamonds"] = made
    return leg
