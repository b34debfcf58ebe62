"""Generation catalog: difficulty presets, roadblock templates and diamond types (from templates/).

The data lives in ``templates/presets.toml`` and ``templates/roadblocks.toml``; this module
only loads it, applies CLI overrides and checks it, so one place defines each number.
"""
from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pipeline.config import PROJECT_ROOT, ConfigError

TEMPLATES_DIR = PROJECT_ROOT / "templates"


@dataclass(frozen=True)
class LevelPreset:
    name: str
    stops: tuple[int, int]
    roadblocks: tuple[int, int]
    detours: tuple[int, int]
    crawl_depth: int
    extraction: tuple[str, ...]
    diamonds: tuple[int, int]
    hops: tuple[int, int] = (1, 2)      # hops from page to page after the seed (pages = hops + 1)
    choices: tuple[int, int] = (0, 1)   # of them, hops that choose among countries by a looked-up figure
    wide: tuple[int, int] = (0, 0)      # wide stops (issue 34), beside the stops counted in ``stops``
    wide_members: tuple[int, int] = (0, 0)   # how many members each wide stop's set holds
    wide_total_counts: bool = True      # may a wide stop ask a count that one tool answer reports as its total?


def _load(name: str, templates_dir: Path) -> dict[str, Any]:
    with open(templates_dir / name, "rb") as fh:
        return tomllib.load(fh)


def load_presets(overrides: list[str] | None = None, templates_dir: Path = TEMPLATES_DIR) -> tuple[dict[str, LevelPreset], dict]:
    """Presets per level plus generation settings; ``overrides`` are ``level.key=value`` strings."""
    data = _load("presets.toml", templates_dir)
    for item in overrides or []:
        try:
            path, raw = item.split("=", 1)
            section, key = path.strip().split(".", 1)
            value = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError) as exc:
            raise ConfigError(f"--set {item!r}: expected level.key=value (value a Python literal)") from exc
        if section not in data or key not in data[section]:
            raise ConfigError(f"--set {item!r}: no preset {section}.{key}")
        data[section][key] = value
    generation = data.pop("generation")
    presets = {}
    for name, p in data.items():
        preset = LevelPreset(name, tuple(p["stops"]), tuple(p["roadblocks"]), tuple(p["detours"]),
                             int(p["crawl_depth"]), tuple(p["extraction"]), tuple(p["diamonds"]),
                             tuple(p.get("hops", (1, 2))), tuple(p.get("choices", (0, 1))),
                             tuple(p.get("wide", (0, 0))), tuple(p.get("wide_members", (0, 0))),
                             bool(p.get("wide_total_counts", True)))
        for key in ("stops", "roadblocks", "detours", "diamonds", "hops", "choices", "wide", "wide_members"):
            lo, hi = getattr(preset, key)
            if not 0 <= lo <= hi:
                raise ConfigError(f"preset {name}.{key}: bad range {[lo, hi]}")
        if preset.roadblocks[0] + preset.detours[0] + 2 > preset.stops[1]:
            raise ConfigError(f"preset {name}: stops {preset.stops} cannot hold the minimum roadblocks, detours, a page and the finish line")
        presets[name] = preset
    return presets, generation


@lru_cache(maxsize=4)
def roadblock_templates(templates_dir: Path = TEMPLATES_DIR) -> dict[str, dict]:
    data = _load("roadblocks.toml", templates_dir)
    data.pop("diamonds")
    for name, t in data.items():
        if not 1 <= len(t["steps"]) <= 3:
            raise ConfigError(f"roadblock template {name}: 1-3 steps, got {len(t['steps'])}")
    return data


@lru_cache(maxsize=4)
def diamond_types(templates_dir: Path = TEMPLATES_DIR) -> dict[str, dict]:
    return _load("roadblocks.toml", templates_dir)["diamonds"]


@lru_cache(maxsize=4)
def diamond_only_templates(templates_dir: Path = TEMPLATES_DIR) -> frozenset[str]:
    """Diamond branches without parameters (elevation, population, area) ask the same question
    every time: a plain roadblock on a stop would block every diamond needing that branch there,
    so DAG legs leave these templates to the diamonds."""
    templates = roadblock_templates(templates_dir)
    return frozenset(b for t in diamond_types(templates_dir).values() for b in t["branches"]
                     if not templates[b].get("params"))
