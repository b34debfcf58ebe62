"""Map tools offline: GeoNames gazetteer, pvlib elevation grid, OSM extracts of covered cities.

Inside a covered city (Helsinki, Monaco) place search and routing use OpenStreetMap data
(provenance ``offline-data``); elsewhere places and routes are simulated (great-circle distance
times a road factor, speeds by mode; provenance ``simulated``). Ratings never exist offline, so
``maps_place_details`` is always ``simulated`` (the OSM fields in it are real).
"""
from __future__ import annotations

import math
import re
from urllib.parse import quote, unquote

from pipeline.snapshot.store import SnapshotStore
from pipeline.tools.backends.offline._common import resolve_place, result, world_dir
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.tools.spec import AIRPORT_RADIUS_MAX_M, PLACES_PER_PAGE, ROUTED_DESTINATIONS_MAX, SEARCH_RADIUS_MAX_M
from pipeline.world import osm
from pipeline.world.elevation import elevation_at, elevation_grid
from pipeline.world.gazetteer import PlaceHit, gazetteer
from pipeline.world.geo import haversine_km, normalise_name
from pipeline.world.seeded import rng_for, unit_for

ROAD_FACTOR = {"driving": 1.3, "walking": 1.2, "bicycling": 1.25}
ESTIMATE_SOURCE = "simulated: great-circle distance x road factor, typical speed by mode (no road data here)"
# Query words that name OSM categories (amenity/tourism/shop values).
CATEGORY_SYNONYMS = {
    "coffee": {"cafe"}, "coffee shop": {"cafe"}, "food": {"restaurant", "fast_food", "cafe"},
    "eat": {"restaurant", "fast_food", "cafe"}, "drink": {"bar", "pub", "cafe"}, "bar": {"bar", "pub"},
    "pub": {"pub", "bar"}, "hotel": {"hotel", "hostel", "guest_house"}, "accommodation": {"hotel", "hostel", "guest_house"},
    "church": {"place_of_worship"}, "worship": {"place_of_worship"}, "sight": {"attraction", "viewpoint", "museum"},
    "sightseeing": {"attraction", "viewpoint", "museum", "artwork"}, "grocery": {"supermarket", "convenience"},
    "shop": {"supermarket", "convenience", "clothes", "gift", "bakery", "books"}, "atm": {"atm", "bank"},
    "gas station": {"fuel"}, "petrol station": {"fuel"}, "doctor": {"doctors", "clinic", "hospital"},
    "art": {"artwork", "gallery", "arts_centre"}, "gallery": {"gallery", "arts_centre"},
}


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "shes", "ches")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _query_matcher(query: str):
    q = " ".join(_singular(w) for w in normalise_name(query).split())
    categories = set(CATEGORY_SYNONYMS.get(q, ())) | {q.replace(" ", "_")}
    words = q.split()

    def matches(poi: osm.Poi) -> bool:
        if poi.category in categories:
            return True
        name = normalise_name(poi.name)
        haystack = set(name.split()) | {_singular(w) for w in name.split()} | set(poi.category.split("_"))
        return q in name or all(w in haystack for w in words)

    return matches


# ----------------------------------------------------------------------------- geocoding
_snapshot_lookups: dict = {}


def _snapshot_lookup(ctx: BackendContext):
    """A resolver from a page title to the page's coordinates in the configured snapshot, if any.

    The cache namespace of offline calls includes the snapshot hash, so answers stay reproducible.
    Answers are memoised per snapshot (a page fetch parses JSON; geocoding must stay fast).
    """
    path = ctx.settings.snapshot_dir
    if path in _snapshot_lookups:
        return _snapshot_lookups[path]
    try:
        store = SnapshotStore.open(path)
    except Exception:  # noqa: BLE001 - no snapshot built: geocode without it
        _snapshot_lookups[path] = None
        return None
    g = gazetteer(world_dir(ctx), ctx.settings.derived_dir)
    memo: dict = {}

    def lookup(text: str):
        if text in memo:
            return memo[text]
        page = store.get(text)
        hit = None
        if page is not None and page.coords:
            lat, lng = page.coords
            hit = PlaceHit(page.title, float(lat), float(lng), g.nearest(lat, lng).country_code, "place",
                           page.title, f"snapshot {store.hash[:12]}: {page.url}", provenance="snapshot")
        if len(memo) < 100_000:
            memo[text] = hit
        return hit

    _snapshot_lookups[path] = lookup
    return lookup


@implements("maps_geocode", "offline")
def maps_geocode(args: dict, ctx: BackendContext) -> dict:
    hit = gazetteer(world_dir(ctx), ctx.settings.derived_dir).geocode(args["address"], lookup=_snapshot_lookup(ctx))
    if hit is None:
        raise ToolError(f"no place called {args['address']!r} in the offline gazetteer "
                        "(GeoNames cities with 1000+ people, countries, airports, OSM places of covered cities)")
    values = {"lat": hit.lat, "lng": hit.lng, "name": hit.name, "formatted_address": hit.formatted_address,
              "country_code": hit.country_code, "place_type": hit.place_type}
    for key in ("partial_match", "represented_by", "place_id", "iata", *AIRPORT_MARKS):
        if key in hit.extra:
            values[key] = hit.extra[key]
    return result("maps_geocode", values, hit.provenance, hit.source)


@implements("maps_reverse_geocode", "offline")
def maps_reverse_geocode(args: dict, ctx: BackendContext) -> dict:
    g = gazetteer(world_dir(ctx), ctx.settings.derived_dir)
    place = g.nearest(args["lat"], args["lng"])
    return result("maps_reverse_geocode", {
        "city": place.city, "state": place.state, "country": place.country, "country_code": place.country_code,
        "formatted_address": place.formatted_address, "distance_km": round(place.distance_km, 3),
        "place_lat": place.lat, "place_lng": place.lng,
    }, "offline-data", g.source)


@implements("maps_elevation", "offline")
def maps_elevation(args: dict, ctx: BackendContext) -> dict:
    grid = elevation_grid()
    locations = args["locations"]
    places = locations if isinstance(locations, list) else [locations]
    results = []
    for k, place in enumerate(places):
        lat, lng, label = resolve_place(ctx, place, f"locations[{k}]")
        results.append({"lat": lat, "lng": lng, "elevation_m": elevation_at(lat, lng)})
        if isinstance(place, str):
            results[-1]["name"] = label
    return result("maps_elevation", {"elevation_m": results[0]["elevation_m"], "results": results},
                  "offline-data", grid.source)


# ----------------------------------------------------------------------------- places
def _poi_values(poi: osm.Poi, center: tuple[float, float] | None = None) -> dict:
    values = {"place_id": poi.place_id, "name": poi.name, "category": poi.category, "lat": poi.lat, "lng": poi.lng}
    if center is not None:
        values["distance_m"] = round(haversine_km(center[0], center[1], poi.lat, poi.lng) * 1000, 1)
    return values


SIMULATED_PLACES_KM = 20.0   # invented places lie within this distance of the point searched


def _simulated_places(query: str, lat: float, lng: float, radius_m: float, near_city: str) -> list[dict]:
    """Invented places of the query's kind around a point, the same set whatever the radius (a search
    returns those within it): "the first hotel found near X" is one hotel for any radius that reaches
    it (a blind racer searched without the radius the golden trace gave, and met other hotels).
    Denser near the point (distance = SIMULATED_PLACES_KM * u**2), so a short radius finds a few."""
    rng = rng_for("maps_search_places", normalise_name(query), round(lat, 4), round(lng, 4))
    label = " ".join(w.capitalize() for w in normalise_name(query).split()) or "Place"
    category = normalise_name(query).replace(" ", "_") or "place"
    places = []
    for k in range(rng.randint(8, 20)):
        r = SIMULATED_PLACES_KM * 1000 * rng.random() ** 2
        theta = rng.random() * 2 * math.pi
        plat = round(lat + r * math.cos(theta) / 111320, 6)
        plng = round(lng + r * math.sin(theta) / (111320 * max(math.cos(math.radians(lat)), 1e-6)), 6)
        if r > radius_m:
            continue
        name = f"{near_city} {label} {k + 1}"
        place_id = f"sim:{plat}:{plng}:{quote(category, safe='')}:{quote(name, safe='')}"
        places.append({"place_id": place_id, "name": name, "category": category, "lat": plat, "lng": plng,
                       "distance_m": round(r, 1)})
    return sorted(places, key=lambda p: (p["distance_m"], p["place_id"]))


def nearest_note(what: str, radius_m: float, distance_km: float, cap_m: float = SEARCH_RADIUS_MAX_M) -> str:
    """What a search that found none within the default radius says of the nearest match (issue 34)."""
    return (f"no {what} within the default radius of {radius_m:,.0f} m; the nearest lies {distance_km * 1000:,.0f} m "
            f"away (nearest); give radius_m (at most {cap_m:,.0f}) to list the places within a radius")


_LOCATION_IN_QUERY = re.compile(r"^(?P<what>.+?)\s+(?:in|near|at)\s+(?P<where>[^,]+(?:,.+)?)$", re.IGNORECASE)


def is_airport_query(query: str) -> bool:
    """The query that lists IATA airports (airportsdata) and may search up to ``AIRPORT_RADIUS_MAX_M``."""
    return _singular(normalise_name(query)) == "airport"


def radius_cap_m(query: str) -> int:
    return AIRPORT_RADIUS_MAX_M if is_airport_query(query) else SEARCH_RADIUS_MAX_M


def _nearest_first(places: list[dict]) -> list[dict]:
    """Nearest first, ties by name then place_id: one order, so pages never overlap or skip."""
    return sorted(places, key=lambda v: (v["distance_m"], v["name"], v["place_id"]))


def _paged(places: list[dict], offset: int, **values) -> dict:
    """One page of a place search: at most ``PLACES_PER_PAGE`` places from ``offset``, with the true total."""
    page = places[offset:offset + PLACES_PER_PAGE]
    end = offset + len(page)
    return {"places": page, "total": len(places), "count": len(places), "offset": offset,
            "next_offset": end if end < len(places) else None, **values}


# what an airport's answer says beside its point: the package's digits read as degrees, minutes and seconds
# (gazetteer.DMS_WRITTEN), and whether it is closed and has scheduled service (OurAirports, where it knows the
# airport: gazetteer.airport_statuses; the answer's source names both data sets)
AIRPORT_MARKS = ("point_read_as_dms", "status", "scheduled_service")


def _airport_marks(hit) -> dict:
    return {k: hit.extra[k] for k in AIRPORT_MARKS if k in hit.extra}


@implements("maps_search_places", "offline")
def maps_search_places(args: dict, ctx: BackendContext) -> dict:
    query = args["query"]
    location = args.get("location")
    radius_m = float(args.get("radius_m", 2000))
    offset = int(args.get("offset", 0))
    if location is None:
        m = _LOCATION_IN_QUERY.match(query.strip())
        if m is None:
            matcher = _query_matcher(query)
            found = [p for city in osm.city_maps(world_dir(ctx)) for p in city.pois if matcher(p)]
            found.sort(key=lambda p: (p.name, p.place_id))
            return result("maps_search_places", _paged([_poi_values(p) for p in found], offset,
                                                       searched="all covered cities"),
                          "offline-data", "; ".join(c.source for c in osm.city_maps(world_dir(ctx))))
        query, location = m.group("what"), m.group("where")
    cap = radius_cap_m(query)
    if radius_m > cap:
        raise ToolError(f"radius_m {radius_m:,.0f} is past the cap of {cap:,} m for the query {query!r}"
                        + ("" if is_airport_query(query) else
                           f"; only the query \"airport\" (IATA airports) searches up to {AIRPORT_RADIUS_MAX_M:,} m"))
    lat, lng, label = resolve_place(ctx, location, "location")
    center = {"lat": lat, "lng": lng, "name": label}
    if is_airport_query(query):   # airportsdata covers the whole world
        gaz = gazetteer(world_dir(ctx), ctx.settings.derived_dir)
        hits = gaz.airports_within(lat, lng, radius_m / 1000)
        places = _nearest_first([
            {"place_id": f"iata:{h.extra['iata']}", "name": h.name, "category": "airport", "lat": h.lat,
             "lng": h.lng, "distance_m": round(d * 1000, 1), "iata": h.extra["iata"], **_airport_marks(h)}
            for d, h in hits])
        values = _paged(places, offset, center=center)
        source = hits[0][1].source if hits else "airportsdata (MIT)"
        if not hits and "radius_m" not in args:    # none within the default radius: say where the nearest is
            for km in (10, 50, 200, 1000, 5000, 20100):
                wider = gaz.airports_within(lat, lng, km)
                if wider:
                    d, h = wider[0]
                    source = h.source
                    values["nearest"] = {"place_id": f"iata:{h.extra['iata']}", "name": h.name, "iata": h.extra["iata"],
                                         "lat": h.lat, "lng": h.lng, "distance_m": round(d * 1000, 1),
                                         **_airport_marks(h)}
                    values["note"] = nearest_note("airport", radius_m, d, AIRPORT_RADIUS_MAX_M)
                    break
        return result("maps_search_places", values, "offline-data", source)
    city = osm.city_covering(world_dir(ctx), (lat, lng))
    if city is not None:
        matcher = _query_matcher(query)
        found = [p for p in city.pois
                 if matcher(p) and haversine_km(lat, lng, p.lat, p.lng) * 1000 <= radius_m]
        places = _nearest_first([_poi_values(p, (lat, lng)) for p in found])
        values = _paged(places, offset, center=center)
        if not places and "radius_m" not in args:   # none within the default radius: say where the nearest is
            beyond = _nearest_first([_poi_values(p, (lat, lng)) for p in city.pois if matcher(p)])
            if beyond:
                values["nearest"] = beyond[0]
                values["note"] = nearest_note(query, radius_m, beyond[0]["distance_m"] / 1000)
        return result("maps_search_places", values, "offline-data", city.source)
    near_city = gazetteer(world_dir(ctx), ctx.settings.derived_dir).nearest(lat, lng).city
    places = _nearest_first(_simulated_places(query, lat, lng, radius_m, near_city))
    return result("maps_search_places", _paged(places, offset, center=center),
                  "simulated", "simulated: invented places (no POI data offline for this area)")


@implements("maps_place_details", "offline")
def maps_place_details(args: dict, ctx: BackendContext) -> dict:
    place_id = args["place_id"]
    if place_id.startswith("sim:"):
        try:
            _, plat, plng, category, name = place_id.split(":", 4)
            values = {"place_id": place_id, "name": unquote(name), "category": unquote(category),
                      "lat": float(plat), "lng": float(plng)}
        except ValueError:
            raise ToolError(f"malformed simulated place id {place_id!r}") from None
        source = "simulated: invented place and rating"
    else:
        poi = osm.find_poi(world_dir(ctx), place_id)
        if poi is None:
            raise ToolError(f"unknown place_id {place_id!r}; use an id returned by maps_search_places")
        values = _poi_values(poi)
        values["tag"] = poi.tag
        source = f"{poi.source}; rating simulated (no ratings exist offline)"
    values["rating"] = round(1.0 + 4.0 * (0.35 + 0.65 * unit_for("rating", place_id)), 1)
    values["user_ratings_total"] = int(10 ** (1 + 3 * unit_for("ratings_total", place_id)))
    values["simulated_fields"] = ["rating", "user_ratings_total"]
    return result("maps_place_details", values, "simulated", source)


# ----------------------------------------------------------------------------- routing
def _estimate(mode: str, a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    """Simulated distance (km) and duration (min) where no road graph covers the trip."""
    km = haversine_km(*a, *b) * ROAD_FACTOR[mode]
    if mode == "driving":
        speed = 25 + 55 * (1 - math.exp(-km / 60))   # town traffic for short trips, highways for long ones
    else:
        speed = 5.0 if mode == "walking" else 15.0
    return km, km / speed * 60


def _trip(ctx: BackendContext, mode: str, a: tuple[float, float], b: tuple[float, float]):
    """(distance_km, duration_min, steps, provenance, source) for one origin-destination pair."""
    city = osm.city_covering(world_dir(ctx), a, b)
    if city is not None:
        route = city.route(mode, a, b)
        if route is not None:
            return route.distance_km, route.duration_min, route.steps, "offline-data", f"{city.source}; networkx Dijkstra"
    km, minutes = _estimate(mode, a, b)
    step = {"instruction": f"Travel {mode} about {km:.1f} km (estimated, no road data)",
            "distance_km": round(km, 3), "duration_min": round(minutes, 2)}
    return km, minutes, [step], "simulated", ESTIMATE_SOURCE


GREAT_CIRCLE_SOURCE = "great-circle distance on the mean Earth sphere (R = 6371.0088 km) between geocoded points"


@implements("maps_distance_matrix", "offline")
def maps_distance_matrix(args: dict, ctx: BackendContext) -> dict:
    mode = args.get("mode", "driving")
    if mode != "great_circle" and len(args["destinations"]) > ROUTED_DESTINATIONS_MAX:
        raise ToolError(f"mode {mode!r} takes at most {ROUTED_DESTINATIONS_MAX} destinations "
                        f"({len(args['destinations'])} given); mode \"great_circle\" takes up to 100")
    origins = [resolve_place(ctx, p, f"origins[{i}]") for i, p in enumerate(args["origins"])]
    destinations = [resolve_place(ctx, p, f"destinations[{i}]") for i, p in enumerate(args["destinations"])]
    if mode == "great_circle":   # geometry on real points: as real as the geocoding
        rows = [[{"distance_km": round(haversine_km(*o[:2], *d[:2]), 3), "duration_min": None} for d in destinations]
                for o in origins]
        return result("maps_distance_matrix", {
            "rows": rows, "mode": mode,
            "origin_addresses": [o[2] for o in origins], "destination_addresses": [d[2] for d in destinations],
        }, "offline-data", GREAT_CIRCLE_SOURCE)
    rows, provenances, sources = [], set(), set()
    for o in origins:
        row = []
        for d in destinations:
            km, minutes, _, prov, source = _trip(ctx, mode, o[:2], d[:2])
            provenances.add(prov)
            sources.add(source)
            row.append({"distance_km": round(km, 3), "duration_min": round(minutes, 2), "provenance": prov})
        rows.append(row)
    provenance = "simulated" if "simulated" in provenances else "offline-data"
    return result("maps_distance_matrix", {
        "rows": rows, "mode": mode,
        "origin_addresses": [o[2] for o in origins], "destination_addresses": [d[2] for d in destinations],
    }, provenance, "; ".join(sorted(sources)))


@implements("maps_directions", "offline")
def maps_directions(args: dict, ctx: BackendContext) -> dict:
    mode = args.get("mode", "driving")
    o = resolve_place(ctx, args["origin"], "origin")
    d = resolve_place(ctx, args["destination"], "destination")
    km, minutes, steps, provenance, source = _trip(ctx, mode, o[:2], d[:2])
    return result("maps_directions", {"distance_km": round(km, 3), "duration_min": round(minutes, 2), "steps": steps,
                                      "mode": mode, "origin_address": o[2], "destination_address": d[2]},
                  provenance, source)
