"""MATH task set: algebra and geometry problems from parameterised sympy families.

``build`` and ``validate`` are the family entry points used by ``python -m pipeline.tasks``;
they import the generator lazily so that the calculator backend can import ``safe_eval``
without loading every problem family.
"""
from __future__ import annotations

# The most tool calls (calculator and knowledge searches) a golden trace may hold. The longest the
# families can make: 25 (divisors of an lcm, level 5: two numbers <= 6000 whose Euclidean algorithm takes
# 12 divisions, e.g. 3952 and 5046; found by enumerating every pair the level draws), then committee
# counting level 5 (22). ``realise`` refuses a problem above it, so the agents' math step budget
# (``pipeline.agents.tasks.MATH_STEPS``, derived from it) always holds the longest golden trace.
MAX_TRACE_CALLS = 25


def build(count, seed, out_dir, toolbox):
    from pipeline.tasks.math.dataset import build as _build
    return _build(count, seed, out_dir, toolbox)


def validate(rows, toolbox):
    from pipeline.tasks.math.dataset import validate as _validate
    return _validate(rows, toolbox)
