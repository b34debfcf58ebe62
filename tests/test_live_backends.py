"""Live backends against a local server that answers in each API's real response format.

Nothing here touches the internet: every base URL in ``settings.live`` points at the
``ScriptedServer`` started by the test. Expected values are computed from the canned
responses by hand (unit conversions included), not copied from what the code returned.
"""
from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from live_http import Answer, ScriptedServer

from pipeline.config import load_settings
from pipeline.tools.errors import LiveServiceError
from pipeline.tools.registry import Toolbox

WIKITEXT = Path(__file__).resolve().parent / "fixtures" / "live"   # a real article, served by the stand-in API


def make_toolbox(server: ScriptedServer, tmp_path, **live) -> Toolbox:
    urls = {
        "mediawiki_api_url": f"{server.url}/w/api.php", "serper_url": f"{server.url}/serper",
        "nominatim_url": f"{server.url}/nominatim", "osrm_driving_url": f"{server.url}/osrm-car",
        "osrm_walking_url": f"{server.url}/osrm-foot", "osrm_bicycling_url": f"{server.url}/osrm-bike",
        "open_meteo_elevation_url": f"{server.url}/v1/elevation",
        "open_meteo_archive_url": f"{server.url}/v1/archive", "open_meteo_forecast_url": f"{server.url}/v1/forecast",
        "restcountries_url": f"{server.url}/v3.1", "binance_url": f"{server.url}/binance",
        "alphavantage_url": f"{server.url}/query", "google_maps_url": f"{server.url}/google",
        "http_backoff_s": 0, "http_retries": 2, "nominatim_min_interval_s": 0, "osrm_min_interval_s": 0,
        "google_maps_key": "", "serper_key": "", "alphavantage_key": "",
    }
    urls.update(live)
    settings = load_settings(env={}, default_backend="live", cache_path=tmp_path / "cache.sqlite",
                             snapshot_dir=tmp_path / "snap", live=urls)
    return Toolbox(settings)


@pytest.fixture(autouse=True)
def no_keys_from_environment(monkeypatch):
    for var in ("GOOGLE_MAPS_API_KEY", "SERPER_API_KEY", "ALPHAVANTAGE_API_KEY"):
        monkeypatch.delenv(var, raising=False)


# --- canned answers in each API's format -----------------------------------------------------

NOMINATIM_ULM = [{
    "place_id": 131596083, "licence": "Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright",
    "osm_type": "relation", "osm_id": 62646, "lat": "48.3984968", "lon": "9.9912458", "category": "boundary",
    "type": "administrative", "place_rank": 16, "importance": 0.67, "addresstype": "city", "name": "Ulm",
    "display_name": "Ulm, Baden-Württemberg, Deutschland",
    "address": {"city": "Ulm", "state": "Baden-Württemberg", "ISO3166-2-lvl4": "DE-BW", "country": "Deutschland",
                "country_code": "de"},
    "boundingbox": ["48.3314", "48.4656", "9.8669", "10.0763"]}]
NOMINATIM_MUNICH = [{**NOMINATIM_ULM[0], "osm_id": 62428, "lat": "48.1371079", "lon": "11.5753822", "name": "München",
                     "display_name": "München, Bayern, Deutschland",
                     "address": {"city": "München", "country": "Deutschland", "country_code": "de"}}]


def geocoder(request):
    return Answer(200, {"Ulm": NOMINATIM_ULM, "Munich": NOMINATIM_MUNICH}.get(request.query["q"], []))


# --- geocoding -------------------------------------------------------------------------------

def test_geocode_with_nominatim(tmp_path):
    with ScriptedServer({"/nominatim/search": geocoder}) as server:
        result = make_toolbox(server, tmp_path).call("maps_geocode", {"address": "Ulm"})
        sent = server.hits("/nominatim/search")[0]
    assert result.ok
    data = result.data
    assert (data["lat"], data["lng"]) == (48.3984968, 9.9912458)
    assert data["country_code"] == "DE" and data["place_type"] == "city"
    assert data["provenance"] == "live" and "Nominatim" in data["source"]
    assert data["units"] == {"lat": "degrees", "lng": "degrees"}
    assert sent.query["format"] == "jsonv2" and sent.query["limit"] == "1"
    assert sent.headers["user-agent"].startswith("Legwork/")


def test_geocode_unknown_place_is_a_tool_error(tmp_path):
    with ScriptedServer({"/nominatim/search": geocoder}) as server:
        result = make_toolbox(server, tmp_path).call("maps_geocode", {"address": "Atlantis"})
    assert not result.ok and "no place found for 'Atlantis'" in result.error


def test_nominatim_rate_limit_spaces_requests(tmp_path):
    with ScriptedServer({"/nominatim/search": geocoder}) as server:
        toolbox = make_toolbox(server, tmp_path, nominatim_min_interval_s=0.3)
        start = time.monotonic()
        toolbox.call("maps_geocode", {"address": "Ulm"})
        toolbox.call("maps_geocode", {"address": "Munich"})
        toolbox.call("maps_geocode", {"address": "Atlantis"})
        elapsed = time.monotonic() - start
    assert elapsed >= 0.6  # three requests, at least two intervals apart


def test_reverse_geocode(tmp_path):
    answer = {"place_id": 1, "lat": "48.3984968", "lon": "9.9912458", "display_name": "Ulm, Baden-Württemberg, Deutschland",
              "address": {"town": "Ulm", "country": "Deutschland", "country_code": "de"}}
    with ScriptedServer({"/nominatim/reverse": Answer(200, answer)}) as server:
        data = make_toolbox(server, tmp_path).call("maps_reverse_geocode", {"lat": 48.4, "lng": 9.99}).data
        sent = server.hits("/nominatim/reverse")[0].query
    assert (data["city"], data["country_code"]) == ("Ulm", "DE")
    # 0.0015 degrees of latitude and 0.0012 of longitude at 48.4 N: about 0.19 km
    assert data["distance_km"] == pytest.approx(0.187, abs=0.005)
    assert (sent["lat"], sent["lon"]) == ("48.4", "9.99")


# --- retries and failures ----------------------------------------------------------------------

def test_server_errors_are_retried_then_answered(tmp_path):
    script = [Answer(503, "busy"), Answer(429, "slow down", {"Retry-After": "0"}), Answer(200, NOMINATIM_ULM)]
    with ScriptedServer({"/nominatim/search": script}) as server:
        result = make_toolbox(server, tmp_path).call("maps_geocode", {"address": "Ulm"})
        assert len(server.hits("/nominatim/search")) == 3
    assert result.ok and result.data["lat"] == 48.3984968


def test_persistent_outage_raises_and_is_not_recorded(tmp_path):
    with ScriptedServer({"/nominatim/search": Answer(502, "bad gateway")}) as server:
        toolbox = make_toolbox(server, tmp_path)
        with pytest.raises(LiveServiceError, match="HTTP 502"):
            toolbox.call("maps_geocode", {"address": "Ulm"})
        assert len(server.hits("/nominatim/search")) == 3  # first try + 2 retries
    assert toolbox.cache.count() == 0


def test_answers_are_recorded_and_not_asked_twice(tmp_path):
    with ScriptedServer({"/nominatim/search": geocoder}) as server:
        toolbox = make_toolbox(server, tmp_path)
        first = toolbox.call("maps_geocode", {"address": "Ulm"})
        second = toolbox.call("maps_geocode", {"address": "Ulm"})
        assert len(server.hits("/nominatim/search")) == 1
    assert second.served_from == "cache" and second.response_json == first.response_json
    replay = Toolbox(toolbox.settings.with_overrides(default_backend="replay", replay_of="live"))
    assert replay.call("maps_geocode", {"address": "Ulm"}).response_json == first.response_json


# --- elevation, routing ------------------------------------------------------------------------

def test_elevation_open_meteo(tmp_path):
    with ScriptedServer({"/v1/elevation": Answer(200, {"elevation": [478.0, 8848.0]})}) as server:
        data = make_toolbox(server, tmp_path).call("maps_elevation", {"locations": [
            {"lat": 48.3985, "lng": 9.9912}, {"lat": 27.9881, "lng": 86.925}]}).data
        sent = server.hits("/v1/elevation")[0].query
    assert data["elevation_m"] == 478.0
    assert data["results"] == [{"lat": 48.3985, "lng": 9.9912, "elevation_m": 478.0},
                               {"lat": 27.9881, "lng": 86.925, "elevation_m": 8848.0}]
    assert sent == {"latitude": "48.3985,27.9881", "longitude": "9.9912,86.925"}
    assert data["units"] == {"elevation_m": "m"}


def test_directions_with_osrm_geocodes_text_places(tmp_path):
    route = {"code": "Ok", "waypoints": [], "routes": [{
        "distance": 147321.4, "duration": 5520.6, "weight_name": "routability", "weight": 5520.6,
        "legs": [{"distance": 147321.4, "duration": 5520.6, "summary": "A 8", "steps": [
            {"distance": 1200.0, "duration": 120.0, "name": "Olgastraße", "mode": "driving",
             "maneuver": {"type": "depart", "bearing_after": 90, "location": [9.99, 48.4]}},
            {"distance": 146121.4, "duration": 5400.6, "name": "A 8", "mode": "driving",
             "maneuver": {"type": "turn", "modifier": "left", "location": [10.0, 48.41]}}]}]}]}
    with ScriptedServer({"/nominatim/search": geocoder, "/osrm-foot/route/v1/driving/9.9912458,48.3984968;"
                         "11.5753822,48.1371079": Answer(200, route)}) as server:
        result = make_toolbox(server, tmp_path).call(
            "maps_directions", {"origin": "Ulm", "destination": "Munich", "mode": "walking"})
    assert result.ok, result.data
    data = result.data
    assert data["distance_km"] == pytest.approx(147.321, abs=1e-3)
    assert data["duration_min"] == pytest.approx(5520.6 / 60, abs=0.01)
    assert [s["instruction"] for s in data["steps"]] == ["depart onto Olgastraße", "turn left onto A 8"]
    assert "walking profile" in data["source"]  # the route exists only on the foot server
    assert data["units"] == {"distance_km": "km", "duration_min": "min"}


def test_distance_matrix_with_osrm_table(tmp_path):
    table = {"code": "Ok", "durations": [[3600.0, None]], "distances": [[90000.0, None]],
             "sources": [], "destinations": []}
    path = "/osrm-car/table/v1/driving/10.0,48.0;11.0,48.5;12.0,49.0"
    with ScriptedServer({path: Answer(200, table)}) as server:
        data = make_toolbox(server, tmp_path).call("maps_distance_matrix", {
            "origins": [{"lat": 48.0, "lng": 10.0}],
            "destinations": [{"lat": 48.5, "lng": 11.0}, {"lat": 49.0, "lng": 12.0}]}).data
        sent = server.hits(path)[0].query
    assert data["rows"] == [[{"distance_km": 90.0, "duration_min": 60.0}, {"distance_km": None, "duration_min": None}]]
    assert sent["sources"] == "0" and sent["destinations"] == "1;2"


def test_search_places_and_details_with_nominatim(tmp_path):
    cafes = [
        {"osm_type": "node", "osm_id": 111, "lat": "48.3990", "lon": "9.9920", "category": "amenity", "type": "cafe",
         "name": "Café Tröglen", "display_name": "Café Tröglen, Ulm"},
        {"osm_type": "node", "osm_id": 222, "lat": "48.4400", "lon": "10.0500", "category": "amenity", "type": "cafe",
         "name": "Far Away Café", "display_name": "Far Away Café, Ulm"}]
    lookup = [{**cafes[0], "extratags": {"opening_hours": "Mo-Su 08:00-18:00"}}]
    with ScriptedServer({"/nominatim/search": Answer(200, cafes), "/nominatim/lookup": Answer(200, lookup)}) as server:
        toolbox = make_toolbox(server, tmp_path)
        found = toolbox.call("maps_search_places", {"query": "cafe", "location": {"lat": 48.3985, "lng": 9.9912},
                                                    "radius_m": 1000}).data
        details = toolbox.call("maps_place_details", {"place_id": "osm:node:111"}).data
        assert server.hits("/nominatim/lookup")[0].query["osm_ids"] == "N111"
        assert server.hits("/nominatim/search")[0].query["bounded"] == "1"
    # The second café is about 7 km away: outside the 1 km circle.
    assert found["places"] == [{"place_id": "osm:node:111", "name": "Café Tröglen", "category": "amenity:cafe",
                                "lat": 48.399, "lng": 9.992}]
    assert found["count"] == 1
    assert details["name"] == "Café Tröglen" and details["rating"] is None


# --- Google Maps with a key --------------------------------------------------------------------

def test_google_maps_used_when_a_key_is_set(tmp_path):
    geocode = {"status": "OK", "results": [{
        "formatted_address": "Ulm, Germany", "place_id": "ChIJ1", "types": ["locality", "political"],
        "geometry": {"location": {"lat": 48.4010822, "lng": 9.987607}, "location_type": "APPROXIMATE"},
        "address_components": [{"long_name": "Ulm", "short_name": "UL", "types": ["locality", "political"]},
                               {"long_name": "Germany", "short_name": "DE", "types": ["country", "political"]}]}]}
    details = {"status": "OK", "result": {"place_id": "ChIJ2", "name": "Ulm Minster", "types": ["church"],
                                          "geometry": {"location": {"lat": 48.3985, "lng": 9.9925}},
                                          "rating": 4.7, "user_ratings_total": 31245}}
    matrix = {"status": "OK", "origin_addresses": ["Ulm"], "destination_addresses": ["Munich"], "rows": [{"elements": [
        {"status": "OK", "distance": {"text": "150 km", "value": 150234}, "duration": {"text": "1 h 33", "value": 5580}}]}]}
    routes = {"/google/maps/api/geocode/json": Answer(200, geocode),
              "/google/maps/api/place/details/json": Answer(200, details),
              "/google/maps/api/distancematrix/json": Answer(200, matrix)}
    with ScriptedServer(routes) as server:
        toolbox = make_toolbox(server, tmp_path, google_maps_key="test-key")
        place = toolbox.call("maps_geocode", {"address": "Ulm"}).data
        minster = toolbox.call("maps_place_details", {"place_id": "ChIJ2"}).data
        rows = toolbox.call("maps_distance_matrix", {"origins": ["Ulm"], "destinations": ["Munich"]}).data["rows"]
        assert server.hits("/google/maps/api/geocode/json")[0].query["key"] == "test-key"
        assert server.hits("/google/maps/api/distancematrix/json")[0].query["origins"] == "Ulm"
    assert (place["lat"], place["lng"], place["country_code"]) == (48.4010822, 9.987607, "DE")
    assert "Google" in place["source"]
    assert (minster["rating"], minster["user_ratings_total"]) == (4.7, 31245)
    assert rows == [[{"distance_km": 150.234, "duration_min": 93.0}]]


def test_google_refused_key_is_not_recorded(tmp_path):
    denied = {"status": "REQUEST_DENIED", "error_message": "The provided API key is invalid.", "results": []}
    with ScriptedServer({"/google/maps/api/geocode/json": Answer(200, denied)}) as server:
        toolbox = make_toolbox(server, tmp_path, google_maps_key="bad")
        with pytest.raises(LiveServiceError, match="REQUEST_DENIED"):
            toolbox.call("maps_geocode", {"address": "Ulm"})
    assert toolbox.cache.count() == 0


def test_place_details_needs_google_for_google_ids(tmp_path):
    with ScriptedServer({}) as server:
        result = make_toolbox(server, tmp_path).call("maps_place_details", {"place_id": "ChIJ2"})
    assert not result.ok and "no Google Maps key" in result.error


# --- weather -----------------------------------------------------------------------------------

def test_weather_historical_converts_units(tmp_path):
    archive = {"latitude": 48.4, "longitude": 10.0, "generationtime_ms": 0.5, "utc_offset_seconds": 3600,
               "timezone": "Europe/Berlin", "timezone_abbreviation": "CET", "elevation": 478.0,
               "daily_units": {"time": "iso8601", "temperature_2m_max": "°C", "temperature_2m_min": "°C",
                               "temperature_2m_mean": "°C", "precipitation_sum": "mm", "snowfall_sum": "cm",
                               "sunshine_duration": "s"},
               "daily": {"time": ["2024-01-15", "2024-01-16"], "temperature_2m_max": [1.2, -0.5],
                         "temperature_2m_min": [-4.1, -7.3], "temperature_2m_mean": [-1.4, -3.9],
                         "precipitation_sum": [2.3, 0.0], "snowfall_sum": [1.61, 0.0],
                         "sunshine_duration": [12600.0, 27000.0]}}
    with ScriptedServer({"/v1/archive": Answer(200, archive)}) as server:
        data = make_toolbox(server, tmp_path).call("weather_historical", {
            "location": {"lat": 48.4, "lng": 10.0}, "start_date": "2024-01-15", "end_date": "2024-01-16"}).data
        sent = server.hits("/v1/archive")[0].query
    assert data["daily"][0] == {"date": "2024-01-15", "temp_max_c": 1.2, "temp_min_c": -4.1, "temp_mean_c": -1.4,
                                "precipitation_mm": 2.3, "snowfall_mm": 16.1, "sunshine_h": 3.5}
    assert data["daily"][1]["sunshine_h"] == 7.5
    assert sent["start_date"] == "2024-01-15" and sent["end_date"] == "2024-01-16"
    assert set(sent["daily"].split(",")) == {"temperature_2m_max", "temperature_2m_min", "temperature_2m_mean",
                                             "precipitation_sum", "snowfall_sum", "sunshine_duration"}
    assert data["units"]["snowfall_mm"] == "mm" and "Open-Meteo" in data["source"]


def test_weather_forecast(tmp_path):
    forecast = {"latitude": 48.4, "longitude": 10.0, "daily_units": {"time": "iso8601", "temperature_2m_max": "°C",
                                                                     "temperature_2m_min": "°C",
                                                                     "precipitation_sum": "mm"},
                "daily": {"time": ["2026-11-22", "2026-11-23"], "temperature_2m_max": [6.0, 4.5],
                          "temperature_2m_min": [0.5, -1.0], "precipitation_sum": [0.0, 3.2]}}
    with ScriptedServer({"/v1/forecast": Answer(200, forecast)}) as server:
        data = make_toolbox(server, tmp_path).call("weather_forecast", {"location": {"lat": 48.4, "lng": 10.0},
                                                                        "days": 2}).data
        assert server.hits("/v1/forecast")[0].query["forecast_days"] == "2"
    assert data["daily"] == [
        {"date": "2026-11-22", "temp_max_c": 6.0, "temp_min_c": 0.5, "precipitation_mm": 0.0},
        {"date": "2026-11-23", "temp_max_c": 4.5, "temp_min_c": -1.0, "precipitation_mm": 3.2}]


def test_open_meteo_error_is_a_tool_error(tmp_path):
    error = {"error": True, "reason": "Parameter 'start_date' is out of allowed range from 1940-01-01 to 2026-11-20"}
    with ScriptedServer({"/v1/archive": Answer(400, error)}) as server:
        result = make_toolbox(server, tmp_path).call("weather_historical", {
            "location": {"lat": 48.4, "lng": 10.0}, "start_date": "1800-01-01"})
    assert not result.ok and "out of allowed range" in result.error


# --- countries, crypto, stocks -----------------------------------------------------------------

FRANCE = {"name": {"common": "France", "official": "French Republic",
                   "nativeName": {"fra": {"official": "République française", "common": "France"}}},
          "cca2": "FR", "cca3": "FRA", "population": 66351959, "area": 551695.0}


def test_countries_population_and_area(tmp_path):
    def countries(request):
        return Answer(200, [FRANCE]) if request.query.get("fullText") == "true" else Answer(404, {"status": 404})

    with ScriptedServer({"/v3.1/name/France": countries, "/v3.1/name/Narnia": Answer(404, {"status": 404,
                                                                                           "message": "Not Found"})}) as server:
        toolbox = make_toolbox(server, tmp_path)
        population = toolbox.call("countries_population", {"country": "France"}).data
        area = toolbox.call("countries_area", {"country": "France"}).data
        missing = toolbox.call("countries_area", {"country": "Narnia"})
    assert (population["country"], population["population"]) == ("France", 66351959)
    assert area["area_km2"] == 551695.0 and area["units"] == {"area_km2": "km2"}
    assert not missing.ok and "no country named 'Narnia'" in missing.error


def test_crypto_daily_kline(tmp_path):
    day_ms = int(datetime(2024, 1, 15, tzinfo=UTC).timestamp() * 1000)
    kline = [[day_ms, "41732.35000000", "43400.43000000", "41718.05000000", "42511.10000000", "40427.70000000",
              day_ms + 86399999, "1730374830.12345678", 1200000, "20000.0", "850000000.0", "0"]]
    with ScriptedServer({"/binance/api/v3/klines": Answer(200, kline)}) as server:
        toolbox = make_toolbox(server, tmp_path)
        price = toolbox.call("crypto_historical_price", {"symbol": "bitcoin", "date": "2024-01-15"}).data
        volume = toolbox.call("crypto_volume", {"symbol": "BTC", "date": "2024-01-15"}).data
        sent = server.hits("/binance/api/v3/klines")[0].query
    assert sent == {"symbol": "BTCUSDT", "interval": "1d", "startTime": str(day_ms),
                    "endTime": str(day_ms + 86399999), "limit": "1"}
    assert (price["symbol"], price["open"], price["close"]) == ("BTC", 41732.35, 42511.1)
    assert volume["volume"] == pytest.approx(1730374830.12345678)
    assert volume["units"] == {"volume": "USD"} and "USDT" in volume["source"]


def test_crypto_missing_day_is_a_tool_error(tmp_path):
    with ScriptedServer({"/binance/api/v3/klines": Answer(200, [])}) as server:
        result = make_toolbox(server, tmp_path).call("crypto_volume", {"symbol": "ETH", "date": "2010-01-01"})
    assert not result.ok and "no daily ETHUSDT candle for 2010-01-01" in result.error


def test_stocks_need_a_key(tmp_path):
    with ScriptedServer({}) as server:
        toolbox = make_toolbox(server, tmp_path)
        with pytest.raises(LiveServiceError, match="no free live stock backend"):
            toolbox.call("stock_volume", {"symbol": "AAPL", "date": "2024-01-02"})
    assert toolbox.cache.count() == 0


def test_stocks_with_alpha_vantage(tmp_path):
    series = {"Meta Data": {"1. Information": "Daily Prices (open, high, low, close) and Volumes",
                            "2. Symbol": "AAPL", "3. Last Refreshed": "2024-01-03", "4. Output Size": "Full size",
                            "5. Time Zone": "US/Eastern"},
              "Time Series (Daily)": {
                  "2024-01-03": {"1. open": "184.2200", "2. high": "185.8800", "3. low": "183.4300",
                                 "4. close": "184.2500", "5. volume": "58414460"},
                  "2024-01-02": {"1. open": "187.1500", "2. high": "188.4400", "3. low": "183.8850",
                                 "4. close": "185.6400", "5. volume": "82488674"}}}
    with ScriptedServer({"/query": Answer(200, series)}) as server:
        toolbox = make_toolbox(server, tmp_path, alphavantage_key="demo")
        price = toolbox.call("stock_historical_price", {"symbol": "aapl", "date": "2024-01-02"}).data
        volume = toolbox.call("stock_volume", {"symbol": "AAPL", "date": "2024-01-03"}).data
        holiday = toolbox.call("stock_volume", {"symbol": "AAPL", "date": "2024-01-01"})
        assert server.hits("/query")[0].query["function"] == "TIME_SERIES_DAILY"
    assert (price["open"], price["high"], price["low"], price["close"]) == (187.15, 188.44, 183.885, 185.64)
    assert volume["volume"] == 58414460
    assert not holiday.ok and "no AAPL trading day 2024-01-01" in holiday.error


# --- web ---------------------------------------------------------------------------------------

def test_fetch_webpage_from_mediawiki_follows_redirects(tmp_path):
    text = (WIKITEXT / "Charlie-Milstead.txt").read_text(encoding="utf-8")
    answer = {"batchcomplete": True, "query": {
        "redirects": [{"from": "Chuck Milstead", "to": "Charlie Milstead"}],
        "pages": [{"pageid": 9999, "ns": 0, "title": "Charlie Milstead", "revisions": [{
            "timestamp": "2020-03-01T12:00:00Z",
            "slots": {"main": {"contentmodel": "wikitext", "contentformat": "text/x-wiki", "content": text}}}]}]}}
    with ScriptedServer({"/w/api.php": Answer(200, answer)}) as server:
        toolbox = make_toolbox(server, tmp_path)
        page = toolbox.call("fetch_webpage", {"url": "https://en.wikipedia.org/wiki/Chuck_Milstead"}).data
        section = toolbox.call("fetch_webpage", {"url": "https://en.wikipedia.org/wiki/Chuck_Milstead",
                                                 "section": "career"}).data
        sent = server.hits("/w/api.php")[0].query
    assert sent["titles"] == "Chuck Milstead" and sent["redirects"] == "1" and sent["prop"] == "revisions"
    assert page["title"] == "Charlie Milstead"
    assert page["url"] == "https://en.wikipedia.org/wiki/Charlie_Milstead"
    assert page["provenance"] == "live" and "2020-03-01T12:00:00Z" in page["source"]
    assert "Tyler, Texas" in page["links"] and "Houston Oilers" in page["links"]
    assert "Category:Living people" not in page["links"]
    infobox = {field["name"]: field["text"] for field in page["infobox"]}
    assert infobox["number"] == "12" and "Texas A&M" in infobox["college"]
    assert page["lead"].startswith("Charles Frank Milstead (born November 21, 1937 in Tyler, Texas)")
    assert [s["title"] for s in page["sections"]] == ["Career"]
    assert section["section"] == "Career" and "66 punts for 2,365 yards" in section["text"]
    # Same keys as the offline backend's page.
    assert {"url", "title", "description", "infobox_type", "infobox", "lead", "sections", "links"} <= set(page)


def test_fetch_missing_page(tmp_path):
    answer = {"batchcomplete": True, "query": {"pages": [{"ns": 0, "title": "No Such Page", "missing": True}]}}
    with ScriptedServer({"/w/api.php": Answer(200, answer)}) as server:
        result = make_toolbox(server, tmp_path).call("fetch_webpage", {"url": "https://en.wikipedia.org/wiki/No_Such_Page"})
    assert not result.ok and "page not found: No Such Page" in result.error


def test_web_search_with_mediawiki(tmp_path):
    answer = {"batchcomplete": True, "continue": {"sroffset": 2, "continue": "-||"}, "query": {
        "searchinfo": {"totalhits": 5123},
        "search": [{"ns": 0, "title": "Ulm Minster", "pageid": 1, "snippet":
                    'The <span class="searchmatch">Ulm</span> Minster is a Lutheran church &amp; the tallest'},
                   {"ns": 0, "title": "Ulm", "pageid": 2, "snippet": '<span class="searchmatch">Ulm</span> is a city'}]}}
    with ScriptedServer({"/w/api.php": Answer(200, answer)}) as server:
        data = make_toolbox(server, tmp_path).call("web_search", {"query": "Ulm", "num_results": 2}).data
        sent = server.hits("/w/api.php")[0].query
    assert (sent["list"], sent["srsearch"], sent["srlimit"]) == ("search", "Ulm", "2")
    assert data["results"] == [
        {"rank": 1, "title": "Ulm Minster", "url": "https://en.wikipedia.org/wiki/Ulm_Minster",
         "snippet": "The Ulm Minster is a Lutheran church & the tallest"},
        {"rank": 2, "title": "Ulm", "url": "https://en.wikipedia.org/wiki/Ulm", "snippet": "Ulm is a city"}]
    assert (data["total"], data["next_offset"], sent["sroffset"]) == (5123, 2, "0")     # paging: issue 33


def test_web_search_with_serper_key(tmp_path):
    answer = {"searchParameters": {"q": "Ulm Minster height", "type": "search"}, "organic": [
        {"title": "Ulm Minster - Wikipedia", "link": "https://en.wikipedia.org/wiki/Ulm_Minster",
         "snippet": "At 161.53 metres, it is the tallest church in the world.", "position": 1}]}
    with ScriptedServer({"/serper": Answer(200, answer)}) as server:
        data = make_toolbox(server, tmp_path, serper_key="sk").call("web_search", {"query": "Ulm Minster height"}).data
        sent = server.hits("/serper")[0]
    assert sent.method == "POST" and sent.headers["x-api-key"] == "sk"
    assert sent.json() == {"q": "Ulm Minster height", "num": 5}
    assert data["results"][0]["url"] == "https://en.wikipedia.org/wiki/Ulm_Minster"


def test_every_tool_has_a_live_backend(tmp_path):
    from pipeline.tools.registry import _IMPLEMENTATIONS
    from pipeline.tools.spec import TOOLS

    with ScriptedServer({}) as server:
        toolbox = make_toolbox(server, tmp_path)
        assert [tool for tool in TOOLS if (tool, "live") not in _IMPLEMENTATIONS] == []
        # Local computations answer the same under the live backend.
        assert toolbox.call("python_execute_code", {"code": "print(2 ** 10)"}).data["stdout"] == "1024\n"
