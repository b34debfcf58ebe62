"""Importers on small fixtures and on the real inputs in ../shared/data/wikipedia (values read by hand)."""
from __future__ import annotations

import bz2
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pipeline.snapshot.importers import (
    Redirect,
    Skipped,
    SnapshotInputError,
    detect_sources,
    iter_summaries,
    iter_wikitext_folder,
    iter_xml_dump,
    iter_zim,
)
from pipeline.snapshot.page import Page
from pipeline.snapshot.wikitext import page_from_wikitext

FIXTURES = Path(__file__).parent / "fixtures" / "snapshot"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikipedia"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/wikipedia not present")


def _split(items):
    pages = {i.title: i for i in items if isinstance(i, Page)}
    redirects = {i.alias: i.target for i in items if isinstance(i, Redirect)}
    skipped = [i for i in items if isinstance(i, Skipped)]
    return pages, redirects, skipped


# ---- MediaWiki XML ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["tiny_dump.xml", "tiny_dump.xml.bz2"])
def test_xml_dump_pages_redirects_and_skips(name):
    pages, redirects, skipped = _split(list(iter_xml_dump(FIXTURES / name, name)))
    assert sorted(pages) == ["Test Person", "Testville"]          # Talk: page (ns 1) left out
    assert redirects == {"Old Testville": "Testville"}
    assert sorted((s.title, s.reason) for s in skipped) == [("", "missing title"), ("Empty Page", "empty text")]

    town = pages["Testville"]
    assert town.description == "Town in Examplia"
    assert town.revision_ts == "2021-05-04T03:02:01Z"
    assert town.infobox_type == "settlement"
    assert town.coords == (45.5, pytest.approx(-73.566667))
    assert town.categories == ["Towns in Examplia"]
    assert town.lead == "Testville is a town in Examplia founded by a person. It has 12.5 km2 of land."
    assert [(s.title, s.level) for s in town.sections] == [("History", 2), ("Modern era", 3), ("Geography", 2)]
    assert town.section("History").text == "Testville was settled in 1850. See Old Testville."
    assert "References" not in [s.title for s in town.sections]
    assert [l.title for l in town.links] == ["Town", "Jane Mayor", "Examplia", "Test Person", "Old Testville"]

    f = town.field
    assert (f("population_total").kind, f("population_total").number, f("population_total").unit) == \
        ("number", 2731571, "people")
    assert f("population_total").text == "2,731,571"              # the <ref> is gone
    assert (f("area_total_km2").number, f("area_total_km2").unit) == (12.5, "km2")
    assert f("area_total_sq_mi").unit == "km2" and f("area_total_sq_mi").number == pytest.approx(4.83 * 2.589988, 1e-6)
    assert (f("elevation_ft").number, f("elevation_ft").unit) == (pytest.approx(304.8), "m")
    assert (f("established_date").kind, f("established_date").date) == ("date", "1850-06-14")
    assert (f("population_as_of").kind, f("population_as_of").date) == ("year", "2020")
    assert f("subdivision_name").text == "Examplia"
    assert f("website").text == "testville.example"
    assert f("coordinates").kind == "coords"

    person = pages["Test Person"]
    assert person.field("birth_date").date == "1901-02-03"
    assert person.field("death_date").date == "1980-12-31"
    assert person.field("birth_place").text == "Old Testville, Examplia"
    assert (person.field("height").number, person.field("height").unit) == (1.82, "m")


def test_truncated_bz2_raises_naming_the_file():
    with pytest.raises(SnapshotInputError, match="truncated_dump.xml.bz2"):
        list(iter_xml_dump(FIXTURES / "truncated_dump.xml.bz2", "t"))


def test_bad_xml_raises_naming_the_file():
    with pytest.raises(SnapshotInputError, match="bad_dump.xml.*not valid XML"):
        list(iter_xml_dump(FIXTURES / "bad_dump.xml", "b"))


def test_not_a_dump_is_rejected(tmp_path):
    odd = tmp_path / "notes.xml"
    odd.write_text("<html><body>hello</body></html>")
    with pytest.raises(SnapshotInputError, match="not a MediaWiki XML dump"):
        list(iter_xml_dump(odd, "notes.xml"))
    fake_zim = tmp_path / "fake.zim"
    fake_zim.write_bytes(b"this is no zim")
    with pytest.raises(SnapshotInputError, match="fake.zim"):
        detect_sources(fake_zim)


# ---- wikitext folder and summary JSON --------------------------------------------------------

def test_wikitext_folder():
    pages, redirects, skipped = _split(list(iter_wikitext_folder(FIXTURES / "wikitext", "wikitext/")))
    assert sorted(pages) == ["Clint Smith", "Mountain Lake"]     # README.txt is not wikitext
    assert redirects == {"Lake mountain": "Mountain Lake"}
    assert not skipped
    lake = pages["Mountain Lake"]
    assert lake.source == "wikitext/mountain_lake.txt"
    assert lake.coords == (46.1234, -71.5)
    assert lake.infobox_type == "lake"
    assert lake.field("area").unit == "km2" and lake.field("area").number == pytest.approx(3.2 * 2.589988, 1e-6)
    assert lake.field("max-depth").number == pytest.approx(12.192)
    assert lake.field("elevation").number == 1250 and lake.field("elevation").unit == "m"
    assert lake.field("countries").text == "Examplia, Otherland"
    # the first bold phrase is a full name, not the title: the file name wins
    assert pages["Clint Smith"].lead == "Clinton Williams Smith was a person from Testville."


def test_summaries_json():
    pages, _redirects, skipped = _split(list(iter_summaries(FIXTURES / "summaries.json", "summaries.json")))
    assert sorted(pages) == ["Sample River", "Testville"]
    assert [s.title for s in skipped] == ["Blank"]
    river = pages["Sample River"]
    assert river.description == "The Sample River flows through Testville."   # first sentence when none
    assert river.categories == ["Geography"] and river.links == [] and river.infobox == []
    assert pages["Testville"].description == "Town in Examplia (summary)"


def test_detect_sources_scans_a_folder():
    sources, ignored = detect_sources(FIXTURES / "wikitext")
    assert [(s.kind, s.name) for s in sources] == [("wikitext", "wikitext/")]
    assert ignored == ["README.txt"]


# ---- real inputs -----------------------------------------------------------------------------

def _dump_page_text(title: str) -> str:
    ns = "{http://www.mediawiki.org/xml/export-0.10/}"
    with bz2.open(SHARED / "enwiki-sample-pages-articles.xml.bz2") as f:
        for _, el in ET.iterparse(f):
            if el.tag == ns + "page" and el.findtext(ns + "title") == title:
                return el.findtext(f"{ns}revision/{ns}text")
    raise LookupError(title)


@needs_shared
def test_andorra_infobox_from_the_xml_dump():
    # hand-read from the dump: area_km2 = 467.63, area_sq_mi = 180.55, population_estimate = 85,470,
    # {{Coord|42|30|N|1|30|E|display=title}}, capital = [[Andorra la Vella]], GDP_nominal = $4.510 billion
    page = page_from_wikitext("Andorra", _dump_page_text("Andorra"))
    f = page.field
    assert page.infobox_type == "country"
    assert (f("area_km2").number, f("area_km2").unit) == (467.63, "km2")
    assert f("area_sq_mi").number == pytest.approx(180.55 * 2.589988110336, 1e-9)
    assert (f("population_estimate").number, f("population_estimate").unit) == (85470, "people")
    assert f("population_estimate_year").date == "2014"
    assert (f("GDP_nominal").number, f("GDP_nominal").unit) == (4.51e9, "USD")
    assert f("capital").text == "Andorra la Vella"
    assert f("area_rank").kind == "text"                            # "179th" is a rank, not a quantity
    assert page.coords == (42.5, 1.5)
    assert page.links[0].title == "El Gran Carlemany"
    assert page.lead.startswith("Andorra, officially the Principality of Andorra")
    assert "Sports" in [s.title for s in page.sections]


@needs_shared
def test_toronto_infobox_from_the_wtf_cache():
    # hand-read from toronto.txt: area_total_km2 = 630, elevation_m = 76, population_total = 2,615,060,
    # established_date = August 27, 1793, population_metro = 5,583,064
    text = (SHARED / "wtf_wikipedia_cache" / "toronto.txt").read_text(encoding="utf-8")
    page = page_from_wikitext("Toronto", text)
    f = page.field
    assert page.infobox_type == "settlement"
    assert (f("area_total_km2").number, f("area_total_km2").unit) == (630, "km2")
    assert (f("elevation_m").number, f("elevation_m").unit) == (76, "m")
    assert (f("population_total").number, f("population_total").unit) == (2615060, "people")
    assert f("population_metro").number == 5583064
    assert f("established_date").date == "1793-08-27"
    assert f("subdivision_name").text == "Canada"                   # {{flag|Canada}}
    assert page.description == "Most populous city in Canada" or page.description.startswith("Toronto")


@needs_shared
def test_ray_charles_zim():
    items = list(iter_zim(SHARED / "wikipedia_en_ray_charles.zim", "zim"))
    pages, redirects, skipped = _split(items)
    assert not skipped
    assert len(pages) == 128                                         # 129 HTML entries minus the main page
    ray = pages["Ray Charles"]
    from libzim.reader import Archive

    html = bytes(Archive(str(SHARED / "wikipedia_en_ray_charles.zim"))
                 .get_entry_by_path("A/Ray_Charles").get_item().content).decode()
    # values as the archive's HTML states them
    assert re.search(r'<span class="bday">1930-09-23</span>', html)
    assert ray.field("born").date == "1930-09-23"
    assert ray.field("born").text == "September 23, 1930, Albany, Georgia, U.S."
    assert ray.field("died").date == "2004-06-10"
    assert ray.field("birth_name").text == "Ray Charles Robinson"
    assert ray.field("instruments").text == "Vocals, piano"
    assert ray.lead.startswith("Ray Charles Robinson (September 23, 1930 – June 10, 2004) was an American singer")
    assert ray.revision_ts == "2020-03-31"
    assert "Georgia on My Mind" in [l.title for l in ray.links]
    assert redirects["Charles, Ray"] == "Ray Charles"
    assert redirects["A Song For You"] == "A Song for You"
    archive = Archive(str(SHARED / "wikipedia_en_ray_charles.zim"))
    with_infobox = set()
    for i in range(archive.all_entry_count):
        entry = archive._get_entry_by_id(i)
        if (entry.path.startswith("A/") and not entry.is_redirect and entry.path != "A/index"
                and 'class="infobox' in bytes(entry.get_item().content).decode()):
            with_infobox.add(entry.path[2:].replace("_", " "))  # URL title, as the importer uses
    assert {t for t, p in pages.items() if p.infobox} == with_infobox


# ---- the pruned parse (wikitext.parse_wikitext) against mwparserfromhell's full parse -------------

def _full_parse(text):
    import mwparserfromhell

    return mwparserfromhell.parse(text, skip_style_tags=True), True   # as the importer parses


def _pages_both_ways(monkeypatch, title, text):
    from pipeline.snapshot import wikitext

    pruned = wikitext.page_from_wikitext(title, text).to_dict()
    with monkeypatch.context() as m:
        m.setattr(wikitext, "parse_wikitext", _full_parse)
        full = wikitext.page_from_wikitext(title, text).to_dict()
    return pruned, full


def _real_articles():
    from pipeline.snapshot.importers import XmlDumpReader, title_for_wikitext
    from pipeline.snapshot.wikitext import is_redirect

    for raw in XmlDumpReader(SHARED / "enwiki-sample-pages-articles.xml.bz2"):
        el = ET.fromstring(raw.data)
        text = el.findtext("{*}revision/{*}text") or ""
        if el.findtext("{*}ns") == "0" and text.strip() and not is_redirect(text):
            yield el.findtext("{*}title"), text
    for f in sorted((SHARED / "wtf_wikipedia_cache").glob("*.txt")):
        text = f.read_text(encoding="utf-8")
        if not is_redirect(text):
            yield title_for_wikitext(f, text), text


@needs_shared
@pytest.mark.parametrize("every", [pytest.param(1, marks=pytest.mark.slow), 9])
def test_pruned_parse_gives_every_real_page_of_a_full_parse(monkeypatch, every):
    """The nodes left out between tokenizer and builder (references, silent templates, prose tables)
    change nothing: each article of the sample dump and of the wtf cache is the same Page, byte for
    byte, as from mwparserfromhell.parse of the whole page (and Page.to_dict is dataclasses.asdict).
    The default run compares every ninth page (30 s of parsing for all of them on the loaded machine),
    the slow run every page; test_pruned_parse_gives_the_page_of_a_full_parse_on_hard_cases holds the
    cases each pruning rule is about in the default run too."""
    from dataclasses import asdict

    from pipeline.snapshot.wikitext import _prune, _Tokenizer

    n = pruned_tokens = all_tokens = 0
    for title, text in list(_real_articles())[::every]:
        pruned, full = _pages_both_ways(monkeypatch, title, text)
        assert pruned == full, title
        page = page_from_wikitext(title, text)
        assert page.to_dict() == {**asdict(page), "coords": list(page.coords) if page.coords else None}
        toks = _Tokenizer().tokenize(text, 0, True)   # skip_style_tags, as the importer
        all_tokens += len(toks)
        pruned_tokens += len(toks) - len(_prune(toks)[0])
        n += 1
    assert n >= 140 // every
    assert pruned_tokens > all_tokens / 3           # the test is about something


@needs_shared
@pytest.mark.parametrize("every", [pytest.param(1, marks=pytest.mark.slow), 15])
def test_tree_builder_builds_every_real_page_as_mwparserfromhell(every):
    """treebuilder.build gives the nodes, types and attributes, of mwparserfromhell's Builder (the
    default run compares every fifteenth page, the slow run every page: a minute of parsing;
    tests/test_snapshot_wikitext.py::test_tree_builder_builds_what_mwparserfromhell_builds compares 200
    generated texts in the default run too)."""
    from mwparserfromhell.parser.builder import Builder

    from pipeline.snapshot import treebuilder
    from pipeline.snapshot.wikitext import _prune, _Tokenizer
    from tests.test_snapshot_wikitext import built

    for title, text in list(_real_articles())[::every]:
        toks = _Tokenizer().tokenize(text, 0, True)   # skip_style_tags, as the importer
        assert built(treebuilder.build, toks) == built(Builder().build, toks), title
        kept = _prune(toks)[0]
        assert built(treebuilder.build, kept) == built(Builder().build, kept), title


@pytest.mark.parametrize("text", [
    # a <ref> read by strip_code (a {{convert}} unit, <code>) is kept; one in prose is left out
    "'''X''' is {{convert|5|km<ref>[[Metre]]s</ref>}} long.<ref>{{cite web|title=[[Y]]}}</ref> See [[Z]].",
    "'''X''' runs <code>a<ref>b [[C]]</ref></code> and <nowiki><ref>d</ref></nowiki>. [[E]]",
    # an infobox inside a reference, a table or a silent template is still found
    "'''X'''<ref>{{Infobox person|name=Ref Person|born=1900}}</ref> is a thing. [[A]]",
    "{|\n| {{Infobox settlement|name=Table Town|population_total=5}}\n|}\n'''X''' is a town. [[B]]",
    "{{Navbox|list={{Automatic taxobox|taxon=Felis}}}}\n'''X''' is a cat. [[C]]",
    "{{Info<!-- -->box settlement|name=Odd|area_km2=5}}\n'''X''' is odd.<ref>[[D]]</ref>",
    # a table in an infobox value is rendered; one in the prose is not; links in both
    ("{{Infobox settlement|name=T|places={|\n| [[In Table]]<ref>r</ref>\n|}\n|x={{flagicon|US}} [[Flag]]}}\n"
    "'''X''' is here.\n{|\n| [[Prose Table]]\n|}\n== History ==\nOld [[H]].<ref name=a/>\n"
    "== References ==\n{{reflist|refs=<ref name=a>[[Cited]]</ref>}}\n[[Category:Towns]]"),
    # file captions, lists, italics, headings inside tags, a short description in a reference
    ("{{Short description|A test}}\n[[File:X.jpg|thumb|A [[Caption]]<ref>c</ref>]]\n* one [[L1]]\n"
    "# two ''[[L2]]''<ref>{{Short description|Wrong}}</ref>\n<div>\n== Inside ==\n</div>\n'''X''' (<ref>r</ref>; born 1900) is."),
    # parameter names and link targets with templates or references are not touched
    ("{{Infobox person|name{{!}}x=N|born<ref>b</ref>=1900|died={{death date|2000|1|2}}<ref>d</ref>}}\n"
    "'''X''' [[{{PAGENAME}}|self]] [[Target<ref>t</ref>|label]] {{lang|fr|[[Paris]]<ref>p</ref>}}."),
    # unbalanced markup around references and tables
    "'''X''' {{unclosed <ref>[[R]]</ref> and [[Y|<ref>z</ref>]] {|\n| cell\n '''bold''' [[W]]",
    # references cut before the tokenizer (_cut_references) or left to it: at a line's start, unclosed,
    # in a heading, beside comments that hide brackets, holding a comment, in capitals
    "'''X''' is.\n<ref>a</ref>* not a list [[L]]\n<ref name=b/>== Not a heading ==\nMore [[M]].",
    "'''X''' a<ref name=q>unclosed [[U]] text<ref>b</ref> end [[V]].",
    "'''X''' is.\n== H<ref>h</ref> ==\nText [[T]].<ref>{{cite book|title=[[Book]]}}</ref>",
    "'''X''' <!-- {{ --> is<ref>a</ref> [[A]]. <!-- ]] --> b<ref>c</ref> [[B]].",
    "'''X'''<ref>a<!-- c --></ref> b [[B]]. Later<REF>d</REF> c [[C]].<ref name=\"x y\" />",
])
def test_pruned_parse_gives_the_page_of_a_full_parse_on_hard_cases(monkeypatch, text):
    pruned, full = _pages_both_ways(monkeypatch, "X", text)
    assert pruned == full
