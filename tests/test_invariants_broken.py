"""Every invariant (README "Invariants", ``pipeline/invariants.py``) fails on a leg broken in exactly
its way: real accepted legs from a small generated run, one thing broken per test, and the check
that owns that thing must say so (with the unbroken legs passing every check first).

Each test was verified by making its check return ``[]`` and seeing it go red (issue 23, item 8).
``LEGWORK_BROKEN_LEGS_RUN=DIR`` reads the legs from a finished run folder instead of generating them
(``benchmarks/mutation.py`` sets it, so a mutant does not pay for a generation run)."""
from __future__ import annotations

import copy
import dataclasses
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline import invariants as inv
from pipeline.acceptance import leg_invariant_failures, leg_invariants
from pipeline.model import DETOUR, FINISH_LINE, MERGE, ROADBLOCK, ROUTE_INFO, SEARCH_QUERY, WIDE, TraceEntry
from pipeline.refs import is_stop_ref, value_inputs
from pipeline.stages.verbalize import forbidden_names
from pipeline.validate import TraceChecker

# medium DAG: page stops reached by search, a diamond, roadblocks on a country, a simulated value
RUN = GenerationParams(level="medium", variant="dag", count=2, seed=7)


@pytest.fixture(scope="module")
def legs(ctx, tmp_path_factory):
    given = os.environ.get("LEGWORK_BROKEN_LEGS_RUN")
    out = Path(given) if given else tmp_path_factory.mktemp("run")
    if not given:
        run_generation(RUN, out, ctx.settings, local_map_stage(ctx))
    made = [inv.Leg.from_json(r["leg_json"]) for r in pq.read_table(out / "legs.parquet").to_pylist()]
    assert len(made) == RUN.count
    return made


@pytest.fixture(scope="module")
def checker(ctx):
    with TraceChecker(ctx.settings, allow_simulated=True) as made:
        yield made


def a_leg(legs, wanted=lambda leg: True, what="a leg"):
    """A fresh copy of the first accepted leg that has what a test breaks."""
    for leg in legs:
        if wanted(leg):
            return copy.deepcopy(leg)
    pytest.fail(f"the fixture run ({RUN}) has no accepted leg with {what}: choose another seed")


def failing(leg, ctx, allow_simulated=True) -> dict[str, list[str]]:
    return leg_invariant_failures(leg, ctx, allow_simulated=allow_simulated)


def preset(ctx, leg, **changes):
    return dataclasses.replace(ctx.presets[leg.level], **changes)


def page_stops(leg):
    return [s for s in leg.stops if s.kind == ROUTE_INFO]


def diamond_parts(leg):
    branches = [s for s in leg.stops if s.diamond_role == "branch"]
    merge = next(s for s in leg.stops if s.diamond_role == "merge")
    return branches, merge


def has_diamond(leg):
    return leg.variant == "dag" and any(s.diamond_role == "merge" for s in leg.stops)


def later_page_stop(leg):
    """A page stop after the seed, reached by a search or a link from the page stop before it."""
    return next((s for s in page_stops(leg)[1:] if s.transition and s.transition.from_stop is not None), None)


def country_geocoded(leg):
    """(source stop, geocoding stop, step) where a country fact of a page is geocoded as a whole."""
    by_index = {s.index: s for s in leg.stops}
    for stop in leg.stops:
        for j, step in enumerate(stop.tool_chain):
            arg = step.args.get("address") if step.tool == "maps_geocode" else None
            if is_stop_ref(arg) and not arg.get("path"):
                source = by_index[arg["$stop"]]
                if source.kind == ROUTE_INFO and source.fact and source.fact.role == "country":
                    return source, stop, j
    return None


# ---- the unbroken legs hold every invariant --------------------------------------------------------
def test_the_accepted_legs_pass_every_invariant_and_their_trace_replays(legs, ctx, checker):
    for leg in legs:
        results = leg_invariants(leg, ctx, allow_simulated=True)
        assert sorted(results, key=lambda k: int(k.split("_")[0])) == [
            "1_dag", "2_counts", "3_expressions", "4_value_flow", "5_riddle", "6_provenance", "7_page_facts",
            "8_places", "9_route_inputs", "10_bridges", "11_hops", "12_one_question", "13_wide_sets"]
        assert {k: v for k, v in results.items() if v} == {}
        replay = checker.check(leg)
        assert replay.errors == [] and replay.notes == []
        assert replay.reexecuted == len(leg.trace) and replay.trace_only == 0 and replay.from_cache == 0
    # what the breaks below need is there
    assert any(has_diamond(leg) for leg in legs) and any(later_page_stop(leg) for leg in legs)
    assert any(country_geocoded(leg) for leg in legs)


# ---- 1. a DAG, dependencies backwards, the level's diamonds ----------------------------------------
def test_1_a_cycle_in_depends_on(legs, ctx):
    leg = a_leg(legs)
    later = next(s for s in leg.stops if s.depends_on)
    first = later.depends_on[0]
    leg.stops[first].depends_on.append(later.index)       # first <- later <- first
    errors = inv.check_dag(leg, ctx.presets[leg.level])
    assert f"stop {first} depends on later stops [{later.index}]" in errors
    assert "dependencies form a cycle" in errors
    assert "1_dag" in failing(leg, ctx)


def test_1_a_stop_depending_on_itself_or_a_later_one(legs, ctx):
    leg = a_leg(legs)
    leg.stops[1].depends_on.append(1)
    assert inv.check_dag(leg, ctx.presets[leg.level]) == ["stop 1 depends on later stops [1]",
                                                          "dependencies form a cycle"]
    leg = a_leg(legs)
    graph = inv.dependency_graph(leg)
    early, late = next((a, b) for a in graph for b in graph if a < b and b not in inv.nx.descendants(graph, a))
    leg.stops[early].depends_on.append(late)              # forwards, but no cycle
    assert inv.check_dag(leg, ctx.presets[leg.level]) == [f"stop {early} depends on later stops [{late}]"]


def test_1_stops_out_of_place(legs, ctx):
    leg = a_leg(legs)
    leg.stops[1], leg.stops[2] = leg.stops[2], leg.stops[1]
    errors = inv.check_dag(leg, ctx.presets[leg.level])
    assert "stop 2 is out of place" in errors and "stop 1 is out of place" in errors


def test_1_a_linear_leg_with_a_diamond(legs, ctx):
    leg = a_leg(legs, has_diamond, "a diamond")
    leg.variant = "linear"
    assert leg.diamonds >= 1
    assert inv.check_dag(leg, ctx.presets[leg.level]) == [f"linear leg has {leg.diamonds} diamonds"]
    assert "1_dag" in failing(leg, ctx)


def test_1_the_level_s_number_of_diamonds(legs, ctx):
    leg = a_leg(legs, has_diamond, "a diamond")
    assert inv.check_dag(leg, preset(ctx, leg, diamonds=(1, 1))) == []
    assert inv.check_dag(leg, preset(ctx, leg, diamonds=(2, 3))) == ["1 diamonds, level needs 2-3"]
    assert inv.check_dag(leg, preset(ctx, leg, diamonds=(0, 0))) == ["1 diamonds, level needs 0-0"]
    branches, merge = diamond_parts(leg)
    for s in [*branches, merge]:                          # the diamond undone: a DAG leg without one
        s.diamond = s.diamond_role = None
    assert inv.check_dag(leg, ctx.presets[leg.level]) == ["0 diamonds, level needs 1-2"]
    assert "1_dag" in failing(leg, ctx)


def test_1_a_diamond_with_one_branch_or_two_merges(legs, ctx):
    leg = a_leg(legs, has_diamond, "a diamond")
    branches, _ = diamond_parts(leg)
    branches[0].diamond_role = "source"
    assert inv.check_dag(leg, ctx.presets[leg.level]) == ["diamond 1: 1 branches and 1 merges"]
    branches[0].diamond_role = "merge"
    assert inv.check_dag(leg, ctx.presets[leg.level]) == ["diamond 1: 1 branches and 2 merges"]
    assert "1_dag" in failing(leg, ctx)


def test_1_branches_that_do_not_fork_from_one_source(legs, ctx):
    leg = a_leg(legs, has_diamond, "a diamond")
    branches, _ = diamond_parts(leg)
    [source] = set(value_inputs(branches[0]))
    other = next(s.index for s in leg.stops if s.index != source and s.index < branches[1].index)
    branches[1].tool_chain[0].args = {k: ({"$stop": other} if is_stop_ref(v) else v)
                                      for k, v in branches[1].tool_chain[0].args.items()}
    assert inv.check_dag(leg, ctx.presets[leg.level]) == ["diamond 1: branches do not fork from one source"]
    assert "1_dag" in failing(leg, ctx)
    # both branches asking about a fixed entity: the same (empty) set of sources is no fork either
    for b in branches:
        b.tool_chain[0].args = {k: ("Turkey" if is_stop_ref(v) else v) for k, v in b.tool_chain[0].args.items()}
    assert inv.check_dag(leg, ctx.presets[leg.level]) == ["diamond 1: branches do not fork from one source"]


def test_1_a_merge_that_does_not_combine_both_branches(legs, ctx):
    leg = a_leg(legs, has_diamond, "a diamond")
    branches, merge = diamond_parts(leg)
    merge.expression = f"s{branches[0].index} + s{branches[0].index}"
    assert inv.check_dag(leg, ctx.presets[leg.level]) == ["diamond 1: merge does not combine both branches"]
    assert "1_dag" in failing(leg, ctx)


# ---- 2. stop counts within the level's ranges ------------------------------------------------------
def counts(leg):
    base = [s for s in leg.stops if s.diamond_role not in ("branch", "merge") and s.kind != WIDE]
    return len(base), sum(s.kind == ROADBLOCK for s in base), sum(s.kind == DETOUR for s in base)


def test_2_stop_counts_out_of_the_level_s_range(legs, ctx):
    leg = a_leg(legs)
    n, roadblocks, detours = counts(leg)
    exact = preset(ctx, leg, stops=(n, n), roadblocks=(roadblocks, roadblocks), detours=(detours, detours))
    assert inv.check_counts(leg, exact) == []
    assert inv.check_counts(leg, dataclasses.replace(exact, stops=(n + 1, n + 5))) == [
        f"{n} stops before augmentation, level needs {n + 1}-{n + 5}"]
    assert inv.check_counts(leg, dataclasses.replace(exact, stops=(1, n - 1))) == [
        f"{n} stops before augmentation, level needs 1-{n - 1}"]
    assert inv.check_counts(leg, dataclasses.replace(exact, roadblocks=(roadblocks + 1, 9))) == [
        f"{roadblocks} roadblock stops, level needs {roadblocks + 1}-9"]
    assert inv.check_counts(leg, dataclasses.replace(exact, roadblocks=(0, roadblocks - 1))) == [
        f"{roadblocks} roadblock stops, level needs 0-{roadblocks - 1}"]
    assert inv.check_counts(leg, dataclasses.replace(exact, detours=(detours + 1, 9))) == [
        f"{detours} detour stops, level needs {detours + 1}-9"]
    assert inv.check_counts(leg, dataclasses.replace(exact, detours=(0, detours - 1))) == [
        f"{detours} detour stops, level needs 0-{detours - 1}"]


def test_2_a_count_one_answer_totals_where_the_level_asks_none(legs, ctx):
    """A level with ``wide_total_counts`` off asks no count that one tool answer reports as its total (a
    whole-word search's, a place search's): such a stop is one call however large its set (issue 34). Broken
    here: a wide stop made a count whose first golden answer reports that count as its total."""
    leg = a_leg(legs, lambda leg: any(e.stop == s.index and e.response.startswith("{")
                                      for s in leg.stops_of(WIDE) for e in leg.trace), "a wide stop")
    stop = next(s for s in leg.stops_of(WIDE) if any(e.stop == s.index for e in leg.trace))
    stop.wide = dataclasses.replace(stop.wide, aggregate="count")
    stop.value = len(stop.wide.members)
    allowed = preset(ctx, leg, wide_total_counts=False)
    assert inv.check_counts(leg, allowed) == []          # no answer of it reports a total of that count
    entry = next(e for e in leg.trace if e.stop == stop.index and e.response.startswith("{"))
    entry.response = json.dumps({**json.loads(entry.response), "total": stop.value})
    assert inv.check_counts(leg, allowed) == [
        (f"wide stop {stop.index}: one tool answer's total is its count ({stop.value}), which the level does not "
         "ask (wide_total_counts)")]
    assert inv.check_counts(leg, dataclasses.replace(allowed, wide_total_counts=True)) == []


def test_2_a_leg_too_long_for_its_level(legs, ctx):
    leg = a_leg(legs)
    n, _, _ = counts(leg)
    leg.level = "easy"                                    # a medium leg passed off as an easy one
    assert n > ctx.presets["easy"].stops[1]
    assert f"{n} stops before augmentation, level needs 3-6" in failing(leg, ctx)["2_counts"]
    leg.level = "no-such-level"
    assert leg_invariants(leg, ctx, allow_simulated=True) == {"2_counts": ["unknown level 'no-such-level'"]}


def test_2_a_diamond_that_adds_more_than_three_stops(legs, ctx):
    leg = a_leg(legs, has_diamond, "a diamond")
    detour = next(s for s in leg.stops if s.kind == DETOUR)
    detour.diamond, detour.diamond_role = 1, "branch"
    assert "a diamond does not add exactly three stops" in inv.check_counts(leg, ctx.presets[leg.level])
    assert "2_counts" in failing(leg, ctx)


def test_2_a_leg_without_exactly_one_finish_line(legs, ctx):
    leg = a_leg(legs)
    exact = preset(ctx, leg, stops=(0, 99), roadblocks=(0, 99), detours=(0, 99), wide=(0, 99), wide_members=(0, 999))
    leg.stops[-1].kind = MERGE
    assert inv.check_counts(leg, exact) == ["the leg must end with exactly one finish line"]
    leg.stops[-1].kind = FINISH_LINE
    leg.stops[-2].kind = FINISH_LINE
    assert inv.check_counts(leg, exact) == ["the leg must end with exactly one finish line"]
    leg.stops = []
    assert inv.check_counts(leg, exact) == ["the leg must end with exactly one finish line"]


# ---- 3. expressions reference stops; the golden trace replays ----------------------------------
def test_3_a_literal_copied_into_an_expression(legs, ctx):
    leg = a_leg(legs, has_diamond, "a merge")
    _, merge = diamond_parts(leg)
    merge.expression = f"{merge.expression} + 3"
    assert inv.check_expressions(leg) == [f"stop {merge.index}: literal 3 not allowed (values must be referenced, not copied)"]
    assert "3_expressions" in failing(leg, ctx)
    finish = leg.stops[-1]
    finish.expression = "s1 +"
    assert any(e.startswith(f"stop {finish.index}: ") for e in inv.check_expressions(leg))
    # an expression that cannot be read breaks the value flow's check too: reported, not raised
    assert failing(leg, ctx)["4_value_flow"][0].startswith("cannot be checked: ")


def test_3_a_passcode_that_is_not_the_finish_line_s_digit(legs, ctx):
    leg = a_leg(legs)
    right = leg.passcode
    leg.passcode = (right + 1) % 10
    assert inv.check_expressions(leg) == [f"passcode {leg.passcode!r} is not the finish line's digit"]
    assert "3_expressions" in failing(leg, ctx)
    leg.passcode = None
    assert inv.check_expressions(leg) == ["passcode None is not the finish line's digit"]
    for digit, holds in ((0, True), (9, True), (10, False), (-1, False)):
        leg.passcode = leg.stops[-1].value = digit
        assert (inv.check_expressions(leg) == []) is holds, digit


def test_3_a_trace_that_does_not_replay(legs, checker):
    leg = a_leg(legs)
    stop = next(s for s in leg.stops if s.kind == ROADBLOCK)
    stop.value = "forged"
    assert f"stop {stop.index} re-executes to" in " ".join(checker.check(leg).errors)
    leg = a_leg(legs)
    leg.passcode = (leg.passcode + 1) % 10
    assert checker.check(leg).errors == [f"y* re-executes to {leg.stops[-1].value!r}, the leg says {leg.passcode!r}"]
    leg = a_leg(legs)
    entry = leg.trace[0]
    entry.response = entry.response.replace('"description":"', '"description":"Forged ', 1)
    [error] = checker.check(leg).errors
    assert error.startswith("call 0 (stop 0 step 0, fetch_webpage): response differs from the trace at character ")
    assert "Forged" in error


def test_3_trace_values_provenance_and_length(legs, checker):
    leg = a_leg(legs)
    leg.trace[0].value = "forged"
    assert checker.check(leg).errors == [(f"call 0 (stop 0 step 0, fetch_webpage) yields {leg.stops[0].value!r}, "
                                         "the trace says 'forged'")]
    leg = a_leg(legs)
    leg.trace[-1].provenance = "snapshot" if leg.trace[-1].provenance != "snapshot" else "offline-data"
    assert any("has provenance" in e for e in checker.check(leg).errors)
    leg = a_leg(legs)
    leg.trace.append(copy.deepcopy(leg.trace[-1]))
    [error] = checker.check(leg).errors
    assert error.startswith("the golden trace has 1 calls the re-execution never made, from call ")
    leg = a_leg(legs)
    leg.trace.pop()
    [error] = checker.check(leg).errors
    assert error.startswith("re-execution failed: call ") and "is not in the golden trace" in error
    leg = a_leg(legs)
    leg.trace[0].args = {"url": leg.trace[0].args["url"] + "_forged"}
    [error] = checker.check(leg).errors
    assert error.startswith("re-execution failed: call 0 (stop 0 step 0, fetch_webpage): executing the leg asks")


def test_3_a_replay_may_be_answered_by_the_generator_s_cache(legs, checker):
    leg = a_leg(legs)
    result = inv.check_golden_trace(leg, checker.offline, [checker.offline])   # the cache asked first
    assert result.errors == [] and result.from_cache == len(leg.trace) > 1 and result.reexecuted == 0


def test_3_a_live_answer_is_checked_against_the_trace_only(legs, checker):
    # a call whose value is a field of its answer (a step that passes the whole answer on, as a geocode
    # for the next step does, yields the answer itself, provenance and all)
    def field_call(t):
        return t.tool != "fetch_webpage" and not isinstance(t.value, dict)
    leg = a_leg(legs, lambda leg: any(field_call(t) for t in leg.trace), "a tool call")
    n = next(i for i, t in enumerate(leg.trace) if field_call(t))
    entry = leg.trace[n]
    data = json.loads(entry.response)
    data["provenance"] = entry.provenance = "live"
    from pipeline.cache import canonical_json
    entry.response = canonical_json(data)
    result = checker.check(leg)
    assert result.errors == [] and result.trace_only == 1 and result.reexecuted == len(leg.trace) - 1
    second = leg.trace[0]
    page = json.loads(second.response)
    page["provenance"] = second.provenance = "live"
    second.response = canonical_json(page)
    assert checker.check(leg).trace_only == 2
    second.provenance, second.response = "snapshot", canonical_json({**page, "provenance": "snapshot"})
    entry.provenance = "live"
    entry.response = canonical_json({**data, "provenance": "offline-data"})
    assert "says provenance 'offline-data', the trace entry 'live'" in checker.check(leg).errors[0]
    entry.response = json.dumps(data, indent=1)
    assert "traced response is not a canonical JSON object" in checker.check(leg).errors[0]
    entry.response = "not json"
    assert "traced response is not JSON" in checker.check(leg).errors[0]


# ---- 4. every value flows into y* --------------------------------------------------------------
def _lone_leaves(leg) -> list[int]:
    """Operands of the finish line that nothing else reads, whose own inputs are read elsewhere too."""
    graph = inv.value_graph(leg)
    return [i for i in inv.expressions.references(leg.stops[-1].expression)
            if list(graph.successors(i)) == [leg.stops[-1].index]
            and all(len(list(graph.successors(j))) > 1 for j in graph.predecessors(i))]


def test_4_a_stop_whose_value_feeds_nothing(legs, ctx):
    leg = a_leg(legs, lambda leg: bool(_lone_leaves(leg)), "a finish operand whose inputs are read elsewhere")
    finish = leg.stops[-1]
    leaf = _lone_leaves(leg)[0]
    others = [i for i in inv.expressions.references(finish.expression) if i != leaf]
    finish.expression = f"({' + '.join(f's{i}' for i in others)}) % 10"
    assert inv.check_value_flow(leg) == [f"stops [{leaf}] do not feed the finish line"]
    assert "4_value_flow" in failing(leg, ctx)


# ---- 5. the riddle: one clue per stop, backwards references, no page name, tool or operand ----------
def test_5_a_missing_or_misnumbered_clue(legs, ctx):
    one_per_stop = "the riddle does not have exactly one numbered clue per stop"
    leg = a_leg(legs)
    del leg.clues[3]
    assert one_per_stop in inv.check_riddle(leg, [])
    assert "5_riddle" in failing(leg, ctx)
    leg = a_leg(legs)
    leg.clues[3].number += 1
    assert one_per_stop in inv.check_riddle(leg, [])
    leg = a_leg(legs)
    leg.clues[3].stop += 1
    assert inv.check_riddle(leg, []) == [one_per_stop]


def test_5_a_clue_referring_to_a_later_or_its_own_result(legs, ctx):
    leg = a_leg(legs)
    clue = leg.clues[1]
    clue.text += " Then add the results of clues 1 and 5."
    assert inv.check_riddle(leg, []) == [f"clue {clue.number} refers to later clues [5]"]
    assert "5_riddle" in failing(leg, ctx)
    clue.text += f" And the result of clue {clue.number}."
    assert inv.check_riddle(leg, []) == [f"clue {clue.number} refers to later clues [5, {clue.number}]"]


def test_5_a_page_name_in_the_riddle(legs, ctx):
    leg = a_leg(legs, lambda leg: len(page_stops(leg)) > 1, "two page stops")
    names = forbidden_names(leg, ctx)
    title = page_stops(leg)[1].page_title
    assert title in names and leg.seed_title not in names
    leg.clues[1].text += f" You may find it on the page {title}."
    assert f"the riddle names the page {title!r}" in inv.check_riddle(leg, names)
    assert "5_riddle" in failing(leg, ctx)


def test_5_a_tool_name_in_the_riddle(legs, ctx):
    leg = a_leg(legs)
    leg.clues[1].text += " (Use MAPS_GEOCODE.)"
    assert inv.check_riddle(leg, []) == ["the riddle names the tool 'maps_geocode'"]
    assert "5_riddle" in failing(leg, ctx)


def test_5_an_operand_value_stated_in_the_finish_clue(legs, ctx):
    leg = a_leg(legs)
    operand = leg.stops[inv.expressions.references(leg.stops[-1].expression)[0]]
    leg.clues[-1].text += f" The first of them is {operand.value}, as found."
    assert inv.check_riddle(leg, []) == [f"the finish clue states operand values [{operand.value!r}]"]
    assert "5_riddle" in failing(leg, ctx)
    leg.clues[-1].text += " (clue 1.)"                     # a clue number is not a value
    assert inv.check_riddle(leg, []) == [f"the finish clue states operand values [{operand.value!r}]"]


# ---- 6. provenance -----------------------------------------------------------------------------------
def all_real(leg):
    return all(t.provenance != "simulated" for t in leg.trace)


def test_6_a_value_without_a_known_provenance(legs, ctx):
    leg = a_leg(legs, all_real, "no simulated value")
    entry = leg.trace[-1]
    entry.provenance = "hearsay"
    assert inv.check_provenance(leg, True) == [f"trace call {entry.tool} of stop {entry.stop} has provenance 'hearsay'"]
    entry.provenance = None
    assert inv.check_provenance(leg, False) == [f"trace call {entry.tool} of stop {entry.stop} has provenance None"]
    assert "6_provenance" in failing(leg, ctx)


def test_6_a_simulated_value_in_a_no_simulated_leg(legs, ctx):
    leg = a_leg(legs, all_real, "no simulated value")
    entry = leg.trace[-1]
    entry.provenance = "simulated"
    assert inv.check_provenance(leg, True) == []
    assert inv.check_provenance(leg, False) == [f"trace call {entry.tool} of stop {entry.stop} is simulated"]
    assert "6_provenance" in failing(leg, ctx, allow_simulated=False)
    assert "6_provenance" not in failing(leg, ctx, allow_simulated=True)


# ---- 7. each page fact is on its page ----------------------------------------------------------------
def test_7_a_page_fact_not_on_its_page(legs, ctx):
    leg = a_leg(legs, lambda leg: len(page_stops(leg)) > 1, "two page stops")
    stop = page_stops(leg)[1]
    right, stop.value = stop.value, "forged"
    assert inv.check_page_facts(leg, lambda url: fetch(ctx, url)) == [
        f"stop {stop.index}: page gives {right!r}, leg says 'forged'"]
    assert "7_page_facts" in failing(leg, ctx)


def fetch(ctx, url):
    from pipeline.tools.backends.offline.web import page_result
    page = ctx.page(url)
    return page_result(page) if page else None


def test_7_a_page_not_in_the_snapshot_or_a_place_on_it_that_is_not_there(legs, ctx):
    leg = a_leg(legs, lambda leg: any(s.extraction and s.extraction.sentence for s in page_stops(leg)),
                "a prose fact")
    stop = next(s for s in page_stops(leg) if s.extraction and s.extraction.sentence)
    stop.extraction.sentence = "A sentence the page does not have."
    [error] = inv.check_page_facts(leg, lambda url: fetch(ctx, url))
    assert error.startswith(f"stop {stop.index}: ")
    assert "7_page_facts" in failing(leg, ctx)
    stop.page_url = "https://en.wikipedia.org/wiki/No_such_page_in_the_snapshot_at_all"
    assert inv.check_page_facts(leg, lambda url: fetch(ctx, url)) == [
        f"stop {stop.index}: page {stop.page_url} not in the snapshot"]
    assert failing(leg, ctx)["7_page_facts"] == [f"stop {stop.index}: page {stop.page_url} not in the snapshot"]


# ---- 8. a place stop gives a place-level tool one place ------------------------------------------------
def geocoders_of(leg, source):
    """(stop, step) of every whole-value geocoding of ``source``'s value."""
    return [(s.index, j) for s in leg.stops for j, st in enumerate(s.tool_chain)
            if st.tool == "maps_geocode" and st.args.get("address") == {"$stop": source.index}]


def test_8_a_country_used_as_a_place(legs, ctx):
    leg = a_leg(legs, country_geocoded, "a country geocoded")
    source, _, _ = country_geocoded(leg)
    assert inv.check_places(leg) == []                    # a country fact geocoded as a country holds
    source.fact.role = "place"                            # ... passed off as one place
    assert inv.check_places(leg) == [f"stop {i} asks maps_geocode about {source.value!r} (stop {source.index}), "
                                     "which is a country" for i, _ in geocoders_of(leg, source)]
    assert "8_places" in failing(leg, ctx)


def test_8_a_list_of_places_used_as_one_place(legs, ctx):
    leg = a_leg(legs, country_geocoded, "a place geocoded")
    source, _, _ = country_geocoded(leg)
    source.fact.role = "place"
    source.value = "Basra, Cairo"
    response = ctx.toolbox.call("maps_geocode", {"address": source.value}).response_json
    assert json.loads(response).get("partial_match") and json.loads(response).get("place_type") != "country"
    users = geocoders_of(leg, source)
    for entry in leg.trace:
        if (entry.stop, entry.step) in users:
            entry.response = response
    assert inv.check_places(leg) == [f"stop {i} asks maps_geocode about 'Basra, Cairo' (stop {source.index}), "
                                     "which is not one place" for i, _ in users]
    assert "8_places" in failing(leg, ctx)
    # an imported leg without a trace has nothing recorded to check
    leg.trace = []
    assert inv.check_places(leg) == []


def test_8_only_a_whole_place_fact_is_checked(legs, ctx):
    leg = a_leg(legs, country_geocoded, "a country geocoded")
    source, user, j = country_geocoded(leg)
    source.fact.role = "place"
    user.tool_chain[j].args["address"] = {"$stop": source.index, "path": "name"}   # a part of it, not the whole
    assert all(f"stop {user.index} " not in e for e in inv.check_places(leg))


# ---- 9. every roadblock takes an input from an earlier stop ------------------------------------------
def test_9_a_roadblock_with_no_input_from_an_earlier_stop(legs, ctx):
    leg = a_leg(legs)
    stop = next(s for s in leg.stops if s.kind == ROADBLOCK)
    stop.roadblock.inputs = []
    assert inv.check_route_inputs(leg) == [f"roadblock {stop.index} ({stop.template}) takes no input from an earlier stop"]
    assert "9_route_inputs" in failing(leg, ctx)
    stop.roadblock = None
    assert inv.check_route_inputs(leg) == [f"roadblock {stop.index} ({stop.template}) takes no input from an earlier stop"]


def test_9_a_roadblock_taking_its_input_from_itself_or_a_later_stop(legs, ctx):
    leg = a_leg(legs)
    stop = next(s for s in leg.stops if s.kind == ROADBLOCK)
    for inputs in ([stop.index], [0, stop.index + 1]):
        stop.roadblock.inputs = inputs
        assert inv.check_route_inputs(leg) == [
            f"roadblock {stop.index} ({stop.template}) takes an input from a later stop: {inputs}"]
    assert "9_route_inputs" in failing(leg, ctx)


# ---- 10. every page after the seed is reached from an earlier page stop ------------------------------
def test_10_a_page_stop_reached_neither_by_a_link_nor_a_search(legs, ctx):
    leg = a_leg(legs, later_page_stop, "a page after the seed")
    stop = later_page_stop(leg)
    message = f"page stop {stop.index} ({stop.page_title}) is reached neither by a link nor by a search"
    stop.transition.kind = "tool_call"
    assert inv.check_bridges(leg) == [message]
    assert "10_bridges" in failing(leg, ctx)
    stop.transition = None
    assert inv.check_bridges(leg) == [message]


def test_10_a_page_stop_reached_from_a_stop_that_is_not_an_earlier_page(legs, ctx):
    leg = a_leg(legs, later_page_stop, "a page after the seed")
    stop = later_page_stop(leg)
    pages = [s.index for s in page_stops(leg)]
    not_a_page = next(s.index for s in leg.stops if s.index not in pages)
    for source in (not_a_page, stop.index, None, *[p for p in pages if p > stop.index][:1]):
        stop.transition.from_stop = source
        assert inv.check_bridges(leg) == [(f"page stop {stop.index} ({stop.page_title}) is reached from {source!r}, "
                                          "not from an earlier page stop")], source
    assert "10_bridges" in failing(leg, ctx)


def test_10_a_page_stop_that_does_not_depend_on_the_page_it_is_reached_from(legs, ctx):
    leg = a_leg(legs, later_page_stop, "a page after the seed")
    stop = later_page_stop(leg)
    source = stop.transition.from_stop
    assert stop.transition.kind in ("link_follow", SEARCH_QUERY)
    stop.depends_on = [d for d in stop.depends_on if d != source]
    assert inv.check_bridges(leg) == [(f"page stop {stop.index} ({stop.page_title}) does not depend on stop {source}, "
                                      "the page it is reached from")]
    assert "10_bridges" in failing(leg, ctx)


# ---- 11. every hop walked: reached through the page before, no verbatim key of its page in its clue --
def hop_stop(leg):
    """A page stop after the seed reached by a relation of the page before (every one in a made leg)."""
    return next((s for s in page_stops(leg)[1:] if s.transition and s.transition.relation), None)


def clue_of(leg, stop):
    return next(c for c in leg.clues if c.stop == stop.index)


def check_hops(leg, ctx):
    return inv.check_hops(leg, lambda url: fetch(ctx, url))


def test_11_a_page_stop_not_reached_through_the_page_before(legs, ctx):
    leg = a_leg(legs, hop_stop, "a hop after the seed")
    stop = hop_stop(leg)
    stop.transition.relation = None
    assert check_hops(leg, ctx) == [f"page stop {stop.index} ({stop.page_title}) is not reached through the page before"]
    assert "11_hops" in failing(leg, ctx)
    stop.transition = None
    assert check_hops(leg, ctx) == [f"page stop {stop.index} ({stop.page_title}) is not reached through the page before"]


def test_11_a_clue_quoting_its_page_s_short_description(legs, ctx):
    leg = a_leg(legs, hop_stop, "a hop after the seed")
    stop = hop_stop(leg)
    description = " ".join(fetch(ctx, stop.page_url)["description"].split()).rstrip(".")
    assert len(description.split()) >= 2
    clue_of(leg, stop).text += f" (its page reads: {description.upper()}.)"   # whatever the case
    assert check_hops(leg, ctx) == [f"clue {stop.index + 1} quotes the short description of its page: {description!r}"]
    assert "11_hops" in failing(leg, ctx)


def test_11_a_clue_quoting_a_run_of_its_page_s_opening_text(legs, ctx):
    leg = a_leg(legs, hop_stop, "a hop after the seed")
    stop = hop_stop(leg)
    import re
    words = re.findall(r"\w+", fetch(ctx, stop.page_url)["lead"])
    clue = clue_of(leg, stop)
    before = clue.text
    clue.text = before + " " + " ".join(words[3:3 + inv.HOP_QUOTE_RUN - 1])   # one word short of a quote
    assert check_hops(leg, ctx) == []
    clue.text = before + " " + " ".join(words[3:3 + inv.HOP_QUOTE_RUN])
    assert check_hops(leg, ctx) == [f"clue {stop.index + 1} quotes the opening text of its page"]
    assert "11_hops" in failing(leg, ctx)


def test_11_every_hop_is_checked_the_seed_never_and_an_imported_leg_keeps_its_own(legs, ctx):
    leg = a_leg(legs, lambda lg: len([s for s in page_stops(lg)[1:] if s.transition and s.transition.relation]) >= 2,
                "two hops after the seed")
    hops = [s for s in page_stops(leg)[1:] if s.transition and s.transition.relation]
    for stop in hops:
        stop.transition.relation = None
    assert len(check_hops(leg, ctx)) == len(hops)
    seed = page_stops(leg)[0]
    seed.transition = None                       # the seed is where the agent starts: no hop to check
    assert len(check_hops(leg, ctx)) == len(hops)
    leg.plan = None                              # an imported (AAR) leg keeps its source's bridges
    assert check_hops(leg, ctx) == []


# ---- check_all and summarize -----------------------------------------------------------------------
def test_a_check_that_breaks_is_reported_not_raised(legs, ctx):
    leg = a_leg(legs)
    leg.trace.append(TraceEntry(stop=None, step=0, tool="x", args={}, response="{}", provenance="hearsay"))
    leg.clues = leg.clues[:2]
    leg.stops[-1].expression = None                       # the finish clue has no operands to look up
    results = inv.check_all(leg, ctx.presets[leg.level], forbidden=[], allow_simulated=True,
                            fetch_page=lambda url: fetch(ctx, url))
    assert results["6_provenance"] == ["trace call x of stop None has provenance 'hearsay'"]
    assert results["5_riddle"] == ["the riddle does not have exactly one numbered clue per stop"]
    broken = inv.check_all(leg, ctx.presets[leg.level], forbidden=[], allow_simulated=True,
                           fetch_page=lambda url: {}["x"])   # a fetch that raises KeyError
    assert broken["7_page_facts"][0].startswith("cannot be checked: KeyError: ")


def test_summarize_counts_the_legs_that_hold_each_invariant():
    results = [{"1_dag": [], "2_counts": ["x"]}, {"1_dag": ["y"], "2_counts": []}, {"1_dag": []}]
    assert inv.summarize(results) == {"1_dag": 2, "2_counts": 2}
    assert list(inv.summarize([{"b": []}, {"a": ["z"]}])) == ["a", "b"]


# ---- what benchmarks/mutation.py found untested: several faults at once, replay bookkeeping ---------
def test_1_every_diamond_is_checked_not_only_the_first_broken_one(legs, ctx):
    leg = a_leg(legs, has_diamond, "a diamond")
    branches, merge = diamond_parts(leg)
    extra = next(s for s in leg.stops if s.kind == ROADBLOCK and s.diamond is None and s.index < merge.index)
    extra.diamond, extra.diamond_role = 2, "branch"       # a second diamond with one branch and no merge
    merge.expression = f"s{branches[0].index} + s{branches[0].index}"
    errors = inv.check_dag(leg, preset(ctx, leg, diamonds=(1, 2)))
    assert sorted(errors) == ["diamond 1: merge does not combine both branches", "diamond 2: 1 branches and 0 merges"]


def test_7_every_page_stop_is_checked_after_one_fails(legs, ctx):
    def prose(s):
        return s.extraction is not None and bool(s.extraction.sentence)
    leg = a_leg(legs, lambda leg: len(page_stops(leg)) > 2 and any(map(prose, page_stops(leg)[1:])),
                "three page stops, one after the seed read from a sentence")
    first, *later = page_stops(leg)
    second = next(s for s in later if prose(s))                  # its sentence is what breaks
    third = next(s for s in later if s is not second)
    first.page_url = "https://en.wikipedia.org/wiki/No_such_page_in_the_snapshot_at_all"
    second.extraction.sentence = "A sentence the page does not have."
    third.value = "forged"
    errors = inv.check_page_facts(leg, lambda url: fetch(ctx, url))
    assert [e.split(":")[0] for e in errors] == [f"stop {s.index}" for s in sorted((first, second, third),
                                                                                   key=lambda s: s.index)]


def test_7_an_infobox_date_is_compared_as_a_date(legs, ctx):
    from pipeline.model import Extraction
    from pipeline.snapshot.page import title_to_url
    leg = a_leg(legs)
    stop = page_stops(leg)[0]
    stop.page_url, stop.extraction, stop.value_type = title_to_url("Ray Charles"), Extraction("infobox", field="born"), "date"
    stop.value = "1930-09-23"
    assert inv.check_page_facts(leg, lambda url: fetch(ctx, url)) == []
    stop.value = "1930-09-24"
    assert inv.check_page_facts(leg, lambda url: fetch(ctx, url)) == [
        f"stop {stop.index}: page gives '1930-09-23', leg says '1930-09-24'"]


def place_leg(chain, trace):
    """A by-hand leg: page stop 0 is about a place ("Basra, Cairo"), stop 1 runs ``chain`` on it."""
    from pipeline.model import FactSpec, Leg, Stop, ToolStep
    steps = [ToolStep(tool, args, "out", "") for tool, args in chain]
    stops = [Stop(0, ROUTE_INFO, "a place", value="Basra, Cairo", fact=FactSpec("place", "the place")),
             Stop(1, ROADBLOCK, "on it", depends_on=[0], tool_chain=steps)]
    return Leg("l", "easy", "linear", 0, "S", "u", stops=stops,
               trace=[TraceEntry(1, j, tool, {}, json.dumps(response), "offline-data") for j, tool, response in trace])


def test_8_every_step_of_a_chain_is_checked():
    near = ("maps_search_places", {"location": {"$stop": 0}})
    geocode = ("maps_geocode", {"address": {"$stop": 0}})
    listed = {"partial_match": True}
    # a step that is not a place lookup, then one that is
    assert len(inv.check_places(place_leg([near, geocode], [(0, "maps_search_places", {}),
                                                            (1, "maps_geocode", listed)]))) == 1
    # an untraced lookup (nothing to check), then a traced one
    assert len(inv.check_places(place_leg([geocode, geocode], [(1, "maps_geocode", listed)]))) == 1
    # only a page's place fact is a place stop: the same value from a roadblock is not checked
    leg = place_leg([geocode], [(0, "maps_geocode", listed)])
    assert len(inv.check_places(leg)) == 1
    leg.stops[0].kind = ROADBLOCK
    assert inv.check_places(leg) == []


def test_5_page_names_in_any_case_and_a_riddle_without_clues(legs, ctx):
    leg = a_leg(legs, lambda leg: len(page_stops(leg)) > 1, "two page stops")
    names = forbidden_names(leg, ctx)
    title = page_stops(leg)[1].page_title
    leg.clues[1].text += f" You may find it on the page {title.upper()}."
    assert f"the riddle names the page {title!r}" in inv.check_riddle(leg, names)
    leg.clues = []
    assert inv.check_riddle(leg, names) == ["the riddle does not have exactly one numbered clue per stop"]


def test_first_difference_and_machine_fields_by_hand():
    a, b = "a" * 30 + "X" + "b" * 30, "a" * 30 + "Y" + "b" * 30
    assert inv._first_difference(a, b) == (f"at character 30: trace {'a' * 20 + 'X' + 'b' * 19!r}, "
                                           f"now {'a' * 20 + 'Y' + 'b' * 19!r}")
    assert inv._first_difference("abc", "abcd") == "at character 3: trace 'abc', now 'abcd'"
    assert inv._without('{"a": 1, "isolation": "bwrap"}', ("isolation",)) == {"a": 1}
    assert inv._without("[1, 2]", ("isolation",)) == [1, 2]
    assert inv._without("not json", ("isolation",)) is None


def test_trace_checks_add_up():
    total = inv.TraceCheck(errors=["kept"], reexecuted=1, trace_only=2, from_cache=3, notes=["n1"])
    total.add(inv.TraceCheck(errors=["not added"], reexecuted=10, trace_only=20, from_cache=30, notes=["n2"]))
    assert (total.errors, total.reexecuted, total.trace_only, total.from_cache, total.notes) == (
        ["kept"], 11, 22, 33, ["n1", "n2"])


class FakeToolbox:
    """Answers every call with one response (or misses, as a replay cache without it)."""

    def __init__(self, response: dict | None):
        self.response, self.calls, self.asked = response, 0, []

    def call(self, name, args):
        from pipeline.cache import ReplayMiss, canonical_json
        from pipeline.tools.registry import ToolResult
        self.calls += 1
        self.asked.append((name, args))
        if self.response is None:
            raise ReplayMiss(name)
        return ToolResult(name, args, True, self.response, canonical_json(self.response), "cache")


def one_call_leg(tool: str, response: dict, provenance: str = "offline-data"):
    from pipeline.cache import canonical_json
    from pipeline.model import Leg
    return Leg("l", "easy", "linear", 0, "S", "u",
               trace=[TraceEntry(0, 0, tool, {"x": 1}, canonical_json(response), provenance)])


def test_replay_answers_from_the_cache_first_and_notes_machine_differences():
    sandbox = {"stdout": "4", "isolation": "bwrap", "source": "python 3.11", "provenance": "offline-data"}
    leg = one_call_leg("python_execute_code", sandbox)
    # the first replay cache misses, the second has it: answered from the cache, never re-executed
    check = inv.TraceCheck()
    offline = FakeToolbox(sandbox)
    cached = FakeToolbox(sandbox)
    answers = inv._TraceAnswers(leg, offline, [FakeToolbox(None), cached], check)
    assert answers.call("python_execute_code", {"x": 1}).data == sandbox
    assert (check.from_cache, check.reexecuted, offline.calls, check.errors) == (1, 0, 0, [])
    assert cached.asked == [("python_execute_code", {"x": 1})]
    # another machine: same answer under another isolation, a note and no error
    check = inv.TraceCheck()
    other = {**sandbox, "isolation": "unshare"}
    inv._TraceAnswers(leg, FakeToolbox(other), [], check).call("python_execute_code", {"x": 1})
    assert check.errors == [] and len(check.notes) == 1
    assert check.notes[0].startswith("call 0 (stop 0 step 0, python_execute_code): same answer, other machine (at "
                                     "character ") and "bwrap" in check.notes[0] and "unshare" in check.notes[0]
    # another answer is an error, and so is any difference in a tool without machine fields
    for tool, now in (("python_execute_code", {**sandbox, "stdout": "5"}), ("maps_geocode", other)):
        check = inv.TraceCheck()
        inv._TraceAnswers(one_call_leg(tool, sandbox), FakeToolbox(now), [], check).call(tool, {"x": 1})
        assert check.notes == [] and len(check.errors) == 1 and "response differs from the trace" in check.errors[0]


def test_a_live_answer_is_returned_as_traced():
    from pipeline.cache import canonical_json
    for response, ok in (({"lat": 1, "provenance": "live"}, True), ({"error": "down", "provenance": "live"}, False)):
        check = inv.TraceCheck()
        result = inv._TraceAnswers(one_call_leg("maps_geocode", response, "live"), None, [], check).call(
            "maps_geocode", {"x": 1})
        assert (result.tool, result.args, result.ok, result.data, result.response_json, result.served_from) == (
            "maps_geocode", {"x": 1}, ok, response, canonical_json(response), "replay")
        assert check.trace_only == 1


def test_a_call_the_trace_does_not_have_is_named_with_its_arguments():
    leg = one_call_leg("maps_geocode", {"lat": 1, "provenance": "offline-data"})
    answers = inv._TraceAnswers(leg, FakeToolbox({"lat": 1, "provenance": "offline-data"}), [], inv.TraceCheck())
    with pytest.raises(inv.TraceMismatch, match=r'asks maps_geocode \{"x":2\}, the trace has maps_geocode \{"x":1\}$'):
        answers.call("maps_geocode", {"x": 2})
    answers.call("maps_geocode", {"x": 1})
    with pytest.raises(inv.TraceMismatch, match=r'^call 1 \(maps_geocode \{"x":1\}\) is not in the golden trace$'):
        answers.call("maps_geocode", {"x": 1})


def test_11_quotes_by_hand_at_the_edges(legs):
    """Invariant 11 at its edges, on a page given by hand: a description of two words is a key, of one
    is not; its full stop is no part of it; the last run of the opening text counts as much as the first."""
    leg = a_leg(legs, hop_stop, "a hop after the seed")
    stop = hop_stop(leg)
    clue = clue_of(leg, stop)
    lead = "Alpha beta gamma delta epsilon zeta eta theta iota kappa."
    page = {"description": "Sovereign state.", "lead": lead}

    def says(text, **changes):
        clue.text = text
        return inv.check_hops(leg, lambda url: {**page, **changes})

    quoted = f"clue {stop.index + 1} quotes the short description of its page"
    assert says("Go to the sovereign state it names.") == [f"{quoted}: 'Sovereign state'"]
    assert says("Go to the state it names.", description="State.") == []
    assert says("Go to the version of Mac OS it names.", description="Version of Mac OS X") == []
    assert says("Then: epsilon zeta eta theta iota kappa") == [f"clue {stop.index + 1} quotes the opening text of its page"]
    assert says("Then: zeta eta theta iota kappa") == []


# ---- 12. no question asked twice ----------------------------------------------------------------------
def entity_roadblock(leg):
    """A roadblock of one route input that golden-execute measured at a point (the breaks below need one)."""
    return next((s for s in leg.stops if s.kind == ROADBLOCK and s.roadblock and len(s.roadblock.inputs) == 1
                 and leg.stops[s.roadblock.inputs[0]].kind == ROUTE_INFO and inv.question_of(s, leg.trace)), None)


def test_12_one_template_of_two_stops_that_name_one_entity(legs, ctx):
    leg = a_leg(legs, lambda lg: entity_roadblock(lg) and len(page_stops(lg)) >= 2, "a roadblock at a point")
    asked = entity_roadblock(leg)
    source = leg.stops[asked.roadblock.inputs[0]]
    other = next(s for s in page_stops(leg) if s.index != source.index)
    other.value, other.fact = source.value, copy.deepcopy(source.fact)     # the route reaches it twice
    twin = copy.deepcopy(asked)
    twin.index, twin.roadblock.inputs = len(leg.stops), [other.index]
    leg.stops.append(twin)
    named = inv.country_key(str(source.value)) if source.fact.role == "country" else str(source.value)
    assert inv.check_one_question(leg) == [f"clues {asked.index + 1} and {twin.index + 1} ask {asked.template} of {named}"]
    assert "12_one_question" in failing(leg, ctx)


def test_12_one_measure_at_one_point_under_two_templates(legs, ctx):
    leg = a_leg(legs, entity_roadblock, "a roadblock at a point")
    asked = entity_roadblock(leg)
    twin = copy.deepcopy(asked)
    twin.index, twin.template = len(leg.stops), asked.template + "_of_its_capital"   # another template...
    leg.stops.append(twin)
    leg.trace += [dataclasses.replace(t, stop=twin.index) for t in leg.trace if t.stop == asked.index]  # ...same point
    assert inv.check_one_question(leg) == [f"clues {asked.index + 1} and {twin.index + 1} ask one question of one point"]
    twin_calls = [t for t in leg.trace if t.stop == twin.index]
    for t in twin_calls:   # measured a few metres away: another point, another question
        data = json.loads(t.response)
        for where in ("center", "location"):
            if isinstance(data.get(where), dict):
                data[where]["lat"] += 0.01
        for point in data.get("results") or []:
            point["lat"] += 0.01
        t.response = json.dumps(data)
    assert inv.check_one_question(leg) == []


def a_small_leg(values: list[tuple[str, str]], roadblocks: list[tuple[str, list[int]]]):
    """A leg of page stops (role, value) and roadblocks (template, input stops) and no trace: what
    ``check_one_question`` reads, without a run."""
    from pipeline.model import FactSpec, Leg, RoadblockSpec, Stop
    stops = [Stop(index=i, kind=ROUTE_INFO, description="a fact", value=value, fact=FactSpec(role=role, label="x"))
             for i, (role, value) in enumerate(values)]
    stops += [Stop(index=len(stops) + k, kind=ROADBLOCK, description="a question", template=template,
                   roadblock=RoadblockSpec(inputs=inputs)) for k, (template, inputs) in enumerate(roadblocks)]
    return Leg(leg_id="leg_small", variant="linear", level="easy", seed=0, seed_title="S", seed_url="", stops=stops)


def test_12_what_makes_one_question_by_template():
    # a place is named by its value as written; a country by its key ("Britain" and "United Kingdom" are one)
    leg = a_small_leg([("place", "Georgia"), ("place", "Georgia"), ("place", "Tbilisi")],
                      [("nearest_airport_distance", [0]), ("nearest_airport_distance", [1]),
                       ("nearest_airport_distance", [2])])
    assert inv.check_one_question(leg) == ["clues 4 and 5 ask nearest_airport_distance of Georgia"]
    leg = a_small_leg([("country", "Britain"), ("country", "United Kingdom")],
                      [("country_capital_elevation", [0]), ("country_capital_elevation", [1])])
    assert inv.check_one_question(leg) == ["clues 3 and 4 ask country_capital_elevation of GB"]
    # two places, two inputs: the pair is the input; another place, another question
    leg = a_small_leg([("place", "Rome"), ("place", "Paris"), ("place", "Lyon")],
                      [("place_distance", [0, 1]), ("place_distance", [0, 1]), ("place_distance", [0, 2])])
    assert inv.check_one_question(leg) == ["clues 4 and 5 ask place_distance of Rome, Paris"]
    # a roadblock with no template record (an AAR import's) is not compared
    leg.stops[3].roadblock = None
    assert inv.check_one_question(leg) == []


@pytest.mark.parametrize("tool, data, points", [
    ("maps_search_places", {"center": {"lat": 41.891934, "lng": 12.511331, "name": "Rome"}}, ((41.891934, 12.511331),)),
    ("maps_elevation", {"results": [{"lat": 1.0, "lng": 2.0}, {"lat": -3.5, "lng": 4.25}]}, ((1.0, 2.0), (-3.5, 4.25))),
    ("weather_historical", {"location": {"lat": 48.85661, "lng": 2.35222}}, ((48.85661, 2.35222),)),
    ("maps_search_places", {"center": {"lat": 41.9}}, None),                       # no longitude
    ("maps_search_places", {"center": {"lng": 12.5}}, None),                       # no latitude
    ("maps_elevation", {"results": []}, None),
    ("maps_elevation", {"results": [{"lat": 1.0, "lng": 2.0}, {"lng": 2.0}]}, None),
    ("weather_historical", {"location": "Paris"}, None),
    ("maps_geocode", {"lat": 1.0, "lng": 2.0}, None),                             # a lookup, not a measure
])
def test_12_the_points_a_measure_is_taken_at(tool, data, points):
    assert inv._points(tool, data) == points


def test_12_points_metres_apart_are_one_point_and_two_hundred_metres_two():
    rome = ((41.89193, 12.51133),)
    assert inv.same_points(rome, ((41.89196, 12.51131),))          # 4 m: across a rounding boundary, still one
    assert inv.same_points(rome, ((41.89193 + 0.0008, 12.51133),))  # 89 m
    assert not inv.same_points(rome, ((41.89193 + 0.0010, 12.51133),))  # 111 m
    assert not inv.same_points(rome, ((41.89193, 12.51133 + 0.0025),))  # 207 m east
    assert not inv.same_points(rome, rome + rome)                  # one point against two
    assert inv.same_points(rome + ((0.0, 0.0),), rome + ((0.0, 0.0005),))
    assert not inv.same_points(rome + ((0.0, 0.0),), ((0.0, 0.0),) + rome)


def test_12_what_a_search_looks_for_is_part_of_its_question():
    """Airports and museums counted around one point are two questions; airports twice, one."""
    from pipeline.model import ToolStep
    leg = a_small_leg([("place", "Rome"), ("place", "Roma")], [("nearby_airport_count", [0]), ("nearby_poi_count", [1]),
                                                               ("nearby_airport_count", [1])])
    centre = {"lat": 41.89193, "lng": 12.51133}
    for stop, query in zip(leg.stops[2:], ("airport", "museum", "airport")):
        stop.tool_chain = [ToolStep("maps_search_places", {"query": query}, "count", "count")]
        leg.trace.append(TraceEntry(stop=stop.index, step=0, tool="maps_search_places",
                                    args={"query": query, "location": "Rome", "radius_m": 2000},
                                    response=json.dumps({"center": centre, "count": 1, "places": []}),
                                    provenance="offline-data", served_from="toolbox"))
    assert inv.asked_twice(leg, leg.trace) == (3, 5)
    leg.stops.pop()
    assert inv.asked_twice(leg, leg.trace) is None
