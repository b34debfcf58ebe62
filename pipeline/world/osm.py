"""OpenStreetMap extracts of covered cities: points of interest and a routable road graph.

Build time (``build_city_extract``): pyosmium reads a ``.osm.pbf`` once and writes
``osm/<city>.json.gz``: named POIs (amenity / tourism / shop tags, ways reduced to the mean of
their nodes) and a road graph simplified to junctions, each edge with its length in metres, its
``highway`` class, one-way flag and ``maxspeed``. Run time (``city_maps``): the extracts are
loaded once; routing is Dijkstra (networkx) on travel time, per mode, inside the largest
strongly connected component. OSM data (c) OpenStreetMap contributors, ODbL 1.0.
"""
from __future__ import annotations

import gzip
import itertools
import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.world import DEFAULT_WORLD_DIR, load_once
from pipeline.world.geo import PlaceHit, haversine_km, normalise_name

OSM_DIR = "osm"
POI_KEYS = ("amenity", "tourism", "shop")

# Free-flow driving speeds by highway class (km/h), used when a way has no numeric maxspeed.
DRIVING_SPEED_KMH = {
    "motorway": 100, "motorway_link": 60, "trunk": 80, "trunk_link": 50, "primary": 50, "primary_link": 40,
    "secondary": 50, "secondary_link": 40, "tertiary": 40, "tertiary_link": 30, "unclassified": 30,
    "residential": 30, "living_street": 10, "service": 20, "road": 30,
}
FOOT_ONLY = {"footway", "pedestrian", "steps", "path", "trail", "corridor", "platform", "cycleway", "elevator",
             "crossing", "track", "bridleway"}
MODE_SPEED_KMH = {"walking": 5.0, "bicycling": 15.0}
SLOW_FOR_BIKES = {"footway", "pedestrian", "path", "trail", "corridor", "platform", "crossing", "track"}


def mode_speed_kmh(mode: str, highway: str, maxspeed: float) -> float | None:
    """Speed on an edge for a mode, or None when the mode may not use it."""
    if mode == "driving":
        if highway not in DRIVING_SPEED_KMH:
            return None
        return maxspeed if maxspeed > 0 else float(DRIVING_SPEED_KMH[highway])
    if highway.startswith("motorway") or highway == "construction":
        return None
    if mode == "walking":
        return 2.0 if highway == "steps" else MODE_SPEED_KMH["walking"]
    if highway in ("steps", "elevator"):
        return None
    return 10.0 if highway in SLOW_FOR_BIKES else MODE_SPEED_KMH["bicycling"]


# ----------------------------------------------------------------------------- build
def _maxspeed(value: str | None) -> float:
    if not value:
        return 0.0
    m = re.match(r"^\s*(\d+(?:\.\d+)?)\s*(mph)?\s*$", value)
    if not m:
        return 0.0
    speed = float(m.group(1))
    return round(speed * 1.609344, 1) if m.group(2) else speed


def build_city_extract(pbf: Path, out_dir: Path, city: str | None = None,
                       country_code: str | Callable[[float, float], str] = "") -> Path:
    """Parse ``pbf`` with pyosmium and write ``<out_dir>/osm/<city>.json.gz``; return its path.

    ``country_code`` may be a function of the extract's centre point (e.g. a reverse geocoder).
    """
    import osmium

    city = city or pbf.name.split(".")[0].replace("_", " ").title()
    pois: list[list] = []
    ways: list[tuple[int, list[int], dict]] = []
    locations: dict[int, tuple[float, float]] = {}

    class Reader(osmium.SimpleHandler):
        def node(self, n):
            if n.location.valid():
                locations[n.id] = (round(n.location.lat, 7), round(n.location.lon, 7))
            self._poi("node", n.id, n.tags, n.location.lat if n.location.valid() else None,
                      n.location.lon if n.location.valid() else None)

        def way(self, w):
            tags = w.tags
            refs = [nd.ref for nd in w.nodes]
            if "highway" in tags and tags.get("area") != "yes" and len(refs) >= 2:
                ways.append((w.id, refs, {k: tags.get(k) for k in ("highway", "oneway", "junction", "maxspeed", "name")}))
            if any(k in tags for k in POI_KEYS) and tags.get("name"):
                pts = [(nd.location.lat, nd.location.lon) for nd in w.nodes if nd.location.valid()]
                if pts:
                    self._poi("way", w.id, tags, sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts))

        @staticmethod
        def _poi(kind, osm_id, tags, lat, lng):
            name = tags.get("name")
            if not name or lat is None:
                return
            for key in POI_KEYS:
                if key in tags:
                    pois.append([f"osm:{kind}/{osm_id}", name, tags[key], key, round(lat, 7), round(lng, 7)])
                    return

    Reader().apply_file(str(pbf), locations=True)

    # Simplify: graph nodes are way ends and nodes shared by several ways.
    use_count: dict[int, int] = {}
    for _, refs, _ in ways:
        for ref in refs:
            use_count[ref] = use_count.get(ref, 0) + 1
    names: list[str] = []
    name_index: dict[str, int] = {}
    highways: list[str] = []
    highway_index: dict[str, int] = {}
    node_ids: dict[int, int] = {}
    nodes: list[list] = []
    edges: list[list] = []

    def node_index(ref: int) -> int:
        if ref not in node_ids:
            node_ids[ref] = len(nodes)
            nodes.append([ref, *locations[ref]])
        return node_ids[ref]

    for _, refs, tags in sorted(ways, key=lambda w: w[0]):
        refs = [r for r in refs if r in locations]
        if len(refs) < 2:
            continue
        highway = tags["highway"]
        oneway = 1 if (tags.get("oneway") in ("yes", "true", "1") or tags.get("junction") == "roundabout") else 0
        oneway = -1 if tags.get("oneway") == "-1" else oneway
        name = tags.get("name") or ""
        if name not in name_index:
            name_index[name] = len(names)
            names.append(name)
        if highway not in highway_index:
            highway_index[highway] = len(highways)
            highways.append(highway)
        start, length = refs[0], 0.0
        for prev, ref in itertools.pairwise(refs):
            length += haversine_km(*locations[prev], *locations[ref]) * 1000
            if ref == refs[-1] or use_count[ref] > 1:
                if ref != start:
                    edges.append([node_index(start), node_index(ref), round(length, 1), highway_index[highway],
                                  oneway, _maxspeed(tags.get("maxspeed")), name_index[name]])
                start, length = ref, 0.0
    lats = [n[1] for n in nodes] + [p[4] for p in pois]
    lngs = [n[2] for n in nodes] + [p[5] for p in pois]
    bbox = [min(lats), min(lngs), max(lats), max(lngs)]
    if callable(country_code):
        country_code = country_code((bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2)
    payload = {
        "city": city, "country_code": country_code,
        "source": f"OpenStreetMap extract {pbf.name} (c) OpenStreetMap contributors, ODbL 1.0",
        "bbox": bbox,
        "pois": sorted(pois), "highways": highways, "names": names, "nodes": nodes, "edges": edges,
    }
    out = out_dir / OSM_DIR / f"{normalise_name(city).replace(' ', '_')}.json.gz"
    out.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode("utf-8")
    with open(out, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw)
    return out


# ----------------------------------------------------------------------------- run time
@dataclass(frozen=True)
class Poi:
    place_id: str
    name: str
    category: str
    tag: str            # amenity | tourism | shop
    lat: float
    lng: float
    city: str
    country_code: str
    source: str


@dataclass
class Route:
    distance_km: float
    duration_min: float
    steps: list[dict]
    snapped_m: float


class CityMap:
    """One covered city: POIs and a road graph."""

    SNAP_LIMIT_M = 1000.0

    def __init__(self, path: Path):
        with gzip.open(path) as fh:
            data = json.loads(fh.read())
        self.city: str = data["city"]
        self.country_code: str = data["country_code"]
        self.source: str = data["source"]
        self.bbox: list[float] = data["bbox"]
        self.pois = [Poi(p[0], p[1], p[2], p[3], p[4], p[5], self.city, self.country_code, self.source)
                     for p in data["pois"]]
        self.nodes: list[list] = data["nodes"]
        self.edges: list[list] = data["edges"]
        self.highways: list[str] = data["highways"]
        self.names: list[str] = data["names"]
        self._graphs: dict[str, tuple] = {}
        self._lock = threading.Lock()
        self.center_lat = (self.bbox[0] + self.bbox[2]) / 2
        self._kx = 111.32 * math.cos(math.radians(self.center_lat))

    def covers(self, lat: float, lng: float, margin_km: float = 1.0) -> bool:
        dlat, dlng = margin_km / 111.32, margin_km / self._kx
        return (self.bbox[0] - dlat <= lat <= self.bbox[2] + dlat) and (self.bbox[1] - dlng <= lng <= self.bbox[3] + dlng)

    def road_km(self) -> float:
        return sum(e[2] for e in self.edges) / 1000

    def _graph(self, mode: str):
        with self._lock:
            if mode not in self._graphs:
                import networkx as nx
                from scipy.spatial import cKDTree

                g = nx.DiGraph()
                for u, v, length, hw, oneway, maxspeed, name in self.edges:
                    speed = mode_speed_kmh(mode, self.highways[hw], maxspeed)
                    if speed is None:
                        continue
                    minutes = length / 1000 / speed * 60
                    attrs = {"length": length, "minutes": minutes, "name": self.names[name], "highway": self.highways[hw]}
                    directions = [(u, v), (v, u)]
                    if mode == "driving" and oneway:
                        directions = [(u, v)] if oneway == 1 else [(v, u)]
                    for a, b in directions:
                        if not g.has_edge(a, b) or g[a][b]["minutes"] > minutes:
                            g.add_edge(a, b, **attrs)
                if g.number_of_nodes():
                    core = max(nx.strongly_connected_components(g), key=lambda c: (len(c), min(c)))
                    g = g.subgraph(core).copy()
                members = sorted(g.nodes)
                tree = cKDTree([self._xy(self.nodes[i][1], self.nodes[i][2]) for i in members]) if members else None
                self._graphs[mode] = (g, members, tree)
            return self._graphs[mode]

    def _xy(self, lat: float, lng: float) -> tuple[float, float]:
        return (lng * self._kx * 1000, lat * 111320.0)

    def snap(self, mode: str, lat: float, lng: float) -> tuple[int, float] | None:
        _g, members, tree = self._graph(mode)
        if tree is None:
            return None
        dist, k = tree.query(self._xy(lat, lng))
        if dist > self.SNAP_LIMIT_M:
            return None
        node = members[int(k)]
        return node, haversine_km(lat, lng, self.nodes[node][1], self.nodes[node][2]) * 1000

    def route(self, mode: str, origin: tuple[float, float], destination: tuple[float, float]) -> Route | None:
        """Fastest route on the road graph, or None if a point is off the network."""
        import networkx as nx

        a, b = self.snap(mode, *origin), self.snap(mode, *destination)
        if a is None or b is None:
            return None
        g, _, _ = self._graph(mode)
        path = nx.shortest_path(g, a[0], b[0], weight="minutes")
        # Getting on and off the network: straight lines at walking pace (or the mode's pace).
        access_kmh = MODE_SPEED_KMH.get(mode, MODE_SPEED_KMH["walking"])
        snapped_m = a[1] + b[1]
        distance_m, minutes = snapped_m, snapped_m / 1000 / access_kmh * 60
        steps: list[dict] = []
        for u, v in itertools.pairwise(path):
            e = g[u][v]
            distance_m += e["length"]
            minutes += e["minutes"]
            label = e["name"] or f"unnamed {e['highway']}"
            if steps and steps[-1]["road"] == label:
                steps[-1]["distance_km"] += e["length"] / 1000
                steps[-1]["duration_min"] += e["minutes"]
            else:
                steps.append({"road": label, "distance_km": e["length"] / 1000, "duration_min": e["minutes"]})
        for i, step in enumerate(steps):
            step["instruction"] = ("Head along " if i == 0 else "Continue onto ") + step["road"]
            step["distance_km"] = round(step["distance_km"], 3)
            step["duration_min"] = round(step["duration_min"], 2)
        return Route(distance_m / 1000, minutes, steps, snapped_m)


@load_once
def city_maps(world_dir: Path | None = None) -> list[CityMap]:
    """All city extracts under ``<world>/osm`` (sorted by file name), loaded once."""
    folder = Path(world_dir or DEFAULT_WORLD_DIR) / OSM_DIR
    return [CityMap(p) for p in sorted(folder.glob("*.json.gz"))]


def city_covering(world_dir: Path | None, *points: tuple[float, float]) -> CityMap | None:
    for city in city_maps(world_dir):
        if all(city.covers(lat, lng) for lat, lng in points):
            return city
    return None


def find_poi(world_dir: Path | None, place_id: str) -> Poi | None:
    for city in city_maps(world_dir):
        for poi in city.pois:
            if poi.place_id == place_id:
                return poi
    return None


def poi_name_lookup(world_dir: Path | None) -> Callable[[str], list]:
    """A function from a normalised name to geocoding hits for POIs of the covered cities."""
    index: dict[str, list] | None = None

    def lookup(name: str) -> list:
        nonlocal index
        if index is None:
            built: dict[str, list] = {}
            for city in city_maps(world_dir):
                for poi in city.pois:
                    hit = PlaceHit(poi.name, poi.lat, poi.lng, city.country_code, "poi",
                                   f"{poi.name}, {city.city}", city.source,
                                   extra={"place_id": poi.place_id, "category": poi.category, "city": city.city})
                    built.setdefault(normalise_name(poi.name), []).append(hit)
            index = built
        return index.get(name, [])

    return lookup
