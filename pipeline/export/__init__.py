"""Exports of legs: public AAR JSON (``aar``) and Harbor tasks (``harbor``); CLI in ``__main__``.

``load_legs`` reads a dataset in every form a user or a consumer holds, so that ``race``,
``score``, ``validate`` and ``report`` read what ``generate`` and ``publish`` write:

* a run folder (``legs.parquet`` inside) or a ``legs.parquet`` file (``model.ARTIFACT_SCHEMA``);
* a published release folder (the hub layout ``legs_linear/``, ``legs_dag/`` of Parquet shards),
  one config folder of it, or a single shard (``export.hub.LEG_SCHEMA``);
* a hub repository id ``ORG/NAME`` (or ``ORG/NAME:legs_dag`` for one config), loaded with
  ``datasets.load_dataset`` and cached as the hub library caches;
* an AAR JSON file or a folder of them (the public release's format).
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from pipeline.export.aar import aar_to_leg, read_aar_dir
from pipeline.model import Leg

# "org/name" or "org/name:config", the way the hub names a dataset repository
HUB_REPO_ID = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)(?::(?P<config>[\w.-]+))?")
LEG_CONFIG_PREFIX = "legs_"


class DatasetNotFound(FileNotFoundError):
    """The argument names no dataset in any of the forms ``load_legs`` reads."""


def load_legs(dataset: Any, *, accepted_only: bool = True) -> list[Leg]:
    """The legs of ``dataset`` (a path, a hub repo id, or rows such as a ``datasets.Dataset``)."""
    if not isinstance(dataset, (str, Path)):
        return legs_from_rows(dataset, accepted_only=accepted_only)
    p = Path(dataset)
    if not p.exists():
        m = HUB_REPO_ID.fullmatch(str(dataset))
        if m:
            return legs_from_hub(m["repo"], m["config"])
        raise DatasetNotFound(f"no dataset at {p} (expected a run folder, legs.parquet, a release folder, "
                              "a config folder or shard, AAR JSON, or a hub repo id ORG/NAME)")
    if p.is_dir() and (p / "legs.parquet").is_file():
        p = p / "legs.parquet"
    if p.is_file() and p.suffix == ".parquet":
        return _legs_from_parquet([p], accepted_only)
    if p.is_file() and p.suffix == ".json":
        return [aar_to_leg(json.loads(p.read_text(encoding="utf-8")))]
    if p.is_dir():
        shards = leg_shards(p)
        if shards:
            return _legs_from_parquet(shards, accepted_only)
        legs = read_aar_dir(p)
        if legs:
            return legs
    raise DatasetNotFound(f"no legs at {p} (expected legs.parquet, hub shards under legs_*/, or AAR JSON)")


def leg_shards(folder: Path) -> list[Path]:
    """Parquet shards of leg configs: the folder itself when it is a config folder, else its
    ``legs_*`` config folders (a downloaded or dry-run release)."""
    own = sorted(folder.glob("*.parquet"))
    if own:
        return own
    return sorted(s for config in sorted(folder.glob(LEG_CONFIG_PREFIX + "*")) if config.is_dir()
                  for s in sorted(config.glob("*.parquet")))


def _legs_from_parquet(paths: list[Path], accepted_only: bool) -> list[Leg]:
    legs: list[Leg] = []
    for path in paths:
        table = pq.read_table(path)
        cols = [c for c in ("leg_json", "status", "leg", "golden_trace") if c in table.column_names]
        legs += legs_from_rows(table.select(cols).to_pylist(), accepted_only=accepted_only, where=str(path))
    return legs


def legs_from_rows(rows: Iterable[dict], *, accepted_only: bool = True, where: str = "rows") -> list[Leg]:
    """Legs from artifact rows (``leg_json``) or hub rows (``leg`` without its trace + ``golden_trace``)."""
    legs = []
    for row in rows:
        if "leg_json" in row and row["leg_json"] is not None:
            if accepted_only and row.get("status", "ok") != "ok":
                continue
            legs.append(Leg.from_json(row["leg_json"]))
        elif "leg" in row and "golden_trace" in row:
            body = json.loads(row["leg"])
            body["trace"] = json.loads(row["golden_trace"])
            legs.append(Leg.from_dict(body))
        else:
            raise DatasetNotFound(f"{where}: rows hold neither leg_json nor leg/golden_trace columns")
    return legs


def legs_from_hub(repo_id: str, config: str | None = None) -> list[Leg]:
    """Every leg config of a hub dataset (or the one named), through ``datasets`` and its cache."""
    import datasets
    configs = [config] if config else [c for c in datasets.get_dataset_config_names(repo_id)
                                      if c.startswith(LEG_CONFIG_PREFIX)]
    if not configs:
        raise DatasetNotFound(f"hub dataset {repo_id} has no {LEG_CONFIG_PREFIX}* config")
    legs: list[Leg] = []
    for name in configs:
        legs += legs_from_rows(datasets.load_dataset(repo_id, name, split="test"), where=f"{repo_id}:{name}")
    return legs
