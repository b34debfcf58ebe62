"""Snapshot build + store: merges, redirects, links, URLs, search, determinism, atomic rebuilds, CLI."""
from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.cache import canonical_json
from pipeline.config import load_settings
from pipeline.snapshot import store as store_module
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.importers import SnapshotInputError
from pipeline.snapshot.store import SnapshotError, SnapshotStore, open_default, title_from_url

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "snapshot"
DEFAULT = ROOT / "snapshots" / "default"
SHARED = ROOT.parent / "shared" / "data" / "wikipedia"
INPUTS = [FIXTURES / "tiny_dump.xml.bz2", FIXTURES / "wikitext", FIXTURES / "summaries.json"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("snap") / "fixture_snapshot"
    result = build_snapshot(INPUTS, out)
    return out, result


@pytest.fixture(scope="module")
def store(built):
    return SnapshotStore.open(built[0])


def test_counts_sources_and_report(built, store):
    out, _result = built
    m = store.manifest
    assert m["counts"]["pages"] == 5   # Testville, Test Person, Mountain Lake, Clint Smith, Sample River
    assert m["counts"]["infobox_pages"] == 3
    assert m["counts"]["redirects"] == 2
    assert store.titles() == ["Clint Smith", "Mountain Lake", "Sample River", "Test Person", "Testville"]
    by_name = {s["name"]: s for s in m["sources"]}
    dump_sha = hashlib.sha256((FIXTURES / "tiny_dump.xml.bz2").read_bytes()).hexdigest()
    assert by_name["tiny_dump.xml.bz2"]["sha256"] == dump_sha
    assert by_name["wikitext/"]["kind"] == "wikitext"
    report = json.loads((out / "build_report.json").read_text())
    assert {(s["title"], s["reason"]) for s in report["skipped"]} >= {("Empty Page", "empty text"),
                                                                       ("Blank", "empty extract")}
    # Testville comes from the dump (infobox) and the summary JSON: the full article is kept
    assert report["merges"] == [{"title": "Testville", "kept": "tiny_dump.xml.bz2",
                                 "dropped": "summaries.json", "filled": []}]
    assert store.get("Testville").source == "tiny_dump.xml.bz2"
    assert m["report"]["merges"] == 1 and m["report"]["skipped"] == len(report["skipped"])


def test_redirects_links_and_aliases(store):
    assert store.resolve("Old Testville") == "Testville"
    assert store.resolve("Lake mountain") == "Mountain Lake"
    assert store.aliases("Testville") == ["Old Testville"]
    assert store.get("Testville").aliases == ["Old Testville"]
    person = store.get("Test Person")
    # [[Old Testville]] resolves through the redirect table to a page inside the snapshot
    assert [(l.title, l.in_snapshot) for l in person.links] == [("Testville", True), ("Nowhere Land", False)]
    town = store.get("Testville")
    assert ("Test Person", True) in [(l.title, l.in_snapshot) for l in town.links]
    assert "Old Testville" not in [l.title for l in town.links]    # self-link after resolution
    assert store.manifest["counts"]["links_in_snapshot"] == sum(
        l.in_snapshot for t in store.titles() for l in store.get(t).links)
    assert store.get("Nowhere Land") is None and store.resolve("Nowhere Land") is None


@pytest.mark.parametrize("value,title", [
    ("https://en.wikipedia.org/wiki/Test_Person", "Test Person"),
    ("http://en.m.wikipedia.org/wiki/Old_Testville#History", "Testville"),
    ("en.wikipedia.org/wiki/Test%20Person?oldid=1", "Test Person"),
    ("//en.wikipedia.org/wiki/test_Person", "Test Person"),
    ("https://en.wikipedia.org/w/index.php?title=Mountain_Lake&action=history", "Mountain Lake"),
    ("Old_Testville", "Testville"),
    ("testville", "Testville"),
    ("TESTVILLE", "Testville"),
    ("https://de.wikipedia.org/wiki/Testville", None),
    ("https://example.com/wiki/Testville", None),
    ("", None),
])
def test_url_normalisation(store, value, title):
    assert store.resolve(value) == title


def test_title_from_url_percent_encoding():
    assert title_from_url("https://en.wikipedia.org/wiki/S%C3%A8gre_(department)") == "Sègre (department)"
    assert title_from_url("HTTPS://EN.WIKIPEDIA.ORG/wiki/AC/DC") == "AC/DC"


def test_search_is_bm25_and_deterministic(store):
    results = store.search("Examplia town", k=3)
    assert results[0]["title"] == "Testville"
    assert results[0]["url"] == "https://en.wikipedia.org/wiki/Testville"
    assert results == store.search("Examplia town", k=3)
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    assert store.search("", k=3) == [] and store.search("zzzqqq") == []


def test_a_kept_search_is_the_callers_to_change_and_the_snapshots_own(store, default_store):
    """Searches are kept for the process by snapshot: a caller that edits its hits changes no later
    search, and another snapshot's store never answers with this one's hits."""
    first = store.search("Examplia town", k=3)
    first[0]["title"] = "edited"
    first.append({"title": "added"})
    again = store.search("Examplia town", k=3)
    assert again[0]["title"] == "Testville" and len(again) == 3
    assert [h["title"] for h in default_store.search("Examplia town", k=3)] != [h["title"] for h in again]


def test_thread_safe_reads(store):
    titles = store.titles() * 20
    with ThreadPoolExecutor(max_workers=4) as pool:
        pages = list(pool.map(store.get, titles))
    assert [p.title for p in pages] == titles


def test_rebuild_is_byte_identical_whatever_the_input_order(built, tmp_path):
    out, _ = built
    again = tmp_path / "again"
    build_snapshot(list(reversed(INPUTS)), again)
    for name in ("pages.sqlite", "manifest.json", "build_report.json"):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name


def test_broken_input_leaves_previous_snapshot_intact(tmp_path):
    out = tmp_path / "snap"
    build_snapshot([FIXTURES / "tiny_dump.xml"], out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(SnapshotInputError, match="truncated_dump.xml.bz2"):
        build_snapshot([FIXTURES / "tiny_dump.xml", FIXTURES / "wikitext", FIXTURES / "truncated_dump.xml.bz2"], out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]   # no temp directory left behind
    assert SnapshotStore.open(out).titles() == ["Test Person", "Testville"]


def test_open_errors(tmp_path):
    with pytest.raises(SnapshotError, match="not found"):
        SnapshotStore.open(tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text('{"hash": "x"}')
    (tmp_path / "bad" / "pages.sqlite").write_bytes(b"not a database at all" * 100)
    with pytest.raises(SnapshotError, match="corrupt"):
        SnapshotStore.open(tmp_path / "bad")


# ---- the committed embedded snapshot -----------------------------------------------------------

@pytest.fixture(scope="module")
def default_store():
    return SnapshotStore.open(DEFAULT)


def test_default_snapshot_hash_matches_its_content(default_store):
    h = hashlib.sha256()
    with sqlite3.connect(f"file:{DEFAULT / 'pages.sqlite'}?mode=ro&immutable=1", uri=True) as conn:
        for (data,) in conn.execute("SELECT json FROM pages ORDER BY title"):
            assert data == canonical_json(json.loads(data))
            h.update(data.encode() + b"\n")
        for alias, target in conn.execute("SELECT alias, target FROM redirects ORDER BY alias"):
            h.update(canonical_json([alias, target]).encode() + b"\n")
    assert h.hexdigest() == default_store.hash
    assert hashlib.sha256((DEFAULT / "pages.sqlite").read_bytes()).hexdigest() == \
        default_store.manifest["files"]["pages.sqlite"]
    assert sum(f.stat().st_size for f in DEFAULT.iterdir()) < 60_000_000


def test_default_snapshot_content(default_store):
    assert default_store.search("Ray Charles birthplace")[0]["title"] == "Ray Charles"
    assert default_store.search("capital of Andorra")[0]["title"] == "Andorra"
    andorra = default_store.get("https://en.wikipedia.org/wiki/Andorra")
    assert andorra.field("area_km2").number == 467.63
    assert andorra.field("population_estimate").number == 85470
    assert default_store.resolve("AndorrA") == "Andorra"
    ray = default_store.get("Ray_Charles")
    assert ray.field("born").date == "1930-09-23"
    assert "Charles, Ray" in default_store.aliases("Ray Charles")
    assert default_store.get("Toronto").field("population_total").number == 2615060
    info = default_store.info()
    assert info["pages"] == len(default_store.titles()) > 10_000


def test_open_default_reads_settings(default_store):
    from pipeline.config import load_settings

    assert open_default(load_settings(env={})).hash == default_store.hash


def test_info_cli_on_committed_snapshot(default_store):
    proc = subprocess.run([sys.executable, "-m", "pipeline.snapshot", "info", "--snapshot", str(DEFAULT)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    counts = default_store.manifest["counts"]
    assert default_store.hash in proc.stdout
    for key, label in (("pages", "pages"), ("infobox_pages", "infobox pages"),
                       ("links_in_snapshot", "links in snapshot"), ("redirects", "redirects")):
        assert f"{label}" in proc.stdout and str(counts[key]) in proc.stdout


def test_build_cli_reports_a_broken_file(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pipeline.snapshot", "build", "--from",
                           str(FIXTURES / "bad_dump.xml"), "--out", str(tmp_path / "x")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 2
    assert "bad_dump.xml" in proc.stdout and not (tmp_path / "x").exists()


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data/wikipedia not present")
def test_rebuilding_the_default_gives_the_same_bytes(tmp_path, default_store):
    out = tmp_path / "default"
    build_snapshot([SHARED], out)
    assert json.loads((out / "manifest.json").read_text())["hash"] == default_store.hash
    for name in ("pages.sqlite", "manifest.json", "build_report.json"):
        assert (out / name).read_bytes() == (DEFAULT / name).read_bytes(), name


@pytest.mark.parametrize("title", ["France", "Atlantic Ocean", "Black Sea", "Ray Charles"])
def test_mention_count_counts_the_pages_whose_text_holds_the_title(title):
    """Bounded by a scan of every page: at least the pages whose title, description or lead hold the
    phrase, at most those whose stored JSON (infobox included) holds its words in a row."""
    import re

    store = open_default()
    phrase = re.compile(r"(?<!\w)" + r"\W+".join(map(re.escape, title.lower().split())) + r"(?!\w)")
    lower = upper = 0
    for name in store.titles():
        page = store.get(name)
        lower += bool(phrase.search(" ".join([page.title, page.description or "", page.lead or ""]).lower()))
        upper += bool(phrase.search(store.get_json(name).lower()))
    assert 1 <= lower <= store.mention_count(title) <= upper


def test_search_ranks_ties_past_the_candidate_slack_the_same(monkeypatch):
    """With no slack every full candidate list takes the tie path (every row at least as good as
    the limit-th, ranked by title): it must give what the slack path gives."""
    store = store_module.SnapshotStore.open(load_settings().snapshot_dir)
    queries = ["American singer and pianist", "city in France", "the river that the sixth sentence names", "1999"]
    with_slack = [store.search(q, k) for q in queries for k in (1, 5, 10)]
    monkeypatch.setattr(store_module, "_TIE_SLACK", 0)
    monkeypatch.setattr(store_module, "_SEARCHES", {})   # searched again, not read from the process's memo
    assert [store.search(q, k) for q in queries for k in (1, 5, 10)] == with_slack
    assert all(len(r) == k for r, k in zip(with_slack, [1, 5, 10] * len(queries)))


_DEFAULT_TITLES: list = []


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_title_prefix_is_found_exactly_when_some_title_starts_so(default_store, data):
    """``has_title_starting`` (one range query on the NOCASE index) lets a caller skip a search whose
    results it filters by that prefix: it must say yes for every prefix some title has, case aside."""
    from pipeline.snapshot.store import ASCII_LOWER
    if not _DEFAULT_TITLES:
        _DEFAULT_TITLES.extend(default_store.titles())
    title = data.draw(st.sampled_from(_DEFAULT_TITLES))
    cut = data.draw(st.integers(1, len(title)))
    prefix = data.draw(st.sampled_from([title[:cut], title[:cut].upper(), title[:cut].lower(),
                                        title[:cut] + " ", title[:cut] + "q~"]))
    folded = prefix.translate(ASCII_LOWER)
    assert default_store.has_title_starting(prefix) == any(
        t.translate(ASCII_LOWER).startswith(folded) for t in _DEFAULT_TITLES)


def test_every_one_character_prefix_is_found_exactly_when_some_title_starts_so(default_store):
    """The range's ends are where a NOCASE bound goes wrong: 'Z' raised is '[', which sorts before 'z'
    once NOCASE lowers the titles, and '@' raised is 'A', which NOCASE reads as 'a'. Every printable ASCII
    character and every title's first character, in both cases, against a scan of every title."""
    from pipeline.snapshot.store import ASCII_LOWER
    titles = [t.translate(ASCII_LOWER) for t in default_store.titles()]
    firsts = {t[0] for t in default_store.titles() if t}
    for ch in sorted({chr(c) for c in range(32, 127)} | firsts | {c.upper() for c in firsts}):
        folded = ch.translate(ASCII_LOWER)
        assert default_store.has_title_starting(ch) == any(t.startswith(folded) for t in titles), ch


def _as_large_world(monkeypatch) -> None:
    """The embedded world read as a world above ``IN_MEMORY_MAX_ROWS`` is read: names by indexed lookups."""
    monkeypatch.setattr(store_module, "IN_MEMORY_MAX_ROWS", 0)
    monkeypatch.setattr(store_module, "_TABLES", {})


def test_a_large_world_resolves_every_name_as_a_small_one_does(default_store, monkeypatch):
    """``resolve`` by indexed lookups (a large world) against the titles and redirects held in memory:
    every title, every redirect, case variants (a unique match case aside, none where two titles differ
    only in case), URLs and names of no page."""
    titles = default_store.titles()
    aliases = [a for (a,) in default_store._conn().execute("SELECT alias FROM redirects")]
    names = [*titles, *aliases, *(t.lower() for t in titles), *(t.upper() for t in titles[::7]),
             *(title_from_url("https://en.wikipedia.org/wiki/" + t.replace(" ", "_")) for t in titles[::11]),
             "No such page at all", "paris", "PARIS", "Zzz"]
    small = [default_store.resolve(n) for n in names]
    assert any(r is None for r in small) and any(r != n and r is not None for r, n in zip(small, names))
    _as_large_world(monkeypatch)
    assert not default_store.titles_in_memory()
    assert [default_store.resolve(n) for n in names] == small
    assert "maps" not in store_module._TABLES.get(default_store.hash, {})   # no title read whole


def test_a_large_world_finds_the_names_a_text_holds_as_a_small_one_does(ctx, monkeypatch):
    """``titles_named`` over a large world's titles read a first word at a time (``_TitlesByFirstWord``)
    finds what the whole index in memory finds, on every opening text of the embedded world."""
    from pipeline.stages import hops
    store = ctx.store
    leads = [ctx.page(t).lead for t in store.titles()[::5]]
    whole = hops._first_word_index(t for t in store.titles() if hops._named_title(t))
    small = [hops.titles_named(text, ctx, index=whole) for text in leads]
    assert sum(map(len, small)) > 1000
    _as_large_world(monkeypatch)
    lazy = hops._TitlesByFirstWord(store)
    assert [hops.titles_named(text, ctx, index=lazy) for text in leads] == small
    assert [hops.titles_named(text, ctx, index=lazy, as_read=True) for text in leads[:300]] == \
        [hops.titles_named(text, ctx, index=whole, as_read=True) for text in leads[:300]]
    assert all(lazy.get(w) == whole.get(w, ()) for w in ("Paris", "United", "New", "The", "river", ""))


def test_a_large_world_finds_the_title_runs_of_a_query_as_a_small_one_does(default_store, monkeypatch):
    """The runs of a query's words that name a page (the search's title bonus), found in a large world by
    ruling out prefixes no title or redirect starts with, are the runs a small world finds by its names in
    memory: on queries made of opening texts, titles, redirects and case variants of both."""
    titles = default_store.titles()
    aliases = [a for (a,) in default_store._conn().execute("SELECT alias FROM redirects")]
    leads = [" ".join((default_store.get(t).lead or "").split()[:14]) for t in titles[::40]]
    queries = [*leads, *(f"the {t} and {a} of" for t, a in zip(titles[::13], aliases[::3])),
               *(f"{t.lower()} in {a.upper()}" for t, a in zip(titles[5::17], aliases[1::5])),
               # a first letter lowered: a redirect is found by its canonical form (first letter raised),
               # and a title opening with a letter NOCASE does not fold ("élan", "Émile Zola") by that form too
               *(f"of {n[:1].lower()}{n[1:]} and" for n in [*titles, *aliases] if " " in n),
               "Ray Charles birthplace", "new york city of paris texas", "Zzz qqq"]
    words = [re.findall(r"\w+", q) for q in queries]
    small = [default_store._title_runs(w, set()) for w in words]
    assert sum(map(len, small)) > 500 and any(any(r not in q for r in runs) for runs, q in zip(small, queries))
    _as_large_world(monkeypatch)
    assert [default_store._title_runs(w, set()) for w in words] == small
