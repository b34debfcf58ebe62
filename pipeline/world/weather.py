"""Daily weather: real station series where a package ships them, a seeded climate model elsewhere.

Real series (compact extract ``weather/daily.csv`` + ``weather/stations.json``, built by
``build_extract``): NOAA daily observations for Seattle and New York 2012-2015 (vega-datasets
``weather.csv``) and Lincoln, Nebraska 2016 (bokeh_sampledata ``lincoln_weather.csv``, max/min
only). US Government works, public domain. A query within ``COVER_KM`` of a station and inside its
date range is answered from the series (fields the source lacks are null).

Simulated: mean annual temperature from latitude, seasonal swing by latitude and day of year,
-6.5 degC per km of elevation (pvlib grid), day-to-day anomalies, wet days, snow when cold, and
sunshine from day length. Values are seeded per (location rounded to 0.01 deg, date), so one day
has one value however the range around it is asked.
"""
from __future__ import annotations

import csv
import datetime as dt
import json
import math
from dataclasses import dataclass
from pathlib import Path

from pipeline.world import DEFAULT_WORLD_DIR, load_once, package_file, package_version
from pipeline.world.geo import haversine_km
from pipeline.world.seeded import unit_for

WEATHER_DIR = "weather"
COVER_KM = 50.0
MAX_DAYS = 366
SIM_SOURCE = "simulated: seeded climate model (latitude, season, elevation); not observations"
FIELDS = ("temp_max_c", "temp_min_c", "temp_mean_c", "precipitation_mm", "snowfall_mm", "sunshine_h")


# ----------------------------------------------------------------------------- build
def _f_to_c(text: str) -> float | None:
    return round((float(text) - 32) * 5 / 9, 1) if text.strip() else None


def build_extract(out_dir: Path, vega_weather_csv: Path | None, gazetteer) -> Path:
    """Write ``weather/daily.csv`` and ``weather/stations.json``.

    ``vega_weather_csv`` is vega-datasets' ``data/weather.csv`` (npm package); station points are
    the GeoNames coordinates of the named city (the source names no station for it).
    """
    rows: list[tuple] = []
    stations: list[dict] = []

    def add_station(station_id: str, city_query: str, source: str, series: list[tuple]) -> None:
        hit = gazetteer.geocode(city_query)
        dates = sorted(r[0] for r in series)
        stations.append({"id": station_id, "city": hit.name, "country_code": hit.country_code,
                         "lat": hit.lat, "lng": hit.lng, "first": dates[0], "last": dates[-1], "source": source,
                         "fields": [f for f, i in (("temp_max_c", 1), ("temp_min_c", 2), ("precipitation_mm", 3))
                                    if any(r[i] is not None for r in series)]})
        rows.extend((station_id, *r) for r in series)

    if vega_weather_csv is not None:
        by_city: dict[str, list[tuple]] = {}
        with open(vega_weather_csv, encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                by_city.setdefault(r["location"], []).append(
                    (r["date"], float(r["temp_max"]), float(r["temp_min"]), float(r["precipitation"])))
        for city, query in (("New York", "New York City"), ("Seattle", "Seattle, Washington")):
            if city in by_city:
                add_station(f"vega-{city.lower().replace(' ', '-')}", query,
                            "NOAA Climate Data Online via vega-datasets 3.2.1 weather.csv (US Government work)",
                            by_city[city])
    lincoln = package_file("bokeh_sampledata", "_data", "lincoln_weather.csv")
    with lincoln.open(encoding="utf-8", newline="") as fh:
        series = [(r["DATE"], _f_to_c(r["TMAX"]), _f_to_c(r["TMIN"]), None) for r in csv.DictReader(fh)]
    add_station("GHCND:USW00094996", "Lincoln, Nebraska",
                f"NOAA GHCN-Daily station USW00094996 LINCOLN 11 SW via bokeh_sampledata "
                f"{package_version('bokeh_sampledata')} lincoln_weather.csv (US Government work; degF converted)",
                series)
    folder = out_dir / WEATHER_DIR
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "daily.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["station", "date", "temp_max_c", "temp_min_c", "precipitation_mm"])
        for r in sorted(rows):
            w.writerow(["" if v is None else v for v in r])
    (folder / "stations.json").write_text(json.dumps(sorted(stations, key=lambda s: s["id"]), indent=1,
                                                     ensure_ascii=False) + "\n", encoding="utf-8")
    return folder


# ----------------------------------------------------------------------------- run time
@dataclass(frozen=True)
class Station:
    id: str
    city: str
    country_code: str
    lat: float
    lng: float
    first: str
    last: str
    source: str


class StationSeries:
    def __init__(self, folder: Path):
        self.stations = [Station(**{k: s[k] for k in Station.__dataclass_fields__})
                         for s in json.loads((folder / "stations.json").read_text(encoding="utf-8"))]
        self.days: dict[str, dict[str, dict]] = {}
        with open(folder / "daily.csv", encoding="utf-8", newline="") as fh:
            for r in csv.DictReader(fh):
                self.days.setdefault(r["station"], {})[r["date"]] = {
                    k: (float(r[k]) if r[k] != "" else None) for k in ("temp_max_c", "temp_min_c", "precipitation_mm")}

    def nearest(self, lat: float, lng: float) -> tuple[Station, float] | None:
        best = min(((s, haversine_km(lat, lng, s.lat, s.lng)) for s in self.stations), key=lambda x: (x[1], x[0].id),
                   default=None)
        return best if best and best[1] <= COVER_KM else None

    def observed(self, station: Station, day: str) -> dict:
        r = self.days[station.id].get(day)
        if r is None:
            raise KeyError(day)
        tmax, tmin = r["temp_max_c"], r["temp_min_c"]
        mean = round((tmax + tmin) / 2, 1) if tmax is not None and tmin is not None else None
        return {"date": day, "temp_max_c": tmax, "temp_min_c": tmin, "temp_mean_c": mean,
                "precipitation_mm": r["precipitation_mm"], "snowfall_mm": None, "sunshine_h": None}


@load_once
def station_series(world_dir: Path | None = None) -> StationSeries:
    return StationSeries(Path(world_dir or DEFAULT_WORLD_DIR) / WEATHER_DIR)


def day_length_h(lat: float, day: dt.date) -> float:
    """Astronomical day length (hours) from latitude and solar declination."""
    decl = math.radians(23.44) * math.sin(2 * math.pi * (day.timetuple().tm_yday - 81) / 365.25)
    x = -math.tan(math.radians(lat)) * math.tan(decl)
    return 24.0 if x <= -1 else 0.0 if x >= 1 else 24 / math.pi * math.acos(x)


def _normal(*parts: object) -> float:
    """Seeded standard normal (Box-Muller on two seeded uniforms)."""
    u1 = max(unit_for(*parts, "u1"), 1e-12)
    return math.sqrt(-2 * math.log(u1)) * math.cos(2 * math.pi * unit_for(*parts, "u2"))


def simulated_day(lat: float, lng: float, elevation_m: float, day: dt.date, stream: str = "history") -> dict:
    key = (stream, round(lat, 2), round(lng, 2))
    alat = abs(lat)
    annual = 28 - 0.25 * alat - 0.005 * max(0.0, alat - 20) ** 2 - 0.0065 * max(0.0, elevation_m)
    swing = 1 + 0.17 * alat
    peak_doy = 200 if lat >= 0 else 17
    doy = day.timetuple().tm_yday
    seasonal = swing * math.cos(2 * math.pi * (doy - peak_doy) / 365.25)
    anomaly = sum(w * _normal(*key, (day - dt.timedelta(days=k)).isoformat()) for k, w in enumerate((2.0, 1.3, 0.8)))
    mean = annual + seasonal + anomaly
    wet_chance = 0.45 if alat > 40 else 0.3 if alat > 15 else 0.4
    wet = unit_for(*key, day.isoformat(), "wet") < wet_chance
    precipitation = round(-6.0 * math.log(max(unit_for(*key, day.isoformat(), "amount"), 1e-9)), 1) if wet else 0.0
    diurnal = (6 if wet else 10) + 2 * unit_for(*key, day.isoformat(), "range")
    cloud = (0.6 + 0.35 * unit_for(*key, day.isoformat(), "cloud")) if wet else 0.4 * unit_for(*key, day.isoformat(), "cloud")
    return {
        "date": day.isoformat(),
        "temp_max_c": round(mean + diurnal / 2, 1),
        "temp_min_c": round(mean - diurnal / 2, 1),
        "temp_mean_c": round(mean, 1),
        "precipitation_mm": precipitation,
        # Snow depth from water equivalent at the usual ~7:1 ratio, on days with a mean below 0.5 degC.
        "snowfall_mm": round(precipitation * 7, 1) if mean < 0.5 else 0.0,
        "sunshine_h": round(day_length_h(lat, day) * (1 - cloud) * 0.9, 1),
    }
