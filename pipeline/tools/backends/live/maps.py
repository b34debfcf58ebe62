"""Live map tools: free OpenStreetMap services, or Google Maps Platform when a key is set.

Free (no key): Nominatim (geocode, reverse geocode, place search and details; 1 request a
second, a User-Agent naming the application), OSRM on the FOSSGIS servers
(routing.openstreetmap.de: car, foot and bike profiles) for directions and distance
matrices, and the Open-Meteo elevation API (Copernicus DEM GLO-90).

Keyed: with ``settings.live["google_maps_key"]`` or env ``GOOGLE_MAPS_API_KEY`` every map
tool uses the Google Maps web services instead (Geocoding, Places Text Search and Details,
Elevation, Directions, Distance Matrix). Place ratings exist only there: without a key,
maps_place_details answers ``rating: null``.

Base URLs (``settings.live``): ``nominatim_url``, ``osrm_driving_url``, ``osrm_walking_url``,
``osrm_bicycling_url``, ``open_meteo_elevation_url``, ``google_maps_url``.
"""
from __future__ import annotations

import math
import re

from pipeline.tools.backends.live.http import LiveServiceError, get_json, live_setting
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.tools.spec import (
    AIRPORT_RADIUS_MAX_M,
    PLACES_PER_PAGE,
    ROUTED_DESTINATIONS_MAX,
    SEARCH_RADIUS_MAX_M,
    TOOLS,
)

NOMINATIM_URL = "https://nominatim.openstreetmap.org"
OSRM_URLS = {"driving": "https://routing.openstreetmap.de/routed-car",
             "walking": "https://routing.openstreetmap.de/routed-foot",
             "bicycling": "https://routing.openstreetmap.de/routed-bike"}
OPEN_METEO_ELEVATION_URL = "https://api.open-meteo.com/v1/elevation"
GOOGLE_MAPS_URL = "https://maps.googleapis.com"

NOMINATIM_SOURCE = "OpenStreetMap Nominatim (live, ODbL)"
OSRM_SOURCE = "OSRM on routing.openstreetmap.de, {mode} profile (live, OpenStreetMap data, ODbL)"
ELEVATION_SOURCE = "Open-Meteo Elevation API, Copernicus DEM GLO-90 (live)"
GOOGLE_SOURCE = "Google Maps Platform {api} API (live)"


def _units(tool: str) -> dict:
    return dict(TOOLS[tool]["units"])


def _live(tool: str, source: str, **values) -> dict:
    return {**values, "units": _units(tool), "provenance": "live", "source": source}


def google_key(ctx: BackendContext) -> str | None:
    return live_setting(ctx, "google_maps_key", env="GOOGLE_MAPS_API_KEY")


def _google(ctx: BackendContext, api: str, path: str, params: dict) -> dict:
    base = live_setting(ctx, "google_maps_url", GOOGLE_MAPS_URL).rstrip("/")
    data = get_json(ctx, "google_maps", f"{base}/maps/api/{path}", {**params, "key": google_key(ctx)})
    status = data.get("status", "OK")
    if status in ("OK",):
        return data
    if status in ("ZERO_RESULTS", "NOT_FOUND"):
        raise ToolError(f"Google {api}: no result for {', '.join(f'{k}={v}' for k, v in params.items())}")
    if status == "INVALID_REQUEST":
        raise ToolError(f"Google {api}: invalid request: {data.get('error_message', '')}")
    raise LiveServiceError(f"Google {api}: {status}: {data.get('error_message', '')}")


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    r = 6371.0088
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


def resolve_place(place, ctx: BackendContext) -> tuple[float, float]:
    """Coordinates of a place given as {lat, lng} or as text (geocoded with maps_geocode)."""
    if isinstance(place, dict):
        return float(place["lat"]), float(place["lng"])
    found = ctx.call("maps_geocode", {"address": place})
    if "error" in found:
        raise ToolError(f"could not find {place!r}: {found['error']}")
    return float(found["lat"]), float(found["lng"])


# --- geocoding -------------------------------------------------------------------------------

def _nominatim(ctx: BackendContext, path: str, params: dict):
    base = live_setting(ctx, "nominatim_url", NOMINATIM_URL).rstrip("/")
    return get_json(ctx, "nominatim", f"{base}/{path}", {**params, "format": "jsonv2"})


def _google_country(components: list[dict]) -> tuple[str | None, str | None]:
    for part in components:
        if "country" in part.get("types", []):
            return part.get("long_name"), part.get("short_name", "").upper() or None
    return None, None


@implements("maps_geocode", "live")
def maps_geocode(args: dict, ctx: BackendContext) -> dict:
    address = args["address"]
    if google_key(ctx):
        hit = _google(ctx, "Geocoding", "geocode/json", {"address": address})["results"][0]
        location = hit["geometry"]["location"]
        _, code = _google_country(hit.get("address_components", []))
        return _live("maps_geocode", GOOGLE_SOURCE.format(api="Geocoding"), lat=location["lat"],
                     lng=location["lng"], formatted_address=hit.get("formatted_address"), country_code=code,
                     place_type=(hit.get("types") or [None])[0])
    hits = _nominatim(ctx, "search", {"q": address, "limit": 1, "addressdetails": 1})
    if not hits:
        raise ToolError(f"no place found for {address!r}")
    hit = hits[0]
    code = (hit.get("address") or {}).get("country_code")
    return _live("maps_geocode", NOMINATIM_SOURCE, lat=float(hit["lat"]), lng=float(hit["lon"]),
                 formatted_address=hit.get("display_name"), country_code=code.upper() if code else None,
                 place_type=hit.get("addresstype") or hit.get("type"))


_CITY_KEYS = ("city", "town", "village", "municipality", "hamlet", "suburb", "county", "state")


@implements("maps_reverse_geocode", "live")
def maps_reverse_geocode(args: dict, ctx: BackendContext) -> dict:
    lat, lng = float(args["lat"]), float(args["lng"])
    if google_key(ctx):
        results = _google(ctx, "Geocoding", "geocode/json", {"latlng": f"{lat},{lng}"})["results"]
        hit = results[0]
        country, code = _google_country(hit.get("address_components", []))
        city = next((part["long_name"] for r in results for part in r.get("address_components", [])
                     if "locality" in part.get("types", [])), None)
        location = hit["geometry"]["location"]
        return _live("maps_reverse_geocode", GOOGLE_SOURCE.format(api="Geocoding"), city=city, country=country,
                     country_code=code, formatted_address=hit.get("formatted_address"),
                     distance_km=round(haversine_km(lat, lng, location["lat"], location["lng"]), 3))
    hit = _nominatim(ctx, "reverse", {"lat": lat, "lon": lng, "zoom": 10, "addressdetails": 1})
    if not hit or "error" in hit:
        raise ToolError(f"no place near {lat}, {lng}" + (f": {hit['error']}" if hit else ""))
    address = hit.get("address") or {}
    city = next((address[key] for key in _CITY_KEYS if address.get(key)), None)
    code = address.get("country_code")
    return _live("maps_reverse_geocode", NOMINATIM_SOURCE, city=city, country=address.get("country"),
                 country_code=code.upper() if code else None, formatted_address=hit.get("display_name"),
                 distance_km=round(haversine_km(lat, lng, float(hit["lat"]), float(hit["lon"])), 3))


# --- places ----------------------------------------------------------------------------------

_OSM_ID = re.compile(r"^osm:(node|way|relation):(\d+)$")


def _bounding_box(lat: float, lng: float, radius_m: float) -> str:
    dlat = radius_m / 111_320.0
    dlng = radius_m / (111_320.0 * max(math.cos(math.radians(lat)), 1e-6))
    return f"{lng - dlng},{lat + dlat},{lng + dlng},{lat - dlat}"  # left,top,right,bottom


def _paged(places: list[dict], offset: int) -> dict:
    """The schema's paging over what the service returned (one request: total counts those only)."""
    page = places[offset:offset + PLACES_PER_PAGE]
    end = offset + len(page)
    return {"places": page, "total": len(places), "count": len(places), "offset": offset,
            "next_offset": end if end < len(places) else None}


@implements("maps_search_places", "live")
def maps_search_places(args: dict, ctx: BackendContext) -> dict:
    radius = float(args.get("radius_m", 2000))
    offset = int(args.get("offset", 0))
    airport = re.sub(r"[^a-z]", "", args["query"].lower()) in ("airport", "airports")
    cap = AIRPORT_RADIUS_MAX_M if airport else SEARCH_RADIUS_MAX_M
    if radius > cap:
        raise ToolError(f"radius_m {radius:,.0f} is past the cap of {cap:,} m for the query {args['query']!r}")
    center = resolve_place(args["location"], ctx) if args.get("location") is not None else None
    if google_key(ctx):
        params = {"query": args["query"]}
        if center:
            params.update(location=f"{center[0]},{center[1]}", radius=int(radius))
        results = _google(ctx, "Places", "place/textsearch/json", params)["results"]
        places = [{"place_id": r["place_id"], "name": r.get("name"), "category": (r.get("types") or [None])[0],
                   "lat": r["geometry"]["location"]["lat"], "lng": r["geometry"]["location"]["lng"]}
                  for r in results]
        return _live("maps_search_places", GOOGLE_SOURCE.format(api="Places Text Search"), **_paged(places, offset))
    params = {"q": args["query"], "limit": 20}
    if center:
        params.update(viewbox=_bounding_box(*center, radius), bounded=1)
    hits = _nominatim(ctx, "search", params) or []
    places = []
    for hit in hits:
        lat, lng = float(hit["lat"]), float(hit["lon"])
        if center and haversine_km(center[0], center[1], lat, lng) * 1000 > radius:
            continue  # the box's corners lie outside the circle
        places.append({"place_id": f"osm:{hit['osm_type']}:{hit['osm_id']}",
                       "name": hit.get("name") or hit.get("display_name", "").split(",")[0],
                       "category": f"{hit.get('category')}:{hit.get('type')}", "lat": lat, "lng": lng})
    return _live("maps_search_places", NOMINATIM_SOURCE, **_paged(places, offset))


@implements("maps_place_details", "live")
def maps_place_details(args: dict, ctx: BackendContext) -> dict:
    place_id = args["place_id"]
    osm = _OSM_ID.match(place_id)
    if osm is None:
        if not google_key(ctx):
            raise ToolError(f"place_id {place_id!r} is not an OpenStreetMap id (osm:node:123) and no Google "
                            "Maps key is configured (settings.live['google_maps_key'] or GOOGLE_MAPS_API_KEY)")
        result = _google(ctx, "Places", "place/details/json",
                         {"place_id": place_id, "fields": "place_id,name,geometry,types,rating,user_ratings_total"}
                         )["result"]
        return _live("maps_place_details", GOOGLE_SOURCE.format(api="Places Details"),
                     place_id=result.get("place_id", place_id), name=result.get("name"),
                     category=(result.get("types") or [None])[0], lat=result["geometry"]["location"]["lat"],
                     lng=result["geometry"]["location"]["lng"], rating=result.get("rating"),
                     user_ratings_total=result.get("user_ratings_total"))
    kind, number = osm.groups()
    hits = _nominatim(ctx, "lookup", {"osm_ids": f"{kind[0].upper()}{number}", "extratags": 1})
    if not hits:
        raise ToolError(f"no OpenStreetMap object {place_id}")
    hit = hits[0]
    return _live("maps_place_details", NOMINATIM_SOURCE + "; OpenStreetMap has no ratings",
                 place_id=place_id, name=hit.get("name") or hit.get("display_name", "").split(",")[0],
                 category=f"{hit.get('category')}:{hit.get('type')}", lat=float(hit["lat"]), lng=float(hit["lon"]),
                 rating=None, user_ratings_total=None)


# --- elevation -------------------------------------------------------------------------------

@implements("maps_elevation", "live")
def maps_elevation(args: dict, ctx: BackendContext) -> dict:
    locations = args["locations"] if isinstance(args["locations"], list) else [args["locations"]]
    points = [resolve_place(p, ctx) for p in locations]   # names are geocoded first
    if google_key(ctx):
        results = _google(ctx, "Elevation", "elevation/json",
                          {"locations": "|".join(f"{lat},{lng}" for lat, lng in points)})["results"]
        heights = [r["elevation"] for r in results]
        source = GOOGLE_SOURCE.format(api="Elevation")
    else:
        url = live_setting(ctx, "open_meteo_elevation_url", OPEN_METEO_ELEVATION_URL)
        data = get_json(ctx, "open_meteo", url, {"latitude": ",".join(str(lat) for lat, _ in points),
                                                 "longitude": ",".join(str(lng) for _, lng in points)})
        if data.get("error"):
            raise ToolError(f"Open-Meteo elevation: {data.get('reason')}")
        heights = data["elevation"]
        source = ELEVATION_SOURCE
    if len(heights) != len(points):
        raise LiveServiceError(f"elevation service answered {len(heights)} values for {len(points)} points")
    results = [{"lat": lat, "lng": lng, "elevation_m": float(h)} for (lat, lng), h in zip(points, heights)]
    return _live("maps_elevation", source, elevation_m=results[0]["elevation_m"], results=results)


# --- routing ---------------------------------------------------------------------------------

def _osrm(ctx: BackendContext, mode: str, service: str, coords: list[tuple[float, float]], params: dict) -> dict:
    base = live_setting(ctx, f"osrm_{mode}_url", OSRM_URLS[mode]).rstrip("/")
    path = ";".join(f"{lng},{lat}" for lat, lng in coords)
    data = get_json(ctx, "osrm", f"{base}/{service}/v1/driving/{path}", params)
    if data.get("code") != "Ok":
        raise ToolError(f"OSRM {service}: {data.get('code')}: {data.get('message', '')}")
    return data


def _step_text(step: dict) -> str:
    maneuver = step.get("maneuver", {})
    words = [maneuver.get("type", ""), maneuver.get("modifier", "")]
    road = step.get("name")
    text = " ".join(w for w in words if w)
    return f"{text} onto {road}" if road else text


@implements("maps_directions", "live")
def maps_directions(args: dict, ctx: BackendContext) -> dict:
    mode = args.get("mode", "driving")
    if google_key(ctx):
        params = {"origin": _google_place(args["origin"]), "destination": _google_place(args["destination"]),
                  "mode": mode}
        leg = _google(ctx, "Directions", "directions/json", params)["routes"][0]["legs"][0]
        steps = [{"instruction": re.sub(r"<[^>]+>", "", s.get("html_instructions", "")),
                  "distance_km": round(s["distance"]["value"] / 1000, 3),
                  "duration_min": round(s["duration"]["value"] / 60, 2)} for s in leg["steps"]]
        return _live("maps_directions", GOOGLE_SOURCE.format(api="Directions"), mode=mode,
                     distance_km=round(leg["distance"]["value"] / 1000, 3),
                     duration_min=round(leg["duration"]["value"] / 60, 2), steps=steps)
    coords = [resolve_place(args["origin"], ctx), resolve_place(args["destination"], ctx)]
    route = _osrm(ctx, mode, "route", coords, {"overview": "false", "steps": "true"})["routes"][0]
    steps = [{"instruction": _step_text(s), "distance_km": round(s["distance"] / 1000, 3),
              "duration_min": round(s["duration"] / 60, 2)}
             for leg in route["legs"] for s in leg.get("steps", [])]
    return _live("maps_directions", OSRM_SOURCE.format(mode=mode), mode=mode,
                 distance_km=round(route["distance"] / 1000, 3), duration_min=round(route["duration"] / 60, 2),
                 steps=steps)


def _google_place(place) -> str:
    return f"{place['lat']},{place['lng']}" if isinstance(place, dict) else place


@implements("maps_distance_matrix", "live")
def maps_distance_matrix(args: dict, ctx: BackendContext) -> dict:
    mode = args.get("mode", "driving")
    origins, destinations = args["origins"], args["destinations"]
    if mode != "great_circle" and len(destinations) > ROUTED_DESTINATIONS_MAX:
        raise ToolError(f"mode {mode!r} takes at most {ROUTED_DESTINATIONS_MAX} destinations "
                        f"({len(destinations)} given); mode \"great_circle\" takes up to 100")
    if mode == "great_circle":   # geometry between the (live-geocoded) points, no routing service
        a = [resolve_place(p, ctx) for p in origins]
        b = [resolve_place(p, ctx) for p in destinations]
        rows = [[{"distance_km": round(haversine_km(*o, *d), 3), "duration_min": None} for d in b] for o in a]
        return _live("maps_distance_matrix", "great-circle distance on the mean Earth sphere between live-geocoded "
                     "points", mode=mode, rows=rows)
    if google_key(ctx):
        params = {"origins": "|".join(map(_google_place, origins)),
                  "destinations": "|".join(map(_google_place, destinations)), "mode": mode}
        data = _google(ctx, "Distance Matrix", "distancematrix/json", params)
        rows = [[{"distance_km": round(e["distance"]["value"] / 1000, 3),
                  "duration_min": round(e["duration"]["value"] / 60, 2)} if e.get("status") == "OK"
                 else {"distance_km": None, "duration_min": None, "status": e.get("status")}
                 for e in row["elements"]] for row in data["rows"]]
        return _live("maps_distance_matrix", GOOGLE_SOURCE.format(api="Distance Matrix"), mode=mode, rows=rows)
    coords = [resolve_place(p, ctx) for p in origins] + [resolve_place(p, ctx) for p in destinations]
    n = len(origins)
    data = _osrm(ctx, mode, "table", coords, {
        "sources": ";".join(str(i) for i in range(n)),
        "destinations": ";".join(str(i) for i in range(n, len(coords))),
        "annotations": "duration,distance"})
    rows = []
    for durations, distances in zip(data["durations"], data["distances"]):
        rows.append([{"distance_km": None if dist is None else round(dist / 1000, 3),
                      "duration_min": None if dur is None else round(dur / 60, 2)}
                     for dur, dist in zip(durations, distances)])
    return _live("maps_distance_matrix", OSRM_SOURCE.format(mode=mode), mode=mode, rows=rows)
