"""The synthetic dump maker of the world-scale benchmark (benchmarks/synthetic_wiki.py): the same
pages and seed give the same bytes, its multistream index points at the starts of bz2 streams of
whole pages, its names never collide, and the project's importer reads it with the counts the dump
holds (pages, redirects, links whose shown text differs from the title they go to)."""
from __future__ import annotations

import bz2
import html
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import synthetic_wiki as sw

PAGES = 300


@pytest.fixture(scope="module")
def dump(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("synth") / "synth-pages-articles-multistream.xml.bz2"
    return out, sw.write_dump(out, PAGES, seed=7)


def test_same_pages_and_seed_give_the_same_bytes(dump, tmp_path):
    out, _ = dump
    again = tmp_path / "again-multistream.xml.bz2"
    sw.main(["--pages", str(PAGES), "--seed", "7", "--out", str(again), "--jobs", "2", "--quiet"])
    assert again.read_bytes() == out.read_bytes()
    assert sw.index_path(again).read_bytes() == sw.index_path(out).read_bytes()
    other = tmp_path / "other-multistream.xml.bz2"
    sw.write_dump(other, PAGES, seed=8)
    assert other.read_bytes() != out.read_bytes()


def test_plain_xml_is_the_multistream_dump_decompressed(dump, tmp_path):
    out, _ = dump
    plain = tmp_path / "synth.xml"
    sw.write_dump(plain, PAGES, seed=7, fmt="xml")
    assert bz2.decompress(out.read_bytes()) == plain.read_bytes()


def test_index_offsets_are_stream_starts_of_whole_pages(dump):
    out, stats = dump
    data = out.read_bytes()
    lines = bz2.decompress(sw.index_path(out).read_bytes()).decode().splitlines()
    assert len(lines) == stats["content_pages"] + stats["redirects"]
    by_offset: dict[int, list[tuple[str, str]]] = {}
    for line in lines:
        offset, page_id, title = line.split(":", 2)      # titles may hold colons
        by_offset.setdefault(int(offset), []).append((page_id, title))
    assert sorted(by_offset) == list(by_offset)           # offsets grow through the file
    assert all(len(v) == sw.PAGES_PER_STREAM for v in list(by_offset.values())[:-1])
    header = bz2.BZ2Decompressor().decompress(data)      # the first stream: the header alone
    assert header.startswith(b"<mediawiki") and header.rstrip().endswith(b"</siteinfo>")
    for offset, entries in by_offset.items():
        assert data[offset:offset + 3] == b"BZh"
        d = bz2.BZ2Decompressor()
        xml = d.decompress(data[offset:]).decode()
        assert d.eof                                     # an independent stream ends by itself
        assert xml.startswith("  <page>") and xml.endswith("</page>\n")
        found = re.findall(r"<title>(.*?)</title>\n    <ns>0</ns>\n    <id>(\d+)</id>", xml)
        assert [(i, t) for t, i in found] == entries     # the index names this stream's pages, in order
    last = max(by_offset)
    tail = bz2.BZ2Decompressor()
    tail.decompress(data[last:])
    assert bz2.decompress(tail.unused_data) == b"</mediawiki>\n"


def test_names_are_unique_and_parts_unambiguous():
    names = [sw.base_name(j) for j in range(200_000)]
    assert len(set(names)) == len(names)
    countries = {sw.country_name(c) for c in range(200)}
    assert len(countries) == 200 and not countries & set(names)
    assert sw._splits("anton", {"ton"})                   # the check that guards the alphabets bites
    assert not sw._splits("ton", {"ton"})


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**8), st.integers(0, 10**8))
def test_distinct_keys_have_distinct_names(a, b):
    assert (sw.base_name(a) == sw.base_name(b)) == (a == b)


def test_titles_are_unique_across_articles_and_redirects(dump):
    out, _ = dump
    lines = bz2.decompress(sw.index_path(out).read_bytes()).decode().splitlines()
    titles = [line.split(":", 2)[2] for line in lines]
    assert len(set(titles)) == len(titles)


def _expected(xml: str) -> tuple[set[str], dict[str, str], set[tuple[str, str]]]:
    """Articles, redirects and the (page, target) pairs linked with a text other than the target's
    title, read from the dump itself with regular expressions."""
    articles, redirects, texts = set(), {}, {}
    for page in re.findall(r"<page>(.*?)</page>", xml, re.DOTALL):
        title = html.unescape(re.search(r"<title>(.*?)</title>", page).group(1))
        red = re.search(r'<redirect title="(.*?)" />', page)
        if red:
            redirects[title] = html.unescape(red.group(1))
        else:
            articles.add(title)
            texts[title] = html.unescape(re.search(r"<text[^>]*>(.*?)</text>", page, re.DOTALL).group(1))
    differing = set()
    for title, text in texts.items():
        text = re.sub(r"<ref[^>]*>.*?</ref>", "", text)
        for target, anchor in re.findall(r"\[\[([^\[\]|#:]+)(?:\|([^\[\]]*))?\]\]", text):
            resolved = redirects.get(target, target)
            if resolved in articles and resolved != title and (anchor or target) != resolved:
                differing.add((title, resolved))
    return articles, redirects, differing


def test_the_importer_reads_the_dump_with_its_counts(dump, tmp_path):
    out, stats = dump
    snap = tmp_path / "snap"
    run = subprocess.run([sys.executable, "-m", "pipeline.snapshot", "build", "--from", str(out), "--out", str(snap),
                          "--workers", "1", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    manifest = json.loads((snap / "manifest.json").read_text())
    counts = manifest["counts"]
    articles, redirects, differing = _expected(bz2.decompress(out.read_bytes()).decode())
    assert counts["pages"] == PAGES == len(articles)
    assert counts["redirects"] == stats["redirects"] == len(redirects)
    assert counts["infobox_pages"] > PAGES // 3 and counts["pages_with_coords"] > PAGES // 5
    assert counts["links_in_snapshot"] > counts["links"] // 2      # most links resolve; some are red
    assert manifest["report"]["merges"] == 0 and manifest["report"]["skipped"] == 0
    assert manifest["report"]["other_language"] == 0                # py3langid reads the prose as English
    con = sqlite3.connect(snap / "pages.sqlite")
    found = set()
    for title, page_json in con.execute("SELECT title, json FROM pages"):
        for link in json.loads(page_json)["links"]:
            if link["in_snapshot"] and any(a != link["title"] for a in link["anchors"]):
                found.add((title, link["title"]))
    assert len(differing) > PAGES // 2                               # piped links abound, as in a real dump
    assert found == differing
