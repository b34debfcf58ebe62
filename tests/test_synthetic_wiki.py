"""The synthetic dump maker of the world-scale benchmark (benchmarks/synthetic_wiki.py): the same
pages and seed give the same bytes, its multistream index points at the starts of bz2 streams of
whole pages, its names never collide, and the project's importer reads it with the counts the dump
holds (pages, redirects, links whose shown text differs from the title they go to). Its countries
are the real ones the country statistics know, under English Wikipedia's titles; its places lie in
their country as the gazetteer reads their coordinates; and enough of its sentences name several
countries for choice hops to leave a fair share of pages."""
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

from pipeline.config import load_settings
from pipeline.execute import DEPENDENT_TERRITORIES, countries_named, country_known
from pipeline.stages.base import StageContext
from pipeline.stages.hops import page_choice_hops
from pipeline.world.countries import country_table

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
    countries = {t for n in sw.nations() for t in (n.title, n.plain, *n.redirects)}
    assert len({n.title for n in sw.nations()}) == len(sw.nations())
    assert not countries & set(names)
    assert sw._splits("anton", {"ton"})                   # the check that guards the alphabets bites
    assert not sw._splits("ton", {"ton"})


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**8), st.integers(0, 10**8))
def test_distinct_keys_have_distinct_names(a, b):
    assert (sw.base_name(a) == sw.base_name(b)) == (a == b)
    # a fictional name is never a country's to the country data (a reader would count it)
    assert country_table().lookup(sw.base_name(a), allow_codes=False) is None


def test_countries_are_the_real_ones_under_wikipedia_titles():
    world = sw.World(10_000, seed=3)
    table = country_table()
    assert world.c == len(sw.nations()) > 150
    titles = {world.entity(k).title: world.nations[k] for k in range(world.c)}
    assert {"France", "United States", "Georgia (country)", "The Bahamas", "Eswatini"} <= set(titles)
    assert "U.S." in titles["United States"].redirects and "Bahamas" in titles["The Bahamas"].redirects
    for k, nation in enumerate(world.nations):
        found = table.lookup(nation.plain, allow_codes=False)
        assert found is not None and found.iso2 == nation.iso2, nation
        assert country_known(nation.plain) and nation.iso2 not in DEPENDENT_TERRITORIES
        assert found.area_km2 == nation.area and found.population == nation.population
        assert (k in world.choosable) == (nation.plain in (nation.title, *nation.redirects))
    georgia = sw.PageWriter(world, world.key_of_iso["GE"])
    assert georgia.plain_link(georgia.e) == "[[Georgia (country)|Georgia]]"
    # the lists a choice hop reads: every country in them read as one, and each name leads to its page
    names = {t: n.title for n in world.nations for t in (n.title, *n.redirects)}
    page = sw.PageWriter(world, world.c + 1)
    for _ in range(300):
        listed = page.countries()
        links = re.findall(r"\[\[([^|\]]+)(?:\|([^\]]+))?\]\]", listed)
        text = re.sub(r"\[\[(?:[^|\]]+\|)?([^\]]+)\]\]", r"\1", listed)
        read = countries_named(f"The band toured {text} in 1987.", country_known)
        assert read is not None and len(read) == len(links) and 2 <= len(read) <= 5, text
        assert [names.get(name) for name in read] == [title for title, _ in links], text


def test_places_lie_in_their_country_as_the_gazetteer_reads_them():
    world = sw.World(10_000, seed=3)
    g = sw.geo()
    checked = 0
    for k in range(0, 10_000, 7):
        e = world.entity(k)
        if e.kind == "disambiguation":
            continue
        lat, lon = world.coords(e)
        assert g.nearest(lat, lon).country_code == world.nations[e.country].iso2, (e, lat, lon)
        checked += 1
    assert checked > 1000
    paris = world.entity(world.capital(world.key_of_iso["FR"]))
    assert paris.title == "Paris" and world.coords(paris) == world.nations[world.key_of_iso["FR"]].capital_point


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


@pytest.fixture(scope="module")
def snapshot(dump, tmp_path_factory) -> Path:
    out, _ = dump
    snap = tmp_path_factory.mktemp("synth-snap") / "snap"
    run = subprocess.run([sys.executable, "-m", "pipeline.snapshot", "build", "--from", str(out), "--out", str(snap),
                          "--workers", "1", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return snap


def test_the_importer_reads_the_dump_with_its_counts(dump, snapshot):
    out, stats = dump
    snap = snapshot
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


def test_choice_hops_leave_a_fair_share_of_pages(snapshot, tmp_path):
    """Sentences naming two to five real countries whose figures differ (and a country's borders) give
    choice hops, as the planner finds them, out of at least one page in ten."""
    ctx = StageContext.create(load_settings(snapshot_dir=snapshot, cache_path=tmp_path / "cache.sqlite",
                                            derived_dir=tmp_path / "derived"))
    con = sqlite3.connect(snapshot / "pages.sqlite")
    titles = [t for (t,) in con.execute("SELECT title FROM pages")]
    with_choice = [t for t in titles if page_choice_hops(t, ctx)]
    countries = {n.title for n in sw.World(PAGES, seed=7).nations}
    assert len(with_choice) >= PAGES // 10
    assert len([t for t in with_choice if t not in countries]) >= PAGES // 10 - len(countries)
    for title in with_choice[:20]:
        for hop in page_choice_hops(title, ctx):
            assert hop.target in countries and 2 <= len(hop.relation.candidates) <= 5
