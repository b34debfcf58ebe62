"""Importers: each turns one input into a stream of ``Page`` objects and ``Redirect`` pairs.

Kinds: MediaWiki XML dumps (``.xml``/``.xml.bz2``, streamed), Kiwix ZIM archives,
folders of raw wikitext files, title/summary JSON (and title -> topic JSON). A page that
cannot be parsed (its wikitext, or its own XML in a dump) is reported (``Skipped``) and the
import goes on; an input that is not what it claims to be (not XML, not a ZIM) or that breaks
off (a truncated dump, a corrupt bz2 stream) raises ``SnapshotInputError`` naming the file,
after every complete page before the break. Dumps and ZIM archives can also be read piece by
piece (``XmlDumpReader`` from a resume point, ``ZimReader.item``) for parallel, resumable builds.
"""
from __future__ import annotations

import bisect
import bz2
import hashlib
import html
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from pipeline.cache import file_sha256
from pipeline.snapshot.htmlpage import page_from_html, revision_date
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
#
# A dump is read as bytes and cut into ``<page>...</page>`` chunks (dumps escape "<" inside text,
# so the markers cannot occur in content); each chunk is parsed on its own. That keeps memory to
# one page whatever the dump's size, lets pages be parsed in other processes, gives every page a
# byte offset to resume from, and turns a page with broken XML into one rejected page instead of
# the end of the import.

_READ_BLOCK = 1 << 20
MAX_PAGE_BYTES = 64 << 20          # a larger <page> (a full-history page) is rejected, not buffered
_MAX_HEADER_BYTES = 16 << 20
_PAGE_START = re.compile(rb"<page[\s>]")
_PAGE_END = b"</page>"
_NS_RE = re.compile(rb"<ns>\s*(-?\d+)\s*</ns>")
_TITLE_RE = re.compile(rb"<title>([^<]*)</title>")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


class _DumpStream:
    """Decompressed bytes of a ``.xml`` or ``.xml.bz2`` file, block by block, from a span's origin.

    bz2 streams are decoded one after another (multistream dumps hold one per ~100 pages); the
    start of each, (compressed offset, decompressed offset), is kept so that a resumed read can
    seek to the stream holding a given decompressed offset instead of decoding from the start.
    Decompressed offsets count from the span's origin (a bz2 stream start, or any byte of a plain
    file); ``stop`` is the compressed offset where the span ends: ``stop_pos`` becomes its
    decompressed offset once known (at once for a plain file, when the stream starting there is
    reached for bz2).
    """

    def __init__(self, path: Path, locator: tuple[int, int] = (0, 0), origin: int = 0, stop: int | None = None):
        self.path = path
        self.file = open(path, "rb")  # noqa: SIM115 - kept open across read() calls, closed by close()
        self.is_bz2 = self.file.read(3) == b"BZh"
        comp, decomp = locator if self.is_bz2 else (origin + locator[1], locator[1])
        self.file.seek(comp)
        self.pos = decomp                    # decompressed offset of the next byte read() returns
        self.fed = comp                      # compressed bytes consumed from the file
        self.streams: list[tuple[int, int]] = [(comp, decomp)]
        self.decomp = bz2.BZ2Decompressor() if self.is_bz2 else None
        self.stop = stop
        self.stop_pos = (stop - origin) if (stop is not None and not self.is_bz2) else None
        if self.is_bz2 and stop is not None and comp == stop:
            self.stop_pos = decomp

    def close(self) -> None:
        self.file.close()

    def read(self) -> bytes:
        """The next block of decompressed bytes; b"" at the end. Raises EOFError/OSError on a broken bz2."""
        if not self.is_bz2:
            data = self.file.read(_READ_BLOCK)
            self.pos += len(data)
            return data
        while True:
            if self.decomp.eof:
                rest = self.decomp.unused_data
                if not rest:
                    rest = self.file.read(_READ_BLOCK)
                    self.fed += len(rest)
                if not rest:
                    return b""
                start = self.fed - len(rest)
                self.streams.append((start, self.pos))
                if self.stop is not None and self.stop_pos is None:
                    if start == self.stop:
                        self.stop_pos = self.pos
                    elif start > self.stop:
                        raise OSError(f"no bz2 stream starts at byte {self.stop} (a stream runs from before it "
                                      f"to byte {start})")
                self.decomp = bz2.BZ2Decompressor()
                try:
                    out = self.decomp.decompress(rest, _READ_BLOCK)
                except OSError:
                    if rest.startswith(b"BZh"):
                        raise                # a broken stream
                    return b""               # trailing bytes that are no bz2 stream: ignored, as bz2.open does
            else:
                raw = b""
                if self.decomp.needs_input:
                    raw = self.file.read(_READ_BLOCK)
                    self.fed += len(raw)
                    if not raw:
                        raise EOFError("Compressed file ended before the end-of-stream marker was reached")
                out = self.decomp.decompress(raw, _READ_BLOCK)
            if out:
                self.pos += len(out)
                return out

    def locate(self, offset: int) -> tuple[int, int]:
        """(compressed, decompressed) start of the bz2 stream holding decompressed ``offset``;
        older stream starts are forgotten (offsets asked for only grow)."""
        i = bisect.bisect_right(self.streams, offset, key=lambda s: s[1]) - 1
        i = max(i, 0)
        del self.streams[:i]
        return self.streams[0]


@dataclass(frozen=True)
class RawPage:
    """One ``<page>`` element's bytes and where it ends in the decompressed dump."""
    index: int          # 1-based position among the dump's pages
    end: int            # decompressed offset just after ``</page>``
    digest: str         # chained SHA-256 of the dump's bytes up to ``end`` (see XmlDumpReader)
    data: bytes


@dataclass(frozen=True)
class XmlPosition:
    """Where a dump read stopped: after page ``pages``, at decompressed byte ``offset``."""
    offset: int = 0
    pages: int = 0
    digest: str = ""
    stream: tuple[int, int] = (0, 0)

    def to_dict(self) -> dict:
        return {"offset": self.offset, "pages": self.pages, "digest": self.digest, "stream": list(self.stream)}

    @classmethod
    def from_dict(cls, d: dict) -> XmlPosition:
        return cls(offset=d["offset"], pages=d["pages"], digest=d["digest"], stream=tuple(d["stream"]))


class ResumeMismatch(SnapshotInputError):
    """The bytes before a recorded resume point are not the ones read before: the file was replaced."""


class XmlDumpReader:
    """Iterate the ``<page>`` chunks of a MediaWiki dump, in order, in bounded memory.

    ``span`` = (origin, stop) reads one shard of the dump: the pages whose ``<page>`` starts at or
    after the compressed offset ``origin`` (a bz2 stream start, or any byte of a plain file) and
    before ``stop`` (the same kind of offset; None: the end of the file), reading on past ``stop``
    only to finish the last of them. Offsets, page numbers and digests then count from ``origin``;
    only the shard at the file's start checks the ``<mediawiki>`` header, only the one reaching the
    end checks ``</mediawiki>``. The shards of a dump give, together, its pages exactly once.

    Each chunk carries a digest chained over the dump's bytes up to its end (a running SHA-256,
    finished at every page end, so it depends on content only). A resume point (``start``) is
    continued by seeking to it (the bz2 stream holding it) when the file is unchanged, or with
    ``verify`` by re-reading the file from its start and checking the digest at that point (a
    finished download of a dump that was truncated before): ``ResumeMismatch`` if it differs.
    Raises ``SnapshotInputError`` naming the file: not XML / not a dump (before any page), a
    truncated dump or a broken bz2 stream (after yielding every complete page before the break).
    """

    def __init__(self, path: Path, start: XmlPosition | None = None, verify: bool = False,
                 max_page_bytes: int = MAX_PAGE_BYTES, span: tuple[int, int | None] = (0, None)):
        self.path = path
        self.origin, self.stop = span
        self.max_page_bytes = max_page_bytes
        self.start = start or XmlPosition()
        self.verify = verify and self.start.offset > 0
        self.pages = 0
        self.digest = ""
        self._hash = hashlib.sha256()
        self.stream: _DumpStream | None = None

    def locate(self, offset: int) -> tuple[int, int]:
        return self.stream.locate(offset)

    def _open(self, locator: tuple[int, int]) -> None:
        try:
            self.stream = _DumpStream(self.path, locator, self.origin, self.stop)
        except OSError as exc:
            raise SnapshotInputError(f"{self.path}: cannot open: {exc}") from exc

    def _read(self) -> bytes:
        try:
            return self.stream.read()
        except (EOFError, OSError) as exc:  # truncated or corrupt bz2 stream
            raise SnapshotInputError(f"{self.path}: broken compressed stream after page {self.pages}{self._where()} "
                                     f"(byte {self.stream.pos}): {exc}: truncated?") from exc

    def _where(self) -> str:
        return f" of the shard from byte {self.origin}" if self.origin else ""

    def __iter__(self) -> Iterator[RawPage]:
        try:
            yield from self._pages()
        finally:
            if self.stream is not None:
                self.stream.close()

    def _pages(self) -> Iterator[RawPage]:
        start = self.start
        if start.offset and not self.verify:
            self._open(start.stream)
            self.pages, self.digest = start.pages, start.digest
            self._hash = hashlib.sha256(self.digest.encode("ascii"))
            buf = bytearray()
            skip = start.offset - self.stream.pos      # from the bz2 stream's start to the resume point
            while len(buf) < skip:
                block = self._read()
                if not block:
                    raise ResumeMismatch(f"{self.path}: ends before the resume point (byte {start.offset})")
                buf += block
            del buf[:skip]
            yield from self._scan(buf, start.offset)
            return
        self._open((self.origin, 0))
        pages = self._scan(self._header() if self.origin == 0 else bytearray(), 0)
        if start.offset:
            try:
                for raw in pages:
                    if raw.end >= start.offset:
                        if (raw.end, raw.index, raw.digest) != (start.offset, start.pages, start.digest):
                            raise ResumeMismatch(f"{self.path}: its first {start.offset} bytes differ from the "
                                                 "ones imported before (the file was replaced)")
                        break
                else:
                    raise ResumeMismatch(f"{self.path}: ends before the resume point (byte {start.offset})")
            except ResumeMismatch:
                raise
            except SnapshotInputError as exc:
                raise ResumeMismatch(f"{self.path}: shorter than before the resume point: {exc}") from exc
        yield from pages

    def _scan(self, buf: bytearray, base: int) -> Iterator[RawPage]:
        """Pages from ``buf`` (starting at decompressed offset ``base``) and the rest of the stream.

        ``self._done`` counts the bytes at the front of ``buf`` already in the running hash.
        """
        self._done = 0
        eof = False
        closed = False                       # </mediawiki> seen after the last page
        while True:
            m = _PAGE_START.search(buf)
            while m is None and not eof:
                stop = self.stream.stop_pos
                if stop is not None and base + len(buf) - 16 >= stop:
                    return                   # the span's end: no page of it starts later
                closed = closed or b"</mediawiki>" in buf
                keep = max(len(buf) - 16, 0)
                base += self._drop(buf, keep)
                block = self._read()
                eof = not block
                buf += block
                m = _PAGE_START.search(buf)
            if m is None:
                break
            stop = self.stream.stop_pos
            if stop is not None and base + m.start() >= stop:
                return                       # the next shard's page
            closed = False
            begin = m.start()
            end, dropped = self._page_end(buf, begin)
            while end is None:
                if eof:
                    raise SnapshotInputError(
                        f"{self.path}: not valid XML: the dump ends inside page {self.pages + 1}{self._where()} "
                        f"({guess_title(bytes(buf[begin:begin + 8192]))!r}, byte {base + begin}): truncated?")
                block = self._read()
                eof = not block
                buf += block
                end, dropped = self._page_end(buf, begin)
            self.pages += 1
            size = end - begin + dropped
            if size > self.max_page_bytes:   # rejected by xml_page_item; its head names it
                data = bytes(buf[begin:begin + 4096]) + b"<!-- page of " + str(size).encode() + b" bytes -->"
            else:
                data = bytes(buf[begin:end])
            base += self._drop(buf, end) + dropped
            self.digest = self._hash.hexdigest()
            self._hash = hashlib.sha256(self.digest.encode("ascii"))
            yield RawPage(index=self.pages, end=base, digest=self.digest, data=data)
        tail = bytes(buf).strip()
        if self.origin and not self.pages and b"</mediawiki>".endswith(tail):
            return       # a last shard holding no page: the closing tag (or its end) follows the previous one's
        if not closed and b"</mediawiki>" not in buf:
            raise SnapshotInputError(f"{self.path}: not valid XML: the dump ends after page {self.pages}{self._where()} "
                                     f"(byte {base + len(buf)}) without </mediawiki>: truncated?")

    def _drop(self, buf: bytearray, n: int) -> int:
        """Hash and remove the first ``n`` bytes of ``buf``; returns ``n``."""
        if n > self._done:
            self._hash.update(memoryview(buf)[self._done:n])
        self._done = max(self._done - n, 0)
        del buf[:n]
        return n

    def _page_end(self, buf: bytearray, begin: int) -> tuple[int | None, int]:
        """End of the page starting at ``begin`` (after ``</page>``, or at the next ``<page>`` when it
        has none) or None when more bytes are needed, plus the bytes dropped from its middle: a page
        over ``max_page_bytes`` keeps only its first 4 KB in ``buf`` (the rest is hashed and dropped)."""
        close = buf.find(_PAGE_END, begin)
        nxt = _PAGE_START.search(buf, begin + 5)
        if nxt is not None and (close < 0 or nxt.start() < close):
            return nxt.start(), 0            # broken page: no </page> before the next <page>
        if close >= 0:
            return close + len(_PAGE_END), 0
        if len(buf) - begin <= self.max_page_bytes:
            return None, 0
        head = begin + 4096
        dropped = 0
        while True:
            cut = len(buf) - 16              # a marker may straddle blocks: keep the last bytes
            if cut > self._done:
                self._hash.update(memoryview(buf)[self._done:cut])
            dropped += cut - head
            del buf[head:cut]
            self._done = head
            block = self._read()
            buf += block
            close = buf.find(_PAGE_END, head)
            nxt = _PAGE_START.search(buf, head)
            if nxt is not None and (close < 0 or nxt.start() < close):
                end = nxt.start()
            elif close >= 0:
                end = close + len(_PAGE_END)
            elif not block:
                end = len(buf)
            else:
                continue
            return end, dropped


    def _header(self) -> bytearray:
        """The bytes up to the first <page> (and what follows in that block); the root must be <mediawiki>."""
        buf = bytearray()
        while True:
            block = self._read()
            if not block:
                if not buf.strip():
                    raise SnapshotInputError(f"{self.path}: empty file, not a MediaWiki XML dump")
                break
            buf += block
            if _PAGE_START.search(buf) or len(buf) > _MAX_HEADER_BYTES:
                break
        m = _PAGE_START.search(buf)
        parser = ET.XMLPullParser(events=("start",))
        try:
            parser.feed(bytes(buf[: m.start() if m else len(buf)]))
            root = next((el for _, el in parser.read_events()), None)
        except ET.ParseError as exc:
            raise SnapshotInputError(f"{self.path}: not valid XML: {exc}") from exc
        if root is None:
            raise SnapshotInputError(f"{self.path}: not a MediaWiki XML dump (no root element)")
        if _local(root.tag) != "mediawiki":
            raise SnapshotInputError(f"{self.path}: not a MediaWiki XML dump (root element <{_local(root.tag)}>)")
        return buf


# ---- shards of a dump --------------------------------------------------------------------------
#
# A dump is cut into shards that workers read on their own (``XmlDumpReader(span=...)``): a plain
# file at fixed byte offsets; a bz2 file at bz2 stream starts, which Wikimedia's multistream dumps
# list in their companion index (``*-multistream-index.txt.bz2``: ``offset:page_id:title`` a line,
# one stream per 100 pages) and which are otherwise found by their magic bytes. Shards are grouped
# from the file's start, so the shards of a file's first part are the same whatever follows it.

_BZ2_STREAM_MAGIC = re.compile(rb"BZh[1-9]\x31\x41\x59\x26\x53\x59")   # stream header + first block header
_SCAN_BLOCK = 8 << 20


def multistream_index(path: Path) -> Path | None:
    """The companion index of a multistream dump (``x-multistream.xml.bz2`` ->
    ``x-multistream-index.txt.bz2``, or ``x.xml.bz2`` -> ``x-index.txt.bz2``), when it is there."""
    name = path.name
    if not name.lower().endswith(".xml.bz2"):
        return None
    stem = name[: -len(".xml.bz2")]
    for candidate in (stem + "-index.txt.bz2", stem + "-index.txt"):
        p = path.with_name(candidate)
        if p.is_file():
            return p
    return None


def index_offsets(index: Path) -> Iterator[int]:
    """The distinct stream offsets of a multistream index, in increasing order (streamed)."""
    opener = bz2.open if index.name.lower().endswith(".bz2") else open
    last = -1
    try:
        with opener(index, "rt", encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                head = line.split(":", 1)[0]
                if not head.strip():
                    continue
                try:
                    offset = int(head)
                except ValueError:
                    raise SnapshotInputError(f"{index}: line {n} is not offset:page_id:title") from None
                if offset < last:
                    raise SnapshotInputError(f"{index}: offsets out of order at line {n}")
                if offset != last:
                    last = offset
                    yield offset
    except (EOFError, OSError) as exc:
        raise SnapshotInputError(f"{index}: broken multistream index: {exc}") from exc


def scan_bz2_streams(path: Path) -> Iterator[int]:
    """Offsets where a bz2 stream (with at least one block) seems to start, by its magic bytes.
    A reader started at such an offset checks it: a stream that is not one fails to decompress."""
    overlap = 9
    with open(path, "rb") as f:
        pos = 0
        tail = b""
        while True:
            block = f.read(_SCAN_BLOCK)
            if not block:
                return
            data = tail + block
            base = pos - len(tail)
            for m in _BZ2_STREAM_MAGIC.finditer(data):   # the 9 bytes kept hold no whole magic: none twice
                yield base + m.start()
            pos += len(block)
            tail = data[-overlap:]


def dump_spans(path: Path, shard_bytes: int) -> Iterator[tuple[int, int | None]]:
    """The shards of a dump as (origin, stop) compressed offsets, in file order (stop None: to the end).

    A plain file: every ``shard_bytes``. A bz2 file: runs of whole streams, a shard ending at the
    first stream that starts ``shard_bytes // 4`` bytes (bz2 keeps about a quarter of a dump's XML)
    or more after its origin; streams are those of the multistream index when there is one."""
    with open(path, "rb") as f:
        is_bz2 = f.read(3) == b"BZh"
    size = path.stat().st_size
    if not is_bz2:
        step = max(1, shard_bytes)
        for origin in range(0, max(size, 1), step):
            yield origin, (origin + step if origin + step < size else None)
        return
    step = max(1, shard_bytes // 4)
    index = multistream_index(path)
    starts = index_offsets(index) if index is not None else scan_bz2_streams(path)
    origin = 0
    for offset in starts:
        if offset >= size:
            raise SnapshotInputError(f"{index or path}: a stream offset ({offset}) lies past the end of {path.name}")
        if offset - origin >= step:
            yield origin, offset
            origin = offset
    yield origin, None


def guess_title(data: bytes) -> str:
    m = _TITLE_RE.search(data[:8192])
    return canonical_title(html.unescape(m.group(1).decode("utf-8", errors="replace"))) if m else ""


def page_namespace(data: bytes) -> int | None:
    """The ``<ns>`` of a page chunk when it stands before the first revision (cheap: no XML parse)."""
    head = data[:4096]
    m = _NS_RE.search(head)
    if m is None:
        return None
    rev = head.find(b"<revision")
    return int(m.group(1)) if rev < 0 or m.start() < rev else None


def xml_page_item(data: bytes, source: str) -> Item | None:
    """One ``<page>`` chunk as a Page, Redirect or Skipped (None: not an article namespace)."""
    if not data.rstrip().endswith(_PAGE_END):
        size = re.search(rb"<!-- page of (\d+) bytes -->$", data)
        reason = (f"page of {int(size.group(1))} bytes, over the size limit (not a pages-articles dump?)" if size
                  else "broken page XML: no </page> before the next <page>")
        return Skipped(title=guess_title(data), reason=reason)
    try:
        el = ET.fromstring(data)
    except ET.ParseError as exc:
        return Skipped(title=guess_title(data), reason=f"broken page XML: {exc}")
    return _page_element(el, source)


def iter_xml_dump(path: Path, source: str, max_page_bytes: int = MAX_PAGE_BYTES) -> Iterator[Item]:
    """Pages (namespace 0 only), redirects and skipped pages of a dump, in dump order."""
    for raw in XmlDumpReader(path, max_page_bytes=max_page_bytes):
        ns = page_namespace(raw.data)
        if ns not in (None, 0):
            continue
        item = xml_page_item(raw.data, source)
        if item is not None:
            yield item


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

class ZimReader:
    """An open ZIM archive whose entries are read one by one by index (``item(i)``), so a range of
    entries can be imported in another process or resumed from an index."""

    def __init__(self, path: Path):
        from libzim.reader import Archive

        self.path = path
        try:
            self.archive = Archive(str(path))
            self.count = self.archive.all_entry_count
            self.main_path = self.archive.main_entry.get_item().path if self.archive.has_main_entry else None
        except Exception as exc:  # libzim raises RuntimeError for a file that is not a ZIM
            raise SnapshotInputError(f"{path}: not a readable ZIM archive: {exc}") from exc
        self.new_scheme = self.archive.has_new_namespace_scheme
        try:
            self.default_date = self.archive.get_metadata("Date").decode("utf-8").strip() or None
        except (RuntimeError, KeyError, UnicodeDecodeError):  # an archive without a Date entry: pages carry none
            self.default_date = None

    def item(self, i: int, source: str) -> Item | None:
        """Entry ``i`` as a Page, Redirect or Skipped; None for entries that are not articles."""
        try:
            entry = self.archive._get_entry_by_id(i)
            entry_path = entry.path
        except Exception as exc:
            raise SnapshotInputError(f"{self.path}: broken entry {i}: {exc}") from exc
        if not (self.new_scheme or entry_path.startswith("A/")):
            return None
        title = _zim_title(entry, self.new_scheme)
        try:
            if entry.is_redirect:
                target_entry = entry.get_redirect_entry()
                while target_entry.is_redirect:
                    target_entry = target_entry.get_redirect_entry()
                item = target_entry.get_item()
                if item.path == self.main_path or not item.mimetype.startswith("text/html"):
                    return None
                target = _zim_title(target_entry, self.new_scheme)
                return Redirect(alias=title, target=target) if title and target and title != target else None
            item = entry.get_item()
            if not item.mimetype.startswith("text/html") or entry_path == self.main_path:
                return None
            content = bytes(item.content).decode("utf-8", errors="replace")
        except Exception as exc:  # noqa: BLE001 - one unreadable entry must not stop a ZIM import
            return Skipped(title=title, reason=f"unreadable entry: {exc}")
        try:
            return page_from_html(title, content, source=source,
                                  revision_ts=revision_date(content) or self.default_date)
        except Exception as exc:  # noqa: BLE001 - nor one page the HTML parser chokes on
            return Skipped(title=title, reason=f"{type(exc).__name__}: {exc}")


def iter_zim(path: Path, source: str) -> Iterator[Item]:
    """Articles (HTML entries) and redirects of a ZIM archive, old ("A/") or new namespace scheme."""
    reader = ZimReader(path)
    for i in range(reader.count):
        item = reader.item(i, source)
        if item is not None:
            yield item


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
