"""FTS5's own BM25, computed in memory from the snapshot's full-text index.

``SnapshotStore.search`` ranks every page that shares a word with the query. SQLite scores each of
those rows in C, one row at a time, through the ``bm25()`` auxiliary function; with the thirty-word
queries that the generator's skip probes send, that was most of a search (4 ms of 6). This module
reads the index's postings once (``fts5vocab``: every term, row and column, so the tokens are the
table's own, porter stemming and diacritics included), keeps them as arrays, and scores a query with
the formula of SQLite's ``fts5_aux.c`` (``fts5Bm25Function``), operation for operation in IEEE
doubles, so the scores are the very numbers SQLite returns and the ranking does not change:

    idf(p)   = log((N - n(p) + 0.5) / (n(p) + 0.5)), or 1e-6 where that is not positive
    f(p, r)  = the sum of the column weights over p's instances in row r
    score(r) = sum over phrases p, in query order, of
               idf(p) * ((f * (k1 + 1)) / (f + k1 * (1 - b + b * D(r) / avgdl)))

with k1 = 1.2, b = 0.75, N the rows, n(p) the rows holding p, D(r) the row's tokens and avgdl their
mean. A query word that the tokenizer splits into several tokens (a phrase) is not handled here; the
caller falls back to SQL for it. ``tests/test_search_index.py`` checks the scores against SQLite's.

The arrays depend only on the snapshot, so they are kept (``save``/``load``) beside the other derived
data under the snapshot's hash; building them takes about a second.
"""
from __future__ import annotations

import math
import os
import re
import sqlite3
import threading
from functools import lru_cache
from pathlib import Path

import numpy as np

K1 = 1.2
B = 0.75
FORMAT = 1          # bump when the arrays' layout changes: older files are rebuilt, not misread


class SearchIndex:
    """Postings of every term: ``rows[start[t]:start[t + 1]]`` are the row ids holding term ``t`` and
    ``freqs`` their column-weighted frequencies; ``lengths[rowid]`` is a row's token count."""

    def __init__(self, terms: list[str], start: np.ndarray, rows: np.ndarray, freqs: np.ndarray,
                 lengths: np.ndarray, n_rows: int, n_tokens: int, weights: tuple[float, ...], tokenize: str):
        self.term_ids = {t: i for i, t in enumerate(terms)}
        self.terms, self.start, self.rows, self.freqs = terms, start, rows, freqs
        self.lengths, self.n_rows, self.n_tokens = lengths, n_rows, n_tokens
        self.weights, self.tokenize = weights, tokenize
        self.avgdl = float(n_tokens) / float(n_rows) if n_rows else 0.0
        self._tokenizer_local = threading.local()

    # ---- building, keeping -------------------------------------------------------------------------
    @classmethod
    def build(cls, conn: sqlite3.Connection, table: str, weights: tuple[float, ...]) -> SearchIndex:
        """From the FTS5 table ``table`` of ``conn``: its postings, read through ``fts5vocab``."""
        tokenize = tokenizer_of(conn, table)
        vocab = f"_vocab_{os.getpid()}_{threading.get_ident()}"
        conn.execute(f"CREATE VIRTUAL TABLE temp.{vocab} USING fts5vocab(main, {table}, instance)")
        try:
            counts = conn.execute(f"SELECT term, doc, col, count(*) FROM temp.{vocab} "
                                  "GROUP BY term, doc, col ORDER BY term, doc").fetchall()
        finally:
            conn.execute(f"DROP TABLE temp.{vocab}")
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        weight_of = {name: (weights[i] if i < len(weights) else 1.0) for i, name in enumerate(columns)}
        n_rows = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        max_rowid = conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0]
        terms: list[str] = []
        start: list[int] = []
        rows: list[int] = []
        freqs: list[float] = []
        lengths = np.zeros(max_rowid + 1, dtype=np.int64)
        for term, doc, col, n in counts:
            if not terms or terms[-1] != term:
                terms.append(term)
                start.append(len(rows))
            if not rows or len(rows) == start[-1] or rows[-1] != doc:
                rows.append(doc)
                freqs.append(0.0)
            for _ in range(n):      # one weight per instance, added in turn as fts5_aux.c adds them
                freqs[-1] += weight_of[col]
            lengths[doc] += n
        start.append(len(rows))
        return cls(terms, np.asarray(start, dtype=np.int64), np.asarray(rows, dtype=np.int64),
                   np.asarray(freqs, dtype=np.float64), lengths, int(n_rows), int(lengths.sum()),
                   tuple(weights), tokenize)

    def save(self, path: Path) -> None:
        """Atomically (a crash leaves the old file or none)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
        np.savez(tmp, terms=np.asarray("\n".join(self.terms)), start=self.start, rows=self.rows,
                 freqs=self.freqs, lengths=self.lengths,
                 meta=np.asarray([self.n_rows, self.n_tokens, FORMAT], dtype=np.int64),
                 weights=np.asarray(self.weights, dtype=np.float64), tokenize=np.asarray(self.tokenize))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path, weights: tuple[float, ...]) -> SearchIndex | None:
        """The kept index, or None when it is missing, unreadable or of another format or weights."""
        try:
            with np.load(path, allow_pickle=False) as f:
                n_rows, n_tokens, fmt = (int(x) for x in f["meta"])
                if fmt != FORMAT or tuple(float(w) for w in f["weights"]) != tuple(weights):
                    return None
                return cls(str(f["terms"]).split("\n"), f["start"], f["rows"], f["freqs"], f["lengths"], n_rows, n_tokens,
                           tuple(weights), str(f["tokenize"]))
        except (OSError, ValueError, KeyError, EOFError):
            return None

    # ---- querying ----------------------------------------------------------------------------------
    def tokens(self, word: str) -> tuple[str, ...]:
        """The tokens the table's tokenizer makes of ``word`` (a query phrase), in order."""
        return _tokens(self.tokenize, word)

    def score(self, phrases: list[str]) -> np.ndarray:
        """BM25 of every row id for the OR of single-token ``phrases`` (0.0 where none occurs)."""
        scores = np.zeros(len(self.lengths), dtype=np.float64)
        norm = None
        for term in phrases:
            t = self.term_ids.get(term)
            if t is None:
                continue            # its rows are none: 0.0 added to each, as in SQLite
            rows = self.rows[self.start[t]:self.start[t + 1]]
            f = self.freqs[self.start[t]:self.start[t + 1]]
            n_hit = len(rows)
            idf = math.log((self.n_rows - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            if norm is None:        # k1 * (1 - b + b * D / avgdl), per row, as C evaluates it
                norm = K1 * ((1 - B) + (B * self.lengths.astype(np.float64)) / self.avgdl)
            scores[rows] += idf * ((f * (K1 + 1.0)) / (f + norm[rows]))
        return scores


def tokenizer_of(conn: sqlite3.Connection, table: str) -> str:
    """The ``tokenize`` option the table was created with ('unicode61' when it names none)."""
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    found = re.search(r"tokenize\s*=\s*'([^']*)'", sql[0] if sql else "")
    return found.group(1) if found else "unicode61"


_TOKENIZERS = threading.local()


@lru_cache(maxsize=65536)
def _tokens(tokenize: str, word: str) -> tuple[str, ...]:
    """Asks SQLite: ``word`` put in a scratch FTS5 table with the same tokenizer, read back."""
    conns = getattr(_TOKENIZERS, "conns", None)
    if conns is None:
        conns = _TOKENIZERS.conns = {}
    conn = conns.get(tokenize)
    if conn is None:
        conn = conns[tokenize] = sqlite3.connect(":memory:")
        conn.execute(f"CREATE VIRTUAL TABLE scratch USING fts5(x, tokenize = '{tokenize}')")
        conn.execute("CREATE VIRTUAL TABLE scratch_vocab USING fts5vocab(scratch, instance)")
    conn.execute("DELETE FROM scratch")
    conn.execute("INSERT INTO scratch(x) VALUES (?)", (word,))
    return tuple(r[0] for r in conn.execute("SELECT term FROM scratch_vocab ORDER BY offset"))
