"""Build a snapshot directory from importer streams, deterministically and atomically.

Pages are staged in a scratch SQLite file (a full dump does not fit in memory as Page
objects), merged by title (the richer page wins, see ``richness``), then written in title
order with links resolved through the redirect table. Everything is built in a temporary
sibling directory and renamed into place at the end, so a failed build (a broken input
raises ``SnapshotInputError``) leaves the previous snapshot untouched.

Dumps and ZIM archives are parsed on every core: the main process cuts the input into tasks
(about 256 KB of ``<page>`` chunks, or a range of ZIM entries), a process pool parses them, and the
results are staged in input order (at most 3 tasks per worker in flight), so the snapshot is
the same bytes whatever the number of workers. The final pass (links through redirects,
aliases, language, topics) runs on the pool too, reading the staging database. Nothing is held
in memory per page or per title: memory stays flat whatever the dump's size.

Resuming (``resume=True``, the CLI's default): the staging database lives beside the output
and every commit records, with the pages it stages, how far each input was read (a dump's byte
offset and page number, a ZIM entry index). A build that stops (a truncated dump, a broken bz2
stream, Ctrl-C, a killed process) keeps what it committed; the same build run again continues
after the last committed page and gives the same snapshot as a build in one go.
"""
from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.cache import canonical_json, file_sha256
from pipeline.snapshot.importers import (
    Item,
    Redirect,
    ResumeMismatch,
    Skipped,
    SnapshotInputError,
    Source,
    XmlDumpReader,
    XmlPosition,
    ZimReader,
    detect_sources,
    dump_spans,
    guess_title,
    multistream_index,
    page_namespace,
    xml_page_item,
)
from pipeline.snapshot.language import identify, page_text
from pipeline.snapshot.language import load as load_language_model
from pipeline.snapshot.page import Page
from pipeline.snapshot.store import MANIFEST, PAGES_DB, SnapshotStore
from pipeline.snapshot.wikitext import first_sentence

try:
    import fcntl  # POSIX: the staging folder's lock
except ImportError:  # Windows: staging folders are not locked
    fcntl = None

FORMAT_VERSION = 1
REPORT = "build_report.json"
STAGING_DB = "staging.sqlite"
STAGING_FORMAT = 1
HASH_METHOD = ("sha256 over UTF-8 lines: canonical JSON of each page in title order, then "
               "canonical JSON [alias, target] of each redirect in alias order")
_MAX_REDIRECT_HOPS = 8
_PARALLEL_MIN_BYTES = 1 << 20      # smaller inputs are parsed in this process (a pool costs ~1 s to start)
_MAX_SHARD_BYTES = 16 << 20       # a dump's shard: at most this much XML (see _shard_bytes) ...
_MIN_SHARD_BYTES = 256 << 10       # ... and at least this much
_BATCH_BYTES = 256 << 10           # a bz2 stream too long to shard is read here: tasks of 256 KB of pages ...
_BATCH_PAGES = 512                 # ... or this many
_ZIM_TASK_ENTRIES = 256
_FINISH_TASK_PAGES = 256
_COMMIT_SECONDS = 2.0              # an interrupted build redoes at most this much work
_LOG_SECONDS = 10.0
_RESOLVE_CACHE = 500_000           # link targets remembered per final-pass process

SCHEMA = """
CREATE TABLE pages (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, json TEXT NOT NULL);
CREATE INDEX pages_title_nocase ON pages(title COLLATE NOCASE);
CREATE TABLE redirects (alias TEXT PRIMARY KEY, target TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX redirects_target ON redirects(target, alias);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE pages_fts USING fts5(
    title, description, lead, infobox, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


def richness(page: Page) -> tuple:
    """Which of two pages with one title to keep: infobox, then sections, then amount of content."""
    text = len(page.lead) + sum(len(s.text) for s in page.sections)
    return (1 if page.infobox else 0, 1 if page.sections else 0, len(page.infobox), len(page.links), text)


@dataclass
class BuildReport:
    skipped: list[dict] = field(default_factory=list)
    merges: list[dict] = field(default_factory=list)
    redirect_conflicts: list[dict] = field(default_factory=list)
    redirects_dropped: int = 0      # target not in the snapshot
    redirects_shadowed: int = 0     # alias is itself a page
    topics_applied: int = 0
    ignored_files: list[str] = field(default_factory=list)
    other_language: list[dict] = field(default_factory=list)  # pages in another language: never seeds or route pages

    def to_dict(self) -> dict:
        return {
            "skipped": sorted(self.skipped, key=lambda d: (d["source"], d["title"], d["reason"])),
            "merges": sorted(self.merges, key=lambda d: (d["title"], d["kept"], d["dropped"])),
            "redirect_conflicts": sorted(self.redirect_conflicts, key=lambda d: (d["alias"], d["kept"])),
            "redirects_dropped": self.redirects_dropped,
            "redirects_shadowed": self.redirects_shadowed,
            "topics_applied": self.topics_applied,
            "ignored_files": sorted(self.ignored_files),
            "other_language": sorted(self.other_language, key=lambda d: d["title"]),
        }

    def summary(self) -> dict:
        return {"skipped": len(self.skipped), "merges": len(self.merges),
                "redirect_conflicts": len(self.redirect_conflicts),
                "redirects_dropped": self.redirects_dropped, "redirects_shadowed": self.redirects_shadowed,
                "topics_applied": self.topics_applied, "ignored_files": len(self.ignored_files),
                "other_language": len(self.other_language)}


@dataclass
class BuildResult:
    out: Path
    manifest: dict
    report: BuildReport


def collect_sources(paths: Iterable[str | os.PathLike]) -> tuple[list[Source], list[str]]:
    """Detect every input under ``paths``; order is by kind and name so argument order does not matter."""
    sources: list[Source] = []
    ignored: list[str] = []
    for p in paths:
        found, skipped = detect_sources(p)
        sources += found
        ignored += skipped
    if not sources:
        raise SnapshotInputError("no importable input found in " + ", ".join(str(p) for p in paths))
    kind_order = {"xml": 0, "zim": 1, "wikitext": 2, "summaries": 3, "topics": 4}
    sources.sort(key=lambda s: (kind_order[s.kind], s.name, str(s.path)))
    return sources, ignored



# ---- workers -----------------------------------------------------------------------------------

def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _worker_count(workers: int | None, sources: list[Source]) -> int:
    if workers is not None:
        return max(1, int(workers))
    size = sum(f.stat().st_size for src in sources for f in src.files())
    return default_workers() if size >= _PARALLEL_MIN_BYTES else 1


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle


class _Pool:
    """A process pool started on first use and restarted after a worker dies.

    On Linux the workers are forked (they start in milliseconds with the parsers loaded, and
    ProcessPoolExecutor forks them all before starting any thread); they never use the parent's
    open databases or archives. Elsewhere they are spawned.
    """
    breakable = True          # a worker that dies breaks the pool: its tasks are re-run page by page

    def __init__(self, size: int):
        self.size = size
        self._executor: ProcessPoolExecutor | None = None

    def executor(self) -> ProcessPoolExecutor:
        if self._executor is None:
            fork = sys.platform.startswith("linux")
            if fork:
                load_language_model()     # loaded once, its pages shared by the forked workers
            ctx = multiprocessing.get_context("fork" if fork else "spawn")
            self._executor = ProcessPoolExecutor(self.size, mp_context=ctx, initializer=_worker_init)
        return self._executor

    def submit(self, fn: Callable, payload):
        return self.executor().submit(fn, payload)

    def restart(self) -> None:
        self.close(cancel=True)

    def close(self, cancel: bool = False) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=cancel)  # running tasks end within seconds
            self._executor = None


class _DaskPool:
    """The workers of a Dask cluster: the scheduler at ``address``, or a local cluster of ``workers``
    single-threaded processes. Tasks are the pool's (shards of a dump, ranges of ZIM entries or of
    titles); the workers read the inputs and the staging database at the paths this process sees,
    so a remote cluster needs them on a shared filesystem. Dask re-runs the task of a worker that
    dies; results come back in task order here as with the process pool, so the bytes are the same."""
    breakable = False

    def __init__(self, address: str | None = None, workers: int | None = None):
        import dask  # heavy and optional: only for Dask builds
        from distributed import Client, LocalCluster

        self.cluster = None
        with dask.config.set({"distributed.worker.profile.enabled": False,
                              "distributed.scheduler.worker-saturation": 1.0}):
            if address is None:
                self.cluster = LocalCluster(n_workers=max(1, workers or default_workers()), threads_per_worker=1,
                                            processes=True, dashboard_address=None)
            self.client = Client(address or self.cluster)
        self.size = max(1, sum(self.client.nthreads().values()))

    def submit(self, fn: Callable, payload):
        return self.client.submit(fn, payload, pure=False)

    def restart(self) -> None:
        pass

    def close(self, cancel: bool = False) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


@dataclass(frozen=True)
class _Job:
    """Work a pool runs on task payloads: ``run(payload) -> result``; ``isolate(pool, payload)`` runs a
    payload whose worker died again piece by piece, rejecting the pieces that kill a worker again
    (None: the error is raised)."""
    run: Callable
    isolate: Callable | None = None


def _run_ordered(pool, job: _Job, tasks: Iterator[tuple], on_result: Callable, window: int = 3) -> None:
    """Hand ``on_result(result, mark)`` the result of each ``(payload, mark)`` task, in task order.

    Payloads run on the pool (at most ``window`` per worker in flight, so memory stays bounded
    however fast the input is read), or here when ``pool`` is None; a None payload has the result
    None. When reading tasks raises ``SnapshotInputError`` (a truncated dump), the tasks read before
    it are finished and handed over first, then the error is raised. A payload whose worker died is
    re-run by ``job.isolate``.
    """
    if pool is None:
        for payload, mark in tasks:
            on_result(job.run(payload) if payload is not None else None, mark)
        return
    inflight: deque[list] = deque()
    error: SnapshotInputError | None = None
    exhausted = False
    tasks = iter(tasks)
    while True:
        while not exhausted and error is None and len(inflight) < window * pool.size:
            try:
                payload, mark = next(tasks)
            except StopIteration:
                exhausted = True
                break
            except SnapshotInputError as exc:
                error = exc
                break
            future = pool.submit(job.run, payload) if payload is not None else None
            inflight.append([future, payload, mark])
        if not inflight:
            break
        future, payload, mark = inflight.popleft()
        try:
            result = future.result() if future is not None else None
        except BrokenProcessPool:
            if job.isolate is None or not pool.breakable:
                raise
            pool.restart()
            result = job.isolate(pool, payload)
            for entry in inflight:  # their worker pool is gone too
                if entry[1] is not None:
                    entry[0] = pool.submit(job.run, entry[1])
        del future
        on_result(result, mark)
    if error is not None:
        raise error


def _isolate_pages(pool: _Pool, one_page_payloads: Iterable, run: Callable, reject: Callable) -> list:
    """Records of one-page payloads, each run alone; a page that kills its worker is rejected."""
    records: list = []
    for one in one_page_payloads:
        try:
            records += pool.submit(run, one).result()
        except BrokenProcessPool:
            pool.restart()
            records += reject(one, "the parser's process died on this page (crash or out of memory)")
    return records


def _record(item: Item, with_language: bool) -> tuple:
    """An importer item as a picklable record (a page travels as its canonical JSON)."""
    if isinstance(item, Page):
        return ("p", item.title, canonical_json(item.to_dict()), richness(item),
                identify(page_text(item)) if with_language else None)
    if isinstance(item, Redirect):
        return ("r", item.alias, item.target)
    if isinstance(item, Skipped):
        return ("s", item.title, item.reason)
    return ("t", item.title, item.topic)


def _xml_task(payload: tuple[str, list[bytes]]) -> list[tuple]:
    """Records of ``<page>`` chunks (used to isolate the pages of a shard whose worker died)."""
    source, chunks = payload
    records = []
    for data in chunks:
        item = xml_page_item(data, source)
        if item is not None:
            records.append(_record(item, True))
    return records


def _xml_reject(payload, reason: str) -> list[tuple]:
    return [("s", guess_title(payload[1][0]), reason)]


@dataclass(frozen=True)
class _Shard:
    """A task of a dump's import: the pages of one span (see ``XmlDumpReader``), from ``start`` (a
    resume point inside it) on. ``verify``: check the bytes before ``start`` are the ones read
    before; ``parse`` False: only read (the digest of a span imported before)."""
    path: str
    source: str
    span: tuple[int, int | None]
    start: dict | None = None
    verify: bool = False
    parse: bool = True


def _read_shard(shard: _Shard, parse: Callable[[bytes], None]) -> dict:
    """Read a shard, handing ``parse`` every page chunk of an article namespace; what was read."""
    start = XmlPosition.from_dict(shard.start) if shard.start else None
    reader = XmlDumpReader(Path(shard.path), start=start, verify=shard.verify, span=shard.span)
    last, error, pages = None, None, 0
    try:
        for raw in reader:
            last = raw
            if page_namespace(raw.data) in (None, 0):   # other namespaces are dropped before any parsing
                parse(raw.data)
    except ResumeMismatch as exc:
        error = ["mismatch", str(exc)]
    except SnapshotInputError as exc:            # the pages before a break are kept, then the error raised
        error = ["input", str(exc)]
    if last is not None:
        position = XmlPosition(offset=last.end, pages=last.index, digest=last.digest,
                               stream=reader.locate(last.end)).to_dict()
        pages = last.index - (start.pages if start else 0)
        xml = last.end - (start.offset if start else 0)
    else:
        position, xml = shard.start, 0
    return {"position": position, "error": error, "pages": pages, "xml_bytes": xml}


def _shard_task(shard: _Shard | tuple) -> dict | list[tuple]:
    """A shard's records and what was read (run on a worker: it reads and decompresses its own span),
    or the records of a batch of page chunks (a stream read in the main process)."""
    if not isinstance(shard, _Shard):
        return _xml_task(shard)
    records: list[tuple] = []

    def parse(data: bytes) -> None:
        if shard.parse:
            item = xml_page_item(data, shard.source)
            if item is not None:
                records.append(_record(item, True))

    result = _read_shard(shard, parse)
    result["records"] = records
    return result


def _shard_isolate(pool: _Pool, shard: _Shard | tuple) -> dict | list[tuple]:
    """A shard whose worker died, read here and parsed on the pool page by page."""
    if not isinstance(shard, _Shard):
        return _isolate_pages(pool, ((shard[0], [c]) for c in shard[1]), _xml_task, _xml_reject)
    chunks: list[bytes] = []
    result = _read_shard(shard, chunks.append)
    result["records"] = _isolate_pages(pool, ((shard.source, [c]) for c in chunks), _xml_task, _xml_reject) \
        if shard.parse else []
    return result


_ZIM_READERS = threading.local()      # per thread: a Dask worker may run tasks in threads


def _zim_task(payload: tuple[str, str, int, int]) -> list[tuple]:
    path, source, start, stop = payload
    readers = _ZIM_READERS.__dict__.setdefault("readers", {})
    reader = readers.get(path)
    if reader is None:
        reader = readers[path] = ZimReader(Path(path))
    records = []
    for i in range(start, stop):
        item = reader.item(i, source)
        if item is not None:
            records.append(_record(item, True))
    return records


def _zim_reject(payload, reason: str) -> list[tuple]:
    return [("s", "", f"ZIM entry {payload[2]}: {reason}")]


def _zim_isolate(pool: _Pool, payload) -> list[tuple]:
    path, source, start, stop = payload
    return _isolate_pages(pool, ((path, source, i, i + 1) for i in range(start, stop)), _zim_task, _zim_reject)


_SHARD_JOB = _Job(_shard_task, _shard_isolate)
_ZIM_JOB = _Job(_zim_task, _zim_isolate)


# ---- staging -----------------------------------------------------------------------------------

_STAGING_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sources (idx INTEGER PRIMARY KEY, state TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS staged (title TEXT PRIMARY KEY, rank TEXT NOT NULL, source TEXT NOT NULL,
                                   json TEXT NOT NULL, language TEXT);
CREATE TABLE IF NOT EXISTS redirects (alias TEXT PRIMARY KEY, target TEXT NOT NULL, source TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS topics (title TEXT NOT NULL, topic TEXT NOT NULL, PRIMARY KEY (title, topic));
CREATE TABLE IF NOT EXISTS skipped (source TEXT NOT NULL, title TEXT NOT NULL, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS merges (title TEXT NOT NULL, kept TEXT NOT NULL, dropped TEXT NOT NULL, filled TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS conflicts (alias TEXT NOT NULL, kept TEXT NOT NULL, dropped TEXT NOT NULL);
"""


class _Restart(Exception):
    """The staged work cannot be continued (an input changed): start the import over."""


class _Staging:
    """The scratch database every importer writes to: pages merged by title, redirects, topics,
    the report's lists and, per source, how far it was read. Written in transactions that each
    end at a task boundary with the source's position, so an interrupted build resumes there."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.path = folder / STAGING_DB
        self._open()

    def _open(self) -> None:
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA cache_size=-65536")
        self.db.executescript(_STAGING_SCHEMA)
        self.db.execute("BEGIN")
        self._committed = time.monotonic()

    def reset(self, key: str) -> None:
        """Forget everything staged: a new, empty import of the inputs named by ``key``."""
        self.db.close()
        for suffix in ("", "-wal", "-shm"):
            Path(str(self.path) + suffix).unlink(missing_ok=True)
        self._open()
        self.set_meta("key", key)
        self.commit()

    # transactions
    def commit(self) -> None:
        self.db.execute("COMMIT")
        self.db.execute("BEGIN")
        self._committed = time.monotonic()

    def commit_now_and_then(self) -> None:
        if time.monotonic() - self._committed >= _COMMIT_SECONDS:
            self.commit()

    @contextmanager
    def savepoint(self):
        self.db.execute("SAVEPOINT apply")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK TO apply")
            self.db.execute("RELEASE apply")
            raise
        self.db.execute("RELEASE apply")

    def close(self) -> None:
        if self.db.in_transaction:
            self.db.execute("COMMIT")
        self.db.close()

    # state
    def meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("REPLACE INTO meta VALUES (?, ?)", (key, value))

    def source_state(self, idx: int) -> dict | None:
        row = self.db.execute("SELECT state FROM sources WHERE idx = ?", (idx,)).fetchone()
        return json.loads(row[0]) if row else None

    def set_source_state(self, idx: int, state: dict) -> None:
        self.db.execute("REPLACE INTO sources VALUES (?, ?)", (idx, canonical_json(state)))

    def staged_pages(self) -> int:
        return sum(json.loads(s)["counts"]["pages"] for (s,) in self.db.execute("SELECT state FROM sources"))

    # records
    def apply(self, records: list[tuple], source: str, counts: dict) -> None:
        for rec in records:
            kind = rec[0]
            if kind == "p":
                counts["pages"] += 1
                self._stage_page(rec[1], rec[2], rec[3], rec[4], source)
            elif kind == "r":
                counts["redirects"] += 1
                self._stage_redirect(rec[1], rec[2], source)
            elif kind == "s":
                counts["skipped"] += 1
                self.db.execute("INSERT INTO skipped VALUES (?, ?, ?)", (source, rec[1], rec[2]))
            else:
                counts["topics"] += 1
                self.db.execute("INSERT OR IGNORE INTO topics VALUES (?, ?)", (rec[1], rec[2]))

    def _stage_page(self, title: str, page_json: str, rank: tuple, language: str | None, source: str) -> None:
        row = self.db.execute("SELECT rank, source, json, language FROM staged WHERE title = ?", (title,)).fetchone()
        if row is None:
            self.db.execute("INSERT INTO staged VALUES (?, ?, ?, ?, ?)",
                            (title, json.dumps(rank), source, page_json, language))
            return
        old_rank, old_source, old_json, old_language = tuple(json.loads(row[0])), row[1], row[2], row[3]
        # richer wins; ties go to the source name, then the JSON, so input order never matters
        new_wins = (tuple(rank), [-ord(c) for c in source], page_json) > \
            (old_rank, [-ord(c) for c in old_source], old_json)
        page, old = Page.from_dict(json.loads(page_json)), Page.from_dict(json.loads(old_json))
        kept, dropped = (page, old) if new_wins else (old, page)
        kept_source, dropped_source = (source, old_source) if new_wins else (old_source, source)
        filled = []
        if (kept.description == first_sentence(kept.lead) and dropped.description
                and dropped.description != first_sentence(dropped.lead)):
            kept.description = dropped.description  # a real short description beats the derived one
            filled.append("description")
        self.db.execute("INSERT INTO merges VALUES (?, ?, ?, ?)", (title, kept_source, dropped_source,
                                                                     json.dumps(filled)))
        self.db.execute("REPLACE INTO staged VALUES (?, ?, ?, ?, ?)",
                        (kept.title, json.dumps(richness(kept)), kept_source, canonical_json(kept.to_dict()),
                         language if new_wins else old_language))

    def _stage_redirect(self, alias: str, target: str, source: str) -> None:
        if alias == target:
            return
        row = self.db.execute("SELECT target, source FROM redirects WHERE alias = ?", (alias,)).fetchone()
        if row is None:
            self.db.execute("INSERT INTO redirects VALUES (?, ?, ?)", (alias, target, source))
            return
        if row[0] == target:
            return
        keep, drop = sorted([tuple(row), (target, source)])
        self.db.execute("REPLACE INTO redirects VALUES (?, ?, ?)", (alias, keep[0], keep[1]))
        self.db.execute("INSERT INTO conflicts VALUES (?, ?, ?)", (alias, keep[0], drop[0]))

    def report(self, ignored: list[str]) -> BuildReport:
        report = BuildReport(ignored_files=ignored)
        report.skipped = [{"source": s, "title": t, "reason": r}
                          for s, t, r in self.db.execute("SELECT source, title, reason FROM skipped ORDER BY rowid")]
        report.merges = [{"title": t, "kept": k, "dropped": d, "filled": json.loads(f)}
                         for t, k, d, f in self.db.execute("SELECT * FROM merges ORDER BY rowid")]
        report.redirect_conflicts = [{"alias": a, "kept": k, "dropped": d}
                                     for a, k, d in self.db.execute("SELECT * FROM conflicts ORDER BY rowid")]
        return report


@contextmanager
def _staging(folder: Path, sources: list[Source], resume: bool, log):
    """The staging database in ``folder``: reused when it was left by a build of the same inputs
    (``resume``), else new. Locked while in use: two builds never share one."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "w") as lock:
        try:
            if fcntl is not None:  # no fcntl (Windows): no lock
                fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)  # POSIX lock: forked workers do not hold it
        except OSError as exc:
            raise SnapshotInputError(f"{folder}: another build is using this staging folder") from exc
        key = canonical_json({"format": STAGING_FORMAT,
                              "sources": [[s.kind, s.name, str(s.path.resolve())] for s in sources]})
        try:
            stage = _Staging(folder)
            old_key = stage.meta("key")
        except sqlite3.DatabaseError as exc:  # a staging file damaged beyond SQLite's own recovery
            log(f"{folder / STAGING_DB} is unreadable ({exc}): starting over")
            for suffix in ("", "-wal", "-shm"):
                Path(str(folder / STAGING_DB) + suffix).unlink(missing_ok=True)
            stage, old_key = _Staging(folder), None
        if old_key != key:
            if old_key is not None:
                log(f"{folder} holds an import of other inputs: starting over")
            stage.reset(key)
        elif resume and stage.db.execute("SELECT 1 FROM sources").fetchone():
            log(f"resuming the import staged in {folder} ({stage.staged_pages()} pages so far)")
        try:
            yield stage
        finally:
            stage.close()


def _fingerprint(src: Source) -> list:
    """Size and modification time of the input's files (and of a dump's multistream index, which
    shards it): an unchanged input can be resumed as is."""
    files = src.files()
    if src.kind == "xml" and (index := multistream_index(src.path)) is not None:
        files = [*files, index]
    return [[f.name, f.stat().st_size, f.stat().st_mtime_ns] for f in files]


def _shard_bytes(src: Source, pool) -> int:
    """XML bytes a shard of a dump (see ``dump_spans``): 16 MB, or less so that a small dump still
    gives every worker a few shards (never under 256 KB)."""
    xml = src.path.stat().st_size * (4 if _is_bz2(src.path) else 1)
    workers = pool.size if pool is not None else 1
    return max(_MIN_SHARD_BYTES, min(_MAX_SHARD_BYTES, xml // (4 * workers) + 1))


def _is_bz2(path: Path) -> bool:
    with open(path, "rb") as f:
        return f.read(3) == b"BZh"


# ---- import ------------------------------------------------------------------------------------

def _import_all(stage: _Staging, sources: list[Source], pool, log, progress: Callable | None = None,
                shard_bytes: int = 0) -> None:
    for idx, src in enumerate(sources):
        state = stage.source_state(idx)
        fingerprint = _fingerprint(src)
        if state and state["done"]:
            if state["fingerprint"] != fingerprint:
                raise _Restart(f"{src.path} changed since it was imported")
            log(f"{src.kind} {src.name}: imported before ({state['counts']['pages']} pages)")
            continue
        log(f"importing {src.kind} {src.name}" + (" (resuming)" if state else ""))
        counts = dict(state["counts"]) if state else {"pages": 0, "redirects": 0, "skipped": 0, "topics": 0}
        if src.kind == "xml":
            _import_xml(stage, idx, src, state, fingerprint, counts, pool, log, progress,
                        shard_bytes or _shard_bytes(src, pool))
        elif src.kind == "zim":
            _import_zim(stage, idx, src, state, fingerprint, counts, pool, progress)
        else:
            with stage.savepoint():  # small inputs: all or nothing
                for item in src.items():
                    stage.apply([_record(item, False)], src.name, counts)
        stage.set_source_state(idx, {"name": src.name, "kind": src.kind, "done": True, "counts": counts,
                                     "sha256": src.sha256(), "fingerprint": fingerprint})
        stage.commit()
        log(f"  {counts['pages']} pages, {counts['redirects']} redirects, {counts['skipped']} skipped")


def _import_xml(stage: _Staging, idx: int, src: Source, state: dict | None, fingerprint: list, counts: dict,
                pool, log, progress: Callable | None, shard_bytes: int) -> None:
    """A dump, shard by shard (``dump_spans``): workers read, decompress and parse their own spans;
    the records are staged here in dump order, one transaction a shard, so a build killed at any
    point keeps every shard staged before and gives, resumed, the same bytes.

    A bz2 stream much longer than a shard (a dump compressed as one stream, not multistream) cannot
    be cut: this process reads it and hands its pages to the workers in batches, committing every
    few seconds with the position reached."""
    plan = state["plan"] if state else {"shard_bytes": shard_bytes}
    done = state["done_through"] if state else {"next": 0, "position": None, "chain": "", "pages": 0,
                                                "xml_bytes": 0}
    size = src.path.stat().st_size
    long_stream = 2 * max(1, plan["shard_bytes"] // 4) if _is_bz2(src.path) else None
    spans = dump_spans(src.path, plan["shard_bytes"])
    path = str(src.path)
    changed = bool(state) and state["fingerprint"] != fingerprint
    if changed and (done["next"] or done["position"]):
        log(f"  {src.name} changed since its import began: checking the part imported before")
        spans = _verify_prefix(pool, src, spans, done)
    started = time.monotonic()
    total = {"xml_bytes": 0, "pages": 0}
    last_log = started
    first, first_position = done["next"], done["position"]     # where this run starts (done moves on)
    seen: list = []

    def tasks():
        for span in spans:
            if span[0] < first:
                continue
            if span[0] > first and first and not seen:
                raise _Restart(f"{src.path}: its shards changed since its import began")
            seen.append(span)
            resume = first_position if span[0] == first else None
            shard = _Shard(path, src.name, span, resume, bool(resume) and changed)
            if long_stream is not None and (span[1] if span[1] is not None else size) - span[0] > long_stream:
                yield from _batches(shard)
            else:
                yield shard, {"span": span}

    def on_result(result, mark: dict) -> None:
        nonlocal last_log
        span = mark["span"]
        if "position" in mark:                       # a batch of a stream read here
            result = {"records": result or [], "error": None, "final": mark["final"], **mark}
        else:
            if result["error"] and result["error"][0] == "mismatch":
                raise _Restart(result["error"][1])
            if result["error"] and not result["pages"]:
                raise SnapshotInputError(result["error"][1])     # nothing read in this shard: nothing to keep
            result["final"] = not result["error"]
        chain = done["chain"]
        if result["final"]:
            chain = hashlib.sha256(f"{chain}:{span[0]}:{result['position'] and result['position']['digest']}"
                                   .encode()).hexdigest()
        done.update({"next": (span[1] if span[1] is not None else size) if result["final"] else span[0],
                     "position": None if result["final"] else result["position"], "chain": chain,
                     "pages": done["pages"] + result["pages"], "xml_bytes": done["xml_bytes"] + result["xml_bytes"]})
        with stage.savepoint():
            stage.apply(result["records"], src.name, counts)
            stage.set_source_state(idx, {"name": src.name, "kind": src.kind, "done": False, "counts": counts,
                                         "plan": plan, "done_through": done, "fingerprint": fingerprint})
        if "position" in mark:
            stage.commit_now_and_then()
        else:
            stage.commit()                # one transaction a shard: a kill loses only the shards in flight
        total["xml_bytes"] += result["xml_bytes"]
        total["pages"] += result["pages"]
        now = time.monotonic()
        if progress is not None:
            progress({"phase": "import", "source": src.name, "done": done["next"], "total": size,
                      "xml_bytes": total["xml_bytes"], "pages": total["pages"], "articles": counts["pages"],
                      "seconds": now - started})
        elif now - last_log >= _LOG_SECONDS:
            last_log = now
            log(f"  page {done['pages']}: {counts['pages']} articles, {done['xml_bytes'] / 1e6:.0f} MB of XML "
                f"({total['xml_bytes'] / 1e6 / (now - started):.1f} MB/s)")
        if result["error"]:
            raise SnapshotInputError(result["error"][1])

    try:
        _run_ordered(pool, _SHARD_JOB, tasks(), on_result)
    except ResumeMismatch as exc:
        raise _Restart(str(exc)) from exc


def _batches(shard: _Shard) -> Iterator[tuple]:
    """A shard read here, as tasks of about 256 KB of article pages for the workers; each mark holds
    the position after its pages (the last one ``final``). A break in the input (a truncated dump)
    hands over the pages before it, then raises."""
    start = XmlPosition.from_dict(shard.start) if shard.start else None
    reader = XmlDumpReader(Path(shard.path), start=start, verify=shard.verify, span=shard.span)
    batch: list[bytes] = []
    size = n = 0
    last = None
    offset = start.offset if start else 0
    pages = start.pages if start else 0

    def mark(final: bool) -> dict:
        nonlocal offset, pages
        position = XmlPosition(offset=last.end, pages=last.index, digest=last.digest,
                               stream=reader.locate(last.end)).to_dict() if last else shard.start
        m = {"span": shard.span, "position": position, "final": final,
             "pages": (last.index if last else pages) - pages, "xml_bytes": (last.end if last else offset) - offset}
        if last:
            offset, pages = last.end, last.index
        return m

    try:
        for raw in reader:
            n, last = n + 1, raw
            if page_namespace(raw.data) in (None, 0):
                batch.append(raw.data)
                size += len(raw.data)
            if size >= _BATCH_BYTES or n >= _BATCH_PAGES:
                yield ((shard.source, batch) if batch else None), mark(False)
                batch, size, n = [], 0, 0
    except SnapshotInputError:
        if n:
            yield ((shard.source, batch) if batch else None), mark(False)
        raise
    yield ((shard.source, batch) if batch else None), mark(True)


def _verify_prefix(pool, src: Source, spans: Iterator[tuple], done: dict) -> Iterator[tuple]:
    """Check that the shards imported before are the same bytes (their digests, read again on the
    workers); the spans left to import follow. Raises ``_Restart`` when they differ."""
    spans = iter(spans)
    todo: list[tuple] = []
    chain = ""

    def before():
        for span in spans:
            if span[0] >= done["next"]:
                todo.append(span)
                return
            yield _Shard(str(src.path), src.name, span, parse=False), span

    def on_result(result, span):
        nonlocal chain
        if result["error"]:
            raise _Restart(f"{src.path}: {result['error'][1]}")
        chain = hashlib.sha256(f"{chain}:{span[0]}:{result['position'] and result['position']['digest']}"
                               .encode()).hexdigest()

    _run_ordered(pool, _SHARD_JOB, before(), on_result)
    if chain != done["chain"]:
        raise _Restart(f"{src.path}: its first {done['next']} bytes differ from the ones imported before "
                       "(the file was replaced)")
    yield from todo
    yield from spans


def _import_zim(stage: _Staging, idx: int, src: Source, state: dict | None, fingerprint: list, counts: dict,
                pool, progress: Callable | None) -> None:
    if state and state["fingerprint"] != fingerprint:
        raise _Restart(f"{src.path} changed since its import began")
    count = ZimReader(src.path).count
    first = state["position"]["index"] if state else 0
    path = str(src.path)
    tasks = (((path, src.name, i, min(i + _ZIM_TASK_ENTRIES, count)), {"index": min(i + _ZIM_TASK_ENTRIES, count)})
             for i in range(first, count, _ZIM_TASK_ENTRIES))
    started = time.monotonic()

    def on_result(records, mark):
        with stage.savepoint():
            stage.apply(records, src.name, counts)
            stage.set_source_state(idx, {"name": src.name, "kind": src.kind, "done": False, "counts": counts,
                                         "position": mark, "fingerprint": fingerprint})
        stage.commit_now_and_then()
        if progress is not None:
            progress({"phase": "import", "source": src.name, "done": mark["index"], "total": count, "unit": "entries",
                      "pages": mark["index"] - first, "articles": counts["pages"],
                      "seconds": time.monotonic() - started})

    try:
        _run_ordered(pool, _ZIM_JOB, tasks, on_result)
    finally:
        _ZIM_READERS.__dict__.get("readers", {}).pop(path, None)


# ---- the snapshot --------------------------------------------------------------------------------

class _Finisher:
    """Turns staged pages into their final JSON: links resolved through redirects, aliases, language,
    topics. Reads the staging database (read-only), so it runs in any process; memory stays bounded
    (a capped cache of resolved link targets)."""

    def __init__(self, path: str):
        self.db = sqlite3.connect(Path(path).resolve().as_uri() + "?mode=ro", uri=True)
        self.db.execute("PRAGMA cache_size=-32768")
        self.cache: dict[str, tuple[str, bool]] = {}

    def _is_title(self, title: str) -> bool:
        return self.db.execute("SELECT 1 FROM staged WHERE title = ?", (title,)).fetchone() is not None

    def resolve(self, title: str) -> tuple[str, bool]:
        """(the page a link names after redirects, whether that page is in the snapshot)"""
        hit = self.cache.get(title)
        if hit is None:
            if self._is_title(title):
                hit = (title, True)
            else:
                row = self.db.execute("SELECT target, stored FROM ends WHERE alias = ?", (title,)).fetchone()
                hit = (row[0], bool(row[1])) if row else (title, False)
            if len(self.cache) >= _RESOLVE_CACHE:
                self.cache.clear()
            self.cache[title] = hit
        return hit

    def pages(self, first: str, last: str) -> list[tuple]:
        out = []
        rows = self.db.execute("SELECT title, json, language FROM staged WHERE title >= ? AND title <= ? "
                               "ORDER BY title", (first, last)).fetchall()
        for title, page_json, language in rows:
            d = json.loads(page_json)
            links, seen, inside = [], {}, 0
            for link in d["links"]:
                target, in_snapshot = self.resolve(link["title"])
                if target == title:
                    continue
                if target in seen:     # two links that resolve to one page ("U.S." and "United States"): one link
                    anchors = seen[target]["anchors"]
                    anchors.extend(a for a in link.get("anchors", []) if a not in anchors)
                    continue
                seen[target] = {"title": target, "in_snapshot": in_snapshot, "anchors": list(link.get("anchors", []))}
                links.append(seen[target])
                inside += in_snapshot
            d["links"] = links
            d["aliases"] = [a for (a,) in self.db.execute(
                "SELECT alias FROM ends WHERE stored = 1 AND target = ? ORDER BY alias", (title,))]
            if language is None:
                language = identify(page_text(Page.from_dict(d)))
            d["language"] = language
            applied = 0
            for (topic,) in self.db.execute("SELECT topic FROM topics WHERE title = ? ORDER BY topic", (title,)):
                if topic not in d["categories"]:
                    d["categories"].append(topic)
                    applied += 1
            out.append((title, canonical_json(d), d["description"], d["lead"],
                        " ; ".join(f["text"] for f in d["infobox"]), language, applied,
                        1 if d["infobox"] else 0, 1 if d["coords"] else 0, len(d["sections"]), len(links), inside,
                        len(d["categories"])))
        return out


_FINISHERS = threading.local()     # per thread, one at a time: the finisher of the build named by its token


def _finish_task(payload: tuple[str, str, str, str]) -> list[tuple]:
    path, token, first, last = payload
    held = _FINISHERS.__dict__.get("held")
    if held is None or held[0] != token:     # a Dask worker outlives builds: never a stale staging file
        if held is not None:
            held[1].db.close()
        held = _FINISHERS.held = (token, _Finisher(path))
    return held[1].pages(first, last)


def _drop_finisher() -> None:
    held = _FINISHERS.__dict__.pop("held", None)
    if held is not None:
        held[1].db.close()


_FINISH_JOB = _Job(_finish_task)


def _resolve_redirects(db: sqlite3.Connection) -> tuple[int, int, int]:
    """Follow redirect chains into the table ``ends`` (alias -> end title, stored when that is a page).

    Aliases that are themselves pages are left out (shadowed); redirects whose end is not in the
    snapshot are not stored, though links still use them to name their target. Returns
    (stored, dropped, shadowed).
    """
    db.execute("DROP TABLE IF EXISTS ends")
    db.execute("CREATE TABLE ends (alias TEXT PRIMARY KEY, target TEXT NOT NULL, stored INTEGER NOT NULL) "
               "WITHOUT ROWID")
    db.execute("INSERT INTO ends SELECT alias, target, 1 FROM redirects "
               "WHERE alias NOT IN (SELECT title FROM staged) AND target IN (SELECT title FROM staged)")
    shadowed = db.execute("SELECT count(*) FROM redirects WHERE alias IN (SELECT title FROM staged)").fetchone()[0]

    def is_title(title: str) -> bool:
        return db.execute("SELECT 1 FROM staged WHERE title = ?", (title,)).fetchone() is not None

    def next_hop(title: str) -> str | None:
        row = db.execute("SELECT target FROM redirects WHERE alias = ?", (title,)).fetchone()
        return row[0] if row else None

    rows = db.execute("SELECT alias, target FROM redirects WHERE alias NOT IN (SELECT title FROM staged) "
                      "AND target NOT IN (SELECT title FROM staged) ORDER BY alias")
    pending = []
    for alias, target in rows:
        hops, seen = 0, {alias}
        while not is_title(target) and target not in seen and hops < _MAX_REDIRECT_HOPS:
            nxt = next_hop(target)
            if nxt is None:
                break
            seen.add(target)
            target, hops = nxt, hops + 1
        pending.append((alias, target, 1 if is_title(target) else 0))
        if len(pending) >= 10_000:
            db.executemany("INSERT INTO ends VALUES (?, ?, ?)", pending)
            pending.clear()
    db.executemany("INSERT INTO ends VALUES (?, ?, ?)", pending)
    db.execute("CREATE INDEX ends_stored ON ends (target, alias) WHERE stored = 1")
    stored = db.execute("SELECT count(*) FROM ends WHERE stored = 1").fetchone()[0]
    dropped = db.execute("SELECT count(*) FROM ends WHERE stored = 0").fetchone()[0]
    return stored, dropped, shadowed



def _title_ranges(db: sqlite3.Connection, path: Path, token: str) -> Iterator[tuple]:
    """Tasks of the final pass: consecutive runs of staged titles, in title order."""
    titles: list[str] = []
    for (title,) in db.execute("SELECT title FROM staged ORDER BY title"):
        titles.append(title)
        if len(titles) >= _FINISH_TASK_PAGES:
            yield (str(path), token, titles[0], titles[-1]), len(titles)
            titles = []
    if titles:
        yield (str(path), token, titles[0], titles[-1]), len(titles)


def _write_snapshot(tmp: Path, stage: _Staging, sources: list[Source], ignored: list[str], pool,
                    language: str, log, progress: Callable | None = None) -> tuple[dict, BuildReport]:
    """The snapshot files in ``tmp`` from a finished import: pages in title order, redirects, FTS index."""
    report = stage.report(ignored)
    source_rows = []
    for idx, src in enumerate(sources):
        state = stage.source_state(idx)
        source_rows.append({"name": src.name, "kind": src.kind, "sha256": state["sha256"], **state["counts"]})
    stage.commit()
    stored, report.redirects_dropped, report.redirects_shadowed = _resolve_redirects(stage.db)
    stage.db.execute("COMMIT")
    stage.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    staged = stage.db.execute('SELECT count(*) FROM staged').fetchone()[0]
    log(f"writing {staged} pages")
    started = time.monotonic()

    db_path = tmp / PAGES_DB
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("PRAGMA page_size=4096")
    db.executescript(SCHEMA)
    content_hash = hashlib.sha256()
    counts = {"pages": 0, "infobox_pages": 0, "pages_with_coords": 0, "sections": 0, "links": 0,
              "links_in_snapshot": 0, "redirects": stored, "categories": 0}
    languages: dict[str, int] = {}

    def on_result(rows, _mark):
        if progress is not None:
            progress({"phase": "finish", "done": counts["pages"] + len(rows), "total": staged,
                      "seconds": time.monotonic() - started})
        for (title, data, description, lead, infobox_text, page_language, applied, has_infobox, has_coords,
             sections, links, inside, categories) in rows:
            page_id = counts["pages"] + 1
            content_hash.update(data.encode("utf-8") + b"\n")
            db.execute("INSERT INTO pages (id, title, json) VALUES (?, ?, ?)", (page_id, title, data))
            db.execute("INSERT INTO pages_fts (rowid, title, description, lead, infobox) VALUES (?, ?, ?, ?, ?)",
                       (page_id, title, description, lead, infobox_text))
            languages[page_language or "undetermined"] = languages.get(page_language or "undetermined", 0) + 1
            if page_language and page_language != language:
                report.other_language.append({"title": title, "language": page_language})
            report.topics_applied += applied
            counts["pages"] = page_id
            counts["infobox_pages"] += has_infobox
            counts["pages_with_coords"] += has_coords
            counts["sections"] += sections
            counts["links"] += links
            counts["links_in_snapshot"] += inside
            counts["categories"] += categories

    db.execute("BEGIN")
    try:
        token = f"{os.getpid()}-{time.time_ns()}"
        _run_ordered(pool, _FINISH_JOB, _title_ranges(stage.db, stage.path, token), on_result)
    finally:
        _drop_finisher()
    for alias, target in stage.db.execute("SELECT alias, target FROM ends WHERE stored = 1 ORDER BY alias"):
        content_hash.update(canonical_json([alias, target]).encode("utf-8") + b"\n")
        db.execute("INSERT INTO redirects (alias, target) VALUES (?, ?)", (alias, target))
    digest = content_hash.hexdigest()
    db.execute("INSERT INTO meta (key, value) VALUES ('format_version', ?), ('hash', ?)",
               (str(FORMAT_VERSION), digest))
    db.execute("INSERT INTO pages_fts (pages_fts) VALUES ('optimize')")
    db.execute("COMMIT")
    db.execute("VACUUM")
    db.close()
    stage.db.execute("BEGIN")

    manifest = {
        "format_version": FORMAT_VERSION,
        "hash": digest,
        "hash_method": HASH_METHOD,
        "counts": counts,
        "language": language,
        "languages": dict(sorted(languages.items())),
        "sources": source_rows,
        "report": report.summary(),
        "files": {PAGES_DB: file_sha256(db_path)},
        "licence": "Article text: CC BY-SA (Wikipedia contributors); see snapshots/ATTRIBUTION.md",
    }
    (tmp / REPORT).write_text(json.dumps(report.to_dict(), indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                              encoding="utf-8")
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                encoding="utf-8")
    return manifest, report


def build_snapshot(paths: Iterable[str | os.PathLike], out: str | os.PathLike,
                   log: Callable[[str], None] | None = None, language: str = "en", *,
                   workers: int | None = None, resume: bool = False, dask_address: str | None = None,
                   dask_workers: int | None = None, progress: Callable[[dict], None] | None = None,
                   shard_bytes: int = 0) -> BuildResult:
    """Import ``paths`` and write the snapshot directory ``out`` (replaced only on success);
    ``language`` is the snapshot's: pages identified as another are kept but marked.

    ``workers`` processes parse pages (default: every core, or none for inputs under 1 MB); or the
    workers of the Dask cluster at ``dask_address``, or of a local Dask cluster of ``dask_workers``
    processes. The snapshot is the same bytes whatever the workers. A dump is cut into shards of
    about ``shard_bytes`` of XML (default: see ``_shard_bytes``) that each worker reads, decompresses
    and parses itself. ``progress`` is called with a dict after every shard (see ``_import_xml``)
    and every final-pass task. With ``resume``, the import is staged in ``.<out>.staging`` beside
    ``out`` and kept when the build fails (a truncated dump, Ctrl-C, a killed process): the same
    build run again continues after the last committed shard (or page, after a broken input).
    Without it a failed build leaves nothing behind.
    """
    log = log or (lambda msg: None)
    out = Path(out)
    paths = list(paths)
    sources, ignored = collect_sources(paths)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_dead_builds(out)
    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    staging_dir = out.parent / f".{out.name}.staging" if resume else tmp / "staging"
    if dask_address or dask_workers:
        pool = _DaskPool(dask_address, dask_workers)
    else:
        size = _worker_count(workers, sources)
        pool = _Pool(size) if size > 1 else None
    done = False
    try:
        with _staging(staging_dir, sources, resume, log) as stage:
            try:
                try:
                    _import_all(stage, sources, pool, log, progress, shard_bytes)
                except _Restart as exc:
                    log(f"{exc}: the staged import cannot be continued, starting over")
                    stage.reset(stage.meta("key"))
                    _import_all(stage, sources, pool, log, progress, shard_bytes)
            except SnapshotInputError as exc:
                staged = stage.staged_pages()
                if resume and staged:
                    raise SnapshotInputError(f"{exc} ({staged} pages imported before the error are kept in "
                                             f"{staging_dir}: run the same build again to resume)") from exc
                raise
            manifest, report = _write_snapshot(tmp, stage, sources, ignored, pool, language, log, progress)
        shutil.rmtree(tmp / "staging", ignore_errors=True)
        if pool is not None:        # the index is built here: the workers' memory (final-pass caches) goes first
            pool.close()
            pool = None
        _build_search_index(tmp, log)
        _replace_dir(tmp, out)
        done = True
    finally:
        if pool is not None:
            pool.close(cancel=not done)
        if not done:
            shutil.rmtree(tmp, ignore_errors=True)
            if resume and not _has_progress(staging_dir):
                shutil.rmtree(staging_dir, ignore_errors=True)
    if resume:
        shutil.rmtree(staging_dir, ignore_errors=True)
    return BuildResult(out=out, manifest=manifest, report=report)


def _build_search_index(folder: Path, log: Callable[[str], None]) -> None:
    """A large world's search index (tantivy, in the snapshot's folder) is part of its import, so the
    first search after an import answers at once. A world small enough to be searched in memory has
    nothing to build here."""
    store = SnapshotStore.open(folder)
    try:
        if store.in_memory_search():
            return
        started = time.monotonic()
        log(f"building the search index of {len(store):,} pages")
        store.build_large_search()
        log(f"search index built in {time.monotonic() - started:.1f} s")
    finally:
        store.close()


def _remove_dead_builds(out: Path) -> None:
    """The scratch folders of builds of ``out`` whose process is gone (killed with kill -9)."""
    for folder in out.parent.glob(f".{out.name}.building-*"):
        try:
            pid = int(folder.name.rsplit("-", 1)[1])
            os.kill(pid, 0)                       # signal 0: only asks whether the process exists
        except ValueError:
            continue
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:                   # alive, another user's
            continue


def _has_progress(folder: Path) -> bool:
    path = folder / STAGING_DB
    if not path.is_file():
        return False
    try:
        with closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)) as db:
            return db.execute("SELECT 1 FROM sources").fetchone() is not None
    except sqlite3.Error:
        return False


def _replace_dir(tmp: Path, out: Path) -> None:
    backup = None
    if out.exists():
        backup = out.parent / f".{out.name}.previous-{os.getpid()}"
        if backup.exists():
            shutil.rmtree(backup)
        os.replace(out, backup)
    try:
        os.replace(tmp, out)
    except BaseException:
        if backup is not None:
            os.replace(backup, out)
        raise
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)
