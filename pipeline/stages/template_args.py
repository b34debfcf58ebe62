"""A roadblock template's markers and drawn parameters as the arguments of a stop's tool chain
(``templates/roadblocks.toml``): what build writes and the riddle-only solver reads back the same way."""
from __future__ import annotations

import random
from datetime import date
from typing import Any

from pipeline import refs
from pipeline.execute import iso_plus_days
from pipeline.stages.base import Rejected


def instantiate_args(spec: Any, inputs: list[int], params: dict[str, str]) -> Any:
    """Turn template markers into references (see templates/roadblocks.toml)."""
    if isinstance(spec, list):
        return [instantiate_args(x, inputs, params) for x in spec]
    if isinstance(spec, dict):
        return {k: instantiate_args(v, inputs, params) for k, v in spec.items()}
    if not isinstance(spec, str) or not spec.startswith("$"):
        return spec
    if spec.startswith("$in"):
        return refs.stop_ref(inputs[int(spec[3:])])
    if spec.startswith("$step"):
        head, _, rest = spec[1:].partition(":")
        k = int(head[4:])
        if "," in rest or rest in ("lat", "lng"):
            return refs.step_ref(k, pick=rest.split(","))
        return refs.step_ref(k, rest)
    if spec.startswith("$param:"):
        name = spec[len("$param:"):]
        if "+" in name:
            name, days = name.split("+")
            return iso_plus_days(params[name], int(days))
        if "*" in name:   # a number the clue states in other units (a radius in km, asked in metres)
            name, factor = name.split("*")
            return float(params[name]) * float(factor)
        return params[name]
    if spec.startswith("$code:"):
        code = spec[len("$code:"):]
        for name, value in params.items():
            code = code.replace("{" + name + "}", value)
        return refs.code_ref(code, {f"in{i}": refs.stop_ref(s) for i, s in enumerate(inputs)})
    raise Rejected(f"build: unknown template marker {spec!r}")


def draw_params(template: dict, rng: random.Random) -> dict[str, str]:
    """One value per parameter: from its list, or any day of a ``"FIRST..LAST"`` date range (a
    handful of fixed dates made every weather or stock question one of a few)."""
    params: dict[str, str] = {}
    for name, choices in sorted(template.get("params", {}).items()):
        if isinstance(choices, str):
            first, _, last = choices.partition("..")
            span = (date.fromisoformat(last) - date.fromisoformat(first)).days
            params[name] = iso_plus_days(first, rng.randrange(span + 1))
        else:
            params[name] = choices[rng.randrange(len(choices))]
    return expand_params(params)


def expand_params(params: dict[str, str]) -> dict[str, str]:
    """A template's drawn parameters as its wording and its chain use them (compound choices split)."""
    out: dict[str, str] = {}
    for name, value in params.items():
        if name == "conversion":
            out["from_unit"], out["to_unit"], out["factor"] = value.split(":")
        else:
            out[name] = value
    return out
