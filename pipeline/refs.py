"""The one reference syntax for "the value of stop i / the output of step k", and its resolver.

A tool step's argument may hold, anywhere inside it:
  * ``{"$stop": i}``: the value of stop i; ``{"$stop": i, "path": "a.0.b"}``: one field of it;
  * ``{"$step": k}``: the output of step k of the same chain (what its ``extract`` kept);
    ``{"$step": k, "path": "a.b"}``: one field of it; ``{"$step": k, "pick": ["lat", "lng"]}``:
    only the named fields (an object);
  * ``{"$code": "text with {in0}", "refs": {"in0": <reference>}}``: code whose placeholders are
    filled with referenced values (``str.format``; ``{in0!r}`` quotes text).

Merges and the finish line use ``s<i>`` names in expressions instead (``pipeline.expressions``).
Execution (``pipeline.execute``), re-indexing (``pipeline.stages.base``), scoring
(``pipeline.scoring.golden``) and the AAR importer/exporter all go through this module, so a
reference means the same thing everywhere.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pipeline import expressions

if TYPE_CHECKING:
    from pipeline.model import Stop

STOP, STEP, CODE = "$stop", "$step", "$code"
_MARKERS = (STOP, STEP, CODE)


class UnresolvedReference(ValueError):
    """A reference that cannot be resolved: its stop has no value, its step has not run, or the
    path names nothing. Execution turns it into a stop failure."""


# ---- constructors -------------------------------------------------------------------------
def stop_ref(index: int, path: str = "") -> dict[str, Any]:
    return {STOP: index, "path": path} if path else {STOP: index}


def step_ref(step: int, path: str = "", pick: Sequence[str] | None = None) -> dict[str, Any]:
    if pick:
        return {STEP: step, "pick": list(pick)}
    return {STEP: step, "path": path} if path else {STEP: step}


def code_ref(template: str, refs: Mapping[str, Any]) -> dict[str, Any]:
    return {CODE: template, "refs": dict(refs)}


def is_reference(v: Any) -> bool:
    return isinstance(v, dict) and any(m in v for m in _MARKERS)


def is_stop_ref(v: Any) -> bool:
    return isinstance(v, dict) and STOP in v


def is_step_ref(v: Any) -> bool:
    return isinstance(v, dict) and STEP in v


# ---- paths --------------------------------------------------------------------------------
def get_path(obj: Any, path: str) -> Any:
    """Dotted path into a value ("rows.0.0.distance_km"); "" is the whole value;
    "sum:daily.*.precipitation_mm" sums a field over a list."""
    if path.startswith("sum:"):
        head, _, tail = path[4:].partition(".*.")
        items = get_path(obj, head)
        if not isinstance(items, list) or not items:
            raise UnresolvedReference(f"no list at {head!r} to sum")
        vals = [get_path(x, tail) for x in items]
        if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in vals):
            raise UnresolvedReference(f"non-numeric values under {path!r}")
        return sum(vals)
    cur = obj
    for part in [p for p in path.split(".") if p]:
        try:
            cur = cur[int(part)] if isinstance(cur, list) else cur[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise UnresolvedReference(f"result has no {path!r}") from None
    return cur


def pick(obj: Any, names: Sequence[str]) -> dict[str, Any]:
    return {k: get_path(obj, k) for k in names}


# ---- resolver -----------------------------------------------------------------------------
def resolve(spec: Any, values: Mapping[int, Any], outputs: Sequence[Any] = (), *, partial: bool = False) -> Any:
    """Replace every reference in ``spec`` by its value.

    ``values`` maps stop index -> value; ``outputs`` are the earlier steps' outputs of the same
    chain. With ``partial`` a reference that cannot be resolved is left in place (scoring uses
    what is left as a wildcard); otherwise it raises ``UnresolvedReference``."""
    if isinstance(spec, list):
        return [resolve(x, values, outputs, partial=partial) for x in spec]
    if not isinstance(spec, dict):
        return spec
    try:
        if STOP in spec:
            i = spec[STOP]
            if i not in values or values[i] is None:
                raise UnresolvedReference(f"reference to stop {i}, which has no value")
            return get_path(values[i], spec.get("path", ""))
        if STEP in spec:
            k = spec[STEP]
            if not 0 <= k < len(outputs):
                raise UnresolvedReference(f"reference to step {k}, which has not run")
            if spec.get("pick"):
                return pick(outputs[k], spec["pick"])
            return get_path(outputs[k], spec.get("path", ""))
        if CODE in spec:
            refs = {name: resolve(r, values, outputs) for name, r in (spec.get("refs") or {}).items()}
            try:
                return spec[CODE].format(**refs)
            except (KeyError, IndexError, ValueError, AttributeError) as exc:
                raise UnresolvedReference(f"code template cannot be filled: {exc}") from None
    except UnresolvedReference:
        if partial:
            return spec
        raise
    return {k: resolve(v, values, outputs, partial=partial) for k, v in spec.items()}


# ---- walking and remapping ----------------------------------------------------------------
def references(spec: Any) -> Iterator[dict[str, Any]]:
    """Every reference inside ``spec`` (references nested in a ``$code``'s refs included)."""
    if isinstance(spec, list):
        for x in spec:
            yield from references(x)
    elif isinstance(spec, dict):
        if STOP in spec or STEP in spec:
            yield spec
        elif CODE in spec:
            yield spec
            for r in (spec.get("refs") or {}).values():
                yield from references(r)
        else:
            for v in spec.values():
                yield from references(v)


def stop_indices(spec: Any) -> list[int]:
    """The stops ``spec`` reads, sorted, each once."""
    return sorted({r[STOP] for r in references(spec) if STOP in r})


def remap(spec: Any, mapping: Mapping[int, int]) -> Any:
    """``spec`` with every ``$stop`` index rewritten through ``mapping`` (old -> new); a stop
    missing from the mapping is a bug (its consumer should have been dropped with it)."""
    if isinstance(spec, list):
        return [remap(x, mapping) for x in spec]
    if not isinstance(spec, dict):
        return spec
    if STOP in spec:
        return {**spec, STOP: mapping[spec[STOP]]}
    if STEP in spec:
        return dict(spec)
    if CODE in spec:
        return {**spec, "refs": {k: remap(r, mapping) for k, r in (spec.get("refs") or {}).items()}}
    return {k: remap(v, mapping) for k, v in spec.items()}


def value_inputs(stop: Stop) -> list[int]:
    """The stops whose values this stop computes with."""
    if stop.wide is not None:   # a wide stop collects its set around its input's value
        return list(stop.depends_on)
    if stop.source_stop is not None:
        return [stop.source_stop]
    if stop.expression:
        return expressions.references(stop.expression)
    return stop_indices([step.args for step in stop.tool_chain])


__all__ = [
    "UnresolvedReference",
    "code_ref",
    "get_path",
    "is_reference",
    "is_step_ref",
    "is_stop_ref",
    "pick",
    "references",
    "remap",
    "resolve",
    "step_ref",
    "stop_indices",
    "stop_ref",
    "value_inputs",
]
