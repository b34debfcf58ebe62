"""AAR import/export on the 20 public anchor legs: values checked against the source JSON."""
import json
from pathlib import Path

import pytest

from pipeline.export.aar import aar_to_leg, leg_to_aar, read_aar_dir, write_aar_dir
from pipeline.model import AAR_STOP_TYPE, MERGE, ROADBLOCK, Leg

ANCHORS = Path(__file__).resolve().parents[2] / "shared" / "anchors" / "aar" / "data"
FILES = sorted(ANCHORS.rglob("sample_*.json"))
STOP_FIELDS = ("index", "stop_type", "page_url", "extraction_target", "extraction_section", "extracted_value",
               "extracted_value_type", "bridge", "reason_transform", "reason_source_stop", "reason_code")

pytestmark = pytest.mark.skipif(not FILES, reason="shared/anchors/aar not present")


def test_twenty_anchor_legs():
    assert len(FILES) == 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.stem}")
def test_import_export_import_is_stable(path):
    src = json.loads(path.read_text())
    leg = aar_to_leg(src)
    out = leg_to_aar(leg)
    again = aar_to_leg(json.loads(json.dumps(out)))
    assert again.to_dict() == leg.to_dict()
    assert out["passcode"] == src["passcode"]
    assert [s["stop_type"] for s in out["stops"]] == [s["stop_type"] for s in src["stops"]]
    for a, b in zip(src["stops"], out["stops"]):
        for k in STOP_FIELDS:
            assert b[k] == a[k], (a["index"], k)
    for k in ("trail_id", "seed_url", "seed_title", "riddle", "generated_at"):
        assert out[k] == src[k]
    for k, v in src["difficulty"].items():
        assert out["difficulty"][k] == v  # depth / tool / reason counts recomputed from the stops
    # our leg keeps references, not values, in the finish line
    fin = leg.stops[-1]
    assert fin.kind == "finish_line"


def test_finish_expression_holds_references():
    leg = aar_to_leg(json.loads((ANCHORS / "aar-dag/easy/sample_196.json").read_text()))
    fin = leg.stops[-1]
    assert fin.expression == "abs(s2 - s3) % 10"          # source: "abs(43094 - 6054582) % 10"
    merge = leg.stops[3]
    assert merge.kind == MERGE and merge.diamond == 0 and merge.diamond_role == "merge"
    assert {leg.stops[1].diamond_role, leg.stops[2].diamond_role} == {"branch"}
    assert leg.stops[0].diamond_role == "source"
    assert leg.passcode == 8


def test_from_previous_keys_map_to_references():
    leg = aar_to_leg(json.loads((ANCHORS / "aar-dag/easy/sample_003.json").read_text()))
    chain = leg.stops[4].tool_chain
    assert [s.tool for s in chain] == ["maps_geocode", "maps_elevation"]
    # converted once on import into our syntax: step 0's output (a geocode: its coordinates)
    assert chain[1].args == {"locations": {"$step": 0, "pick": ["lat", "lng"]}}
    dist = aar_to_leg(json.loads((ANCHORS / "aar-linear/hard/sample_118.json").read_text())).stops[7].tool_chain[2]
    assert dist.args == {"origins": [{"$step": 0, "pick": ["lat", "lng"]}],
                         "destinations": [{"$step": 1, "pick": ["lat", "lng"]}]}


def test_dict_valued_extracted_value_is_a_warning_not_a_crash():
    leg = aar_to_leg(json.loads((ANCHORS / "aar-linear/hard/sample_118.json").read_text()))
    warnings = leg.metadata["import_warnings"]
    assert any("stop 7" in w and "dict" in w for w in warnings)
    assert isinstance(leg.stops[7].value, dict)


def test_page_bridge_becomes_next_page_transition():
    leg = aar_to_leg(json.loads((ANCHORS / "aar-linear/medium/sample_000.json").read_text()))
    # stop 4's bridge searches "Sarachchandra Open-Air Theatre wikipedia" -> stop 5's page
    t = leg.stops[5].transition
    assert t.kind == "search_query" and t.from_stop == 4
    assert t.search_query == "Sarachchandra Open-Air Theatre wikipedia"
    assert leg.stops[5].page_url == "https://en.wikipedia.org/wiki/Sarachchandra_Open-Air_Theatre"


def test_write_and_read_dir(tmp_path):
    legs = read_aar_dir(ANCHORS)
    assert len(legs) == 20 and len({l.leg_id for l in legs}) == 20
    assert {l.variant for l in legs} == {"linear", "dag"}
    write_aar_dir(legs, tmp_path)
    again = {l.leg_id: l for l in read_aar_dir(tmp_path)}
    for leg in legs:
        other = again[leg.leg_id]
        assert other.passcode == leg.passcode and other.variant == leg.variant and other.level == leg.level
        assert [s.kind for s in other.stops] == [s.kind for s in leg.stops]


def test_export_of_our_leg_renders_references():
    from pipeline.model import Stop, ToolStep, TraceEntry
    stops = [
        Stop(0, "route_info", "population", page_url="https://en.wikipedia.org/wiki/Ulm", value=126329, value_type="number"),
        Stop(1, "roadblock", "elevation of Ulm", depends_on=[0], page_url="https://en.wikipedia.org/wiki/Ulm",
             tool_chain=[ToolStep("maps_geocode", {"address": "Ulm"}, "coords", ""),
                         ToolStep("maps_elevation", {"locations": {"$step": 0, "path": ""}}, "elevation_m", "elevation_m")],
             value=502, value_type="number"),
        Stop(2, "finish_line", "final", depends_on=[0, 1], expression="(s0 + s1) % 10", value=1, value_type="number"),
    ]
    leg = Leg("L1", "easy", "linear", 1, "Ulm", "https://en.wikipedia.org/wiki/Ulm", stops, passcode=1,
              trace=[TraceEntry(1, 0, "maps_geocode", {"address": "Ulm"}, "{}", "offline-data", "computed",
                                {"lat": 48.4, "lng": 9.99})])
    d = leg_to_aar(leg)
    assert d["stops"][1]["bridge"]["tool_chain"][1]["arguments"] == {"__from_previous_as_locations": "coords"}
    assert d["stops"][1]["bridge"]["tool_chain"][0]["expected_output"] == {"lat": 48.4, "lng": 9.99}
    assert d["stops"][2]["bridge"]["expression"] == "(126329 + 502) % 10"
    assert d["stops"][1]["stop_type"] == AAR_STOP_TYPE[ROADBLOCK] == "tool"
    assert d["difficulty"] == {"level": "easy", "depth": 3, "tool_stop_count": 1, "reason_stop_count": 0}
    assert leg.stops[2].expression == "(s0 + s1) % 10"  # the leg itself keeps references
