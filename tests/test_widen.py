"""Issue 33/34: a route whose page stops give the level too few wide stops asks other places and countries
its pages give before the leg is turned away (``build._widen``). Asia's area gives no set; India, which its
opening text names, gives one around New Delhi."""
from __future__ import annotations

import random

import pytest

from pipeline.model import LINK_FOLLOW, ROUTE_INFO, Leg, Plan, Transition
from pipeline.stages import build
from pipeline.stages.base import Rejected
from pipeline.stages.facts import hop_modes
from pipeline.stages.hops import hops_from
from pipeline.stages.plan import shapes
from pipeline.stages.verbalize import route_names
from pipeline.stages.wide import make_wide_stops

ROUTE = ["São Paulo", "Asia"]


@pytest.fixture(scope="module")
def hop(ctx):
    return next(h for h in hops_from("São Paulo", ctx) if h.target == "Asia")


def _pages(ctx, hop):
    """São Paulo's place, then Asia's area: the route's stops as step 1 of build would leave them."""
    seed_fact = build.usable_facts("São Paulo", ctx, ctx.presets["extreme"].extraction)[0]
    facts = build.usable_facts("Asia", ctx, hop_modes(ctx.presets["extreme"].extraction))
    area = next(f for f in facts if f.label == "area")
    first = build._page_stop(seed_fact, ctx.page("São Paulo"))
    second = build._page_stop(area, ctx.page("Asia"))
    second.transition = Transition(kind=LINK_FOLLOW, from_stop=id(first), target_url=second.page_url,
                                   relation=hop.relation)
    return [first, second], [[], [f for f in facts if f is not area]]


@pytest.mark.parametrize("seed", range(4))
def test_a_route_short_of_wide_stops_asks_another_place_or_country_of_its_pages(ctx, hop, seed):
    pages, left = _pages(ctx, hop)
    items = [((i, 0, 0), stop) for i, stop in enumerate(pages)]
    first, area = pages
    rng = random.Random(seed)
    need = ctx.presets["extreme"].wide[0]
    made = make_wide_stops(pages, ctx, rng, "extreme")
    assert len(made) < need                       # the area gives no set: the leg would be turned away
    wide = build._widen(pages, left, made, items, route_names(ROUTE, "São Paulo", ctx), ctx, rng, "extreme")
    assert len(wide) >= need
    assert pages[0] is first and pages[1] is not area
    assert pages[1].fact.role in ("place", "country") and pages[1].value in {f.value for f in left[1]}
    assert pages[1].transition is area.transition and pages[1].transition.from_stop == id(first)
    assert [s for _, s in items] == pages         # the stop the leg is built from is the new one
    inputs = {o for _, s in wide for o in s.depends_on}
    assert inputs <= {id(p) for p in pages} and id(pages[1]) in inputs


def test_a_swap_that_makes_no_more_wide_stops_is_undone(ctx, hop):
    """Only Asia's numbers to choose from: nothing to ask instead, so the route is left as it was."""
    pages, left = _pages(ctx, hop)
    left = [[], [f for f in left[1] if f.role == "number"]]
    items = [((i, 0, 0), stop) for i, stop in enumerate(pages)]
    before = list(pages)
    rng = random.Random(0)
    made = make_wide_stops(pages, ctx, rng, "extreme")
    wide = build._widen(pages, left, made, items, route_names(ROUTE, "São Paulo", ctx), ctx, rng, "extreme")
    assert len(wide) == len(made) and pages == before and [s for _, s in items] == before


def test_build_widens_a_short_route_and_every_stop_of_it_is_linked(ctx, hop):
    """Through ``build.run``: extreme legs on São Paulo -> Asia reach their wide stops, each page stop's
    hop comes from the stop before it, and each wide stop depends on a page stop of the leg."""
    preset = ctx.presets["extreme"]
    k, r, d, _ = shapes(preset)[0]   # (the level's routes are longer: two pages here)
    built = 0
    for seed in range(12):
        leg = Leg(leg_id=f"leg_widen{seed}", level="extreme", variant="linear", seed=seed, seed_title="São Paulo",
                  seed_url=ctx.page("São Paulo").url)
        leg.plan = Plan(stops=k, roadblocks=r, detours=d, pages=2, route=ROUTE, depth=1, relations=[hop.relation])
        try:
            done = build.run(leg, ctx)
        except Rejected as exc:
            assert "wide stops" not in str(exc), exc
            continue
        built += 1
        page_stops = done.stops_of(ROUTE_INFO)
        assert page_stops[1].transition.from_stop == page_stops[0].index
        wide = [s for s in done.stops if s.wide is not None]
        assert len(wide) >= preset.wide[0]
        assert all(done.stops[j].kind == ROUTE_INFO for s in wide for j in s.depends_on)
    assert built >= 6
