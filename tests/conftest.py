"""Fixtures several test files share."""
from __future__ import annotations

import atexit
import locale
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# The modules that take longest, longest first (seconds summed over their tests in a default run on
# the 2-core machine, 5 s and more; measured with --junitxml on 2026-12-03). xdist hands each worker whole modules
# (--dist loadfile) in collection order, so these go first and the many short modules fill in at the
# end: no worker sits idle while the other finishes one long module. xdist's own order (most tests
# first, --loadscope-reorder, on by default) put single-test modules of 40 s and more at the very end.
HEAVY_FIRST = (
    "test_attribute", "test_os_kinds", "test_sandbox", "test_inspect_tasks", "test_publish", "test_harbor_export",
    "test_task_races", "test_generate_cli", "test_atp", "test_task_counts", "test_faults", "test_snapshot_stream",
    "test_os_tasks", "test_no_orphans", "test_mcp_server", "test_trajectories", "test_sandbox_escape",
    "test_math_competition", "test_validate_anywhere", "test_race10_defects", "test_derive", "test_consumer_forms",
    "test_tools_cli", "test_git_tasks", "test_legs", "test_search_paging", "test_snapshot_store",
    "test_synthetic_wiki", "test_cli_errors", "test_derived", "test_snapshot_importers", "test_atp_content",
    "test_wide_tools",
)


@pytest.fixture
def ascii_locale():
    """A machine whose locale encoding is ASCII (nothing changes in Python's UTF-8 mode)."""
    old = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    yield
    locale.setlocale(locale.LC_CTYPE, old)


@pytest.fixture(scope="module")
def ctx(tmp_path_factory):
    """A stage context on the embedded snapshot, with a call cache of the test module's own."""
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext
    return StageContext.create(load_settings(cache_path=tmp_path_factory.mktemp("ctx") / "cache.sqlite"))


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session):
    """What depends only on the snapshot and the code (page profiles, the search index, the city
    table) is computed here once, before xdist starts its workers: on a fresh clone every worker and
    CLI the tests start would otherwise compute it at the same time (8 s each) until one had kept it."""
    if hasattr(session.config, "workerinput"):
        return   # an xdist worker: the controller has warmed it
    # what depends on the installed packages alone (the city table) is kept for this run's workers and
    # CLIs in a folder of its own, not in the user's cache folder
    shared = tempfile.mkdtemp(prefix="legwork-test-shared-")
    atexit.register(shutil.rmtree, shared, ignore_errors=True)
    os.environ["LEGWORK_SHARED_CACHE"] = shared
    from pipeline.config import PROJECT_ROOT, load_settings
    from pipeline.stages.base import StageContext
    from pipeline.stages.crawl import _profiles

    # the search index and the city table (~6 s on a fresh clone) in a process beside the page profiles
    # (~10 s), which read neither: the other core would otherwise sit idle until the workers start
    beside = subprocess.Popen([sys.executable, "-c", _WARM_BESIDE], cwd=PROJECT_ROOT)
    try:
        _profiles(StageContext.create(load_settings()))
    finally:
        if beside.wait() != 0:
            raise pytest.UsageError(f"warming the search index and the city table failed (exit {beside.returncode})")


_WARM_BESIDE = """
from pipeline.config import load_settings
from pipeline.stages.base import StageContext
from pipeline.world.gazetteer import CityTable

ctx = StageContext.create(load_settings())
ctx.store.search_index()
CityTable.load(ctx.settings.derived_dir)
"""


def pytest_configure(config):
    # keep the collection order below (heaviest modules first) instead of xdist's most-tests-first
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """Heaviest modules first (HEAVY_FIRST), the rest after them in their usual order; the tests of a
    module keep their order."""
    rank = {name: n for n, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).stem, len(rank)))
