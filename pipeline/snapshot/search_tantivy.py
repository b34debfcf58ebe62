"""The search engine of a large world: a tantivy index of the snapshot's full-text table.

``SnapshotStore`` ranks a world of at most ``IN_MEMORY_MAX_ROWS`` pages by SQLite FTS5's BM25,
computed in memory (``search_index``). Above that, neither holds: at 10^6 pages the in-memory postings
take about 0.9 GB and SQLite's ``bm25()`` scores every matching row (p95 0.7 s for a typical query,
5 s for a frequent word), while tantivy (BM25 with block-max WAND, exact counts) answers a typical
query in 21 ms at p95 and a frequent word in 52 ms, from a 230 MB index built in about 3 minutes
(benchmarks/search_scale.py, benchmarks/results/search_scale.txt).

The index holds the four columns of ``pages_fts`` (title, description, lead, infobox values), each
tokenized by tantivy's ``en_stem`` (lower case, English Snowball stemmer), and a field ``all`` holding
them all, each repeated its FTS5 weight times (so one BM25 over it counts a word's instances as
``bm25()`` with the column weights does), the page's row id and title; it is built once per snapshot
into the derived folder by one writer thread, in row order, and read memory-mapped. A search over
every field scores ``all``; one over a field scores that field. Ranks are stable: ties go to the
title, read past the cut until the score changes. The scores are tantivy's, not SQLite's: a large
world ranks a little differently from what the in-memory ranking would give.
"""
from __future__ import annotations

import os
import shutil
import sqlite3
import threading
from pathlib import Path

import tantivy

FIELDS = ("title", "description", "lead", "infobox")
_SLACK = 32     # results read past a cut, to see where equal scores end


def _schema():
    builder = tantivy.SchemaBuilder()
    for name in FIELDS:
        builder.add_text_field(name, stored=name == "title", tokenizer_name="en_stem")
    # every field at once, each repeated its FTS5 ranking weight times (title 10, description 4): one BM25
    # over it weighs a word's instances as FTS5's bm25() does, saturating as a page's frequency does
    builder.add_text_field("all", stored=False, tokenizer_name="en_stem")
    builder.add_integer_field("rowid", stored=True, indexed=True, fast=True)
    return builder.build()


class TantivySearch:
    def __init__(self, path: Path, weights: tuple[float, ...]):
        self.path = path
        self.schema = _schema()
        self.index = tantivy.Index(self.schema, path=str(path), reuse=True)
        self.index.reload()
        self.searcher = self.index.searcher()

    @staticmethod
    def _all(texts: tuple, weights: tuple[float, ...]) -> str:
        return " \n ".join(" \n ".join([text] * max(1, round(w))) for text, w in zip(texts, weights) if text)

    @classmethod
    def open_or_build(cls, conn: sqlite3.Connection, path: Path, weights: tuple[float, ...]) -> TantivySearch:
        """The index kept at ``path``, built from ``pages_fts`` first when missing (into a scratch folder
        renamed into place: a crash leaves none or the whole)."""
        if not (path / "meta.json").exists():
            scratch = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(parents=True)
            index = tantivy.Index(_schema(), path=str(scratch))
            writer = index.writer(heap_size=256_000_000, num_threads=1)
            for rowid, title, description, lead, infobox in conn.execute(
                    "SELECT rowid, title, description, lead, infobox FROM pages_fts ORDER BY rowid"):
                writer.add_document(tantivy.Document(rowid=rowid, title=title or "", description=description or "",
                                                     lead=lead or "", infobox=infobox or "",
                                                     all=cls._all((title, description, lead, infobox), weights)))
            writer.commit()
            writer.wait_merging_threads()
            del writer, index
            try:
                os.replace(scratch, path)
            except OSError:         # another process built it first
                shutil.rmtree(scratch, ignore_errors=True)
        return cls(path, weights)

    # ---- queries ----------------------------------------------------------------------------------
    def query(self, words: list[str], conjunction: bool = False, phrase: bool = False, field: str = "all"):
        """OR (or AND) of ``words`` as single-word phrases, or the one phrase of them, over every field or one."""
        text = ('"' + " ".join(words) + '"') if phrase else " ".join('"' + w + '"' for w in words)
        return self.index.parse_query(text, [field], conjunction_by_default=conjunction)

    def count(self, query) -> int:
        return int(self.searcher.search(query, 1, count=True).count)

    def top(self, query, m: int) -> list[tuple[float, str, int]]:
        """The ``m`` best matches by (-score, title): (score, title, rowid)."""
        if m <= 0:
            return []
        limit = m + _SLACK
        while True:
            hits = self.searcher.search(query, limit, count=False).hits
            if len(hits) < limit or hits[-1][0] != hits[m - 1][0]:
                break
            limit *= 2      # ties run past the slack: read on until the score changes
        rows = []
        for score, address in hits:
            doc = self.searcher.doc(address)
            rows.append((float(score), doc["title"][0], int(doc["rowid"][0])))
        rows.sort(key=lambda r: (-r[0], r[1]))
        return rows[:m]

    def scores_of(self, query, rowids: list[int]) -> dict[int, float]:
        """The scores of the rows ``rowids`` that match ``query``."""
        if not rowids:
            return {}
        only = tantivy.Query.term_set_query(self.schema, "rowid", [int(r) for r in rowids])
        both = tantivy.Query.boolean_query([(tantivy.Occur.Must, query),      # the filter adds 0.0 to the score
                                            (tantivy.Occur.Must, tantivy.Query.const_score_query(only, 0.0))])
        found = {}
        for score, address in self.searcher.search(both, len(rowids), count=False).hits:
            found[int(self.searcher.doc(address)["rowid"][0])] = float(score)
        return found
