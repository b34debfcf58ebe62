"""The LLM's part in planning and verbalization (used only when an endpoint is configured).

Prompts live in ``prompts/*.j2``; every call goes through the cached ``LLMClient`` (temperature
0), so a re-run replays the same answers. Answers are checked, never trusted: junk or an
answer that breaks a rule rejects the leg with the reason.
"""
from __future__ import annotations

from functools import lru_cache

import jinja2

from pipeline.catalog import roadblock_templates
from pipeline.config import PROJECT_ROOT
from pipeline.expressions import REDUCTIONS
from pipeline.llm import LLMError
from pipeline.stages.base import Rejected
from pipeline.transforms import DETOURS

PROMPTS_DIR = PROJECT_ROOT / "prompts"


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(PROMPTS_DIR)), undefined=jinja2.StrictUndefined,
                              autoescape=False)


def prompt(name: str, **kw) -> str:
    return _env().get_template(name).render(**kw)


def ask_json(llm, text: str, stage: str) -> dict:
    try:
        answer = llm.json_chat([{"role": "user", "content": text}])
    except LLMError as exc:
        raise Rejected(f"{stage}: LLM answer unusable: {exc}") from exc
    if not isinstance(answer, dict):
        raise Rejected(f"{stage}: LLM answer is not a JSON object: {str(answer)[:200]!r}")
    return answer


def plan_route(llm, seed: str, n: int, chains: list[list[str]], describe) -> tuple[str, list[str]]:
    """The LLM picks one of the chains the walk found (issue 21: every page reached through the one before)
    and names its theme; ``describe(title)`` is the description shown for each page."""
    listed = [(t, describe(t)) for chain in chains for t in chain]
    answer = ask_json(llm, prompt("plan_route.j2", seed=seed, n=n, candidates=listed, chains=len(chains)), "plan")
    route, theme = answer.get("route"), answer.get("theme")
    if not isinstance(route, list) or not isinstance(theme, str):
        raise Rejected("plan: LLM route lacks 'route' or 'theme'")
    if route not in chains:
        raise Rejected(f"plan: LLM route {route[:n + 2]!r} is not one of the {len(chains)} chains it was offered")
    return theme, route


def paraphrase(llm, number: int, clue: str, forbidden: list[str]) -> str:
    answer = ask_json(llm, prompt("paraphrase_clue.j2", number=number, clue=clue, forbidden=forbidden), "verbalize")
    text = answer.get("clue")
    if not isinstance(text, str) or not text.strip():
        raise Rejected(f"verbalize: LLM paraphrase of clue {number} has no 'clue' text")
    return " ".join(text.split())


def round_trip(llm, riddle: str) -> list[dict]:
    answer = ask_json(llm, prompt("round_trip.j2", riddle=riddle, templates=sorted(roadblock_templates()),
                                  transforms=sorted(DETOURS), reductions=list(REDUCTIONS)), "verbalize")
    steps = answer.get("steps")
    if not isinstance(steps, list) or not all(isinstance(s, dict) for s in steps):
        raise Rejected("verbalize: LLM round trip has no list of steps")
    out = []
    for s in sorted(steps, key=lambda s: s.get("clue", 0) if isinstance(s.get("clue"), int) else 0):
        uses = s.get("uses") if isinstance(s.get("uses"), list) else []
        out.append({"kind": s.get("kind"), "op": s.get("operation"),
                    "refs": sorted(u for u in uses if isinstance(u, int))})
    return out
