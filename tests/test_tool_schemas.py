"""The tools' argument check: the compiled fast path (fastjsonschema) never decides otherwise than
jsonschema, the reading the tool specs are written for."""
from __future__ import annotations

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.tools.errors import ToolArgumentError
from pipeline.tools.registry import validate_args
from pipeline.tools.spec import TOOLS

_NUMBERS = st.one_of(st.integers(-400, 400), st.floats(-400, 400, allow_nan=False), st.sampled_from([0, 1.0, 2.5, 1e9]))
_SCALARS = st.one_of(_NUMBERS, st.booleans(), st.none(), st.text(max_size=12),
                     st.sampled_from(["", "2024-02-29", "24-2-29", "driving", "Paris", "lead", "phrase", "words"]))
_PLACES = st.one_of(st.fixed_dictionaries({"lat": _NUMBERS, "lng": _NUMBERS}),
                    st.dictionaries(st.sampled_from(["lat", "lng", "alt"]), _SCALARS, max_size=3),
                    st.text(max_size=6))
_VALUES = st.one_of(_SCALARS, _PLACES, st.lists(_PLACES, max_size=4),
                    st.lists(_SCALARS, max_size=3), st.dictionaries(st.text(max_size=4), _SCALARS, max_size=3))


@st.composite
def calls(draw):
    """A tool and arguments near its schema: some of its own keys (now and then a stranger), values of
    the shapes the schemas take and of the wrong ones."""
    name = draw(st.sampled_from(sorted(TOOLS)))
    keys = sorted(TOOLS[name]["parameters"].get("properties", {}))
    chosen = draw(st.lists(st.sampled_from(keys), unique=True)) if keys else []
    args = {k: draw(_VALUES) for k in chosen}
    if draw(st.integers(0, 9)) == 0:
        args["unexpected"] = draw(_SCALARS)
    return name, args


def refused(name: str, args: dict) -> bool:
    try:
        validate_args(name, args)
    except ToolArgumentError:
        return True
    return False


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls())
def test_the_fast_check_decides_as_jsonschema(call):
    name, args = call
    assert refused(name, args) == (not jsonschema.Draft202012Validator(TOOLS[name]["parameters"]).is_valid(args))


def test_a_hundred_places_pass_and_one_bad_place_among_them_is_named():
    places = [{"lat": 10 + i * 0.1, "lng": 20 + i * 0.1} for i in range(100)]
    assert validate_args("maps_elevation", {"locations": places})
    with pytest.raises(ToolArgumentError, match="locations"):
        validate_args("maps_elevation", {"locations": [*places[:50], {"lat": 91, "lng": 0}, *places[51:]]})
