"""Tools for wide stops (issue 34): collecting a whole set exhaustively through the tools.

countries_list pages through the country statistics with each capital's point; maps_distance_matrix takes
100 destinations as the crow flies; maps_search_places pages with a true total (airports up to 500 km);
and the plain functions the generator enumerates with give the same data the tools read.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import airportsdata
import pytest

from pipeline.config import load_settings
from pipeline.tools.errors import ToolArgumentError
from pipeline.tools.registry import Toolbox, validate_args
from pipeline.world.countries import country_table
from pipeline.world.elevation import elevation_at
from pipeline.world.gazetteer import iata_airports, statistics_countries
from pipeline.world.geo import normalise_name

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def toolbox():
    return Toolbox(load_settings(), cache=False)


def data(toolbox, name, args):
    result = toolbox.call(name, args)
    assert result.ok, (name, args, result.error)
    return result.data


def run_cli(*argv: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEGWORK_")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-m", "pipeline.tools", "call", *argv], check=False, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.strip()) <= 8000
    return json.loads(done.stdout)


def pages(toolbox, tool, args, key):
    """Every page of a paged tool from offset 0, following next_offset."""
    out, offset = [], 0
    while offset is not None:
        page = data(toolbox, tool, {**args, "offset": offset})
        assert page["offset"] == offset
        out.append(page)
        assert page["next_offset"] is None or page["next_offset"] == offset + len(page[key]) > offset
        offset = page["next_offset"]
    return out


# ---------------------------------------------------------------------------------------------- countries_list
def test_countries_list_pages_through_the_plain_list(toolbox):
    plain = [{"name": c.name, "iso2": c.iso2, "capital": c.capital, "lat": c.lat, "lng": c.lng}
             for c in statistics_countries()]
    for limit in (50, 7, 100):
        got = pages(toolbox, "countries_list", {"limit": limit}, "countries")
        listed = [c for page in got for c in page["countries"]]
        assert listed == plain
        assert {page["total"] for page in got} == {len(plain)}
        assert all(len(page["countries"]) == limit for page in got[:-1]) and got[-1]["next_offset"] is None
    assert len({c["iso2"] for c in plain}) == len({c["name"] for c in plain}) == len(plain) > 200
    names = [c["name"] for c in plain]
    assert names == sorted(names, key=lambda n: (normalise_name(n), n))
    assert data(toolbox, "countries_list", {})["provenance"] == "offline-data"
    assert data(toolbox, "countries_list", {}) == data(toolbox, "countries_list", {"offset": 0, "limit": 50})
    last = data(toolbox, "countries_list", {"offset": len(plain) + 5})
    assert last["countries"] == [] and last["next_offset"] is None and last["total"] == len(plain)


def test_countries_list_is_exactly_the_countries_the_statistics_answer_for(toolbox):
    """Each listed country answers countries_population and countries_area under its listed name, and
    maps_geocode gives it the listed point; no country they answer for is missing."""
    listed = {c["iso2"]: c for page in pages(toolbox, "countries_list", {"limit": 100}, "countries")
              for c in page["countries"]}
    for c in listed.values():
        population = data(toolbox, "countries_population", {"country": c["name"]})
        area = data(toolbox, "countries_area", {"country": c["name"]})
        assert population["country"] == area["country"] == c["name"] and population["country_code"] == c["iso2"]
        point = data(toolbox, "maps_geocode", {"address": c["name"]})
        assert (point["lat"], point["lng"]) == (c["lat"], c["lng"]), c
        assert c["capital"] is None or c["capital"] == point.get("represented_by"), (c, point)
    answered = set()
    for iso2, country in country_table().by_iso2.items():
        if (toolbox.call("countries_population", {"country": country.name}).ok
                and toolbox.call("countries_area", {"country": country.name}).ok):
            answered.add(iso2)
    assert answered == set(listed)


def test_countries_list_capitals_geocode_to_the_listed_point(toolbox):
    """The capital under its own name (with its country, as a reader would write it) is the same point."""
    for c in statistics_countries():
        if c.capital and c.iso2 in {"FR", "DE", "MN", "US", "JP", "BR", "KE", "AU"}:
            point = data(toolbox, "maps_geocode", {"address": f"{c.capital}, {c.name}"})
            assert (point["lat"], point["lng"]) == (c.lat, c.lng), c


def test_countries_list_arguments_are_checked():
    for bad in ({"limit": 0}, {"limit": 101}, {"offset": -1}, {"limit": "50"}, {"page": 2}):
        with pytest.raises(ToolArgumentError):
            validate_args("countries_list", bad)
    validate_args("countries_list", {})
    validate_args("countries_list", {"offset": 200, "limit": 100})


def test_countries_list_pages_fit_the_cli_cut(toolbox):
    """A page of 50 (the default) prints whole under the CLI's default 8,000-character cut, well under it;
    a page of 100 that does not fit is shortened with next_offset at the first country not shown, so
    following next_offset through the CLI still lists every country once."""
    total = len(statistics_countries())
    sizes = {offset: len(toolbox.call("countries_list", {"offset": offset}).response_json)
             for offset in range(total)}
    widest = max(sizes, key=sizes.get)
    assert sizes[widest] < 6000
    page = run_cli("countries_list", json.dumps({"offset": widest}))
    assert "shortened" not in page and len(page["countries"]) == min(50, total - widest)
    seen, offset = [], 0
    while offset is not None:
        page = run_cli("countries_list", json.dumps({"offset": offset, "limit": 100}))
        seen += [c["iso2"] for c in page["countries"]]
        offset = page["next_offset"]
    assert seen == [c.iso2 for c in statistics_countries()]


# ---------------------------------------------------------------------------------------------- elevation
def test_maps_elevation_is_elevation_at(toolbox):
    """The plain function the generator reads is the figure the tool answers (the capitals, in one call)."""
    capitals = statistics_countries()[:100]
    answer = data(toolbox, "maps_elevation", {"locations": [{"lat": c.lat, "lng": c.lng} for c in capitals]})
    assert [r["elevation_m"] for r in answer["results"]] == [elevation_at(c.lat, c.lng) for c in capitals]
    assert len({r["elevation_m"] for r in answer["results"]}) > 20


# ---------------------------------------------------------------------------------------------- distance matrix
def _haversine_km(lat1, lng1, lat2, lng2):
    """The test's own great circle on the mean Earth sphere (R = 6371.0088 km), independent of the backend."""
    p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lng2 - lng1)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(math.sqrt(a))


def test_distance_matrix_takes_100_destinations_as_the_crow_flies(toolbox):
    capitals = statistics_countries()[:100]
    origin = {"lat": 48.8566, "lng": 2.3522}
    answer = data(toolbox, "maps_distance_matrix", {"origins": [origin], "mode": "great_circle",
                                                    "destinations": [{"lat": c.lat, "lng": c.lng} for c in capitals]})
    assert len(answer["rows"]) == 1 and len(answer["rows"][0]) == 100
    for cell, c in zip(answer["rows"][0], capitals):
        assert cell["distance_km"] == pytest.approx(_haversine_km(origin["lat"], origin["lng"], c.lat, c.lng), abs=0.001)
    named = data(toolbox, "maps_distance_matrix", {"origins": ["Paris"], "mode": "great_circle",
                                                   "destinations": [c.name for c in capitals[:40]]})
    assert len(named["rows"][0]) == 40
    validate_args("maps_distance_matrix", {"origins": [origin], "destinations": [origin] * 100, "mode": "great_circle"})
    with pytest.raises(ToolArgumentError):
        validate_args("maps_distance_matrix", {"origins": [origin], "destinations": [origin] * 101,
                                               "mode": "great_circle"})


def test_travel_modes_still_refuse_more_than_10_destinations(toolbox):
    origin, near = {"lat": 48.40, "lng": 9.99}, {"lat": 48.14, "lng": 11.58}
    assert toolbox.call("maps_distance_matrix", {"origins": [origin], "destinations": [near] * 10}).ok
    for mode in ("driving", "walking", "bicycling", None):
        args = {"origins": [origin], "destinations": [near] * 11, **({"mode": mode} if mode else {})}
        validate_args("maps_distance_matrix", args)      # the schema allows it: the mode decides
        refused = toolbox.call("maps_distance_matrix", args)
        assert not refused.ok and "at most 10 destinations" in refused.error and "great_circle" in refused.error


# ---------------------------------------------------------------------------------------------- place search
def _dms(value: float) -> float | None:
    """airportsdata's Belgian and Luxembourg points are degrees, minutes and seconds in decimal digits
    (50.5405 is 50 deg 54' 05"); the map tools read them so, as their answers say. The test's own reading."""
    sign = -1 if value < 0 else 1
    whole, _, digits = repr(abs(float(value))).partition(".")
    if len(digits) > 4:
        return None
    digits = digits.ljust(4, "0")
    minutes, seconds = int(digits[:2]), int(digits[2:])
    if minutes >= 60 or seconds >= 60:
        return None
    return sign * (int(whole) + minutes / 60 + seconds / 3600)


def _airportsdata_points() -> dict[str, tuple[float, float]]:
    points = {}
    for code, a in airportsdata.load("IATA").items():
        lat, lng = float(a["lat"]), float(a["lon"])
        if a["country"] in ("BE", "LU") and None not in (_dms(lat), _dms(lng)):
            lat, lng = _dms(lat), _dms(lng)
        points[code] = (lat, lng)
    return points


@pytest.mark.parametrize("center, radius_km", [((48.8566, 2.3522), 150), ((51.5072, -0.1276), 300),
                                               ((50.8467, 4.3525), 120), ((50.1109, 8.6821), 500)],
                         ids=["Paris-150", "London-300", "Brussels-120", "Frankfurt-500"])
def test_airport_pages_give_exactly_the_airports_within_the_radius(toolbox, center, radius_km):
    args = {"query": "airport", "location": {"lat": center[0], "lng": center[1]}, "radius_m": radius_km * 1000}
    got = pages(toolbox, "maps_search_places", args, "places")
    places = [p for page in got for p in page["places"]]
    expected = {code for code, (lat, lng) in _airportsdata_points().items()
                if _haversine_km(center[0], center[1], lat, lng) <= radius_km}
    assert len(expected) > 10
    assert [p["iata"] for p in places] and len(places) == len({p["iata"] for p in places})   # no overlaps
    assert {p["iata"] for p in places} == expected
    assert {page["total"] for page in got} == {page["count"] for page in got} == {len(expected)}
    assert all(len(page["places"]) == 20 for page in got[:-1]) and got[-1]["next_offset"] is None
    keys = [(p["distance_m"], p["name"], p["place_id"]) for p in places]
    assert keys == sorted(keys)
    plain = {a.iata: a for a in iata_airports()}
    for p in places:
        assert {"lat", "lng", "iata", "distance_m"} <= p.keys() and p["place_id"] == f"iata:{p['iata']}"
        assert (p["lat"], p["lng"]) == (plain[p["iata"]].lat, plain[p["iata"]].lng)
        assert p["distance_m"] == pytest.approx(_haversine_km(*center, p["lat"], p["lng"]) * 1000, abs=0.06)


def test_airports_at_one_distance_are_ordered_by_name_then_id(toolbox):
    """Two airports the same distance away (on one latitude, searched from the longitude between them)
    come by name, not by code, where the two orders differ; BSL and MLH (one airport, one name, one
    point) by place_id."""
    by_lat: dict[float, list] = {}
    for a in iata_airports():
        by_lat.setdefault(a.lat, []).append(a)
    pairs = [(x, y) for group in by_lat.values() for x in group for y in group
             if x.name < y.name and x.iata > y.iata and 0 < _haversine_km(x.lat, x.lng, y.lat, y.lng) < 400]
    assert pairs
    for x, y in pairs[:5]:
        where = {"lat": x.lat, "lng": (x.lng + y.lng) / 2}
        radius = _haversine_km(x.lat, x.lng, where["lat"], where["lng"]) * 1000 + 10
        places = [p for page in pages(toolbox, "maps_search_places", {"query": "airport", "location": where,
                                                                      "radius_m": radius}, "places")
                  for p in page["places"]]
        order = [p["iata"] for p in places if p["iata"] in (x.iata, y.iata)]
        same = {p["distance_m"] for p in places if p["iata"] in (x.iata, y.iata)}
        assert len(same) == 1 and order == [x.iata, y.iata], (x, y, places)
    got = data(toolbox, "maps_search_places", {"query": "airport", "location": {"lat": 47.5896, "lng": 7.52991},
                                               "radius_m": 100})
    assert [p["iata"] for p in got["places"] if p["distance_m"] == 0] == ["BSL", "MLH"]


def test_iata_airports_is_airportsdata(toolbox):
    plain = iata_airports()
    assert [a.iata for a in plain] == sorted(airportsdata.load("IATA"))
    points = _airportsdata_points()
    assert all((a.lat, a.lng) == pytest.approx(points[a.iata], abs=1e-6) for a in plain)
    for code in ("CDG", "BRU", "HND"):
        hit = data(toolbox, "maps_geocode", {"address": code})
        a = next(a for a in plain if a.iata == code)
        assert (hit["lat"], hit["lng"], hit["name"]) == (a.lat, a.lng, a.name)


def test_place_search_pages_points_of_interest_too(toolbox):
    """A covered city's points of interest page the same way (Helsinki: 90 cafes within 5 km)."""
    for query, location, radius in (("cafe", "Helsinki", 5000), ("hotel", "Ulm", 20000)):
        got = pages(toolbox, "maps_search_places", {"query": query, "location": location, "radius_m": radius},
                    "places")
        places = [p for page in got for p in page["places"]]
        assert len(places) == len({p["place_id"] for p in places}) == got[0]["total"]
        keys = [(p["distance_m"], p["name"], p["place_id"]) for p in places]
        assert keys == sorted(keys) and all(p["distance_m"] <= radius for p in places)
    assert got[0]["total"] > 0 and len(pages(toolbox, "maps_search_places", {"query": "cafe", "location": "Helsinki",
                                                                              "radius_m": 5000}, "places")) > 1


def test_radius_cap_depends_on_the_query(toolbox):
    where = {"lat": 48.8566, "lng": 2.3522}
    for query in ("airport", "airports", "Airport"):
        assert toolbox.call("maps_search_places", {"query": query, "location": where, "radius_m": 500000}).ok
    assert toolbox.call("maps_search_places", {"query": "cafe", "location": where, "radius_m": 50000}).ok
    refused = toolbox.call("maps_search_places", {"query": "cafe", "location": where, "radius_m": 50001})
    assert not refused.ok and "50,000" in refused.error and "airport" in refused.error
    with pytest.raises(ToolArgumentError):
        validate_args("maps_search_places", {"query": "airport", "location": where, "radius_m": 500001})
    with pytest.raises(ToolArgumentError):
        validate_args("maps_search_places", {"query": "airport", "location": where, "offset": -1})
