"""Expressions over stop references (merges and the finish line).

An expression names earlier stops as ``s<i>`` and may use + - * %, parentheses, the
integer literal 10 (the modulus) and the functions ``digital_root`` and ``abs``. Values
are never copied into an expression; the golden executor evaluates it over the stop
values, so re-execution recomputes y*. Parsing uses Python's ``ast`` with a whitelist.
"""
from __future__ import annotations

import ast
import functools
import random
import re
from collections.abc import Mapping, Sequence
from types import CodeType
from typing import Any

from pipeline.transforms import digital_root

ALLOWED_LITERALS = {10}
FUNCTIONS = {"digital_root": digital_root, "abs": abs}
_NAME = re.compile(r"^s(\d+)$")


class ExpressionError(ValueError):
    pass


def _check(node: ast.AST) -> None:
    if isinstance(node, ast.Expression):
        return _check(node.body)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Mod)):
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        _check(node.operand)
    elif isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS) or node.keywords:
            raise ExpressionError(f"call not allowed: {ast.unparse(node)}")
        for a in node.args:
            _check(a)
    elif isinstance(node, ast.Name):
        if not _NAME.match(node.id):
            raise ExpressionError(f"unknown name {node.id!r}")
    elif isinstance(node, ast.Constant):
        if type(node.value) is not int or node.value not in ALLOWED_LITERALS:
            raise ExpressionError(f"literal {node.value!r} not allowed (values must be referenced, not copied)")
    else:
        raise ExpressionError(f"syntax not allowed: {ast.unparse(node)}")


def parse(expression: str) -> ast.Expression:
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ExpressionError(f"cannot parse {expression!r}: {exc.msg}") from exc
    _check(tree)
    return tree


def references(expression: str) -> list[int]:
    """The stop indices an expression refers to, sorted."""
    return list(_references(expression))


# a run evaluates the same few hundred expressions tens of thousands of times: each is parsed, checked and
# compiled once (a bad one raises every time: an exception is never kept)
@functools.lru_cache(maxsize=1 << 12)
def _references(expression: str) -> tuple[int, ...]:
    seen: set[int] = set()
    for node in ast.walk(parse(expression)):
        if isinstance(node, ast.Name) and node.id not in FUNCTIONS:
            seen.add(int(_NAME.match(node.id).group(1)))
    return tuple(sorted(seen))


@functools.lru_cache(maxsize=1 << 12)
def _code(expression: str) -> CodeType:
    return compile(parse(expression), "<expression>", "eval")


def literals(expression: str) -> list[Any]:
    return [n.value for n in ast.walk(ast.parse(expression, mode="eval")) if isinstance(n, ast.Constant)]


def evaluate(expression: str, values: Mapping[int, Any]) -> int:
    code = _code(expression)
    env: dict[str, Any] = dict(FUNCTIONS)
    for i in _references(expression):
        v = values.get(i)
        if type(v) is not int:
            raise ExpressionError(f"s{i} is {v!r}, not an integer")
        env[f"s{i}"] = v
    return eval(code, {"__builtins__": {}}, env)


def rename(expression: str, mapping: Mapping[int, int]) -> str:
    """Rewrite s<i> names after stops are re-indexed."""
    return re.sub(r"\bs(\d+)\b", lambda m: f"s{mapping[int(m.group(1))]}", expression)


# ---- finish-line reductions -------------------------------------------------------------
REDUCTIONS = ("digital_root_sum", "sum_mod_10", "abs_difference_mod_10", "product_mod_10", "digital_root_abs_difference")


def _sum(names: Sequence[str]) -> str:
    return " + ".join(names)


def reduction_expression(kind: str, stops: Sequence[int]) -> str:
    names = [f"s{i}" for i in stops]
    if not names:
        raise ExpressionError("a finish line needs at least one operand")
    half = max(1, len(names) // 2)
    left, right = names[:half], names[half:] or names[:half]
    if kind == "digital_root_sum":
        return f"digital_root({_sum(names)})"
    if kind == "sum_mod_10":
        return f"({_sum(names)}) % 10"
    if kind == "abs_difference_mod_10":
        return f"abs(({_sum(left)}) - ({_sum(right)})) % 10"
    if kind == "product_mod_10":
        return "(" + " * ".join(f"(({n}) % 10)" for n in names) + ") % 10"
    if kind == "digital_root_abs_difference":
        return f"digital_root(abs(({_sum(left)}) - ({_sum(right)})))"
    raise ExpressionError(f"unknown reduction {kind!r}")


def choose_reduction(rng: random.Random, stops: Sequence[int], values: Mapping[int, int]) -> tuple[str, str, int]:
    """Pick a reduction whose result is a digit and not degenerate; returns (kind, expression, y*)."""
    kinds = list(REDUCTIONS)
    if len(stops) > 3:
        kinds.remove("product_mod_10")  # with many operands the product is almost always 0 mod 10
    if len(stops) < 2:
        kinds = [k for k in kinds if "difference" not in k]
    rng.shuffle(kinds)
    last: tuple[str, str, int] | None = None
    for kind in kinds:
        expr = reduction_expression(kind, stops)
        y = evaluate(expr, values)
        if not 0 <= y <= 9:
            continue
        last = (kind, expr, y)
        # a difference of two equal halves is 0 whatever the values: avoid such degenerate forms
        if "difference" in kind and evaluate(reduction_expression("sum_mod_10", stops), values) == y == 0:
            continue
        # every value must count: a product with a factor ending in 0 ends in 0 whatever the others are
        # (a blind racer saw passcode 0 from one value alone: "2240 x ..." needs nothing else)
        if any(evaluate(expr, {**values, s: values[s] + 1}) == y for s in stops):
            continue
        return last
    if last is None:
        raise ExpressionError("no reduction gives a digit")
    return last


def merge_expression(kind: str, a: int, b: int) -> str:
    if kind == "sum":
        return f"s{a} + s{b}"
    if kind == "abs_difference":
        return f"abs(s{a} - s{b})"
    raise ExpressionError(f"unknown merge {kind!r}")
