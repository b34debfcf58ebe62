"""Read-only access to a built snapshot: lookups by title or URL, redirects, BM25 search.

Opening reads only ``manifest.json`` and checks the SQLite schema; each lookup reads one
row. Connections are per thread and opened read-only and immutable, so any number of
threads (or processes) can read one snapshot at once.
"""
from __future__ import annotations

import functools
import json
import re
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from pipeline.config import load_settings
from pipeline.snapshot.page import Page, canonical_title, title_to_url
from pipeline.snapshot.search_index import SearchIndex
from pipeline.snapshot.search_tantivy import TantivySearch, index_folder
from pipeline.usage import UserError

# the layout of a built snapshot (pipeline.snapshot.build writes it)
PAGES_DB = "pages.sqlite"
MANIFEST = "manifest.json"

_TITLE_COLUMN_WEIGHTS = (10.0, 4.0, 1.0, 1.0)  # title, description, lead, infobox values
_TITLE_BONUS = 10.0
_TIE_SLACK = 32   # rows read past a search's candidate limit, to see where equal scores end
_STOPWORDS = {"a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"}
_QUERY_STOPWORDS = _STOPWORDS | {"is", "are", "was", "were", "be", "what", "which", "who", "whom", "where", "when",
                                 "how", "it", "its", "this", "that", "as", "did", "does", "do"}


@functools.lru_cache(maxsize=1 << 17)
def _title_words(title: str) -> tuple[str, ...]:
    """A title's words for the title bonus: lower-cased, stop words left out unless that leaves none
    (kept per process: a release re-scores ~800,000 candidates, most of them titles met before)."""
    words = re.findall(r"\w+", title.lower())
    return tuple(w for w in words if w not in _STOPWORDS) or tuple(words)


_INDEX_LOCK = threading.Lock()
_INDEXES: dict[str, SearchIndex] = {}   # by snapshot hash: every store of one snapshot shares it
_ENGINES: dict[str, TantivySearch] = {}  # the same for the tantivy index of a large world
# a search's results by (snapshot hash, query, k, snippets): a pure function of the snapshot, so every
# store and run of one snapshot in a process shares them (the checks of one leg after another ask the
# same kind words: four in ten of an extreme leg's searches were asked by an earlier leg)
_SEARCHES: dict[tuple[str, str, int, bool], tuple[dict, ...]] = {}
_SEARCHES_KEPT = 100_000
_BEST: dict[tuple[str, str, int], tuple[list[tuple[float, str, int]], str]] = {}   # ``SnapshotStore._best``
# a large world's best BM25 rows of a words query, by (snapshot hash, its words): (how many were asked, the rows).
# The m best by (-score, title) are the first m of any longer such list, so one read serves every smaller
# limit: the skip probe (10 results: 100 candidates) and the snippet check (5: 50) of a clue ask the same
# words one after the other, and each was a tantivy search of its own (two in five of a large world's
# verbalize searches). Only the last _TOPS_KEPT are kept: each holds up to 100 rows (bounded as the searches
# are, the largest process of a first 10^6 release reached 2,238 MB RSS, 1,872 before)
_TOPS: dict[tuple[str, tuple[str, ...]], tuple[int, list[tuple[float, str, int]]]] = {}
_TOPS_KEPT = 1_000
# the title tables a store reads once (``_tables``), by snapshot hash: every store of one snapshot
# in a process shares them (each run and each single-leg context opens its own store)
_TABLES: dict[str, dict[str, object]] = {}

SEARCH_MODES = ("words", "all_words", "phrase")                         # ``search_page``'s modes
SEARCH_FIELDS = ("all", "title", "description", "lead", "infobox")      # and the fields it may search
_FTS_COLUMNS = ("title", "description", "lead", "infobox")              # pages_fts's columns, in order
# the largest world whose BM25 is computed in memory (``search_index``); a larger one is ranked by
# SQLite FTS5 alone: benchmarks/search_scale.py measured both at 10^6 pages (benchmarks/results/search_scale.txt)
IN_MEMORY_MAX_ROWS = 50_000
_RESOLVED_KEPT = 200_000   # a large world's resolved names kept per process (``_resolve_in_sql``)
# what ranks a larger world: "tantivy" (``search_tantivy``, the measured choice) or "sqlite" (FTS5's bm25()
# alone, the same ranking as in memory but 0.7 s at p95 for a typical query at 10^6 pages)
LARGE_WORLD_ENGINE = "tantivy"
# the orderings of paged searches, by (snapshot hash, query, mode, field, candidate limit): the next page
# of a search read in one process (the MCP server) is a slice of the same order
_PAGINGS: dict[tuple, _Ordering] = {}
_PAGINGS_KEPT = 256
# a large world's phrase: the best rows read with its count in one pass (a phrase's matches are all scored):
# the pages to offset 200 of 10 results each without a second pass
_PHRASE_FIRST = 256


class _Ordering:
    """A paged search's total order: the rows ``first`` (score, title, rowid) in their order, then every
    other match in the order of ``more(m)`` (the m best matches by (-BM25, title), None: no others)."""

    def __init__(self, total: int, fts_query: str, first: list[tuple[float, str, int]], more):
        self.total, self.fts_query, self.first, self.more = total, fts_query, first, more
        self._best: list[tuple[float, str, int]] = []     # the longest ``more(m)`` read yet (a prefix of any longer)
        self._asked = 0

    def rows(self, n: int) -> list[tuple[float, str, int]]:
        """The first ``n`` rows of the order."""
        if n <= len(self.first) or self.more is None:
            return self.first[:n]
        seen = {rowid for _, _, rowid in self.first}
        need = n - len(self.first)
        m = need + len(self.first)  # at most len(first) of the m best are in ``first``: the rest hold the need best others
        if m > self._asked:         # read ahead: the next pages of one reader cost no more queries
            self._asked = max(m, 2 * self._asked)
            self._best = self.more(self._asked)
        return self.first + [row for row in self._best[:m] if row[2] not in seen][:need]


def text_snippet(text: str, words: list[str], size: int = 24) -> str:
    """About ``size`` words of ``text`` around the first word that starts with a query word (case aside),
    with "…" where it is cut: a large world's snippet (a small one's is FTS5's own)."""
    tokens = text.split()
    if not tokens:
        return ""
    starts = tuple(w.lower() for w in words if w)
    hit = next((i for i, t in enumerate(tokens) if re.sub(r"^\W+", "", t.lower()).startswith(starts)), 0) if starts else 0
    first = max(0, min(hit - size // 4, len(tokens) - size))
    shown = " ".join(tokens[first:first + size])
    return ("…" if first else "") + shown + ("…" if first + size < len(tokens) else "")


def phrase_pattern(text: str) -> re.Pattern:
    """Mode ``phrase``'s test of one field's text: ``text`` as written, case aside, a run of white space
    as any run, with no letter or digit just before or after it (whole words; no stemming)."""
    body = r"\s+".join(re.escape(part) for part in text.split())
    return re.compile(r"(?<![^\W_])" + body + r"(?![^\W_])", re.IGNORECASE)


class SnapshotError(UserError, RuntimeError):
    """The snapshot directory is missing, incomplete or corrupt; the message says which. The snapshot is
    one the user named (``--snapshot``, ``LEGWORK_SNAPSHOT``), so a command says it in one line."""


class MalformedPage(ValueError):
    """One stored page cannot be read back; the rest of the snapshot is fine."""


def title_from_url(value: str) -> str | None:
    """The canonical title named by an English Wikipedia URL, or by a plain title.

    Accepts any scheme (or none), the mobile host, ``/wiki/Title`` and
    ``/w/index.php?title=Title`` paths, percent-encoding, underscores, a fragment or query.
    Returns None for URLs of other sites or other language editions.
    """
    value = (value or "").strip()
    if not value:
        return None
    looks_like_url = "://" in value or value.startswith(("//", "/wiki/")) or re.match(r"^(?:www\.)?[a-z]{2,3}(?:\.m)?\.wikipedia\.org/", value, re.IGNORECASE)
    if not looks_like_url:
        return canonical_title(value.split("#")[0]) or None
    if "://" not in value and not value.startswith("/"):
        value = "//" + value
    parts = urlsplit(value)
    host = (parts.hostname or "en.wikipedia.org").lower()
    if host not in ("en.wikipedia.org", "en.m.wikipedia.org", "wikipedia.org", "www.wikipedia.org"):
        return None
    if parts.path.startswith("/wiki/"):
        raw = parts.path[len("/wiki/"):]
    elif parts.path.startswith("/w/index.php") or parts.path == "/w/index.php":
        raw = (parse_qs(parts.query).get("title") or [""])[0]
    else:
        return None
    title = canonical_title(unquote(raw))
    return title or None


ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")  # SQLite's NOCASE: how titles compare


class SnapshotStore:
    """A snapshot directory (``manifest.json`` + ``pages.sqlite``) opened for reading."""

    def __init__(self, path: Path, manifest: dict, index_dir: Path | None = None):
        self.path = path
        self.index_dir = index_dir    # where the in-memory search index is kept between processes
        self.manifest = manifest
        self.hash: str = manifest["hash"]
        self.language: str = manifest.get("language", "")  # "" for snapshots built before it was recorded
        self._db_path = path / PAGES_DB
        self._local = threading.local()
        self._mention_counts: dict[str, int] = {}

    @classmethod
    def open(cls, path, index_dir: Path | None = None) -> SnapshotStore:
        """``index_dir``: where the search index (``search_index``) is kept for later processes; without
        one, each process builds it on its first search."""
        path = Path(path)
        manifest_path = path / MANIFEST
        if not path.is_dir():
            raise SnapshotError(f"snapshot not found: {path} (build one with `python -m pipeline.snapshot build`)")
        if not manifest_path.is_file() or not (path / PAGES_DB).is_file():
            raise SnapshotError(f"{path}: not a snapshot (needs {MANIFEST} and {PAGES_DB})")
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            manifest["hash"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise SnapshotError(f"{manifest_path}: corrupt manifest: {exc}") from exc
        store = cls(path, manifest, Path(index_dir) if index_dir is not None else None)
        try:
            tables = {r[0] for r in store._conn().execute("SELECT name FROM sqlite_master")}
            stored_hash = store._conn().execute("SELECT value FROM meta WHERE key = 'hash'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise SnapshotError(f"{path / PAGES_DB}: corrupt database: {exc}") from exc
        if not {"pages", "redirects", "pages_fts", "meta"} <= tables:
            raise SnapshotError(f"{path / PAGES_DB}: missing tables")
        if stored_hash is None or stored_hash[0] != store.hash:
            raise SnapshotError(f"{path}: manifest hash does not match {PAGES_DB}")
        return store

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            uri = self._db_path.resolve().as_uri() + "?mode=ro&immutable=1"
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # ---- lookups -----------------------------------------------------------------------------
    def _title_maps(self) -> tuple[frozenset[str], dict[str, str], dict[str, list[str]]]:
        """Titles, redirects (alias -> target) and titles by lower case, read once: ``resolve`` runs for
        every name a text is checked for (hundreds of thousands in a release), one query each before."""
        def read():
            conn = self._conn()
            titles = frozenset(r[0] for r in conn.execute("SELECT title FROM pages"))
            redirects = dict(conn.execute("SELECT alias, target FROM redirects"))
            lower: dict[str, list[str]] = {}
            for title in sorted(titles):
                lower.setdefault(title.translate(ASCII_LOWER), []).append(title)
            return titles, redirects, lower
        return self._table("maps", read)

    def _table(self, name: str, read):
        """A table read once per snapshot and process (``_TABLES``): the snapshot is immutable."""
        tables = _TABLES.setdefault(self.hash, {})
        value = tables.get(name)
        if value is None:
            value = tables[name] = read()
        return value

    def resolve(self, title_or_url: str) -> str | None:
        """Canonical title of the page a title or URL names (after redirects), None if absent."""
        title = title_from_url(title_or_url)
        if not title:
            return None
        if not self.titles_in_memory():
            return self._resolve_in_sql(title_or_url)
        titles, redirects, lower = self._title_maps()
        if title in titles:
            return title
        if title in redirects:
            return redirects[title]
        # MediaWiki titles are case-sensitive after the first letter, but a reader typing
        # "Ray charles" means the page; accept a unique case-insensitive match.
        same = lower.get(title.translate(ASCII_LOWER), [])
        return same[0] if len(same) == 1 else None

    def titles_in_memory(self) -> bool:
        """Are the world's titles and redirects read whole into each process (``_title_maps``)? Only in a
        world of at most ``IN_MEMORY_MAX_ROWS`` pages: a 10⁶-page world's take some 400 MB a process, the
        whole English Wikipedia's (17 million titles and redirects) several GB; a larger world asks the
        title indexes, keeping the last answers."""
        return len(self) <= IN_MEMORY_MAX_ROWS

    def titles_starting(self, prefix: str) -> list[str]:
        """Every title that starts with ``prefix`` (case counted), in code-point order: one range query on
        the titles' index, whatever the world's size."""
        return [row[0] for row in self._conn().execute(
            "SELECT title FROM pages WHERE title >= ? AND title < ? ORDER BY title", (prefix, prefix + "\U0010ffff"))]

    def get(self, title_or_url: str) -> Page | None:
        title = self.resolve(title_or_url)
        if title is None:
            return None
        row = self._conn().execute("SELECT json FROM pages WHERE title = ?", (title,)).fetchone()
        if row is None:
            return None
        try:
            return Page.from_dict(json.loads(row[0]))
        except (ValueError, TypeError, KeyError) as exc:
            raise MalformedPage(f"{type(exc).__name__}: {exc}") from exc

    def get_json(self, title_or_url: str) -> str | None:
        """The stored canonical JSON of a page (exact bytes, for hashing or caching)."""
        title = self.resolve(title_or_url)
        if title is None:
            return None
        row = self._conn().execute("SELECT json FROM pages WHERE title = ?", (title,)).fetchone()
        return row[0] if row else None

    def __contains__(self, title_or_url: str) -> bool:
        return self.resolve(title_or_url) is not None

    def aliases(self, title: str) -> list[str]:
        resolved = self.resolve(title)
        if resolved is None:
            return []
        return [r[0] for r in self._conn().execute(
            "SELECT alias FROM redirects WHERE target = ? ORDER BY alias", (resolved,))]

    def titles(self) -> list[str]:
        return [r[0] for r in self._conn().execute("SELECT title FROM pages ORDER BY title")]

    def __len__(self) -> int:
        return int(self.manifest["counts"]["pages"])

    def last_row(self) -> int:
        """The largest row number of a page: pages are rows 1 .. ``last_row`` (``title_at``)."""
        return int(self._conn().execute("SELECT max(id) FROM pages").fetchone()[0] or 0)

    def titles_in_rows(self, first: int, last: int) -> list[str]:
        """The titles of the pages in rows ``first`` .. ``last`` (inclusive), by row: a shard of a world
        too large to list (``flows.derive``)."""
        return [r[0] for r in self._conn().execute(
            "SELECT title FROM pages WHERE id BETWEEN ? AND ? ORDER BY id", (int(first), int(last)))]

    def title_at(self, row: int) -> str | None:
        """The title of the page in row ``row`` (a draw from a world too large to list), None if none."""
        found = self._conn().execute("SELECT title FROM pages WHERE id = ?", (row,)).fetchone()
        return found[0] if found else None

    # ---- search ------------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, snippets: bool = True) -> list[dict]:
        """BM25 over title, description, lead and infobox values; any query word may match.

        The best ``max(50, 10k)`` BM25 candidates are re-scored with a title bonus (the share
        of the title's words that the query contains, squared, times 10), so "Ray Charles
        birthplace" finds the page titled "Ray Charles" before the albums named after him.
        ``score`` is that sum rounded to 6 decimals; ties go to the title.

        BM25 is SQLite FTS5's, with the column weights ``_TITLE_COLUMN_WEIGHTS``, computed in memory
        from the table's own postings (``search_index``: the same numbers, without scoring every
        matching row in SQL) in a world of at most ``IN_MEMORY_MAX_ROWS`` pages; a larger world, or a
        query word the tokenizer splits into a phrase, is ranked by SQLite's own ``bm25()`` (the same
        numbers again). Snippets and descriptions are read for the ``k`` rows shown (``snippets=False``:
        titles, URLs and scores only, for checks that need no more: the snippet query is a third of a
        search). Results are kept for the process (``_SEARCHES``). ``search_page`` is the paged search
        the ``web_search`` tool gives: its first page is this list.
        """
        key = (self.hash, query or "", int(k), bool(snippets))
        hits = _SEARCHES.get(key)
        if hits is None:
            hits = tuple(self._search(query, k, snippets))
            if len(_SEARCHES) >= _SEARCHES_KEPT:
                _SEARCHES.clear()   # a bound, not an LRU: a release asks far fewer
            _SEARCHES[key] = hits
        return [dict(hit) for hit in hits]   # the caller's to change

    def _search(self, query: str, k: int, snippets: bool) -> list[dict]:
        best, fts_query = self._best(query, k)
        return self._shown(best, fts_query, snippets)

    def _best(self, query: str, k: int) -> tuple[list[tuple[float, str, int]], str]:
        """The ``k`` results of ``search`` as (score, title, rowid), and the FTS5 query; the last
        ``_SEARCHES_KEPT`` kept for the process, so that ``mentions_in_results`` and the search it
        spares rank once."""
        key = (self.hash, query or "", int(k))
        found = _BEST.get(key)
        if found is None:
            ranked = self._words_ranking(query, max(50, 10 * int(k))) if k > 0 else None
            found = (ranked[0][:k], ranked[1]) if ranked is not None else ([], "")
            if len(_BEST) >= _SEARCHES_KEPT:
                _BEST.clear()
            _BEST[key] = found
        return found

    def mentions_in_results(self, query: str, k: int, needles: tuple[str, ...]) -> bool:
        """Does the text that the snippets of ``search(query, k)`` are cut from (each result's lead, and
        its description, the snippet where the lead shows none) hold any of ``needles`` (lower-cased,
        without white space)? A snippet is a run of that text, so False means no snippet shows one: a
        check asking whether a search shows a value skips the snippets (a third of a search) for the
        many values the results never mention."""
        best, _ = self._best(query, k)
        if not best:
            return False
        texts = self._texts_of([rowid for _, _, rowid in best], ("description", "lead"))
        return any(needle in (text or "").lower() for rowid in texts for text in texts[rowid] for needle in needles)

    def _shown(self, best: list[tuple[float, str, int]], fts_query: str, snippets: bool, column: int = 2) -> list[dict]:
        """The result dicts of ``best`` (score, title, rowid): the snippet is FTS5's of ``column`` (the
        lead) around the query's matches, or the description when the column shows none."""
        if not snippets:
            return [{"title": title, "url": title_to_url(title), "score": score} for score, title, _ in best]
        if best and self._uses_tantivy():   # a large world: FTS5's snippet() would scan every match
            words = re.findall(r"\w+", re.sub(r"\b(?:AND|OR)\b|\w+ : ", " ", fts_query))
            texts = self._texts_of([rowid for _, _, rowid in best], ("description", _FTS_COLUMNS[column]))
            return [{"title": title, "url": title_to_url(title),
                     "snippet": text_snippet(texts[rowid][1] or "", words) or texts[rowid][0], "score": score}
                    for score, title, rowid in best]
        shown = {rowid: (description, snippet) for rowid, description, snippet in self._conn().execute(
            f"SELECT rowid, description, snippet(pages_fts, {int(column)}, '', '', '…', 24) FROM pages_fts "
            f"WHERE pages_fts MATCH ? AND rowid IN ({', '.join('?' * len(best))})",
            (fts_query, *(rowid for _, _, rowid in best)))} if best else {}
        return [{"title": title, "url": title_to_url(title),
                 "snippet": " ".join((shown[rowid][1] or "").split()) or shown[rowid][0], "score": score}
                for score, title, rowid in best]

    def _words_ranking(self, query: str, limit: int):
        """The default ranking's candidates: the ``limit`` best rows by BM25 (ties by title) and the
        title runs, re-scored with the title bonus and sorted by (-score, title); with the FTS5 query
        and the in-memory scores of every row (None when SQLite ranked). None for a query of no words."""
        words = re.findall(r"\w+", (query or "").lower())
        if not words:
            return None
        content_words = [w for w in words if w not in _QUERY_STOPWORDS] or words
        phrases = list(dict.fromkeys(content_words))
        fts_query = " OR ".join('"' + w + '"' for w in phrases)
        raw_words = re.findall(r"\w+", query or "")
        scores = None
        if self.in_memory_search():
            index = self.search_index()
            tokens = [index.tokens(w) for w in phrases]
            if all(len(t) == 1 for t in tokens):
                scores = index.score([t[0] for t in tokens])
                candidates, extra = self._rank_scores(scores, raw_words, limit)
        if scores is None and self._uses_tantivy():   # a large world: tantivy ranks
            engine = self.large_search()
            query_obj = engine.query(phrases)
            candidates = [(title, score, rowid) for score, title, rowid in self._large_top(engine, query_obj, phrases, limit)]
            runs = self._title_runs(raw_words, {c[0] for c in candidates})
            ids = self._ids_of(runs)
            found = engine.scores_of(query_obj, list(ids.values()))
            extra = [(title, found[ids[title]], ids[title]) for title in runs if ids.get(title) in found]
            scores = engine, query_obj
        elif scores is None:   # a word the tokenizer splits (a phrase of several tokens)
            candidates, extra = self._rank_in_sql(fts_query, raw_words, limit)
        candidates += extra
        query_words = set(words)
        scored = []
        for title, bm25, rowid in candidates:
            title_words = _title_words(title)
            share = sum(1 for w in title_words if w in query_words) / len(title_words) if title_words else 0.0
            scored.append((round(bm25 + _TITLE_BONUS * share * share, 6), title, rowid))
        scored.sort(key=lambda r: (-r[0], r[1]))
        return scored, fts_query, scores

    def _large_top(self, engine, query_obj, phrases: list[str], limit: int) -> list[tuple[float, str, int]]:
        """``engine.top(query_obj, limit)`` for the words ``phrases``, sliced from a longer list read before."""
        key = (self.hash, tuple(phrases))
        kept = _TOPS.get(key)
        if kept is None or kept[0] < limit:
            kept = (limit, engine.top(query_obj, limit))
            if len(_TOPS) >= _TOPS_KEPT:
                _TOPS.clear()
            _TOPS[key] = kept
        return kept[1][:limit]

    def in_memory_search(self) -> bool:
        """Is the default ranking's BM25 computed in memory (``search_index``)? Only in a world of at most
        ``IN_MEMORY_MAX_ROWS`` pages: its postings take about 16 bytes each, a 10⁶-page world's far more
        memory than a tool call may take (benchmarks/search_scale.py); a larger world is ranked by SQLite."""
        return len(self) <= IN_MEMORY_MAX_ROWS

    def _uses_tantivy(self) -> bool:
        return not self.in_memory_search() and LARGE_WORLD_ENGINE == "tantivy"

    def search_page(self, query: str, offset: int = 0, k: int = 10, mode: str = "words", field: str = "all",
                    snippets: bool = True) -> dict:
        """One page of a search that can be read to its end: ``{"total", "results", "next_offset"}``.

        ``total`` is the exact number of pages that match; ``results`` are the matches ranked
        ``offset + 1`` to ``offset + k`` (each with its ``rank``), ``next_offset`` where the next page
        starts (None after the last). The ranking is a total order, a function of the snapshot, the
        query, ``mode``, ``field`` and (in mode ``words`` over every field) ``k``: pages read with one
        ``k`` give every match exactly once.

        ``mode`` (``SEARCH_MODES``): ``words``, a page holding any of the query's words after common words
        are dropped, each matched by its porter stem as the tokenizer makes it ("deserts" finds "desert");
        ``all_words``, a page holding every word of the query (none dropped), by stem; ``phrase``, a page
        whose text holds the query exactly as written, case aside (runs of white space count as one), as
        whole words: no letter or digit just before or after it, no stemming ("Sahara" does not find
        "Saharan"). ``field`` (``SEARCH_FIELDS``): the text that must match: every field (title,
        short description, opening text, infobox values), or only one; a phrase must lie inside one field.

        Ranking: in mode ``words`` over every field, this is ``search``'s ranking (its first ``k`` are
        ``search(query, k)``): the ``max(50, 10k)`` best by BM25 and the pages a run of the query's words
        names, re-scored with the title bonus, then every other match by BM25; ties by title. In any
        other mode or field, BM25 of the matching words (only the chosen field's instances count), ties by title.
        """
        if mode not in SEARCH_MODES:
            raise ValueError(f"mode must be one of {', '.join(SEARCH_MODES)}, not {mode!r}")
        if field not in SEARCH_FIELDS:
            raise ValueError(f"field must be one of {', '.join(SEARCH_FIELDS)}, not {field!r}")
        offset, k = max(0, int(offset)), max(0, int(k))
        column = {"description": 1, "infobox": 3}.get(field, 2)    # the snippet's column: the lead, or the one searched
        key = (self.hash, query or "", mode, field, max(50, 10 * k) if mode == "words" and field == "all" else 0)
        order = _PAGINGS.get(key)
        if order is None:
            if mode == "words" and field == "all":
                order = self._paged_words(query, max(50, 10 * k))
            else:
                order = self._paged_matches(query, mode, field)
            if len(_PAGINGS) >= _PAGINGS_KEPT:
                _PAGINGS.clear()
            _PAGINGS[key] = order
        total, fts_query = order.total, order.fts_query
        rows = order.rows(offset + k)[offset:offset + k]
        hits = self._shown(rows, fts_query, snippets, column) if rows else []
        for i, hit in enumerate(hits):
            hit["rank"] = offset + i + 1
        end = offset + len(hits)
        return {"total": total, "results": hits, "next_offset": end if end < total and hits else None}

    def _paged_words(self, query: str, limit: int) -> _Ordering:
        """``search_page``'s default ranking: ``_words_ranking``'s candidates, then every other match by
        (-BM25, title)."""
        ranked = self._words_ranking(query, limit)
        if ranked is None:
            return _Ordering(0, "", [], None)
        scored, fts_query, scores = ranked
        if isinstance(scores, tuple):       # a large world: tantivy's ranking
            engine, query_obj = scores
            return _Ordering(engine.count(query_obj), fts_query, scored,
                             lambda m: [(round(s, 6), t, r) for s, t, r in engine.top(query_obj, m)])
        if scores is not None:
            total = int(np.count_nonzero(scores > 0.0))
            return _Ordering(total, fts_query, scored, lambda m: self._top_scores(scores, m))
        total = self._count(fts_query)
        return _Ordering(total, fts_query, scored, lambda m: self._top_in_sql(fts_query, m))

    def _paged_matches(self, query: str, mode: str, field: str) -> _Ordering:
        """``search_page``'s ranking in the other modes and fields: every match by (-BM25, title)."""
        words = re.findall(r"\w+", query or "")
        if not words:
            return _Ordering(0, "", [], None)
        scope = "" if field == "all" else f"{field} : "
        if self._uses_tantivy():
            return self._paged_matches_large(query, words, mode, field, scope)
        if mode == "phrase":
            text = " ".join((query or "").split())
            fts_query = scope + '"' + text.replace('"', '""') + '"'
            return self._phrase_ordering(text, fts_query, field)
        words = [w.lower() for w in words]
        if mode == "words":     # common words dropped, as the default field drops them
            words = [w for w in words if w not in _QUERY_STOPWORDS] or words
        unique = list(dict.fromkeys(words))
        joined = (" OR " if mode == "words" else " AND ").join('"' + w + '"' for w in unique)
        fts_query = f"{scope}({joined})" if scope else joined
        return _Ordering(self._count(fts_query), fts_query, [], lambda m: self._top_in_sql(fts_query, m))

    def _paged_matches_large(self, query: str, words: list[str], mode: str, field: str, scope: str) -> _Ordering:
        """``_paged_matches`` in a large world: tantivy's matches and ranking. A phrase is its stemmed phrase
        narrowed by the exact whole-word pattern, as in a small world: the narrowing is a query on the index's
        exact fields, which match where ``phrase_pattern`` does (``TantivySearch.phrase``), so no candidate's
        text is read; the count and the ranking (the stemmed phrase's BM25) are tantivy's. A query the exact
        fields cannot answer (a ``risky`` character) reads every candidate's text and checks the pattern."""
        engine = self.large_search()
        lower = [w.lower() for w in words]
        if mode == "words":
            lower = [w for w in lower if w not in _QUERY_STOPWORDS] or lower
        unique = list(dict.fromkeys(lower))
        if mode == "phrase":
            text = " ".join((query or "").split())
            fts_query = scope + '"' + text.replace('"', '""') + '"'
            stemmed = engine.query(lower, phrase=True, field=field)
            exact = engine.phrase(text, field)
            if exact is not None:   # the pattern's matches among the stemmed phrase's, ranked by the latter
                both = engine.within(stemmed, exact)
                total, best = engine.counted_top(both, _PHRASE_FIRST)
                best = [(round(s, 6), t, r) for s, t, r in best]
                return _Ordering(total, fts_query, [], lambda m: best[:m] if m <= len(best) or len(best) == total
                                 else [(round(s, 6), t, r) for s, t, r in engine.top(both, m)])
            candidates = self._all_matches(engine, stemmed)
            pattern = phrase_pattern(text)
            columns = _FTS_COLUMNS if field == "all" else (field,)
            texts = self._texts_of([r for _, _, r in candidates], columns)
            found = [(round(s, 6), t, r) for s, t, r in candidates
                     if any(v and pattern.search(v) for v in texts.get(r, ()))]
            return _Ordering(len(found), fts_query, found, None)
        joined = (" OR " if mode == "words" else " AND ").join('"' + w + '"' for w in unique)
        fts_query = f"{scope}({joined})" if scope else joined
        query_obj = engine.query(unique, conjunction=mode == "all_words", field=field)
        return _Ordering(engine.count(query_obj), fts_query, [],
                         lambda m: [(round(s, 6), t, r) for s, t, r in engine.top(query_obj, m)])

    @staticmethod
    def _all_matches(engine: TantivySearch, query_obj) -> list[tuple[float, str, int]]:
        return engine.top(query_obj, engine.count(query_obj))

    def _texts_of(self, rowids: list[int], columns: tuple[str, ...]) -> dict[int, tuple]:
        conn, found = self._conn(), {}
        for i in range(0, len(rowids), 500):
            chunk = rowids[i:i + 500]
            for row in conn.execute(f"SELECT rowid, {', '.join(columns)} FROM pages_fts "
                                    f"WHERE rowid IN ({', '.join('?' * len(chunk))})", chunk):
                found[row[0]] = row[1:]
        return found

    def _ids_of(self, titles: list[str]) -> dict[str, int]:
        if not titles:
            return {}
        return dict(self._conn().execute(f"SELECT title, id FROM pages WHERE title IN ({', '.join('?' * len(titles))})",
                                         titles))

    def _phrase_ordering(self, text: str, fts_query: str, field: str) -> _Ordering:
        """Mode ``phrase``: FTS5's phrase (stemmed: a superset) narrowed by the exact whole-word pattern."""
        pattern = phrase_pattern(text)
        columns = _FTS_COLUMNS if field == "all" else (field,)
        rank = f"-bm25(pages_fts, {', '.join(str(w) for w in _TITLE_COLUMN_WEIGHTS)})"
        found = []
        for row in self._conn().execute(
                f"SELECT rowid, {rank}, title, {', '.join(columns)} FROM pages_fts WHERE pages_fts MATCH ?",
                (fts_query,)):
            if any(value and pattern.search(value) for value in row[3:]):
                found.append((row[1], row[2], row[0]))
        found.sort(key=lambda r: (-r[0], r[1]))
        return _Ordering(len(found), fts_query, [(round(s, 6), t, r) for s, t, r in found], None)

    def _count(self, fts_query: str) -> int:
        return int(self._conn().execute("SELECT count(*) FROM pages_fts WHERE pages_fts MATCH ?",
                                        (fts_query,)).fetchone()[0])

    def _top_scores(self, scores: np.ndarray, m: int) -> list[tuple[float, str, int]]:
        """The ``m`` best matching rows of in-memory ``scores`` by (-score, title)."""
        matched = np.flatnonzero(scores > 0.0)
        if len(matched) > m:   # every row scoring at least the m-th best, ties included
            cut = np.partition(scores[matched], len(matched) - m)[len(matched) - m]
            matched = matched[scores[matched] >= cut]
        titles = self._titles_of([int(r) for r in matched])
        best = sorted(((float(scores[r]), titles[int(r)], int(r)) for r in matched), key=lambda c: (-c[0], c[1]))[:m]
        return [(round(score, 6), title, rowid) for score, title, rowid in best]

    def _top_in_sql(self, fts_query: str, m: int) -> list[tuple[float, str, int]]:
        """The ``m`` best rows matching ``fts_query`` by (-bm25, title), ranked by SQLite."""
        return [(round(bm25, 6), title, rowid) for title, bm25, rowid in self._best_in_sql(fts_query, m)]

    def large_search(self) -> TantivySearch:
        """The tantivy index of a world above ``IN_MEMORY_MAX_ROWS`` pages (``search_tantivy``): one per
        snapshot and process, opened from the snapshot's folder (where the import builds it), else from
        ``index_dir``, else built in ``index_dir`` (or the snapshot's folder) first: a snapshot imported
        before the import built it, perhaps read-only, gets one in the derived folder."""
        engine = _ENGINES.get(self.hash)
        if engine is None:
            with _INDEX_LOCK:
                engine = _ENGINES.get(self.hash)
                if engine is None:
                    imported = self.path / index_folder(self.hash)
                    folder = self.index_dir if self.index_dir is not None else self.path
                    path = imported if TantivySearch.current(imported) else folder / index_folder(self.hash)
                    engine = _ENGINES[self.hash] = TantivySearch.open_or_build(
                        self._conn(), path, _TITLE_COLUMN_WEIGHTS)
        return engine

    def build_large_search(self) -> bool:
        """Build (or find current) the tantivy index of a world above ``IN_MEMORY_MAX_ROWS`` pages, without
        keeping it open: the import calls it so that a large world's first search does not pay for the
        index (minutes at 10⁶ pages). False for a world searched in memory (its index is built in seconds
        on the first search)."""
        if not self._uses_tantivy():
            return False
        TantivySearch.open_or_build(self._conn(), self.path / index_folder(self.hash), _TITLE_COLUMN_WEIGHTS)
        return True

    def search_index(self) -> SearchIndex:
        """The in-memory BM25 index (``search_index``): one per snapshot and process, loaded from
        ``index_dir`` or built (and kept there) on the first search."""
        index = _INDEXES.get(self.hash)
        if index is None:
            with _INDEX_LOCK:
                index = _INDEXES.get(self.hash)
                if index is None:
                    path = (self.index_dir / f"search-{self.hash[:16]}.npz") if self.index_dir else None
                    index = SearchIndex.load(path, _TITLE_COLUMN_WEIGHTS) if path else None
                    if index is None:
                        index = SearchIndex.build(self._conn(), "pages_fts", _TITLE_COLUMN_WEIGHTS)
                        if path is not None:
                            try:
                                index.save(path)
                            except OSError:
                                pass    # a read-only folder costs time, not correctness
                    _INDEXES[self.hash] = index
        return index

    def _title_runs(self, raw_words: list[str], seen: set[str]) -> list[str]:
        """Pages titled by a run of the query's words ("Ray Charles" in "Ray Charles birthplace"): they
        join the candidates even when many longer pages outrank them on BM25 alone."""
        small = self.in_memory_search()
        keys = self._name_keys() if small else None
        resolve = self.resolve if small else self._resolve_in_sql
        # a run of ASCII words without underscores resolves only if its words, ASCII lower-cased as
        # ``resolve`` compares them, are a title's or a redirect's (the test is exact); others are tried
        plain = [w.isascii() and "_" not in w for w in raw_words]
        low = [w.translate(ASCII_LOWER) for w in raw_words]
        longest = min(len(raw_words), 6)
        # a large world: how many words from each position a longer run may begin with, by a range query a
        # prefix (``_names_continue``) instead of up to three lookups a run (a sixth of a search at 10^6 pages)
        reach = None if small else [self._run_reach(raw_words[i:i + longest - 1], plain[i:i + longest - 1])
                                    for i in range(len(raw_words))]
        runs: list[str] = []
        for n in range(longest, 0, -1):
            for i in range(len(raw_words) - n + 1):
                if keys is not None and all(plain[i:i + n]) and tuple(low[i:i + n]) not in keys:
                    continue
                if reach is not None and n - 1 > reach[i]:
                    continue
                title = resolve(" ".join(raw_words[i:i + n]))
                if title is not None and title not in seen:
                    seen.add(title)
                    runs.append(title)
        return runs

    def _run_reach(self, words: list[str], plain: list[bool]) -> int:
        """How many of ``words`` a name of more words may begin with: the first ``m`` such that no title or
        redirect starts with the first ``m + 1`` and a space (``_names_continue``), all of them if none; a
        prefix holding a word the test cannot fold as ``resolve`` compares (not ASCII, or an underscore)
        is never ruled out."""
        for m in range(len(words)):
            if all(plain[:m + 1]) and not self._names_continue(" ".join(words[:m + 1]) + " "):
                return m
        return len(words)

    def _names_continue(self, prefix: str) -> bool:
        """Does some title start with ``prefix``, ASCII case aside, or some redirect with its canonical form
        (``resolve`` compares titles so, and redirects exactly)? Two indexed range queries, the last
        ``_RESOLVED_KEPT`` answers kept per process."""
        def ask() -> bool:
            canonical = prefix[:1].upper() + prefix[1:]
            raised = canonical[:-1] + chr(ord(canonical[-1]) + 1)
            return self.has_title_starting(prefix) or self._conn().execute(
                "SELECT 1 FROM redirects WHERE alias >= ? AND alias < ? LIMIT 1", (canonical, raised)).fetchone() is not None
        return self._kept_answer("name_prefixes", prefix, ask)

    def _kept_answer(self, table: str, key: str, ask: Callable[[], object]):
        """``ask()``'s answer for ``key``, kept in this snapshot's ``table`` of the process: its last
        ``_RESOLVED_KEPT`` answers (a bound, not an LRU)."""
        kept = _TABLES.setdefault(self.hash, {}).setdefault(table, {})
        if key not in kept:
            if len(kept) >= _RESOLVED_KEPT:
                kept.clear()
            kept[key] = ask()
        return kept[key]

    def _resolve_in_sql(self, name: str) -> str | None:
        """``resolve`` by three indexed queries, without reading every title into memory (a large world);
        the last ``_RESOLVED_KEPT`` answers kept per process."""
        title = title_from_url(name)
        if not title:
            return None
        def ask() -> str | None:
            conn = self._conn()
            if conn.execute("SELECT 1 FROM pages WHERE title = ?", (title,)).fetchone():
                return title
            if row := conn.execute("SELECT target FROM redirects WHERE alias = ?", (title,)).fetchone():
                return row[0]
            # NOCASE is ASCII lower-casing, as ``resolve`` compares; its index lists equal titles by title
            same = [r[0] for r in conn.execute("SELECT title FROM pages WHERE title = ? COLLATE NOCASE LIMIT 2",
                                               (title,))]
            return same[0] if len(same) == 1 else None
        return self._kept_answer("resolved", title, ask)

    def has_title_starting(self, prefix: str) -> bool:
        """Does some page's title start with ``prefix``, ASCII case aside (SQLite's NOCASE, as titles
        compare)? One indexed range query (``pages_title_nocase``): whatever the world's size, a caller can
        skip a search whose results it keeps only where their titles so start."""
        if not prefix:
            return len(self) > 0
        # NOCASE compares strings with their ASCII capitals lowered, so the range is taken in that folded
        # order: at or after the folded prefix and before it with its last character raised by one. A raise
        # that lands on a capital ('@' + 1 = 'A') would fold back to 'a', past the characters between; the
        # next character a folded string can hold there is '['.
        prefix = prefix.translate(ASCII_LOWER)
        raised = chr(ord(prefix[-1]) + 1)
        upper = prefix[:-1] + ("[" if "A" <= raised <= "Z" else raised)
        return self._conn().execute(
            "SELECT 1 FROM pages WHERE title >= ? COLLATE NOCASE AND title < ? COLLATE NOCASE LIMIT 1",
            (prefix, upper)).fetchone() is not None

    def _name_keys(self) -> frozenset[tuple[str, ...]]:
        """Every title and redirect as its words, ASCII lower-cased as ``resolve`` compares them."""
        def read():
            titles, redirects, _ = self._title_maps()
            return frozenset(tuple(name.translate(ASCII_LOWER).split(" ")) for name in (*titles, *redirects))
        return self._table("name_keys", read)

    def _row_ids(self) -> dict[str, int]:
        return self._table("row_ids", lambda: dict(self._conn().execute("SELECT title, id FROM pages")))

    def _rank_in_memory(self, index: SearchIndex, phrases: list[str], raw_words: list[str], limit: int):
        """The ``limit`` best rows by (score, title), and the title runs' matching rows (``_rank_in_sql``'s
        result, from the index's scores)."""
        return self._rank_scores(index.score(phrases), raw_words, limit)

    def _rank_scores(self, scores: np.ndarray, raw_words: list[str], limit: int):
        matched = np.flatnonzero(scores > 0.0)
        if len(matched) > limit:   # every row scoring at least the limit-th best, ties included
            cut = np.partition(scores[matched], len(matched) - limit)[len(matched) - limit]
            matched = matched[scores[matched] >= cut]
        titles = self._titles_of([int(r) for r in matched])
        candidates = sorted(((titles[int(r)], float(scores[r]), int(r)) for r in matched),
                            key=lambda c: (-c[1], c[0]))[:limit]
        ids = self._row_ids()
        extra = [(title, float(scores[ids[title]]), ids[title])
                 for title in self._title_runs(raw_words, {c[0] for c in candidates}) if scores[ids[title]] > 0.0]
        return candidates, extra

    def _best_in_sql(self, fts_query: str, limit: int) -> list[tuple[str, float, int]]:
        """The ``limit`` best rows matching ``fts_query`` by (-bm25, title): (title, score, rowid)."""
        rank = f"bm25(pages_fts, {', '.join(str(w) for w in _TITLE_COLUMN_WEIGHTS)})"
        conn = self._conn()
        hits = conn.execute(f"SELECT rowid, -{rank} FROM pages_fts WHERE pages_fts MATCH ? ORDER BY {rank} LIMIT ?",
                            (fts_query, limit + _TIE_SLACK)).fetchall()
        if limit > 0 and len(hits) == limit + _TIE_SLACK and hits[-1][1] == hits[limit - 1][1]:
            # ties run past the slack: rank them all by title, as ORDER BY score, title would
            hits = conn.execute(f"SELECT rowid, -{rank} FROM pages_fts WHERE pages_fts MATCH ? AND -{rank} >= ?",
                                (fts_query, hits[limit - 1][1])).fetchall()
        titles = self._titles_of([rowid for rowid, _ in hits])
        # every row scoring at least the limit-th best is in ``hits``: the limit best by (score, title)
        return sorted(((titles[rowid], bm25, rowid) for rowid, bm25 in hits), key=lambda c: (-c[1], c[0]))[:limit]

    def _rank_in_sql(self, fts_query: str, raw_words: list[str], limit: int):
        """``_rank_in_memory`` by SQLite's own ``bm25()``, for queries the index does not take."""
        rank = f"bm25(pages_fts, {', '.join(str(w) for w in _TITLE_COLUMN_WEIGHTS)})"
        conn = self._conn()
        candidates = self._best_in_sql(fts_query, limit)
        runs = self._title_runs(raw_words, {c[0] for c in candidates})
        extra = []
        if runs:
            ids = dict(conn.execute(f"SELECT id, title FROM pages WHERE title IN ({', '.join('?' * len(runs))})", runs))
            extra = [(ids[rowid], bm25, rowid) for rowid, bm25 in conn.execute(
                f"SELECT rowid, -{rank} FROM pages_fts WHERE pages_fts MATCH ? AND rowid IN ({', '.join('?' * len(ids))})",
                (fts_query, *ids))]
        return candidates, extra

    def _titles_of(self, rowids: list[int]) -> dict[int, str]:
        if not self.in_memory_search():   # a large world: read the rows asked for, not every title
            conn, found = self._conn(), {}
            for i in range(0, len(rowids), 500):
                chunk = rowids[i:i + 500]
                found.update(conn.execute(f"SELECT rowid, title FROM pages_fts WHERE rowid IN ({', '.join('?' * len(chunk))})",
                                          chunk))
            return found
        titles = self._table("fts_titles", lambda: dict(self._conn().execute("SELECT rowid, title FROM pages_fts")))
        return {rowid: titles[rowid] for rowid in rowids}

    def leads(self):
        """Every page's (title, opening text), read row by row from the stored texts, not through the
        search index: the direct enumeration a wide stop's set is checked against (issue 34)."""
        yield from self._conn().execute("SELECT title, lead FROM pages_fts ORDER BY rowid")

    def mention_count(self, title: str) -> int:
        """How many pages' text (description, lead, infobox values) holds the title as a phrase: how
        much of a hub the page is (France, Atlantic Ocean), which routes go easy on so that legs
        spread over the snapshot instead of meeting at the same few pages."""
        if title not in self._mention_counts:
            words = re.findall(r"\w+", title.lower())
            self._mention_counts[title] = int(self._conn().execute(
                "SELECT count(*) FROM pages_fts WHERE pages_fts MATCH ?", ('"' + " ".join(words) + '"',)
            ).fetchone()[0]) if words else 0
        return self._mention_counts[title]

    def info(self) -> dict:
        counts = self.manifest.get("counts", {})
        size = sum(f.stat().st_size for f in self.path.iterdir() if f.is_file())
        return {
            "path": str(self.path),
            "hash": self.hash,
            "format_version": self.manifest.get("format_version"),
            "pages": counts.get("pages", 0),
            "infobox_pages": counts.get("infobox_pages", 0),
            "links_in_snapshot": counts.get("links_in_snapshot", 0),
            "links": counts.get("links", 0),
            "redirects": counts.get("redirects", 0),
            "pages_with_coords": counts.get("pages_with_coords", 0),
            "sources": [s["name"] for s in self.manifest.get("sources", [])],
            "size_bytes": size,
        }


def open_default(settings=None) -> SnapshotStore:
    """The snapshot named by the settings (``LEGWORK_SNAPSHOT`` or snapshots/default)."""
    if settings is None:
        settings = load_settings()
    return SnapshotStore.open(settings.snapshot_dir)
