"""The offline backends through the registry: values, provenance, determinism, errors."""
from __future__ import annotations

import csv
import gzip
import itertools

import pytest

from pipeline.config import load_settings
from pipeline.tools.errors import SimulatedRefused
from pipeline.tools.registry import Toolbox
from pipeline.world import package_file
from pipeline.world.geo import haversine_km


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory):
    return Toolbox(load_settings(cache_path=tmp_path_factory.mktemp("cache") / "c.sqlite"))


def call(toolbox, name, args):
    return toolbox.call(name, args).data


def test_geocode_and_reverse(toolbox):
    ulm = call(toolbox, "maps_geocode", {"address": "Ulm, Germany"})
    assert ulm["provenance"] == "offline-data" and ulm["country_code"] == "DE"
    assert "GeoNames" in ulm["source"]
    back = call(toolbox, "maps_reverse_geocode", {"lat": ulm["lat"], "lng": ulm["lng"]})
    assert back["city"] == "Ulm" and back["distance_km"] == 0 and back["units"] == {"distance_km": "km"}


def test_unknown_place_is_a_clear_error(toolbox):
    r = toolbox.call("maps_geocode", {"address": "Qwxzzyville Nowhere"})
    assert not r.ok and "Qwxzzyville" in r.error
    r = toolbox.call("maps_directions", {"origin": "Qwxzzyville Nowhere", "destination": "Ulm"})
    assert not r.ok and r.error.startswith("origin:")


def test_elevation_single_and_many(toolbox):
    one = call(toolbox, "maps_elevation", {"locations": {"lat": 48.40, "lng": 9.99}})
    assert one["elevation_m"] == pytest.approx(502, abs=1) and one["provenance"] == "offline-data"
    many = call(toolbox, "maps_elevation", {"locations": [{"lat": 48.40, "lng": 9.99}, {"lat": 0.0, "lng": -30.0}]})
    assert next(r["elevation_m"] for r in many["results"]) == one["elevation_m"] and len(many["results"]) == 2


def test_countries(toolbox):
    area = call(toolbox, "countries_area", {"country": "Andorra"})
    assert area["area_km2"] == 467 and area["provenance"] == "offline-data" and area["units"] == {"area_km2": "km2"}
    pop = call(toolbox, "countries_population", {"country": "United States of America"})
    assert pop["country"] == "United States" and pop["population"] > 300_000_000
    assert not toolbox.call("countries_area", {"country": "Atlantis"}).ok


def test_stock_real_and_simulated(toolbox):
    with gzip.open(package_file("bokeh_sampledata", "_data", "stocks.csv.gz"), "rt") as fh:
        row = next(r for r in csv.DictReader(fh) if r["Ticker"] == "IBM" and r["Date"] == "2005-06-15")
    price = call(toolbox, "stock_historical_price", {"symbol": "ibm", "date": "2005-06-15"})
    assert price["close"] == float(row["Close"]) and price["provenance"] == "offline-data"
    volume = call(toolbox, "stock_volume", {"symbol": "IBM", "date": "2005-06-15"})
    assert volume["volume"] == int(row["Volume"])
    # Covered symbol outside its range: an error, never a simulated stand-in.
    late = toolbox.call("stock_historical_price", {"symbol": "AAPL", "date": "2020-01-06"})
    assert not late.ok and "2013-03-01" in late.error
    sim = call(toolbox, "stock_historical_price", {"symbol": "TSLA", "date": "2020-01-06"})
    assert sim["provenance"] == "simulated" and sim["low"] <= sim["close"] <= sim["high"]
    assert sim == call(toolbox, "stock_historical_price", {"symbol": "TSLA", "date": "2020-01-06"})
    assert sim["close"] != call(toolbox, "stock_historical_price", {"symbol": "TSLA", "date": "2020-01-07"})["close"]
    assert not toolbox.call("stock_historical_price", {"symbol": "TSLA", "date": "2020-01-04"}).ok  # Saturday


def test_crypto_simulated_in_plausible_range(toolbox):
    btc = call(toolbox, "crypto_historical_price", {"symbol": "BTC", "date": "2021-06-01"})
    assert btc["provenance"] == "simulated" and 15_000 < btc["close"] < 150_000
    eth = call(toolbox, "crypto_historical_price", {"symbol": "ethereum", "date": "2021-06-01"})
    assert eth["symbol"] == "ETH" and 500 < eth["close"] < 10_000
    vol = call(toolbox, "crypto_volume", {"symbol": "BTC", "date": "2021-06-01"})
    assert vol["volume"] > 0 and vol["units"] == {"volume": "USD"}
    assert not toolbox.call("crypto_historical_price", {"symbol": "ETH", "date": "2014-01-01"}).ok


def test_weather_history_station_and_simulated(toolbox):
    real = call(toolbox, "weather_historical", {"location": "Seattle", "start_date": "2012-01-01",
                                                "end_date": "2012-01-03"})
    assert real["provenance"] == "offline-data" and len(real["daily"]) == 3
    assert (real["daily"][1]["precipitation_mm"], real["daily"][1]["temp_max_c"]) == (10.9, 10.6)
    sim = call(toolbox, "weather_historical", {"location": {"lat": 48.4, "lng": 9.99}, "start_date": "2015-07-01",
                                               "end_date": "2015-07-03"})
    assert sim["provenance"] == "simulated" and len(sim["daily"]) == 3
    assert all(d["temp_min_c"] <= d["temp_mean_c"] <= d["temp_max_c"] for d in sim["daily"])
    assert 5 < sim["daily"][0]["temp_mean_c"] < 35
    # One day has one value, however the range around it is asked.
    alone = call(toolbox, "weather_historical", {"location": {"lat": 48.4, "lng": 9.99}, "start_date": "2015-07-02"})
    assert alone["daily"][0] == sim["daily"][1]
    winter = call(toolbox, "weather_historical", {"location": {"lat": 48.4, "lng": 9.99}, "start_date": "2015-01-15"})
    assert winter["daily"][0]["temp_mean_c"] < sim["daily"][0]["temp_mean_c"]
    assert not toolbox.call("weather_historical", {"location": "Seattle", "start_date": "2015-12-30",
                                                   "end_date": "2016-01-02"}).ok  # straddles the series' end
    assert not toolbox.call("weather_historical", {"location": "Ulm", "start_date": "2015-02-30"}).ok


def test_forecast_is_simulated(toolbox):
    f = call(toolbox, "weather_forecast", {"location": "Helsinki", "days": 5})
    assert f["provenance"] == "simulated" and len(f["daily"]) == 5
    assert set(f["daily"][0]) == {"date", "temp_max_c", "temp_min_c", "precipitation_mm"}


def test_helsinki_places_inside_radius(toolbox):
    center = {"lat": 60.1699, "lng": 24.9384}
    r = call(toolbox, "maps_search_places", {"query": "cafe", "location": center, "radius_m": 400})
    assert r["provenance"] == "offline-data" and r["count"] >= 5
    for p in r["places"]:
        assert haversine_km(center["lat"], center["lng"], p["lat"], p["lng"]) * 1000 <= 400
        assert (p["category"] == "cafe" or "cafe" in p["name"].lower()) and p["place_id"].startswith("osm:")
    details = call(toolbox, "maps_place_details", {"place_id": r["places"][0]["place_id"]})
    assert details["name"] == r["places"][0]["name"] and details["provenance"] == "simulated"
    assert 1 <= details["rating"] <= 5
    assert not toolbox.call("maps_place_details", {"place_id": "osm:node/1"}).ok


def test_places_elsewhere_are_simulated_and_seeded(toolbox):
    a = call(toolbox, "maps_search_places", {"query": "museum", "location": "Ulm"})
    b = call(toolbox, "maps_search_places", {"query": "bakery", "location": "Ulm"})
    assert a["provenance"] == "simulated" and a == call(toolbox, "maps_search_places", {"query": "museum", "location": "Ulm"})
    assert a["places"] != b["places"] or a["count"] == b["count"] == 0
    for p in a["places"]:
        assert call(toolbox, "maps_place_details", {"place_id": p["place_id"]})["name"] == p["name"]


def test_monaco_route_and_matrix(toolbox):
    origin = call(toolbox, "maps_geocode", {"address": "Musée Océanographique"})
    dest = {"lat": 43.7384, "lng": 7.4246}
    route = call(toolbox, "maps_directions", {"origin": "Musée Océanographique", "destination": dest})
    crow = haversine_km(origin["lat"], origin["lng"], dest["lat"], dest["lng"])
    assert route["provenance"] == "offline-data" and 0 < route["distance_km"] < 3 * crow and route["steps"]
    matrix = call(toolbox, "maps_distance_matrix", {"origins": ["Musée Océanographique"], "destinations": [dest],
                                                    "mode": "walking"})
    assert matrix["rows"][0][0]["provenance"] == "offline-data"
    assert matrix["rows"][0][0]["duration_min"] > route["duration_min"]


def test_routes_elsewhere_are_simulated(toolbox):
    r = call(toolbox, "maps_distance_matrix", {"origins": ["Ulm"], "destinations": ["Munich", "Stuttgart"]})
    assert r["provenance"] == "simulated"
    ulm, munich = (call(toolbox, "maps_geocode", {"address": n}) for n in ("Ulm", "Munich"))
    crow = haversine_km(ulm["lat"], ulm["lng"], munich["lat"], munich["lng"])
    assert r["rows"][0][0]["distance_km"] == pytest.approx(crow * 1.3, rel=1e-3)
    assert r["rows"][0][0] != r["rows"][0][1]


def test_simulated_values_can_be_refused(tmp_path):
    strict = Toolbox(load_settings(cache_path=tmp_path / "c.sqlite", allow_simulated=False))
    with pytest.raises(SimulatedRefused):
        strict.call("crypto_historical_price", {"symbol": "BTC", "date": "2021-06-01"})
    assert strict.call("countries_area", {"country": "Andorra"}).ok


def test_registered_extra_places_are_geocoded(toolbox):
    from pipeline.world.gazetteer import clear_extra_places, register_extra_places

    try:
        assert register_extra_places([("Zorblax Observatory", 47.0, 8.0, "CH", "test fixture")]) == 1
        hit = call(toolbox, "maps_geocode", {"address": "zorblax observatory"})
        assert (hit["lat"], hit["lng"], hit["provenance"], hit["source"]) == (47.0, 8.0, "snapshot", "test fixture")
    finally:
        clear_extra_places()


def test_every_capital_geocodes_to_its_countrys_point_under_every_name(toolbox):
    """Issue 21: "the capital city" has one point. For every country of the country table, each
    name of its capital (countryinfo's, GeoNames', the usual English ones) geocodes to the point the
    country geocodes to, so the capital's elevation agrees however an agent names it. A bare name
    gives way only where the gazetteer's documented rule says so (a namesake more than
    CAPITAL_YIELDS_TO times as populous, or a more populous capital of the same name); then the
    name qualified by the country finds the capital."""
    from pipeline.world.gazetteer import CAPITAL_YIELDS_TO, gazetteer
    from pipeline.world.geo import normalise_name

    g = gazetteer()
    capitals = g.capitals()
    assert len(capitals) >= len(g.countries.by_iso2) - 3   # Antarctica, Bouvet, US Minor Outlying Islands
    yielded = []
    for iso2, capital in sorted(capitals.items()):
        country = g.countries.by_iso2[iso2]
        point = call(toolbox, "maps_geocode", {"address": iso2})   # the country tool's capital point
        assert point["place_type"] == "country" and point["country_code"] == iso2
        if "," not in country.name:
            by_name = call(toolbox, "maps_geocode", {"address": country.name})
            assert (by_name["lat"], by_name["lng"]) == (point["lat"], point["lng"]), country.name
        elevation = call(toolbox, "maps_elevation", {"locations": {"lat": point["lat"], "lng": point["lng"]}})["elevation_m"]
        for name in capital.names:
            found = toolbox.call("maps_geocode", {"address": name})
            if not (found.ok and (found.data["lat"], found.data["lng"]) == (point["lat"], point["lng"])):
                key = normalise_name(name)
                own = g.population[capital.index] if capital.index is not None else 0
                bigger_namesake = any(g.population[i] > CAPITAL_YIELDS_TO * max(own, 1)
                                      for i in g._by_name.get(key, []) if i != capital.index)
                bigger_capital = any(c != iso2 and key in {normalise_name(n) for n in capitals[c].names}
                                     for c in capitals)
                assert bigger_namesake or bigger_capital, (iso2, name, found.data if found.ok else found.error)
                yielded.append((iso2, name))
                found = toolbox.call("maps_geocode", {"address": f"{name}, {country.name}"})
                assert found.ok, (iso2, name, found.error)
            assert (found.data["lat"], found.data["lng"]) == (point["lat"], point["lng"]), (iso2, name)
            at = call(toolbox, "maps_elevation", {"locations": {"lat": found.data["lat"], "lng": found.data["lng"]}})
            assert at["elevation_m"] == elevation
    assert len(yielded) <= 10, yielded
    for name, iso2 in [("Ulaanbaatar", "MN"), ("Ulan Bator", "MN"), ("Washington, D.C.", "US"), ("Washington", "US"),
                       ("Kyiv", "UA"), ("Kiev", "UA"), ("Astana", "KZ"), ("Nur-Sultan", "KZ"), ("Naypyidaw", "MM"),
                       ("Hamilton, Bermuda", "BM"), ("Kingston", "JM")]:
        hit = call(toolbox, "maps_geocode", {"address": name})
        assert (hit["lat"], hit["lng"]) == (capitals[iso2].lat, capitals[iso2].lng), name
    assert call(toolbox, "maps_geocode", {"address": "Hamilton"})["country_code"] == "CA"   # Ontario's, 500 times larger


def test_simulated_places_are_one_set_whatever_the_radius(toolbox):
    """"The first hotel found near X" must not depend on a radius the clue does not state (blind race 4,
    R11: the golden trace searched 5 km, the racer the default, and they met different invented hotels)."""
    found = {r: call(toolbox, "maps_search_places", {"query": "hotel", "location": "Los Angeles", "radius_m": r})
             for r in (1000, 2000, 5000, 50000)}
    ids = {r: [p["place_id"] for p in f["places"]] for r, f in found.items()}
    assert all(f["provenance"] == "simulated" for f in found.values())
    assert ids[2000] and ids[2000][0] == ids[5000][0] == ids[50000][0]
    for small, large in itertools.pairwise((1000, 2000, 5000, 50000)):
        assert set(ids[small]) <= set(ids[large])          # a wider search adds places, never swaps them
        assert all(p["distance_m"] <= small for p in found[small]["places"])


def test_a_place_search_without_a_radius_names_the_nearest_match(toolbox):
    """Issue 34 item 7: no airport within the default 2 km of Athens' point: the answer names the nearest
    (and says how far) instead of answering none; with radius_m given, none stays none."""
    found = call(toolbox, "maps_search_places", {"query": "airport", "location": "Athens"})
    assert found["count"] == 0 and found["places"] == []
    nearest = found["nearest"]
    assert nearest["iata"] and 2000 < nearest["distance_m"] < 50000 and f"{nearest['distance_m']:,.0f} m" in found["note"]
    within = call(toolbox, "maps_search_places", {"query": "airport", "location": "Athens",
                                                  "radius_m": nearest["distance_m"] + 1})
    assert within["places"][0]["place_id"] == nearest["place_id"]
    given = call(toolbox, "maps_search_places", {"query": "airport", "location": "Athens", "radius_m": 2000})
    assert given["count"] == 0 and "nearest" not in given
