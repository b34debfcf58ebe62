"""Issue 33, items 7-8: a large world's per-page values computed ahead (``flows.derive``), shard by shard,
resumable by markers, are the values a leg computes when it meets the page, so generation reads them and
its legs do not change. Run on the embedded snapshot with every world "large" (threshold 0)."""
from __future__ import annotations

import pickle
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.derive import derive_world, markers_dir, shards
from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.config import load_settings
from pipeline.stages import crawl
from pipeline.stages.base import KeptStore, StageContext, kept_tally
from pipeline.stages.build import usable_facts
from pipeline.stages.derive import derive_page, level_modes
from pipeline.stages.hops import hops_from

ROOT = Path(__file__).resolve().parents[1]
LARGE = ("generation.whole_world_pages=0",)
ROWS = 45    # the embedded world's first rows: pages of several kinds, seconds of work


def _settings(root: Path):
    return load_settings(cache_path=root / "cache.sqlite", derived_dir=root / "derived")


def _kept(derived: Path, name: str) -> dict[str, object]:
    [path] = derived.glob(f"{name}-*.sqlite")
    return _kept_in(path)


def _kept_in(path: Path) -> dict[str, object]:
    with sqlite3.connect(path) as db:
        return {item: pickle.loads(value) for item, value in db.execute("SELECT item, value FROM kept")}


def test_shards_cover_every_row_once():
    for last, rows in ((1, 5), (10, 3), (2000, 2000), (2001, 2000), (7, 1)):
        cut = shards(last, rows)
        covered = [r for a, b in cut for r in range(a, b + 1)]
        assert covered == list(range(1, last + 1)) and all(b - a < rows for a, b in cut)


@pytest.fixture(scope="module")
def derived(tmp_path_factory):
    root = tmp_path_factory.mktemp("derive")
    settings = _settings(root)
    ctx = StageContext.for_worker(settings, LARGE)
    totals = derive_world(settings, workers=1, shard_rows=15, preset_overrides=LARGE,
                          last_row=ROWS)
    return root, settings, ctx, totals


def test_every_shard_is_marked_and_a_rerun_skips_them(derived):
    _, settings, ctx, totals = derived
    assert totals["pages"] == ROWS and totals["shards"] == 3 and totals["skipped"] == 0
    assert sorted(p.name for p in markers_dir(ctx).glob("shard-*.json")) == \
        ["shard-1-15.json", "shard-16-30.json", "shard-31-45.json"]
    again = derive_world(settings, workers=1, shard_rows=15, preset_overrides=LARGE, last_row=ROWS)
    assert again["skipped"] == 3 and again["pages"] == ROWS


def test_a_shard_killed_in_flight_is_derived_again(derived):
    _, settings, ctx, _ = derived
    (markers_dir(ctx) / "shard-16-30.json").unlink()   # its marker never written: the kill came first
    again = derive_world(settings, workers=1, shard_rows=15, preset_overrides=LARGE, last_row=ROWS)
    assert again["skipped"] == 2 and (markers_dir(ctx) / "shard-16-30.json").is_file()


def test_the_kept_values_are_the_ones_a_leg_computes(derived, tmp_path):
    _, settings, ctx, _ = derived
    titles = ctx.store.titles_in_rows(1, ROWS)
    hops, profiles = _kept(settings.derived_dir, "hops"), _kept(settings.derived_dir, "profile")
    assert set(profiles) == set(titles)          # every page of the rows, a profile or None
    fresh = StageContext.create(_settings(tmp_path), list(LARGE))   # nothing kept: computed as a leg meets it
    modes = level_modes(fresh)
    for title in titles[::3]:
        assert profiles[title] == crawl.profile(title, fresh)
        if profiles[title] is not None:
            assert hops[title] == hops_from(title, fresh)
            for m in modes:
                assert _kept(settings.derived_dir, "usable_facts-" + "+".join(m))[title] == usable_facts(title, fresh, m)


# slow: 11 s, two generations of one leg on an empty world; test_the_kept_values_are_the_ones_a_leg_computes keeps
# derived = computed for every value a leg reads, and test_kept.py::test_hops_read_back_equal_those_computed a
# kept value read back, not computed again, in the default run
@pytest.mark.slow
def test_generation_after_derive_reads_what_was_derived_and_gives_the_same_legs(tmp_path):
    """A run whose pages were all derived ahead computes none again (it only reads them), and its legs
    are byte for byte those of a run that computed every page as it met it."""
    params = GenerationParams(level="medium", variant="linear", count=1, seed=3, preset_overrides=LARGE)
    cold_settings = _settings(tmp_path / "cold")
    cold = run_generation(params, tmp_path / "a", cold_settings,
                          local_map_stage(StageContext.create(cold_settings, list(LARGE))))
    met = sorted({title for path in cold_settings.derived_dir.glob("*.sqlite")   # every page the cold run met
                  for title in _kept_in(path)})
    warm_settings = _settings(tmp_path / "warm")
    ahead = StageContext.create(warm_settings, list(LARGE))
    for title in met:
        derive_page(title, ahead, level_modes(ahead))
    derived_before = {name: len(_kept(warm_settings.derived_dir, name)) for name in ("profile", "hops")}
    warm = run_generation(params, tmp_path / "b", warm_settings,
                          local_map_stage(StageContext.create(warm_settings, list(LARGE))))
    assert {name: len(_kept(warm_settings.derived_dir, name)) for name in ("profile", "hops")} == derived_before
    tally = StageContext.create(cold_settings, list(LARGE)).kept_tally()
    assert tally[0] == sum(len(_kept_in(p)) for p in cold_settings.derived_dir.glob("*.sqlite")) and tally[1] > 0
    assert (tmp_path / "a" / "legs.parquet").read_bytes() == (tmp_path / "b" / "legs.parquet").read_bytes()
    assert len(cold.accepted) == len(warm.accepted) == 1


def test_the_cli_derives_a_world_and_says_what_it_did(tmp_path):
    env = {"LEGWORK_DERIVED": str(tmp_path / "derived"), "LEGWORK_CACHE": str(tmp_path / "c.sqlite"),
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "flows.derive", "--workers", "1", "--shard-rows", "1",
                           "--rows", "3", "--set", LARGE[0]],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "derived 3 pages" in done.stdout and "3 shards, 0 already done" in done.stdout
    assert len(list((tmp_path / "derived").glob("derive-*/shard-*.json"))) == 3
    bad = subprocess.run([sys.executable, "-m", "flows.derive", "--snapshot", str(tmp_path / "nowhere")],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "derive:" in bad.stderr and "Traceback" not in bad.stderr


def test_a_value_computed_inside_another_is_paid_once_and_a_read_costs_nothing(tmp_path):
    """``kept_tally`` is a run's one-off cost (printed by ``pipeline.generate``): a value computed inside
    another (a profile finding a page's hops) is counted in the outer one's seconds, not again, and a
    value read back adds nothing; only the files of the key asked are summed."""
    hops, profile = KeptStore(tmp_path / "hops-KEY.sqlite"), KeptStore(tmp_path / "profile-KEY.sqlite")
    KeptStore(tmp_path / "hops-OTHER.sqlite").get_or_compute("C", lambda: time.sleep(0.2) or 0)

    def inner():
        time.sleep(0.1)
        return 1

    assert profile.get_or_compute("A", lambda: time.sleep(0.1) or hops.get_or_compute("B", inner) + 1) == 2
    count, seconds = kept_tally(tmp_path, "KEY")
    assert count == 2 and 0.2 <= seconds < 0.4
    with sqlite3.connect(tmp_path / "hops-KEY.sqlite") as db:
        assert db.execute("SELECT seconds FROM cost WHERE item = 'B'").fetchone() == (0.0,)
    assert profile.get_or_compute("A", lambda: 1 / 0) == 2 and kept_tally(tmp_path, "KEY") == (count, seconds)


def test_a_context_holds_only_its_last_kept_values_and_reads_the_others_back(tmp_path, monkeypatch):
    """A large world's release meets tens of thousands of pages: a context holds the last
    ``KEPT_IN_MEMORY`` kept values it used, and a value it let go is read back from disk, equal and
    not computed again."""
    from pipeline.stages import base
    monkeypatch.setattr(base, "KEPT_IN_MEMORY", 2)
    ctx = StageContext.create(_settings(tmp_path))
    computed: list[str] = []

    def value(title):
        return lambda: computed.append(title) or {"title": title, "hops": [title.lower()]}

    for title in ("Paris", "Rome", "Oslo", "Paris", "Rome"):
        assert ctx.kept("probe", title, value(title)) == {"title": title, "hops": [title.lower()]}
        assert len(ctx._recent_kept) <= 2
    assert computed == ["Paris", "Rome", "Oslo"]
    assert list(ctx._recent_kept) == ["probe|Paris", "probe|Rome"]
