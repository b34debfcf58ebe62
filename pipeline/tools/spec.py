"""The race tools: names, descriptions, JSON-schema arguments and canonical outputs.

This module is pure data so that settings validation, the CLI and the docs can read it
without importing any backend. Output units are canonical: metres, kilometres, minutes,
degrees Celsius, millimetres, US dollars. Every result object also carries
``provenance`` (snapshot | offline-data | live | simulated) and ``source``.
"""
from __future__ import annotations

from typing import Any

_LATLNG = {
    "type": "object",
    "properties": {"lat": {"type": "number", "minimum": -90, "maximum": 90},
                   "lng": {"type": "number", "minimum": -180, "maximum": 180}},
    "required": ["lat", "lng"],
    "additionalProperties": False,
}
# A place may be given as an address string or as coordinates.
_PLACE = {"anyOf": [{"type": "string", "minLength": 1}, _LATLNG]}
_DATE = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "description": "YYYY-MM-DD"}


def _obj(properties: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


TOOLS: dict[str, dict[str, Any]] = {
    "fetch_webpage": {
        "description": "Fetch a Wikipedia page by URL (or title) and return its text: title, short description, "
                       "infobox fields, the lead (opening text) and sections, and its outgoing links, with "
                       "link_anchors: the texts the page shows for a link where they differ from the linked "
                       "page's title ({\"United States\": [\"U.S.\"]}). A page longer than the output cut is "
                       "shown shortened, as valid JSON: contents (every section's title, level and length) near "
                       "the top, the lead's first part, the first links, and shortened (what was left out and how "
                       "to get it). section gives one section in full (\"lead\": the opening text), text_offset "
                       "reads on in it, links_offset lists the links from that index on (with links_total).",
        "parameters": _obj({"url": {"type": "string", "minLength": 1},
                            "section": {"type": "string", "description": "optional: return only this section "
                                                                         "(a title from contents, or \"lead\")"},
                            "text_offset": {"type": "integer", "minimum": 0,
                                            "description": "with section: its text from this character on"},
                            "links_offset": {"type": "integer", "minimum": 0,
                                             "description": "optional: return only the page's links, from this index on"}},
                           ["url"]),
        "output": "{url, title, description, infobox[], lead, sections[{title, level, text}], links[], link_anchors{}}",
        "units": {},
    },
    "web_search": {
        "description": "Search the web (offline: a full-text index of the Wikipedia snapshot: each page's title, "
                       "short description, opening text (the lead, before the first section) and infobox values; "
                       "section texts are not searched). Returns total (the exact number of pages that match), "
                       "one page of results ranked best first, each with its rank (1 = best), and next_offset "
                       "(the offset of the next page; null after the last). To read every match, page with offset "
                       "(or page) and keep num_results the same: the pages then list each match exactly once. "
                       "mode \"words\" (default): a page matches if it holds any word of the query (common words "
                       "such as the, of, in, what are dropped unless the query has no other), each matched by its "
                       "stem (\"deserts\" matches \"desert\"; \"Sahara\" does not match \"Saharan\"), ranked by "
                       "BM25 with a bonus for titles made of the query's words. mode \"all_words\": it holds every "
                       "word of the query (none dropped), each by its stem. mode \"phrase\": its text holds the "
                       "query exactly as written, case aside, as whole words: no letter or digit just before or "
                       "after it, no stemming (\"Sahara\" matches \"Sahara's\" and \"Sahara-based\", not "
                       "\"Saharan\"); a phrase must lie inside one field. field: \"all\" (default), or only "
                       "\"title\", \"description\" (the short description), \"lead\" (the opening text) or "
                       "\"infobox\" (its values) must match. Example: the pages whose opening text contains the "
                       "whole word Sahara: {\"query\": \"Sahara\", \"mode\": \"phrase\", \"field\": \"lead\"}. "
                       "Ties rank by title. In modes other than words over all fields, ranking is BM25 alone.",
        "parameters": _obj({"query": {"type": "string", "minLength": 1},
                            "num_results": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5,
                                            "description": "results per page (at most 50)"},
                            "offset": {"type": "integer", "minimum": 0, "default": 0,
                                       "description": "how many ranked results to skip (next_offset of the page before)"},
                            "page": {"type": "integer", "minimum": 1,
                                     "description": "1-based page of num_results results (instead of offset)"},
                            "mode": {"enum": ["words", "all_words", "phrase"], "default": "words"},
                            "field": {"enum": ["all", "title", "description", "lead", "infobox"], "default": "all"}},
                           ["query"]),
        "output": "{query, mode, field, offset, total, next_offset, results[{rank, title, url, snippet}]}",
        "units": {},
    },
    "maps_geocode": {
        "description": "Turn a place name or address into coordinates. A country name (or an upper-case ISO code) "
                       "gives the point of its capital city (the capital the country statistics name), and the capital under any of its names (\"Washington, "
                       "D.C.\", \"Ulaanbaatar\" or \"Ulan Bator\") gives that same point; a capital whose bare name "
                       "a much larger place shares takes its country: \"Hamilton, Bermuda\". Airports: by name or "
                       "IATA code. Offline: GeoNames places of 1000+ people, countryinfo capitals, airportsdata.",
        "parameters": _obj({"address": {"type": "string", "minLength": 1}}, ["address"]),
        "output": "{lat, lng, formatted_address, country_code, place_type}",
        "units": {"lat": "degrees", "lng": "degrees"},
    },
    "maps_reverse_geocode": {
        "description": "Turn coordinates into the nearest named place.",
        "parameters": _obj({"lat": _LATLNG["properties"]["lat"], "lng": _LATLNG["properties"]["lng"]}, ["lat", "lng"]),
        "output": "{city, country, country_code, formatted_address, distance_km}",
        "units": {"distance_km": "km"},
    },
    "maps_search_places": {
        "description": "Find points of interest matching a query near a place, nearest first (ties by name, then "
                       "place_id), with distance_m (great-circle, from the place's point). The query \"airport\" "
                       "lists airports with an IATA code (airportsdata, the whole world) and gives each one's iata "
                       "code, its status (\"closed\" or \"operating\") and scheduled_service (true or false), "
                       "as OurAirports marks them. radius_m: at most 500,000 m (500 km) for \"airport\", at most 50,000 m for any other "
                       "query; default 2,000 m. One call lists at most 20 places; total (also count) is the exact "
                       "number of matches within the radius, and offset pages on: next_offset is the offset of "
                       "the next page (null after the last), so the pages list each match exactly once. Without "
                       "radius_m, a search that finds none gives the nearest match beyond it (nearest, with its "
                       "distance_m) and a note. Live: the matches one request to the service returns.",
        "parameters": _obj({"query": {"type": "string", "minLength": 1},
                            "location": _PLACE,
                            "radius_m": {"type": "number", "exclusiveMinimum": 0, "maximum": 500000, "default": 2000,
                                         "description": "at most 500000 for the query airport, else 50000"},
                            "offset": {"type": "integer", "minimum": 0, "default": 0,
                                       "description": "how many places to skip (next_offset of the page before)"}},
                           ["query"]),
        "output": "{places[{place_id, name, category, lat, lng, distance_m, iata?}], total, count, offset, "
                  "next_offset, nearest?, note?}",
        "units": {"radius_m": "m"},
    },
    "maps_place_details": {
        "description": "Details of a place found by maps_search_places: name, category, rating.",
        "parameters": _obj({"place_id": {"type": "string", "minLength": 1}}, ["place_id"]),
        "output": "{place_id, name, category, lat, lng, rating, user_ratings_total}",
        "units": {"rating": "stars (1-5)"},
    },
    "maps_distance_matrix": {
        "description": "Travel distance and time between origins (at most 10) and destinations. Mode "
                       "\"great_circle\" gives the great-circle distance (\"as the crow flies\", on the mean Earth "
                       "sphere of radius 6371.0088 km) between the places' points, with no duration, for up to 100 "
                       "destinations; the travel modes (driving, walking, bicycling) take at most 10 destinations.",
        "parameters": _obj({"origins": {"type": "array", "items": _PLACE, "minItems": 1, "maxItems": 10},
                            "destinations": {"type": "array", "items": _PLACE, "minItems": 1, "maxItems": 100,
                                             "description": "at most 100 with mode great_circle, else 10"},
                            "mode": {"enum": ["driving", "walking", "bicycling", "great_circle"], "default": "driving"}},
                           ["origins", "destinations"]),
        "output": "{rows[[{distance_km, duration_min}]]}",
        "units": {"distance_km": "km", "duration_min": "min"},
    },
    "maps_elevation": {
        "description": "Ground elevation above sea level at one or more places (coordinates, or names that are "
                       "geocoded first). Offline: the pvlib 5-arc-minute global grid (the cell holding the point).",
        "parameters": _obj({"locations": {"anyOf": [_PLACE, {"type": "array", "items": _PLACE,
                                                               "minItems": 1, "maxItems": 100}]}},
                           ["locations"]),
        "output": "{elevation_m, results[{lat, lng, elevation_m}]}",
        "units": {"elevation_m": "m"},
    },
    "maps_directions": {
        "description": "Route between two places: distance, duration and steps.",
        "parameters": _obj({"origin": _PLACE, "destination": _PLACE,
                            "mode": {"enum": ["driving", "walking", "bicycling"], "default": "driving"}},
                           ["origin", "destination"]),
        "output": "{distance_km, duration_min, steps[]}",
        "units": {"distance_km": "km", "duration_min": "min"},
    },
    "weather_historical": {
        "description": "Daily weather history at a place: temperatures, precipitation, snowfall, sunshine.",
        "parameters": _obj({"location": _PLACE, "start_date": _DATE, "end_date": _DATE}, ["location", "start_date"]),
        "output": "{daily[{date, temp_max_c, temp_min_c, temp_mean_c, precipitation_mm, snowfall_mm, sunshine_h}]}",
        "units": {"temp_max_c": "degC", "temp_min_c": "degC", "temp_mean_c": "degC",
                  "precipitation_mm": "mm", "snowfall_mm": "mm", "sunshine_h": "h"},
    },
    "weather_forecast": {
        "description": "Daily weather forecast at a place for the next days.",
        "parameters": _obj({"location": _PLACE, "days": {"type": "integer", "minimum": 1, "maximum": 16, "default": 3}},
                           ["location"]),
        "output": "{daily[{date, temp_max_c, temp_min_c, precipitation_mm}]}",
        "units": {"temp_max_c": "degC", "temp_min_c": "degC", "precipitation_mm": "mm"},
    },
    "python_execute_code": {
        "description": "Run Python code in a sandbox (no network, temporary folder, time and memory limits); "
                       "returns stdout and stderr.",
        "parameters": _obj({"code": {"type": "string", "minLength": 1},
                            "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 60, "default": 10}},
                           ["code"]),
        "output": "{stdout, stderr, exit_code, timed_out}",
        "units": {},
    },
    "python_generate_code": {
        "description": "Write Python code for a described computation (offline: templates for arithmetic tasks).",
        "parameters": _obj({"task": {"type": "string", "minLength": 1}}, ["task"]),
        "output": "{code}",
        "units": {},
    },
    "countries_population": {
        "description": "Population of a country as the country statistics give it: offline, countryinfo's "
                       "figures (estimates of about 2014, e.g. Canada 35.5 million), which can differ from the "
                       "newer figure an encyclopedia page states; live, REST Countries.",
        "parameters": _obj({"country": {"type": "string", "minLength": 1}}, ["country"]),
        "output": "{country, population}",
        "units": {"population": "people"},
    },
    "countries_area": {
        "description": "Total area of a country in square kilometres as the country statistics give it: offline, "
                       "countryinfo's figures, which can differ from the figure an encyclopedia page states; live, "
                       "REST Countries.",
        "parameters": _obj({"country": {"type": "string", "minLength": 1}}, ["country"]),
        "output": "{country, area_km2}",
        "units": {"area_km2": "km2"},
    },
    "countries_list": {
        "description": "List every country the country statistics hold (exactly the countries "
                       "countries_population and countries_area answer for, under the name they accept), sorted by "
                       "name, with its capital (the one the statistics name; null where they name none) and the "
                       "capital's point: the same lat, lng maps_geocode gives for the country's name (the centre of "
                       "the country where no capital is named). Page with offset and limit (at most 100): total is "
                       "the number of countries, next_offset the offset of the next page (null after the last); "
                       "pages with one limit list each country once. Offline data only (countryinfo, GeoNames), "
                       "under the live backend too.",
        "parameters": _obj({"offset": {"type": "integer", "minimum": 0, "default": 0,
                                       "description": "how many countries to skip (next_offset of the page before)"},
                            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 50,
                                      "description": "countries per page (at most 100)"}},
                           []),
        "output": "{total, offset, next_offset, countries[{name, iso2, capital, lat, lng}]}",
        "units": {"lat": "degrees", "lng": "degrees"},
    },
    "stock_historical_price": {
        "description": "Daily open/high/low/close price of a stock on a date, in USD.",
        "parameters": _obj({"symbol": {"type": "string", "minLength": 1}, "date": _DATE}, ["symbol", "date"]),
        "output": "{symbol, date, open, high, low, close}",
        "units": {"open": "USD", "high": "USD", "low": "USD", "close": "USD"},
    },
    "stock_volume": {
        "description": "Daily traded volume of a stock on a date (shares).",
        "parameters": _obj({"symbol": {"type": "string", "minLength": 1}, "date": _DATE}, ["symbol", "date"]),
        "output": "{symbol, date, volume}",
        "units": {"volume": "shares"},
    },
    "crypto_historical_price": {
        "description": "Daily open/high/low/close price of a cryptocurrency on a date, in USD.",
        "parameters": _obj({"symbol": {"type": "string", "minLength": 1}, "date": _DATE}, ["symbol", "date"]),
        "output": "{symbol, date, open, high, low, close}",
        "units": {"open": "USD", "high": "USD", "low": "USD", "close": "USD"},
    },
    "crypto_volume": {
        "description": "Daily traded volume of a cryptocurrency on a date (USD).",
        "parameters": _obj({"symbol": {"type": "string", "minLength": 1}, "date": _DATE}, ["symbol", "date"]),
        "output": "{symbol, date, volume}",
        "units": {"volume": "USD"},
    },
    "math_knowledge_search": {
        "description": "Search a corpus of math knowledge points (algebra, geometry): each result has a "
                       "definition, a formula and a short worked example. Returns the top k by BM25.",
        "parameters": _obj({"query": {"type": "string", "minLength": 1, "maxLength": 500},
                            "k": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3}},
                           ["query"]),
        "output": "{results[{id, title, domain, definition, formula, example, score}]}",
        "units": {},
    },
    "calculator": {
        "description": "Evaluate a math expression exactly with sympy (+ - * / ** // % ( ), sqrt, pi, sin, cos, "
                       "log, floor, round(x) (half away from zero), round(x, n) (n places; n = -1 to tens), gcd, "
                       "lcm, factorial, binomial, Rational, solve(eq, x), simplify, expand, factor "
                       "...). Whole-number functions: isprime(n), nextprime(n) (smallest prime > n), prevprime(n), "
                       "prime(k) (k-th prime), primepi(n), factorint(n) ({prime: exponent}), primefactors(n) "
                       "(distinct), sum_prime_factors(n) (with multiplicity: 12 -> 2+2+3 = 7), "
                       "largest_prime_factor(n), divisors(n), divisor_count(n), divisor_sigma(n), totient(n), "
                       "digit_sum(n), digital_root(n), reverse_digits(n) (1230 -> 321), bit_count(n) (1 bits in "
                       "binary), binary(n), roman(n) (Roman numeral text), roman_letters(n) (its length), "
                       "leap_years(y1, y2) (leap years from y1 to y2, both included). Text and date functions take "
                       "quoted text: weekday(\"YYYY-MM-DD\") (Monday = 1 ... Sunday = 7), days_between(\"d1\", "
                       "\"d2\"), years_between(\"d1\", \"d2\") (whole years), alpha_position(\"word\") (first "
                       "letter, A = 1 ... Z = 26), alpha_sum(\"word\") (sum of its letters' positions), "
                       "letter_count(\"word\"), vowels(\"word\") (a e i o u), scrabble(\"word\") (standard English "
                       "tile values). variables gives names values (numbers, or text for the text functions): "
                       "{\"expression\": \"alpha_sum(code)\", \"variables\": {\"code\": \"JFK\"}}. Returns the exact "
                       "result and its numeric value.",
        "parameters": _obj({"expression": {"type": "string", "minLength": 1, "maxLength": 500},
                            "variables": {"type": "object", "maxProperties": 20,
                                          "additionalProperties": {"anyOf": [{"type": "number"},
                                                                             {"type": "string", "maxLength": 200}]}}},
                           ["expression"]),
        "output": "{result, exact, numeric}",
        "units": {},
    },
}

TOOL_NAMES: tuple[str, ...] = tuple(TOOLS)

# Limits the schemas cannot say alone (they hang on another argument); every backend enforces them.
ROUTED_DESTINATIONS_MAX = 10          # maps_distance_matrix destinations in a travel mode (great_circle: 100)
SEARCH_RADIUS_MAX_M = 50_000          # maps_search_places radius_m for any query but "airport"
AIRPORT_RADIUS_MAX_M = 500_000        # maps_search_places radius_m for the query "airport" (the schema's maximum)
PLACES_PER_PAGE = 20                  # maps_search_places places per call


def openai_schema(name: str) -> dict:
    """The tool in OpenAI function-calling form (what agents receive)."""
    spec = TOOLS[name]
    return {"type": "function",
            "function": {"name": name, "description": spec["description"], "parameters": spec["parameters"]}}
