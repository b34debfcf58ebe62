"""The wording of the clues that are no page: roadblocks (``templates/clues/roadblock.j2`` over a
template of ``templates/roadblocks.toml``), detours (``detour.j2`` over a ``transforms.DETOURS``
phrase), merges (``merge.j2``) and the finish line (``finish.j2``), each rendered and read back here."""
from __future__ import annotations

import functools
import re

from pipeline.catalog import roadblock_templates
from pipeline.clues.templates import render
from pipeline.transforms import DETOURS

ROADBLOCK_START, DETOUR_START, MERGE_START, FINISH_START = "Find ", "Work out ", "Combine the two findings", "Finally, "


# ---- roadblocks ---------------------------------------------------------------------------------------------
# how a roadblock names an earlier clue's answer, by the role of the stop that gave it
ROLE_WORD = {"place": "place", "country": "country", "date": "date", "number": "number", "company": "company",
             "coin": "cryptocurrency"}
ROLE_WORDS = "(?:" + "|".join(dict.fromkeys(ROLE_WORD.values())) + ")"
# wording that states which item of a list a chain takes
ORDER_WORDS = ("first", "nearest", "closest", "top", "highest", "lowest", "largest", "smallest")


def input_ref(role: str, clue: int) -> str:
    """An earlier clue's answer as a roadblock's input: "the country that is the answer to clue 3". Not
    "from clue 10" (clue 10 may go to a country's page and ask for another country there; a racer took the
    page's country for it), nor "that clue 10 asks for" (three racers, of races 34, 38 and 50, read it as
    the country whose page clue 10 went to)."""
    return f"the {ROLE_WORD.get(role, 'number')} that is the answer to clue {clue}"


def input_ref_tail(group: str | None = None) -> str:
    """The pattern of an earlier clue's answer after its role word, however a leg of any release wrote it:
    "from clue 3", "that clue 3 asks for", "that is the answer to clue 3" (``input_ref``); the clue's
    number captured, in the named ``group`` if one is given."""
    number = rf"(?P<{group}>\d+)" if group else r"(\d+)"
    return rf"(?:from clue|that clue|that is the answer to clue) {number}(?: asks for)?"


INPUT_REF_TAIL = input_ref_tail()


def roadblock_clue(value: str, fields: dict) -> str:
    """A roadblock's clue: the template's wording ``value`` with its parameters and inputs (``in0``, ...:
    ``input_ref``) filled in."""
    return render("roadblock.j2", phrase=value.format(**fields))


def _param_pattern(ranges: set[str], placeholder: re.Match) -> str:
    """A template's {param} in a clue: a date range's date is captured, a listed value matched."""
    name = placeholder.group(1)
    return rf"(?P<{name}>\d{{4}}-\d\d-\d\d)" if name in ranges else ".+?"


def date_ranges(template: dict) -> set[str]:
    """The template's parameters drawn from a date range (``FIRST..LAST``): a clue states the date."""
    return {k for k, v in template.get("params", {}).items() if isinstance(v, str)}


@functools.cache
def _head(value: str, ranges: frozenset[str]) -> re.Pattern:
    head = re.escape(value)
    head = re.sub(r"\\\{in(\d)\\\}", lambda _: rf"the {ROLE_WORDS} {INPUT_REF_TAIL}", head)
    head = re.sub(r"\\\{(\w+)\\\}", functools.partial(_param_pattern, set(ranges)), head)
    return re.compile(ROADBLOCK_START + head + r"\.")


def roadblock_pattern(template: dict) -> re.Pattern:
    """The pattern (to ``fullmatch``) of every clue a template's wording gives: its inputs' clue numbers
    captured in order, each date-range parameter's date captured by its name, listed values matched."""
    return _head(template["value"], frozenset(date_ranges(template)))


def roadblock_inputs(m: re.Match, template: dict) -> list[int]:
    """The input clue numbers of a ``roadblock_pattern`` match."""
    dates = {m.re.groupindex[r] - 1 for r in date_ranges(template)}
    return [int(g) for k, g in enumerate(m.groups()) if k not in dates]


# an input's reference in a roadblock's clue, any way it is written (``INPUT_REF_TAIL``)
_INPUT_REF = re.compile(rf"the {ROLE_WORDS} {INPUT_REF_TAIL}")


def roadblock_reads(value: str, params: dict, inputs: list[int], text: str) -> bool:
    """Is ``text`` the clue of the wording ``value`` with these parameters and input clues (each input
    referred to either way)? The text's references are written as "§N", the wording's inputs too, and the
    two compared: one fixed pattern instead of one compiled for every call (a run asks thousands)."""
    fields = dict(params)
    for k, i in enumerate(inputs):
        fields[f"in{k}"] = f"§{i}"
    return _INPUT_REF.sub(lambda m: "§" + m.group(1), text) == ROADBLOCK_START + value.format(**fields) + "."


def parse_roadblock(text: str) -> list[dict]:
    """Every template whose wording reads ``text`` (``roadblock_pattern``), by name: ``op`` (the
    template), ``refs`` (the input clues) and ``dates`` (a date-range parameter's date the clue states)."""
    out = []
    for name, template in sorted(roadblock_templates().items()):
        if m := roadblock_pattern(template).fullmatch(text):
            out.append({"op": name, "refs": roadblock_inputs(m, template),
                        "dates": {r: m.group(r) for r in sorted(date_ranges(template))}})
    return out


# ---- detours ---------------------------------------------------------------------------------------------------
def detour_ref(clue: int) -> str:
    return f"the result of clue {clue}"


def detour_clue(name: str, clue: int) -> str:
    """A detour's clue: the transform ``name``'s phrase applied to clue ``clue``'s result."""
    return render("detour.j2", phrase=DETOURS[name].phrase.format(ref=detour_ref(clue)))


def detour_patterns() -> list[tuple[str, re.Pattern]]:
    """(transform, pattern to ``fullmatch`` with the clue number captured), by name."""
    out = []
    for name, d in sorted(DETOURS.items()):
        pattern = re.escape(d.phrase).replace(re.escape("{ref}"), r"the result of clue (\d+)")
        out.append((name, re.compile(DETOUR_START + pattern + r"\.")))
    return out


def parse_detour(text: str) -> tuple[str, int] | None:
    """(transform, clue whose result it takes) of a detour's clue, or None."""
    return next(((name, int(m.group(1))) for name, pattern in detour_patterns() if (m := pattern.fullmatch(text))),
                None)


# ---- merges ----------------------------------------------------------------------------------------------------
def merge_clue(kind: str, a: int, b: int) -> str:
    """A merge of the results of clues ``a`` and ``b``: ``sum`` or ``abs_difference``."""
    return render("merge.j2", kind=kind, a=a, b=b)


def parse_merge(text: str) -> dict | None:
    """``{"op": "sum" | "abs_difference", "refs": [a, b]}`` of a merge's clue, or None."""
    if not text.startswith(MERGE_START):
        return None
    return {"op": "sum" if "add the result" in text else "abs_difference",
            "refs": [int(x) for x in re.findall(r"clue (\d+)", text)]}


# ---- the finish line ------------------------------------------------------------------------------------------
def finish_clue(kind: str, refs: list[int]) -> str:
    """The finish line reducing the results of clues ``refs`` (a two-sided reduction takes the first
    half against the rest)."""
    half = max(1, len(refs) // 2)
    return render("finish.j2", kind=kind, all=refs, left=refs[:half], right=refs[half:] or refs[:half])


FINISH_GROUP = re.compile(r"the results? of clues? ((?:\d+(?:, | and )?)+)")


def finish_groups(text: str) -> list[list[int]]:
    """The groups of clues a finish line names, in order ("the results of clues 2 and 5": [2, 5])."""
    return [[int(x) for x in re.findall(r"\d+", g)] for g in FINISH_GROUP.findall(text)]


def reduction_named(text: str) -> str | None:
    """The finish-line reduction a clue's wording names, or None."""
    if "take the digital root of the total" in text:
        return "digital_root_sum"
    if "multiply those digits" in text:
        return "product_mod_10"
    if "absolute difference" in text:
        return "digital_root_abs_difference" if "digital root" in text else "abs_difference_mod_10"
    if "keep only the last digit" in text:
        return "sum_mod_10"
    return None


def parse_finish(text: str) -> dict | None:
    """``{"op": reduction, "groups": [[clue, ...], ...], "refs": every clue in order}`` of a finish
    line (``op`` None when no reduction reads it), or None."""
    if not text.startswith(FINISH_START):
        return None
    groups = finish_groups(text)
    return {"op": reduction_named(text), "groups": groups, "refs": [r for g in groups for r in g]}
