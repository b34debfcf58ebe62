"""Page language at import: a page in another language than the snapshot's is recorded in the build
report and is never a seed or a route page (a Norwegian page from a folder of wikitext once became
the seed of English legs: "Den 1. oktober [?] vart [...] fusjonert med Norsk Hydro ...")."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.config import load_settings
from pipeline.model import Leg
from pipeline.snapshot import language
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.language import identify
from pipeline.snapshot.store import SnapshotStore
from pipeline.stages import crawl
from pipeline.stages.base import StageContext

FIXTURES = Path(__file__).parent / "fixtures" / "snapshot"

HARBOUR = """{{Infobox settlement
| name = Nordvik Harbour
| population_total = 12,345
| elevation_m = 12
}}
'''Nordvik Harbour''' is a small port town on the western coast, known for its fishing fleet, its old
wooden warehouses and the oil company [[Statoil]] that once had offices by the quay. The town lies near
[[Testville]] and the lake [[Mountain Lake]], and ferries leave every hour for the islands to the west.

== History ==
The harbour grew in the nineteenth century when the herring trade brought merchants from the south.
"""

STATOIL = """{{Infobox company
| name = Statoil
| founded = 1972
| num_employees = 20,000
}}
'''Statoil''' var eit norsk oljeselskap. Den 1. oktober 2007 vart Statoil fusjonert med Norsk Hydro si
avdeling for petroleumsverksemd, og det nye selskapet fekk namnet StatoilHydro. Selskapet hadde
hovudkontor i Stavanger og dreiv verksemd i mange land, mellom anna i [[Testville]] og ved [[Nordvik Harbour]].

== Historie ==
Selskapet vart skipa av Stortinget i 1972 og var heilt eigd av staten fram til 2001.
"""


def test_identification_needs_enough_text_and_a_clear_verdict():
    assert identify("Statoil var eit norsk oljeselskap.") == ""          # too short to trust
    assert identify(STATOIL) in ("nn", "no", "nb")
    assert identify(HARBOUR) == "en"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    root = tmp_path_factory.mktemp("lang")
    pages = root / "pages"
    pages.mkdir()
    (pages / "Nordvik-Harbour.txt").write_text(HARBOUR, encoding="utf-8")
    (pages / "Statoil.txt").write_text(STATOIL, encoding="utf-8")
    out = root / "snap"
    build_snapshot([FIXTURES / "tiny_dump.xml.bz2", FIXTURES / "wikitext", pages], out)
    return out


def test_the_build_report_counts_pages_in_another_language(snapshot):
    manifest = json.loads((snapshot / "manifest.json").read_text())
    report = json.loads((snapshot / "build_report.json").read_text())
    assert manifest["language"] == "en" and manifest["report"]["other_language"] == 1
    assert [d["title"] for d in report["other_language"]] == ["Statoil"]
    store = SnapshotStore.open(snapshot)
    assert store.get("Statoil").language in ("nn", "no", "nb") and store.get("Nordvik Harbour").language == "en"


def test_a_page_in_another_language_is_never_a_seed_or_a_route_page(snapshot, tmp_path):
    ctx = StageContext.create(load_settings(snapshot_dir=snapshot, cache_path=tmp_path / "cache.sqlite"))
    assert "Statoil" not in crawl.seed_candidates(ctx)
    leg = crawl.run(Leg("l1", "hard", "linear", 1, "Nordvik Harbour", ""), ctx)
    reached = {title for title, _ in leg.crawl.pages}
    assert "Testville" in reached and "Statoil" not in reached
    assert leg.crawl.skipped_pages["Statoil"].startswith("in another language")
    with pytest.raises(Exception, match="another language"):
        crawl.run(Leg("l2", "hard", "linear", 1, "Statoil", ""), ctx)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab \n\t\u00a0", max_size=80), st.integers(min_value=1, max_value=12))
def test_the_sample_is_the_whole_texts_folded_white_space_cut(text, chars):
    """``identify`` folds a prefix of a long page, not the page: the sample must be the one folding the whole
    text gives (a run of white space longer than the prefix included)."""
    old = language.SAMPLE_CHARS
    language.SAMPLE_CHARS = chars
    try:
        assert language.sample_of(text) == " ".join(text.split())[:chars]
    finally:
        language.SAMPLE_CHARS = old
