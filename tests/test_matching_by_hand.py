"""The house tolerances (``pipeline.scoring.matching``) at and around their edges, worked out from the
module's definitions: strings equal after accent stripping, case folding and whitespace collapsing;
numbers within 1 % relative (1e-9 absolute for 0); coordinates within 1 km (haversine on a sphere of
6371.0088 km, so one degree of latitude is pi * 6371.0088 / 180 = 111.195 km)."""
from __future__ import annotations

import math

import pytest

from pipeline.scoring.matching import (
    COORD_TOL_KM,
    EARTH_RADIUS_KM,
    REL_TOL,
    PreparedValue,
    TextIndex,
    args_match,
    as_coords,
    as_number,
    haversine_km,
    is_scalar_value,
    normalize_text,
    numbers_close,
    numbers_in,
    value_in_text,
    values_match,
)

DEG_KM = math.pi * 6371.0088 / 180          # one degree of a great circle
ONE_KM_LAT = 0.00899320363724538            # degrees(1 / 6371.0088): 1 km north of the equator


def test_constants():
    assert (REL_TOL, COORD_TOL_KM, EARTH_RADIUS_KM) == (0.01, 1.0, 6371.0088)


def test_normalize_text():
    assert normalize_text("  São\tPaulo \n CITY ") == "sao paulo city"
    assert normalize_text("Straße") == "strasse"                     # case folding, not lowering
    assert normalize_text("ﬁne") == "fine"                           # compatibility decomposition
    assert normalize_text(12.5) == "12.5" and normalize_text(None) == "none" and normalize_text("") == ""


def test_as_number():
    assert [as_number(v) for v in (3, -2.5, 0, " 1,234.5 ", "+3", "-2e3", "7E+2", "0.25")] == \
        [3.0, -2.5, 0.0, 1234.5, 3.0, -2000.0, 700.0, 0.25]
    assert isinstance(as_number(3), float)
    for v in (True, False, math.inf, -math.inf, math.nan, "1e", "1.", ".5", "abc", "1 2", "", None, [1], {"a": 1},
              "3 km"):
        assert as_number(v) is None, v


def test_as_coords():
    assert as_coords({"lat": 1, "lng": 2}) == (1.0, 2.0)
    assert as_coords({"latitude": "1.5", "longitude": "-2"}) == (1.5, -2.0)
    assert as_coords({"lat": 1, "lon": 2}) == as_coords({"lat": 1, "long": 2}) == (1.0, 2.0)
    assert as_coords({"lat": 1, "latitude": 9, "lng": 2, "lon": 8, "long": 7, "longitude": 6}) == (1.0, 2.0)
    assert as_coords({"latitude": 9, "lon": 8, "long": 7, "longitude": 6}) == (9.0, 8.0)
    assert as_coords({"latitude": 9, "long": 7, "longitude": 6}) == (9.0, 7.0)
    assert as_coords([1, 2]) == (1.0, 2.0) and as_coords((1.5, -2)) == (1.5, -2.0)
    assert isinstance(as_coords([1, 2])[0], float)
    for v in ({"lat": 1}, {"lng": 2}, {"lat": "x", "lng": 2}, {"lat": 1, "lng": True}, ["1", "2"], [1, "2"],
              [1, 2, 3], [1], [True, 2], "1, 2", 3, None, [1, math.nan]):
        assert as_coords(v) is None, v


def test_haversine_by_hand():
    assert haversine_km((0, 0), (1, 0)) == pytest.approx(DEG_KM)
    assert haversine_km((0, 0), (0, 1)) == pytest.approx(DEG_KM)     # on the equator too
    assert haversine_km((60, 0), (60, 1)) == pytest.approx(2 * 6371.0088 * math.asin(0.5 * math.sin(math.radians(0.5))))
    assert haversine_km((0, 0), (0, 180)) == pytest.approx(math.pi * 6371.0088)      # half the circumference
    assert haversine_km((90, 0), (-90, 0)) == pytest.approx(math.pi * 6371.0088)
    assert haversine_km((-89.92, -180.0), (89.92, 0.0)) == pytest.approx(math.pi * 6371.0088)
    assert haversine_km((10, 20), (10, 20)) == 0.0
    assert haversine_km((0, 10), (0, 11)) == pytest.approx(haversine_km((0, 11), (0, 10)))


def test_numbers_close_edges():
    assert numbers_close(100, 101) and numbers_close(100, 99) and not numbers_close(100, 101.01)
    assert numbers_close(-100, -101) and not numbers_close(-100, -98.9) and not numbers_close(-100, 100)
    assert numbers_close(100, 105, rel=0.05) and not numbers_close(100, 105)
    assert numbers_close(0, 1e-9) and numbers_close(0, -1e-9) and not numbers_close(0, 2e-9)
    assert not numbers_close(0, 0.001)


def test_values_match():
    assert values_match({"$stop": 1}, "anything") and values_match({"$step": 0, "path": "x"}, None)
    # coordinates: dict or pair, an agent's one-element list unwrapped; 1 km
    g = {"lat": 0.0, "lng": 0.0}
    assert values_match(g, [0.005, 0.0]) and values_match(g, [{"lat": 0.005, "lng": 0}])
    assert not values_match(g, [0.01, 0.0]) and not values_match(g, [[0.0, 0.0], [0.0, 0.0]])
    assert not values_match(g, "0, 0") and not values_match(g, None)
    assert values_match([10, 20], {"latitude": 10, "longitude": 20.005})
    assert values_match(g, [ONE_KM_LAT, 0.0]) and haversine_km((0.0, 0.0), (ONE_KM_LAT, 0.0)) == 1.0
    # numbers, from text too
    assert values_match(1554, "1,554") and values_match("1554", 1560) and not values_match(1554, 1570)
    assert not values_match(1554, "about 1554") and not values_match(1554, None) and not values_match(1554, True)
    assert values_match(0, 0.0) and not values_match(0, 1e-6)
    # text
    assert values_match("Paraná  River", "PARANA river") and not values_match("Paraná River", "Parana")
    assert not values_match("x", ["x"]) and not values_match("x", None)
    # lists: element by element, a lone agent value wrapped
    assert values_match(["a", 2], ["A", 2.01]) and not values_match(["a", 2], ["a"])
    assert values_match(["Rome"], "rome") and not values_match(["Rome", "Oslo"], "rome")
    assert not values_match(["a", 2], ["a", 3]) and values_match([], [])
    # dicts: every golden key, extra agent keys ignored
    assert values_match({"city": "Rome", "n": 3}, {"city": "ROME", "n": 3, "extra": 1})
    assert not values_match({"city": "Rome", "n": 3}, {"city": "Rome"}) and not values_match({"a": "x"}, ["x"])
    assert not values_match({"city": "Rome"}, {"city": "Oslo"})
    # anything else: equality
    assert values_match(None, None) and not values_match(None, 0) and values_match(True, True)
    assert not values_match(True, False) and not values_match(None, "None")


def test_args_match():
    assert args_match({"a": 1, "b": "x"}, {"a": 1.005, "b": "X", "extra": 0})
    assert not args_match({"a": 1}, ["a", 1]) and not args_match({}, None)
    assert args_match({}, {}) and args_match({}, {"x": 1})
    assert not args_match({"a": 1, "b": 2}, {"a": 1})                               # missing, no default
    assert args_match({"a": 1, "mode": "driving"}, {"a": 1}, {"mode": "Driving"})  # missing, default matches
    assert not args_match({"a": 1, "mode": "walking"}, {"a": 1}, {"mode": "driving"})
    assert not args_match({"a": 1, "mode": "walking"}, {"a": 1}, {"other": "walking"})
    assert not args_match({"a": 1, "b": 2}, {"a": 2, "b": 2}) and not args_match({"a": 1, "b": 2}, {"a": 1, "b": 3})
    assert args_match({"n": 5}, {"n": 5}, None) and not args_match({"n": 5}, {}, None)
    # a golden argument left out at its default does not excuse the arguments after it
    assert not args_match({"mode": "driving", "a": 1}, {"a": 2}, {"mode": "driving"})
    assert args_match({"mode": "driving", "a": 1}, {"a": 1}, {"mode": "driving"})
    # a default that the agent passed explicitly is compared as any argument
    assert not args_match({"mode": "driving"}, {"mode": "walking"}, {"mode": "driving"})


def test_numbers_in_text():
    assert numbers_in("1,234.5 and -3e2, +7 then 2.5E-1 x12 and 3.") == [1234.5, -300.0, 7.0, 0.25, 12.0, 3.0]
    assert numbers_in("no digits") == [] and numbers_in("") == []
    assert numbers_in("12,34") == [1234.0]


def test_text_index():
    idx = TextIndex("Über 12 and 3")
    assert idx.text == "Über 12 and 3" and idx.nums == [12.0, 3.0] and idx.sorted_nums == [3.0, 12.0]
    assert idx.norm == "uber 12 and 3"
    assert idx.nums is idx.nums and idx.sorted_nums is idx.sorted_nums
    assert TextIndex(None).text == "" and TextIndex(None).nums == []
    merged = TextIndex.merged([TextIndex("a 5"), TextIndex("b 1"), TextIndex("")])
    assert merged.text == "a 5\nb 1\n" and merged.nums == [5.0, 1.0] and merged.sorted_nums == [1.0, 5.0]
    assert merged.norm == "a 5 b 1"


@pytest.mark.parametrize("look", ["prepared", "raw"])
def test_values_in_text(look):
    def found(golden, text):
        return value_in_text(PreparedValue(golden) if look == "prepared" else golden, text)
    # numbers: 1 % either way; the smallest number at or above the band's bottom decides
    assert found(1554, "in 1569") and found(1554, "in 1539") and not found(1554, "in 1570 or 1538")
    assert found(1554, "1,554") and found(-200, "t = -201.9") and not found(-200, "t = 200")
    assert found(100, "numbers 5, 99.5 and 500") and not found(100, "numbers 5 and 500") and not found(100, "5")
    assert found(0, "0.000000001") and not found(0, "0.000000002") and found(0, "x 0 y")
    assert found("1,554", "1554") and found(12, TextIndex("a 12"))
    # text: normalised, as a substring
    assert found("Paraná River", "flows into the PARANA  river.") and not found("Paraná River", "Paraná")
    assert not found("", "anything") and not found("   ", "anything")
    # lists and dicts: their JSON text
    assert found(["a", "b"], 'got ["A", "B"]') and not found(["a", "b"], "a b")
    assert found({"k": "v"}, '{"k": "V"}') and not found({"k": "v"}, "k v")
    assert found(["Ré", 1], 'a list ["Ré", 1]') and found({"k": "É"}, '{"k": "é"}')     # not as \u escapes
    # coordinates: consecutive numbers as (lat, lon) within 1 km
    g = {"lat": -23.55, "lng": -46.63}
    assert found(g, "at -23.553, -46.631 today") and not found(g, "at -23.56, -46.63")
    assert not found(g, "-46.63 -23.55") and not found(g, "-23.55 and 7 and -46.63")
    assert found([-23.55, -46.63], "(-23.55, -46.63)")
    # an empty text holds nothing, nor does a value of no kind
    for golden in (5, "x", g, ["a"], None, True):
        assert not found(golden, "") and not found(golden, TextIndex(""))
    assert not found(None, "None") and not found(True, "True 1")


@pytest.mark.parametrize("look", ["prepared", "raw"])
def test_coordinates_in_text_stay_on_the_globe(look):
    def found(golden, text):
        return value_in_text(PreparedValue(golden) if look == "prepared" else golden, text)
    # a pair counts only with -90 <= lat <= 90 and -180 <= lon <= 180, the edges included
    assert found({"lat": 90, "lng": 0}, "90 0") and found({"lat": -90, "lng": 0}, "-90 0")
    assert found({"lat": 0, "lng": 180}, "0 180") and found({"lat": 0, "lng": -180}, "0 -180")
    # 0.005 degrees (0.56 km) beyond an edge would be close enough, but it is no place
    assert not found({"lat": 90, "lng": 0}, "90.005 0") and found({"lat": 90, "lng": 0}, "89.995 0")
    assert not found({"lat": -90, "lng": 0}, "-90.005 0") and found({"lat": -90, "lng": 0}, "-89.995 0")
    assert not found({"lat": 0, "lng": 180}, "0 180.005") and found({"lat": 0, "lng": 180}, "0 179.995")
    assert not found({"lat": 0, "lng": -180}, "0 -180.005") and found({"lat": 0, "lng": -180}, "0 -179.995")
    # 1 km: 0.0089 degrees of latitude is 0.99 km, 0.0091 is 1.01 km
    assert found({"lat": 0, "lng": 0}, "0.0089 0") and not found({"lat": 0, "lng": 0}, "0.0091 0")
    # exactly 1 km away (1/R radians of latitude, as the formula computes it) still counts
    assert haversine_km((0.0, 0.0), (ONE_KM_LAT, 0.0)) == 1.0
    assert found({"lat": 0, "lng": 0}, f"{ONE_KM_LAT!r} 0")


def test_prepared_value_kinds():
    v = PreparedValue({"lat": 1, "lng": 2})
    assert (v.kind, v.coords, v.lo, v.hi, v.text) == ("coords", (1.0, 2.0), None, None, None)
    v = PreparedValue(200)
    assert (v.kind, v.coords, v.lo, v.hi, v.text) == ("number", None, 198.0, 202.0, None)
    v = PreparedValue(-200)
    assert (v.lo, v.hi) == (-202.0, -198.0)
    v = PreparedValue(0)
    assert (v.kind, v.lo, v.hi) == ("number", -1e-9, 1e-9)
    v = PreparedValue("  São  Paulo ")
    assert (v.kind, v.text, v.lo, v.hi, v.coords) == ("text", "sao paulo", None, None, None)
    v = PreparedValue(["Ré", 1])
    assert (v.kind, v.text) == ("text", '["re", 1]')
    v = PreparedValue({"k": "É"})
    assert (v.kind, v.text) == ("text", '{"k": "e"}')
    for golden in (None, True, 3 + 4j):
        v = PreparedValue(golden)
        assert (v.kind, v.text, v.lo, v.hi, v.coords) == ("none", None, None, None, None)


def test_is_scalar_value():
    for v in (3, 0, "1,5", "x", " x ", {"lat": 1, "lng": 2}, [1, 2], -2.5):
        assert is_scalar_value(v), v
    for v in ("", "   ", None, True, [1, 2, 3], ["a", "b"], {"k": "v"}, math.nan):
        assert not is_scalar_value(v), v
