"""Fixtures several test files share."""
from __future__ import annotations

import locale

import pytest


@pytest.fixture
def ascii_locale():
    """A machine whose locale encoding is ASCII (nothing changes in Python's UTF-8 mode)."""
    old = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    yield
    locale.setlocale(locale.LC_CTYPE, old)


# Seconds each of the longest test modules took (pytest --junitxml, two workers, 2026-11-26): the
# modules are handed to xdist's workers longest first (scripts/test.sh: --dist loadfile
# --no-loadscope-reorder keeps this order), so no long module starts last beside an idle worker.
# A figure out of date costs minutes of balance, never a result; a module not listed goes after.
MODULE_SECONDS = {
    "test_attribute": 44,
    "test_task_counts": 40,
    "test_harbor_export": 38,
    "test_generate_cli": 24,
    "test_os_kinds": 22,
    "test_dask_runner": 19,
    "test_inspect_tasks": 18,
    "test_sandbox": 18,
    "test_faults": 18,
    "test_no_orphans": 18,
    "test_atp_content": 16,
    "test_task_races": 16,
    "test_run_key": 16,
    "test_atp": 15,
    "test_snapshot_importers": 15,
    "test_publish": 15,
    "test_legs": 14,
    "test_derived": 14,
    "test_imported_seeds": 14,
    "test_sandbox_escape": 14,
    "test_os_tasks": 12,
    "test_mcp_server": 11,
    "test_validate_anywhere": 10,
    "test_trajectories": 9,
    "test_acceptance": 9,
    "test_math_competition": 9,
}


def pytest_collection_modifyitems(config, items):
    """Longest modules first (``MODULE_SECONDS``); the order inside a module is kept."""
    def seconds(item) -> int:
        return -MODULE_SECONDS.get(item.path.stem, 0)
    items.sort(key=seconds)
