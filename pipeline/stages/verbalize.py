"""Stage 8, verbalize: the clue envelope, then acceptance by a solver that sees only the riddle.

Clues come from jinja2 templates in ``templates/clues/``: one clue per stop, earlier results
named by clue number, pages described by what they are (short description, infobox type),
never by title. Acceptance hands the riddle and the seed URL, nothing else, to
``pipeline.agents.solver``: it follows the clues through the tools and must reach exactly one
answer, y*. A clue with two readings (two linked pages fit and carry the field, ...) rejects the
leg as ambiguous.

With an LLM configured, clues are paraphrased and the LLM must reconstruct the steps from the
paraphrased riddle (``parse_riddle``'s alignment, documented in the README): an extra check.
"""
from __future__ import annotations

import re
from functools import lru_cache

import jinja2

from pipeline import expressions
from pipeline.catalog import TEMPLATES_DIR, roadblock_templates
from pipeline.model import DETOUR, FINISH_LINE, LINK_FOLLOW, MERGE, ROADBLOCK, ROUTE_INFO, Clue, Leg, PageWording, Stop
from pipeline.snapshot.page import infobox_kind, name_pattern
from pipeline.stages import llm_steps
from pipeline.stages.base import Rejected, StageContext, rng_for
from pipeline.tools.spec import TOOL_NAMES
from pipeline.transforms import DETOURS, DetourError, apply_detour

ACCEPT_ALIGNMENT = 0.7
ROLE_WORD = {"place": "place", "country": "country", "date": "date", "number": "number"}


@lru_cache(maxsize=2)
def _env(templates_dir: str) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(templates_dir), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=False)


def render(name: str, **kw) -> str:
    return " ".join(_env(str(TEMPLATES_DIR / "clues")).get_template(name).render(**kw).split())


# ---- leak control -----------------------------------------------------------------------------
def page_names(title: str, ctx: StageContext) -> set[str]:
    """Every name a page goes by: its title, the title without its parenthesised disambiguation
    ("Gone with the Wind (film)" -> "Gone with the Wind"), its redirect aliases (likewise) and its
    infobox's ``name``. Plurals and possessives of each are matched by ``find_leak``."""
    names = {title, *ctx.store.aliases(title)}
    page = ctx.page(title)
    if page is not None:
        named = page.field("name")
        if named is not None and named.text and len(named.text) <= 80:
            names.add(named.text.strip())
    names |= {_DISAMBIGUATION.sub("", n).strip() for n in names}
    return {n for n in names if len(n) >= 3}


_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)\s*$")


def forbidden_names(leg: Leg, ctx: StageContext) -> list[str]:
    """Every name of every page on the leg except the seed (``page_names``), longest first."""
    names: set[str] = set()
    for s in leg.stops:
        if s.kind == ROUTE_INFO and s.page_title and s.page_title != leg.seed_title:
            names |= page_names(s.page_title, ctx)
    return sorted(names, key=lambda n: (-len(n), n))


def find_leak(text: str, names: list[str]) -> str | None:
    for name in names:
        if re.search(name_pattern(name), text, flags=re.IGNORECASE):
            return name
    return None


def mask_names(text: str, names: list[str]) -> str:
    for name in names:
        text = re.sub(name_pattern(name), "[...]", text, flags=re.IGNORECASE)
    return text


def circumlocution(stop: Stop, names: list[str]) -> str:
    """What the page is about, in words that name no leg page."""
    options = []
    wording = stop.wording or PageWording()
    desc = (wording.description or "").strip().rstrip(".")
    if desc and len(desc) <= 120:
        options.append(f'the page whose short description reads "{desc}"')
    kind = infobox_kind(wording.infobox_type)
    if kind and re.fullmatch(r"[a-z][a-z ]{2,40}", kind):
        options.append(f"a page about a subject whose infobox is of the '{kind}' kind")
    for option in options:
        if not find_leak(option, names + [stop.page_title or ""]):
            return option
    raise Rejected(f"verbalize: no title-free description for stop {stop.index}")


# ---- clues --------------------------------------------------------------------------------------
def ask_text(stop: Stop, names: list[str]) -> str:
    ex = stop.extraction
    if ex.source == "infobox":
        return render("ask.j2", source="infobox", value_type=stop.value_type, label=stop.fact.label,
                      role=stop.fact.role, rounded=False, section=None, sentence=None)
    from pipeline.execute import numbers_in
    nums = numbers_in(ex.sentence)
    target = nums[ex.number_index]
    pos = -1
    for n, m in enumerate(re.finditer(re.escape(target), ex.sentence)):
        pos = m.start()
        break
    sentence = ex.sentence[:pos] + "[?]" + ex.sentence[pos + len(target):]
    sentence = mask_names(sentence, names + [stop.page_title or ""])
    return render("ask.j2", source=ex.source, value_type="number", label=None, role=None, rounded=False,
                  section=ex.section, sentence=sentence)


def input_phrase(leg: Leg, i: int) -> str:
    s = leg.stops[i]
    word = s.fact.role if s.kind == ROUTE_INFO and s.fact else "number"
    if s.kind == ROUTE_INFO and s.value_type == "number":
        word = "number"
    return f"the {ROLE_WORD.get(word, 'number')} from clue {i + 1}"


def clue_for(leg: Leg, stop: Stop, names: list[str], variant: int) -> str:
    if stop.kind == ROUTE_INFO:
        t = stop.transition
        return render("page.j2", first=stop.index == 0, bridge=t.kind if t else LINK_FOLLOW,
                      from_clue=(t.from_stop + 1) if t and t.from_stop is not None else 1,
                      circ=circumlocution(stop, names) if stop.index else "", ask=ask_text(stop, names),
                      variant=variant)
    if stop.kind == ROADBLOCK:
        fields = dict(stop.roadblock.params)
        for n, i in enumerate(stop.roadblock.inputs):
            fields[f"in{n}"] = input_phrase(leg, i)
        return render("roadblock.j2", phrase=stop.description.format(**fields))
    if stop.kind == DETOUR:
        return render("detour.j2", phrase=DETOURS[stop.transform].phrase.format(ref=f"the result of clue {stop.source_stop + 1}"))
    if stop.kind == MERGE:
        a, b = stop.depends_on
        return render("merge.j2", kind=stop.operation, a=a + 1, b=b + 1)
    refs = [i + 1 for i in expressions.references(stop.expression)]
    half = max(1, len(refs) // 2)
    return render("finish.j2", kind=stop.operation, all=refs, left=refs[:half], right=refs[half:] or refs[:half])


# ---- round trip ---------------------------------------------------------------------------------
CLUE_LINE = re.compile(r"^(\d+)\. (.*)$")
REF = re.compile(r"clues? ((?:\d+(?:, | and )?)+)")


def _numbers(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"\d+", text)]


def _template_patterns() -> list[tuple[str, re.Pattern]]:
    out = []
    for name, t in sorted(roadblock_templates().items()):
        pattern = re.escape(t["value"])
        pattern = re.sub(r"\\\{in\d\\\}", r"the \\w+ from clue (\\d+)", pattern)
        pattern = re.sub(r"\\\{\w+\\\}", r".+?", pattern)
        out.append((name, re.compile("^Find " + pattern + r"\.$")))
    return out


def _detour_patterns() -> list[tuple[str, re.Pattern]]:
    out = []
    for name, d in sorted(DETOURS.items()):
        pattern = re.escape(d.phrase).replace(re.escape("{ref}"), r"the result of clue (\d+)")
        out.append((name, re.compile("^Work out " + pattern + r"\.$")))
    return out


def parse_riddle(riddle: str) -> list[dict]:
    """Reconstruct the steps from the riddle text alone."""
    steps = []
    templates, detours = _template_patterns(), _detour_patterns()
    for block in [b.strip() for b in riddle.split("\n\n") if b.strip()]:
        m = CLUE_LINE.match(block)
        if not m:
            steps.append({"kind": "unparsed", "op": None, "refs": []})
            continue
        text = m.group(2)
        step = {"kind": "unparsed", "op": None, "refs": []}
        if text.startswith(("Start on", "Begin at", "Your journey starts")):
            step = {"kind": ROUTE_INFO, "op": "seed", "refs": []}
        elif re.match(r"^(From|On|Leave) the page of clue (\d+)", text):
            step = {"kind": ROUTE_INFO, "op": LINK_FOLLOW, "refs": [int(re.search(r"clue (\d+)", text).group(1))]}
        elif text.startswith(("Search the web", "Look up, with a search", "Use a web search")):
            step = {"kind": ROUTE_INFO, "op": "search_query", "refs": []}
        elif text.startswith("Find "):
            for name, pat in templates:
                mm = pat.match(text)
                if mm:
                    step = {"kind": ROADBLOCK, "op": name, "refs": [int(g) for g in mm.groups()]}
                    break
        elif text.startswith("Work out "):
            for name, pat in detours:
                mm = pat.match(text)
                if mm:
                    step = {"kind": DETOUR, "op": name, "refs": [int(mm.group(1))]}
                    break
        elif text.startswith("Combine the two findings"):
            refs = [int(x) for x in re.findall(r"clue (\d+)", text)]
            step = {"kind": MERGE, "op": "sum" if "add the result" in text else "abs_difference", "refs": refs}
        elif text.startswith("Finally, "):
            step = _parse_finish(text)
        steps.append(step)
    return steps


def _parse_finish(text: str) -> dict:
    groups = [_numbers(g) for g in re.findall(r"(?:the results? of clues? )([\d, and]+)", text)]
    from pipeline.agents.solver import reduction_named
    kind = reduction_named(text) or "sum_mod_10"
    refs = sorted({n for g in groups for n in g})
    return {"kind": FINISH_LINE, "op": kind, "refs": refs, "groups": groups}


def expected_steps(leg: Leg) -> list[dict]:
    out = []
    for s in leg.stops:
        if s.kind == ROUTE_INFO:
            if s.index == 0:
                out.append({"kind": ROUTE_INFO, "op": "seed", "refs": []})
            elif s.transition.kind == LINK_FOLLOW:
                out.append({"kind": ROUTE_INFO, "op": LINK_FOLLOW, "refs": [s.transition.from_stop + 1]})
            else:
                out.append({"kind": ROUTE_INFO, "op": "search_query", "refs": []})
        elif s.kind == ROADBLOCK:
            out.append({"kind": ROADBLOCK, "op": s.template, "refs": [i + 1 for i in s.roadblock.inputs]})
        elif s.kind == DETOUR:
            out.append({"kind": DETOUR, "op": s.transform, "refs": [s.source_stop + 1]})
        elif s.kind == MERGE:
            out.append({"kind": MERGE, "op": s.operation, "refs": [i + 1 for i in s.depends_on]})
        else:
            out.append({"kind": FINISH_LINE, "op": s.operation, "refs": [i + 1 for i in expressions.references(s.expression)]})
    return out


def alignment(parsed: list[dict], expected: list[dict]) -> float:
    if not expected:
        return 0.0
    score = 0.0
    for n, exp in enumerate(expected):
        got = parsed[n] if n < len(parsed) else {"kind": None, "op": None, "refs": None}
        score += (got["kind"] == exp["kind"]) / 3 + (got["op"] == exp["op"]) / 3 + (got["refs"] == exp["refs"]) / 3
    return score / max(len(expected), len(parsed))


def implied_passcode(parsed: list[dict], leg: Leg) -> int | None:
    """Recompute y* from the parsed steps, taking world facts (pages, tool results) from the golden trace."""
    values: dict[int, int] = {}
    try:
        for n, step in enumerate(parsed, start=1):
            golden = leg.stops[n - 1].value if n - 1 < len(leg.stops) else None
            if step["kind"] in (ROUTE_INFO, ROADBLOCK):
                values[n] = golden
            elif step["kind"] == DETOUR:
                values[n] = apply_detour(step["op"], values[step["refs"][0]])
            elif step["kind"] == MERGE:
                a, b = (values[r] for r in step["refs"])
                values[n] = a + b if step["op"] == "sum" else abs(a - b)
            elif step["kind"] == FINISH_LINE:
                refs = step["refs"]
                expr = expressions.reduction_expression(step["op"], refs)
                return expressions.evaluate(expr, {r: values[r] for r in refs})
    except (KeyError, IndexError, TypeError, DetourError, ValueError, expressions.ExpressionError):
        return None
    return None


def _paraphrased(llm, leg: Leg, clue: Clue, names: list[str]) -> Clue:
    """The LLM's wording when it keeps the clue's references and leaks nothing; else the template's."""
    text = llm_steps.paraphrase(llm, clue.number, clue.text, names)
    ok = (llm_steps.clue_refs(text) == llm_steps.clue_refs(clue.text) and not find_leak(text, names)
          and not any(t in text for t in TOOL_NAMES))
    if not ok:
        leg.metadata.setdefault("paraphrase_fallbacks", []).append(clue.number)
        return clue
    return Clue(number=clue.number, stop=clue.stop, text=text)


# ---- the stage ----------------------------------------------------------------------------------
def run(leg: Leg, ctx: StageContext) -> Leg:
    rng = rng_for(leg, "verbalize")
    names = forbidden_names(leg, ctx)
    leg.clues = [Clue(number=s.index + 1, stop=s.index, text=clue_for(leg, s, names, rng.randrange(3))) for s in leg.stops]
    riddle = leg.riddle
    leak = find_leak(riddle, names)
    if leak:
        raise Rejected(f"verbalize: the riddle names the page title {leak!r}")
    tool = next((t for t in TOOL_NAMES if t in riddle), None)
    if tool:
        raise Rejected(f"verbalize: the riddle names the tool {tool!r}")
    from pipeline.agents.solver import AMBIGUOUS, RiddleView, solve  # the solver builds chains with stages.build

    # Acceptance: a solver that sees only the riddle, the seed URL and the tools must reach exactly
    # one answer, and it must be y*. It never reads the stops, so it checks what it does not build.
    solution = solve(RiddleView(riddle=riddle, seed_url=leg.seed_url), ctx.toolbox)
    leg.metadata["solver"] = {"status": solution.status, "answer": solution.answer, "calls": len(solution.calls)}
    if solution.status == AMBIGUOUS:
        raise Rejected(f"verbalize: the riddle is ambiguous: {solution.reason} "
                       f"(candidates: {'; '.join(next(iter(solution.candidates.values()), []))})")
    if not solution.solved:
        raise Rejected(f"verbalize: the riddle alone does not solve: {solution.reason}")
    if solution.answer != leg.passcode:
        raise Rejected(f"verbalize: the riddle alone gives {solution.answer}, the leg's passcode is {leg.passcode}")
    if ctx.llm is not None:  # an extra check: paraphrase each clue, then let the LLM reconstruct the steps
        leg.clues = [_paraphrased(ctx.llm, leg, c, names) for c in leg.clues]
        parsed = llm_steps.round_trip(ctx.llm, leg.riddle)
        score = alignment(parsed, expected_steps(leg))
        implied = implied_passcode(parsed, leg)
        leg.metadata["round_trip"] = {"alignment": round(score, 4), "implied_passcode": implied, "parser": "llm"}
        if score < ACCEPT_ALIGNMENT:
            raise Rejected(f"verbalize: round-trip alignment {score:.2f} < {ACCEPT_ALIGNMENT}")
        if implied != leg.passcode:
            raise Rejected(f"verbalize: the riddle implies {implied}, the leg's passcode is {leg.passcode}")
    return leg
