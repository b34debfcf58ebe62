"""One tool path for generation, golden execution, validation and agents.

Backends register an implementation per (tool, backend) with ``@implements``. An
implementation takes the validated arguments and a ``BackendContext`` and returns a
result dict that includes ``provenance`` and ``source``; it raises ``ToolError`` for a
call that cannot be answered (unknown place, date out of range). ``Toolbox.call``
validates arguments against the tool's JSON schema, routes the call to the configured
backend, and records or replays it through the content-addressed cache.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import json
import marshal
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema

from pipeline.cache import CallCache, RecentAnswers, cached_call, canonical_json, file_sha256
from pipeline.config import PROJECT_ROOT, PROVENANCES, Settings, load_settings
from pipeline.tools.errors import TRANSIENT_FAILURES, MalformedResponse, SimulatedRefused, ToolArgumentError, ToolError
from pipeline.tools.faults import FaultInjector
from pipeline.tools.spec import TOOLS, openai_schema

# Bump when an offline backend's logic changes, so old records are not reused. Changes of the
# bundled data (the tool world, the knowledge corpus) are caught by ``bundled_data_digest``.
OFFLINE_DATA_VERSION = "world-2"   # world-2: capitals have one point; calculator number theory; great-circle mode
# the package folders whose code makes the offline backends' answers (the backends, the sandbox, the
# world's tables, the math tools, the snapshot's search): their digest is part of the cache namespace,
# so an answer recorded by other code is never served as this code's (blind race 8, R09: a golden trace
# kept a simulated museum list recorded before the simulator changed, and the racer met today's)
OFFLINE_ANSWER_CODE = ("tools", "world", "mathtools", "snapshot")


@functools.cache
def offline_code_digest() -> str:
    """A short hash of the sources under ``OFFLINE_ANSWER_CODE`` (names and contents)."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for folder in OFFLINE_ANSWER_CODE:
        for path in sorted((package / folder).rglob("*.py")):
            if "__pycache__" not in path.parts:
                digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]
BUNDLED_DATA = ("snapshots/world", "pipeline/mathtools/knowledge")

Implementation = Callable[[dict, "BackendContext"], dict]
_IMPLEMENTATIONS: dict[tuple[str, str], Implementation] = {}
_BACKEND_MODULES = ("pipeline.tools.backends.offline", "pipeline.tools.backends.live")
_loaded = False
_load_lock = threading.Lock()


MAX_BACKOFF_S = 30.0


def backoff_s(base_s: float, attempt: int) -> float:
    """Exponential backoff before retry ``attempt + 1``: base, 2 x base, 4 x base ... (at most 30 s)."""
    return min(base_s * 2 ** attempt, MAX_BACKOFF_S)


# ---- what the calls of one unit of work met (a stage on one leg): transient failures, retried or not
_NOTED: ContextVar[list[dict] | None] = ContextVar("legwork_tool_failures", default=None)


@contextlib.contextmanager
def noting_failures() -> Iterator[list[dict]]:
    """Collect every transient failure the tool calls made inside meet: one entry per failed try,
    ``{"tool", "error", "attempt", "outcome"}``, outcome "retried" (the next try was made) or "gave
    up" (raised to the caller; a caller that goes on without the answer names the cost with
    ``absorbed``). Generation keeps them in the leg's metadata, so no fault goes unrecorded."""
    noted: list[dict] = []
    token = _NOTED.set(noted)
    try:
        yield noted
    finally:
        _NOTED.reset(token)


def absorbed(exc: BaseException, cost: str) -> None:
    """The caller went on without the answer ``exc`` denied it: record what that cost (e.g. "the place
    fact 'Ulm' unusable for this attempt") as the failure's outcome. ``exc`` may be an exception
    raised from the failure (``raise StopFailed(...) from exc``): its causes are looked through."""
    while exc is not None:
        entry = getattr(exc, "noted", None)
        if isinstance(entry, dict):
            entry["outcome"] = cost
            return
        exc = exc.__cause__


def check_response(name: str, response: str) -> dict:
    """The result object of a response text, or ``MalformedResponse`` saying what is wrong with it,
    so that a broken answer (from a backend, the cache, or an injected fault) never reaches a
    caller as a dict missing its fields."""
    try:
        data = json.loads(response)
    except (json.JSONDecodeError, TypeError) as exc:
        raise MalformedResponse(f"{name}: malformed response: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise MalformedResponse(f"{name}: malformed response: a JSON {type(data).__name__}, not an object")
    if data.get("provenance") not in PROVENANCES:
        raise MalformedResponse(f"{name}: malformed response: no valid provenance ({data.get('provenance')!r})")
    if "error" in data and not isinstance(data["error"], str):
        raise MalformedResponse(f"{name}: malformed response: error is not a message")
    return data


# set while a backend runs: its nested tool calls are part of its computation and never fault
_IN_BACKEND: ContextVar[bool] = ContextVar("legwork_in_backend", default=False)


def implements(tool: str, backend: str) -> Callable[[Implementation], Implementation]:
    if tool not in TOOLS:
        raise KeyError(f"no tool named {tool!r} in pipeline.tools.spec")

    def register(fn: Implementation) -> Implementation:
        _IMPLEMENTATIONS[(tool, backend)] = fn
        return fn

    return register


def _load_backends() -> None:
    global _loaded
    with _load_lock:
        if not _loaded:
            for module in _BACKEND_MODULES:
                importlib.import_module(module)
            _loaded = True


@dataclass
class BackendContext:
    """What an implementation may use: settings, and a way to call other tools (with caching)."""

    settings: Settings
    toolbox: Toolbox
    shared: dict = field(default_factory=dict)

    def call(self, name: str, args: dict) -> dict:
        token = _IN_BACKEND.set(True)
        try:
            return self.toolbox.call(name, args).data
        finally:
            _IN_BACKEND.reset(token)


@dataclass(frozen=True)
class ToolResult:
    tool: str
    args: dict
    ok: bool
    data: dict            # the result object (value fields, units, provenance, source) or {error}
    response_json: str    # the exact canonical bytes recorded in the cache
    served_from: str      # computed | cache | replay

    @property
    def provenance(self) -> str | None:
        return self.data.get("provenance")

    @property
    def error(self) -> str | None:
        return None if self.ok else self.data.get("error")


_VALIDATORS: dict[str, jsonschema.protocols.Validator] = {}


def _validator(name: str) -> jsonschema.protocols.Validator:
    validator = _VALIDATORS.get(name)
    if validator is None:
        validator = _VALIDATORS[name] = jsonschema.Draft202012Validator(TOOLS[name]["parameters"])
    return validator


@functools.cache
def _fast_check(name: str):
    """The tool's schema compiled to Python by fastjsonschema: some 8 times faster than jsonschema on a
    hundred places (``maps_elevation``), whose check was a third of a large world's pre-validation."""
    return fastjsonschema.compile(TOOLS[name]["parameters"])


@functools.lru_cache(maxsize=1 << 14)   # a run asks the same arguments again and again; a schema is fixed
def _valid_args(name: str, args_json: str) -> bool:
    """The compiled check; what it refuses, ``validate_args`` hands to jsonschema, which says why (or takes
    it: jsonschema's reading decides, tests/test_tool_schemas.py holds the two together)."""
    try:
        _fast_check(name)(json.loads(args_json))   # a fresh copy: fastjsonschema writes defaults into it
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def args_key(args: Any) -> str | None:
    """The arguments' canonical JSON (what a call is kept and recorded by), None where they have none."""
    try:
        return canonical_json(args)
    except (TypeError, ValueError):
        return None   # not JSON: the schema says why


def validate_args(name: str, args: Any, key: str | None = None) -> dict:
    """Check a call against the tool's schema; raise ToolArgumentError with a readable reason. ``key``:
    ``args_key(args)`` where the caller has it already."""
    if name not in TOOLS:
        raise ToolArgumentError(f"unknown tool {name!r}; known tools: {', '.join(TOOLS)}")
    if not isinstance(args, dict):
        raise ToolArgumentError(f"{name}: arguments must be a JSON object, got {type(args).__name__}")
    if key is None:
        key = args_key(args)
    if key is not None and _valid_args(name, key):
        return args
    validator = _validator(name)
    errors = sorted(validator.iter_errors(args), key=lambda e: list(e.path))
    if errors:
        reasons = "; ".join(
            f"{'/'.join(map(str, e.path)) or '(arguments)'}: {e.message}" for e in errors[:5]
        )
        raise ToolArgumentError(f"{name}: invalid arguments: {reasons}")
    return args


_DIGESTS: dict[str, str] = {}


def bundled_data_digest(world_dir) -> str:
    """A short content hash of the data the offline backends answer from (computed once per process)."""
    key = str(world_dir)
    if key not in _DIGESTS:
        roots = [Path(world_dir)] + [PROJECT_ROOT / p for p in BUNDLED_DATA[1:]]
        lines = []
        for root in roots:
            for f in sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []:
                lines.append(f"{f.relative_to(root).as_posix()} {file_sha256(f)}")
        _DIGESTS[key] = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]
    return _DIGESTS[key]


RECENT_ANSWER_BYTES = 96 << 20   # answers a toolbox keeps in memory (a whole release records ~17 MB of text, as much marshalled)


class Toolbox:
    """Calls tools through the configured backends and the record/replay cache."""

    def __init__(self, settings: Settings | None = None, cache: CallCache | None | bool = True):
        self.settings = settings or load_settings()
        if cache is True:
            cache = CallCache(self.settings.cache_path)
        self.cache: CallCache | None = cache or None
        # answers recorded or read already, kept in memory (only beside a cache: without one every call computes)
        # each as its text and its checked object marshalled (marshal.loads makes a copy ~3x faster than
        # json.loads parses the text: a release asks ~350,000 calls, ~17,000 of them distinct)
        self._recent = RecentAnswers(RECENT_ANSWER_BYTES, size=lambda kept: len(kept[0]) + len(kept[1])) \
            if self.cache is not None else None
        self.shared: dict = {}
        self.faults = FaultInjector.from_text(self.settings.faults)  # None unless fault injection is on
        _load_backends()

    def namespace(self, backend: str) -> str:
        recorded = self.settings.replay_of if backend == "replay" else backend
        if recorded == "offline":
            return (f"offline/{OFFLINE_DATA_VERSION}/{offline_code_digest()}/"
                    f"{bundled_data_digest(self.settings.world_dir)}/{self._snapshot_hash()}")
        return "live"

    def _snapshot_hash(self) -> str:
        cached = self.shared.get("snapshot_hash")
        if cached is None:
            manifest = self.settings.snapshot_dir / "manifest.json"
            cached = json.loads(manifest.read_text())["hash"] if manifest.is_file() else "no-snapshot"
            self.shared["snapshot_hash"] = cached
        return cached

    def call(self, name: str, args: dict) -> ToolResult:
        """Answer one call. A transient failure (``TRANSIENT_FAILURES``: HTTP 5xx, timeout, garbled
        answer) is retried ``settings.tool_retries`` times with exponential backoff from
        ``settings.tool_backoff_s`` before it reaches the caller, as a live client must. Injected
        faults (above the cache: never recorded) are drawn afresh per try and back off by the fault
        spec's ``backoff_ms`` (0 by default: offline runs never wait on a fault they made up)."""
        key = args_key(args)
        args = validate_args(name, args, key)
        injected = self.faults is not None and not _IN_BACKEND.get()
        retries = self.faults.retries(self.settings.tool_retries) if injected else self.settings.tool_retries
        for attempt in range(retries + 1):
            try:
                if injected:
                    return self.faults.attempt(name, args, attempt, lambda: self._call(name, args, key), check_response)
                return self._call(name, args, key)
            except TRANSIENT_FAILURES as exc:
                last = attempt == retries
                noted = _NOTED.get()
                if noted is not None:
                    exc.noted = {"tool": name, "error": str(exc)[:200], "attempt": attempt,
                                 "outcome": "gave up" if last else "retried"}
                    noted.append(exc.noted)
                if last:
                    raise
                wait = (self.faults.backoff_s(attempt) if getattr(exc, "injected", False)
                        else backoff_s(self.settings.tool_backoff_s, attempt))
                if wait > 0:
                    time.sleep(wait)
        raise AssertionError("unreachable")

    def _call(self, name: str, args: dict, key: str | None) -> ToolResult:
        """One try: from memory (``key``: ``args_key(args)``), the record, or the backend."""
        backend = self.settings.backend_for(name)

        def compute() -> tuple[str, str, bool, str | None]:
            impl = _IMPLEMENTATIONS.get((name, backend))
            if impl is None:
                raise ToolError(f"{name}: no {backend} backend")
            ctx = BackendContext(self.settings, self, self.shared)
            try:
                data = impl(dict(args), ctx)
            except (SimulatedRefused, *TRANSIENT_FAILURES):   # refused, or failed this time: never recorded
                raise
            except ToolError as exc:
                data = {"error": str(exc), "provenance": "offline-data" if backend == "offline" else backend}
                return canonical_json(data), data["provenance"], False, str(exc)
            prov = data.get("provenance")
            if prov not in PROVENANCES:
                raise AssertionError(f"{name}/{backend} returned no valid provenance: {prov!r}")
            if prov == "simulated" and not self.settings.allow_simulated:
                raise SimulatedRefused(f"{name}: only a simulated answer exists for {canonical_json(args)}"
                                       " and simulated values are not allowed")
            return canonical_json(data), prov, True, None

        namespace = self.namespace(backend)
        recent_key = (name, namespace, key) if self._recent is not None and key is not None else None
        kept = self._recent.get(recent_key) if recent_key is not None else None
        if kept is not None:
            response, packed = kept
            data = marshal.loads(packed)   # a fresh copy of the checked object: a caller may change its own
            served = "replay" if backend == "replay" else "cache"
        else:
            response, served = cached_call(self.cache, kind="tool", name=name, request=args,
                                           namespace=namespace, mode=backend, compute=compute)
            data = check_response(name, response)
            if recent_key is not None:
                self._recent.put(recent_key, (response, marshal.dumps(data)))
        if data.get("provenance") == "simulated" and not self.settings.allow_simulated:
            raise SimulatedRefused(f"{name}: the recorded answer is simulated and simulated values are not allowed")
        return ToolResult(name, args, "error" not in data, data, response, served)

    def schemas(self) -> list[dict]:
        return [openai_schema(name) for name in TOOLS]


__all__ = [
    "BUNDLED_DATA",
    "OFFLINE_DATA_VERSION",
    "BackendContext",
    "ToolResult",
    "Toolbox",
    "absorbed",
    "backoff_s",
    "bundled_data_digest",
    "check_response",
    "implements",
    "noting_failures",
    "validate_args",
]
