"""Reference answers as JSON, and checking a candidate by value (never by string equality).

Kinds:
  number      a real number; equal if sympy proves the difference zero, or numerically within
              a relative 1e-6 (or within half a unit of the last decimal the candidate gives, when
              it gives two or more decimals: '28.27' is accepted for 9*pi)
  set         roots in any order, e.g. '[-1, 5/2]' (a lone number is a one-element set)
  tuple       ordered values, e.g. '(2, 3)'
  equation    an equation such as 'y = 2*x + 1'; equal when both sides' differences are proportional
  inequality  a condition on x such as 'x < -4' or '-2 < x < 3'; equal when the solution sets agree
  factored    a product equal to the reference that is factored as far (each factor irreducible)
"""
from __future__ import annotations

import re

import sympy as sp

from pipeline.mathtools.safe_eval import CalcError, parse, run_bounded, to_numeric, to_text

KINDS = ("number", "set", "tuple", "equation", "inequality", "factored")
REL_TOL = 1e-6
_DECIMALS = re.compile(r"\d\.(\d+)")


def ordered(values) -> list:
    """A set's members in numeric order (then sympy's order), so the stored text is canonical."""
    def key(v):
        number = to_numeric(v) if isinstance(v, sp.Basic) else None
        return (0, number, sp.default_sort_key(v)) if number is not None else (1, 0.0, sp.default_sort_key(v))
    return sorted(values, key=key)


def answer_text(value, kind: str) -> str:
    if kind == "equation":
        return f"{to_text(value.lhs)} = {to_text(value.rhs)}"
    if kind == "set":
        return to_text(ordered(value))
    if kind == "tuple":
        return to_text(tuple(value))
    return to_text(value)


def answer_json(value, kind: str) -> dict:
    numeric = None if kind in ("equation", "inequality", "factored") else to_numeric(
        ordered(value) if kind == "set" else value)
    return {"kind": kind, "value": answer_text(value, kind), "numeric": numeric}


def reference_value(answer: dict):
    """The sympy value of a stored reference answer."""
    value = parse(answer["value"], keep_products=(answer["kind"] == "factored"))
    if answer["kind"] in ("set", "tuple"):
        return list(value) if isinstance(value, (list, tuple)) else [value]
    return value


def _numbers_equal(a, b, tolerance: float | None = None) -> bool:
    if not (isinstance(a, sp.Basic) and isinstance(b, sp.Basic) and a.is_number and b.is_number):
        return False
    try:
        diff = sp.N(a - b, 30)
        scale = max(1.0, abs(float(sp.N(b, 30))))
        if abs(complex(diff)) <= max(REL_TOL * scale, tolerance or 0.0):
            return True
    except (TypeError, ValueError):
        return False
    return sp.simplify(a - b) == 0


def _tolerance_of(candidate: str) -> float | None:
    decimals = [len(m) for m in _DECIMALS.findall(candidate)]
    if decimals and min(decimals) >= 2:
        return 0.5 * 10 ** (-min(decimals)) + 1e-12
    return None


def _is_fully_factored(expr) -> bool:
    """Every non-constant factor is irreducible with no common integer factor left inside."""
    for factor in sp.Mul.make_args(expr):
        base = factor.base if isinstance(factor, sp.Pow) and factor.exp.is_Integer else factor
        if base.is_number:
            continue
        poly = sp.Poly(base, *sorted(base.free_symbols, key=str))
        if abs(poly.content()) != 1 or not poly.is_irreducible:
            return False
    return True


def _as_list(value):
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, sp.FiniteSet):
        return sorted(value, key=sp.default_sort_key)
    return [value]


def _check(candidate: str, answer: dict) -> bool:
    kind = answer["kind"]
    tolerance = _tolerance_of(candidate)
    got = parse(candidate, keep_products=(kind == "factored"))
    ref = reference_value(answer)
    if kind == "number":
        if isinstance(got, (list, tuple)) and len(got) == 1:
            got = got[0]
        return _numbers_equal(got, ref, tolerance)
    if kind == "set":
        remaining = _as_list(got)
        if len(remaining) != len(ref):
            return False
        for r in ref:
            match = next((i for i, g in enumerate(remaining) if _numbers_equal(g, r, tolerance)), None)
            if match is None:
                return False
            remaining.pop(match)
        return True
    if kind == "tuple":
        got = _as_list(got)
        return len(got) == len(ref) and all(_numbers_equal(g, r, tolerance) for g, r in zip(got, ref))
    if kind == "equation":
        if not isinstance(got, sp.Equality):
            if isinstance(got, sp.Basic) and not isinstance(got, sp.Rel) and isinstance(ref, sp.Equality):
                got = sp.Eq(ref.lhs, got)      # '2*x + 1' read as 'y = 2*x + 1'
            else:
                return False
        a, b = got.lhs - got.rhs, ref.lhs - ref.rhs
        ratio = sp.simplify(a / b)
        return ratio != 0 and ratio.is_number and bool(ratio.is_finite)
    if kind == "inequality":
        if not isinstance(got, sp.Basic) or not got.free_symbols <= {sp.Symbol("x")}:
            return False
        return bool(got.free_symbols) and got.as_set() == ref.as_set()
    if kind == "factored":
        if not isinstance(got, sp.Basic) or isinstance(got, sp.Rel):
            return False
        return sp.expand(got - ref) == 0 and _is_fully_factored(got)
    raise ValueError(f"unknown answer kind {kind!r}")


def check_answer(candidate, answer: dict, seconds: float = 5.0) -> bool:
    """True when ``candidate`` (text or number) equals the reference ``answer`` (from answer_json)."""
    if isinstance(candidate, (int, float)) and not isinstance(candidate, bool):
        candidate = repr(candidate)
    if not isinstance(candidate, str) or not candidate.strip():
        return False
    try:
        return bool(run_bounded(lambda: _check(candidate, answer), seconds))
    except (CalcError, TypeError, ValueError, AttributeError, sp.PolynomialError):
        return False
