"""Content-addressed record/replay store for every external effect (tool calls, LLM calls).

A record is keyed by the SHA-256 of the canonical JSON of what was asked (kind, name,
arguments, and the namespace that says which backend and data version answered).
The stored response is the exact canonical JSON text that was returned, so a replay
gives the same bytes. SQLite in WAL mode keeps concurrent writers (threads, processes,
Dask workers on one machine) safe; a record is written once (first writer wins).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.usage import UserError


def canonical_json(obj: Any, default=None) -> str:
    """The one serialisation used for keys, stored responses and artifacts. ``default`` turns an object
    JSON has no form for into one it has (``model.Leg.to_json``: a dataclass into its fields)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=default)


def content_key(kind: str, name: str, request: Any, namespace: str) -> str:
    payload = canonical_json({"kind": kind, "name": name, "request": request, "namespace": namespace})
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def file_sha256(path) -> str:
    """SHA-256 of a file's bytes, read in blocks (snapshot sources, release shards)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class ReplayMiss(LookupError):
    """Replay mode was asked for a call that was never recorded."""


@dataclass(frozen=True)
class Record:
    key: str
    kind: str
    name: str
    request: str
    response: str
    provenance: str
    ok: bool
    error: str | None
    created_at: float


_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    namespace TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    provenance TEXT NOT NULL,
    ok INTEGER NOT NULL,
    error TEXT,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS records_kind_name ON records(kind, name);
"""


def connect_wal(path: str | Path, *, timeout: float = 60.0, check_same_thread: bool = True) -> sqlite3.Connection:
    """A connection in WAL mode that processes opening one new file at once can all get.

    Switching a file into WAL needs a lock SQLite does not wait for (the busy timeout is not
    consulted there), so several processes creating the same cache at once saw 'database is
    locked' (a Dask release of two workers). The switch is retried until ``timeout``; the mode is
    kept in the file, so once one process has set it the others find it set."""
    conn = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=check_same_thread)
    deadline = time.monotonic() + timeout
    delay = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return conn
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() >= deadline:
                conn.close()
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


class CacheUnusable(UserError):
    """The call cache's path cannot hold a SQLite database (a folder, a file of something else, no
    permission): the path is the user's (``--cache``, ``LEGWORK_CACHE``), so a command says it in one line."""


class CallCache:
    """SQLite-backed record/replay store. One instance may be shared by threads."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        try:
            with self._connect() as conn:
                conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:   # opened, or read, as SQLite: never a database there
            raise CacheUnusable(f"the call cache {self.path} cannot be used: {exc}") from None

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect_wal(self.path, timeout=60)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Record | None:
        row = self._connect().execute(
            "SELECT key, kind, name, request, response, provenance, ok, error, created_at"
            " FROM records WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        return Record(row[0], row[1], row[2], row[3], row[4], row[5], bool(row[6]), row[7], row[8])

    def put(
        self,
        key: str,
        *,
        kind: str,
        name: str,
        namespace: str,
        request: Any,
        response: str,
        provenance: str,
        ok: bool,
        error: str | None = None,
    ) -> None:
        """Store a response once; a concurrent writer of the same key keeps the first."""
        self._connect().execute(
            "INSERT OR IGNORE INTO records"
            " (key, kind, name, namespace, request, response, provenance, ok, error, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, kind, name, namespace, canonical_json(request), response, provenance, int(ok), error, time.time()),
        )

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return self._connect().execute("SELECT COUNT(*) FROM records").fetchone()[0]
        return self._connect().execute("SELECT COUNT(*) FROM records WHERE kind = ?", (kind,)).fetchone()[0]

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def __getstate__(self):  # picklable for process and Dask task runners
        return {"path": str(self.path)}

    def __setstate__(self, state):
        self.__init__(state["path"])


class RecentAnswers:
    """The answers a process gave last, by request, kept in memory up to ``max_bytes`` (``size`` of each
    answer; least recently used dropped first). A run asks the same calls hundreds of thousands of times
    (the solver, verbalize's checks and the golden run read one page again and again); the SQLite record
    stays the record, this spares its lookup and the request's hashing. Safe across threads."""

    def __init__(self, max_bytes: int, size: Callable[[Any], int] = len):
        self.max_bytes = max_bytes
        self.size = size
        self._kept: OrderedDict[Any, Any] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key) -> Any | None:
        with self._lock:
            response = self._kept.get(key)
            if response is not None:
                self._kept.move_to_end(key)
            return response

    def put(self, key, response) -> None:
        size = self.size(response)
        if size > self.max_bytes:
            return
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = response
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, dropped = self._kept.popitem(last=False)
                self._bytes -= self.size(dropped)


def cached_call(
    cache: CallCache | None,
    *,
    kind: str,
    name: str,
    request: Any,
    namespace: str,
    mode: str,
    compute,
) -> tuple[str, str]:
    """Answer ``request`` from the cache or by ``compute()``; return (response_json, served_from).

    ``compute`` returns ``(response_json, provenance, ok, error)``. In ``replay`` mode only
    the cache answers and a miss raises ``ReplayMiss`` naming the call. Otherwise a cached
    record is reused (so a re-run never asks twice) and a new answer is recorded.
    """
    key = content_key(kind, name, request, namespace)
    if cache is not None:
        record = cache.get(key)
        if record is not None:
            return record.response, ("replay" if mode == "replay" else "cache")
    if mode == "replay":
        raise ReplayMiss(f"replay: no recorded {kind} call {name} {canonical_json(request)} (namespace {namespace})")
    response, provenance, ok, error = compute()
    if cache is not None:
        cache.put(key, kind=kind, name=name, namespace=namespace, request=request,
                  response=response, provenance=provenance, ok=ok, error=error)
    return response, "computed"
