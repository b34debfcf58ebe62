"""The pieces every math problem family is made of.

A family draws parameters, states the problem, and writes a worked solution as a sequence
of ``Solution.step`` calls: each step names the atomic capability it needs and its sub-goal,
carries the value it computes, and may carry a calculator expression or a knowledge search
that the golden trace replays through the tool registry. Because the family computes each
step from the values returned by earlier steps, an error injected at step k (``Solution(inject=...)``)
flows into every later step, just as a real mistake would.
"""
from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from pipeline.mathtools.safe_eval import to_text

CAPABILITIES = ("symbol_recognition", "concept_understanding", "calculation", "spatial_reasoning",
                "formalization", "deductive_reasoning", "modeling", "theorem_application", "self_reflection")

# short names the family modules write their worked solutions with (one per capability)
S, C, K, P, F, D, M, T, V = ("symbol_recognition", "concept_understanding", "calculation", "spatial_reasoning",
                             "formalization", "deductive_reasoning", "modeling", "theorem_application",
                             "self_reflection")

ERROR_TYPES = ("calculation_error", "sign_error", "transcription_error", "formula_error", "omission")
LEVELS = (1, 2, 3, 4, 5)
x, y = sp.symbols("x y")


class NotApplicable(Exception):
    """This error type cannot be injected into this step's value."""


@dataclass
class Step:
    index: int
    capability: str
    goal: str                 # the plan's sub-goal, without values
    text: str                 # the worked step, with values
    value: Any = None
    errors: tuple[str, ...] = ()
    calc: str | None = None   # calculator expression that computes ``value`` (golden trace)
    search: tuple[str, str] | None = None  # (query, knowledge-point id expected in the top 3)


def show(value) -> str:
    if isinstance(value, list):
        return ", ".join(show(v) for v in value)
    if isinstance(value, sp.Equality):
        return f"{to_text(value.lhs)} = {to_text(value.rhs)}"
    return to_text(value)


def _perturb_scalar(value, error_type: str):
    if isinstance(value, sp.Rel) and not isinstance(value, sp.Equality):
        if error_type != "sign_error":
            raise NotApplicable
        return value.reversed.func(value.lhs, value.rhs)   # x < k  ->  x > k
    if not isinstance(value, sp.Basic) or isinstance(value, sp.Rel):
        raise NotApplicable
    if error_type == "sign_error":
        if value == 0:
            raise NotApplicable
        return -value
    if error_type == "calculation_error":
        coeff, rest = value.as_coeff_Mul()
        return (coeff + 1) * rest
    if error_type == "transcription_error":
        if value.is_Integer and abs(value) >= 10:
            digits = str(abs(int(value)))
            if digits[-1] != digits[-2]:
                swapped = int(digits[:-2] + digits[-1] + digits[-2])
                return sp.Integer(swapped if value > 0 else -swapped)
        if value.is_Integer:
            return value + 1
        raise NotApplicable
    raise NotApplicable


def perturb(value, error_type: str, wrong=None):
    """The value a solver would get after making an ``error_type`` mistake at this step."""
    if error_type == "formula_error":
        if wrong is None:
            raise NotApplicable
        return wrong
    if error_type == "omission":
        if isinstance(value, list) and len(value) >= 2:
            return value[:-1]
        raise NotApplicable
    if isinstance(value, (list, tuple)):
        if not value:
            raise NotApplicable
        changed = [_perturb_scalar(value[0], error_type), *value[1:]]
        return changed if isinstance(value, list) else tuple(changed)
    return _perturb_scalar(value, error_type)


class Solution:
    """Records a worked solution; with ``inject=(k, type)`` step k's value is made wrong."""

    def __init__(self, inject: tuple[int, str] | None = None):
        self.steps: list[Step] = []
        self.inject = inject
        self.injected = False

    def step(self, capability: str, goal: str, text: str, value=None, *, errors: tuple[str, ...] = (),
             wrong=None, calc: str | None = None, search: tuple[str, str] | None = None):
        assert capability in CAPABILITIES, capability
        index = len(self.steps)
        if self.inject is not None and self.inject[0] == index:
            if self.inject[1] not in errors:
                raise NotApplicable
            changed = perturb(value, self.inject[1], wrong)
            if _same(changed, value):
                raise NotApplicable
            value, self.injected = changed, True
        self.steps.append(Step(index, capability, goal, text.replace("{v}", show(value)), value,
                               tuple(errors), calc, search))
        return value

    @property
    def plan(self) -> list[dict]:
        return [{"capability": s.capability, "goal": s.goal} for s in self.steps]

    @property
    def capabilities(self) -> list[str]:
        used = {s.capability for s in self.steps}
        return [c for c in CAPABILITIES if c in used]


def _same(a, b) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b)
                and all(_same(p, q) for p, q in zip(a, b)))
    if isinstance(a, sp.Basic) and isinstance(b, sp.Basic):
        if isinstance(a, sp.Rel) or isinstance(b, sp.Rel):
            return a == b
        return sp.simplify(a - b) == 0
    return a == b


@dataclass
class Family:
    """A parameterised problem family for one knowledge point.

    draw(rng, level) -> params (JSON values); prompt(params) -> text;
    solve(params, solution) -> answer (the worked solution, step by step);
    direct(params) -> answer computed straight with sympy (solve, geometry, integrate);
    second_way(params, answer) -> True when an independent method confirms the answer.
    """
    name: str
    domain: str
    knowledge_point: str
    kind: str                       # answer kind, see answers.py
    draw: Callable[[random.Random, int], dict]
    prompt: Callable[[dict], str]
    solve: Callable[[dict, Solution], Any]
    direct: Callable[[dict], Any]
    second_way: Callable[[dict, Any], bool]
    second_way_name: str
    kind_by_level: dict[int, str] = field(default_factory=dict)

    def answer_kind(self, level: int) -> str:
        return self.kind_by_level.get(level, self.kind)


def problem_rng(seed: int, family: str, level: int, index: int, attempt: int) -> random.Random:
    """An independent, order-free random stream per problem (sha256 of its coordinates)."""
    digest = hashlib.sha256(f"{seed}/{family}/{level}/{index}/{attempt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def nonzero(rng: random.Random, lo: int, hi: int) -> int:
    return rng.choice([v for v in range(lo, hi + 1) if v != 0])


def R(value) -> sp.Rational:
    return sp.Rational(value)


def term(coeff, var: str = "x", first: bool = False) -> str:
    """Format coeff*var for prompts: '3x', '- 2x', 'x'."""
    coeff = sp.Rational(coeff)
    sign = "-" if coeff < 0 else ("" if first else "+")
    mag = abs(coeff)
    body = var if mag == 1 and var else (f"{mag}{var}" if mag.q == 1 else f"({mag}){var}")
    return f"{sign} {body}".strip() if not first else (f"-{body}" if coeff < 0 else body)


def const(value, first: bool = False) -> str:
    value = sp.Rational(value)
    if first:
        return str(value)
    return f"- {abs(value)}" if value < 0 else f"+ {value}"
