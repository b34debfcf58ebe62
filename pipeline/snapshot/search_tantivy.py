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

Mode ``phrase`` (``phrase_pattern`` in ``store``: the query as written, case aside, whole words, a
white-space run as any run, inside one field) has two fields of its own, tokenized here in Python by that
pattern's rules (``exact_tokens``), so that a query on them matches where the pattern does, not a superset
to check: a token is a run of letters and digits (word characters but the underscore), or one other
non-space character marked with whether a letter or digit touches it on the left and on the right
(``0(1``), with ``~~`` between two such characters that touch; white space is dropped; each token is
case-folded as ``re.IGNORECASE`` compares characters (``_sre``'s simple lower case and its extra
equivalences). ``exact1`` holds each field's tokens, ``exact2`` each pair of neighbours in a field, both
tagged with the field's letter: a phrase of one token is a term of ``exact1``, of two a term of ``exact2``,
of more a phrase of ``exact2``'s pairs (a phrase of frequent words is then one short posting list, not the
positions of two long ones). The store uses it as a filter on the stemmed phrase (``within``): the old
matches and ranking without reading any page's text (phrase p95 4.0 s -> 42 ms at 10^6 pages). The cost:
the index grows from 471 MB to 1,216 MB (the pairs' term dictionary 382 MB) and its build from 365 s to
580 s at 10^6 pages (benchmarks/results/search_scale.txt). A query holding a character whose case
equivalents are not all alike (``risky``: ``ι`` and the combining U+0345, which ``re`` matches to each
other although only one is a letter) gets None: the store checks that one the old way. The index folder's
name carries ``INDEX_VERSION``, and the index a marker file: an index of an older layout beside a snapshot
is rebuilt, never read.
"""
from __future__ import annotations

import _sre  # the regex engine's own case tables: the exact fields fold case as re.IGNORECASE does
import functools
import itertools
import os
import re
import shutil
import sqlite3
import threading
from pathlib import Path
from re import _compiler

import tantivy

FIELDS = ("title", "description", "lead", "infobox")
_SLACK = 32     # results read past a cut, to see where equal scores end
# the layout of the index: a new one when fields or their tokens change (the folder's name and the marker)
INDEX_VERSION = 2
_MARKER = "legwork-index-version"
_TAGS = dict(zip(FIELDS, "tdli"))      # each field's letter, first in its exact tokens
_EXACT = "legwork_exact"               # the exact fields' tokenizer: split on ASCII spaces, nothing else
_PAIR = "\x1f"                         # between a pair's tokens: white space to Python, so in no token
_GLUE = "~~"                           # between two touching non-word characters: never a token itself
_TERM_MAX = 60_000                     # bytes; tantivy skips longer tokens (its limit is 65,530)
_P_RUN = re.compile(r"(?:[^\w\s]|_)+")  # a run of characters neither letter/digit nor white space


def index_folder(snapshot_hash: str) -> str:
    """The index's folder name beside a snapshot (``INDEX_VERSION`` in it: an older layout is not read)."""
    return f"search-tantivy-v{INDEX_VERSION}-{snapshot_hash[:16]}"


@functools.lru_cache(maxsize=1)
def _fold_tables() -> tuple[dict[int, int], frozenset[str]]:
    """How ``re.IGNORECASE`` compares characters, as a per-character fold (translate table of the characters
    it changes), and the ``risky`` characters whose fold does not say it: a character of a fold class whose
    members are not all letters/digits, or not all white space, or that ``re`` does not match one to one."""
    fixes = _compiler._EXTRA_CASES
    top = 0x110000

    def canon(lo: int) -> int:
        return min((lo, *fixes.get(lo, ())))

    fold = {}
    by_lower: dict[int, list[int]] = {}
    for cp in range(top):
        if _sre.unicode_iscased(cp):
            lo = _sre.unicode_tolower(cp)
            by_lower.setdefault(lo, []).append(cp)
            f = canon(lo)
            if f != cp:
                fold[cp] = f
    classes: dict[int, list[int]] = {}
    for cp, f in fold.items():
        classes.setdefault(f, [f]).append(cp)
    risky: set[str] = set()
    word = re.compile(r"[^\W_]")
    for f, members in classes.items():
        chars = [chr(c) for c in members]
        if _sre.unicode_iscased(f) is False and len(members) > 1:
            risky.update(chars)         # an uncased member matches only itself
        if len({bool(word.match(c)) for c in chars}) > 1 or len({c.isspace() for c in chars}) > 1:
            risky.update(chars)
        # what ``re`` matches to a cased member: every character whose lower case is in the member's group
        lo = _sre.unicode_tolower(f)
        group = (lo, *fixes.get(lo, ()))
        matched = {c for g in group for c in by_lower.get(g, [])} | {g for g in group if not _sre.unicode_iscased(g)}
        if matched - set(members):
            risky.update(chars)
            risky.update(chr(c) for c in matched)
    return fold, frozenset(risky)


def _fold(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_fold_tables()[0])


def _p_run(m: re.Match) -> str:
    s, i, j = m.string, m.start(), m.end()
    run = m.group()
    marks = ["0" + c + "0" for c in run]
    if i > 0 and not s[i - 1].isspace():        # a letter or digit touches it on the left (the run is maximal)
        marks[0] = "1" + marks[0][1:]
    if j < len(s) and not s[j].isspace():
        marks[-1] = marks[-1][:-1] + "1"
    return " " + f" {_GLUE} ".join(marks) + " "


def exact_tokens(text: str) -> list[str]:
    """``text``'s tokens as mode phrase reads it (see the module's note): a phrase pattern matches a text
    exactly when the query's tokens are a run of the text's (for a query with no ``risky`` character)."""
    if not text:
        return []
    return _fold(_P_RUN.sub(_p_run, text)).split()


def exact_streams(texts: tuple) -> tuple[str, str]:
    """The ``exact1`` and ``exact2`` values of a page: each field's tokens, and pairs of neighbours, tagged."""
    ones, twos = [], []
    for name, text in zip(FIELDS, texts):
        tokens = exact_tokens(text or "")
        if not tokens:
            continue
        tag = _TAGS[name]
        ones.append(tag + f" {tag}".join(tokens))
        if len(tokens) > 1:
            twos.append(" ".join([tag + a + _PAIR + b for a, b in itertools.pairwise(tokens)]))
    return " ".join(ones), " ".join(twos)


def _exact_analyzer():
    return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()


def _schema():
    builder = tantivy.SchemaBuilder()
    for name in FIELDS:
        builder.add_text_field(name, stored=name == "title", tokenizer_name="en_stem")
    # every field at once, each repeated its FTS5 ranking weight times (title 10, description 4): one BM25
    # over it weighs a word's instances as FTS5's bm25() does, saturating as a page's frequency does
    builder.add_text_field("all", stored=False, tokenizer_name="en_stem")
    # mode phrase: each field's exact tokens (term frequencies) and neighbour pairs (positions), tagged by field
    builder.add_text_field("exact1", stored=False, tokenizer_name=_EXACT, index_option="freq")
    builder.add_text_field("exact2", stored=False, tokenizer_name=_EXACT, index_option="position")
    builder.add_integer_field("rowid", stored=True, indexed=True, fast=True)
    return builder.build()


class TantivySearch:
    def __init__(self, path: Path, weights: tuple[float, ...]):
        self.path = path
        self.weights = tuple(weights)
        self.schema = _schema()
        self.index = tantivy.Index(self.schema, path=str(path), reuse=True)
        self.index.register_tokenizer(_EXACT, _exact_analyzer())
        self.index.reload()
        self.searcher = self.index.searcher()

    @staticmethod
    def _all(texts: tuple, weights: tuple[float, ...]) -> str:
        return " \n ".join(" \n ".join([text] * max(1, round(w))) for text, w in zip(texts, weights) if text)

    @classmethod
    def open_or_build(cls, conn: sqlite3.Connection, path: Path, weights: tuple[float, ...]) -> TantivySearch:
        """The index kept at ``path``, built from ``pages_fts`` first when missing (into a scratch folder
        renamed into place: a crash leaves none or the whole). An index without this ``INDEX_VERSION``'s
        marker (an older layout) is built again."""
        if not cls.current(path):
            scratch = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(parents=True)
            index = tantivy.Index(_schema(), path=str(scratch))
            index.register_tokenizer(_EXACT, _exact_analyzer())
            writer = index.writer(heap_size=256_000_000, num_threads=1)
            for rowid, title, description, lead, infobox in conn.execute(
                    "SELECT rowid, title, description, lead, infobox FROM pages_fts ORDER BY rowid"):
                texts = (title, description, lead, infobox)
                exact1, exact2 = exact_streams(texts)
                writer.add_document(tantivy.Document(rowid=rowid, title=title or "", description=description or "",
                                                     lead=lead or "", infobox=infobox or "",
                                                     all=cls._all(texts, weights), exact1=exact1, exact2=exact2))
            writer.commit()
            writer.wait_merging_threads()
            del writer, index
            (scratch / _MARKER).write_text(f"{INDEX_VERSION}\n")
            if path.exists() and not cls.current(path):
                shutil.rmtree(path, ignore_errors=True)     # an older layout: replaced, never read
            try:
                os.replace(scratch, path)
            except OSError:         # another process built it first
                shutil.rmtree(scratch, ignore_errors=True)
        return cls(path, weights)

    @staticmethod
    def current(path: Path) -> bool:
        """Is there an index of this ``INDEX_VERSION`` at ``path``?"""
        try:
            return (path / "meta.json").exists() and (path / _MARKER).read_text().strip() == str(INDEX_VERSION)
        except OSError:
            return False

    # ---- queries ----------------------------------------------------------------------------------
    def query(self, words: list[str], conjunction: bool = False, phrase: bool = False, field: str = "all"):
        """OR (or AND) of ``words`` as single-word phrases, or the one phrase of them, over every field or one."""
        text = ('"' + " ".join(words) + '"') if phrase else " ".join('"' + w + '"' for w in words)
        return self.index.parse_query(text, [field], conjunction_by_default=conjunction)

    def phrase(self, text: str, field: str = "all"):
        """Mode phrase's query for ``text`` over every field (each field's BM25 times its weight, summed) or
        one: the pages where ``phrase_pattern(text)`` matches that field (see the module's note). None when
        the query holds a ``risky`` character or a token too long for tantivy: the caller checks those."""
        tokens = exact_tokens(text)
        if not tokens or any(c in _fold_tables()[1] for c in text):
            return None
        names = FIELDS if field == "all" else (field,)
        parts = []
        for name in names:
            tag = _TAGS[name]
            if len(tokens) == 1:
                terms, one = [tag + tokens[0]], "exact1"
            else:
                terms, one = [tag + a + _PAIR + b for a, b in itertools.pairwise(tokens)], "exact2"
            if any(len(t.encode()) > _TERM_MAX for t in terms):
                return None
            if len(terms) == 1:
                q = tantivy.Query.term_query(self.schema, one, terms[0], index_option="freq")
            else:
                q = tantivy.Query.phrase_query(self.schema, one, terms)
            if field == "all":
                q = tantivy.Query.boost_query(q, float(self.weights[FIELDS.index(name)]))
            parts.append(q)
        if len(parts) == 1:
            return parts[0]
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in parts])

    def count(self, query) -> int:
        return int(self.searcher.search(query, 1, count=True).count)

    def top(self, query, m: int) -> list[tuple[float, str, int]]:
        """The ``m`` best matches by (-score, title): (score, title, rowid)."""
        return self.counted_top(query, m, count=False)[1]

    def counted_top(self, query, m: int, count: bool = True) -> tuple[int | None, list[tuple[float, str, int]]]:
        """The number of matches (None when not ``count``) and the ``m`` best by (-score, title), read in one
        pass: a phrase query scores every match anyway, counting them costs no second pass."""
        if m <= 0:
            return (self.count(query) if count else None), []
        # twice the cut to start: a search costs about the same for a few hundred results as for m (clue
        # queries at 10^6 pages: 3.09 ms for 132, 3.07 for 264), and equal scores running past a shorter
        # read cost a second search (27% of those queries at m = 100; none from 2m)
        limit = 2 * m + _SLACK
        while True:
            found = self.searcher.search(query, limit, count=count)
            hits = found.hits
            if len(hits) < limit or hits[-1][0] != hits[m - 1][0]:
                break
            limit *= 2      # ties run past the slack: read on until the score changes
        total = int(found.count) if count else None
        if len(hits) > m:   # past the cut only a tie with the m-th score can enter it: no other's title is read
            cut = hits[m - 1][0]
            hits = hits[:m] + [h for h in hits[m:] if h[0] == cut]
        rows = []
        for score, address in hits:
            doc = self.searcher.doc(address)
            rows.append((float(score), doc["title"][0], int(doc["rowid"][0])))
        rows.sort(key=lambda r: (-r[0], r[1]))
        return total, rows[:m]

    @staticmethod
    def within(query, only):
        """``query``'s matches that ``only`` matches too, scored by ``query`` alone (``only`` adds 0.0)."""
        return tantivy.Query.boolean_query([(tantivy.Occur.Must, query),
                                            (tantivy.Occur.Must, tantivy.Query.const_score_query(only, 0.0))])

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
