"""What depends only on the snapshot and the code is computed once and kept on disk
(``StageContext.derived``): a second process loads it, a code change or a broken file computes anew."""
from __future__ import annotations

import dataclasses
import shutil

from pipeline.config import load_settings
from pipeline.stages import base
from pipeline.stages.base import StageContext


def _context(tmp_path, **overrides) -> StageContext:
    settings = dataclasses.replace(load_settings(cache_path=tmp_path / "cache.sqlite"),
                                   derived_dir=tmp_path / "derived", **overrides)
    return StageContext.create(settings)


def test_a_second_context_loads_what_the_first_computed(tmp_path):
    calls = []
    first = _context(tmp_path).derived("numbers", lambda: calls.append(1) or {"a": (1, 2)})
    second = _context(tmp_path).derived("numbers", lambda: calls.append(2) or {"a": "recomputed"})
    assert first == second == {"a": (1, 2)}
    assert calls == [1]
    assert len(list((tmp_path / "derived").glob("numbers-*.pickle"))) == 1


def test_a_code_change_computes_anew(tmp_path):
    _context(tmp_path).derived("numbers", lambda: "old code")
    templates = tmp_path / "templates"   # a copy of the templates with one edited: another code version
    shutil.copytree(load_settings().templates_dir, templates)
    (templates / "clues" / "hop.j2").write_text((templates / "clues" / "hop.j2").read_text() + "\n")
    assert _context(tmp_path, templates_dir=templates).derived("numbers", lambda: "new code") == "new code"
    assert len(list((tmp_path / "derived").glob("numbers-*.pickle"))) == 2


def test_another_tool_world_computes_anew(tmp_path):
    """Facts name countries by the tool world's tables: another world (one file edited) is another key."""
    _context(tmp_path).derived("numbers", lambda: "first world")
    world = tmp_path / "world"
    shutil.copytree(load_settings().world_dir, world)
    (world / "SOURCES.md").write_text((world / "SOURCES.md").read_text() + "\nedited\n")
    assert _context(tmp_path, world_dir=world).derived("numbers", lambda: "second world") == "second world"
    assert _context(tmp_path).derived("numbers", lambda: "again") == "first world"


def test_a_broken_file_is_computed_again(tmp_path):
    _context(tmp_path).derived("numbers", lambda: [1, 2, 3])
    [path] = (tmp_path / "derived").glob("numbers-*.pickle")
    path.write_bytes(b"not a pickle")
    assert _context(tmp_path).derived("numbers", lambda: [4]) == [4]
    assert _context(tmp_path).derived("numbers", lambda: [5]) == [4]


def test_page_profiles_loaded_equal_those_computed():
    """The profiles kept (the checkout's derived data, as every run loads them) hold every page of the
    snapshot's language, each equal to its profile computed afresh (a sample of 400 pages)."""
    import random

    from pipeline.snapshot.language import in_language
    from pipeline.stages.crawl import _profiles, profile_of
    ctx = StageContext.create(load_settings())
    loaded = _profiles(ctx)
    titles = sorted(ctx.store.titles())
    assert len(loaded) > 9000 and set(loaded) <= set(titles)
    for title in random.Random(7).sample(titles, 400):
        page = ctx.page(title)
        if page is None or not in_language(page, ctx.store.language):
            assert title not in loaded
        else:
            assert loaded[title] == profile_of(page, ctx), title


def test_parsed_pages_are_kept_up_to_the_bound(tmp_path, monkeypatch):
    """``StageContext.page`` parses a page once and keeps at most ``PAGE_CACHE`` of them, oldest out."""
    monkeypatch.setattr(base, "PAGE_CACHE", 3)
    ctx = _context(tmp_path)
    titles = ctx.store.titles()[:5]
    first = ctx.page(titles[0])
    assert ctx.page(titles[0]) is first and first == ctx.store.get(titles[0])
    for title in titles[1:]:
        ctx.page(title)
    assert list(ctx._pages) == titles[2:]          # the first two went out, in the order they came
    assert ctx.page(titles[0]) == first and ctx.page(titles[0]) is not first
    assert ctx.page("No such page, surely") is None


def test_the_city_table_kept_is_the_one_read_from_the_package(tmp_path):
    """The gazetteer's GeoNames columns and name index, kept as an .npz: every column and the index
    equal to those read from the package (None states kept apart from empty ones); a broken file is
    read again from the package and replaced."""
    import numpy as np

    from pipeline.world.gazetteer import CityTable

    fresh = CityTable.from_package()
    CityTable.load(tmp_path)                                   # computes and keeps
    [path] = tmp_path.glob("cities-*.npz")
    kept = CityTable.load(tmp_path)                            # loads
    for column in ("names", "population", "country_code", "state", "county", "by_name"):
        assert getattr(kept, column) == getattr(fresh, column), column
    assert np.array_equal(kept.lat, fresh.lat) and np.array_equal(kept.lng, fresh.lng)
    assert None in fresh.state and kept.by_name["berlin"][0] == fresh.names.index("Berlin")
    path.write_bytes(b"broken")
    again = CityTable.load(tmp_path)
    assert again.by_name == fresh.by_name and np.load(path)["lat"].shape == fresh.lat.shape


def test_the_city_table_is_shared_between_derived_folders(tmp_path, monkeypatch):
    """The table depends on the package alone: a new derived folder (a new snapshot) reads it from the
    user's cache folder and keeps it too, and a run with no derived folder reads it there as well. The
    shared copy here is marked (one name changed), so where each table came from shows."""
    from pipeline.world.gazetteer import CityTable

    monkeypatch.setenv("LEGWORK_SHARED_CACHE", str(tmp_path / "shared"))
    first = CityTable.load(tmp_path / "one")                  # kept in the folder and in the shared one
    [shared] = (tmp_path / "shared").glob("cities-*.npz")
    assert (tmp_path / "one" / shared.name).exists()
    first.names[0] = "Marked"
    first.keep(shared)
    assert CityTable.load(tmp_path / "two").names[0] == "Marked"      # read from the shared copy ...
    assert CityTable.load(tmp_path / "two").names[0] == "Marked"      # ... and kept in the new folder
    assert (tmp_path / "two" / shared.name).exists()
    assert CityTable.load(None).names[0] == "Marked"
    assert CityTable.load(tmp_path / "one").names[0] != "Marked"      # a folder's own copy comes first
    shared.unlink()
    CityTable.load(tmp_path / "one")                                  # and is shared when no copy is
    assert shared.exists() and CityTable.load(None).names[0] != "Marked"


def test_a_user_without_a_home_folder_keeps_the_city_table_per_derived_folder(tmp_path, monkeypatch):
    """No HOME and no password entry (a container's numeric user): no shared copy, no error."""
    from pathlib import Path

    from pipeline.world.gazetteer import CityTable

    def homeless():
        raise RuntimeError("Could not determine home directory.")
    for name in ("LEGWORK_SHARED_CACHE", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(homeless))
    assert CityTable.load(tmp_path).by_name["berlin"]
    assert list(tmp_path.glob("cities-*.npz"))
