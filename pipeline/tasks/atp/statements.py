"""Theorems as task material: the topics' seeded streams of statements, distinct up to renaming.

The templates live in ``families.py`` (seven topics), the three provers' text in ``rendering.py``.
Each topic draws from its own seeded stream (``topic_draws``, at most ``MAX_DRAWS`` draws) and a
theorem is new only when its statement differs from every earlier one up to renaming of bound
variables (``statement_key``): the De Morgan lemma over P, Q and the one over R, T are one theorem.
"""
from __future__ import annotations

import random
import re
from collections.abc import Iterator

from pipeline.tasks.atp.families import GENERATORS, TOPICS
from pipeline.tasks.atp.rendering import LEAN_HEADER, Rendering, Theorem
from pipeline.tasks.common import Candidates, cell_rng

LANGUAGES = ("coq", "lean4", "isabelle")
MAX_DRAWS = 3000            # draws per topic; their distinct statements are the topic's space

__all__ = ["GENERATORS", "LANGUAGES", "LEAN_HEADER", "MAX_DRAWS", "TOPICS", "Rendering", "Theorem",
           "generate_theorems", "render", "statement_key", "statement_keys", "theorem_pool", "topic_draws"]


# ---------------------------------------------------------------- distinct statements

_BINDER = {
    "coq": re.compile(r"\b(?:forall|exists|fun)\s+([^,=]+?)\s*(?:,|=>)"),
    "lean4": re.compile(r"(?:∀|∃|\bfun\b|λ)\s*([^,=]+?)\s*(?:,|=>)"),
}
_LEAN_SIGNATURE = re.compile(r"\btheorem\s+\S+\s+(\([^()]*\)(?:\s*\([^()]*\))*)\s*:")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")


def _binder_groups(text: str) -> list[tuple[int, int, list[tuple[list[str], str]]]]:
    """Binder lists as spans: ``x y : T`` -> [(["x", "y"], "T")]; ``(f : A) (l : B)`` -> two parts."""
    parts = re.findall(r"\(([^()]*)\)", text) if text.strip().startswith("(") else [text]
    out = []
    for part in parts:
        names, _, typ = part.partition(":")
        out.append((names.split(), typ.strip()))
    return out


def statement_key(text: str, language: str, name: str) -> str:
    """``text`` with the theorem's name replaced, whitespace collapsed and every bound variable (and
    every universally quantified parameter of a Lean theorem) renamed v1, v2, ... in order of first
    appearance after the binders; names sharing one binder are then listed in order, so
    ``forall P Q : Prop, ~ (Q \\/ P) -> ...`` and ``forall R T : Prop, ~ (R \\/ T) -> ...`` give one key.

    Renaming is scoped to one command: the text is cut at blank lines (the renderings put each
    definition and the theorem in a paragraph of its own), so the ``l`` of the theorem's ``forall l``
    and the ``l`` a definition above it binds are renamed apart."""
    text = re.sub(rf"\b{re.escape(name)}\b", "NAME", text)
    return " ".join(_command_key(chunk, language) for chunk in re.split(r"\n\s*\n", text) if chunk.strip())


def _command_key(text: str, language: str) -> str:
    """One command's key: its bound variables renamed v1, v2, ... (``statement_key``)."""
    spans = []                                   # (start, end, parts, closing) of each binder list
    for m in _BINDER.get(language, re.compile(r"(?!)")).finditer(text):
        spans.append((m.start(1), m.end(1), _binder_groups(m.group(1))))
    if language == "lean4":
        sig = _LEAN_SIGNATURE.search(text)
        if sig:
            spans.append((sig.start(1), sig.end(1), _binder_groups(sig.group(1))))
    spans.sort()
    bound = [n for _, _, parts in spans for names, _ in parts for n in names]
    if not bound:
        return " ".join(text.split())
    body = text
    for start, end, _ in reversed(spans):
        body = body[:start] + " " * (end - start) + body[end:]
    order = []
    for word in _IDENT.findall(body):
        if word in bound and word not in order:
            order.append(word)
    order += [n for n in bound if n not in order]
    new = {old: f"v{i}" for i, old in enumerate(order, 1)}
    rename = (lambda chunk: re.sub(r"[A-Za-z_][A-Za-z0-9_']*", lambda m: new.get(m.group(0), m.group(0)), chunk))
    pieces, last = [], 0
    for start, end, parts in spans:
        pieces.append(rename(text[last:start]))
        rebuilt = [(sorted(new[n] for n in names), typ) for names, typ in parts]
        if len(parts) > 1 or text[start:end].strip().startswith("("):
            pieces.append(" ".join(f"({' '.join(ns)} : {rename(t)})" for ns, t in rebuilt))
        else:
            ns, t = rebuilt[0]
            pieces.append(" ".join(ns) + (f" : {rename(t)}" if t else ""))
        last = end
    pieces.append(rename(text[last:]))
    return " ".join("".join(pieces).split())


def statement_keys(thm: Theorem) -> tuple[str, ...]:
    """What makes a theorem a duplicate: its Coq or its Lean statement up to renaming bound variables."""
    return tuple(f"{lang}:{statement_key(thm.renderings[lang].statement, lang, thm.name)}" for lang in ("coq", "lean4"))


def topic_draws(seed: int, topic: str, max_draws: int = MAX_DRAWS) -> Iterator[tuple[tuple[str, ...], tuple]]:
    """``(keys, draw)`` for each of the topic's draws; ``render(topic, draw, name)`` makes the theorem."""
    rng = cell_rng(seed, "atp", topic)
    for _ in range(max_draws):
        state = rng.getstate()
        yield statement_keys(GENERATORS[topic](rng, f"{topic}_draft")), state


def render(topic: str, draw: tuple, name: str) -> Theorem:
    """The theorem of one draw (``topic_draws``) under its final name."""
    rng = random.Random()
    rng.setstate(draw)
    return GENERATORS[topic](rng, name)


def theorem_pool(seed: int, source_of=None) -> Candidates:
    """Every topic's distinct theorems (as draws), drawn lazily; theorem i of a topic is ``{topic}_{i:03d}``."""
    return Candidates(lambda topic: topic_draws(seed, topic), source_of)


def generate_theorems(count: int, seed: int) -> list[Theorem]:
    """``count`` distinct theorems, topics taken in turn (a topic whose statements are used up is
    skipped); same (count, seed) gives the same list."""
    pool = theorem_pool(seed)
    out: list[Theorem] = []
    taken = dict.fromkeys(TOPICS, 0)
    turn = 0
    while len(out) < count:
        live = [t for t in TOPICS if pool.ensure(t, taken[t] + 1) > taken[t]]
        if not live:
            raise RuntimeError(f"only {len(out)} distinct theorems exist for these generators")
        topic = TOPICS[turn % len(TOPICS)]
        turn += 1
        if topic not in live:
            continue
        i = taken[topic]
        out.append(render(topic, pool.get(topic, i), f"{topic}_{i:03d}"))
        taken[topic] += 1
    return out
