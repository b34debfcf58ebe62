"""A planned leg claims its route's pages (``PageCaps.overclaimed``): acceptance goes in slot order, so
a leg whose page earlier slots of its round would fill gives its slot back after plan instead of running
every stage and being turned away at the end (issue 33, item 8: on the 10^6-page world a tenth of a
release's stage work went to such legs)."""
from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from flows.generate import PageCaps, route_pages
from pipeline.model import Leg, Plan

PAGES = ("Page A", "Page B", "Page C", "Page D", "France", "Japan")   # the last two are countries


def leg(slot: int, *pages: str) -> Leg:
    out = Leg(leg_id=f"leg_{slot}", level="hard", variant="linear", seed=slot, seed_title=f"Seed {slot}", seed_url="")
    out.plan = Plan(stops=3, roadblocks=0, detours=0, pages=len(pages) + 1, route=[f"Seed {slot}", *pages], depth=1)
    out.metadata["slot"] = slot
    return out


def test_later_slots_give_back_a_page_earlier_slots_fill():
    caps = PageCaps(pages=2, countries=1)
    legs = [leg(2, "Page B"), leg(0, "Page A"), leg(1, "Page A", "Page B"), leg(3, "France"), leg(4, "France")]
    over = caps.overclaimed(legs, Counter({"Page A": 1, "Page B": 1}))
    # Page A: one accepted route and slot 0's claim fill its two; slot 1 gives its slot back, and its
    # Page B is then no claim, so slot 2 goes on; France (a country) holds one route: slot 4 waits
    assert over == {"leg_1": ("Page A", 1), "leg_4": ("France", 1)}


def test_uncapped_countries_are_never_claimed_full():
    caps = PageCaps(pages=1, countries=0)
    assert caps.overclaimed([leg(0, "Japan"), leg(1, "Japan"), leg(2, "Page C")], Counter({"Japan": 9})) == {}


@settings(max_examples=200, deadline=None)
@given(routes=st.lists(st.lists(st.sampled_from(PAGES), min_size=1, max_size=4, unique=True), max_size=12),
       used=st.dictionaries(st.sampled_from(PAGES), st.integers(0, 3)),
       pages_cap=st.integers(1, 4), countries_cap=st.integers(0, 3))
def test_claims_keep_every_cap_and_turn_away_only_legs_that_would_break_one(routes, used, pages_cap, countries_cap):
    """Accept, in slot order, every leg not overclaimed: no page passes its cap. And every overclaimed leg
    would have passed one, had it been accepted after the legs before it."""
    caps = PageCaps(pages=pages_cap, countries=countries_cap)
    legs = [leg(slot, *pages) for slot, pages in enumerate(routes)]
    uses = Counter(used)
    over = caps.overclaimed(legs, uses)
    for one in legs:
        if one.leg_id in over:
            page, _ = over[one.leg_id]
            assert page in route_pages(one) and uses[page] >= caps.limit(page)
        else:
            assert all(uses[t] < caps.limit(t) for t in route_pages(one) if caps.limit(t) is not None)
            uses.update(route_pages(one))
