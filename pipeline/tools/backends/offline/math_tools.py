"""Offline math tools: knowledge-point search over our corpus, and a safe sympy calculator.

Both answer from data and code shipped with the project (``pipeline.mathtools``), so their
provenance is ``offline-data``. sympy and the corpus are loaded on first use, not when the
registry loads this module.
"""
from __future__ import annotations

from pipeline.mathtools.safe_eval import CalcError, calculate, sympy_source
from pipeline.mathtools.search import CORPUS_SOURCE, search
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements


@implements("math_knowledge_search", "offline")
def math_knowledge_search(args: dict, ctx: BackendContext) -> dict:
    results = search(args["query"], int(args.get("k", 3)))
    return {"results": results, "units": {}, "provenance": "offline-data", "source": CORPUS_SOURCE}


@implements("calculator", "offline")
def calculator(args: dict, ctx: BackendContext) -> dict:
    try:
        values = calculate(args["expression"], variables=args.get("variables"))
    except CalcError as exc:
        raise ToolError(f"calculator: {exc}") from None
    return {**values, "units": {}, "provenance": "offline-data", "source": sympy_source()}
