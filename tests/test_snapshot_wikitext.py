"""Wikitext renderer and infobox value normalisation: template cases and property tests."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mwparserfromhell.parser import ParserError
from mwparserfromhell.parser.builder import Builder

from pipeline.snapshot import treebuilder
from pipeline.snapshot.values import classify, parse_date, parse_number, parse_quantity
from pipeline.snapshot.wikitext import WikitextError, _prune, _Tokenizer, page_from_wikitext


def _field(value: str, name: str = "value"):
    page = page_from_wikitext("T", f"{{{{Infobox thing\n| {name} = {value}\n}}}}\n'''T''' is a thing.")
    return page.field(name)


@pytest.mark.parametrize("value,name,text,kind,number,unit,date", [
    ("{{convert|630|km2|sqmi}}", "area", "630 km2", "number", 630, "km2", None),
    ("{{convert|3,356|ft|m}}", "height", "3,356 ft", "number", pytest.approx(1022.9088), "m", None),
    ("{{birth date and age|1930|9|23}}", "birth_date", "September 23, 1930", "date", None, None, "1930-09-23"),
    ("{{death date and age|2004|6|10|1930|9|23}}", "death_date", "June 10, 2004", "date", None, None, "2004-06-10"),
    ("{{start date|1998|01|01}}", "opened", "January 1, 1998", "date", None, None, "1998-01-01"),
    ("{{nowrap|12 May 1921}}", "founded", "12 May 1921", "date", None, None, "1921-05-12"),
    ("{{ubl|Red|Green|[[Blue]]}}", "colours", "Red, Green, Blue", "text", None, None, None),
    ("{{plainlist|\n* [[Alpha]]\n* Beta\n}}", "members", "Alpha, Beta", "text", None, None, None),
    ("{{hlist|a|b}}", "genres", "a, b", "text", None, None, None),
    ("{{URL|https://example.org|example.org}}", "website", "example.org", "text", None, None, None),
    ("{{flag|France}}", "country", "France", "text", None, None, None),
    ("2,731,571<ref>census</ref>", "population_total", "2,731,571", "number", 2731571, "people", None),
    ("12.5%", "percent_water", "12.5%", "number", 12.5, "%", None),
    ("100", "area_sq_mi", "100", "number", pytest.approx(258.9988110336), "km2", None),
    ("€2.5 billion", "revenue", "€2.5 billion", "number", 2.5e9, "EUR", None),
    ("1887", "established_date", "1887", "year", None, None, "1887"),
    ("179th", "area_rank", "179th", "text", None, None, None),
    ("+376", "calling_code", "+376", "text", None, None, None),
])
def test_infobox_templates(value, name, text, kind, number, unit, date):
    f = _field(value, name)
    assert (f.text, f.kind, f.number, f.unit, f.date) == (text, kind, number, unit, date)


@pytest.mark.parametrize("params,expected", [
    ("42|30|N|1|30|E", (42.5, 1.5)),
    ("43|39|2|N|79|23|4|W", (pytest.approx(43.650556), pytest.approx(-79.384444))),
    ("-33.8688|151.2093|type:city", (-33.8688, 151.2093)),
    ("12|S|77|W", (-12.0, -77.0)),
])
def test_coord_template(params, expected):
    page = page_from_wikitext("P", f"{{{{coord|{params}|display=title}}}}\n'''P''' is a place.")
    assert page.coords == expected
    assert page.lead == "P is a place."                             # a title coord is not lead text


def test_short_description_and_fallback():
    assert page_from_wikitext("A", "{{Short description|A letter}}\n'''A''' is a letter.").description == "A letter"
    assert page_from_wikitext("B", "'''B''' is the second letter. It follows A.").description == \
        "B is the second letter."


def test_empty_and_missing_title_are_errors():
    with pytest.raises(WikitextError, match="empty text"):
        page_from_wikitext("X", "   \n")
    with pytest.raises(WikitextError, match="missing title"):
        page_from_wikitext("", "text")


@pytest.mark.parametrize("text,iso", [
    ("September 23, 1930", "1930-09-23"), ("23 September 1930", "1930-09-23"), ("1930-09-23", "1930-09-23"),
    ("Sept. 23, 1930", "1930-09-23"), ("March 1834", "1834-03"), ("February 30, 1930", None),
])
def test_parse_date(text, iso):
    assert parse_date(text) == iso


# ---- properties --------------------------------------------------------------------------------

_WIKI_ALPHABET = st.sampled_from(list("[]{}|=<>/'!#*:;-&\n ") + ["{{", "}}", "[[", "]]", "'''", "==", "<ref>",
                                                                   "</ref>", "{{Infobox x|", "{{coord|", "{{convert|",
                                                                   "|display=title", "<!--", "-->", "&nbsp;", "{|",
                                                                   "|}", "[[Category:", "[[File:", "#REDIRECT",
                                                                   "{{birth date|", "1", "2,3", "N", "W", "km2"])
_GARBLED = st.lists(st.one_of(_WIKI_ALPHABET, st.text(max_size=5)), max_size=60).map("".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=300), _GARBLED))
def test_wikitext_parser_never_crashes(text):
    try:
        page = page_from_wikitext("Fuzz", text)
    except WikitextError:
        return
    assert page.title == "Fuzz"
    for f in page.infobox:
        assert f.kind in ("number", "date", "year", "text", "coords")
        assert (f.number is not None) == (f.kind == "number")
    if page.coords is not None:
        assert -90 <= page.coords[0] <= 90 and -180 <= page.coords[1] <= 180


def tree_state(obj):
    """A parse tree as nested (type, attributes): equal for two trees whose nodes have the same types
    and attributes, which is all their methods read."""
    if isinstance(obj, list):       # a SmartList of nodes, a tag's attributes, a template's parameters
        return type(obj), [tree_state(x) for x in obj]
    if hasattr(obj, "__dict__"):
        return type(obj), {k: tree_state(v) for k, v in vars(obj).items()}
    return obj


def built(build, toks: list):
    """The tree ``build`` makes of (a copy of) ``toks``, or the parser error it raises."""
    try:
        return tree_state(build(list(toks)))
    except ParserError as exc:
        return type(exc), str(exc)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(st.text(max_size=300), _GARBLED))
def test_tree_builder_builds_what_mwparserfromhell_builds(text):
    for skip_style_tags in (True, False):   # the importer's tokens, and with style tags
        toks = _Tokenizer().tokenize(text, 0, skip_style_tags)
        assert built(treebuilder.build, toks) == built(Builder().build, toks)
        kept = _prune(list(toks))[0]
        assert built(treebuilder.build, kept) == built(Builder().build, kept)


@given(n=st.integers(min_value=0, max_value=10**12))
def test_numbers_normalise_with_or_without_commas(n):
    assert parse_number(f"{n:,}") == parse_number(str(n)) == n
    assert parse_quantity("population_total", f"{n:,}") == parse_quantity("population_total", str(n)) == (n, "people")
    assert _field(f"{n:,}", "population_total").number == n


@given(x=st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False, allow_infinity=False))
def test_area_units_are_consistent(x):
    km2 = classify("area_km2", f"{x}")
    sq_mi = classify("area_sq_mi", f"{x}")
    assert km2.unit == sq_mi.unit == "km2"
    assert sq_mi.number == pytest.approx(km2.number * 2.589988110336, rel=1e-9, abs=1e-9)


def test_quotes_that_misnest_as_style_tags_lose_no_heading():
    """Bold and italic quotes are text to the importer, not tags: mwparserfromhell read this paragraph
    of Achilles (the dump's) as one italic tag running on past the heading after it, and 17 of the
    dump's 106 articles lost their later sections into the one before (blind race 10, R29)."""
    text = ("Lead of the page about a hero.\n\n== Memnon ==\n"
            "Many Homeric scholars argued that episode inspired many details in the ''Iliad'''s description "
            "of the death of Patroclus. The episode then formed the basis of the [[Epic Cycle|cyclic epic]] "
            "''[[Aethiopis]]'', which was composed after the ''Iliad'', possibly in the 7th century B.C. The "
            "''Aethiopis'' is now lost.\n== Legacy ==\nJonathan S. Burgess wrote,'' The Death and Afterlife "
            "of Achilles'', a study of the hero and his cult, in Baltimore in 2009.")
    page = page_from_wikitext("Achilles", text)
    assert [s.title for s in page.sections] == ["Memnon", "Legacy"]
    assert "Legacy" not in page.sections[0].text and "''" not in page.sections[0].text
    assert page.sections[0].text.startswith("Many Homeric scholars") and "Aethiopis is now lost" in page.sections[0].text
