"""Read-only access to a built snapshot: lookups by title or URL, redirects, BM25 search.

Opening reads only ``manifest.json`` and checks the SQLite schema; each lookup reads one
row. Connections are per thread and opened read-only and immutable, so any number of
threads (or processes) can read one snapshot at once.
"""
from __future__ import annotations

import json
import re
import sqlite3
import threading
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from pipeline.config import load_settings
from pipeline.snapshot.page import Page, canonical_title, title_to_url
from pipeline.snapshot.search_index import SearchIndex

# the layout of a built snapshot (pipeline.snapshot.build writes it)
PAGES_DB = "pages.sqlite"
MANIFEST = "manifest.json"

_TITLE_COLUMN_WEIGHTS = (10.0, 4.0, 1.0, 1.0)  # title, description, lead, infobox values
_TITLE_BONUS = 10.0
_TIE_SLACK = 32   # rows read past a search's candidate limit, to see where equal scores end
_STOPWORDS = {"a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"}
_QUERY_STOPWORDS = _STOPWORDS | {"is", "are", "was", "were", "be", "what", "which", "who", "whom", "where", "when",
                                 "how", "it", "its", "this", "that", "as", "did", "does", "do"}


_INDEX_LOCK = threading.Lock()
_INDEXES: dict[str, SearchIndex] = {}   # by snapshot hash: every store of one snapshot shares it
# a search's results by (snapshot hash, query, k, snippets): a pure function of the snapshot, so every
# store and run of one snapshot in a process shares them (the checks of one leg after another ask the
# same kind words: four in ten of an extreme leg's searches were asked by an earlier leg)
_SEARCHES: dict[tuple[str, str, int, bool], tuple[dict, ...]] = {}
_SEARCHES_KEPT = 100_000
# the title tables a store reads once (``_tables``), by snapshot hash: every store of one snapshot
# in a process shares them (each run and each single-leg context opens its own store)
_TABLES: dict[str, dict[str, object]] = {}


class SnapshotError(RuntimeError):
    """The snapshot directory is missing, incomplete or corrupt; the message says which."""


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
        titles, redirects, lower = self._title_maps()
        if title in titles:
            return title
        if title in redirects:
            return redirects[title]
        # MediaWiki titles are case-sensitive after the first letter, but a reader typing
        # "Ray charles" means the page; accept a unique case-insensitive match.
        same = lower.get(title.translate(ASCII_LOWER), [])
        return same[0] if len(same) == 1 else None

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
        matching row in SQL); a query word the tokenizer splits into a phrase goes to SQLite. Snippets
        and descriptions are read for the ``k`` rows shown (``snippets=False``: titles, URLs and
        scores only, for checks that need no more: the snippet query is a third of a search).
        Results are kept for the process (``_SEARCHES``).
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
        words = re.findall(r"\w+", (query or "").lower())
        if not words or k <= 0:
            return []
        content_words = [w for w in words if w not in _QUERY_STOPWORDS] or words
        phrases = list(dict.fromkeys(content_words))
        fts_query = " OR ".join('"' + w + '"' for w in phrases)
        limit = max(50, 10 * int(k))
        raw_words = re.findall(r"\w+", query or "")
        index = self.search_index()
        tokens = [index.tokens(w) for w in phrases]
        if all(len(t) == 1 for t in tokens):
            candidates, extra = self._rank_in_memory(index, [t[0] for t in tokens], raw_words, limit)
        else:   # a word the tokenizer splits (a phrase of several tokens): SQLite ranks it
            candidates, extra = self._rank_in_sql(fts_query, raw_words, limit)
        candidates += extra
        conn = self._conn()
        query_words = set(words)
        scored = []
        for title, bm25, rowid in candidates:
            title_words = [w for w in re.findall(r"\w+", title.lower()) if w not in _STOPWORDS] or \
                re.findall(r"\w+", title.lower())
            share = sum(1 for w in title_words if w in query_words) / len(title_words) if title_words else 0.0
            scored.append((round(bm25 + _TITLE_BONUS * share * share, 6), title, rowid))
        scored.sort(key=lambda r: (-r[0], r[1]))
        best = scored[:k]
        if not snippets:
            return [{"title": title, "url": title_to_url(title), "score": score} for score, title, _ in best]
        shown = {rowid: (description, snippet) for rowid, description, snippet in conn.execute(
            f"SELECT rowid, description, snippet(pages_fts, 2, '', '', '…', 24) FROM pages_fts "
            f"WHERE pages_fts MATCH ? AND rowid IN ({', '.join('?' * len(best))})",
            (fts_query, *(rowid for _, _, rowid in best)))} if best else {}
        return [{"title": title, "url": title_to_url(title),
                 "snippet": " ".join((shown[rowid][1] or "").split()) or shown[rowid][0], "score": score}
                for score, title, rowid in best]

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
        keys = self._name_keys()
        # a run of ASCII words without underscores resolves only if its words, ASCII lower-cased as
        # ``resolve`` compares them, are a title's or a redirect's (the test is exact); others are tried
        plain = [w.isascii() and "_" not in w for w in raw_words]
        low = [w.translate(ASCII_LOWER) for w in raw_words]
        runs: list[str] = []
        for n in range(min(len(raw_words), 6), 0, -1):
            for i in range(len(raw_words) - n + 1):
                if all(plain[i:i + n]) and tuple(low[i:i + n]) not in keys:
                    continue
                title = self.resolve(" ".join(raw_words[i:i + n]))
                if title is not None and title not in seen:
                    seen.add(title)
                    runs.append(title)
        return runs

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
        scores = index.score(phrases)
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

    def _rank_in_sql(self, fts_query: str, raw_words: list[str], limit: int):
        """``_rank_in_memory`` by SQLite's own ``bm25()``, for queries the index does not take."""
        rank = f"bm25(pages_fts, {', '.join(str(w) for w in _TITLE_COLUMN_WEIGHTS)})"
        conn = self._conn()
        hits = conn.execute(f"SELECT rowid, -{rank} FROM pages_fts WHERE pages_fts MATCH ? ORDER BY {rank} LIMIT ?",
                            (fts_query, limit + _TIE_SLACK)).fetchall()
        if len(hits) == limit + _TIE_SLACK and hits[-1][1] == hits[limit - 1][1]:
            # ties run past the slack: rank them all by title, as ORDER BY score, title would
            hits = conn.execute(f"SELECT rowid, -{rank} FROM pages_fts WHERE pages_fts MATCH ? AND -{rank} >= ?",
                                (fts_query, hits[limit - 1][1])).fetchall()
        titles = self._titles_of([rowid for rowid, _ in hits])
        # every row scoring at least the limit-th best is in ``hits``: the limit best by (score, title)
        candidates = sorted(((titles[rowid], bm25, rowid) for rowid, bm25 in hits), key=lambda c: (-c[1], c[0]))[:limit]
        runs = self._title_runs(raw_words, {c[0] for c in candidates})
        extra = []
        if runs:
            ids = dict(conn.execute(f"SELECT id, title FROM pages WHERE title IN ({', '.join('?' * len(runs))})", runs))
            extra = [(ids[rowid], bm25, rowid) for rowid, bm25 in conn.execute(
                f"SELECT rowid, -{rank} FROM pages_fts WHERE pages_fts MATCH ? AND rowid IN ({', '.join('?' * len(ids))})",
                (fts_query, *ids))]
        return candidates, extra

    def _titles_of(self, rowids: list[int]) -> dict[int, str]:
        titles = self._table("fts_titles", lambda: dict(self._conn().execute("SELECT rowid, title FROM pages_fts")))
        return {rowid: titles[rowid] for rowid in rowids}

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
