"""Search that can be read to its end (issue 33 item 4, issue 34 item 3): ``SnapshotStore.search_page``
and the ``web_search`` tool over it. Paging with one page size lists every match exactly once, ``total``
is the exact count (checked against an enumeration of the snapshot written separately), the first page
is the search generation reads, and SQLite alone ranks as the in-memory index does."""
from __future__ import annotations

import functools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.config import load_settings
from pipeline.snapshot import store as store_module
from pipeline.snapshot.search_tantivy import index_folder
from pipeline.snapshot.store import SEARCH_FIELDS, SEARCH_MODES, SnapshotStore, phrase_pattern
from pipeline.tools.errors import ToolArgumentError
from pipeline.tools.registry import Toolbox

WORDS = ["Sahara", "Nile", "river", "Africa", "capital", "city", "desert", "singer", "album", "1998", "Paris",
         "U.S.", "kingdom", "island", "war", "river Nile", "capital city", "Sahara Desert",
         "New York", "zzqx"]
COLUMNS = ("title", "description", "lead", "infobox")


@pytest.fixture(scope="module")
def store():
    return SnapshotStore.open(load_settings().snapshot_dir)


@pytest.fixture(scope="module")
def rows(store):
    """Every row's four texts, read once for the enumerations."""
    return {r[0]: r[1:] for r in store._conn().execute("SELECT rowid, title, description, lead, infobox FROM pages_fts")}


def read_all(store, query, k, mode="words", field="all") -> tuple[list[str], int, list[int]]:
    titles, ranks, offset, total = [], [], 0, None
    while offset is not None:
        page = store.search_page(query, offset, k, mode=mode, field=field, snippets=False)
        assert total is None or page["total"] == total
        total = page["total"]
        assert len(page["results"]) <= k
        titles += [h["title"] for h in page["results"]]
        ranks += [h["rank"] for h in page["results"]]
        offset = page["next_offset"]
    return titles, total, ranks


@functools.cache
def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def whole_phrase_in(text: str | None, phrase: str) -> bool:
    """The enumeration's own reading of mode phrase (no regular expression): the phrase's words, in
    order, separated by white space only, case aside, with no letter or digit just before or after."""
    if not text:
        return False
    hay, needle = _normal(text), " ".join(phrase.split()).lower()
    start = hay.find(needle)
    while start >= 0:
        before = hay[start - 1] if start else " "
        end = start + len(needle)
        after = hay[end] if end < len(hay) else " "
        if not before.isalnum() and not after.isalnum():
            return True
        start = hay.find(needle, start + 1)
    return False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.sampled_from(WORDS), k=st.integers(1, 50), mode=st.sampled_from(SEARCH_MODES),
       field=st.sampled_from(SEARCH_FIELDS))
def test_every_match_once_in_rank_order_and_the_total_is_their_number(store, query, k, mode, field):
    titles, total, ranks = read_all(store, query, k, mode, field)
    assert len(titles) == len(set(titles)) == total
    assert ranks == list(range(1, total + 1))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.sampled_from([w for w in WORDS if w != "zzqx"]), field=st.sampled_from(SEARCH_FIELDS))
def test_phrase_total_is_the_enumerated_count(store, rows, query, field):
    columns = COLUMNS if field == "all" else (field,)
    expected = {texts[0] for texts in rows.values()
                if any(whole_phrase_in(texts[COLUMNS.index(c)], query) for c in columns)}
    titles, total, _ = read_all(store, query, 50, "phrase", field)
    assert set(titles) == expected and total == len(expected)


def test_a_query_of_common_words_only_is_read_to_its_end(store):
    titles, total, _ = read_all(store, "the of", 50)
    assert total == len(set(titles)) == len(titles) > 5000


def test_the_saharas_of_the_issue(store, rows):
    """Issue 33: "how many pages' opening text contains the word Sahara": 27, read to the end."""
    titles, total, _ = read_all(store, "Sahara", 10, "phrase", "lead")
    assert total == 27 == len(set(titles))
    assert not whole_phrase_in("Saharan trade", "Sahara") and whole_phrase_in("the Sahara's edge", "Sahara")
    assert all(whole_phrase_in(store.get(t).lead, "Sahara") for t in titles)


def test_words_and_all_words_match_by_stem(store, rows):
    """all_words: every word by its stem; words: any. The pages of ``a b`` in all_words are the pages
    both one-word searches find."""
    one = {w: set(read_all(store, w, 50)[0]) for w in ("river", "Africa")}
    both = set(read_all(store, "river Africa", 50, "all_words")[0])
    assert both == one["river"] & one["Africa"] and both
    assert set(read_all(store, "river Africa", 50)[0]) == one["river"] | one["Africa"]
    assert set(read_all(store, "rivers", 50)[0]) == one["river"]          # porter: rivers -> river


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), k=st.sampled_from([1, 3, 5, 10, 20]))
def test_the_first_page_is_the_search_generation_reads(store, rows, data, k):
    """Same query and k: the same titles, order, snippets and scores as ``search`` (legs keep their bytes)."""
    rowid = data.draw(st.sampled_from(sorted(rows)))
    text = rows[rowid][2] or rows[rowid][0]
    words = re.findall(r"\w+", text)
    start = data.draw(st.integers(0, max(0, len(words) - 1)))
    query = " ".join(words[start:start + data.draw(st.integers(1, 8))]) or "x"
    page = store.search_page(query, 0, k)
    assert [{key: h[key] for key in ("title", "url", "snippet", "score")} for h in page["results"]] == store.search(query, k)


def test_sqlite_alone_pages_as_the_index_does(store, monkeypatch):
    """A world above ``IN_MEMORY_MAX_ROWS`` is ranked by SQLite alone: the same order page by page."""
    queries = ["river Africa longest", "Ray Charles birthplace", "capital city", "Niger_River Mali", "1999"]
    in_memory = {q: read_all(store, q, 7)[0] for q in queries}
    first = {q: store.search(q, 5) for q in queries}
    monkeypatch.setattr(store_module, "IN_MEMORY_MAX_ROWS", 0)
    monkeypatch.setattr(store_module, "LARGE_WORLD_ENGINE", "sqlite")
    monkeypatch.setattr(store_module, "_PAGINGS", {})
    monkeypatch.setattr(store_module, "_SEARCHES", {})
    monkeypatch.setattr(store_module, "_TABLES", {})        # the large world reads titles by row, not all at once
    assert not store.in_memory_search()
    assert {q: read_all(store, q, 7)[0] for q in queries} == in_memory
    assert {q: store.search(q, 5) for q in queries} == first
    assert store_module._TABLES.get(store.hash, {}).keys().isdisjoint({"fts_titles", "maps", "name_keys"})


def test_phrase_pattern_reads_whole_words_as_written():
    p = phrase_pattern("Sahara  Desert")
    assert p.search("the sahara desert") and p.search("Sahara\nDesert's") and not p.search("Sahara Deserts")
    assert not p.search("SubSahara Desert") and not phrase_pattern("U.S.").search("U.S.A") and phrase_pattern("U.S.").search("U.S. Army")


# ---- the tool -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def toolbox(tmp_path_factory):
    return Toolbox(load_settings(cache_path=tmp_path_factory.mktemp("cache") / "c.sqlite"))


def test_web_search_pages_with_offset_or_page(toolbox):
    first = toolbox.call("web_search", {"query": "capital city", "num_results": 10}).data
    assert first["total"] > 100 and first["next_offset"] == 10 and [r["rank"] for r in first["results"]] == list(range(1, 11))
    by_page = toolbox.call("web_search", {"query": "capital city", "num_results": 10, "page": 2}).data
    by_offset = toolbox.call("web_search", {"query": "capital city", "num_results": 10, "offset": 10}).data
    assert by_page["results"] == by_offset["results"] and by_offset["results"][0]["rank"] == 11
    last = toolbox.call("web_search", {"query": "capital city", "num_results": 10, "offset": first["total"] - 3}).data
    assert len(last["results"]) == 3 and last["next_offset"] is None
    past = toolbox.call("web_search", {"query": "capital city", "offset": first["total"] + 5}).data
    assert past["results"] == [] and past["next_offset"] is None and past["total"] == first["total"]
    clash = toolbox.call("web_search", {"query": "capital city", "num_results": 10, "page": 2, "offset": 3})
    assert not clash.ok and "give one" in clash.error


def test_web_search_modes_fields_and_caps(toolbox):
    lead = toolbox.call("web_search", {"query": "Sahara", "mode": "phrase", "field": "lead", "num_results": 50}).data
    assert lead["total"] == 27 == len(lead["results"]) and lead["next_offset"] is None
    assert (lead["mode"], lead["field"]) == ("phrase", "lead")
    with pytest.raises(ToolArgumentError, match="maximum of 50"):                               # the cap: 50
        toolbox.call("web_search", {"query": "Sahara", "num_results": 51})
    with pytest.raises(ToolArgumentError, match="mode"):
        toolbox.call("web_search", {"query": "Sahara", "mode": "fuzzy"})
    default = toolbox.call("web_search", {"query": "Sahara"}).data
    assert len(default["results"]) == 5 and (default["mode"], default["field"], default["offset"]) == ("words", "all", 0)


# ---- a large world: tantivy ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def large(tmp_path_factory):
    """The default world searched as a large one is: by its tantivy index (``search_tantivy``)."""
    patch = pytest.MonkeyPatch()
    patch.setattr(store_module, "IN_MEMORY_MAX_ROWS", 0)
    patch.setattr(store_module, "LARGE_WORLD_ENGINE", "tantivy")
    patch.setattr(store_module, "_PAGINGS", {})
    patch.setattr(store_module, "_SEARCHES", {})
    patch.setattr(store_module, "_TABLES", {})
    patch.setattr(store_module, "_ENGINES", {})
    patch.setattr(store_module, "_TOPS", {})
    yield SnapshotStore.open(load_settings().snapshot_dir, index_dir=tmp_path_factory.mktemp("derived"))
    patch.undo()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.sampled_from(WORDS), k=st.integers(1, 50), mode=st.sampled_from(SEARCH_MODES),
       field=st.sampled_from(SEARCH_FIELDS))
def test_a_large_world_pages_every_match_once(large, query, k, mode, field):
    titles, total, ranks = read_all(large, query, k, mode, field)
    assert len(titles) == len(set(titles)) == total and ranks == list(range(1, total + 1))


def test_a_large_world_counts_exactly_and_ranks_stably(large, rows, tmp_path):
    for query, field in (("Sahara", "lead"), ("capital city", "all"), ("Nile", "description")):
        columns = COLUMNS if field == "all" else (field,)
        expected = {texts[0] for texts in rows.values() if any(whole_phrase_in(texts[COLUMNS.index(c)], query) for c in columns)}
        assert set(read_all(large, query, 9, "phrase", field)[0]) == expected
    assert read_all(large, "Sahara", 10, "words")[1] == 27 and read_all(large, "capital city", 50, "all_words")[1] == 568
    first = large.search("Ray Charles birthplace", 5)
    assert first[0]["title"] == "Ray Charles" and all(h["snippet"] for h in first)
    assert not large.in_memory_search() and "fts_titles" not in store_module._TABLES.get(large.hash, {})
    # a second index built from the same snapshot ranks the same (one writer thread, row order, ties by title)
    before = read_all(large, "river Africa", 20)[0]
    store_module._ENGINES.clear()
    store_module._PAGINGS.clear()
    again = SnapshotStore.open(load_settings().snapshot_dir, index_dir=tmp_path)
    assert read_all(again, "river Africa", 20)[0] == before and (tmp_path / index_folder(again.hash)).is_dir()


@pytest.mark.parametrize("first_k, then_k", [(10, 5), (5, 10), (3, 20)])
def test_a_large_world_ranks_a_query_alike_whatever_was_asked_before(large, first_k, then_k):
    """One tantivy read serves every smaller limit of the same words (``_TOPS``): a search gives what it
    gives asked first, whatever the same words were asked with before."""
    queries = ("capital city of the country on the river", "the second sentence of its opening text names a city",
               "Ray Charles birthplace", "river Africa desert")

    def forget():
        for kept in (store_module._TOPS, store_module._BEST, store_module._SEARCHES, store_module._PAGINGS):
            kept.clear()

    def asked(q, k):   # the first page and the whole order read with k results a page
        return [h["title"] for h in large.search(q, k)], read_all(large, q, k)[0]

    fresh = {}
    for k in (first_k, then_k):
        for q in queries:
            forget()
            fresh[q, k] = asked(q, k)
    forget()
    for q in queries:
        assert asked(q, first_k) == fresh[q, first_k]
        assert asked(q, then_k) == fresh[q, then_k]
