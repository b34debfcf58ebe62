"""Search at 10^6 pages: latency of the engines web_search could use, and what they cost (issue 33, item 4).

    python benchmarks/search_scale.py [--pages 1000000] [--seed 7] [--work /tmp/legwork_search_scale]
                                      [--engines sqlite,memory,tantivy] [--out benchmarks/results/search_scale.txt]

Builds a synthetic corpus (kept in ``--work`` and reused when its parameters match): ``--pages`` short
pages in a SQLite file with the snapshot's schema (``pages``, ``redirects``, ``meta`` and the FTS5 table
``pages_fts(title, description, lead, infobox)``, tokenizer ``porter unicode61 remove_diacritics 2``, as
``pipeline.snapshot.build`` makes it, optimised as the import optimises it). Words come from a seeded
vocabulary of 300,000 made-up words (syllables the porter stemmer leaves alone) drawn by Zipf's law
(s = 1.07); lengths are shaped like the default world's (mean about 90 tokens a page: a 2-3 word title, a
2-8 word description, a log-normal lead, an infobox on 30% of pages).

Then it times, in one warm process, k = 10 results per call:
- ``store``: ``SnapshotStore.search_page`` as a world above ``IN_MEMORY_MAX_ROWS`` runs it (the chosen engine,
  tantivy through ``search_tantivy``, with the default ranking's title runs, exact totals and snippets),
  its index built first into ``--work`` (the build time printed);
- ``sqlite``: ``SnapshotStore.search_page`` ranked by SQLite FTS5 alone (``bm25()``; what a world above
  ``IN_MEMORY_MAX_ROWS`` uses), the full tool path: candidates, title runs, exact total, snippets;
- ``memory``: the same calls with BM25 computed in memory (``SearchIndex``) from the postings of the
  queries' terms (a full index would not fit: its size is computed from the postings count);
- ``tantivy``: the tantivy 0.27 engine (Rust; BM25 with block-max WAND, exact counts) over the same
  texts, built into ``--work``: top-10 with offset and count.
Query sets: ``typical`` (1-3 words of Zipf rank 50..300,000, drawn log-uniformly: the names and content
words an agent searches for), ``frequent`` (1-2 words of rank 5..50: each on 10-60% of pages, the worst
case), ``phrase`` (2-word phrases taken from pages' leads, mode phrase) and ``all_words`` (2 words of
typical rank, mode all_words). ``plain`` is offset 0; ``paged`` an offset drawn from 10, 20, ..., 200.
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import resource
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.snapshot import store as store_module
from pipeline.snapshot.search_index import SearchIndex
from pipeline.snapshot.search_tantivy import TantivySearch, index_folder
from pipeline.snapshot.store import _TITLE_COLUMN_WEIGHTS, SnapshotStore

VOCAB = 300_000
ZIPF_S = 1.07
CONSONANTS, VOWELS = "bdfgklmnprtvz", "aou"
SCHEMA = """
CREATE TABLE pages (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, json TEXT NOT NULL);
CREATE TABLE redirects (alias TEXT PRIMARY KEY, target TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX pages_title_nocase ON pages(title COLLATE NOCASE);
CREATE VIRTUAL TABLE pages_fts USING fts5(
    title, description, lead, infobox, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vocabulary(rng: np.random.Generator) -> list[str]:
    """VOCAB distinct made-up words, shortest first (the frequent ranks get the short words)."""
    syllables = [c + v for c in CONSONANTS for v in VOWELS]
    words: set[str] = set()
    while len(words) < VOCAB:
        n = rng.integers(2, 5, size=50_000)
        picks = rng.integers(0, len(syllables), size=(50_000, 4))
        for k, row in zip(n, picks):
            words.add("".join(syllables[i] for i in row[:k]))
    return sorted(words, key=lambda w: (len(w), w))[:VOCAB]


class Sampler:
    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        weights = 1.0 / np.arange(1, VOCAB + 1, dtype=np.float64) ** ZIPF_S
        self.cdf = np.cumsum(weights / weights.sum())

    def zipf(self, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cdf, self.rng.random(n)), VOCAB - 1)

    def log_uniform(self, n: int, lo: int, hi: int) -> np.ndarray:
        return np.exp(self.rng.uniform(math.log(lo), math.log(hi), n)).astype(np.int64)


def build_corpus(db: Path, pages: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    vocab = vocabulary(rng)
    sample = Sampler(rng)
    if db.exists():
        db.unlink()
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + SCHEMA)
    check = conn.execute("SELECT 1").fetchone()   # the porter stemmer leaves every word alone: checked on all
    conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2')")
    conn.execute("INSERT INTO temp.v(x) VALUES (?)", (" ".join(vocab),))
    conn.execute("CREATE VIRTUAL TABLE temp.vv USING fts5vocab(temp, v, row)")
    stems = {r[0] for r in conn.execute("SELECT term FROM temp.vv")}
    assert check and stems == set(vocab), f"{len(set(vocab) - stems)} words are stemmed"
    started = time.perf_counter()
    titles: set[str] = set()
    batch = 10_000
    tokens = 0
    for base in range(0, pages, batch):
        n = min(batch, pages - base)
        lead_len = np.clip(rng.lognormal(4.0, 0.55, n).astype(np.int64), 8, 600)
        desc_len = rng.integers(2, 9, n)
        title_len = rng.integers(2, 4, n)
        box_len = np.where(rng.random(n) < 0.3, rng.integers(5, 31, n), 0)
        lead_words = sample.zipf(int(lead_len.sum()))
        desc_words = sample.zipf(int(desc_len.sum()))
        box_words = sample.zipf(int(box_len.sum()))
        title_words = sample.log_uniform(int(title_len.sum()), 20, VOCAB)
        rows, fts = [], []
        li = di = bi = ti = 0
        for j in range(n):
            title = " ".join(vocab[w].capitalize() for w in title_words[ti:ti + title_len[j]])
            ti += title_len[j]
            suffix = 2
            name = title
            while name in titles:
                name = f"{title} ({suffix})"
                suffix += 1
            titles.add(name)
            lead = " ".join(vocab[w] for w in lead_words[li:li + lead_len[j]]) + "."
            li += lead_len[j]
            desc = " ".join(vocab[w] for w in desc_words[di:di + desc_len[j]])
            di += desc_len[j]
            box = " ".join(vocab[w] for w in box_words[bi:bi + box_len[j]])
            bi += box_len[j]
            tokens += lead_len[j] + desc_len[j] + box_len[j] + title_len[j]
            rows.append((base + j + 1, name, "{}"))
            fts.append((base + j + 1, name, desc, lead, box))
        conn.executemany("INSERT INTO pages (id, title, json) VALUES (?, ?, ?)", rows)
        conn.executemany("INSERT INTO pages_fts (rowid, title, description, lead, infobox) VALUES (?, ?, ?, ?, ?)", fts)
        if base % 100_000 == 0:
            print(f"  {base + n:,} pages, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    inserted = time.perf_counter() - started
    conn.execute("INSERT INTO pages_fts (pages_fts) VALUES ('optimize')")
    conn.execute("INSERT INTO meta (key, value) VALUES ('hash', ?)", (f"synthetic-{pages}-{seed}",))
    conn.commit()
    conn.close()
    built = time.perf_counter() - started
    return {"pages": pages, "seed": seed, "tokens": int(tokens), "insert_s": round(inserted, 1),
            "build_s": round(built, 1), "db_mb": round(db.stat().st_size / 2**20, 1)}


def queries(seed: int, db: Path, n: int) -> dict[str, list[tuple[str, int]]]:
    """Query sets by name: (query, offset) pairs, each query once plain (offset 0) and once paged."""
    rng = np.random.default_rng(seed + 1)
    vocab = vocabulary(np.random.default_rng(seed))
    sample = Sampler(rng)

    def words(lo, hi, count):
        return " ".join(vocab[w] for w in sample.log_uniform(count, lo, hi))

    typical = [words(50, VOCAB, int(rng.integers(1, 4))) for _ in range(n)]
    frequent = [words(5, 50, int(rng.integers(1, 3))) for _ in range(max(10, n // 4))]
    both = [words(50, 20_000, 2) for _ in range(n)]
    conn = sqlite3.connect(db)
    leads = [conn.execute("SELECT lead FROM pages_fts WHERE rowid = ?", (int(r),)).fetchone()[0]
             for r in rng.integers(1, conn.execute("SELECT max(rowid) FROM pages_fts").fetchone()[0] + 1, n)]
    conn.close()
    phrases = []
    for lead in leads:
        ws = lead.rstrip(".").split()
        i = int(rng.integers(0, max(1, len(ws) - 1)))
        phrases.append(" ".join(ws[i:i + 2]))
    offsets = [int(x) for x in rng.integers(1, 21, 4 * n) * 10]
    return {"typical": typical, "frequent": frequent, "phrase": phrases, "all_words": both, "offsets": offsets}


def percentiles(times: list[float]) -> tuple[float, float, float]:
    ms = sorted(t * 1000 for t in times)
    def p(q: float) -> float:      # nearest rank
        return ms[min(len(ms) - 1, math.ceil(q * len(ms)) - 1)]
    return p(0.50), p(0.95), ms[-1]


def time_calls(call, qs: list[str], offsets: list[int]) -> dict[str, tuple]:
    """Each query plain then paged, each call from cold per-query caches (a tool call is one process)."""
    for q in qs[:3]:
        call(q, 0)                                     # warm: the process's tables, the file's pages
    plain, paged, totals = [], [], []
    for i, q in enumerate(qs):
        clear_store_caches()
        t = time.perf_counter()
        totals.append(call(q, 0))
        plain.append(time.perf_counter() - t)
        clear_store_caches()
        t = time.perf_counter()
        call(q, offsets[i % len(offsets)])
        paged.append(time.perf_counter() - t)
    return {"plain": percentiles(plain), "paged": percentiles(paged), "matches": statistics.median(totals)}


def clear_store_caches() -> None:
    store_module._SEARCHES.clear()
    store_module._PAGINGS.clear()


def open_store(db_dir: Path, pages: int) -> SnapshotStore:
    return SnapshotStore(db_dir, {"hash": f"synthetic-{pages}", "counts": {"pages": pages}})


def bench_store_tantivy(db_dir: Path, pages: int, sets: dict) -> dict:
    """``SnapshotStore.search_page`` as a large world runs it: tantivy (``search_tantivy``), the full tool path."""
    store_module.IN_MEMORY_MAX_ROWS = 0
    store_module.LARGE_WORLD_ENGINE = "tantivy"
    store = SnapshotStore(db_dir, {"hash": f"synthetic-{pages}", "counts": {"pages": pages}}, index_dir=db_dir)
    fresh = not TantivySearch.current(db_dir / index_folder(store.hash))
    started = time.perf_counter()
    store.large_search()
    build_s = time.perf_counter() - started
    before = rss_mb()
    out = {}
    for name, mode in (("typical", "words"), ("frequent", "words"), ("phrase", "phrase"), ("all_words", "all_words")):
        out[name] = time_calls(lambda q, o, mode=mode: store.search_page(q, o, 10, mode=mode)["total"],
                               sets[name], sets["offsets"])
    size = sum(f.stat().st_size for f in (db_dir / index_folder(store.hash)).iterdir()) / 2**20
    out.update(build_s=round(build_s, 1) if fresh else None, index_mb=round(size, 1), rss_added_mb=round(rss_mb() - before, 1))
    store.close()
    return out


def bench_sqlite(db_dir: Path, pages: int, sets: dict) -> dict:
    store_module.IN_MEMORY_MAX_ROWS = 0
    store_module.LARGE_WORLD_ENGINE = "sqlite"
    store = open_store(db_dir, pages)
    before = rss_mb()
    out = {}
    for name, mode in (("typical", "words"), ("frequent", "words"), ("phrase", "phrase"), ("all_words", "all_words")):
        clear_store_caches()
        out[name] = time_calls(lambda q, o, mode=mode: store.search_page(q, o, 10, mode=mode)["total"],
                               sets[name], sets["offsets"])
    out["rss_added_mb"] = round(rss_mb() - before, 1)
    store.close()
    return out


def bench_memory(db_dir: Path, pages: int, sets: dict) -> dict:
    """BM25 in memory, from an index holding the postings of the queries' terms and every row's length."""
    conn = sqlite3.connect(db_dir / "pages.sqlite")
    conn.execute("CREATE VIRTUAL TABLE temp.vrow USING fts5vocab(main, pages_fts, row)")
    postings = conn.execute("SELECT sum(doc), count(*) FROM temp.vrow").fetchone()
    terms = sorted({w for name in ("typical", "frequent") for q in sets[name] for w in q.split()})
    conn.execute("CREATE VIRTUAL TABLE temp.vins USING fts5vocab(main, pages_fts, instance)")
    weight = dict(zip(("title", "description", "lead", "infobox"), _TITLE_COLUMN_WEIGHTS))
    starts, rows, freqs = [0], [], []
    for term in terms:
        got = conn.execute("SELECT doc, col, count(*) FROM temp.vins WHERE term = ? GROUP BY doc, col ORDER BY doc",
                           (term,)).fetchall()
        last = None
        for doc, col, n in got:
            if doc != last:
                rows.append(doc)
                freqs.append(0.0)
                last = doc
            for _ in range(n):
                freqs[-1] += weight[col]
        starts.append(len(rows))
    # every row's token count, from the corpus itself (the docsize table holds it in FTS5's varints)
    lengths = np.zeros(pages + 1, dtype=np.int64)
    for rowid, title, desc, lead, box in conn.execute("SELECT rowid, title, description, lead, infobox FROM pages_fts"):
        lengths[rowid] = sum(len(x.replace("(", " ").replace(")", " ").rstrip(".").split()) for x in (title, desc, lead, box) if x)
    conn.close()
    index = SearchIndex(terms, np.asarray(starts, dtype=np.int64), np.asarray(rows, dtype=np.int64),
                        np.asarray(freqs, dtype=np.float64), lengths, pages, int(lengths.sum()), _TITLE_COLUMN_WEIGHTS,
                        "porter unicode61 remove_diacritics 2")
    store_module.IN_MEMORY_MAX_ROWS = 10**9
    store = open_store(db_dir, pages)
    store_module._INDEXES[store.hash] = index
    before = rss_mb()
    store._titles_of([1])           # the title table the in-memory ranking reads: every title, once
    titles_mb = rss_mb() - before
    store._row_ids()
    store._name_keys()
    tables_mb = rss_mb() - before
    out = {}
    for name in ("typical", "frequent"):
        clear_store_caches()
        out[name] = time_calls(lambda q, o: store.search_page(q, o, 10)["total"], sets[name], sets["offsets"])
    full_index_mb = (postings[0] * 16 + (pages + 1) * 8 + postings[1] * 60) / 2**20
    out.update(postings=int(postings[0]), terms=int(postings[1]), full_index_mb=round(full_index_mb),
               title_table_mb=round(titles_mb), title_tables_mb=round(tables_mb))
    store_module._INDEXES.pop(store.hash, None)
    store.close()
    store_module.IN_MEMORY_MAX_ROWS = 0
    return out


def bench_tantivy(db_dir: Path, work: Path, pages: int, sets: dict) -> dict:
    import tantivy

    path = work / "tantivy"
    started = time.perf_counter()
    schema_builder = tantivy.SchemaBuilder()
    for name in ("title", "description", "lead", "infobox"):
        schema_builder.add_text_field(name, stored=name in ("title",), tokenizer_name="en_stem")
    schema_builder.add_integer_field("rowid", stored=True, indexed=True, fast=True)
    schema = schema_builder.build()
    fresh = not (path / "meta.json").exists()
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
    index = tantivy.Index(schema, path=str(path))
    if fresh:
        writer = index.writer(heap_size=512_000_000, num_threads=2)
        conn = sqlite3.connect(db_dir / "pages.sqlite")
        for rowid, title, desc, lead, box in conn.execute("SELECT rowid, title, description, lead, infobox FROM pages_fts"):
            writer.add_document(tantivy.Document(rowid=rowid, title=title, description=desc, lead=lead, infobox=box))
        writer.commit()
        writer.wait_merging_threads()
        conn.close()
    build_s = time.perf_counter() - started
    index.reload()
    searcher = index.searcher()
    size_mb = sum(f.stat().st_size for f in path.iterdir() if f.is_file()) / 2**20
    before = rss_mb()
    fields = ["title", "description", "lead", "infobox"]
    boosts = dict(zip(fields, _TITLE_COLUMN_WEIGHTS))

    def call(q: str, offset: int, conjunction: bool = False, phrase: bool = False) -> int:
        text = f'"{q}"' if phrase else q
        query = index.parse_query(text, fields, field_boosts=boosts, conjunction_by_default=conjunction)
        result = searcher.search(query, 10, count=True, offset=offset)
        for _, address in result.hits:
            searcher.doc(address)
        return result.count

    out = {"typical": time_calls(call, sets["typical"], sets["offsets"]),
           "frequent": time_calls(call, sets["frequent"], sets["offsets"]),
           "phrase": time_calls(lambda q, o: call(q, o, phrase=True), sets["phrase"], sets["offsets"]),
           "all_words": time_calls(lambda q, o: call(q, o, conjunction=True), sets["all_words"], sets["offsets"])}
    out.update(build_s=round(build_s, 1) if fresh else None, index_mb=round(size_mb, 1),
               rss_added_mb=round(rss_mb() - before, 1))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--work", type=Path, default=Path("/tmp/legwork_search_scale"))
    parser.add_argument("--engines", default="store,sqlite,memory,tantivy")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    db_dir = args.work / f"world-{args.pages}-{args.seed}"
    db = db_dir / "pages.sqlite"
    stamp = db_dir / "corpus.json"
    if stamp.exists() and db.exists():
        corpus = json.loads(stamp.read_text())
    else:
        print(f"building a {args.pages:,}-page corpus in {db}", file=sys.stderr)
        corpus = build_corpus(db, args.pages, args.seed)
        stamp.write_text(json.dumps(corpus))
    sets = queries(args.seed, db, args.queries)
    results = {}
    for engine in args.engines.split(","):
        gc.collect()
        print(f"timing {engine}", file=sys.stderr, flush=True)
        if engine == "sqlite":
            results[engine] = bench_sqlite(db_dir, args.pages, sets)
        elif engine == "memory":
            results[engine] = bench_memory(db_dir, args.pages, sets)
        elif engine == "store":
            results[engine] = bench_store_tantivy(db_dir, args.pages, sets)
        elif engine == "tantivy":
            results[engine] = bench_tantivy(db_dir, args.work / f"world-{args.pages}-{args.seed}", args.pages, sets)
    lines = [(f"search_scale: {corpus['pages']:,} synthetic pages (seed {corpus['seed']}), "
              f"{corpus['tokens'] / corpus['pages']:.0f} tokens a page; FTS5 build (insert + optimize) "
              f"{corpus['build_s']} s, pages.sqlite {corpus['db_mb']} MB"),
             (f"k = 10 per call; {args.queries} typical queries, {len(sets['frequent'])} frequent; plain = offset 0, "
              "paged = offset 10..200; latency in ms (p50 / p95 / max), one warm process, 2 shared cores (loaded machine)"),
             "",
             f"{'engine':9} {'set':10} {'plain p50':>9} {'p95':>7} {'max':>7}   {'paged p50':>9} {'p95':>7} {'max':>7}   {'median total':>12}"]
    for engine, res in results.items():
        for name in ("typical", "frequent", "phrase", "all_words"):
            if name in res:
                r = res[name]
                lines.append(f"{engine:9} {name:10} {r['plain'][0]:9.1f} {r['plain'][1]:7.1f} {r['plain'][2]:7.1f}   "
                             f"{r['paged'][0]:9.1f} {r['paged'][1]:7.1f} {r['paged'][2]:7.1f}   {r['matches']:12,.0f}")
    lines.append("")
    if "sqlite" in results:
        lines.append(f"sqlite: nothing beyond the import's FTS5 index; memory added by searching {results['sqlite']['rss_added_mb']} MB")
    if "memory" in results:
        m = results["memory"]
        lines.append(f"memory: the full in-memory index would hold {m['postings']:,} postings of {m['terms']:,} terms: "
                     f"about {m['full_index_mb']:,} MB (16 bytes a posting), plus {m['title_table_mb']} MB for the title "
                     f"table its ranking reads ({m['title_tables_mb']} MB with the title-run tables); building it reads "
                     "every posting through fts5vocab in Python")
    if "tantivy" in results:
        t = results["tantivy"]
        lines.append(f"tantivy: its own index beside the snapshot, {t['index_mb']} MB, built in "
                     f"{t['build_s'] if t['build_s'] is not None else '(kept from an earlier run)'} s; memory added by searching {t['rss_added_mb']} MB")
    if "store" in results:
        t = results["store"]
        lines.append(f"store: web_search's large-world path (SnapshotStore.search_page on tantivy, title runs, exact totals, "
                     f"snippets); its index {t['index_mb']} MB, built in "
                     f"{t['build_s'] if t['build_s'] is not None else '(kept from an earlier run)'} s by one writer thread; "
                     f"memory added by searching {t['rss_added_mb']} MB")
    lines.append(f"peak RSS of this process: {peak_mb():.0f} MB")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
