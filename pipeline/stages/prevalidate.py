"""Stage 4, pre-validate: dry-run every stop, drop what fails (and what depends on it), trim
spares to the planned counts, make sure every value feeds something, re-index, and compose
the finish line over the values nothing else consumes."""
from __future__ import annotations

from pipeline import expressions
from pipeline.execute import StopFailed, count_is_clear, run_stop
from pipeline.model import DETOUR, FINISH_LINE, ROADBLOCK, ROUTE_INFO, WIDE, FactSpec, Leg
from pipeline.refs import value_inputs
from pipeline.stages.base import Rejected, StageContext, consumers, reindex, rng_for
from pipeline.stages.facts import hop_modes, page_facts
from pipeline.tools.registry import absorbed


def compose_finish(leg: Leg, stage: str) -> None:
    """(Re)write the finish line over every number nothing else consumes, so all stops flow into y*."""
    finish = leg.stops[-1]
    if finish.kind != FINISH_LINE:
        raise Rejected(f"{stage}: the last stop is not the finish line")
    used = consumers(leg)
    sinks = [s.index for s in leg.stops[:-1] if not (used[s.index] - {finish.index}) and not s.awaiting_diamond]
    bad = [i for i in sinks if leg.stops[i].value_type != "number"]
    if bad:
        raise Rejected(f"{stage}: stops {bad} hold non-numeric values that feed nothing")
    if not sinks:
        raise Rejected(f"{stage}: no value reaches the finish line")
    values = {s.index: s.value for s in leg.stops[:-1]}
    kind, expr, y = expressions.choose_reduction(rng_for(leg, stage + ":finish"), sinks, values)
    finish.expression, finish.value, finish.depends_on = expr, y, sinks
    finish.operation = kind
    finish.description = f"reduce to one digit: {kind}"


def _forkable(stop) -> bool:
    return bool(stop.fact and stop.fact.role in ("place", "country"))


def _to_number(leg: Leg, stop, ctx: StageContext) -> bool:
    """Give a page stop a number of its page instead of its text fact (the first the page offers at the
    modes the build read it with); False when the page has none."""
    page = ctx.page(stop.page_title)
    modes = ctx.presets[leg.level].extraction
    if stop.index:   # a page reached by a hop may give a sentence's fact
        modes = hop_modes(modes)
    numbers = [f for f in page_facts(page, modes) if f.value_type == "number"] if page else []
    if not numbers:
        return False
    fact = numbers[0]
    stop.extraction, stop.value, stop.value_type = fact.extraction, fact.value, "number"
    stop.fact = FactSpec(role="number", label=fact.label, unit=fact.unit)
    stop.description = fact.label
    return True


def roadblocks_to_keep(ranked: list[int], texts: dict[int, set[int]], planned: int, most: int) -> list[int]:
    """The roadblocks kept of those that survived (``ranked`` best first; ``texts``: the page stops whose
    text each one reads): first one for each page text, then the rest in rank order; ``planned`` of
    them, or more (up to ``most``) where the page texts need them. A page's text that feeds nothing
    leaves the chain and breaks it: two roadblocks on one country while the next country's page went
    cost 1 leg in 4 of the linear extreme attempts that reached link."""
    covering, covered = [], set()
    for i in ranked:
        if texts[i] - covered:
            covering.append(i)
            covered |= texts[i]
    n = max(planned, min(len(covering), most))
    return sorted((covering + [i for i in ranked if i not in covering])[:n])


def detour_room(planned: int, planned_roadblocks: int, kept_roadblocks: int, least: int) -> int:
    """How many detours a leg keeps: the planned number, less one for each roadblock kept over the plan
    (``roadblocks_to_keep``), never under the level's ``least``. Fewer roadblocks than planned give
    no extra detour room (that was a bug: a medium DAG leg with 4 detours where 2-3 are allowed)."""
    return max(least, planned - max(0, kept_roadblocks - planned_roadblocks))


# distances between two points a leg reaches: 0 when both are one place ("from Vienna to the capital of
# Austria", blind races 4 and 5), a question whose answer the riddle already gives
TWO_POINT_DISTANCES = frozenset({"geocode_distance", "place_capital_distance", "capital_distance", "capitals_distance"})


def asks_nothing(stop, value) -> bool:
    """Is this roadblock's answer fixed by its wording alone (a distance from a place to itself), does a
    figure asked in a larger unit round to nothing or to the unit itself ("the area of Vatican City in
    thousands of square kilometres" is 0: issue 34, item 7), or does a figure rounded to tens round to
    nothing ("-2 m, rounded to the nearest 10 metres": blind race 20, R02, R05 and R08; a racer asked
    whether a height under sea level rounds to 0)?"""
    if stop.kind != ROADBLOCK:
        return False
    if stop.template in TWO_POINT_DISTANCES and value == 0:
        return True
    spec = stop.roadblock
    if spec is None or not isinstance(value, (int, float)):
        return False
    if spec.scale < 1:
        return abs(value) <= spec.round
    return spec.round > 1 and value == 0


def run(leg: Leg, ctx: StageContext) -> Leg:
    plan = leg.plan
    values: dict[int, object] = {}
    failed: dict[int, str] = {}
    simulated: set[int] = set()   # stops a simulated provider answered: kept last (real data first)
    for stop in leg.stops:
        if stop.kind == FINISH_LINE:
            continue
        if any(i in failed for i in value_inputs(stop)):
            failed[stop.index] = "depends on a dropped stop"
            continue
        calls = []
        try:
            value = run_stop(stop, values, ctx.toolbox, calls)
            count_is_clear(stop, calls, ctx.toolbox)
        except StopFailed as exc:
            failed[stop.index] = str(exc)
            absorbed(exc, f"stop {stop.index} ({stop.kind}) dropped for this attempt")
            continue
        if stop.kind == ROUTE_INFO and value != stop.value:
            failed[stop.index] = f"page fact re-read as {value!r}, built as {stop.value!r}"
            continue
        if asks_nothing(stop, value):
            failed[stop.index] = f"{stop.template} is {value!r}: its wording alone gives it (one place twice, or a figure rounded to nothing)"
            continue
        stop.value = values[stop.index] = value
        if any(t.provenance == "simulated" for t in calls):
            simulated.add(stop.index)
    if 0 in failed:
        raise Rejected(f"prevalidate: the seed stop fails: {failed[0]}")
    leg.metadata["prevalidate_dropped"] = {str(i): r for i, r in sorted(failed.items())}

    keep = [s.index for s in leg.stops if s.index not in failed and s.kind != FINISH_LINE]
    # trim spares: the first planned roadblocks and detours survive, then drop what feeds nothing
    # roadblocks that consume a page's text (place, country, date) go first: that text feeds nothing else
    def feeds_text(i: int) -> bool:
        return any(leg.stops[j].value_type != "number" for j in value_inputs(leg.stops[i]))
    # then real data first, then those a surviving detour works on (a detour on a trimmed spare goes too)
    detoured = {leg.stops[i].source_stop for i in keep if leg.stops[i].kind == DETOUR}
    ranked = sorted((i for i in keep if leg.stops[i].kind == ROADBLOCK),
                    key=lambda i: (not feeds_text(i), i in simulated, i not in detoured, i))
    preset = ctx.presets[leg.level]
    kept_rb = roadblocks_to_keep(ranked, {i: {j for j in value_inputs(leg.stops[i]) if leg.stops[j].value_type != "number"}
                                          for i in ranked}, plan.roadblocks, preset.roadblocks[1])
    dropped_rb = {i for i in keep if leg.stops[i].kind == ROADBLOCK and i not in kept_rb}
    kept_det = [i for i in keep if leg.stops[i].kind == DETOUR and leg.stops[i].source_stop not in dropped_rb]
    # the roadblocks over the plan's count take the place of detours, as far as the level allows
    kept_det = kept_det[: detour_room(plan.detours, plan.roadblocks, len(kept_rb), preset.detours[0])]
    keep = [i for i in keep if leg.stops[i].kind not in (ROADBLOCK, DETOUR) or i in kept_rb or i in kept_det]
    # a page stop holding text (a place, a country, a date) must feed a kept stop, else it goes
    fed = {j for i in keep for j in value_inputs(leg.stops[i])}
    unfed = [i for i in keep if leg.stops[i].value_type != "number" and i not in fed]
    # every page of a chain stays on it (issue 21: a dropped page breaks the chain or leaves too few hops):
    # its unconsumed text fact gives way to a number of the same page, which goes to the finish line (a
    # DAG leg's place or country may wait for a diamond)
    chained = leg.plan is not None and bool(leg.plan.relations)
    for i in [i for i in unfed if chained and leg.stops[i].kind == ROUTE_INFO
              and (leg.variant != "dag" or not _forkable(leg.stops[i]))]:
        if _to_number(leg, leg.stops[i], ctx):
            unfed.remove(i)
    keep = [i for i in keep if i not in unfed]
    if leg.variant == "dag":  # a place or country nothing consumes yet may still be forked by a diamond
        room = preset.stops[1] - sum(leg.stops[i].kind != WIDE for i in keep) - 1
        waiting = sorted((i for i in unfed if leg.stops[i].fact and leg.stops[i].fact.role in ("place", "country")),
                         key=lambda i: (leg.stops[i].fact.role != "country", i))[:max(room, 0)]
        for i in waiting:
            leg.stops[i].awaiting_diamond = True
        keep = sorted(keep + waiting)
    if 0 not in keep:
        raise Rejected("prevalidate: the seed's fact feeds no surviving stop")
    counts = {k: sum(leg.stops[i].kind == k for i in keep) for k in (ROADBLOCK, DETOUR, WIDE)}
    if counts[WIDE] < preset.wide[0]:
        raise Rejected(f"prevalidate: {counts[WIDE]} wide stops survive, the level needs {preset.wide[0]}-{preset.wide[1]} "
                       f"(dropped: {'; '.join(f'{i}: {r}' for i, r in sorted(failed.items()) if leg.stops[i].kind == WIDE)[:300] or 'none made'})")
    if counts[ROADBLOCK] < preset.roadblocks[0] or counts[DETOUR] < preset.detours[0]:
        raise Rejected(f"prevalidate: {counts[ROADBLOCK]} roadblocks and {counts[DETOUR]} detours survive; "
                       f"the level needs {preset.roadblocks[0]} and {preset.detours[0]} "
                       f"(dropped: {'; '.join(f'{i}: {r}' for i, r in sorted(failed.items())[:3])})")
    total = len(keep) + 1 - counts[WIDE]   # the level's stop range counts the stops beside the wide ones
    if not preset.stops[0] <= total <= preset.stops[1]:
        raise Rejected(f"prevalidate: {total} stops survive, the level needs {preset.stops[0]}-{preset.stops[1]}")
    reindex(leg, keep + [leg.stops[-1].index])
    compose_finish(leg, "prevalidate")
    return leg
