"""One settings object for the whole project.

Settings come from (lowest to highest precedence): built-in defaults, a TOML file
(``legwork.toml`` in the working directory, or the file named by ``LEGWORK_CONFIG``),
environment variables, and explicit keyword overrides (the CLIs pass their flags here).

Environment variables:
  LEGWORK_CONFIG             path of a TOML settings file
  LEGWORK_BACKEND            default backend for every tool: offline | live | replay
  LEGWORK_BACKEND_<TOOL>     backend for one tool, e.g. LEGWORK_BACKEND_MAPS_ELEVATION=live
  LEGWORK_SNAPSHOT           snapshot directory (default: snapshots/default)
  LEGWORK_WORLD              offline tool-world directory (default: snapshots/world)
  LEGWORK_CACHE              record/replay cache file (default: data/cache/cache.sqlite)
  LEGWORK_SHARED_CACHE       what depends on installed packages alone, kept across snapshots (default:
                             ~/.cache/legwork)
  LEGWORK_TOOL_LOG           JSONL tool log for the agent executor
  LEGWORK_ALLOW_SIMULATED    1/0: may tools answer with simulated values
  LEGWORK_LLM_BASE_URL, LEGWORK_LLM_MODEL, LEGWORK_LLM_API_KEY
  LEGWORK_SANDBOX_ALLOW_NONE 1/0: may agent code run without isolation when no sandbox works
  LEGWORK_SANDBOX_ISOLATION  force one sandbox mode for agent code: bwrap | unshare | none
  LEGWORK_FAULTS             inject tool faults, e.g. rate=0.1,seed=7 (see pipeline.tools.faults)
  LEGWORK_TOOL_RETRIES       how often a tool call is retried after a transient failure (default 3)
  LEGWORK_TOOL_BACKOFF_S     the first wait before such a retry, doubling per retry (default 0.5)
An unknown backend name, tool name or setting key is a ``ConfigError`` naming the bad value.
"""
from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from pipeline.tools.faults import FaultSpecError, parse_faults
from pipeline.tools.spec import TOOL_NAMES

BACKENDS = ("offline", "live", "replay")
PROVENANCES = ("snapshot", "offline-data", "live", "replay", "simulated")

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class ConfigError(ValueError):
    """A setting has a value the project cannot use; the message names it."""


@dataclass(frozen=True)
class Settings:
    snapshot_dir: Path = PROJECT_ROOT / "snapshots" / "default"
    world_dir: Path = PROJECT_ROOT / "snapshots" / "world"
    cache_path: Path = PROJECT_ROOT / "data" / "cache" / "cache.sqlite"
    # What depends only on the snapshot and the code (page profiles), computed once and kept
    # (``StageContext.derived``): no answer comes from it, so runs with other call caches share it.
    derived_dir: Path = PROJECT_ROOT / "data" / "cache" / "derived"
    templates_dir: Path = PROJECT_ROOT / "templates"
    prompts_dir: Path = PROJECT_ROOT / "prompts"
    default_backend: str = "offline"
    backends: Mapping[str, str] = field(default_factory=dict)
    allow_simulated: bool = True
    # Roadblock templates that only a simulated provider can answer offline (place ratings, crypto)
    # are left out of legs unless this is on (real data first; the card lists them).
    simulated_templates: bool = False
    tool_log: Path | None = None
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    # Which recorded backend a replay answers for (its cache namespace).
    replay_of: str = "offline"
    # Live backends: per-service settings such as API keys and base URLs.
    live: Mapping[str, Any] = field(default_factory=dict)
    # Run agent code (python_execute_code) with resource limits only when no sandbox works here.
    # Off by default: a machine without bubblewrap or root then gets a clear error instead.
    sandbox_allow_unisolated: bool = False
    # Force one mode (bwrap | unshare | none; "none" counts as asking for no isolation); None = best.
    sandbox_isolation: str | None = None
    # Fault injection for robustness runs (pipeline.tools.faults spec string); None = no faults.
    faults: str | None = None
    # The tool client retries a transient failure (HTTP 5xx, timeout, garbled answer) this often,
    # waiting tool_backoff_s, then twice that, ... (injected faults wait by their spec's backoff_ms).
    tool_retries: int = 3
    tool_backoff_s: float = 0.5

    def backend_for(self, tool: str) -> str:
        return self.backends.get(tool, self.default_backend)

    def with_overrides(self, **overrides: Any) -> Settings:
        return _validated(replace(self, **{k: v for k, v in overrides.items() if v is not None}))


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"{name}: expected a boolean (1/0, true/false), got {value!r}")


def _validated(settings: Settings) -> Settings:
    if settings.default_backend not in BACKENDS:
        raise ConfigError(
            f"unknown backend {settings.default_backend!r}; choose one of {', '.join(BACKENDS)}"
        )
    if settings.replay_of not in ("offline", "live"):
        raise ConfigError(f"replay_of must be 'offline' or 'live', got {settings.replay_of!r}")
    if settings.sandbox_isolation not in (None, "bwrap", "unshare", "none"):
        raise ConfigError(f"sandbox_isolation must be bwrap, unshare or none, got {settings.sandbox_isolation!r}")
    if settings.tool_retries < 0 or settings.tool_backoff_s < 0:
        raise ConfigError(f"tool_retries and tool_backoff_s must not be negative, got {settings.tool_retries} "
                          f"and {settings.tool_backoff_s}")
    if settings.faults:
        try:
            parse_faults(settings.faults)
        except FaultSpecError as exc:
            raise ConfigError(f"faults: {exc}") from None
    for tool, backend in settings.backends.items():
        if tool not in TOOL_NAMES:
            raise ConfigError(f"backend set for unknown tool {tool!r}")
        if backend not in BACKENDS:
            raise ConfigError(
                f"unknown backend {backend!r} for tool {tool!r}; choose one of {', '.join(BACKENDS)}"
            )
    return settings


_PATH_KEYS = {"snapshot_dir", "world_dir", "cache_path", "derived_dir", "templates_dir", "prompts_dir", "tool_log"}
_BOOL_KEYS = {"allow_simulated", "simulated_templates", "sandbox_allow_unisolated"}
_NUMBER_KEYS = {"tool_retries": int, "tool_backoff_s": float}


def _from_mapping(data: Mapping[str, Any], origin: str) -> dict[str, Any]:
    known = {f.name for f in fields(Settings)}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(f"{origin}: unknown setting {key!r}")
        if key in _PATH_KEYS and value is not None:
            value = Path(value)
        if key in _BOOL_KEYS:
            value = _as_bool(key, value)
        if key in _NUMBER_KEYS:
            try:
                value = _NUMBER_KEYS[key](value)
            except (TypeError, ValueError):
                raise ConfigError(f"{origin}: {key} must be a number, got {value!r}") from None
        out[key] = value
    return out


def load_settings(
    config_file: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Build the settings from file, environment and overrides (see module docstring)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    path = config_file or env.get("LEGWORK_CONFIG")
    if path is None and Path("legwork.toml").is_file():
        path = "legwork.toml"
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"config file not found: {p}")
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{p}: not valid TOML: {exc}") from exc
        values.update(_from_mapping(data, str(p)))

    simple = {
        "LEGWORK_BACKEND": "default_backend",
        "LEGWORK_SNAPSHOT": "snapshot_dir",
        "LEGWORK_WORLD": "world_dir",
        "LEGWORK_CACHE": "cache_path",
        "LEGWORK_DERIVED": "derived_dir",
        "LEGWORK_TOOL_LOG": "tool_log",
        "LEGWORK_ALLOW_SIMULATED": "allow_simulated",
        "LEGWORK_SIMULATED_TEMPLATES": "simulated_templates",
        "LEGWORK_LLM_BASE_URL": "llm_base_url",
        "LEGWORK_LLM_MODEL": "llm_model",
        "LEGWORK_LLM_API_KEY": "llm_api_key",
        "LEGWORK_REPLAY_OF": "replay_of",
        "LEGWORK_SANDBOX_ALLOW_NONE": "sandbox_allow_unisolated",
        "LEGWORK_SANDBOX_ISOLATION": "sandbox_isolation",
        "LEGWORK_FAULTS": "faults",
        "LEGWORK_TOOL_RETRIES": "tool_retries",
        "LEGWORK_TOOL_BACKOFF_S": "tool_backoff_s",
    }
    env_values = {key: env[var] for var, key in simple.items() if env.get(var)}
    values.update(_from_mapping(env_values, "environment"))
    backends = dict(values.get("backends", {}))
    for var, value in env.items():
        if var.startswith("LEGWORK_BACKEND_") and value:
            backends[var[len("LEGWORK_BACKEND_"):].lower()] = value
    values["backends"] = backends
    values.update(_from_mapping({k: v for k, v in overrides.items() if v is not None}, "override"))
    return _validated(Settings(**values))
