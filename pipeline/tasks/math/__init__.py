"""MATH task set: algebra and geometry problems from parameterised sympy families.

``build`` and ``validate`` (``dataset``) are the family entry points used by ``python -m pipeline.tasks``.
The calculator and the knowledge search they check answers with are ``pipeline.mathtools``.
"""
from __future__ import annotations

from pipeline.tasks.math.dataset import MAX_TRACE_CALLS, build, validate

__all__ = ["MAX_TRACE_CALLS", "build", "validate"]
