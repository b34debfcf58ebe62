"""The offline tool world: real data from packages and committed extracts, plus honest simulation.

Runtime loaders (``gazetteer``, ``elevation``, ``countries``, ``osm``, ``weather``, ``markets``)
read each source once, lazily, and keep it in memory; the tool backends in
``pipeline.tools.backends.offline`` turn their answers into tool results. ``build`` (CLI:
``python -m pipeline.world build``) preprocesses package data into the compact extracts committed
under ``snapshots/world/`` (see its SOURCES.md for sources and licences).
"""
from __future__ import annotations

import functools
import importlib.util
import threading
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TypeVar

from pipeline.config import PROJECT_ROOT

DEFAULT_WORLD_DIR = PROJECT_ROOT / "snapshots" / "world"


T = TypeVar("T")


def load_once(build: Callable[..., T]) -> Callable[..., T]:
    """Decorator for the loaders of heavy read-only tables: build on first use, once per process
    and per arguments, even when several threads ask at the same time."""
    tables: dict = {}
    lock = threading.Lock()

    @functools.wraps(build)
    def get(*args, **kwargs) -> T:
        key = (args, tuple(sorted(kwargs.items())) if kwargs else ())
        found = tables.get(key)   # built already: most calls, no lock needed to read
        if found is not None:
            return found
        with lock:
            if key not in tables:
                tables[key] = build(*args, **kwargs)
            return tables[key]
    return get


def package_file(package: str, *parts: str) -> Path:
    """Path of a data file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {package!r} is not installed")
    path = Path(next(iter(spec.submodule_search_locations)), *parts)
    if not path.exists():
        raise FileNotFoundError(f"{package}: no data file {'/'.join(parts)}")
    return path


def package_version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"
