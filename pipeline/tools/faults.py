"""Seeded tool faults: failures, timeouts, malformed responses and latency, for robustness runs.

    python -m pipeline.generate --level easy --count 100 --faults rate=0.1,seed=7
    LEGWORK_FAULTS=rate=0.1,seed=7 python -m pipeline.race ...        (or settings key ``faults``)

Spec: comma-separated ``key=value``; ``rate`` (share of calls that fault, 0..1) and ``seed``,
optionally ``kinds`` (``+``-joined subset of error, timeout, malformed, latency; default all),
``latency_ms`` (a slow answer, default 5), ``timeout_ms`` (how long a timeout waits, default 10),
``retries`` (how often the client retries a faulted call; default: the client's own setting,
``tool_retries``, 3), ``backoff_ms`` (the client's first backoff before retrying an injected fault,
doubling per retry; default 0: no real sleep for a fault made up offline) and ``tools``
(``+``-joined tool names; default every tool). ``off`` or ``none`` means no faults.

Where: ``Toolbox.call`` asks the injector before the record/replay cache, so a fault is never
recorded and a later run without faults gets clean answers from the same cache. Only calls
made from outside a backend fault: a backend's own nested calls run only on a cache miss, so
faulting them would make the outcome depend on what the cache already held.

What a fault looks like to the caller: the registry's exception types, all ``ToolError``s and all
``TRANSIENT_FAILURES``, so the client (``Toolbox.call``) retries them, each try drawn afresh; one
that outlasts the retries reaches the stage, which goes on without that fact or stop where it
can (a probed candidate fact becomes unusable for the attempt) and rejects the leg where it
cannot. Every failed try is kept in the leg's ``metadata["tool_failures"]`` with its outcome. ``error`` raises
``ServiceFailure``; ``timeout`` waits ``timeout_ms`` and raises ``ToolTimeout``; ``malformed``
makes the real call, then hands the response text, corrupted (cut short, a gateway's HTML
page, or the provenance dropped), to the registry's response check, which raises
``MalformedResponse``: a malformed answer never reaches a stage as a dict (no KeyError or
TypeError downstream). ``latency`` only waits ``latency_ms`` and answers.

Deterministic: whether and how a call faults is a function of a SHA-256 of (seed, tool,
canonical arguments, attempt, scope), never of thread timing, so the thread, process and
local runners make the same artifacts. ``attempt`` counts the client's retries of one call;
``scope`` (``fault_scope``, empty by default) lets a caller give independent trials of the
same call independent faults (the race runner scopes each trial).

Faults (and the client's retry settings) are not part of a generation run's key
(``flows.generate.run_key``): they describe the environment the run met, like a flaky network,
not the data set asked for.
Every leg accepted under faults passed every stage and check with clean answers, so a run
interrupted or finished under faults may be resumed in the same ``--out`` without them.
(Which attempts got accepted can differ from a fault-free run; a reproducible data set is one
made with the same faults, or none.)
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TypeVar

from pipeline.cache import canonical_json
from pipeline.tools.errors import TRANSIENT_FAILURES, ServiceFailure, ToolTimeout
from pipeline.tools.spec import TOOLS

Result = TypeVar("Result")   # the registry's ToolResult (its ``response_json`` is what a malformed fault garbles)

KINDS = ("error", "timeout", "malformed", "latency")
_scope: ContextVar[str] = ContextVar("legwork_fault_scope", default="")


class FaultSpecError(ValueError):
    """A fault spec string that cannot be read (the message names the bad part)."""


@dataclass(frozen=True)
class FaultSpec:
    rate: float
    seed: int
    kinds: tuple[str, ...] = KINDS
    latency_ms: float = 5.0
    timeout_ms: float = 10.0
    retries: int | None = None      # None: the client's own setting (Settings.tool_retries)
    backoff_ms: float = 0.0
    tools: tuple[str, ...] | None = None

    def describe(self) -> str:
        parts = [f"rate={self.rate:g}", f"seed={self.seed}", f"kinds={'+'.join(self.kinds)}",
                 f"latency_ms={self.latency_ms:g}", f"timeout_ms={self.timeout_ms:g}"]
        if self.retries is not None:
            parts.append(f"retries={self.retries}")
        if self.backoff_ms:
            parts.append(f"backoff_ms={self.backoff_ms:g}")
        if self.tools:
            parts.append(f"tools={'+'.join(self.tools)}")
        return ",".join(parts)


def parse_faults(text: str | None) -> FaultSpec | None:
    """Read a spec string (see module docstring); None for no faults."""
    if text is None or text.strip().lower() in ("", "off", "none", "0"):
        return None
    fields: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or not value:
            raise FaultSpecError(f"expected key=value, got {part.strip()!r} in {text!r}")
        fields[key.strip()] = value.strip()
    unknown = set(fields) - {"rate", "seed", "kinds", "latency_ms", "timeout_ms", "retries", "backoff_ms", "tools"}
    if unknown:
        raise FaultSpecError(f"unknown key(s) {', '.join(sorted(unknown))}; known: rate, seed, kinds, "
                             "latency_ms, timeout_ms, retries, backoff_ms, tools")
    if "rate" not in fields:
        raise FaultSpecError("rate is required, e.g. rate=0.1,seed=7")
    try:
        spec = FaultSpec(rate=float(fields["rate"]), seed=int(fields.get("seed", 0)),
                         kinds=tuple(fields["kinds"].split("+")) if "kinds" in fields else KINDS,
                         latency_ms=float(fields.get("latency_ms", 5)), timeout_ms=float(fields.get("timeout_ms", 10)),
                         retries=int(fields["retries"]) if "retries" in fields else None,
                         backoff_ms=float(fields.get("backoff_ms", 0)),
                         tools=tuple(fields["tools"].split("+")) if "tools" in fields else None)
    except ValueError as exc:
        raise FaultSpecError(f"bad number in {text!r}: {exc}") from None
    if not 0 <= spec.rate <= 1:
        raise FaultSpecError(f"rate must be between 0 and 1, got {spec.rate}")
    if bad := [k for k in spec.kinds if k not in KINDS]:
        raise FaultSpecError(f"unknown kind(s) {', '.join(bad)}; known: {', '.join(KINDS)}")
    if spec.latency_ms < 0 or spec.timeout_ms < 0 or (spec.retries or 0) < 0 or spec.backoff_ms < 0:
        raise FaultSpecError("latency_ms, timeout_ms, retries and backoff_ms must not be negative")
    if spec.tools and (bad := [t for t in spec.tools if t not in TOOLS]):
        raise FaultSpecError(f"unknown tool(s) {', '.join(bad)}")
    return spec


@contextlib.contextmanager
def fault_scope(key: str):
    """Calls made inside get faults drawn independently of the same calls in another scope."""
    token = _scope.set(key)
    try:
        yield
    finally:
        _scope.reset(token)


def _corrupt(response: str, pick: int) -> str:
    """Three ways a response arrives broken: cut short, an HTML error page, a missing field."""
    if pick == 0:
        return response[: max(1, len(response) // 2)]
    if pick == 1:
        return "<html><body><h1>502 Bad Gateway</h1></body></html>"
    data = json.loads(response)
    data.pop("provenance", None)
    return canonical_json(data)


class FaultInjector:
    """Decides, per call, whether and how it faults, and counts what it injected."""

    def __init__(self, spec: FaultSpec):
        self.spec = spec
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    @classmethod
    def from_text(cls, text: str | None) -> FaultInjector | None:
        spec = parse_faults(text)
        return cls(spec) if spec is not None and spec.rate > 0 else None

    def decide(self, tool: str, args: dict, attempt: int = 0) -> tuple[str | None, int]:
        """(kind or None, a number for the variant of the fault), a pure function of the call."""
        if self.spec.tools is not None and tool not in self.spec.tools:
            return None, 0
        digest = hashlib.sha256(canonical_json(
            [self.spec.seed, tool, args, attempt, _scope.get()]).encode("utf-8")).digest()
        if int.from_bytes(digest[:8], "big") / 2 ** 64 >= self.spec.rate:
            return None, 0
        return self.spec.kinds[digest[8] % len(self.spec.kinds)], digest[9]

    def retries(self, client_default: int) -> int:
        """How often the client retries a faulted call: the spec's ``retries``, else the client's own."""
        return client_default if self.spec.retries is None else self.spec.retries

    def backoff_s(self, attempt: int) -> float:
        """The client's wait before retrying an injected fault (``backoff_ms``, doubling; 0 by default)."""
        return self.spec.backoff_ms / 1000 * 2 ** attempt

    def attempt(self, tool: str, args: dict, attempt: int, do_call: Callable[[], Result],
                check: Callable[[str, str], object]) -> Result:
        """One try of a call (the client's ``attempt``-th), answered through ``do_call`` (the cached
        path) unless this try faults; ``check`` is the registry's response check. A fault raises one
        of the registry's ``TRANSIENT_FAILURES``, marked ``injected``; retrying is the client's job."""
        kind, variant = self.decide(tool, args, attempt)
        if kind is None:
            return do_call()
        with self._lock:
            self.counts[kind] += 1
        if kind == "latency":
            time.sleep(self.spec.latency_ms / 1000)
            return do_call()
        try:
            if kind == "timeout":
                time.sleep(self.spec.timeout_ms / 1000)
                raise ToolTimeout(f"{tool}: no answer within {self.spec.timeout_ms:g} ms (injected fault)")
            if kind == "error":
                raise ServiceFailure(f"{tool}: service unavailable, HTTP 503 (injected fault)")
            result = do_call()  # malformed: the true answer, cut or garbled on its way back
            check(tool, _corrupt(result.response_json, variant % 3))
        except TRANSIENT_FAILURES as exc:
            exc.injected = True
            raise
        raise AssertionError(f"{tool}: the response check let a corrupted response through")


__all__ = ["KINDS", "FaultInjector", "FaultSpec", "FaultSpecError", "fault_scope", "parse_faults"]
