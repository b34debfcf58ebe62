"""The knowledge-point corpus and its deterministic BM25 search (the math_knowledge_search tool).

The corpus is ``knowledge/*.txt``: blocks separated by blank lines, each with the fields
``id``, ``title``, ``definition``, ``formula``, ``example`` (one ``field: text`` line each).
The id prefix gives the domain (``alg.`` algebra, ``geo.`` geometry, ``nt.`` number theory,
``cmb.`` combinatorics). Ranking is BM25
(rank_bm25) over title (counted twice), definition, formula and example; ties break by id.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from rank_bm25 import BM25Okapi

CORPUS_VERSION = 2
CORPUS_SOURCE = f"legwork knowledge corpus v{CORPUS_VERSION}"
CORPUS_DIR = Path(__file__).parent / "knowledge"
FIELDS = ("id", "title", "definition", "formula", "example")
DOMAINS = {"alg": "algebra", "geo": "geometry", "nt": "number_theory", "cmb": "combinatorics"}
_STOPWORDS = frozenset(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "how", "i", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "what", "when", "which", "with", "find", "given", "use", "using", "get", "compute", "calculate", "value"])
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class KnowledgePoint:
    id: str
    title: str
    domain: str
    definition: str
    formula: str
    example: str

    def as_result(self, score: float) -> dict:
        return {"id": self.id, "title": self.title, "domain": self.domain, "definition": self.definition,
                "formula": self.formula, "example": self.example, "score": score}


def _stem(token: str) -> str:
    """A light plural stemmer, enough to match 'roots' with 'root' and 'triangles' with 'triangle'."""
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


def tokenize(text: str) -> list[str]:
    return [_stem(t) for t in _TOKEN.findall(text.lower()) if t not in _STOPWORDS]


def parse_corpus_text(text: str, origin: str = "corpus") -> list[KnowledgePoint]:
    points = []
    for number, block in enumerate(re.split(r"\n\s*\n", text.strip())):
        fields: dict[str, str] = {}
        for line in block.strip().splitlines():
            key, sep, value = line.partition(":")
            if not sep or key.strip() not in FIELDS:
                raise ValueError(f"{origin}: block {number + 1}: bad line {line!r}")
            fields[key.strip()] = value.strip()
        missing = [f for f in FIELDS if not fields.get(f)]
        if missing:
            raise ValueError(f"{origin}: block {number + 1}: missing {', '.join(missing)}")
        prefix = fields["id"].split(".", 1)[0]
        if prefix not in DOMAINS:
            raise ValueError(f"{origin}: {fields['id']}: id must start with one of "
                             f"{', '.join(p + '.' for p in DOMAINS)}")
        points.append(KnowledgePoint(domain=DOMAINS[prefix], **fields))
    return points


@lru_cache(maxsize=1)
def load_corpus() -> tuple[KnowledgePoint, ...]:
    points: list[KnowledgePoint] = []
    for path in sorted(CORPUS_DIR.glob("*.txt")):
        points.extend(parse_corpus_text(path.read_text(encoding="utf-8"), path.name))
    ids = [p.id for p in points]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate knowledge-point ids: {', '.join(duplicates)}")
    return tuple(sorted(points, key=lambda p: p.id))


@lru_cache(maxsize=1)
def _index():
    points = load_corpus()
    documents = [tokenize(f"{p.title} {p.title} {p.definition} {p.formula} {p.example}") for p in points]
    return points, BM25Okapi(documents)


def point_by_id(point_id: str) -> KnowledgePoint:
    for p in load_corpus():
        if p.id == point_id:
            return p
    raise KeyError(point_id)


def search(query: str, k: int = 3) -> list[dict]:
    """Top-k knowledge points for ``query``: BM25 score descending, then id; scores rounded to 6 places."""
    points, bm25 = _index()
    terms = tokenize(query)
    if not terms:
        return []
    scores = bm25.get_scores(terms)
    ranked = sorted(range(len(points)), key=lambda i: (-round(float(scores[i]), 6), points[i].id))
    return [points[i].as_result(round(float(scores[i]), 6)) for i in ranked[:k] if scores[i] > 0]
