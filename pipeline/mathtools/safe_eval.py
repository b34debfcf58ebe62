"""Safe sympy evaluation for the calculator tool and for answer checking.

Text is never handed to ``sympify`` (which calls ``eval``). It is parsed with ``ast`` and
every node is checked against a whitelist: numbers, whitelisted names and functions,
arithmetic, comparisons, tuples and lists. Attribute access, subscripts, imports, dunder
names, lambdas, comprehensions and keyword arguments are refused; powers are bounded
before sympy evaluates them; input length, node count and run time are bounded.

sympy (about 0.3 s to import) is imported on first use: the tool registry loads this module with the
calculator's backend in every process that calls a tool, and most of them never calculate.
"""
from __future__ import annotations

import ast
import datetime as dt
import functools
import math
import re
import signal
import threading
import time
import unicodedata
from collections.abc import Callable
from typing import Any

MAX_LENGTH = 500
MAX_NODES = 300
MAX_EXPONENT = 1000           # largest |exponent| of a power of a number
MAX_SYMBOLIC_EXPONENT = 100   # largest |exponent| of a power of an expression, e.g. (x+1)**100
MAX_RESULT_CHARS = 5000
MAX_RESULT_BITS = 100_000     # largest integer a numeric power may produce (about 30,000 digits)
MAX_FACTORIAL = 1000
MAX_LITERAL_DIGITS = 200
TIME_LIMIT_S = 5.0


def _load_sympy():
    global sp
    import sympy

    sp = sympy
    return sympy


class _Sympy:
    """Stands for the sympy module until first used, then is replaced by it (``sp`` below)."""

    def __getattr__(self, name: str):
        return getattr(_load_sympy(), name)


sp: Any = _Sympy()


def sympy_source() -> str:
    """The calculator's ``source``: sympy and its major.minor version."""
    return "sympy " + ".".join(sp.__version__.split(".")[:2])


class CalcError(ValueError):
    """The expression is refused or cannot be evaluated (the message says why)."""


def _deg_to_rad(v):
    return v * sp.pi / 180


def _round(value, places=0):
    """``round(x)``: the nearest whole number, a half away from zero; ``round(x, n)`` to n decimal places
    (n < 0 to tens, hundreds, ...: ``round(1234, -1)`` is 1230). Exact, unlike Python's halves-to-even
    on floats; the clues' "rounded to the nearest 10 metres" (racers asked for it: blind races 12, 13)."""
    n = _integer(sp.sympify(places), "round's places", -15, 15)
    if not (isinstance(value, sp.Basic) and value.is_real):
        raise CalcError(f"round takes a real number, got {value!r}")
    scale = sp.Integer(10) ** n
    return sp.sign(value) * sp.floor(sp.Abs(value) * scale + sp.Rational(1, 2)) / scale


def _sympy_functions() -> dict[str, Callable]:
    return {
        "sqrt": sp.sqrt, "cbrt": sp.cbrt, "root": sp.root, "Abs": sp.Abs, "abs": sp.Abs,
        "exp": sp.exp, "log": sp.log, "ln": sp.log,
        "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos, "atan": sp.atan,
        "atan2": sp.atan2, "sec": sp.sec, "csc": sp.csc, "cot": sp.cot,
        "sind": lambda v: sp.sin(_deg_to_rad(v)), "cosd": lambda v: sp.cos(_deg_to_rad(v)),
        "tand": lambda v: sp.tan(_deg_to_rad(v)),
        "rad": _deg_to_rad, "deg": lambda v: v * 180 / sp.pi,
        "floor": sp.floor, "ceiling": sp.ceiling, "round": _round,
        "Min": sp.Min, "Max": sp.Max, "min": sp.Min, "max": sp.Max,
        "gcd": sp.gcd, "lcm": sp.lcm, "factorial": sp.factorial, "binomial": sp.binomial,
        "Rational": sp.Rational, "Eq": sp.Eq,
        "simplify": sp.simplify, "expand": sp.expand, "factor": sp.factor, "cancel": sp.cancel,
        "together": sp.together, "apart": sp.apart, "nsimplify": sp.nsimplify,
        "solve": sp.solve, "diff": sp.diff, "integrate": sp.integrate, "summation": sp.summation,
        "limit": sp.limit,
    }


# ---- number theory, digits, dates and words: every operation a leg's detour asks for ------------
MAX_NUMBER_THEORY = 10 ** 15   # largest |n| factorised or searched for primes (well under a second)
MAX_PRIME_INDEX = 10 ** 6      # prime(k), primepi(n): k and n at most this


def _integer(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if not (isinstance(value, sp.Basic) and value.is_Integer):
        raise CalcError(f"{name} takes a whole number, got {to_text(value) if isinstance(value, sp.Basic) else value!r}")
    n = int(value)
    if (lo is not None and n < lo) or (hi is not None and n > hi):
        raise CalcError(f"{name} takes a whole number from {lo} to {hi}, got {n}")
    return n


def _text(value, name: str) -> str:
    if not isinstance(value, str):
        raise CalcError(f"{name} takes text in quotes, e.g. {name}(\"Paris\")")
    return value


def _date(value, name: str):
    try:
        return dt.date.fromisoformat(_text(value, name))
    except ValueError:
        raise CalcError(f"{name} takes a date as \"YYYY-MM-DD\", got {value!r}") from None


def _factors(n: int, name: str) -> dict[int, int]:
    n = _integer(sp.Integer(n), name, 2, MAX_NUMBER_THEORY)
    return {int(p): int(e) for p, e in sp.factorint(n).items()}


_ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"),
          (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]
_SCRABBLE = {**dict.fromkeys("aeilnorstu", 1), **dict.fromkeys("dg", 2), **dict.fromkeys("bcmp", 3),
             **dict.fromkeys("fhvwy", 4), "k": 5, **dict.fromkeys("jx", 8), **dict.fromkeys("qz", 10)}


def _roman(v) -> str:
    n = _integer(v, "roman", 1, 3999)
    out = ""
    for value, symbol in _ROMAN:
        count, n = divmod(n, value)
        out += symbol * count
    return out


def _digits(v, name: str) -> str:
    return str(abs(_integer(v, name, -MAX_NUMBER_THEORY * 1000, MAX_NUMBER_THEORY * 1000)))


def _digital_root(v) -> sp.Integer:
    n = int(_digits(v, "digital_root"))
    return sp.Integer(0 if n == 0 else 1 + (n - 1) % 9)


def _reverse_digits(v) -> sp.Integer:
    n = _integer(v, "reverse_digits", 0, MAX_NUMBER_THEORY * 1000)
    return sp.Integer(int(str(n)[::-1]))


def _letters(v, name: str) -> list[int]:
    """Alphabet positions (A = 1 ... Z = 26) of the Latin letters of a text, accents folded."""
    folded = unicodedata.normalize("NFKD", _text(v, name)).lower()
    return [ord(c) - 96 for c in folded if "a" <= c <= "z"]


def _alpha_position(v) -> sp.Integer:
    letters = _letters(v, "alpha_position")
    if not letters:
        raise CalcError("alpha_position: the text has no Latin letter")
    return sp.Integer(letters[0])


def _is_leap(year: int) -> bool:
    return (year % 4 == 0 and year % 100 != 0) or year % 400 == 0


def _leap_years(a, b) -> sp.Integer:
    lo, hi = sorted((_integer(a, "leap_years", 1, 9999), _integer(b, "leap_years", 1, 9999)))
    return sp.Integer(sum(1 for y in range(lo, hi + 1) if _is_leap(y)))


def _days_between(a, b) -> sp.Integer:
    return sp.Integer(abs((_date(b, "days_between") - _date(a, "days_between")).days))


def _years_between(a, b) -> sp.Integer:
    """Whole years from the earlier date to the later (birthdays passed: 2000-03-01 to 2010-02-28 is 9)."""
    first, last = sorted((_date(a, "years_between"), _date(b, "years_between")))
    return sp.Integer(last.year - first.year - ((last.month, last.day) < (first.month, first.day)))


def _checked(fn: Callable, name: str, lo: int, hi: int = MAX_NUMBER_THEORY) -> Callable:
    return lambda v: fn(_integer(v, name, lo, hi))


# Whole-number functions (sympy's number theory where it has one). Results are Integers, except
# isprime (True/False), factorint (a dict), primefactors and divisors (lists), roman and binary (text).
_NUMBER_FUNCTIONS: dict[str, Callable] = {
    "isprime": lambda v: sp.true if sp.isprime(_integer(v, "isprime", None, MAX_NUMBER_THEORY)) else sp.false,
    "nextprime": _checked(lambda n: sp.Integer(sp.nextprime(n)), "nextprime", -MAX_NUMBER_THEORY),
    "prevprime": _checked(lambda n: sp.Integer(sp.prevprime(n)), "prevprime", 3),
    "prime": _checked(lambda k: sp.Integer(sp.prime(k)), "prime", 1, MAX_PRIME_INDEX),
    "primepi": _checked(lambda n: sp.Integer(sp.primepi(n)), "primepi", 0, MAX_PRIME_INDEX),
    "factorint": lambda v: {sp.Integer(p): sp.Integer(e) for p, e in _factors(_integer(v, "factorint"), "factorint").items()},
    "primefactors": lambda v: [sp.Integer(p) for p in sorted(_factors(_integer(v, "primefactors"), "primefactors"))],
    "sum_prime_factors": lambda v: sp.Integer(sum(p * e for p, e in _factors(_integer(v, "sum_prime_factors"),
                                                                             "sum_prime_factors").items())),
    "largest_prime_factor": lambda v: sp.Integer(max(_factors(_integer(v, "largest_prime_factor"),
                                                              "largest_prime_factor"))),
    "divisors": _checked(lambda n: [sp.Integer(d) for d in sp.divisors(n)], "divisors", 1),
    "divisor_count": _checked(lambda n: sp.Integer(sp.divisor_count(n)), "divisor_count", 1),
    "divisor_sigma": _checked(lambda n: sp.Integer(sp.divisor_sigma(n)), "divisor_sigma", 1),
    "totient": _checked(lambda n: sp.Integer(sp.totient(n)), "totient", 1),
    "digit_sum": lambda v: sp.Integer(sum(int(c) for c in _digits(v, "digit_sum"))),
    "digital_root": _digital_root,
    "reverse_digits": _reverse_digits,
    "bit_count": _checked(lambda n: sp.Integer(n.bit_count()), "bit_count", 0, 10 ** 100),
    "binary": _checked(lambda n: format(n, "b"), "binary", 0, 10 ** 100),
    "roman": _roman,
    "roman_letters": lambda v: sp.Integer(len(_roman(v))),
    "leap_years": _leap_years,
}
# Functions that take text in quotes ("Paris", "2004-02-29"): the only place an expression may hold text.
_TEXT_FUNCTIONS: dict[str, Callable] = {
    "weekday": lambda v: sp.Integer(_date(v, "weekday").isoweekday()),
    "days_between": _days_between,
    "years_between": _years_between,
    "alpha_position": _alpha_position,
    "alpha_sum": lambda v: sp.Integer(sum(_letters(v, "alpha_sum"))),
    "letter_count": lambda v: sp.Integer(len(_letters(v, "letter_count"))),
    "vowels": lambda v: sp.Integer(sum(1 for c in _text(v, "vowels").lower() if c in "aeiou")),
    "scrabble": lambda v: sp.Integer(sum(_SCRABBLE.get(c, 0) for c in _text(v, "scrabble").lower())),
}
MAX_TEXT = 200


@functools.cache
def _functions() -> dict[str, Callable]:
    """Every function an expression may call: sympy's, then the number and text functions."""
    return {**_sympy_functions(), **_NUMBER_FUNCTIONS, **_TEXT_FUNCTIONS}


@functools.cache
def _constants() -> dict[str, Any]:
    return {"pi": sp.pi, "E": sp.E, "e": sp.E, "I": sp.I, "oo": sp.oo}


_SYMBOL_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]{0,11}$")
_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
           ast.Div: lambda a, b: a / b, ast.Mod: lambda a, b: sp.Mod(a, b),
           ast.FloorDiv: lambda a, b: sp.floor(a / b)}


@functools.cache
def _comparisons() -> dict[type, Callable]:
    return {ast.Lt: sp.Lt, ast.LtE: sp.Le, ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Eq: sp.Eq, ast.NotEq: sp.Ne}


# A single '=' that is not part of ==, <=, >=, != marks an equation "lhs = rhs".
_EQUALS = re.compile(r"(?<![<>=!])=(?!=)")


def _sympify_number(value: Any) -> sp.Basic:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CalcError(f"literal {value!r} is not allowed (only numbers)")
    if isinstance(value, int):
        if len(str(abs(value))) > MAX_LITERAL_DIGITS:
            raise CalcError("number literal too long")
        return sp.Integer(value)
    if not math.isfinite(value):
        raise CalcError("number literal is not finite")
    return sp.Rational(repr(value))   # a decimal literal is taken exactly: 0.1 is 1/10


def _check_power(base, exponent) -> None:
    if isinstance(exponent, sp.Basic) and exponent.is_Number:
        limit = MAX_EXPONENT if isinstance(base, sp.Basic) and base.is_number else MAX_SYMBOLIC_EXPONENT
        if abs(exponent) > limit:
            raise CalcError(f"exponent {exponent} too large (limit {limit})")
        if isinstance(base, sp.Basic) and base.is_Number and base != 0:
            size = abs(sp.Rational(base)) if base.is_Rational else abs(sp.Float(base))
            bits = float(abs(exponent)) * max(math.log2(float(size) + 1),
                                              math.log2(float(1 / size) + 1) if size < 1 else 0)
            if bits > MAX_RESULT_BITS:
                raise CalcError("power too large to evaluate")


def _power(base, exponent):
    return base ** exponent


class _Evaluator:
    def __init__(self, variables: dict[str, Any] | None = None) -> None:
        self.nodes = 0
        self.variables = variables or {}

    def visit(self, node: ast.AST):
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise CalcError(f"expression too complex (more than {MAX_NODES} parts)")
        if isinstance(node, ast.Expression):
            return self.visit(node.body)
        if isinstance(node, ast.Constant):
            return _sympify_number(node.value)
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.visit(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            left, right = self.visit(node.left), self.visit(node.right)
            if isinstance(left, (tuple, list, dict, str)) or isinstance(right, (tuple, list, dict, str)):
                # (1, 2)*10**8 or binary(5)*10**8 would fill memory
                raise CalcError("arithmetic on tuples, lists, dicts or text is not allowed")
            op = _BINOPS.get(type(node.op))
            if isinstance(node.op, ast.Pow):
                _check_power(left, right)
                op = _power
            if op is None:
                raise CalcError(f"operator {type(node.op).__name__} is not allowed")
            try:
                return op(left, right)
            except (TypeError, ValueError) as exc:      # e.g. a number minus a tuple
                raise CalcError(f"cannot apply {type(node.op).__name__} to these operands: {exc}") from None
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.visit(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else Written(items)
        if isinstance(node, ast.Compare):
            values = [self.visit(node.left)] + [self.visit(c) for c in node.comparators]
            compare = _comparisons()
            parts = [compare[type(op)](a, b) for op, a, b in zip(node.ops, values, values[1:])
                     if type(op) in compare]
            if len(parts) != len(node.ops):
                raise CalcError("only <, <=, >, >=, ==, != comparisons are allowed")
            return parts[0] if len(parts) == 1 else sp.And(*parts)
        if isinstance(node, ast.BoolOp):
            values = [self.visit(v) for v in node.values]
            return sp.And(*values) if isinstance(node.op, ast.And) else sp.Or(*values)
        raise CalcError(f"{type(node).__name__} is not allowed in an expression")

    def name(self, ident: str):
        if "__" in ident or ident.startswith("_"):
            raise CalcError(f"name {ident!r} is not allowed")
        if ident in self.variables:
            return self.variables[ident]
        if ident in _constants():
            return _constants()[ident]
        if ident in _functions():
            raise CalcError(f"{ident} is a function; call it with arguments")
        if not _SYMBOL_NAME.match(ident):
            raise CalcError(f"name {ident!r} is not allowed")
        return sp.Symbol(ident)

    def text(self, node: ast.AST, name: str):
        """An argument of a text function: a quoted string, or any expression (whose value the
        function then checks)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            self.nodes += 1
            if len(node.value) > MAX_TEXT:
                raise CalcError(f"{name}: text longer than {MAX_TEXT} characters")
            return node.value
        return self.visit(node)

    def call(self, node: ast.Call):
        if not isinstance(node.func, ast.Name):
            raise CalcError("only calls of named functions are allowed (no attribute access)")
        name = node.func.id
        if name not in _functions():
            raise CalcError(f"unknown function {name!r}")
        if node.keywords:
            raise CalcError("keyword arguments are not allowed")
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise CalcError("starred arguments are not allowed")
        if name in _TEXT_FUNCTIONS:
            args = [self.text(a, name) for a in node.args]
        else:
            args = [self.visit(a) for a in node.args]
            if any(_holds_text(a) for a in args):   # sympy would parse text (sympify calls eval)
                raise CalcError(f"{name} does not take text")
        if name in ("factorial", "binomial"):
            for a in args:
                if not (isinstance(a, sp.Basic) and a.is_Integer and abs(a) <= MAX_FACTORIAL):
                    raise CalcError(f"{name} takes integers up to {MAX_FACTORIAL}")
        try:
            return _functions()[name](*args)
        except CalcError:
            raise
        except (TypeError, ValueError, NotImplementedError) as exc:
            raise CalcError(f"{name}: {exc}") from exc


def _holds_text(value) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, (list, tuple)):
        return any(_holds_text(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_text(k) or _holds_text(v) for k, v in value.items())
    return False


MAX_VARIABLES = 20


def _variables(variables: dict | None) -> dict[str, Any]:
    """Checked variable values: numbers (exact, like literals) or text (for the text functions)."""
    out: dict[str, Any] = {}
    if not variables:
        return out
    if not isinstance(variables, dict) or len(variables) > MAX_VARIABLES:
        raise CalcError(f"variables must be an object of at most {MAX_VARIABLES} names")
    for name, value in variables.items():
        if not isinstance(name, str) or not _SYMBOL_NAME.match(name) or name in _functions() or name in _constants():
            raise CalcError(f"variable name {name!r} is not allowed (letters and digits, not a function or constant)")
        if isinstance(value, str):
            if len(value) > MAX_TEXT:
                raise CalcError(f"variable {name}: text longer than {MAX_TEXT} characters")
            out[name] = value
        else:
            out[name] = _sympify_number(value)
    return out


def parse(text: str, keep_products: bool = False, variables: dict | None = None):
    """Parse and evaluate ``text`` into sympy objects (or lists/tuples/dicts of them).

    ``keep_products`` stops sympy from distributing a number over a sum (2*(x + 1) stays a
    product), which answer checking needs to see whether a candidate is factored. ``variables``
    gives names values (numbers, or text for the text functions).
    """
    if keep_products:
        from sympy.core.parameters import distribute
        with distribute(False):
            return parse(text, variables=variables)
    if not isinstance(text, str):
        raise CalcError("expression must be a string")
    if len(text) > MAX_LENGTH:
        raise CalcError(f"expression longer than {MAX_LENGTH} characters")
    text = text.strip().replace("^", "**")
    if not text:
        raise CalcError("empty expression")
    sides = _EQUALS.split(text)
    if len(sides) == 2:
        return sp.Eq(parse(sides[0], variables=variables), parse(sides[1], variables=variables))
    if len(sides) > 2:
        raise CalcError("more than one '=' in the expression")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CalcError(f"cannot parse expression: {getattr(exc, 'msg', exc)}") from None
    try:
        return _Evaluator(_variables(variables)).visit(tree)
    except RecursionError:
        raise CalcError("expression nested too deeply") from None


class _Timeout(Exception):
    pass


def run_bounded(fn: Callable[[], Any], seconds: float = TIME_LIMIT_S):
    """Run ``fn`` with a wall-clock limit (SIGALRM in the main thread, a watchdog thread elsewhere)."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def on_alarm(signum, frame):
            raise _Timeout()
        previous_handler = signal.signal(signal.SIGALRM, on_alarm)
        started = time.monotonic()
        previous_timer = signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            return fn()
        except _Timeout:
            raise CalcError(f"evaluation took longer than {seconds:g} s") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous_handler)
            if previous_timer[0] > 0:   # give an outer timer (e.g. pytest-timeout) what remains of its time
                remaining = previous_timer[0] - (time.monotonic() - started)
                signal.setitimer(signal.ITIMER_REAL, max(remaining, 0.001), previous_timer[1])
    box: dict[str, Any] = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller below
            box["error"] = exc
    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise CalcError(f"evaluation took longer than {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


# ---- turning results into JSON ---------------------------------------------------------------
class Written(list):
    """A list the expression writes out ("[digit_sum(n), bit_count(n)]"): its order is the writer's and is
    kept, where a function's list of roots is sorted (blind race 38, R13: four figures came back sorted,
    and the racer took them for the order asked)."""


def _sorted_items(value):
    return sorted(value, key=sp.default_sort_key) if all(isinstance(v, sp.Basic) for v in value) else value


def normalise(value):
    """Sort unordered results (solve's root lists, sets, dicts) so the same input prints the same text; a
    list the expression writes keeps its order (``Written``)."""
    if isinstance(value, dict):
        return {k: normalise(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, Written):
        return [normalise(v) for v in value]
    if isinstance(value, list):
        return _sorted_items([normalise(v) for v in value])
    if isinstance(value, tuple):
        return tuple(normalise(v) for v in value)
    if isinstance(value, (sp.FiniteSet, set, frozenset)):
        return _sorted_items([normalise(v) for v in value])
    return value


def to_text(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {to_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(to_text(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(to_text(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return sp.sstr(value)


def to_numeric(value):
    """A float for a real number, lists/dicts of them, ``None`` for anything symbolic or non-real."""
    if isinstance(value, dict):
        return {str(k): to_numeric(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_numeric(v) for v in value]
    if isinstance(value, sp.Basic) and value.is_number and not isinstance(value, sp.logic.boolalg.Boolean):
        approx = sp.N(value, 20)
        re_part, im_part = approx.as_real_imag()
        if im_part != 0 and abs(float(im_part)) > 1e-15 * max(1.0, abs(float(re_part))):
            return None
        number = float(re_part)
        return number if math.isfinite(number) else None
    return None


def is_exact(value) -> bool:
    if isinstance(value, dict):
        return all(is_exact(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(is_exact(v) for v in value)
    return not (isinstance(value, sp.Basic) and value.has(sp.Float))


def calculate(expression: str, seconds: float = TIME_LIMIT_S, variables: dict | None = None) -> dict:
    """The calculator tool's values: {result, exact, numeric}; raises CalcError."""
    _load_sympy()   # before the clock starts: importing sympy is no part of an evaluation's time

    def work():
        value = normalise(parse(expression, variables=variables))
        if isinstance(value, sp.Basic) and value.has(sp.zoo, sp.nan):
            raise CalcError("undefined result (division by zero?)")
        text = to_text(value)
        if len(text) > MAX_RESULT_CHARS:
            raise CalcError(f"result longer than {MAX_RESULT_CHARS} characters")
        return {"result": text, "exact": is_exact(value), "numeric": to_numeric(value)}
    return run_bounded(work, seconds)
