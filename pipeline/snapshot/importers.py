"""Importers: each turns one input into a stream of ``Page`` objects and ``Redirect`` pairs.

Kinds: MediaWiki XML dumps (``.xml``/``.xml.bz2``, streamed), Kiwix ZIM archives,
folders of raw wikitext files, title/summary JSON (and title -> topic JSON). A page that
cannot be parsed is reported (``Skipped``) and the import goes on; an input that is not
what it claims to be (bad XML, truncated bz2, not a ZIM) raises ``SnapshotInputError``
naming the file, so the build stops before writing anything.
"""
from __future__ import annotations

import bz2
import hashlib
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from pipeline.cache import file_sha256
from pipeline.snapshot.page import Page, canonical_title, title_to_url
from pipeline.snapshot.wikitext import WikitextError, first_sentence, is_redirect, page_from_wikitext


class SnapshotInputError(ValueError):
    """An input file is missing, of an unknown kind, or broken; the message names the file."""


@dataclass(frozen=True)
class Redirect:
    alias: str
    target: str


@dataclass(frozen=True)
class Skipped:
    title: str
    reason: str


@dataclass(frozen=True)
class TopicHint:
    title: str
    topic: str


Item = Page | Redirect | Skipped | TopicHint


@dataclass(frozen=True)
class Source:
    """One detected input: its kind, where it is, and the name recorded in the manifest."""
    kind: str            # xml | zim | wikitext | summaries | topics
    path: Path
    name: str

    def files(self) -> list[Path]:
        if self.kind == "wikitext" and self.path.is_dir():
            return wikitext_files(self.path)
        return [self.path]

    def sha256(self) -> str:
        """File hash; for a wikitext folder, the hash of its (name, file hash) list."""
        if self.kind == "wikitext" and self.path.is_dir():
            h = hashlib.sha256()
            for f in self.files():
                h.update(f"{f.relative_to(self.path).as_posix()}\t{file_sha256(f)}\n".encode())
            return h.hexdigest()
        return file_sha256(self.path)

    def items(self) -> Iterator[Item]:
        return IMPORTERS[self.kind](self.path, self.name)




# ---- MediaWiki XML ---------------------------------------------------------------------------

def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _open_maybe_bz2(path: Path):
    with open(path, "rb") as f:
        magic = f.read(3)
    return bz2.open(path, "rb") if magic == b"BZh" else open(path, "rb")


def iter_xml_dump(path: Path, source: str) -> Iterator[Item]:
    """Stream ``<page>`` elements (namespace 0 only) with iterparse, clearing each after use."""
    try:
        stream = _open_maybe_bz2(path)
    except OSError as exc:
        raise SnapshotInputError(f"{path}: cannot open: {exc}") from exc
    with stream:
        root = None
        try:
            for event, el in ET.iterparse(stream, events=("start", "end")):
                if root is None:
                    root = el
                    if _local(el.tag) != "mediawiki":
                        raise SnapshotInputError(
                            f"{path}: not a MediaWiki XML dump (root element <{_local(el.tag)}>)")
                    continue
                if event != "end" or _local(el.tag) != "page":
                    continue
                item = _page_element(el, source)
                root.clear()  # drop finished pages: memory stays flat on a full dump
                if item is not None:
                    yield item
        except ET.ParseError as exc:
            raise SnapshotInputError(f"{path}: not valid XML: {exc}") from exc
        except (EOFError, OSError) as exc:  # truncated or corrupt bz2 stream
            raise SnapshotInputError(f"{path}: broken compressed stream: {exc}") from exc
    if root is None:
        raise SnapshotInputError(f"{path}: empty file, not a MediaWiki XML dump")


def _page_element(el, source: str) -> Item | None:
    fields = {}
    redirect_target = None
    revisions = []
    for child in el:
        tag = _local(child.tag)
        if tag in ("title", "ns"):
            fields[tag] = (child.text or "").strip()
        elif tag == "redirect":
            redirect_target = child.get("title")
        elif tag == "revision":
            revisions.append(child)
    if fields.get("ns", "0") != "0":
        return None
    title = canonical_title(fields.get("title", ""))
    if not title:
        return Skipped(title="", reason="missing title")
    text, timestamp = "", None
    if revisions:
        rev = revisions[-1]
        for child in rev:
            tag = _local(child.tag)
            if tag == "text":
                text = child.text or ""
            elif tag == "timestamp":
                timestamp = (child.text or "").strip() or None
    if redirect_target is not None or is_redirect(text):
        target = canonical_title((redirect_target or is_redirect(text) or "").split("#")[0])
        return Redirect(alias=title, target=target) if target else Skipped(title, "redirect without target")
    return _parse_wikitext_page(title, text, source, timestamp)


def _parse_wikitext_page(title: str, text: str, source: str, timestamp: str | None) -> Item:
    try:
        return page_from_wikitext(title, text, source=source, revision_ts=timestamp)
    except WikitextError as exc:
        return Skipped(title=title, reason=str(exc))
    except RecursionError:
        return Skipped(title=title, reason="wikitext nested too deeply")
    except Exception as exc:  # noqa: BLE001 - any other parser failure on one page must not stop a dump import
        return Skipped(title=title, reason=f"{type(exc).__name__}: {exc}")


# ---- Kiwix ZIM -------------------------------------------------------------------------------

def iter_zim(path: Path, source: str) -> Iterator[Item]:
    """Articles (HTML entries) and redirects of a ZIM archive, old ("A/") or new namespace scheme."""
    from libzim.reader import Archive

    from pipeline.snapshot.htmlpage import page_from_html, revision_date

    try:
        archive = Archive(str(path))
        count = archive.all_entry_count
        main_path = archive.main_entry.get_item().path if archive.has_main_entry else None
    except Exception as exc:  # libzim raises RuntimeError for a file that is not a ZIM
        raise SnapshotInputError(f"{path}: not a readable ZIM archive: {exc}") from exc
    new_scheme = archive.has_new_namespace_scheme
    default_date = None
    try:
        default_date = archive.get_metadata("Date").decode("utf-8").strip() or None
    except (RuntimeError, KeyError, UnicodeDecodeError):  # an archive without a Date entry: pages carry none
        default_date = None

    def is_article_path(p: str) -> bool:
        return True if new_scheme else p.startswith("A/")

    for i in range(count):
        try:
            entry = archive._get_entry_by_id(i)
            entry_path = entry.path
        except Exception as exc:
            raise SnapshotInputError(f"{path}: broken entry {i}: {exc}") from exc
        if not is_article_path(entry_path):
            continue
        title = _zim_title(entry, new_scheme)
        try:
            if entry.is_redirect:
                target_entry = entry.get_redirect_entry()
                while target_entry.is_redirect:
                    target_entry = target_entry.get_redirect_entry()
                item = target_entry.get_item()
                if item.path == main_path or not item.mimetype.startswith("text/html"):
                    continue
                target = _zim_title(target_entry, new_scheme)
                if title and target and title != target:
                    yield Redirect(alias=title, target=target)
                continue
            item = entry.get_item()
            if not item.mimetype.startswith("text/html") or entry_path == main_path:
                continue
            html = bytes(item.content).decode("utf-8", errors="replace")
        except Exception as exc:  # noqa: BLE001 - one unreadable entry must not stop a ZIM import
            yield Skipped(title=title, reason=f"unreadable entry: {exc}")
            continue
        try:
            yield page_from_html(title, html, source=source, revision_ts=revision_date(html) or default_date)
        except Exception as exc:  # noqa: BLE001 - nor one page the HTML parser chokes on
            yield Skipped(title=title, reason=f"{type(exc).__name__}: {exc}")


def _zim_title(entry, new_scheme: bool) -> str:
    """The article's URL title, from its path: display titles in ZIMs are sometimes wrong
    (A/The_Pages_of_My_Mind is titled "Ray Charles" in the Ray Charles archive)."""
    path = entry.path if new_scheme else entry.path.split("/", 1)[-1]
    return canonical_title(unquote(path)) or canonical_title(entry.title or "")


# ---- raw wikitext folders --------------------------------------------------------------------

_WIKITEXT_HINT = re.compile(r"\[\[|\{\{|'''|^==.*==\s*$|^#REDIRECT", re.IGNORECASE | re.MULTILINE)


def looks_like_wikitext(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(65536).decode("utf-8", errors="replace")
    return bool(_WIKITEXT_HINT.search(head))


def wikitext_files(folder: Path) -> list[Path]:
    """The ``*.txt`` files directly in ``folder`` that look like wikitext (README-like notes are not)."""
    return sorted((p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".txt"
                   and looks_like_wikitext(p)), key=lambda p: p.name)


def title_from_filename(path: Path) -> str:
    stem = path.name[: -len(path.suffix)] if path.suffix else path.name
    sep = "_" if "_" in stem or " " in stem else "-"
    return canonical_title(stem.replace(sep, " "))


def _words(s: str) -> list[str]:
    return re.findall(r"\w+", s.lower())


def title_for_wikitext(path: Path, text: str) -> str:
    """The file name gives the title; a bold title with the same words supplies its spelling.

    ("toronto.txt" with '''Toronto''' -> "Toronto"). A first bold phrase that differs from
    the file name ("'''Clinton Williams "Clint" Murchison Sr.'''" in Clint-Murchison-Sr..txt)
    is a full name, not the article title, so the file name wins.
    """
    from_name = title_from_filename(path)
    m = re.search(r"'''(.+?)'''", text)
    if m:
        bold = re.sub(r"\[\[(?:[^|\]]*\|)?([^\]]*)\]\]", r"\1", m.group(1)).strip(" '")
        if bold and _words(bold) == _words(from_name):
            return canonical_title(bold)
    return from_name


def iter_wikitext_folder(path: Path, source: str) -> Iterator[Item]:
    files = [path] if path.is_file() else wikitext_files(path)
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError) as exc:
            yield Skipped(title=title_from_filename(f), reason=f"{f.name}: unreadable: {exc}")
            continue
        title = title_for_wikitext(f, text)
        target = is_redirect(text)
        if target:
            yield Redirect(alias=title, target=target)
            continue
        yield _parse_wikitext_page(title, text, source + f.name if path.is_dir() else source, None)


# ---- summary / topic JSON --------------------------------------------------------------------

def _load_json(path: Path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SnapshotInputError(f"{path}: not valid JSON: {exc}") from exc


def json_kind(data) -> str | None:
    """'summaries' for {title: {title, extract, ...}} (or a list of such), 'topics' for {title: topic}."""
    values = list(data.values()) if isinstance(data, dict) else data if isinstance(data, list) else None
    if not values:
        return None
    sample = values[:50]
    if all(isinstance(v, dict) and ("extract" in v or "summary" in v) for v in sample):
        return "summaries"
    if isinstance(data, dict) and all(isinstance(v, str) for v in sample):
        return "topics"
    return None


def iter_summaries(path: Path, source: str) -> Iterator[Item]:
    data = _load_json(path)
    if json_kind(data) != "summaries":
        raise SnapshotInputError(f"{path}: not a title/summary JSON ({{title: {{title, extract, ...}}}})")
    entries = sorted(data.items()) if isinstance(data, dict) else [(None, v) for v in data]
    for key, v in entries:
        if not isinstance(v, dict):
            yield Skipped(title=str(key or ""), reason="entry is not an object")
            continue
        title = canonical_title(str(v.get("title") or key or ""))
        extract = " ".join(str(v.get("extract") or v.get("summary") or "").split())
        if not title:
            yield Skipped(title="", reason="missing title")
            continue
        if not extract:
            yield Skipped(title=title, reason="empty extract")
            continue
        topic = str(v.get("topic") or "").strip()
        yield Page(title=title, url=title_to_url(title),
                   description=str(v.get("description") or "").strip() or first_sentence(extract),
                   lead=extract, categories=[topic] if topic else [], source=source)


def iter_topics(path: Path, source: str) -> Iterator[Item]:
    data = _load_json(path)
    if json_kind(data) != "topics":
        raise SnapshotInputError(f"{path}: not a title -> topic JSON")
    for title, topic in sorted(data.items()):
        if isinstance(topic, str) and topic.strip() and canonical_title(title):
            yield TopicHint(title=canonical_title(title), topic=topic.strip())


IMPORTERS: dict[str, Callable[[Path, str], Iterator[Item]]] = {
    "xml": iter_xml_dump,
    "zim": iter_zim,
    "wikitext": iter_wikitext_folder,
    "summaries": iter_summaries,
    "topics": iter_topics,
}


# ---- detection -------------------------------------------------------------------------------

def _sniff(path: Path) -> str | None:
    with open(path, "rb") as f:
        head = f.read(4096)
    if head[:4] == b"ZIM\x04":
        return "zim"
    if head[:3] == b"BZh":
        return "xml"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"<"):
        return "xml"
    if text.startswith((b"{", b"[")):
        return "json"
    return None


def detect_file(path: Path) -> Source:
    name = path.name
    lower = name.lower()
    kind = None
    if lower.endswith(".zim"):
        kind = "zim"
    elif lower.endswith((".xml", ".xml.bz2")):
        kind = "xml"
    elif lower.endswith(".json"):
        kind = "json"
    elif lower.endswith(".txt"):
        kind = "wikitext"
    else:
        kind = _sniff(path)
    if kind is None:
        raise SnapshotInputError(f"{path}: not a MediaWiki dump, ZIM archive, summary JSON or wikitext file")
    if kind in ("zim", "xml"):
        sniffed = _sniff(path)
        if sniffed != kind:
            raise SnapshotInputError(f"{path}: named like a {kind} file but its content is not one")
    if kind == "json":
        k = json_kind(_load_json(path))
        if k is None:
            raise SnapshotInputError(f"{path}: JSON is neither {{title: summary}} nor {{title: topic}}")
        kind = k
    return Source(kind=kind, path=path, name=name)


def detect_sources(path: str | os.PathLike) -> tuple[list[Source], list[str]]:
    """Inputs found at ``path`` (a file, or a folder scanned recursively) and the files ignored."""
    path = Path(path)
    if not path.exists():
        raise SnapshotInputError(f"{path}: no such file or folder")
    if path.is_file():
        return [detect_file(path)], []
    sources: list[Source] = []
    ignored: list[str] = []
    for folder, dirs, files in os.walk(path):
        dirs.sort()
        folder_path = Path(folder)
        if any(f.lower().endswith(".txt") for f in files) and wikitext_files(folder_path):
            rel = folder_path.relative_to(path).as_posix()
            sources.append(Source(kind="wikitext", path=folder_path,
                                  name=(path.name if rel == "." else rel) + "/"))
        for f in sorted(files):
            p = folder_path / f
            lower = f.lower()
            if lower.endswith((".zim", ".xml", ".xml.bz2", ".json")):
                src = detect_file(p)
                sources.append(Source(kind=src.kind, path=p, name=p.relative_to(path).as_posix()))
            elif not (lower.endswith(".txt") and looks_like_wikitext(p)):
                ignored.append(p.relative_to(path).as_posix())
    return sources, ignored
