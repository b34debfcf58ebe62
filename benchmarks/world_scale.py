"""Legwork at the size of a whole Wikipedia (issue 33, item 10): for each size, a synthetic dump
(``benchmarks/synthetic_wiki.py``), its import, search over it and generation from it, in one
markdown table. Prints; never fails on a time: a step that fails puts its reason in its cells.

    python benchmarks/world_scale.py [--sizes 10000,100000] [--seed 1] [--dir /tmp/legwork-world-scale]
        [--workers 2] [--queries 300] [--no-generate] [--no-dask] [--keep] [--out benchmarks/results/world_scale.txt]

Sizes are content pages (articles and disambiguation pages; the dump adds ~40% as many redirects);
10^6 is opt-in (``--sizes 10000,100000,1000000``: about 6 GB of XML, an hour or more of import on 2
cores). Files go under ``--dir``, never into the repository: the dumps are kept there and reused by
the next run of the same size and seed; snapshots are removed unless ``--keep``.

Per size:
- dump: its size (bz2 on disk, XML inside) and the time to write it (``--jobs`` = ``--workers``);
- import: ``python -m pipeline.snapshot build --workers W --fresh``, one process tree: wall time,
  MB/s of XML, pages/s, peak RSS and PSS summed over the tree (polled from /proc every 0.2 s);
  snapshot size on disk;
- Dask: the same build with ``--dask-workers 1`` and ``--dask-workers 2`` where the build has them
  (detected from its ``--help``): walls and the ratio;
- search: p50/p95 latency of ``SnapshotStore.search(query, k=10)`` over ``--queries`` seeded
  queries of 1-3 words taken from the snapshot's titles and descriptions, in a fresh process (the
  first search, which loads or builds the in-memory index, is timed apart); paged (``search_page``,
  ``offset=10``: the second page of ten with its exact total);
- generation: ``LEGWORK_SNAPSHOT=<snapshot> python -m pipeline.generate --difficulty medium
  --count 5 --task-runner local`` with a fresh cache and derived-data folder (so the first run's
  one-off cost is in it): wall, peak RSS of its tree, and its one-line result.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from import_speed import _memory as _pss_rss
from import_speed import _tree as _children  # (the benchmarks folder is on the path just above)

POLL_SECONDS = 0.2


# ---- running a process tree and watching its memory ----------------------------------------------

def _memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) in bytes of one process (``import_speed``'s reading of /proc, in this table's order)."""
    pss, rss = _pss_rss(pid)
    return rss, pss


def run_tree(cmd: list[str], env: dict | None = None, timeout: float | None = None) -> dict:
    """Run ``cmd``; its wall time, exit code, output lines and the peak RSS and PSS summed over
    its process tree."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []

    def read() -> None:
        for line in proc.stdout:
            lines.append(line.rstrip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    peak_rss = peak_pss = 0
    timed_out = False
    while proc.poll() is None:
        rss = pss = 0
        for pid in _children(proc.pid):
            r, p = _memory(pid)
            rss, pss = rss + r, pss + p
        peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
        if timeout is not None and time.monotonic() - started > timeout:
            proc.kill()          # only the process this benchmark started
            timed_out = True
        time.sleep(POLL_SECONDS)
    reader.join(timeout=5)
    return {"rc": proc.returncode, "wall": time.monotonic() - started, "lines": lines, "peak_rss": peak_rss,
            "peak_pss": peak_pss, "timed_out": timed_out}


def _failure(step: str, m: dict) -> str:
    """A one-cell reason: the last meaningful output line of a failed step."""
    if m.get("timed_out"):
        return f"FAILED ({step}: timed out after {m['wall']:.0f} s)"
    tail = [line.strip() for line in m["lines"] if line.strip()]
    last = next((line for line in reversed(tail) if re.search(r"Error|error|failed|FAILED", line)),
                tail[-1] if tail else "no output")
    return f"FAILED ({step}, exit {m['rc']}: {last[:160]})"


def _mb(n: float) -> str:
    return f"{n / 1e6:,.0f}" if n >= 1e7 else f"{n / 1e6:,.1f}"


# ---- the steps ------------------------------------------------------------------------------------

def make_dump(path: Path, pages: int, seed: int, jobs: int) -> dict:
    """Write the dump, or reuse the one a run before wrote (its counts kept beside it)."""
    import synthetic_wiki
    from synthetic_wiki import index_path, write_dump

    version = hashlib.sha256(Path(synthetic_wiki.__file__).read_bytes()).hexdigest()[:16]
    sidecar = path.with_name(path.name + ".stats.json")
    if path.is_file() and index_path(path).is_file() and sidecar.is_file():
        stats = json.loads(sidecar.read_text())
        if stats.get("maker") == version:        # the same maker wrote it: the same bytes
            return dict(stats, reused=True)
    stats = dict(write_dump(path, pages, seed, "xml.bz2", jobs=jobs), maker=version)
    sidecar.write_text(json.dumps(stats))
    return dict(stats, reused=False)


def build_help() -> str:
    m = run_tree([sys.executable, "-m", "pipeline.snapshot", "build", "--help"])
    return "\n".join(m["lines"])


def build(dump: Path, out: Path, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "pipeline.snapshot", "build", "--from", str(dump), "--out", str(out), "--fresh",
           "--quiet", *extra]
    m = run_tree(cmd)
    m["ok"] = m["rc"] == 0 and (out / "manifest.json").is_file()
    if m["ok"]:
        m["manifest"] = json.loads((out / "manifest.json").read_text())
        m["size"] = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    return m


def search_child(snapshot: str, queries: int, seed: int) -> dict:
    """Run inside a fresh process (``--_search``): latencies of the store's search."""
    import resource
    import sqlite3

    from pipeline.snapshot.store import SnapshotStore

    store = SnapshotStore.open(Path(snapshot))
    con = sqlite3.connect(f"file:{Path(snapshot) / 'pages.sqlite'}?mode=ro", uri=True)
    top = con.execute("SELECT max(id) FROM pages").fetchone()[0] or 0
    r = random.Random(seed)
    words: list[list[str]] = []
    while len(words) < queries and top:
        row = con.execute("SELECT title, json FROM pages WHERE id >= ? ORDER BY id LIMIT 1",
                          (r.randint(1, top),)).fetchone()
        if row is None:
            continue
        title_words = re.findall(r"[A-Za-z][A-Za-z'.-]+", re.sub(r"\(.*?\)", "", row[0]))
        desc_words = [w for w in re.findall(r"[A-Za-z]{3,}", json.loads(row[1]).get("description") or "")
                      if w.lower() not in ("the", "and", "born", "for", "with")]
        pool = title_words + desc_words
        if pool:
            n = r.choice((1, 2, 2, 3))
            words.append([r.choice(title_words or pool)] + [r.choice(pool) for _ in range(n - 1)])
    qs = [" ".join(w) for w in words]
    t = time.perf_counter()
    store.search("first search loads the index", k=10)
    first = time.perf_counter() - t
    plain = []
    hits = 0
    for q in qs:
        t = time.perf_counter()
        hits += bool(store.search(q, k=10))
        plain.append(time.perf_counter() - t)
    out = {"first": first, "plain": plain, "queries": len(qs), "with_hits": hits, "paged": None,
           "examples": qs[:5]}
    if hasattr(store, "search_page"):   # web_search's paging: the second page of ten, exact total
        paged = []
        for q in qs:
            t = time.perf_counter()
            store.search_page(q, offset=10, k=10)
            paged.append(time.perf_counter() - t)
        out["paged"] = paged
    out["max_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def search(snapshot: Path, queries: int, seed: int) -> dict:
    m = run_tree([sys.executable, str(Path(__file__).resolve()), "--_search", str(snapshot), "--queries",
                  str(queries), "--seed", str(seed)])
    line = next((line for line in reversed(m["lines"]) if line.startswith("{")), None)
    if m["rc"] != 0 or line is None:
        return {"error": _failure("search", m)}
    return json.loads(line)


def generate(snapshot: Path, work: Path) -> dict:
    env = dict(os.environ, LEGWORK_SNAPSHOT=str(snapshot), LEGWORK_CACHE=str(work / "cache.sqlite"),
               LEGWORK_DERIVED=str(work / "derived"))
    cmd = [sys.executable, "-m", "pipeline.generate", "--difficulty", "medium", "--count", "5", "--task-runner",
           "local", "--out", str(work / "run"), "--quiet"]
    return run_tree(cmd, env=env)


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))] if values else float("nan")


# ---- one size, one row --------------------------------------------------------------------------

COLUMNS = ("pages", "dump MB bz2 / XML", "dump write s", "import s", "XML MB/s", "pages/s", "peak RSS MB (PSS)",
           "snapshot MB", "search p50/p95 ms", "paged p50/p95 ms", "first search s", "generate 5 medium s",
           "generate peak RSS MB", "Dask import 1 / 2 workers s")


def measure_size(pages: int, a, has_dask: bool) -> dict:
    row = dict.fromkeys(COLUMNS, "n/a")
    row["pages"] = f"{pages:,}"
    work = a.dir / f"n{pages}-s{a.seed}"
    work.mkdir(parents=True, exist_ok=True)
    dump = work / f"synthwiki-{pages}-s{a.seed}-pages-articles-multistream.xml.bz2"
    print(f"== {pages:,} pages ({work}); load average {os.getloadavg()[0]:.1f}", flush=True)
    try:
        stats = make_dump(dump, pages, a.seed, a.workers)
        xml = stats["xml_bytes"]
        row["dump MB bz2 / XML"] = f"{_mb(stats['file_bytes'])} / {_mb(xml)}"
        row["dump write s"] = "reused" if stats["reused"] else f"{stats['seconds']:.0f}"
        print(f"  dump {row['dump MB bz2 / XML']} MB ({row['dump write s']})", flush=True)
    except Exception as exc:  # noqa: BLE001 - a failed step is a cell, not the end of the benchmark
        row["dump MB bz2 / XML"] = f"FAILED (dump: {type(exc).__name__}: {exc})"
        return row
    snap = work / "snapshot"
    m = build(dump, snap, ["--workers", str(a.workers)])
    if not m["ok"]:
        reason = _failure("import", m)
        for col in ("import s", "XML MB/s", "pages/s", "peak RSS MB (PSS)", "snapshot MB"):
            row[col] = reason
        print(f"  import {reason}", flush=True)
    else:
        n = m["manifest"]["counts"]["pages"]
        row["import s"] = f"{m['wall']:.0f}"
        row["XML MB/s"] = f"{xml / 1e6 / m['wall']:.2f}"
        row["pages/s"] = f"{n / m['wall']:,.0f}"
        row["peak RSS MB (PSS)"] = f"{m['peak_rss'] / 2**20:,.0f} ({m['peak_pss'] / 2**20:,.0f})"
        row["snapshot MB"] = f"{m['size'] / 1e6:,.0f}"
        c = m["manifest"]["counts"]
        print(f"  import {m['wall']:.0f} s: {n:,} pages, {c.get('redirects', 0):,} redirects, "
              f"{c.get('infobox_pages', 0):,} infobox pages, {c.get('pages_with_coords', 0):,} with coordinates, "
              f"links inside {c.get('links_in_snapshot', 0):,} of {c.get('links', 0):,}", flush=True)
        s = search(snap, a.queries, a.seed)
        if "error" in s:
            row["search p50/p95 ms"] = row["paged p50/p95 ms"] = s["error"]
        else:
            row["search p50/p95 ms"] = f"{_pct(s['plain'], .5) * 1e3:.1f} / {_pct(s['plain'], .95) * 1e3:.1f}"
            row["first search s"] = f"{s['first']:.1f}"
            row["paged p50/p95 ms"] = (f"{_pct(s['paged'], .5) * 1e3:.1f} / {_pct(s['paged'], .95) * 1e3:.1f}"
                                       if s["paged"] is not None else "n/a (no search_page)")
            print(f"  search over {s['queries']} queries ({s['with_hits']} with hits; e.g. "
                  f"{', '.join(repr(q) for q in s['examples'][:3])}): {row['search p50/p95 ms']} ms, "
                  f"paged {row['paged p50/p95 ms']}, first {row['first search s']} s", flush=True)
        if a.generate:
            g = generate(snap, work / "generate")
            if g["rc"] == 0:
                result = next((line for line in reversed(g["lines"]) if line.strip()), "")
                row["generate 5 medium s"] = f"{g['wall']:.0f} ({result.split(';')[0][:70]})"
                row["generate peak RSS MB"] = f"{g['peak_rss'] / 2**20:,.0f}"
            else:
                row["generate 5 medium s"] = _failure("generate", g)
                row["generate peak RSS MB"] = f"{g['peak_rss'] / 2**20:,.0f}"
            print(f"  generate: {row['generate 5 medium s']}, peak RSS {row['generate peak RSS MB']} MB", flush=True)
        else:
            row["generate 5 medium s"] = row["generate peak RSS MB"] = "n/a (--no-generate)"
    if not has_dask:
        row["Dask import 1 / 2 workers s"] = "n/a (build has no --dask-workers)"
    elif not a.dask:
        row["Dask import 1 / 2 workers s"] = "n/a (--no-dask)"
    else:
        walls = []
        for n in (1, 2):
            d = build(dump, work / f"snapshot-dask{n}", ["--dask-workers", str(n)])
            shutil.rmtree(work / f"snapshot-dask{n}", ignore_errors=True)
            if not d["ok"]:
                walls.append(_failure(f"dask {n}", d))
            else:
                walls.append(d["wall"])
        if all(isinstance(w, float) for w in walls):
            row["Dask import 1 / 2 workers s"] = f"{walls[0]:.0f} / {walls[1]:.0f} ({walls[0] / walls[1]:.2f}x)"
        else:
            row["Dask import 1 / 2 workers s"] = " / ".join(w if isinstance(w, str) else f"{w:.0f}" for w in walls)
        print(f"  Dask: {row['Dask import 1 / 2 workers s']}", flush=True)
    if not a.keep:
        shutil.rmtree(snap, ignore_errors=True)
        shutil.rmtree(work / "generate", ignore_errors=True)
    return row


def table(rows: list[dict]) -> str:
    def cell(v: str) -> str:
        return str(v).replace("|", "\\|")
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "|".join("---" for _ in COLUMNS) + "|"]
    out += ["| " + " | ".join(cell(r[c]) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="content pages per world, comma-separated")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/legwork-world-scale"))
    ap.add_argument("--workers", type=int, default=2, help="the build's --workers (and the dump writer's jobs)")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--no-generate", dest="generate", action="store_false")
    ap.add_argument("--no-dask", dest="dask", action="store_false", help="skip the Dask 1-vs-2-worker imports")
    ap.add_argument("--keep", action="store_true", help="keep the snapshots (the dumps are always kept)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "world_scale.txt")
    ap.add_argument("--_search", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a._search:
        print(json.dumps(search_child(a._search, a.queries, a.seed)))
        return 0
    sizes = [int(s.replace("_", "")) for s in a.sizes.split(",") if s.strip()]
    a.dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(a.dir).free / 1e9
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    head = (f"world_scale.py --sizes {a.sizes} --seed {a.seed} --workers {a.workers} --queries {a.queries}; "
            f"{started}; {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start; {free:.0f} GB free "
            f"in {a.dir}")
    print(head, flush=True)
    has_dask = "--dask-workers" in build_help()
    rows = []
    for pages in sizes:
        try:
            rows.append(measure_size(pages, a, has_dask))
        except Exception as exc:  # noqa: BLE001 - the benchmark prints; it never fails
            row = dict.fromkeys(COLUMNS, f"FAILED ({type(exc).__name__}: {exc})")
            row["pages"] = f"{pages:,}"
            rows.append(row)
    text = (f"{head}; load average at the end {os.getloadavg()[0]:.1f}\n"
            "(the machine is shared: times are on a loaded machine)\n\n" + table(rows) + "\n")
    print("\n" + text)
    # newest first: the earlier runs and any notes written beside them stay below, as they were
    earlier = a.out.read_text() if a.out.is_file() else ""
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(text + ("\n" + earlier if earlier else ""))
    print(f"written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
