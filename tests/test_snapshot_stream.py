"""Streaming, parallel and resumable snapshot builds on generated dumps (real parsers, no mocks).

A generated dump: many small articles linking to each other, redirects, a talk page, spread
over several tasks so that ordering across workers and resume points inside a dump are used.
"""
from __future__ import annotations

import bz2
import itertools
import json
import multiprocessing
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pipeline.cache import canonical_json
from pipeline.snapshot.build import STAGING_DB, build_snapshot
from pipeline.snapshot.importers import (
    SnapshotInputError,
    XmlDumpReader,
    XmlPosition,
    dump_spans,
    index_offsets,
    iter_xml_dump,
    multistream_index,
    page_namespace,
)
from pipeline.snapshot.page import Page
from pipeline.snapshot.store import SnapshotStore

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "snapshot"
SHARED = ROOT.parent / "shared" / "data" / "wikipedia"
FILES = ("pages.sqlite", "manifest.json", "build_report.json")

HEAD = ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">\n'
        "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n  </siteinfo>\n")


def _page(title: str, text: str, ns: int = 0, redirect: str | None = None) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    red = f'    <redirect title="{redirect}" />\n' if redirect else ""
    return (f"  <page>\n    <title>{title}</title>\n    <ns>{ns}</ns>\n    <id>1</id>\n{red}"
            f"    <revision>\n      <timestamp>2024-01-0{1 + len(title) % 9}T00:00:00Z</timestamp>\n"
            f'      <text xml:space="preserve">{text}</text>\n    </revision>\n  </page>\n')


def _article(i: int, n: int) -> str:
    links = " ".join(f"[[Town {j}]]" for j in ((i + 1) % n, (i * 7 + 3) % n, (i * 13 + 5) % n))
    return (f"{{{{Infobox settlement\n| name = Town {i}\n| population_total = {1000 + 37 * i:,}\n"
            f"| area_total_km2 = {1 + i % 50}.5\n| established_date = {{{{start date|{1800 + i % 200}|5|{1 + i % 28}}}}}\n}}}}\n"
            f"'''Town {i}''' is a town in Examplia with about {1000 + 37 * i} people.<ref>Census {i}</ref> "
            f"It is near {links} and was founded by a person.\n\n== History ==\nSettled in {1800 + i % 200}. "
            f"See also [[Old Town {(i + 2) % n}]].\n\n[[Category:Towns in Examplia]]\n")


def _pages(n: int) -> list[str]:
    pages = []
    for i in range(n):
        pages.append(_page(f"Town {i}", _article(i, n)))
        if i % 10 == 0:
            pages.append(_page(f"Old Town {i}", f"#REDIRECT [[Town {i}]]", redirect=f"Town {i}"))
        if i % 50 == 0:
            pages.append(_page(f"Talk:Town {i}", "A talk page, namespace 1.", ns=1))
    return pages


N = 700
PAGES = _pages(N)
DUMP = HEAD + "".join(PAGES) + "</mediawiki>\n"


def _multistream(text: str, per_stream: int = 100) -> bytes:
    """bz2 in one stream per ``per_stream`` pages, as Wikimedia's multistream dumps."""
    data = text.encode()
    starts = [m.start() for m in re.finditer(rb"  <page>", data)]
    cuts = [0, *starts[1::per_stream], len(data)]
    return b"".join(bz2.compress(data[a:b]) for a, b in itertools.pairwise(cuts))


def _same(a: Path, b: Path) -> None:
    for name in FILES:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


@pytest.fixture(scope="module")
def one_go(tmp_path_factory):
    """The generated dump (plain XML) built in one go, serially."""
    root = tmp_path_factory.mktemp("one_go")
    (root / "in").mkdir()
    (root / "in" / "towns.xml").write_text(DUMP, encoding="utf-8")
    out = root / "snap"
    build_snapshot([root / "in" / "towns.xml"], out, workers=1)
    return out


def test_the_generated_dump_imports_as_expected(one_go):
    manifest = json.loads((one_go / "manifest.json").read_text())
    assert manifest["counts"]["pages"] == N
    assert manifest["counts"]["redirects"] == N // 10
    assert manifest["counts"]["infobox_pages"] == N
    assert manifest["sources"][0]["skipped"] == 0
    dangling = sum(1 for i in range(N) if (i + 2) % N % 10)              # "Old Town k" without a redirect
    assert manifest["counts"]["links_in_snapshot"] == manifest["counts"]["links"] - dangling
    # the final pass edits page dicts: what it stores must be what Page would serialise
    with sqlite3.connect(one_go / "pages.sqlite") as db:
        for (data,) in db.execute("SELECT json FROM pages"):
            assert data == canonical_json(Page.from_dict(json.loads(data)).to_dict())


def test_parallel_and_serial_builds_are_byte_identical(tmp_path):
    dump = tmp_path / "towns.xml.bz2"
    dump.write_bytes(_multistream(DUMP))
    inputs = [dump, FIXTURES / "wikitext"]
    if SHARED.is_dir():
        inputs.append(SHARED / "wikipedia_en_ray_charles.zim")   # 283 entries: two ZIM tasks
    build_snapshot(inputs, tmp_path / "serial", workers=1)
    build_snapshot(inputs, tmp_path / "parallel", workers=2)
    _same(tmp_path / "serial", tmp_path / "parallel")


def test_a_truncated_dump_keeps_what_was_parsed_and_resumes_to_the_same_snapshot(one_go, tmp_path):
    dump = tmp_path / "in" / "towns.xml"
    dump.parent.mkdir()
    cut = DUMP.index("<title>Town 450</title>") + 40                  # inside page "Town 450"
    dump.write_text(DUMP[:cut], encoding="utf-8")
    out = tmp_path / "snap"
    logs: list[str] = []
    with pytest.raises(SnapshotInputError, match=r"towns\.xml: not valid XML: the dump ends inside page .*"
                                                 r"'Town 450'.*truncated.*450 pages imported before the error"):
        build_snapshot([dump], out, log=logs.append, workers=2, resume=True)
    assert not out.exists()
    staging = tmp_path / ".snap.staging"
    with sqlite3.connect(staging / STAGING_DB) as db:
        titles = {t for (t,) in db.execute("SELECT title FROM staged")}
    assert titles == {f"Town {i}" for i in range(450)}                # everything before the break, committed

    dump.write_text(DUMP, encoding="utf-8")                           # the download finished
    logs.clear()
    build_snapshot([dump], out, log=logs.append, workers=2, resume=True)
    assert any("resuming the import" in m and "(450 pages so far)" in m for m in logs), logs
    assert not any("starting over" in m for m in logs), logs
    assert not staging.exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["pages"] == N
    _same(one_go, out)                                                # as if built in one go


def test_a_broken_bz2_stream_is_resumed_by_seeking_then_repaired(one_go, tmp_path):
    good = _multistream(DUMP)
    streams = []
    rest = good
    while rest:
        d = bz2.BZ2Decompressor()
        d.decompress(rest)
        streams.append(rest[: len(rest) - len(d.unused_data)])
        rest = d.unused_data
    assert len(streams) > 8
    broken = bytearray(streams[6])
    broken[len(broken) // 2: len(broken) // 2 + 64] = b"\x00" * 64
    dump = tmp_path / "in" / "towns.xml"           # bz2 whatever the name: the same page sources as one_go
    dump.parent.mkdir()
    dump.write_bytes(b"".join(streams[:6]) + bytes(broken) + b"".join(streams[7:]))
    out = tmp_path / "snap"
    expected = sum(1 for p in PAGES[:501] if "<ns>0</ns>" in p and "<redirect" not in p)  # streams 0-5
    for attempt in range(2):   # the second run resumes (seeking to the bz2 stream) and meets the same break
        logs: list[str] = []
        with pytest.raises(SnapshotInputError, match="towns.xml: broken compressed stream"):
            build_snapshot([dump], out, log=logs.append, workers=2, resume=True)
        assert any("resuming" in m for m in logs) == (attempt == 1), logs
        with sqlite3.connect(tmp_path / ".snap.staging" / STAGING_DB) as db:
            staged = db.execute("SELECT count(*) FROM staged").fetchone()[0]
        assert staged == expected           # the articles of the first six streams, never staged twice

    dump.write_bytes(good)
    build_snapshot([dump], out, workers=2, resume=True)
    assert (out / "pages.sqlite").read_bytes() == (one_go / "pages.sqlite").read_bytes()
    manifest, reference = (json.loads((d / "manifest.json").read_text()) for d in (out, one_go))
    assert manifest["hash"] == reference["hash"] and manifest["sources"][0]["sha256"] != reference["sources"][0]["sha256"]
    assert (out / "build_report.json").read_bytes() == (one_go / "build_report.json").read_bytes()


def test_a_broken_page_is_rejected_with_its_reason(tmp_path):
    bad_entity = _page("Town 5", _article(5, 8)).replace("Examplia with", "Examplia &bogus; with", 1)
    unclosed = _page("Town 6", _article(6, 8)).replace("  </page>\n", "")
    mismatched = _page("Town 7", _article(7, 8)).replace("</revision>", "</revisionx>")
    good = [_page(f"Town {i}", _article(i, 8)) for i in range(5)]
    dump = tmp_path / "dump.xml"
    dump.write_text(HEAD + "".join(good[:3]) + bad_entity + unclosed + good[3] + mismatched + good[4]
                    + "</mediawiki>\n", encoding="utf-8")
    out = tmp_path / "snap"
    build_snapshot([dump], out)
    report = json.loads((out / "build_report.json").read_text())
    reasons = {s["title"]: s["reason"] for s in report["skipped"]}
    assert set(reasons) == {"Town 5", "Town 6", "Town 7"}
    assert reasons["Town 5"].startswith("broken page XML: undefined entity")
    assert reasons["Town 6"] == "broken page XML: no </page> before the next <page>"
    assert reasons["Town 7"].startswith("broken page XML: mismatched tag")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["pages"] == 5 and manifest["sources"][0]["skipped"] == 3


def test_a_page_over_the_size_limit_is_rejected_in_bounded_memory(tmp_path):
    huge = _page("Town 1", "x" * 300_000 + _article(1, 3))
    dump = tmp_path / "dump.xml"
    dump.write_text(HEAD + _page("Town 0", _article(0, 3)) + huge + _page("Town 2", _article(2, 3))
                    + "</mediawiki>\n", encoding="utf-8")
    raws = list(XmlDumpReader(dump, max_page_bytes=100_000))
    assert [len(r.data) < 5000 for r in raws] == [True, True, True]
    assert raws[-1].end == dump.stat().st_size - len("\n</mediawiki>\n")
    # the digests are the same as when the page is read whole
    assert [r.digest for r in raws] == [r.digest for r in XmlDumpReader(dump)]
    items = list(iter_xml_dump(dump, "d", max_page_bytes=100_000))
    assert [(type(i).__name__, i.title) for i in items] == [("Page", "Town 0"), ("Skipped", "Town 1"),
                                                            ("Page", "Town 2")]
    assert "over the" in items[1].reason


def test_reading_from_a_resume_point_continues_the_digest_chain(tmp_path):
    plain = tmp_path / "d.xml"
    plain.write_text(DUMP, encoding="utf-8")
    multi = tmp_path / "d.xml.bz2"
    multi.write_bytes(_multistream(DUMP))
    whole = list(XmlDumpReader(plain))
    assert [r.digest for r in whole] == [r.digest for r in XmlDumpReader(multi)]
    assert len(whole) == len(PAGES)
    reader = XmlDumpReader(multi)
    for raw in reader:
        if raw.index == 333:
            point = XmlPosition(offset=raw.end, pages=raw.index, digest=raw.digest, stream=reader.locate(raw.end))
            break
    assert point.stream[0] > 0                            # a later bz2 stream: no decoding from the start
    for path, start in ((multi, point), (plain, XmlPosition(point.offset, point.pages, point.digest,
                                                             (point.offset, point.offset)))):
        for verify in (False, True):
            rest = list(XmlDumpReader(path, start=start, verify=verify))
            assert [(r.index, r.end, r.digest, r.data) for r in rest] == \
                [(r.index, r.end, r.digest, r.data) for r in whole[333:]]


def test_namespace_prefilter_and_item_equivalence():
    talk = _page("Talk:Town 1", "x", ns=1).encode()
    assert page_namespace(talk) == 1 and page_namespace(_page("Town 1", "x").encode()) == 0
    assert page_namespace(b"<page><title>No ns</title><revision><ns>4</ns></revision></page>") is None
    items = list(iter_xml_dump(FIXTURES / "tiny_dump.xml", "tiny"))
    assert [type(i).__name__ for i in items].count("Page") == 2
    assert all(not isinstance(i, Page) or i.source == "tiny" for i in items)


def test_a_failed_resumable_build_with_nothing_imported_leaves_nothing(tmp_path):
    with pytest.raises(SnapshotInputError, match="bad_dump.xml"):
        build_snapshot([FIXTURES / "bad_dump.xml"], tmp_path / "snap", resume=True)
    assert sorted(os.listdir(tmp_path)) == []


SMALL = [FIXTURES / "tiny_dump.xml", FIXTURES / "wikitext", FIXTURES / "summaries.json"]


def test_an_interrupted_build_resumes_after_the_sources_it_finished(tmp_path):
    build_snapshot(SMALL, tmp_path / "one_go")

    def interrupt(message: str) -> None:
        if message.startswith("importing wikitext"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_snapshot(SMALL, tmp_path / "snap", log=interrupt, resume=True)
    assert sorted(os.listdir(tmp_path)) == [".snap.staging", "one_go"]
    logs: list[str] = []
    build_snapshot(SMALL, tmp_path / "snap", log=logs.append, resume=True)
    assert "xml tiny_dump.xml: imported before (2 pages)" in logs
    assert "importing wikitext wikitext/" in logs
    _same(tmp_path / "one_go", tmp_path / "snap")
    assert sorted(os.listdir(tmp_path)) == ["one_go", "snap"]


def test_an_input_changed_since_it_was_imported_starts_the_import_over(tmp_path):
    first, second = tmp_path / "in" / "a.xml", tmp_path / "in" / "b.xml"
    first.parent.mkdir()
    first.write_text(HEAD + "".join(_pages(6)) + "</mediawiki>\n", encoding="utf-8")
    second.write_text(HEAD + _page("Village", "A village near [[Town 1]]."), encoding="utf-8")
    with pytest.raises(SnapshotInputError, match="b.xml.*without </mediawiki>.*7 pages imported before the error"):
        build_snapshot([first, second], tmp_path / "snap", resume=True)
    # a.xml is replaced (another page set) and b.xml completed: the staged a.xml must not be reused
    first.write_text(HEAD + "".join(_pages(9)) + "</mediawiki>\n", encoding="utf-8")
    second.write_text(second.read_text(encoding="utf-8") + "</mediawiki>\n", encoding="utf-8")
    logs: list[str] = []
    build_snapshot([first, second], tmp_path / "snap", log=logs.append, resume=True)
    assert any("a.xml changed since it was imported" in m and "starting over" in m for m in logs), logs
    build_snapshot([first, second], tmp_path / "one_go")
    _same(tmp_path / "one_go", tmp_path / "snap")


# ---- shards: a dump cut for workers that read their own part ------------------------------------

def _streams(data: bytes, cuts: list[int]) -> list[bytes]:
    """bz2 streams of ``data`` cut at ``cuts`` (anywhere: inside pages too, as pbzip2 does)."""
    edges = [0, *sorted({c for c in cuts if 0 < c < len(data)}), len(data)]
    return [bz2.compress(data[a:b]) for a, b in itertools.pairwise(edges)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, len(DUMP.encode()) - 1), max_size=12), st.integers(200, 60_000), st.booleans())
@example([len(DUMP.encode()) - 5], 200, True)       # the last stream holds only the end of </mediawiki>
@example([len(DUMP.encode()) - 1], 200, True)       # ... or only its newline
def test_the_shards_of_a_dump_give_its_pages_once_in_order(tmp_path_factory, cuts, shard_bytes, compressed):
    folder = tmp_path_factory.mktemp("shards")
    data = DUMP.encode()
    dump = folder / ("d.xml.bz2" if compressed else "d.xml")
    dump.write_bytes(b"".join(_streams(data, cuts)) if compressed else data)
    whole = [r.data for r in XmlDumpReader(dump)]
    spans = list(dump_spans(dump, shard_bytes))
    assert spans[0][0] == 0 and spans[-1][1] is None
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert [d for span in spans for d in (r.data for r in XmlDumpReader(dump, span=span))] == whole


def _index(streams: list[bytes], data: bytes) -> str:
    """A multistream index (offset:page_id:title a page) of ``streams`` cut at page starts."""
    lines, offset, pos = [], 0, 0
    for s in streams:
        size = len(bz2.decompress(s))
        for m in re.finditer(rb"<title>([^<]*)</title>", data[pos:pos + size]):
            lines.append(f"{offset}:{len(lines) + 1}:{m.group(1).decode()}")
        offset, pos = offset + len(s), pos + size
    return "\n".join(lines) + "\n"


def test_a_multistream_dump_is_sharded_by_its_index(tmp_path):
    data = DUMP.encode()
    starts = [m.start() for m in re.finditer(rb"  <page>", data)]
    streams = _streams(data, starts[1::100])
    dump = tmp_path / "towns-multistream.xml.bz2"
    dump.write_bytes(b"".join(streams))
    index = tmp_path / "towns-multistream-index.txt.bz2"
    index.write_bytes(bz2.compress(_index(streams, data).encode()))
    offsets = list(itertools.accumulate(len(s) for s in streams))[:-1]
    assert multistream_index(dump) == index and list(index_offsets(index)) == [0, *offsets]
    # shards start where the index says streams start: an index listing every other stream is obeyed
    assert [a for a, _ in dump_spans(dump, 1)] == [0, *offsets]
    index.write_bytes(bz2.compress("".join(line + "\n" for line in _index(streams, data).splitlines()
                                           if int(line.split(":")[0]) in offsets[1::2]).encode()))
    assert [a for a, _ in dump_spans(dump, 1)] == [0, *offsets[1::2]]
    build_snapshot([dump], tmp_path / "snap", workers=2, shard_bytes=1)     # a shard a pair of streams
    build_snapshot([dump], tmp_path / "one_go", workers=1, shard_bytes=1 << 30)   # one shard
    _same(tmp_path / "one_go", tmp_path / "snap")
    # an index offset that is no stream start is caught by the worker that reads there
    bad = offsets[2] + 7
    index.write_bytes(bz2.compress(f"{offsets[1]}:1:Town 1\n{bad}:2:Town 2\n".encode()))
    with pytest.raises(SnapshotInputError, match=f"no bz2 stream starts at byte {bad}"):
        build_snapshot([dump], tmp_path / "bad", workers=1, shard_bytes=1)


# slow: 13 s of a Dask cluster and the real sample dump; test_parallel_and_serial_builds_are_byte_identical keeps
# byte-identity of a parallel build in the default run
@pytest.mark.slow
def test_a_dask_build_gives_the_bytes_of_one_process(tmp_path):
    from distributed import LocalCluster

    dump = tmp_path / "towns.xml.bz2"
    dump.write_bytes(_multistream(DUMP))
    inputs = [dump, FIXTURES / "wikitext"]
    if SHARED.is_dir():     # the real sample: a one-stream bz2 dump (read here, parsed by the workers) and a ZIM
        inputs += [SHARED / "enwiki-sample-pages-articles.xml.bz2", SHARED / "wikipedia_en_ray_charles.zim"]
    one = build_snapshot(inputs, tmp_path / "one", workers=1)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        events: list[dict] = []
        dask = build_snapshot(inputs, tmp_path / "dask", dask_address=cluster.scheduler_address,
                              shard_bytes=40_000, progress=events.append)
    assert dask.manifest["hash"] == one.manifest["hash"]
    _same(tmp_path / "one", tmp_path / "dask")
    shards = [e for e in events if e["phase"] == "import" and e["source"] == "towns.xml.bz2"]
    assert len(shards) > 2 and shards[-1]["done"] == shards[-1]["total"] == dump.stat().st_size
    assert [e["done"] for e in events if e["phase"] == "finish"][-1] == one.manifest["counts"]["pages"]


def _committed_shards(staging: Path) -> int:
    try:
        with closing(sqlite3.connect(f"file:{staging / STAGING_DB}?mode=ro", uri=True, timeout=0.1)) as db:
            row = db.execute("SELECT state FROM sources WHERE idx = 0").fetchone()
    except sqlite3.Error:
        return 0
    return json.loads(row[0])["done_through"]["next"] if row and "done_through" in json.loads(row[0]) else 0


def test_a_build_killed_with_sigkill_resumes_to_the_same_bytes(one_go, tmp_path):
    dump = tmp_path / "towns.xml"
    dump.write_text(DUMP, encoding="utf-8")
    out, staging = tmp_path / "snap", tmp_path / ".snap.staging"
    cmd = [sys.executable, "-m", "pipeline.snapshot", "build", "--from", str(dump), "--out", str(out),
           "--workers", "2", "--shard-mb", "0.03"]
    proc = subprocess.Popen([*cmd, "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while _committed_shards(staging) < 100_000 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)            # the build and its workers, mid-import
    proc.wait()
    kept = _committed_shards(staging)
    assert 100_000 <= kept < len(DUMP) and not out.exists()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "resuming the import" in done.stdout
    assert "pages/s" in done.stdout and "MB/s of XML" in done.stdout      # the progress a person reads
    _same(one_go, out)
    assert sorted(os.listdir(tmp_path)) == ["snap", "towns.xml"]     # no staging, no scratch of the killed build


def test_a_large_world_is_imported_with_its_search_index(tmp_path, monkeypatch):
    """A world searched by tantivy (above ``IN_MEMORY_MAX_ROWS`` pages) gets its index with the import,
    so its first search builds nothing; a world searched in memory gets no index folder."""
    from pipeline.snapshot import store as store_module
    from pipeline.snapshot.search_tantivy import TantivySearch, index_folder
    (tmp_path / "towns.xml").write_text(DUMP, encoding="utf-8")
    build_snapshot([tmp_path / "towns.xml"], tmp_path / "small", workers=1)
    assert not any(p.is_dir() for p in (tmp_path / "small").iterdir())

    monkeypatch.setattr(store_module, "IN_MEMORY_MAX_ROWS", 0)
    monkeypatch.setattr(store_module, "LARGE_WORLD_ENGINE", "tantivy")
    monkeypatch.setattr(store_module, "_ENGINES", {})
    logs: list[str] = []
    build_snapshot([tmp_path / "towns.xml"], tmp_path / "large", log=logs.append, workers=1)
    store = SnapshotStore.open(tmp_path / "large", index_dir=tmp_path / "derived")   # as generation opens it
    assert TantivySearch.current(tmp_path / "large" / index_folder(store.hash))
    assert any("search index built" in line for line in logs)
    _same(tmp_path / "small", tmp_path / "large")          # the snapshot's own files are the same bytes
    index = tmp_path / "large" / index_folder(store.hash)
    made = sorted((p.name, p.stat().st_mtime_ns) for p in index.iterdir())
    assert store.search("Old Town", 3)
    assert sorted((p.name, p.stat().st_mtime_ns) for p in index.iterdir()) == made   # opened, not built again
    assert not (tmp_path / "derived").exists()            # nor built a second time in the derived folder


def test_the_workers_are_gone_before_the_search_index_is_built(tmp_path, monkeypatch):
    """A large world's index is built in the main process after the final pass: the workers, which hold the
    final pass's caches, are shut down first, so their memory is not counted at the import's peak."""
    from pipeline.snapshot import build as build_module
    from pipeline.snapshot import store as store_module
    (tmp_path / "towns.xml").write_text(DUMP, encoding="utf-8")
    monkeypatch.setattr(store_module, "IN_MEMORY_MAX_ROWS", 0)
    monkeypatch.setattr(store_module, "LARGE_WORLD_ENGINE", "tantivy")
    monkeypatch.setattr(store_module, "_ENGINES", {})
    alive: list[int] = []
    real = build_module._build_search_index

    def observed(folder, log):
        alive.append(len(multiprocessing.active_children()))
        return real(folder, log)

    monkeypatch.setattr(build_module, "_build_search_index", observed)
    build_snapshot([tmp_path / "towns.xml"], tmp_path / "large", workers=2)
    assert alive == [0]
    assert any(p.name.startswith("search-tantivy") for p in (tmp_path / "large").iterdir())
