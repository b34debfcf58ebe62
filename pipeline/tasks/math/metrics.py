"""Metrics for the math tasks: final answers and the process-level derived tasks (``derived.py``).

Every function takes predictions and gold targets in the shapes of ``derived.py`` and returns
plain floats, so a model's outputs can be scored without this package's generators.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import sympy as sp

from pipeline.mathtools.safe_eval import CalcError, parse, run_bounded
from pipeline.tasks.math.answers import check_answer

_WORD = re.compile(r"[a-z0-9]+")


def set_prf(predicted: Iterable[str], gold: Iterable[str]) -> dict[str, float]:
    """Precision, recall and F1 of a predicted set against a gold set (both empty: all 1)."""
    p, g = set(predicted), set(gold)
    if not p and not g:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    hits = len(p & g)
    precision = hits / len(p) if p else 0.0
    recall = hits / len(g) if g else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def capability_planning_score(predictions: Sequence[Iterable[str]], golds: Sequence[Iterable[str]]) -> dict[str, float]:
    """Macro-averaged set precision/recall/F1 over items."""
    _same_length(predictions, golds)
    scores = [set_prf(p, g) for p, g in zip(predictions, golds)]
    return {k: _mean([s[k] for s in scores]) for k in ("precision", "recall", "f1")}


def token_f1(predicted: str, gold: str) -> float:
    """Bag-of-words F1 between two sub-goal descriptions (as in extractive QA scoring)."""
    p, g = _WORD.findall(predicted.lower()), _WORD.findall(gold.lower())
    if not p or not g:
        return float(p == g)
    common = sum(min(p.count(w), g.count(w)) for w in set(p))
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def next_step_score(predictions: Sequence[dict], golds: Sequence[dict]) -> dict[str, float]:
    """Capability accuracy and mean sub-goal token F1 of predicted next steps {capability, goal}."""
    _same_length(predictions, golds)
    return {"capability_accuracy": _mean([float(p.get("capability") == g["capability"]) for p, g in zip(predictions, golds)]),
            "goal_token_f1": _mean([token_f1(str(p.get("goal", "")), g["goal"]) for p, g in zip(predictions, golds)])}


def judgment_score(predictions: Sequence[bool], golds: Sequence[bool]) -> dict[str, float]:
    """Accuracy, and precision/recall/F1 for detecting flawed solutions (the positive class is 'incorrect')."""
    _same_length(predictions, golds)
    flagged = {i for i, p in enumerate(predictions) if not p}
    flawed = {i for i, g in enumerate(golds) if not g}
    prf = set_prf(flagged, flawed)
    return {"accuracy": _mean([float(bool(p) == bool(g)) for p, g in zip(predictions, golds)]),
            "flaw_precision": prf["precision"], "flaw_recall": prf["recall"], "flaw_f1": prf["f1"]}


def localization_score(predictions: Sequence[dict], golds: Sequence[dict]) -> dict[str, float]:
    """Exact first-error-step accuracy, error-type accuracy, both right, and mean absolute step distance."""
    _same_length(predictions, golds)
    step_hits, type_hits, both, distance = [], [], [], []
    for p, g in zip(predictions, golds):
        step = p.get("first_error_step")
        step_ok = isinstance(step, int) and step == g["first_error_step"]
        type_ok = p.get("error_type") == g["error_type"]
        step_hits.append(float(step_ok))
        type_hits.append(float(type_ok))
        both.append(float(step_ok and type_ok))
        distance.append(abs(step - g["first_error_step"]) if isinstance(step, int) else float("nan"))
    known = [d for d in distance if not math.isnan(d)]
    return {"step_accuracy": _mean(step_hits), "type_accuracy": _mean(type_hits), "step_and_type_accuracy": _mean(both),
            "mean_step_distance": _mean(known) if known else float("nan")}


def tool_plan_score(predictions: Sequence[dict], golds: Sequence[dict]) -> dict[str, float]:
    """Knowledge points to look up (macro set F1, and exact ordered match) and the number of calculator
    calls (exact match, mean absolute error) of predicted tool plans {knowledge_points, calculator_calls}."""
    _same_length(predictions, golds)
    points = [set_prf(p.get("knowledge_points") or [], g["knowledge_points"])["f1"] for p, g in zip(predictions, golds)]
    ordered = [float(list(p.get("knowledge_points") or []) == g["knowledge_points"]) for p, g in zip(predictions, golds)]
    counts = [(p.get("calculator_calls"), g["calculator_calls"]) for p, g in zip(predictions, golds)]
    errors = [abs(c - g) for c, g in counts if isinstance(c, int) and not isinstance(c, bool)]
    return {"knowledge_point_f1": _mean(points), "knowledge_points_exact": _mean(ordered),
            "calculator_calls_exact": _mean([float(c == g) for c, g in counts]),
            "calculator_calls_mae": _mean(errors) if errors else float("nan")}


def same_value(predicted, gold: str | None) -> bool:
    """Does a predicted step value (text or number) equal the gold value text? Compared by value,
    as a number, a list/tuple of numbers, or an expression (never by string equality)."""
    if gold is None or predicted is None:
        return False
    if isinstance(predicted, (int, float)) and not isinstance(predicted, bool):
        predicted = repr(predicted)
    if not isinstance(predicted, str):
        return False
    kind = "tuple" if gold.strip().startswith(("(", "[")) else "number"
    if kind == "number" and check_answer(predicted, {"kind": "number", "value": gold, "numeric": None}):
        return True
    if kind == "tuple" and check_answer(predicted, {"kind": "tuple", "value": gold, "numeric": None}):
        return True
    return _same_expression(predicted, gold)


def _same_expression(predicted: str, gold: str) -> bool:
    try:
        a, b = run_bounded(lambda: (parse(predicted), parse(gold)), 5.0)
        if isinstance(a, sp.Basic) and isinstance(b, sp.Basic) and not isinstance(a, sp.Rel) and not isinstance(b, sp.Rel):
            return bool(run_bounded(lambda: sp.simplify(a - b) == 0, 5.0))
        if isinstance(a, sp.Equality) and isinstance(b, sp.Equality):
            return bool(run_bounded(lambda: sp.simplify((a.lhs - a.rhs) - (b.lhs - b.rhs)) == 0, 5.0))
    except (CalcError, TypeError, ValueError, AttributeError):
        return False
    return False


def step_execution_score(predictions: Sequence[dict], golds: Sequence[dict]) -> dict[str, float]:
    """Share of predicted next actions {result} whose result equals the golden calculator result."""
    _same_length(predictions, golds)
    return {"result_accuracy": _mean([float(same_value(p.get("result"), g["result"])) for p, g in zip(predictions, golds)])}


def correction_score(predictions: Sequence[dict], golds: Sequence[dict]) -> dict[str, float]:
    """Share of corrections {value} equal to the value the first wrong step should have."""
    _same_length(predictions, golds)
    return {"value_accuracy": _mean([float(same_value(p.get("value"), g["value"])) for p, g in zip(predictions, golds)])}


def answer_accuracy(candidates: Sequence, answers: Sequence[dict]) -> float:
    """Share of final answers equal to the reference (numeric tolerance / symbolic equivalence)."""
    _same_length(candidates, answers)
    return _mean([float(check_answer(c, a)) for c, a in zip(candidates, answers)])


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _same_length(a: Sequence, b: Sequence) -> None:
    if len(a) != len(b):
        raise ValueError(f"{len(a)} predictions for {len(b)} gold items")
