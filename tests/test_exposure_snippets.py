"""Verbalize's search checks read a search's top five from the store offline (``verbalize.top_snippets``):
they must be exactly what the ``web_search`` tool shows an agent for the same query."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.stages.verbalize import top_snippets

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
