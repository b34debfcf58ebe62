"""What every stage shares: the context it runs in, the rejection signal, seeded RNGs,
and re-indexing of stops (used when stages drop or insert stops)."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import random
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline import expressions, refs
from pipeline.cache import CallCache, connect_wal
from pipeline.catalog import LevelPreset, load_presets
from pipeline.config import Settings
from pipeline.llm import LLMClient
from pipeline.model import Leg, Stop
from pipeline.refs import value_inputs
from pipeline.snapshot.store import MalformedPage, SnapshotStore
from pipeline.tools.registry import Toolbox
from pipeline.versions import answer_settings, code_version, data_version

STAGES = ("crawl", "plan", "build", "prevalidate", "link", "diamond", "golden", "verbalize")


class Rejected(Exception):
    """This leg cannot go on; the message is the reason recorded in rejected.parquet."""


PAGE_CACHE = 4096   # parsed pages a context keeps (a page's JSON parse was 5% of a run)
KEPT_IN_MEMORY = 20_000   # kept page values a context also holds in memory, the last used (the rest are on disk)


_COMPUTING = threading.local()   # kept or derived values being computed on this thread (one nested in another)
DERIVED_COMPUTED: list[tuple[str, float]] = []   # (name, seconds) of every ``derived`` value this process computed


class KeptStore:
    """Values by item (a page title) in one SQLite file, written as computed (``StageContext.kept``).
    Processes share it (WAL, a busy timeout; the first writer of an item wins, and every writer
    computes the same value); an unreadable file or row is computed again, a read-only folder
    keeps nothing. Each value computed leaves its cost (``cost``: seconds, counted only for a value
    not computed inside another), so a run can say what it paid for the pages it met first."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = connect_wal(path, timeout=30, check_same_thread=False)
            db.execute("PRAGMA synchronous=OFF")
            db.execute("CREATE TABLE IF NOT EXISTS kept (item TEXT PRIMARY KEY, value BLOB NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS cost (item TEXT PRIMARY KEY, seconds REAL NOT NULL)")
            self._db = db
        except sqlite3.Error:
            self._db = None

    def get_or_compute(self, item: str, compute):
        if self._db is not None:
            try:
                with self._lock:
                    row = self._db.execute("SELECT value FROM kept WHERE item = ?", (item,)).fetchone()
                if row is not None:
                    return pickle.loads(row[0])
            except (sqlite3.Error, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError,
                    ValueError):
                pass
        value, seconds = _timed(compute)
        if self._db is not None:
            try:
                with self._lock:
                    self._db.execute("INSERT OR IGNORE INTO kept (item, value) VALUES (?, ?)",
                                     (item, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)))
                    self._db.execute("INSERT OR IGNORE INTO cost (item, seconds) VALUES (?, ?)", (item, seconds))
            except sqlite3.Error:
                pass
        return value


def _timed(compute) -> tuple[Any, float]:
    """``compute()`` and the seconds it took, 0.0 inside another timed computation (counted there)."""
    depth = getattr(_COMPUTING, "depth", 0)
    started = time.perf_counter()
    _COMPUTING.depth = depth + 1
    try:
        value = compute()
    finally:
        _COMPUTING.depth = depth
    return value, (time.perf_counter() - started if depth == 0 else 0.0)


def kept_tally(folder: Path, key: str) -> tuple[int, float]:
    """(values, seconds spent computing them) kept under ``key`` in ``folder``: read before and after a
    run, the difference is what the run computed for the pages it met first (its one-off cost)."""
    count, seconds = 0, 0.0
    for path in sorted(folder.glob(f"*-{key}.sqlite")):
        try:
            with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
                n, total = db.execute("SELECT count(*), coalesce(sum(seconds), 0) FROM cost").fetchone()
        except sqlite3.Error:   # a file of an older layout (no cost table) or unreadable: nothing counted
            continue
        count, seconds = count + n, seconds + total
    return count, seconds


# derived data loaded in this process, by file and its modification time and size (its name holds
# every key it depends on; the time and size tell a file written again): a second context of the same process (the runs of a release, a benchmark's
# legs one by one) does not unpickle it again; read-only to every reader
_DERIVED_LOADED: dict[tuple[Path, int, int], Any] = {}


@dataclass
class StageContext:
    settings: Settings
    toolbox: Toolbox
    presets: dict[str, LevelPreset]
    generation: dict[str, Any]
    llm: Any = None                       # pipeline.llm.LLMClient when configured
    _store: Any = None
    _memo: dict = field(default_factory=dict)
    _pages: dict = field(default_factory=dict)   # title -> parsed page, the last PAGE_CACHE read
    _recent_kept: OrderedDict = field(default_factory=OrderedDict)   # the last KEPT_IN_MEMORY kept values used
    _lock: threading.RLock = field(default_factory=threading.RLock)  # re-entrant: a memo may read pages

    @classmethod
    def create(cls, settings: Settings, preset_overrides: list[str] | None = None, toolbox: Toolbox | None = None,
               llm: Any = None) -> StageContext:
        presets, generation = load_presets(preset_overrides, settings.templates_dir)
        return cls(settings, toolbox or Toolbox(settings), presets, generation, llm)

    @property
    def store(self):
        if self._store is None:
            self._store = SnapshotStore.open(self.settings.snapshot_dir, index_dir=self.settings.derived_dir)
        return self._store

    def page(self, title: str):
        """A snapshot page, or None when it is missing or malformed (a malformed page is noted
        in ``bad_pages`` and costs only the legs that would have used it)."""
        cached = self._pages.get(title)
        if cached is not None:
            return cached
        try:
            page = self.store.get(title)
        except MalformedPage as exc:
            with self._lock:
                self._memo.setdefault("bad_pages", {})[title] = str(exc)
            return None
        if page is not None:   # read-only: stages never change a page, so one parse serves every leg
            with self._lock:
                if len(self._pages) >= PAGE_CACHE:
                    self._pages.pop(next(iter(self._pages)))
                self._pages[title] = page
        return page

    def search_titles(self, query: str, k: int) -> list[str]:
        """The titles a ``web_search`` for ``query`` shows, best first. With the snapshot's search
        (the offline backend) they are read from the store without the snippets, the same titles in
        less time; any other backend is asked through the toolbox (``ToolError`` and transient
        failures reach the caller)."""
        if self.settings.backend_for("web_search") == "offline":
            return [hit["title"] for hit in self.store.search(query, k=k, snippets=False)]
        result = self.toolbox.call("web_search", {"query": query, "num_results": k})
        return [hit["title"] for hit in result.data.get("results", [])] if result.ok else []

    @property
    def bad_pages(self) -> dict[str, str]:
        """title -> why the page could not be read (malformed in the snapshot)."""
        return dict(self._memo.get("bad_pages", {}))

    def memo(self, key: str, compute):
        with self._lock:
            if key not in self._memo:
                self._memo[key] = compute()
            return self._memo[key]

    def derived(self, name: str, compute):
        """``memo`` for what depends only on the snapshot and the code (every page's profile): kept on
        disk (``Settings.derived_dir``) under the snapshot's hash, the tool world's version (facts name
        countries by its tables) and the code version, so that only the
        first process after a change computes it and every later run, worker and test loads it."""
        def load_or_compute():
            data = hashlib.sha256(data_version(self.settings).encode()).hexdigest()[:8]   # the tool world too
            key = f"{self.store.hash[:16]}-{data}-{code_version(self.settings)}"
            path = self.settings.derived_dir / f"{name}-{key}.pickle"
            try:
                stat = path.stat()
                seen = (path, stat.st_mtime_ns, stat.st_size)
                if seen in _DERIVED_LOADED:
                    return _DERIVED_LOADED[seen]
                _DERIVED_LOADED[seen] = value = pickle.loads(path.read_bytes())
                return value
            except FileNotFoundError:
                pass
            except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError):
                pass   # unreadable (a crash mid-write cannot leave one: writes are atomic): computed again
            value, seconds = _timed(compute)
            DERIVED_COMPUTED.append((name, seconds))
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
                tmp.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
                os.replace(tmp, path)
            except OSError:
                pass   # a read-only cache folder costs time, not correctness
            return value
        return self.memo(f"derived|{name}", load_or_compute)

    def kept(self, name: str, item: str, compute):
        """``memo_unfaulted`` for a per-page value that depends only on the snapshot, the tool world,
        the code and the settings that change answers (a page's hops): kept on disk as pages are met
        (one SQLite file per name and key beside ``derived``), so a later process reads what any
        earlier one computed. Never under fault injection (a faulted value is one leg's, not the
        snapshot's), nor with a live backend, whose answers are not the snapshot's to keep."""
        if getattr(self.toolbox, "faults", None) is not None:
            return compute()
        if self._live():
            return self.memo(f"{name}|{item}", compute)
        key = f"{name}|{item}"
        with self._lock:   # held while computing, as ``memo`` does: one computation of a value at a time
            recent = self._recent_kept
            if key in recent:
                recent.move_to_end(key)
                return recent[key]
            value = recent[key] = self._kept_store(name).get_or_compute(item, compute)
            if len(recent) > KEPT_IN_MEMORY:   # a large world's release meets tens of thousands of pages:
                recent.popitem(last=False)      # their values stay on disk, not all in every process
            return value

    def _live(self) -> bool:
        return self.settings.default_backend != "offline" or any(
            b != "offline" for b in self.settings.backends.values())

    def kept_key(self) -> str:
        """What kept values depend on: the snapshot, the tool world's data, the settings that change
        answers and the code version (part of each kept file's name)."""
        settings = hashlib.sha256(json.dumps(answer_settings(self.settings), sort_keys=True,
                                             default=str).encode()).hexdigest()[:8]
        data = hashlib.sha256(data_version(self.settings).encode()).hexdigest()[:8]
        return f"{self.store.hash[:16]}-{data}-{settings}-{code_version(self.settings)}"

    def kept_tally(self) -> tuple[int, float]:
        """(values, seconds of computing them) kept for this context's key so far (``kept_tally``)."""
        return kept_tally(self.settings.derived_dir, self.kept_key())

    def _kept_store(self, name: str) -> KeptStore:
        return self.memo(f"kept-store|{name}",
                         lambda: KeptStore(self.settings.derived_dir / f"{name}-{self.kept_key()}.sqlite"))

    def memo_unfaulted(self, key: str, compute):
        """``memo`` for a value read through tools, kept only when faults are not being injected. Injected
        faults are drawn per leg (``fault_scope``), so a value shared between legs would carry the
        faults, and their record, of whichever leg computed it first, which depends on the order the
        workers ran in: under fault injection every leg reads for itself (one thread or two give the
        same bytes)."""
        if getattr(self.toolbox, "faults", None) is not None:
            return compute()
        return self.memo(key, compute)

    @classmethod
    def for_worker(cls, settings: Settings, preset_overrides: tuple[str, ...] = ()) -> StageContext:
        """One context per process and configuration: what process and Dask workers use, since
        only plain settings travel to them."""
        key = (repr(settings), tuple(preset_overrides))
        with _WORKER_LOCK:
            ctx = _WORKER_CONTEXTS.get(key)
            if ctx is None:
                llm = None
                if settings.llm_base_url and settings.llm_model:
                    llm = LLMClient(settings, CallCache(settings.cache_path))
                ctx = _WORKER_CONTEXTS[key] = cls.create(settings, list(preset_overrides), llm=llm)
            return ctx


_WORKER_CONTEXTS: dict = {}
_WORKER_LOCK = threading.Lock()


def rng_for(leg: Leg, stage: str) -> random.Random:
    """A stage's randomness depends only on the leg's identity and the stage name."""
    digest = hashlib.sha256(f"{leg.leg_id}|{leg.seed}|{stage}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def reindex(leg: Leg, order: list[int]) -> None:
    """Keep the stops listed in ``order`` (old indices, in their new order) and rewrite every reference."""
    mapping = {old: new for new, old in enumerate(order)}
    by_old = {s.index: s for s in leg.stops}
    new_stops: list[Stop] = []
    for old in order:
        s = by_old[old]
        s.index = mapping[old]
        s.depends_on = sorted({mapping[d] for d in s.depends_on if d in mapping})
        if s.source_stop is not None:
            s.source_stop = mapping[s.source_stop]
        if s.expression:
            s.expression = expressions.rename(s.expression, mapping)
        if s.transition and s.transition.from_stop is not None:
            s.transition.from_stop = mapping.get(s.transition.from_stop)
        for step in s.tool_chain:
            step.args = refs.remap(step.args, mapping)
        if s.roadblock is not None:
            s.roadblock.inputs = [mapping[i] for i in s.roadblock.inputs]
        new_stops.append(s)
    leg.stops = new_stops


def consumers(leg: Leg) -> dict[int, set[int]]:
    """stop index -> the stops that use its value (value flow, not navigation)."""
    used: dict[int, set[int]] = {s.index: set() for s in leg.stops}
    for s in leg.stops:
        for i in value_inputs(s):
            used.setdefault(i, set()).add(s.index)
    return used
