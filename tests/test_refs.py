"""The one reference syntax (pipeline.refs): re-indexing keeps what references resolve to; AAR
``__from_previous`` keys are converted once on import and the oracle runs imported legs through
pipeline.execute; legs with typed stop specifications round-trip through their JSON."""
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import refs
from pipeline.config import load_settings
from pipeline.execute import execute_leg
from pipeline.model import (
    AarSource,
    Clue,
    Crawl,
    Extraction,
    FactSpec,
    Leg,
    PageWording,
    Plan,
    RoadblockSpec,
    Stop,
    ToolStep,
    TraceEntry,
    Transition,
    leg_row,
)
from pipeline.refs import value_inputs
from pipeline.stages.base import reindex
from pipeline.tools.registry import Toolbox

_HERE = Path(__file__).resolve()
ANCHORS = next((p for p in (_HERE.parents[2] / "shared" / "anchors" / "aar" / "data",
                            Path("/work/shared/anchors/aar/data")) if p.is_dir()), None)
W = "https://en.wikipedia.org/wiki/"


# ---- resolver and remapper ------------------------------------------------------------------
def page_value(n: int) -> dict:
    return {"a": n, "b": [n + 1, n * 3], "c": {"d": str(n)}}


PATHS = ["", "a", "b.0", "b.1", "c.d", "c"]


@st.composite
def legs_with_references(draw):
    """Page stops holding structured values, then roadblocks whose arguments reference them."""
    n_pages = draw(st.integers(2, 6))
    stops = [Stop(i, "route_info", f"page {i}", value=page_value(draw(st.integers(-1000, 1000))))
             for i in range(n_pages)]
    for k in range(draw(st.integers(1, 4))):
        idx = len(stops)
        pick = st.sampled_from(range(n_pages))
        i, j = draw(pick), draw(pick)
        args = {"x": refs.stop_ref(i, draw(st.sampled_from(PATHS))),
                "ys": [refs.stop_ref(j, draw(st.sampled_from(PATHS))), 7],
                "code": refs.code_ref("{p}|{q!r}", {"p": refs.stop_ref(i, "a"), "q": refs.stop_ref(j, "c.d")}),
                "nested": {"deep": [refs.stop_ref(draw(pick))]}}
        stops.append(Stop(idx, "roadblock", f"rb {k}", tool_chain=[ToolStep("t", args, "out", "")],
                          roadblock=RoadblockSpec(inputs=sorted({i, j}))))
    order = draw(st.permutations(range(len(stops))))
    return Leg("L", "easy", "linear", 0, "s", W + "S", stops), list(order)


@settings(max_examples=120, deadline=None)
@given(legs_with_references())
def test_reindex_then_resolve_gives_the_same_values(case):
    leg, order = case
    values = {s.index: s.value for s in leg.stops if s.kind == "route_info"}
    before = {id(s): refs.resolve(s.tool_chain[0].args, values) for s in leg.stops if s.tool_chain}
    inputs_before = {id(s): [order.index(i) for i in value_inputs(s)] for s in leg.stops if s.tool_chain}
    spec_before = {id(s): [order.index(i) for i in s.roadblock.inputs] for s in leg.stops if s.roadblock}
    reindex(leg, order)
    assert [s.index for s in leg.stops] == list(range(len(order)))
    new_values = {s.index: s.value for s in leg.stops if s.kind == "route_info"}
    for s in leg.stops:
        if s.tool_chain:
            assert refs.resolve(s.tool_chain[0].args, new_values) == before[id(s)]
            assert value_inputs(s) == sorted(inputs_before[id(s)])
            assert s.roadblock.inputs == spec_before[id(s)]


@given(st.dictionaries(st.integers(0, 20), st.integers(0, 20), min_size=1))
def test_remap_composes_with_its_inverse(mapping):
    mapping = {old: new for new, old in enumerate(sorted(mapping))}  # a bijection old -> new
    inverse = {v: k for k, v in mapping.items()}
    spec = {"a": [refs.stop_ref(i, "x.0") for i in mapping], "b": refs.code_ref("{z}", {"z": refs.stop_ref(min(mapping))}),
            "c": refs.step_ref(0, pick=["lat", "lng"])}
    assert refs.remap(refs.remap(spec, mapping), inverse) == spec
    assert refs.stop_indices(refs.remap(spec, mapping)) == sorted(mapping[i] for i in mapping)


def test_resolver_semantics_by_hand():
    values = {0: "Ulm", 1: {"lat": 48.4, "lng": 9.99, "name": "Ulm"}}
    outputs = [{"lat": 1.0, "lng": 2.0, "formatted_address": "X"}, {"rows": [[{"distance_km": 42}]]}]
    assert refs.resolve(refs.stop_ref(1, "lat"), values) == 48.4
    assert refs.resolve(refs.step_ref(0, pick=["lat", "lng"]), values, outputs) == {"lat": 1.0, "lng": 2.0}
    assert refs.resolve(refs.step_ref(1, "rows.0.0.distance_km"), values, outputs) == 42
    assert refs.resolve(refs.code_ref("print({a!r})", {"a": refs.stop_ref(0)}), values) == "print('Ulm')"
    with pytest.raises(refs.UnresolvedReference):
        refs.resolve(refs.stop_ref(5), values)
    with pytest.raises(refs.UnresolvedReference):
        refs.resolve(refs.step_ref(2), values, outputs)
    # partial: what cannot be resolved stays as a wildcard (scoring of imported legs)
    assert refs.resolve({"x": [refs.step_ref(0), refs.stop_ref(0)]}, values, partial=True) == \
        {"x": [refs.step_ref(0), "Ulm"]}


# ---- AAR import and the oracle --------------------------------------------------------------
@pytest.mark.skipif(ANCHORS is None, reason="shared/anchors/aar not present")
def test_from_previous_is_converted_once_and_the_oracle_runs_it_through_execute(tmp_path):
    from pipeline.export.aar import aar_to_leg, leg_to_aar
    from pipeline.race import run_trial
    from pipeline.scoring import load_trials, score_trials

    src = json.loads((ANCHORS / "aar-dag/easy/sample_003.json").read_text())
    raw_chain = src["stops"][8]["bridge"]["tool_chain"]
    assert raw_chain[1]["arguments"] == {"__from_previous_as_locations": "coords"}
    leg = aar_to_leg(src)
    assert "__from_previous" not in leg.to_json()          # nothing past the importer sees AAR keys
    chain = leg.stops[8].tool_chain
    assert chain[1].args == {"locations": refs.step_ref(0, pick=["lat", "lng"])}
    assert leg_to_aar(leg)["stops"][8]["bridge"]["tool_chain"] == raw_chain  # and export converts back

    toolbox = Toolbox(load_settings(cache_path=tmp_path / "cache.sqlite"))
    d = run_trial(leg, "oracle", tmp_path / "runs", toolbox=toolbox)
    log = [json.loads(line) for line in (d / "tool_log.jsonl").read_text().splitlines()]
    # the oracle's calls are exactly what pipeline.execute issues for the leg
    _, trace = execute_leg(leg, toolbox, failures={})
    assert [(e["tool"], e["args"]) for e in log] == [(t.tool, t.args) for t in trace]
    geocode, elevation = [e for e in log if e["tool"] in ("maps_geocode", "maps_elevation")][-2:]
    coords = json.loads(geocode["result_preview"])
    assert geocode["args"] == {"address": "Pakistan"}
    assert elevation["args"] == {"locations": {"lat": coords["lat"], "lng": coords["lng"]}} and elevation["success"]
    [score] = score_trials([leg], load_trials(tmp_path / "runs"))
    assert score.fa == 1


@pytest.mark.skipif(ANCHORS is None, reason="shared/anchors/aar not present")
def test_weather_select_argument_is_kept_for_export_only():
    from pipeline.export.aar import aar_to_leg, leg_to_aar
    from pipeline.tools.spec import TOOLS

    for path in sorted(ANCHORS.rglob("sample_*.json")):
        src = json.loads(path.read_text())
        leg = aar_to_leg(src)
        for stop in leg.stops:
            for step in stop.tool_chain:   # what execution sends fits the tool's schema
                assert set(step.args) <= set(TOOLS[step.tool]["parameters"]["properties"])
        assert [s["bridge"] for s in leg_to_aar(leg)["stops"]] == [s["bridge"] for s in src["stops"]]


# ---- typed specs round-trip ------------------------------------------------------------------
def typed_leg() -> Leg:
    stops = [
        Stop(0, "route_info", "elevation", page_url=W + "Ulm", page_title="Ulm",
             extraction=Extraction("infobox", field="elevation_m"), transition=Transition("link_follow", target_url=W + "Ulm"),
             value="Ulm", value_type="text", fact=FactSpec("place", "city", None),
             wording=PageWording("City in Germany", "settlement"), awaiting_diamond=True),
        Stop(1, "roadblock", "rating {in0}", depends_on=[0], template="place_rating",
             tool_chain=[ToolStep("maps_search_places", {"query": "museum", "location": refs.stop_ref(0)}, "places",
                                  "places.0.place_id"),
                         ToolStep("maps_place_details", {"place_id": refs.step_ref(0)}, "rating", "rating",
                                  aar_args={"select": ["x"]})],
             value=43, value_type="number",
             roadblock=RoadblockSpec([0], {"category": "museum"}, scale=10, round=1, stable=False, simulated_only=True)),
        Stop(2, "finish_line", "final", depends_on=[1], expression="s1 % 10", value=3, value_type="number",
             operation="last_digit", aar=AarSource("why", None, {"bridge_type": "compute"}, [1], None, "def f(): pass\n")),
    ]
    return Leg("T1", "easy", "dag", 5, "Ulm", W + "Ulm", stops, passcode=3, clues=[Clue(1, 0, "Go.")],
               trace=[TraceEntry(0, 0, "fetch_webpage", {"url": W + "Ulm"}, "{}", "snapshot", "toolbox", "Ulm")],
               theme="t", crawl=Crawl([("Ulm", 0), ("Danube", 1)], {"Ulm": ["Danube"]}, W + "Ulm", {"Bad": "malformed"}),
               plan=Plan(3, 1, 0, 1, ["Ulm"], 0), metadata={"slot": 0, "attempt": 1})


def test_leg_json_round_trips_with_typed_specs():
    leg = typed_leg()
    again = Leg.from_json(leg.to_json())
    assert again == leg
    assert again.to_json() == leg.to_json()
    assert isinstance(again.stops[1].roadblock, RoadblockSpec) and again.stops[1].roadblock.scale == 10
    assert isinstance(again.crawl.pages[0], tuple) and again.plan.route == ["Ulm"]
    assert "hints" not in leg.to_dict()["stops"][0]


def test_roadblock_spec_scale_and_round_change_execution(tmp_path):
    """scale and round are typed fields execution reads (0.000001 x population, to a whole million)."""
    stop = Stop(0, "roadblock", "population in millions",
                tool_chain=[ToolStep("countries_population", {"country": "Germany"}, "population", "population")],
                roadblock=RoadblockSpec([], {}, scale=0.000001, round=1))
    leg = Leg("P", "easy", "linear", 0, "x", W + "X", [stop])
    toolbox = Toolbox(load_settings(cache_path=tmp_path / "cache.sqlite"))
    values, trace = execute_leg(leg, toolbox)
    population = json.loads(trace[0].response)["population"]
    assert values[0] == round(population / 1_000_000)


def test_one_trace_entry_type_for_legs_tasks_and_scoring():
    from pipeline.scoring.golden import GoldenStep, golden_view
    from pipeline.scoring.trials import ToolCall
    from pipeline.tasks.common import GoldenTrace

    trace = GoldenTrace(plan=[], steps=[TraceEntry(None, 0, "calculator", {"expression": "1+1"}, '{"value":2}',
                                                   "offline-data", "toolbox", 2)], final_answer=2)
    again = GoldenTrace.from_json(trace.to_json())
    assert again == trace and type(again.steps[0]) is TraceEntry
    leg = typed_leg()
    view = golden_view(leg)
    assert all(isinstance(g, TraceEntry) for g in view.all_steps) and GoldenStep.__mro__[1] is TraceEntry
    call = ToolCall.from_entry(leg.trace[0])
    assert call.page_url == W + "Ulm" and call.success and call.result_len == 2


def test_leg_row_is_shared_by_artifacts_and_the_hub():
    from pipeline.export.hub import LEG_SCHEMA, leg_record
    from pipeline.model import ARTIFACT_SCHEMA

    leg = typed_leg()
    row, record = leg_row(leg, "accepted", 1), leg_record(leg)
    assert set(row) == set(ARTIFACT_SCHEMA.names) and set(record) == set(LEG_SCHEMA.names)
    for k in set(row) & set(record):
        assert row[k] == record[k], k
    assert (row["n_stops"], row["n_route_info"], row["n_roadblocks"], row["n_tool_calls"]) == (3, 1, 1, 1)
    assert Leg.from_json(row["leg_json"]) == leg
