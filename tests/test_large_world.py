"""Issue 33, item 7: a world too large to profile whole is never profiled whole. Its seeds are drawn
page by page and each page is profiled when a leg meets it, so a leg's cost does not grow with the
world. Run here on the embedded snapshot with the threshold set to 0 (every world "large")."""
from __future__ import annotations

import pytest

from flows.generate import GenerationParams, new_leg
from pipeline.config import load_settings
from pipeline.stages import crawl
from pipeline.stages.base import StageContext


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    root = tmp_path_factory.mktemp("large")
    settings = load_settings(cache_path=root / "cache.sqlite", derived_dir=root / "derived")
    return StageContext.create(settings, preset_overrides=["generation.whole_world_pages=0"])


def crawled(ctx, level: str, variant: str, slot: int, attempt: int = 0):
    params = GenerationParams(level=level, variant=variant, count=8, seed=7)
    return crawl.run(new_leg(params, slot, attempt), ctx)


def test_a_large_world_is_seeded_by_draws_without_profiling_it_whole(large):
    assert not crawl.whole_world(large)
    legs = [crawled(large, "medium", "dag", slot) for slot in range(4)]
    modes = tuple(sorted(large.presets["medium"].extraction))
    for leg in legs:
        assert crawl.good_seed(leg.seed_title, large, modes, dag=True)
        assert len(leg.crawl.pages) >= 2
    assert len({leg.seed_title for leg in legs}) == 4        # four slots, four seeds
    # nothing derived from the whole world: no whole-world profile table was computed or written
    assert not any("page_profiles" in key for key in large._memo)
    assert not list(large.settings.derived_dir.glob("page_profiles-*"))
    # and no reverse search bridges (they need every page's mentions)
    assert crawl.mentioned_by(legs[0].seed_title, large) == []


def test_drawn_seeds_are_the_same_for_the_same_leg(large, tmp_path):
    again = StageContext.create(load_settings(cache_path=tmp_path / "c.sqlite", derived_dir=tmp_path / "d"),
                                preset_overrides=["generation.whole_world_pages=0"])
    assert [crawled(large, "easy", "linear", s).seed_title for s in range(3)] == \
        [crawled(again, "easy", "linear", s).seed_title for s in range(3)]
    # another attempt of a slot draws another page
    assert crawled(large, "easy", "linear", 0, attempt=1).seed_title != crawled(large, "easy", "linear", 0).seed_title


def test_a_drawn_seed_passes_the_seed_rule_a_listed_seed_passes(large, ctx):
    """``good_seed`` is ``seed_candidates``' rule page by page: on the whole world (the shared ``ctx``
    profiles it whole) both agree on every page of a sample."""
    modes = tuple(sorted(ctx.presets["hard"].extraction))
    listed = set(crawl.seed_candidates(ctx, modes))
    sample = ctx.store.titles()[::97]
    assert {t for t in sample if crawl.good_seed(t, ctx, modes, dag=False)} == listed & set(sample)


# ---- item 9: legs spread over the world: no page but the seed on too many of a run's routes ------------
def test_no_page_is_on_more_routes_of_a_run_than_its_cap(tmp_path):
    """With the cap at one leg per page, no page after a seed is on two routes of the run, and the cap had
    work to do: a leg was turned away for it, or later attempts went round full pages."""
    from collections import Counter

    from flows.generate import local_map_stage, route_pages, run_generation
    capped = ("generation.max_page_share=0.0", "generation.min_page_uses=1", "generation.max_country_uses=1")
    settings = load_settings(cache_path=tmp_path / "cache.sqlite")

    def routes(overrides, out):
        params = GenerationParams(level="hard", variant="linear", count=6, seed=3, preset_overrides=overrides)
        ctx = StageContext.create(settings, list(overrides))
        result = run_generation(params, tmp_path / out, settings, local_map_stage(ctx))
        return Counter(p for leg in result.accepted for p in route_pages(leg)), result

    uses, result = routes(capped, "capped")
    assert max(uses.values()) == 1
    assert any(r["reason"].startswith("claim: the page") for r in result.rejected) or \
        any(leg.metadata.get("full_pages") for leg in result.accepted)


def test_legs_of_one_round_through_one_page_claim_it_in_slot_order(tmp_path):
    """Four legs from one seed (Asia) plan their first hops in the same round through the same pages; with
    every page held to one route, the later slots give their slots back right after plan (``claim``) and
    plan again, and no leg reaches acceptance through a page the earlier slots filled (that would fail
    the run: the driver treats it as a bug)."""
    from collections import Counter

    from flows.generate import local_map_stage, route_pages, run_generation
    overrides = ("generation.max_page_share=0.0", "generation.min_page_uses=1", "generation.max_country_uses=1")
    settings = load_settings(cache_path=tmp_path / "cache.sqlite")
    params = GenerationParams(level="medium", variant="linear", count=4, seed=3, preset_overrides=overrides,
                              seed_title="Asia")
    result = run_generation(params, tmp_path / "run", settings,
                            local_map_stage(StageContext.create(settings, list(overrides))))
    claims = [r for r in result.rejected if r["stage"] == "claim"]
    assert claims and all(r["reason"].startswith("claim: the page ") and "plans again next round" in r["reason"]
                          for r in claims)
    uses = Counter(p for leg in result.accepted for p in route_pages(leg))
    assert len(result.accepted) == 4 and max(uses.values()) == 1


def test_a_page_cap_holds_countries_to_their_own_cap(tmp_path):
    """A country (where every choice hop lands) is held to ``max_country_uses``, not to the page cap: with
    countries at one leg each and other pages uncapped, no country is on two routes of a hard run (two
    choice hops a leg), while other pages may be."""
    from collections import Counter

    from flows.generate import local_map_stage, route_pages, run_generation
    from pipeline.execute import country_known
    overrides = ("generation.max_country_uses=1",)
    settings = load_settings(cache_path=tmp_path / "cache.sqlite")
    params = GenerationParams(level="hard", variant="linear", count=6, seed=5, preset_overrides=overrides)
    result = run_generation(params, tmp_path / "run", settings,
                            local_map_stage(StageContext.create(settings, list(overrides))))
    uses = Counter(p for leg in result.accepted for p in route_pages(leg))
    countries = {p: n for p, n in uses.items() if country_known(p)}
    assert len(result.accepted) == 6 and len(countries) >= 12
    assert max(countries.values()) == 1


def test_a_world_larger_than_profiled_whole_has_the_page_cap_on():
    """``page_share``: the embedded world (profiled whole) keeps ``max_page_share`` (off); a world of more
    pages than ``whole_world_pages`` takes ``large_world_page_share``."""
    from flows.generate import page_share
    from pipeline.catalog import load_presets
    settings = load_settings()
    _, generation = load_presets([], settings.templates_dir)
    assert page_share(generation, settings) == 1.0
    _, large = load_presets(["generation.whole_world_pages=100", "generation.large_world_page_share=0.03"],
                            settings.templates_dir)
    assert page_share(large, settings) == 0.03


def test_a_release_apportions_its_country_allowance_by_the_choices_each_run_owes():
    """On a large world a release of 1,400 legs may put a country on 28 legs (2%): the runs' country caps
    add up to that, every run may reach one, and the extreme runs (3-4 choice hops a leg) hold the most.
    On the embedded world the share is off and no run's countries are capped."""
    from flows.runs import RELEASE_COUNTS, release_runs

    def caps(runs):
        return {(p.level, p.variant): int(o.split("=")[1]) for p, _ in runs for o in p.preset_overrides
                if o.startswith("generation.max_country_uses=")}
    settings = load_settings()
    assert caps(release_runs(4, settings=settings)) == {}
    import dataclasses

    from flows.runs import country_caps
    params = [dataclasses.replace(p, preset_overrides=("generation.whole_world_pages=100",))   # a "large" world
              for p, _ in release_runs(4, RELEASE_COUNTS)]
    got = dict(zip([(p.level, p.variant) for p in params], country_caps(params, settings), strict=True))
    assert sum(got.values()) == 28 and min(got.values()) >= 1
    assert got[("extreme", "linear")] == max(got.values()) > got[("hard", "linear")] > got[("easy", "linear")]
    assert got[("extreme", "linear")] > got[("extreme", "dag")]   # 200 legs against 150
