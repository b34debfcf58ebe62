"""Which language a page is written in, with py3langid (its model ships inside the package).

A snapshot has one language (``manifest["language"]``, "en" unless the build says otherwise); a
page identified as another language is never a seed or a route page (a Norwegian page in a folder
of wikitext once became the seed of English legs). Identification is trusted only on enough text
with a clear verdict; otherwise the page's language is "" (undetermined) and it is kept: a long
foreign name opening an English lead must not cost an English page.
"""
from __future__ import annotations

import threading

import numpy as np
from py3langid.langid import MODEL_DIR, MODEL_FILE, RAW_FLOOR, LanguageIdentifier

MIN_CHARS = 200           # shorter text gives no verdict
MIN_PROBABILITY = 0.9     # normalised probability of the best language
SAMPLE_CHARS = 1000       # the lead is enough: every real sample page and 10^4 synthetic ones get the verdict 3,000 gave

_identifier = None
_lock = threading.Lock()


class _Identifier(LanguageIdentifier):
    """py3langid's identifier with its byte walk in numpy: the same scores, some 3 times faster
    (the walk was a quarter of an import's CPU).

    The model's byte automaton is an Aho-Corasick one (a state is the longest suffix read that is a
    prefix of a feature), so the state after a byte depends only on the last ``depth`` bytes:
    every position's state is found at once by walking ``depth`` bytes from the start state. The
    features come out in the order py3langid's ``visit_counts`` counts them (first occurrence), so
    the scores are summed in the same order: the same floats (tests/test_snapshot_language.py
    checks the counts against ``visit_counts`` on every sample page)."""

    def _arrays(self):
        arrays = self.__dict__.get("_np")
        if arrays is None:
            nm = np.frombuffer(self.tk_nextmove, dtype=np.uint32)    # a view: the model's 39 MB, not a copy
            rowbase = np.asarray(self._rowbase, dtype=np.int64)
            depth = np.full(len(rowbase), -1, dtype=np.int64)
            depth[0], frontier, d = 0, np.zeros(1, dtype=np.int64), 0
            while len(frontier):                 # breadth first: a state's depth is its string's length
                d += 1
                nxt = np.unique(nm[(rowbase[frontier][:, None] + np.arange(256)).ravel()])
                frontier = nxt[depth[nxt] < 0]
                depth[frontier] = d
            arrays = self._np = (nm, rowbase, np.asarray(self.tk_output, dtype=np.int64), int(depth.max()))
        return arrays

    def feature_counts(self, data: bytes) -> dict[int, int] | None:
        """``py3langid.langid.visit_counts`` of ``data``: {feature: count} in first-seen order, or None."""
        found = self._features(data)
        return None if found is None else dict(zip(found[0].tolist(), found[1].tolist(), strict=True))

    def _features(self, data: bytes) -> tuple[np.ndarray, np.ndarray] | None:
        """``feature_counts`` as two arrays (features in first-seen order, their counts), or None."""
        nm, rowbase, output, depth = self._arrays()
        text = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
        n = len(text)
        states = np.zeros(n, dtype=np.int64)
        for k in range(depth):                   # position i reads byte i - depth + 1 + k
            lo = depth - 1 - k
            if lo < n:
                states[lo:] = nm[rowbase[states[lo:]] + text[:n - lo]]
        features = output[states]
        features = features[features >= 0]
        if not len(features):
            return None
        # np.unique's return_index and return_counts by hand (it costs twice as much on these short arrays):
        # a stable sort puts each feature's first position first among its equals
        order = np.argsort(features, kind="stable")
        ordered = features[order]
        starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
        counts = np.diff(np.append(starts, len(ordered)))
        seen = np.argsort(order[starts])          # by first position (all distinct)
        return ordered[starts][seen], counts[seen]

    def _table(self):
        """``nb_ptc`` (float16) as float32, made once. ``_sparse_score``'s matrix product casts the rows it
        gathers to float32 on every call (exactly: every float16 is a float32), which cost more than the
        product itself; gathered from this copy they are the same float32 rows, so the same scores. 57 MB,
        made in ``load`` so that forked workers share it."""
        table = self.__dict__.get("_ptc32")
        if table is None or table[0] is not self.nb_ptc:
            table = self._ptc32 = (self.nb_ptc, np.ascontiguousarray(self.nb_ptc, dtype=np.float32))
        return table[1]

    def _raw_score(self, text):
        found = self._features(text)
        if found is not None:
            # _sparse_score's arithmetic on the same operands (float32 counts, int64 rows), without the
            # dict it takes: one Python int per feature and back
            features, counts = found
            return np.log1p(counts.astype(np.float32)) @ self._table()[features] + self.nb_pc
        fill = 0.0 if self._norm_probs else RAW_FLOOR
        return np.full(len(self.nb_classes), fill, dtype=np.float32)


def _model():
    global _identifier
    with _lock:
        if _identifier is None:
            _identifier = _Identifier.from_modelpath(MODEL_DIR / MODEL_FILE, norm_probs=True)
    return _identifier


def load() -> None:
    """Load the model now (a process pool forked after this shares its pages instead of loading its own)."""
    model = _model()
    model._arrays()
    model._table()


def sample_of(text: str) -> str:
    """What ``identify`` reads of ``text``: its first ``SAMPLE_CHARS`` characters once white space is folded.
    A prefix is folded first (a long page is not split whole): its folded form is a prefix of the whole
    text's, so once it is long enough its first ``SAMPLE_CHARS`` are the whole text's."""
    sample = " ".join(text[:2 * SAMPLE_CHARS].split())
    if len(sample) < SAMPLE_CHARS and len(text) > 2 * SAMPLE_CHARS:
        sample = " ".join(text.split())
    return sample[:SAMPLE_CHARS]


def identify(text: str) -> str:
    """ISO 639-1 code of ``text``'s language, or "" when the text is too short or the verdict unclear."""
    sample = sample_of(text)
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
