"""The reference syntax by hand, case by case: constructors, predicates, paths (sums included),
the resolver's messages and the walk into ``$code`` refs (the cases benchmarks/mutation.py found
no test for)."""
from __future__ import annotations

import pytest

from pipeline.refs import (
    UnresolvedReference,
    code_ref,
    get_path,
    is_reference,
    is_step_ref,
    is_stop_ref,
    references,
    resolve,
    step_ref,
    stop_indices,
    stop_ref,
)


def test_constructors_leave_out_an_empty_path():
    assert stop_ref(3) == {"$stop": 3} and stop_ref(3, "a.b") == {"$stop": 3, "path": "a.b"}
    assert step_ref(1) == {"$step": 1} and step_ref(1, "lat") == {"$step": 1, "path": "lat"}
    assert step_ref(1, "lat", pick=("lat", "lng")) == {"$step": 1, "pick": ["lat", "lng"]}
    assert code_ref("x = {in0}", {"in0": stop_ref(2)}) == {"$code": "x = {in0}", "refs": {"in0": {"$stop": 2}}}


@pytest.mark.parametrize("value, reference, stop, step", [
    ({"$stop": 1}, True, True, False),
    ({"$step": 0}, True, False, True),
    ({"$code": "c", "refs": {}}, True, False, False),
    ({"path": "a"}, False, False, False),
    ({}, False, False, False),
    (["$stop"], False, False, False),      # a list holding the marker is no reference
    ("$stop", False, False, False),        # nor is the marker as text
    (None, False, False, False),
])
def test_what_is_a_reference(value, reference, stop, step):
    assert is_reference(value) is reference
    assert is_stop_ref(value) is stop
    assert is_step_ref(value) is step


def test_paths_and_sums():
    weather = {"daily": [{"mm": 1.5}, {"mm": 2}, {"mm": 0}], "name": "x"}
    assert get_path(weather, "") is weather
    assert get_path(weather, "daily.1.mm") == 2
    assert get_path(weather, "sum:daily.*.mm") == 3.5
    assert get_path({"a": {"daily": [{"mm": 1}, {"mm": 4}]}}, "sum:a.daily.*.mm") == 5
    with pytest.raises(UnresolvedReference, match=r"^no list at 'name' to sum$"):
        get_path(weather, "sum:name.*.mm")
    with pytest.raises(UnresolvedReference, match=r"^no list at 'empty' to sum$"):
        get_path({"empty": []}, "sum:empty.*.mm")
    with pytest.raises(UnresolvedReference, match=r"^non-numeric values under 'sum:daily\.\*\.t'$"):
        get_path({"daily": [{"t": 1}, {"t": "2"}]}, "sum:daily.*.t")
    with pytest.raises(UnresolvedReference, match=r"^non-numeric values under 'sum:daily\.\*\.t'$"):
        get_path({"daily": [{"t": 1}, {"t": True}]}, "sum:daily.*.t")   # a bool is not a number
    with pytest.raises(UnresolvedReference, match=r"^result has no 'daily\.9\.mm'$"):
        get_path(weather, "daily.9.mm")
    assert get_path({"Sum:x": 4}, "Sum:x") == 4   # only the lower-case prefix sums
    with pytest.raises(UnresolvedReference, match=r"^result has no 'b\.\*\.c'$"):   # one level of "*" only
        get_path({"a": [{"b": [{"c": 1}]}]}, "sum:a.*.b.*.c")


def test_the_resolver_and_its_messages():
    values = {0: {"lat": 1.0, "lng": 2.0, "rows": [5, 6]}, 1: "Ulm", 2: None}
    outputs = [{"lat": 3.0, "lng": 4.0}, [7, 8]]
    assert resolve({"$stop": 0, "path": "rows.1"}, values) == 6
    assert resolve({"$step": 0}, values, outputs) == {"lat": 3.0, "lng": 4.0}
    assert resolve({"$step": 1, "path": "0"}, values, outputs) == 7
    assert resolve({"$step": 0, "pick": ["lng"]}, values, outputs) == {"lng": 4.0}
    assert resolve([{"$step": 1}, {"$stop": 1}], values, outputs) == [[7, 8], "Ulm"]
    assert resolve({"where": {"$step": 0, "path": "lat"}}, values, outputs) == {"where": 3.0}
    assert resolve({"$code": "f({in0!r}, {in1})", "refs": {"in0": {"$stop": 1}, "in1": {"$step": 1, "path": "1"}}},
                   values, outputs) == "f('Ulm', 8)"
    with pytest.raises(UnresolvedReference, match=r"^reference to stop 2, which has no value$"):
        resolve({"$stop": 2}, values)
    with pytest.raises(UnresolvedReference, match=r"^reference to stop 7, which has no value$"):
        resolve({"$stop": 7}, values)
    for k in (2, -1):
        with pytest.raises(UnresolvedReference, match=rf"^reference to step {k}, which has not run$"):
            resolve({"$step": k}, values, outputs)
    with pytest.raises(UnresolvedReference, match=r"^code template cannot be filled: 'in9'$"):
        resolve({"$code": "{in9}", "refs": {}}, values, outputs)
    # partial: what cannot be resolved stays a reference (scoring reads it as a wildcard)
    assert resolve([{"$stop": 7}, {"$stop": 1}], values, partial=True) == [{"$stop": 7}, "Ulm"]


def test_references_walk_into_code_refs():
    spec = {"code": {"$code": "{a}{b}", "refs": {"a": {"$stop": 4}, "b": [{"$stop": 2, "path": "x"}]}},
            "at": [{"$step": 0}], "plain": {"k": 1}}
    assert list(references(spec)) == [spec["code"], {"$stop": 4}, {"$stop": 2, "path": "x"}, {"$step": 0}]
    assert stop_indices(spec) == [2, 4]
    assert list(references({"$code": "c"})) == [{"$code": "c"}]


def test_the_values_a_stop_computes_with():
    """value_inputs: a detour's source; a merge's or finish line's expression; a chain's stop references."""
    from pipeline.model import DETOUR, FINISH_LINE, ROADBLOCK, Stop, ToolStep
    from pipeline.refs import value_inputs
    assert value_inputs(Stop(index=4, kind=DETOUR, description="", source_stop=2)) == [2]
    assert sorted(value_inputs(Stop(index=9, kind=FINISH_LINE, description="", expression="abs((s3 + s7) - s5) % 10"))) == [3, 5, 7]
    chain = [ToolStep("maps_geocode", {"address": stop_ref(1)}, "coords", "lat"),
             ToolStep("maps_distance_matrix", {"origins": [step_ref(0)], "destinations": [stop_ref(6, "name")]},
                      "km", "distance_km")]
    assert sorted(value_inputs(Stop(index=8, kind=ROADBLOCK, description="", tool_chain=chain))) == [1, 6]
    assert value_inputs(Stop(index=3, kind=ROADBLOCK, description="")) == []
