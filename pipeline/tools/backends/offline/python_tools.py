"""python_execute_code (the local sandbox) and python_generate_code (deterministic templates).

Provenance is ``offline-data``: running code is a local computation whose answer depends
only on the code and the interpreter (named in ``source``), not on any outside service,
and it is not simulated. ``snapshot`` would claim Wikipedia data and ``live`` an outside API.

The offline code generator recognises a few task shapes (an arithmetic expression, sum /
product / difference / quotient / average of numbers, a percentage, a square root, unit
conversions, days between two dates) and writes plain Python that prints the answer.
Anything else raises ``ToolError``: writing code for open-ended tasks needs an LLM (the
live backend of python_generate_code).
"""
from __future__ import annotations

import ast
import platform
import re
from datetime import date

from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements
from pipeline.tools.sandbox import run_python

GENERATOR_SOURCE = "legwork offline code templates v1"

# --- execute ---------------------------------------------------------------------------------

_ISOLATION_NAMES = {"bwrap": "bubblewrap", "unshare": "unshare namespaces", "none": "no isolation"}


def execute_in_sandbox(args: dict, settings=None) -> dict:
    """Run the code in the sandbox. No sandbox here and ``sandbox_allow_unisolated`` unset:
    ``SandboxUnavailable`` (a configuration error naming what to install or set), never an
    unisolated run nobody asked for."""
    allow = bool(getattr(settings, "sandbox_allow_unisolated", False))
    result = run_python(args["code"], timeout_s=float(args.get("timeout_s", 10)), allow_unisolated=allow,
                        isolation=getattr(settings, "sandbox_isolation", None), private=_private_folders(settings))
    return {
        "stdout": result.stdout, "stderr": result.stderr, "exit_code": result.exit_code,
        "timed_out": result.timed_out, "isolation": result.isolation, "units": {},
        "provenance": "offline-data",
        "source": f"local sandbox ({_ISOLATION_NAMES[result.isolation]}), "
                  f"{platform.python_implementation()} {platform.python_version()}",
    }


def _private_folders(settings) -> tuple[str, ...]:
    """The served data (snapshot, tool world, the cache's and the tool log's folders): masked in the
    sandbox should they lie under a folder it binds (the sandbox binds none of them otherwise)."""
    paths = [getattr(settings, name, None) for name in ("snapshot_dir", "world_dir")]
    paths += [p.parent for p in (getattr(settings, "cache_path", None), getattr(settings, "tool_log", None)) if p]
    return tuple(str(p) for p in paths if p)


@implements("python_execute_code", "offline")
def python_execute_code(args: dict, ctx: BackendContext) -> dict:
    return execute_in_sandbox(args, ctx.settings)


# --- generate --------------------------------------------------------------------------------

_NUM = r"[-+]?\d+(?:,\d{3})*(?:\.\d+)?"
_NUM_RE = re.compile(_NUM)

# Conversions to (unit name, factor to the target). Keys are lowercase aliases.
_LENGTH_M = {"km": 1000.0, "kilometer": 1000.0, "kilometre": 1000.0, "m": 1.0, "meter": 1.0, "metre": 1.0,
             "cm": 0.01, "centimeter": 0.01, "centimetre": 0.01, "mm": 0.001, "millimeter": 0.001,
             "millimetre": 0.001, "mile": 1609.344, "mi": 1609.344, "yard": 0.9144, "yd": 0.9144,
             "foot": 0.3048, "feet": 0.3048, "ft": 0.3048, "inch": 0.0254, "inches": 0.0254, "in": 0.0254,
             "nautical mile": 1852.0, "nmi": 1852.0}
_MASS_KG = {"kg": 1.0, "kilogram": 1.0, "g": 0.001, "gram": 0.001, "lb": 0.45359237, "pound": 0.45359237,
            "lbs": 0.45359237, "oz": 0.028349523125, "ounce": 0.028349523125, "tonne": 1000.0, "t": 1000.0,
            "stone": 6.35029318}
_AREA_M2 = {"km2": 1e6, "square kilometer": 1e6, "square kilometre": 1e6, "sq km": 1e6,
            "mi2": 2589988.110336, "square mile": 2589988.110336, "sq mi": 2589988.110336,
            "hectare": 1e4, "ha": 1e4, "acre": 4046.8564224, "m2": 1.0, "square meter": 1.0, "square metre": 1.0}
_VOLUME_L = {"l": 1.0, "liter": 1.0, "litre": 1.0, "ml": 0.001, "milliliter": 0.001, "millilitre": 0.001,
             "gallon": 3.785411784, "gal": 3.785411784, "us gallon": 3.785411784, "m3": 1000.0}
_SPEED_MS = {"km/h": 1 / 3.6, "kph": 1 / 3.6, "kmh": 1 / 3.6, "mph": 0.44704, "m/s": 1.0, "knot": 0.514444,
             "knots": 0.514444}
_TEMPERATURES = {"c": "C", "celsius": "C", "degc": "C", "°c": "C", "f": "F", "fahrenheit": "F", "degf": "F",
                 "°f": "F", "k": "K", "kelvin": "K"}
_UNIT_TABLES = (_LENGTH_M, _MASS_KG, _AREA_M2, _VOLUME_L, _SPEED_MS)


def _number(text: str) -> float | int:
    value = float(text.replace(",", ""))
    return int(value) if value.is_integer() and "." not in text else value


def _numbers(text: str) -> list[float | int]:
    return [_number(n) for n in _NUM_RE.findall(text)]


def _literal(value: float) -> str:
    return repr(value)


def _unit_key(word: str) -> str:
    word = word.strip().lower().rstrip(".")
    if word.endswith("es") and word[:-2] in ("inch",):
        return word[:-2]
    if word.endswith("s") and word[:-1] in {k for t in _UNIT_TABLES for k in t} and word not in ("lbs", "knots"):
        return word[:-1]
    return word


def _conversion(task: str) -> tuple[str, str] | None:
    match = re.search(rf"(?:convert\s+)?({_NUM})\s*([a-z°/²0-9 .]+?)\s+(?:to|in|into)\s+([a-z°/²0-9 .]+?)\s*[?.!]?$",
                      task.strip().lower())
    if not match:
        return None
    value = _number(match.group(1))
    src, dst = _unit_key(match.group(2).replace("²", "2")), _unit_key(match.group(3).replace("²", "2"))
    if src in _TEMPERATURES and dst in _TEMPERATURES:
        formula = {("C", "F"): "value * 9 / 5 + 32", ("F", "C"): "(value - 32) * 5 / 9",
                   ("C", "K"): "value + 273.15", ("K", "C"): "value - 273.15",
                   ("F", "K"): "(value - 32) * 5 / 9 + 273.15", ("K", "F"): "(value - 273.15) * 9 / 5 + 32"}
        pair = (_TEMPERATURES[src], _TEMPERATURES[dst])
        if pair[0] == pair[1]:
            return None
        code = (f"value = {_literal(value)}  # degrees {pair[0]}\n"
                f"result = {formula[pair]}  # degrees {pair[1]}\n"
                "print(round(result, 6))\n")
        return code, "temperature conversion"
    for table in _UNIT_TABLES:
        if src in table and dst in table:
            code = (f"value = {_literal(value)}  # {src}\n"
                    f"to_base = {table[src]!r}  # one {src} in the table's base unit\n"
                    f"from_base = {table[dst]!r}  # one {dst} in the table's base unit\n"
                    f"result = value * to_base / from_base  # {dst}\n"
                    "print(round(result, 6))\n")
            return code, "unit conversion"
    return None


def _dates(task: str) -> tuple[str, str] | None:
    found = re.findall(r"\b(\d{4}-\d{2}-\d{2})\b", task)
    if len(found) != 2 or not re.search(r"\bdays?\b", task, re.IGNORECASE):
        return None
    try:
        date.fromisoformat(found[0]), date.fromisoformat(found[1])
    except ValueError:
        return None
    code = ("from datetime import date\n"
            f"start = date.fromisoformat({found[0]!r})\n"
            f"end = date.fromisoformat({found[1]!r})\n"
            "print(abs((end - start).days))\n")
    return code, "days between dates"


_ALLOWED_NODES = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Add, ast.Sub, ast.Mult, ast.Div,
                  ast.FloorDiv, ast.Mod, ast.Pow, ast.USub, ast.UAdd)


def _is_arithmetic(expr: str) -> bool:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError:
        return False
    if not all(isinstance(node, _ALLOWED_NODES) for node in ast.walk(tree)):
        return False
    if not isinstance(tree.body, (ast.BinOp, ast.UnaryOp)):
        return False
    return all(isinstance(n.value, (int, float)) and not isinstance(n.value, bool)
               for n in ast.walk(tree) if isinstance(n, ast.Constant))


def _expression(task: str) -> tuple[str, str] | None:
    """The longest arithmetic expression written in the task, e.g. 'What is (17 + 5) * 3?'."""
    text = task.replace("×", "*").replace("÷", "/").replace("−", "-").replace("^", "**")
    candidates = re.findall(r"[\d(][\d\s.+\-*/%()]*[\d)]", text)
    for candidate in sorted(candidates, key=len, reverse=True):
        expr = " ".join(candidate.split())
        if _is_arithmetic(expr):
            return f"result = {expr}\nprint(result)\n", "arithmetic expression"
    return None


_AGGREGATES = [
    (r"\b(?:sum|total)\s+of\b|\badd\b", "sum", "result = sum(numbers)"),
    (r"\bproduct\s+of\b|\bmultiply\b", "product", "import math\nresult = math.prod(numbers)"),
    (r"\b(?:average|mean)\s+of\b", "average", "result = sum(numbers) / len(numbers)"),
    (r"\bmedian\s+of\b", "median", "import statistics\nresult = statistics.median(numbers)"),
    (r"\b(?:maximum|largest|max)\s+of\b", "maximum", "result = max(numbers)"),
    (r"\b(?:minimum|smallest|min)\s+of\b", "minimum", "result = min(numbers)"),
]


def _aggregate(task: str) -> tuple[str, str] | None:
    lower = task.lower()
    numbers = _numbers(task)
    if len(numbers) >= 2:
        for pattern, name, body in _AGGREGATES:
            if re.search(pattern, lower):
                return f"numbers = {numbers!r}\n{body}\nprint(result)\n", name
    if len(numbers) == 2:
        a, b = map(_literal, numbers)
        if re.search(r"\bdifference\s+between\b|\bsubtract\b", lower):
            if re.search(r"\bsubtract\b", lower) and re.search(r"\bfrom\b", lower):
                return f"result = {b} - {a}\nprint(result)\n", "difference"
            return f"result = {a} - {b}\nprint(result)\n", "difference"
        if re.search(r"\bdivided\s+by\b|\bdivide\b|\bquotient\b|\bratio\b", lower):
            return f"result = {a} / {b}\nprint(result)\n", "quotient"
        if re.search(r"(?:%|\bper\s*cent\b|\bpercent\b)\s+of\b", lower):
            return f"result = {a} * {b} / 100\nprint(result)\n", "percentage"
    if len(numbers) == 1 and re.search(r"\bsquare\s+root\b|\bsqrt\b", lower):
        return f"import math\nresult = math.sqrt({_literal(numbers[0])})\nprint(result)\n", "square root"
    if len(numbers) == 1 and re.search(r"\bfactorial\b", lower) and isinstance(numbers[0], int):
        return f"import math\nresult = math.factorial({numbers[0]})\nprint(result)\n", "factorial"
    return None


_GENERATORS = (_dates, _conversion, _aggregate, _expression)


def generate_code(task: str) -> tuple[str, str]:
    """(code, template name) for a task a template recognises; ToolError otherwise."""
    for generator in _GENERATORS:
        found = generator(task)
        if found is not None:
            return found
    raise ToolError("no offline generator for this task; configure an LLM (live backend) to write code "
                    "for it (settings llm_base_url and llm_model, backend 'live' for python_generate_code)")


@implements("python_generate_code", "offline")
def python_generate_code(args: dict, ctx: BackendContext) -> dict:
    code, template = generate_code(args["task"])
    return {"code": code, "template": template, "units": {}, "provenance": "offline-data",
            "source": GENERATOR_SOURCE}
