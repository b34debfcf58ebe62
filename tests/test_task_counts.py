"""One meaning of ``--count`` in every task family: exactly that many rows, spread evenly over the
family's cells, no prompt twice, ``validate`` passes; or a refusal before anything is written that
says the most the family can make (exit 2). Checked through the CLI, over counts and seeds."""
from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from in_process import run_module

from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.tasks.common import (
    Candidates,
    Shortfall,
    fill_cells,
    plan_counts,
    read_task_rows,
    spread,
)
from pipeline.tasks.os.sandbox import sandbox_available
from pipeline.tools.registry import Toolbox

needs_coq = pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc not installed (Debian package coq)")
needs_sandbox = pytest.mark.skipif(not sandbox_available(), reason="OS sandbox needs root, unshare and overlayfs")
MOST = re.compile(r"the most it can make is (\d+)")
# one CLI build per family and run (each run draws a new count and seed, so the runs add up)
CLI = settings(max_examples=1, deadline=None, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def tasks_cli(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m pipeline.tasks ARGS`` (in this process: ``in_process``)."""
    return run_module("pipeline.tasks", *args, cwd=PROJECT_ROOT, timeout=timeout)


def build_and_check(family: str, count: int, seed: int) -> list[dict]:
    """Build through the CLI; either exactly ``count`` rows with distinct prompts that validate, or a
    refusal (exit 2) naming a smaller maximum, with nothing written."""
    with tempfile.TemporaryDirectory(prefix="legwork-counts-") as tmp:
        out, cache = Path(tmp) / "out", str(Path(tmp) / "cache.sqlite")
        built = tasks_cli("build", "--family", family, "--count", str(count), "--seed", str(seed),
                          "--out", str(out), "--cache", cache)
        if built.returncode == 2:
            most = MOST.search(built.stderr)
            assert most and int(most.group(1)) < count, built.stderr
            assert "Traceback" not in built.stderr and not out.exists()
            return []
        assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
        rows = read_task_rows(out)
        assert len(rows) == count
        assert {r["family"] for r in rows} == {family}
        prompts = Counter(r["prompt"] for r in rows)
        assert max(prompts.values()) == 1, [p[:80] for p, n in prompts.items() if n > 1]
        assert len({r["task_id"] for r in rows}) == count
        checked = tasks_cli("validate", str(out), "--cache", cache)
        assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
        return rows


# ---- the allocation itself (in-process, fast) ----------------------------------------------------
def _fake_pool(capacity: dict[int, int], overlap: int = 0) -> Candidates:
    """Cell c holds capacity[c] items; with ``overlap`` every cell also draws a few keys another cell has."""
    def draw(cell):
        for i in range(capacity[cell]):
            key = f"shared-{i % overlap}" if overlap and i % 3 == 0 else f"{cell}-{i}"
            yield (key,), (cell, i)
    return Candidates(draw)


@settings(max_examples=200, deadline=None, database=None)
@given(caps=st.lists(st.integers(0, 12), min_size=1, max_size=9), count=st.integers(1, 80))
def test_plan_counts_fills_evenly_up_to_each_cells_capacity(caps, count):
    cells = list(range(len(caps)))
    capacity = dict(zip(cells, caps))
    try:
        plan = plan_counts(count, cells, lambda c, n: min(n, capacity[c]))
    except Shortfall as exc:
        assert sum(caps) < count and exc.made == sum(caps)
        return
    assert sum(plan.values()) == count
    assert all(0 <= plan[c] <= capacity[c] for c in cells)
    # water filling: a cell below its capacity has at most one task less than any other cell
    open_cells = [c for c in cells if plan[c] < capacity[c]]
    if open_cells:
        assert max(plan.values()) <= min(plan[c] for c in open_cells) + 1


@settings(max_examples=150, deadline=None, database=None)
@given(caps=st.lists(st.integers(0, 10), min_size=1, max_size=6), count=st.integers(1, 40),
       reject=st.integers(2, 7), overlap=st.integers(0, 3))
def test_fill_cells_replaces_rejected_candidates_and_never_repeats_a_key(caps, count, reject, overlap):
    cells = list(range(len(caps)))
    pool = _fake_pool(dict(zip(cells, caps)), overlap)
    def accepted(item) -> bool:                               # a deterministic "verifier"
        return hash(item) % reject != 0

    try:
        made = fill_cells(count, cells, pool, lambda batch: [item if accepted(item) else None
                                                             for _c, _p, item in batch])
    except Shortfall as exc:
        drawn = [item for c in cells for item in pool.lists.get(c, [])]
        # refused on the candidates before any check, or on the accepted ones after
        assert exc.made < count and exc.made in (len(drawn), sum(1 for item in drawn if accepted(item)))
        return
    items = [item for c in cells for item in made[c]]
    assert len(items) == count and len(set(items)) == count
    assert all(item[0] == c for c in cells for item in made[c])   # each result came from its own cell
    again = fill_cells(count, cells, _fake_pool(dict(zip(cells, caps)), overlap),
                       lambda batch: [item if accepted(item) else None for _c, _p, item in batch])
    assert again == made                                      # deterministic


def test_spread_gives_the_remainder_to_the_first_cells():
    assert spread(10, ["a", "b", "c"]) == {"a": 4, "b": 3, "c": 3}
    assert spread(2, ["a", "b", "c"]) == {"a": 1, "b": 1, "c": 0}


def test_math_small_cells_give_their_share_to_the_others(tmp_path):
    """Polygon angle sums: levels 1 and 5 hold 8 problems, level 3 holds 12; 60 tasks still fit."""
    from pipeline.tasks.math.dataset import build_count

    toolbox = Toolbox(load_settings(cache_path=tmp_path / "c.sqlite", env={}))
    rows, _ = build_count(60, 1, toolbox, families=["polygon_angles"])
    per_level = Counter(r["difficulty"] for r in rows)
    assert len(rows) == 60 and len({r["prompt"] for r in rows}) == 60
    assert per_level[1] == per_level[5] == 8 and per_level[3] == 12
    assert per_level[2] + per_level[4] == 32 and abs(per_level[2] - per_level[4]) <= 1


# ---- through the CLI, every family ------------------------------------------------------------
@CLI
@given(count=st.integers(1, 25), seed=st.integers(0, 10**6))
def test_math_cli_writes_exactly_count_rows(count, seed):
    rows = build_and_check("math", count, seed)
    # the first cells reach every template before any gets a second problem
    assert len({r["topic"] for r in rows}) == min(count, 27)


@needs_coq
@pytest.mark.coq
@CLI
@given(count=st.integers(1, 8), seed=st.integers(0, 10**6))
def test_atp_cli_writes_exactly_count_rows(count, seed):
    rows = build_and_check("atp", count, seed)
    assert len({r["topic"] for r in rows}) == min(count, 7)


@needs_sandbox
@CLI
@given(count=st.integers(1, 8), seed=st.integers(0, 10**6))
def test_os_cli_writes_exactly_count_rows(count, seed):
    rows = build_and_check("os", count, seed)
    assert len({r["domain"] for r in rows}) == min(count, 3)


@CLI
@given(count=st.integers(1, 12), seed=st.integers(0, 10**6))
def test_git_cli_writes_exactly_count_rows(count, seed):
    rows = build_and_check("git", count, seed)
    assert len({r["topic"] for r in rows}) == min(count, 9)


@pytest.mark.parametrize("family", ["git", "atp"])
def test_cli_refuses_a_count_beyond_the_family_with_its_maximum(family, tmp_path):
    out = tmp_path / "out"
    done = tasks_cli("build", "--family", family, "--count", "1000000", "--seed", "5", "--out", str(out),
                     "--cache", str(tmp_path / "c.sqlite"))
    assert done.returncode == 2, done.stdout + done.stderr
    most = MOST.search(done.stderr)
    assert most and 1000 < int(most.group(1)) < 1000000, done.stderr
    assert "nothing was written" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


def test_cli_rejects_a_count_below_one(tmp_path):
    done = tasks_cli("build", "--family", "git", "--count", "0", "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "at least 1" in done.stderr and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_math_count_2000_has_no_repeated_prompt(tmp_path):
    t0 = time.perf_counter()
    done = tasks_cli("build", "--family", "math", "--count", "2000", "--seed", "7", "--out", str(tmp_path / "m"),
                     "--cache", str(tmp_path / "c.sqlite"), timeout=1800)
    seconds = time.perf_counter() - t0
    assert done.returncode == 0, done.stderr[-2000:]
    rows = read_task_rows(tmp_path / "m")
    assert len(rows) == 2000 and len({r["prompt"] for r in rows}) == 2000
    per_cell = Counter((r["topic"], r["difficulty"]) for r in rows)
    assert len(per_cell) == 135 and max(per_cell.values()) <= 16       # 14-15 each, small cells' rest spread
    print(f"\nmath --count 2000: {seconds:.1f} s")
