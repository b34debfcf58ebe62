"""A riddle as numbered clues, and the riddle parser: each clue read back, by its kind's own patterns
(``pages``, ``hops``, ``steps``), into the step it stands for (``parse_riddle``, the round trip's
reference parser)."""
from __future__ import annotations

import re

from pipeline.clues.pages import HOP, parse_bridge, split_page_clue
from pipeline.clues.steps import (
    DETOUR_START,
    ROADBLOCK_START,
    parse_detour,
    parse_finish,
    parse_merge,
    parse_roadblock,
)
from pipeline.clues.wide import WIDE_START, parse_wide
from pipeline.model import DETOUR, FINISH_LINE, MERGE, ROADBLOCK, ROUTE_INFO, WIDE

CLUE_LINE = re.compile(r"^(\d+)\. (.*)$", re.DOTALL)   # "3. Work out ..."
# a reference to earlier clues ("clue 3", "clues 2, 4 and 5")
CLUE_REFERENCES = re.compile(r"\bclues? \d+(?:(?:, | and )\d+)*")
# clue references as a paraphrase may write them ("clues 3,5" too): what a paraphrase must keep
_LOOSE_REFERENCES = re.compile(r"clues? ((?:\d+(?:, | and |,)?)+)")


def clue_refs(text: str) -> set[int]:
    """The clue numbers a text refers to, read loosely (an LLM's paraphrase may write "clues 3,5")."""
    return {int(n) for group in _LOOSE_REFERENCES.findall(text) for n in re.findall(r"\d+", group)}


# the start of a numbered clue in a riddle written elsewhere (AAR): clues may be separated by single newlines
_LOOSE_CLUE = re.compile(r"(?m)^\s*(\d+)\.\s+")


def clue_blocks(riddle: str) -> list[str]:
    """A riddle's clues as written: blocks separated by blank lines."""
    return [b.strip() for b in riddle.split("\n\n") if b.strip()]


def clue_lines(riddle: str) -> list[tuple[int, str]]:
    """(number, text with its whitespace runs made single spaces) of every clue; ``ValueError`` when a
    block has no clue number or the clues are not numbered 1..N."""
    out = []
    for block in clue_blocks(riddle):
        m = CLUE_LINE.match(block)
        if not m:
            raise ValueError(f"a riddle line without a clue number: {block[:60]!r}")
        out.append((int(m.group(1)), " ".join(m.group(2).split())))
    if [n for n, _ in out] != list(range(1, len(out) + 1)):
        raise ValueError("clues are not numbered 1..N")
    return out


def numbered_clues(riddle: str) -> list[tuple[int, str]]:
    """Numbered clues ``N. text`` of a riddle written elsewhere (separated by blank lines or single
    newlines), as they are: no renumbering, nothing refused."""
    marks = list(_LOOSE_CLUE.finditer(riddle or ""))
    clues = []
    for k, m in enumerate(marks):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(riddle)
        clues.append((int(m.group(1)), riddle[m.end():end].strip()))
    return clues


UNPARSED = "unparsed"


def parse_clue(text: str) -> dict:
    """The step a clue stands for: ``kind`` (a stop kind, or ``UNPARSED``), ``op`` (the page clue's
    bridge: seed, hop, link_follow, search_query; the roadblock template; the detour transform; the
    merge or finish operation) and ``refs`` (the clues it takes from); a finish line adds ``groups``."""
    unparsed = {"kind": UNPARSED, "op": None, "refs": []}
    if text.startswith(WIDE_START):
        wide = parse_wide(text)
        return {"kind": WIDE, "op": wide[0].domain, "refs": [wide[1]]} if wide else unparsed
    if text.startswith(ROADBLOCK_START):
        readings = parse_roadblock(text)
        return {"kind": ROADBLOCK, "op": readings[0]["op"], "refs": readings[0]["refs"]} if readings else unparsed
    if text.startswith(DETOUR_START):
        detour = parse_detour(text)
        return {"kind": DETOUR, "op": detour[0], "refs": [detour[1]]} if detour else unparsed
    if merge := parse_merge(text):
        return {"kind": MERGE, **merge}
    if finish := parse_finish(text):
        return {"kind": FINISH_LINE, "op": finish["op"] or "sum_mod_10", "refs": sorted(set(finish["refs"])),
                "groups": finish["groups"]}
    parts = split_page_clue(text)
    bridge = parse_bridge(parts[0]) if parts else None
    if bridge is None:
        return unparsed
    op = bridge["bridge"]
    refs = [bridge["from_clue"]] if "from_clue" in bridge else []
    return {"kind": ROUTE_INFO, "op": op if op != HOP else "hop", "refs": refs}


def parse_riddle(riddle: str) -> list[dict]:
    """Reconstruct the steps from the riddle text alone (``parse_clue`` of every clue; a block without
    a clue number is unparsed)."""
    steps = []
    for block in clue_blocks(riddle):
        m = CLUE_LINE.match(block)
        steps.append(parse_clue(m.group(2)) if m else {"kind": UNPARSED, "op": None, "refs": []})
    return steps
