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
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext
    from pipeline.stages.crawl import _profiles
    from pipeline.world.gazetteer import CityTable

    ctx = StageContext.create(load_settings())
    _profiles(ctx)
    ctx.store.search_index()
    CityTable.load(ctx.settings.derived_dir)
