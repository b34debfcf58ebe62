"""The numpy byte walk of ``language._Identifier`` gives py3langid's own feature counts and verdicts
(the import's language identification must not change by being made faster)."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier, visit_counts

from pipeline.snapshot.importers import iter_xml_dump
from pipeline.snapshot.language import SAMPLE_CHARS, _model, page_text
from pipeline.snapshot.page import Page

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikipedia"


@pytest.fixture(scope="module")
def models():
    return _model(), LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)


def _same(fast, plain, text: str) -> None:
    data = plain._encode(text)
    expected = visit_counts(plain.tk_nextmove, plain._rowbase, plain.tk_output, data)
    got = fast.feature_counts(data)
    assert (None if got is None else list(got.items())) == (None if expected is None else list(expected.items()))
    assert fast.classify(text) == plain.classify(text)


@pytest.mark.skipif(not SHARED.is_dir(), reason="no shared sample data")
def test_every_sample_page_gets_py3langids_counts_and_verdict(models):
    texts = [" ".join(page_text(i).split())[:SAMPLE_CHARS]
             for i in iter_xml_dump(SHARED / "enwiki-sample-pages-articles.xml.bz2", "s") if isinstance(i, Page)]
    assert len(texts) == 106
    for text in texts:
        _same(*models, text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300) | st.text(alphabet="abcdefghij ÄäßéЖж東京", max_size=60))
def test_any_text_gets_py3langids_counts_and_verdict(models, text):
    _same(*models, text)
