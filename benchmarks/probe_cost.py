"""What the skip probe of a whole hop clue costs in a large world, and where (issue 33, item 8).

    LEGWORK_SNAPSHOT=<a world above 50,000 pages> python benchmarks/probe_cost.py --legs RUN_DIR [--out FILE]

At 10^6 pages verbalize is the release's largest stage (about 40% of its stage work against 32% on the
embedded world), and most of it is the skip probe of each hop clue's whole wording: a ``web_search`` of its
words for the ten results (``verbalize.probe_finds``), ranked by tantivy where the embedded world scores in
memory. This prints, over the hop clues of the accepted legs in ``RUN_DIR`` (the words the probe searches,
``verbalize.skip_probe_words``), in one warm process:
- ``search(query, 10)`` end to end, each query once (what the probe pays per clue wording: the BM25 pool of
  100, its titles, the title runs and their scores);
(each query's postings read once before, as a release's process has them) and
- tantivy's own top-k read of the same queries at k = 10, 100 and 210 (the pool's read and its slack): if
  the read cost fell with k, a smaller pool would pay;
- the pool's 100 titles read as stored documents, against the rowid fast field and one SQLite query;
- the words the queries share most (the clue templates' words) with their document frequency and the time
  of a top-10 read of each alone.
It decides nothing and fails on no time: it says why the large world's verbalize costs what it does.
"""
from __future__ import annotations

import argparse
import collections
import re
import statistics
import time
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.config import load_settings
from pipeline.snapshot.store import _QUERY_STOPWORDS, SnapshotStore
from pipeline.stages.verbalize import skip_probe_words

HOP_CLUE = re.compile(r"^\d+\. ((?:From|On) the page where .*go to the page .*)$")


def hop_queries(legs_dir: Path) -> list[str]:
    """The skip probe's words of every hop clue of the accepted legs under ``legs_dir``."""
    out = []
    for path in sorted(legs_dir.rglob("legs.parquet")):
        for riddle in pq.read_table(path, columns=["riddle"]).column("riddle").to_pylist():
            for line in (riddle or "").splitlines():
                if m := HOP_CLUE.match(line.strip()):
                    out.append(skip_probe_words(m.group(1)))
    return out


def content_words(query: str) -> list[str]:
    words = re.findall(r"\w+", query.lower())
    return list(dict.fromkeys([w for w in words if w not in _QUERY_STOPWORDS] or words))


def ms(values: list[float]) -> str:
    return f"mean {statistics.mean(values) * 1000:.2f} ms, median {statistics.median(values) * 1000:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--legs", type=Path, required=True, help="a run or release folder holding legs.parquet files")
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    store = SnapshotStore.open(load_settings().snapshot_dir)
    if store.in_memory_search():
        raise SystemExit(f"the world has {len(store)} pages: its search is in memory, no tantivy to measure "
                         "(set LEGWORK_SNAPSHOT to a larger world)")
    queries = list(dict.fromkeys(hop_queries(args.legs)))
    if not queries:
        raise SystemExit(f"no hop clue in the legs under {args.legs}")
    engine = store.large_search()
    lines = [(f"# python benchmarks/probe_cost.py --legs {args.legs}: {len(store):,} pages, "
              f"{len(queries)} distinct hop clue wordings")]
    for q in queries:   # the index's pages read once (a release's process has them): warm, not cold, reads
        engine.searcher.search(engine.query(content_words(q)), 210, count=False)
    ends = []
    for q in queries:
        t = time.perf_counter()
        store.search(q, k=10, snippets=False)
        ends.append(time.perf_counter() - t)
    lines.append(f"search(query, 10), the probe, end to end: {ms(ends)}")
    compiled = [engine.query(content_words(q)) for q in queries]
    lines.append(f"words per query: median {statistics.median(len(content_words(q)) for q in queries)}")
    for k in (10, 100, 210):
        reads = []
        for query in compiled:
            t = time.perf_counter()
            engine.searcher.search(query, k, count=False)
            reads.append(time.perf_counter() - t)
        lines.append(f"tantivy top-{k} read: {ms(reads)}")
    stored, fast = [], []
    conn = store._conn()
    for query in compiled:
        hits = engine.searcher.search(query, 100, count=False).hits
        t = time.perf_counter()
        by_doc = [engine.searcher.doc(address)["title"][0] for _, address in hits]
        stored.append(time.perf_counter() - t)
        t = time.perf_counter()
        ids = engine.searcher.fast_field_values("rowid", [address for _, address in hits])
        titles = dict(conn.execute(f"SELECT id, title FROM pages WHERE id IN ({','.join('?' * len(ids))})", ids))
        by_field = [titles[i] for i in ids]
        fast.append(time.perf_counter() - t)
        assert by_doc == by_field
    lines.append(f"the pool's 100 titles as stored documents: {ms(stored)}; by the rowid fast field and SQLite: {ms(fast)}")
    shared = collections.Counter(w for q in queries for w in content_words(q))
    lines.append("the words most queries hold: word, queries holding it, pages holding it, top-10 read alone")
    for word, n in shared.most_common(15):
        query = engine.query([word])
        t = time.perf_counter()
        found = engine.searcher.search(query, 10, count=True)
        lines.append(f"  {word:<12} {n:>5} {int(found.count):>9,} {(time.perf_counter() - t) * 1000:6.2f} ms")
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
