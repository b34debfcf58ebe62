"""Build asks of each page only a fact verbalize can word without naming a page of the route: a fact
it could not word made verbalize reject the leg after every other stage had run (102 of the 231 legs
verbalize rejected in a release, seed 4)."""
from __future__ import annotations

import pytest

from pipeline.model import ROUTE_INFO, Leg, Plan
from pipeline.stages import build
from pipeline.stages.base import Rejected
from pipeline.stages.facts import hop_modes
from pipeline.stages.hops import hops_from
from pipeline.stages.plan import shapes
from pipeline.stages.verbalize import ask_options, route_names


def asks(stop, names, ctx) -> list[str]:
    return ask_options(stop, names, ctx.toolbox.call("fetch_webpage", {"url": stop.page_url}).data)


def test_asia_reached_from_sao_paulo_holds_facts_no_clue_can_ask(ctx):
    """The case the check exists for: Asia's opening sentences all begin with its name, so a fact read
    by its sentence there has no wording once Asia's name is forbidden; others have one."""
    page = ctx.page("Asia")
    names = route_names(["São Paulo", "Asia"], "São Paulo", ctx)
    facts = build.usable_facts("Asia", ctx, hop_modes(ctx.presets["medium"].extraction))
    verdicts = [bool(asks(build._page_stop(f, page), names, ctx)) for f in facts]
    assert [build.askable(build._page_stop(f, page), names, ctx) for f in facts] == verdicts
    assert True in verdicts and False in verdicts


@pytest.mark.parametrize("level", ["easy", "medium"])
def test_every_page_stop_build_makes_has_a_question_that_names_no_route_page(ctx, level):
    hop = next(h for h in hops_from("São Paulo", ctx) if h.target == "Asia")
    preset = ctx.presets[level]
    k, r, d, p = next(s for s in shapes(preset) if s[3] == 2)
    names = route_names(["São Paulo", "Asia"], "São Paulo", ctx)
    built = 0
    for seed in range(30):
        leg = Leg(leg_id=f"leg_ask{seed}", level=level, variant="linear", seed=seed, seed_title="São Paulo",
                  seed_url=ctx.page("São Paulo").url)
        leg.plan = Plan(stops=k, roadblocks=r, detours=d, pages=p, route=["São Paulo", "Asia"], depth=1,
                        relations=[hop.relation])
        try:
            done = build.run(leg, ctx)
        except Rejected:
            continue
        built += 1
        for stop in done.stops_of(ROUTE_INFO):
            assert asks(stop, names, ctx), (seed, stop.page_title, stop.extraction)
    assert built >= 10
