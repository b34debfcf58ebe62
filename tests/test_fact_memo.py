"""A page's candidate facts are found once per parsed page (``facts._found``): the same facts as a fresh
parse gives, whatever the order levels ask them in, and nothing of the memo shows in what a page says."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.snapshot.store import SnapshotStore
from pipeline.stages.facts import fact_parts, page_facts

DEFAULT = Path(__file__).resolve().parents[1] / "snapshots" / "default"
MODES = [("infobox",), ("infobox", "prose"), ("cross_section", "infobox", "prose"), ("prose",)]
TITLES = ["France", "Nile", "Ray Charles", "Sahara", "Tokyo", "Ernest Hemingway", "Amazon River", "Mount Everest"]


@pytest.fixture(scope="module")
def store():
    return SnapshotStore.open(DEFAULT)


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(TITLES), st.permutations(MODES))
def test_facts_found_once_are_the_facts_a_fresh_page_gives(store, title, order):
    page = store.get(title)
    if page is None:
        return
    asked = {modes: page_facts(page, modes) for modes in order}   # the same page object, asked again and again
    for modes, facts in asked.items():
        assert facts == page_facts(store.get(title), modes)      # a fresh parse: nothing memoised
    assert fact_parts(page) == fact_parts(store.get(title))
    mine = page_facts(page, MODES[1])
    mine.clear()                                                  # a caller's list is its own
    assert page_facts(page, MODES[1]) == asked[MODES[1]]


def test_the_memo_never_shows_in_a_pages_dict(store):
    page = store.get("France")
    page_facts(page, MODES[2])
    d = page.to_dict()
    assert set(d) == {f.name for f in dataclasses.fields(page)}
