"""What an agent reads of a long result (issue 33 item 5, issue 34 item 7): ``pipeline.tools.view.fit``
shortens inside the JSON, so the output parses, is strict, fits the cut, keeps what names and maps a
page near the top, and says how to read the rest; reading on as it says reaches everything."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.config import load_settings
from pipeline.snapshot.store import SnapshotStore
from pipeline.tools.registry import Toolbox
from pipeline.tools.view import MIN_CHARS, fit, strict


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory):
    return Toolbox(load_settings(cache_path=tmp_path_factory.mktemp("cache") / "c.sqlite"))


@pytest.fixture(scope="module")
def titles():
    store = SnapshotStore.open(load_settings().snapshot_dir)
    by_size = sorted(store.titles(), key=lambda t: (-len(store.get_json(t)), t))
    return by_size[:40] + by_size[40::250]     # the longest pages and a spread of the rest


def strict_load(text: str):
    """A strict reader: no raw control characters in strings (``json.loads`` is strict about them), and no
    DEL, C1 controls, line separators or surrogates anywhere."""
    assert not any(0x7f <= ord(c) <= 0x9f or c in "\u2028\u2029" or 0xd800 <= ord(c) <= 0xdfff for c in text)
    return json.loads(text, strict=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), max_chars=st.integers(MIN_CHARS, 30_000))
def test_any_page_at_any_cut_is_strict_json_within_the_cut(toolbox, titles, data, max_chars):
    title = data.draw(st.sampled_from(titles))
    response = toolbox.call("fetch_webpage", {"url": title}).response_json
    shown = fit(response, max_chars)
    assert len(shown) <= max_chars
    page = strict_load(shown)
    if len(strict(response)) <= max_chars:
        assert page == json.loads(response)              # a result that fits is shown whole
    else:
        assert "shortened" in page and page.get("title", title) == title
        if max_chars >= 8000:       # the default cut: what names and maps the page is always there
            assert {"title", "url", "contents", "infobox"} <= page.keys()


def test_a_long_page_shows_its_contents_infobox_and_anchored_links_at_the_default_cut(toolbox):
    """Asia (47,000 characters): every section title, the infobox and the first links with their texts."""
    data = toolbox.call("fetch_webpage", {"url": "Asia"}).data
    shown = fit(toolbox.call("fetch_webpage", {"url": "Asia"}).response_json, 8000)
    page = strict_load(shown)
    assert len(shown) <= 8000
    assert [c["title"] for c in page["contents"]] == [s["title"] for s in data["sections"]]
    assert page["description"] == data["description"]
    # the infobox compact (no empty keys, no name that repeats the label), its figures whole
    assert [(f["label"], f.get("number"), f.get("unit"), f.get("date")) for f in page["infobox"]] == \
        [(f["label"], f["number"], f["unit"], f["date"]) for f in data["infobox"]]
    assert all(None not in f.values() for f in page["infobox"])
    assert list(page)[:4] == ["title", "url", "description", "shortened"]
    assert page["links"] == data["links"][:len(page["links"])] and len(page["links"]) >= 50
    assert page["link_anchors"] == {t: data["link_anchors"][t] for t in page["links"] if t in data["link_anchors"]}
    assert page["lead"].startswith(data["lead"][:500]) and "links_offset" in page["shortened"]["links"]
    keys = list(page)
    assert keys.index("contents") < keys.index("infobox") < keys.index("lead") < keys.index("links")


def test_a_long_infobox_gives_way_before_the_lead_and_the_contents(toolbox):
    """Alabama (an infobox of 100 fields): at the default cut, every section title and the lead's opening
    are still shown, and some links; the infobox's texts are what is cut."""
    data = toolbox.call("fetch_webpage", {"url": "Alabama"}).data
    page = strict_load(fit(toolbox.call("fetch_webpage", {"url": "Alabama"}).response_json, 8000))
    assert [c["title"] for c in page["contents"]] == [s["title"] for s in data["sections"]]
    assert len(page["lead"]) >= 500 and data["lead"].startswith(page["lead"][:400])
    assert len(page["links"]) >= 10 and "infobox" in page["shortened"]


def test_links_offset_reads_every_link_once(toolbox):
    data = toolbox.call("fetch_webpage", {"url": "Asia"}).data
    seen, offset = [], 0
    while True:
        page = strict_load(fit(toolbox.call("fetch_webpage", {"url": "Asia", "links_offset": offset}).response_json, 2500))
        assert page["links_total"] == len(data["links"])
        seen += page["links"]
        note = page.get("shortened", {}).get("links")
        if note is None:
            break
        offset = int(note.rsplit("links_offset ", 1)[1].split()[0])
    assert seen == data["links"]


def test_a_section_and_the_lead_read_in_full_through_text_offset(toolbox):
    data = toolbox.call("fetch_webpage", {"url": "Asia"}).data
    for section, full in (("Religions", next(s["text"] for s in data["sections"] if s["title"] == "Religions")),
                          ("lead", data["lead"])):
        text, offset = "", None
        while True:
            args = {"url": "Asia", "section": section, **({"text_offset": offset} if offset is not None else {})}
            page = strict_load(fit(toolbox.call("fetch_webpage", args).response_json, 1200))
            text += page["text"]
            note = page.get("shortened", {}).get("text")
            if note is None:
                break
            offset = int(note.rsplit("text_offset ", 1)[1].split()[0])
        assert text == full, section


def test_a_search_page_cut_short_says_where_to_read_on(toolbox):
    """A page of 50 results does not fit in 3,000 characters: next_offset then names the first result not
    shown, so reading on from it with the same num_results lists every match once."""
    total = toolbox.call("web_search", {"query": "capital city", "num_results": 50}).data["total"]
    seen, offset = [], 0
    while offset is not None and len(seen) < 160:
        page = strict_load(fit(toolbox.call("web_search", {"query": "capital city", "num_results": 50,
                                                           "offset": offset}).response_json, 3000))
        assert [r["rank"] for r in page["results"]] == list(range(offset + 1, offset + 1 + len(page["results"])))
        seen += [r["title"] for r in page["results"]]
        offset = page["next_offset"]
    assert len(seen) == len(set(seen)) >= 160 and total > 160


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=300),
    lambda inner: st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=12), inner, max_size=8),
    max_leaves=80)


@settings(max_examples=40, deadline=None)
@given(value=st.dictionaries(st.text(max_size=12), json_values, max_size=10), max_chars=st.integers(MIN_CHARS, 5000),
       pretty=st.booleans())
def test_any_result_at_any_cut_is_strict_json_within_the_cut(value, max_chars, pretty):
    text = json.dumps(value, ensure_ascii=False)
    shown = fit(text, max_chars, 2 if pretty else None)
    assert len(shown) <= max_chars
    loaded = strict_load(shown)
    if len(strict(text)) <= max_chars:
        assert loaded == value


def test_strict_escapes_what_strict_readers_reject_and_means_the_same():
    text = json.dumps({"a": "x\x7f\x85\u2028\u2029y", "b": "\u00e9"}, ensure_ascii=False)
    out = strict(text)
    assert "\\u007f" in out and "\\u0085" in out and "\\u2028" in out and "é" in out
    assert json.loads(out) == json.loads(text)
    strict_load(out)
