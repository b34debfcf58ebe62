"""Which language a page is written in, with py3langid (its model ships inside the package).

A snapshot has one language (``manifest["language"]``, "en" unless the build says otherwise); a
page identified as another language is never a seed or a route page (a Norwegian page in a folder
of wikitext once became the seed of English legs). Identification is trusted only on enough text
with a clear verdict; otherwise the page's language is "" (undetermined) and it is kept: a long
foreign name opening an English lead must not cost an English page.
"""
from __future__ import annotations

import threading

from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

MIN_CHARS = 200           # shorter text gives no verdict
MIN_PROBABILITY = 0.9     # normalised probability of the best language
SAMPLE_CHARS = 3000       # the lead and the first sections are enough

_identifier = None
_lock = threading.Lock()


def _model():
    global _identifier
    with _lock:
        if _identifier is None:
            _identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    return _identifier


def identify(text: str) -> str:
    """ISO 639-1 code of ``text``'s language, or "" when the text is too short or the verdict unclear."""
    sample = " ".join(text.split())[:SAMPLE_CHARS]
    if len(sample) < MIN_CHARS:
        return ""
    language, probability = _model().classify(sample)
    return language if probability >= MIN_PROBABILITY else ""


def page_text(page) -> str:
    """What a page is identified by: its lead and section texts."""
    return " ".join([page.lead, *(s.text for s in page.sections)])


def in_language(page, language: str) -> bool:
    """The page may serve a snapshot in ``language`` (its own is that one, or undetermined)."""
    return not page.language or not language or page.language == language
