"""Seeds from imported pages (issue 21, item 9): do pages the project has never seen seed a leg?

Builds a snapshot from the embedded sources (``../shared/data/wikipedia``) plus a folder of raw
wikitext pages (default ``benchmarks/data/unseen_wikitext``: 25 English articles of
spencermountain/wtf_wikipedia ``tests/cache`` that the embedded snapshot does not hold, see its
SOURCE.txt), exactly as a user would (``python -m pipeline.snapshot build --from ... --from ...``),
then asks for one leg seeded at each imported page (``python -m pipeline.generate --seed-title``)
and prints, per page, whether a leg was accepted, else the most frequent rejection reason, and the
share of pages seeded. Goal: at least 90%.

    python benchmarks/imported_seeds.py                       # medium dag, seed 1
    python benchmarks/imported_seeds.py --level hard --variant linear --riddles
    python benchmarks/imported_seeds.py --bound       # the most any hop rule could seed (no legs made)

``--bound`` asks, per imported page, whether any chain of the level's fewest hops exists at all: each
page one the page before links to or names (by any mention, whatever its kind or how many like it the
sentence names) and offering any fact of the level's kinds. No rule that keeps clues unambiguous can
seed more pages than that.

The snapshot is cached under the temp folder, keyed by the inputs' hashes and the package's code
version of the importer (``pipeline/snapshot``; a build takes about 5 s).
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "wikipedia"
PAGES = ROOT / "benchmarks" / "data" / "unseen_wikitext"


def snapshot_key(inputs: list[Path]) -> str:
    from pipeline.snapshot.build import collect_sources
    from pipeline.versions import tree_digest

    sources, _ = collect_sources(inputs)
    h = hashlib.sha256(tree_digest(ROOT / "pipeline" / "snapshot").encode())   # the importer's code
    for src in sources:
        h.update(f"{src.kind}\t{src.name}\t{src.sha256()}\n".encode())
    return h.hexdigest()[:16]


def build_snapshot(inputs: list[Path], cache_root: Path) -> Path:
    """The snapshot of ``inputs``, built once per key with the project's CLI."""
    out = cache_root / f"snapshot-{snapshot_key(inputs)}"
    if (out / "manifest.json").exists():
        return out
    cmd = [sys.executable, "-m", "pipeline.snapshot", "build", "--out", str(out), "--fresh", "--quiet"]
    for p in inputs:
        cmd += ["--from", str(p)]
    proc = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"snapshot build failed: {proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return out


def imported_titles(snapshot: Path, folder: Path) -> list[str]:
    """The titles the snapshot holds from ``folder``'s files (as its build named them)."""
    import sqlite3

    prefix = folder.name + "/"
    with sqlite3.connect(snapshot / "pages.sqlite") as db:
        rows = db.execute("SELECT title, json FROM pages ORDER BY title").fetchall()
    return [t for t, j in rows if (json.loads(j).get("source") or "").startswith(prefix)]


def run_one(title: str, snapshot: Path, out: Path, args) -> dict:
    """One generate run seeded at ``title``: accepted leg or the most frequent rejection reason."""
    if out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pipeline.generate", "--difficulty", args.level, "--variant", args.variant,
         "--count", "1", "--seed", str(args.seed), "--seed-title", title, "--snapshot", str(snapshot),
         "--cache", str(out.parent / "cache.sqlite"), "--out", str(out), "--task-runner", "local", "--quiet"],
        check=False, cwd=ROOT, capture_output=True, text=True)
    row = {"title": title, "ok": False, "reason": "", "seconds": time.perf_counter() - t0, "riddle": "",
           "hops": 0, "attempts": 0}
    legs = out / "legs.parquet"
    if legs.exists() and pq.read_table(legs).num_rows:
        leg = pq.read_table(legs).to_pylist()[0]
        row.update(ok=True, riddle=leg["riddle"], hops=leg["n_route_info"] - 1, stops=leg["n_stops"])
    rejected = out / "rejected.parquet"
    if rejected.exists():
        reasons = collections.Counter(r["reason"] for r in pq.read_table(rejected).to_pylist())
        row["attempts"] = sum(reasons.values()) + row["ok"]
        if not row["ok"] and reasons:
            reason, n = reasons.most_common(1)[0]
            row["reason"] = f"{n}x {reason}"
    if not row["ok"] and not row["reason"]:
        row["reason"] = f"exit {proc.returncode}: " + (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return row


def loosest_chain(title: str, ctx, modes: tuple[str, ...], hops: int) -> list[str] | None:
    """A chain of ``hops`` pages from ``title``, each linked or named (any mention) by the one before and
    offering a fact at ``modes``: what the loosest hop rule could walk (``--bound``), else None."""
    from pipeline.stages.facts import page_facts
    from pipeline.stages.hops import hops_from, sentences, titles_named

    def onward(t: str) -> list[str]:
        page = ctx.page(t)
        found = {link.title for link in page.links if link.in_snapshot} | {h.target for h in hops_from(t, ctx)}
        for block in [page.description, page.lead] + [s.text for s in page.sections]:
            for sentence in sentences(block or ""):
                found |= set(titles_named(sentence, ctx)) | set(titles_named(sentence, ctx, as_read=True))
        return sorted(found - {t})

    def offers(t: str) -> bool:
        page = ctx.page(t)
        return page is not None and bool(page_facts(page, modes))

    def extend(route: list[str]) -> list[str] | None:
        if len(route) == hops + 1:
            return route
        for nxt in onward(route[-1]):
            if nxt not in route and offers(nxt) and (found := extend(route + [nxt])):
                return found
        return None
    return extend([title]) if offers(title) else None


def bound(snapshot: Path, titles: list[str], args) -> int:
    """Print, per imported page, the loosest chain of the level's fewest hops, and how many have one."""
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext

    ctx = StageContext.create(load_settings(snapshot_dir=snapshot, cache_path=args.work / "bound-cache.sqlite",
                                            derived_dir=args.work / "bound-derived"))
    preset = ctx.presets[args.level]
    n = 0
    for title in titles:
        chain = loosest_chain(title, ctx, preset.extraction, preset.hops[0])
        n += chain is not None
        print(f"{title[:52]:52} {' -> '.join(chain[1:]) if chain else 'no chain'}")
    print(f"\nat most {n} of {len(titles)} ({100 * n / max(len(titles), 1):.0f}%) could seed a {args.level} leg "
          f"({preset.hops[0]} hops, each to a page linked or named by the one before, offering any fact)")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", type=Path, default=PAGES, help="folder of raw wikitext pages to import")
    ap.add_argument("--base", type=Path, action="append", default=None,
                    help=f"the other inputs of the snapshot (default {SHARED})")
    ap.add_argument("--level", default="medium")
    ap.add_argument("--variant", default="dag")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "legwork-imported-seeds")
    ap.add_argument("--riddles", action="store_true", help="print the riddle of every accepted leg")
    ap.add_argument("--only", action="append", default=None, help="these titles only (repeatable)")
    ap.add_argument("--bound", action="store_true", help="print the most any hop rule could seed; make no legs")
    args = ap.parse_args()

    inputs = (args.base or [SHARED]) + [args.pages]
    args.work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    snapshot = build_snapshot(inputs, args.work)
    titles = imported_titles(snapshot, args.pages)
    if args.only:
        titles = [t for t in titles if t in args.only]
    print(f"snapshot {snapshot} ({time.perf_counter() - t0:.1f} s); {len(titles)} imported pages; "
          f"{args.level} {args.variant}, --seed {args.seed}")
    if args.bound:
        return bound(snapshot, titles, args)
    runs = args.work / f"runs-{args.level}-{args.variant}-s{args.seed}"
    rows = []
    for i, title in enumerate(titles):
        row = run_one(title, snapshot, runs / f"{i:02d}", args)
        rows.append(row)
        status = (f"ok      {row['hops']} hops, attempt {row['attempts']}" if row["ok"]
                  else f"FAILED  {row['reason']}")
        print(f"{title[:52]:52} {row['seconds']:5.1f} s  {status}", flush=True)
        if args.riddles and row["ok"]:
            print("    " + row["riddle"].replace("\n", "\n    "))
    ok = sum(r["ok"] for r in rows)
    print(f"\nseeded {ok} of {len(rows)} ({100 * ok / max(len(rows), 1):.0f}%)")
    failures = collections.Counter(r["reason"].split("x ", 1)[-1].split(": ", 1)[0] + ": " +
                                   _shape(r["reason"]) for r in rows if not r["ok"])
    for reason, n in failures.most_common():
        print(f"  {n} x {reason}")
    return 0


def _shape(reason: str) -> str:
    """A rejection reason without its page title, to group pages failing the same way."""
    text = reason.split(": ", 1)[-1]
    return " ".join(w for w in text.split("'")[::2]).strip()


if __name__ == "__main__":
    sys.exit(main())
