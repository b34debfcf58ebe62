"""Tools for wide stops (issue 34): collecting a whole set exhaustively through the tools.

countries_list pages through the country statistics with each capital's point; maps_distance_matrix takes
100 destinations as the crow flies; maps_search_places pages with a true total (airports up to 500 km);
and the plain functions the generator enumerates with give the same data the tools read.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.config import load_settings
from pipeline.tools.errors import ToolArgumentError
from pipeline.tools.registry import Toolbox, validate_args
from pipeline.world.countries import country_table
from pipeline.world.elevation import elevation_at
from pipeline.world.gazetteer import statistics_countries
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
