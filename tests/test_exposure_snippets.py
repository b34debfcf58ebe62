"""Verbalize's search checks read a search's top five from the store offline (``verbalize.top_snippets``):
they must be exactly what the ``web_search`` tool shows an agent for the same query."""
from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.stages.verbalize import top_snippets, value_needles, value_shown

_LEADS: list = []


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_the_top_snippets_are_the_tools_first_page(ctx, data):
    if not _LEADS:
        _LEADS.extend(lead for _, lead in ctx.store.leads() if lead)
    words = data.draw(st.sampled_from(_LEADS)).split()
    start = data.draw(st.integers(0, max(0, len(words) - 1)))
    query = " ".join(words[start:start + data.draw(st.integers(1, 12))])
    query = data.draw(st.sampled_from([query, query.upper(), "the " + query, query + " Sahara"]))
    shown = ctx.toolbox.call("web_search", {"query": query, "num_results": 5}).data["results"]
    assert top_snippets(ctx, query) == [(h["title"], h["snippet"]) for h in shown]


def _snippet_values(snippets: list[str]) -> list:
    """Values a check may ask about that these snippets show: their numbers (as ints) and words."""
    out: list = []
    for s in snippets:
        out += [int(n.replace(",", "")) for n in re.findall(r"(?<![\d.,])\d[\d,]*(?![\d])", s) if n[-1] != ","]
        out += re.findall(r"[A-Za-z]{3,}", s)
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_a_value_a_top_snippet_shows_is_in_the_results_text(ctx, data):
    """``SnapshotStore.mentions_in_results`` may spare the snippets only where none can show the value: every
    value a top-five snippet shows (``value_shown``) is found in the results' text by its ``value_needles``."""
    if not _LEADS:
        _LEADS.extend(lead for _, lead in ctx.store.leads() if lead)
    words = data.draw(st.sampled_from(_LEADS)).split()
    start = data.draw(st.integers(0, max(0, len(words) - 1)))
    query = " ".join(words[start:start + data.draw(st.integers(1, 8))])
    snippets = [s for _, s in top_snippets(ctx, query)]
    values = _snippet_values(snippets)
    value = data.draw(st.sampled_from(values)) if values else data.draw(st.integers(0, 3000))
    needles = value_needles(value)
    if value_shown(value, snippets):
        assert needles is None or ctx.store.mentions_in_results(query, 5, needles), (query, value)
    if needles is not None and not ctx.store.mentions_in_results(query, 5, needles):
        assert not value_shown(value, snippets)


_TOKEN = st.one_of(st.integers(0, 20000).map(str), st.integers(1000, 99999).map(lambda n: f"{n:,}"),
                   st.sampled_from(["Nile", "nile's", "1.5", "(1990)", "1,2", "Río", "ΟΔΟΣ", "…", "in", "AD"]),
                   st.text("ab1,.9 -", min_size=1, max_size=5))


@settings(max_examples=300, deadline=None)
@given(st.lists(_TOKEN, min_size=1, max_size=12), st.data())
def test_no_run_of_a_text_shows_a_value_whose_needles_the_text_lacks(tokens, data):
    """``value_needles``' promise, for any text: a run of its words (what a snippet is) shows the value only
    if the whole text, lower-cased, holds one of the needles."""
    text = " ".join(tokens)
    words = text.split()
    first = data.draw(st.integers(0, max(0, len(words) - 1)))
    run = " ".join(words[first:first + data.draw(st.integers(1, len(words) or 1))])
    numbers = [int(w.replace(",", "")) for w in words if re.fullmatch(r"\d{1,3}(?:,\d{3})*|\d+", w)]
    value = data.draw(st.one_of(st.integers(0, 99999), st.sampled_from([1.5, True, "nile", "Nile's", "río", "ab"]),
                                st.sampled_from(words or ["x"]), st.sampled_from(numbers or [0])))
    needles = value_needles(value)
    if needles is not None and value_shown(value, ["…" + run + "…"]):
        assert any(n in text.lower() for n in needles), (text, run, value)
