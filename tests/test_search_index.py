"""The in-memory BM25 (``pipeline.snapshot.search_index``) against SQLite's own ``bm25()``: every
matching row's score must be the very number FTS5 returns, so the search tool ranks as it did when
SQLite scored every row."""
from __future__ import annotations

import re
import sqlite3

import numpy as np
import pytest

from pipeline.config import load_settings
from pipeline.snapshot.search_index import SearchIndex
from pipeline.snapshot.store import _TITLE_COLUMN_WEIGHTS, SnapshotStore

QUERIES = [
    "river Africa longest",
    "running runs ran run",                 # four words, one porter stem: four phrases of one token
    "São Paulo Brazil largest city",        # diacritics removed by the tokenizer
    "the capital city of the country in northern Europe",
    "Azerbaijani poet 1483 1556",
    "population 2020 census km2",
    "zzqx unknownword",                     # no row holds either: nothing matches
]


@pytest.fixture(scope="module")
def store():
    return SnapshotStore.open(load_settings().snapshot_dir)


@pytest.fixture(scope="module")
def index(store):
    return SearchIndex.build(store._conn(), "pages_fts", _TITLE_COLUMN_WEIGHTS)


def sqlite_scores(store, words: list[str]) -> dict[int, float]:
    query = " OR ".join(f'"{w}"' for w in words)
    weights = ", ".join(str(w) for w in _TITLE_COLUMN_WEIGHTS)
    return dict(store._conn().execute(
        f"SELECT rowid, -bm25(pages_fts, {weights}) FROM pages_fts WHERE pages_fts MATCH ?", (query,)))


@pytest.mark.parametrize("query", QUERIES)
def test_every_matching_row_scores_exactly_as_sqlite(store, index, query):
    words = [w for w in query.lower().split()]
    expected = sqlite_scores(store, words)
    scores = index.score([index.tokens(w)[0] for w in words])
    got = {int(r): float(scores[r]) for r in np.flatnonzero(scores > 0.0)}
    assert got.keys() == expected.keys()
    assert all(got[r] == expected[r] for r in expected), "scores differ from SQLite's in the last bits"


def test_search_ranks_as_sqlite_ranking_did(store, index):
    """The candidates in memory and in SQL: same rows, order and scores, for short and long queries."""
    long_query = ("From the page where you found the answer to clue 3, go to the page of the river that the sixth sentence "
                  "of its opening text names, a tributary of the Niger in West Africa")
    for query in QUERIES[:-1] + [long_query, "Ray Charles birthplace", "France"]:
        words = list(dict.fromkeys(re.findall(r"\w+", query.lower())))
        raw = re.findall(r"\w+", query)
        for limit in (50, 100):
            memory_best, memory_runs = store._rank_in_memory(index, [index.tokens(w)[0] for w in words], raw, limit)
            sql_best, sql_runs = store._rank_in_sql(" OR ".join(f'"{w}"' for w in words), raw, limit)
            assert memory_best == sql_best
            assert sorted(memory_runs) == sorted(sql_runs)     # title runs: re-ranked afterwards


def test_a_word_the_tokenizer_splits_is_ranked_by_sqlite(store, index):
    assert index.tokens("foo_bar") == ("foo", "bar")       # a phrase of two tokens: not the index's job
    assert index.tokens("Running") == ("run",)
    hits = store.search("Niger_River Mali", k=5)
    assert hits and all(h["score"] > 0 for h in hits)


def test_kept_index_is_reused_and_a_stale_one_rebuilt(store, index, tmp_path):
    path = tmp_path / "search.npz"
    index.save(path)
    loaded = SearchIndex.load(path, _TITLE_COLUMN_WEIGHTS)
    assert loaded is not None and loaded.terms == index.terms
    assert np.array_equal(loaded.score(["river", "africa"]), index.score(["river", "africa"]))
    assert SearchIndex.load(path, (1.0, 1.0, 1.0, 1.0)) is None        # other weights: rebuilt
    path.write_bytes(b"not an npz")
    assert SearchIndex.load(path, _TITLE_COLUMN_WEIGHTS) is None       # unreadable: rebuilt
    assert SearchIndex.load(tmp_path / "missing.npz", _TITLE_COLUMN_WEIGHTS) is None


def test_index_of_a_tiny_table_by_hand():
    """BM25 worked out by hand on three rows: k1 = 1.2, b = 0.75, weights 2 and 1."""
    import math
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(a, b)")
    conn.executemany("INSERT INTO t(rowid, a, b) VALUES (?, ?, ?)",
                     [(1, "red fox", "a red red hen"), (2, "blue", "sky"), (3, "green hill", "far away now")])
    index = SearchIndex.build(conn, "t", (2.0, 1.0))
    n, avgdl = 3, (6 + 2 + 5) / 3
    idf = math.log((n - 1 + 0.5) / (1 + 0.5))          # "red" is in one row of three
    f, d = 2.0 * 1 + 1.0 * 2, 6                         # once in a (weight 2), twice in b (weight 1)
    expected = idf * ((f * 2.2) / (f + 1.2 * (0.25 + 0.75 * d / avgdl)))
    scores = index.score(["red"])
    assert scores[1] == pytest.approx(expected, rel=1e-12)
    assert scores[2] == scores[3] == 0.0


def test_search_titles_are_the_titles_the_search_tool_shows(tmp_path):
    """Checks read a search's titles without its snippets (``StageContext.search_titles``): the same
    titles, in the same order, as the ``web_search`` tool an agent calls."""
    from pipeline.stages.base import StageContext

    ctx = StageContext.create(load_settings(cache_path=tmp_path / "cache.sqlite"))
    for query in QUERIES + ["1998 album by the band", "a", "foo_bar baz"]:
        for k in (1, 3, 10):
            tool = ctx.toolbox.call("web_search", {"query": query, "num_results": k})
            assert ctx.search_titles(query, k) == [h["title"] for h in tool.data["results"]], (query, k)
    assert ctx.search_titles("Azerbaijani poet 1483 1556", 3)   # not vacuous: some query finds pages
