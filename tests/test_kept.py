"""Per-page values kept on disk as pages are met (``StageContext.kept``: a page's hops and usable
facts): a later context reads what an earlier one computed, the same value; nothing is kept under
fault injection or with a live backend, and other answer settings are another file."""
from __future__ import annotations

import dataclasses

import pytest

from pipeline.config import load_settings
from pipeline.stages.base import StageContext
from pipeline.stages.hops import hops_from


def _context(tmp_path, **overrides) -> StageContext:
    settings = dataclasses.replace(load_settings(env={}, cache_path=tmp_path / "cache.sqlite"),
                                   derived_dir=tmp_path / "derived", **overrides)
    return StageContext.create(settings)


def _rows(tmp_path, name="hops") -> int:
    import sqlite3
    files = list((tmp_path / "derived").glob(f"{name}-*.sqlite"))
    return sum(sqlite3.connect(f).execute("SELECT COUNT(*) FROM kept").fetchone()[0] for f in files)


@pytest.mark.parametrize("title", ["Azerbaijan", "Nile", "William Pitt the Younger"])
def test_hops_read_back_equal_those_computed(tmp_path, title):
    computed = hops_from(title, _context(tmp_path))
    assert _rows(tmp_path) >= 1
    calls = []
    read = _context(tmp_path).kept("hops", title, lambda: calls.append(1) or [])
    assert read == computed and not calls   # read from the file, not computed again
    assert hops_from(title, _context(tmp_path)) == computed


def test_a_second_context_does_not_compute_again(tmp_path):
    calls = []
    assert _context(tmp_path).kept("numbers", "a", lambda: calls.append(1) or (1, 2)) == (1, 2)
    assert _context(tmp_path).kept("numbers", "a", lambda: calls.append(2) or "again") == (1, 2)
    assert _context(tmp_path).kept("numbers", "b", lambda: calls.append(3) or "b") == "b"
    assert calls == [1, 3]


def test_nothing_is_kept_under_fault_injection(tmp_path):
    ctx = _context(tmp_path, faults="rate=0.5,seed=1")
    assert ctx.kept("numbers", "a", lambda: "faulted") == "faulted"
    assert _rows(tmp_path, "numbers") == 0
    assert _context(tmp_path).kept("numbers", "a", lambda: "clean") == "clean"


def test_a_live_backend_keeps_nothing_on_disk(tmp_path):
    ctx = _context(tmp_path, default_backend="live")
    assert ctx.kept("numbers", "a", lambda: "live answer") == "live answer"
    assert not list((tmp_path / "derived").glob("numbers-*.sqlite"))


def test_other_answer_settings_are_another_file(tmp_path):
    _context(tmp_path).kept("numbers", "a", lambda: "offline")
    other = _context(tmp_path, backends={"maps_elevation": "offline", "web_search": "offline"})
    assert other.kept("numbers", "a", lambda: "other settings") == "other settings"
    assert len(list((tmp_path / "derived").glob("numbers-*.sqlite"))) == 2


def test_a_broken_row_is_computed_again(tmp_path):
    import sqlite3
    _context(tmp_path).kept("numbers", "a", lambda: [1])
    [path] = (tmp_path / "derived").glob("numbers-*.sqlite")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE kept SET value = ?", (b"not a pickle",))
    assert _context(tmp_path).kept("numbers", "a", lambda: [2]) == [2]


def test_a_seeds_facts_and_a_hop_targets_facts_are_kept_once(tmp_path):
    """Hard's seeds ask their facts at the preset's modes (infobox, prose, cross_section), the pages a hop
    reaches at ``hop_modes`` (sorted): the same facts, computed once and kept in one file."""
    from pipeline.stages.build import usable_facts
    from pipeline.stages.facts import hop_modes
    preset = tuple(_context(tmp_path).presets["hard"].extraction)
    assert preset != hop_modes(preset)   # the two orders this test is about
    first = usable_facts("Azerbaijan", _context(tmp_path), preset)
    assert first and _rows(tmp_path, "usable_facts") == 1
    assert usable_facts("Azerbaijan", _context(tmp_path), hop_modes(preset)) == first
    assert _rows(tmp_path, "usable_facts") == 1   # read back, not computed again into another file
