"""Build a snapshot directory from importer streams, deterministically and atomically.

Pages are staged in a scratch SQLite file (a full dump does not fit in memory as Page
objects), merged by title (the richer page wins, see ``richness``), then written in title
order with links resolved through the redirect table. Everything is built in a temporary
sibling directory and renamed into place at the end, so a failed build (a broken input
raises ``SnapshotInputError``) leaves the previous snapshot untouched.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.cache import canonical_json, file_sha256
from pipeline.snapshot.importers import Redirect, Skipped, SnapshotInputError, Source, TopicHint, detect_sources
from pipeline.snapshot.language import identify, page_text
from pipeline.snapshot.page import Link, Page
from pipeline.snapshot.wikitext import first_sentence

FORMAT_VERSION = 1
PAGES_DB = "pages.sqlite"
MANIFEST = "manifest.json"
REPORT = "build_report.json"
HASH_METHOD = ("sha256 over UTF-8 lines: canonical JSON of each page in title order, then "
               "canonical JSON [alias, target] of each redirect in alias order")
_MAX_REDIRECT_HOPS = 8

SCHEMA = """
CREATE TABLE pages (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE, json TEXT NOT NULL);
CREATE INDEX pages_title_nocase ON pages(title COLLATE NOCASE);
CREATE TABLE redirects (alias TEXT PRIMARY KEY, target TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX redirects_target ON redirects(target, alias);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE VIRTUAL TABLE pages_fts USING fts5(
    title, description, lead, infobox, tokenize = 'porter unicode61 remove_diacritics 2'
);
"""


def richness(page: Page) -> tuple:
    """Which of two pages with one title to keep: infobox, then sections, then amount of content."""
    text = len(page.lead) + sum(len(s.text) for s in page.sections)
    return (1 if page.infobox else 0, 1 if page.sections else 0, len(page.infobox), len(page.links), text)


@dataclass
class BuildReport:
    skipped: list[dict] = field(default_factory=list)
    merges: list[dict] = field(default_factory=list)
    redirect_conflicts: list[dict] = field(default_factory=list)
    redirects_dropped: int = 0      # target not in the snapshot
    redirects_shadowed: int = 0     # alias is itself a page
    topics_applied: int = 0
    ignored_files: list[str] = field(default_factory=list)
    other_language: list[dict] = field(default_factory=list)  # pages in another language: never seeds or route pages

    def to_dict(self) -> dict:
        return {
            "skipped": sorted(self.skipped, key=lambda d: (d["source"], d["title"], d["reason"])),
            "merges": sorted(self.merges, key=lambda d: (d["title"], d["kept"], d["dropped"])),
            "redirect_conflicts": sorted(self.redirect_conflicts, key=lambda d: (d["alias"], d["kept"])),
            "redirects_dropped": self.redirects_dropped,
            "redirects_shadowed": self.redirects_shadowed,
            "topics_applied": self.topics_applied,
            "ignored_files": sorted(self.ignored_files),
            "other_language": sorted(self.other_language, key=lambda d: d["title"]),
        }

    def summary(self) -> dict:
        return {"skipped": len(self.skipped), "merges": len(self.merges),
                "redirect_conflicts": len(self.redirect_conflicts),
                "redirects_dropped": self.redirects_dropped, "redirects_shadowed": self.redirects_shadowed,
                "topics_applied": self.topics_applied, "ignored_files": len(self.ignored_files),
                "other_language": len(self.other_language)}


@dataclass
class BuildResult:
    out: Path
    manifest: dict
    report: BuildReport


def collect_sources(paths: Iterable[str | os.PathLike]) -> tuple[list[Source], list[str]]:
    """Detect every input under ``paths``; order is by kind and name so argument order does not matter."""
    sources: list[Source] = []
    ignored: list[str] = []
    for p in paths:
        found, skipped = detect_sources(p)
        sources += found
        ignored += skipped
    if not sources:
        raise SnapshotInputError("no importable input found in " + ", ".join(str(p) for p in paths))
    kind_order = {"xml": 0, "zim": 1, "wikitext": 2, "summaries": 3, "topics": 4}
    sources.sort(key=lambda s: (kind_order[s.kind], s.name, str(s.path)))
    return sources, ignored


def build_snapshot(paths: Iterable[str | os.PathLike], out: str | os.PathLike,
                   log: Callable[[str], None] | None = None, language: str = "en") -> BuildResult:
    """Import ``paths`` and write the snapshot directory ``out`` (replaced only on success);
    ``language`` is the snapshot's: pages identified as another are kept but marked."""
    log = log or (lambda msg: None)
    out = Path(out)
    paths = list(paths)
    sources, ignored = collect_sources(paths)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.building-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        report = BuildReport(ignored_files=ignored)
        manifest = _build_into(tmp, sources, report, log, language)
        _replace_dir(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return BuildResult(out=out, manifest=manifest, report=report)


def _replace_dir(tmp: Path, out: Path) -> None:
    backup = None
    if out.exists():
        backup = out.parent / f".{out.name}.previous-{os.getpid()}"
        if backup.exists():
            shutil.rmtree(backup)
        os.replace(out, backup)
    try:
        os.replace(tmp, out)
    except BaseException:
        if backup is not None:
            os.replace(backup, out)
        raise
    if backup is not None:
        shutil.rmtree(backup, ignore_errors=True)


def _build_into(tmp: Path, sources: list[Source], report: BuildReport, log, language: str = "en") -> dict:
    staging_path = tmp / "staging.sqlite"
    stage = sqlite3.connect(staging_path, isolation_level=None)
    stage.executescript("""
        PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
        CREATE TABLE staged (title TEXT PRIMARY KEY, rank TEXT NOT NULL, source TEXT NOT NULL, json TEXT NOT NULL);
        CREATE TABLE topics (title TEXT NOT NULL, topic TEXT NOT NULL, PRIMARY KEY (title, topic));
    """)
    redirects: dict[str, tuple[str, str]] = {}   # alias -> (target, source)
    source_rows = []
    stage.execute("BEGIN")
    for src in sources:
        log(f"importing {src.kind} {src.name}")
        counts = {"pages": 0, "redirects": 0, "skipped": 0, "topics": 0}
        for item in src.items():
            if isinstance(item, Page):
                counts["pages"] += 1
                _stage_page(stage, item, src.name, report)
            elif isinstance(item, Redirect):
                counts["redirects"] += 1
                _stage_redirect(redirects, item, src.name, report)
            elif isinstance(item, Skipped):
                counts["skipped"] += 1
                report.skipped.append({"source": src.name, "title": item.title, "reason": item.reason})
            elif isinstance(item, TopicHint):
                counts["topics"] += 1
                stage.execute("INSERT OR IGNORE INTO topics VALUES (?, ?)", (item.title, item.topic))
        source_rows.append({"name": src.name, "kind": src.kind, "sha256": src.sha256(), **counts})
        log(f"  {counts['pages']} pages, {counts['redirects']} redirects, {counts['skipped']} skipped")
    stage.execute("COMMIT")

    titles = {row[0] for row in stage.execute("SELECT title FROM staged")}
    final_redirects, redirect_ends = _resolve_redirect_table(redirects, titles, report)
    aliases: dict[str, list[str]] = {}
    for alias, target in final_redirects.items():
        aliases.setdefault(target, []).append(alias)

    def resolve(title: str) -> str:
        return redirect_ends.get(title, title) if title not in titles else title

    db_path = tmp / PAGES_DB
    db = sqlite3.connect(db_path, isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")
    db.execute("PRAGMA page_size=4096")
    db.executescript(SCHEMA)
    content_hash = hashlib.sha256()
    counts = {"pages": 0, "infobox_pages": 0, "pages_with_coords": 0, "sections": 0, "links": 0,
              "links_in_snapshot": 0, "redirects": len(final_redirects), "categories": 0}
    languages: dict[str, int] = {}
    db.execute("BEGIN")
    for page_id, (title, page_json) in enumerate(stage.execute("SELECT title, json FROM staged ORDER BY title"), 1):
        page = Page.from_dict(json.loads(page_json))
        page.links = _resolved_links(page, resolve, titles)
        page.aliases = sorted(aliases.get(title, []))
        page.language = identify(page_text(page))
        languages[page.language or "undetermined"] = languages.get(page.language or "undetermined", 0) + 1
        if page.language and page.language != language:
            report.other_language.append({"title": title, "language": page.language})
        for (topic,) in stage.execute("SELECT topic FROM topics WHERE title = ? ORDER BY topic", (title,)):
            if topic not in page.categories:
                page.categories.append(topic)
                report.topics_applied += 1
        data = canonical_json(page.to_dict())
        content_hash.update(data.encode("utf-8") + b"\n")
        db.execute("INSERT INTO pages (id, title, json) VALUES (?, ?, ?)", (page_id, title, data))
        db.execute("INSERT INTO pages_fts (rowid, title, description, lead, infobox) VALUES (?, ?, ?, ?, ?)",
                   (page_id, title, page.description, page.lead, " ; ".join(f.text for f in page.infobox)))
        counts["pages"] += 1
        counts["infobox_pages"] += 1 if page.infobox else 0
        counts["pages_with_coords"] += 1 if page.coords else 0
        counts["sections"] += len(page.sections)
        counts["links"] += len(page.links)
        counts["links_in_snapshot"] += sum(1 for link in page.links if link.in_snapshot)
        counts["categories"] += len(page.categories)
    for alias in sorted(final_redirects):
        target = final_redirects[alias]
        content_hash.update(canonical_json([alias, target]).encode("utf-8") + b"\n")
        db.execute("INSERT INTO redirects (alias, target) VALUES (?, ?)", (alias, target))
    digest = content_hash.hexdigest()
    db.execute("INSERT INTO meta (key, value) VALUES ('format_version', ?), ('hash', ?)",
               (str(FORMAT_VERSION), digest))
    db.execute("INSERT INTO pages_fts (pages_fts) VALUES ('optimize')")
    db.execute("COMMIT")
    db.execute("VACUUM")
    db.close()
    stage.close()
    staging_path.unlink()

    manifest = {
        "format_version": FORMAT_VERSION,
        "hash": digest,
        "hash_method": HASH_METHOD,
        "counts": counts,
        "language": language,
        "languages": dict(sorted(languages.items())),
        "sources": source_rows,
        "report": report.summary(),
        "files": {PAGES_DB: file_sha256(db_path)},
        "licence": "Article text: CC BY-SA (Wikipedia contributors); see snapshots/ATTRIBUTION.md",
    }
    (tmp / REPORT).write_text(json.dumps(report.to_dict(), indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                              encoding="utf-8")
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                encoding="utf-8")
    return manifest




def _stage_page(stage: sqlite3.Connection, page: Page, source: str, report: BuildReport) -> None:
    page_json = canonical_json(page.to_dict())
    rank = richness(page)
    row = stage.execute("SELECT rank, source, json FROM staged WHERE title = ?", (page.title,)).fetchone()
    if row is None:
        stage.execute("INSERT INTO staged VALUES (?, ?, ?, ?)", (page.title, json.dumps(rank), source, page_json))
        return
    old_rank, old_source, old_json = tuple(json.loads(row[0])), row[1], row[2]
    # richer wins; ties go to the source name, then the JSON, so input order never matters
    new_wins = (rank, [-ord(c) for c in source], page_json) > (old_rank, [-ord(c) for c in old_source], old_json)
    kept, dropped = (page, Page.from_dict(json.loads(old_json))) if new_wins else \
        (Page.from_dict(json.loads(old_json)), page)
    kept_source, dropped_source = (source, old_source) if new_wins else (old_source, source)
    filled = []
    if (kept.description == first_sentence(kept.lead) and dropped.description
            and dropped.description != first_sentence(dropped.lead)):
        kept.description = dropped.description  # a real short description beats the derived one
        filled.append("description")
    report.merges.append({"title": page.title, "kept": kept_source, "dropped": dropped_source,
                          "filled": filled})
    stage.execute("REPLACE INTO staged VALUES (?, ?, ?, ?)",
                  (kept.title, json.dumps(richness(kept)), kept_source, canonical_json(kept.to_dict())))


def _stage_redirect(redirects: dict, item: Redirect, source: str, report: BuildReport) -> None:
    if item.alias == item.target:
        return
    old = redirects.get(item.alias)
    if old is None:
        redirects[item.alias] = (item.target, source)
        return
    if old[0] == item.target:
        return
    keep, drop = sorted([old, (item.target, source)])
    redirects[item.alias] = keep
    report.redirect_conflicts.append({"alias": item.alias, "kept": keep[0], "dropped": drop[0]})


def _resolve_redirect_table(redirects: dict, titles: set[str],
                            report: BuildReport) -> tuple[dict[str, str], dict[str, str]]:
    """Follow redirect chains. Returns (stored: alias -> page in the snapshot, every alias -> end title).

    Aliases that are themselves pages are dropped; so are (from the stored table) redirects
    whose end is not in the snapshot, though links still use them to name their target.
    """
    stored: dict[str, str] = {}
    ends: dict[str, str] = {}
    for alias in sorted(redirects):
        if alias in titles:
            report.redirects_shadowed += 1
            continue
        target, hops, seen = redirects[alias][0], 0, {alias}
        while target not in titles and target in redirects and target not in seen and hops < _MAX_REDIRECT_HOPS:
            seen.add(target)
            target, hops = redirects[target][0], hops + 1
        ends[alias] = target
        if target in titles:
            stored[alias] = target
        else:
            report.redirects_dropped += 1
    return stored, ends


def _resolved_links(page: Page, resolve, titles: set[str]) -> list[Link]:
    out: list[Link] = []
    seen: set[str] = set()
    for link in page.links:
        target = resolve(link.title)
        if target == page.title or target in seen:
            continue
        seen.add(target)
        out.append(Link(title=target, in_snapshot=target in titles))
    return out
