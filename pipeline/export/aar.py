"""Import and export the public AAR leg JSON (trail_id, seed_url, stops[], passcode, riddle, ...).

Our ``Leg`` keeps references (``pipeline.refs``: ``{"$stop": i}``, ``{"$step": k}``; ``s<i>`` in
expressions); AAR JSON carries values substituted into expressions and code, and
``__from_previous_as_<arg>`` keys for step-to-step references. The importer converts those keys
into ``{"$step": k}`` once, on the way in (nothing else in the package knows them), and recovers
``s<i>`` names where literal values match the referenced stops; what it cannot map (self-loop
bridges, odd finish-line code, a riddle whose layout differs) is kept in ``Stop.aar``
(``AarSource``) and ``aar_*`` metadata so that import -> export -> import is stable. The exporter
renders references back into values and keys.

Semantics of an AAR bridge on a page stop: it describes the move to the NEXT page stop
(``link_follow`` with ``target_url``, or ``search_query`` with ``expected_result_url``); in our
model that move is the ``transition`` of the next page stop.
"""
from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pipeline import refs
from pipeline.clues import numbered_clues
from pipeline.model import (
    AAR_STOP_TYPE,
    COMPUTE,
    DETOUR,
    FINISH_LINE,
    LINK_FOLLOW,
    MERGE,
    ROADBLOCK,
    ROUTE_INFO,
    SEARCH_QUERY,
    TOOL_CALL,
    WIDE,
    AarSource,
    Clue,
    Extraction,
    Leg,
    Stop,
    ToolStep,
    Transition,
    WideSpec,
    plain,
)
from pipeline.tools.spec import TOOLS

# Which field of our tool result an AAR output_key names (import); AAR has no extract paths.
AAR_OUTPUT_EXTRACT = {
    "coords": "", "coords_a": "", "coords_b": "",
    "elevation": "elevation_m", "poi_count": "count", "place_rating": "places.0.rating",
    "population": "population", "area_km2": "area_km2", "distance_km": "rows.0.0.distance_km",
    "duration": "duration_min", "merged": "stdout", "converted": "stdout", "sunshine": "daily.0.sunshine_h",
}
_FROM_PREV = "__from_previous"
_FROM_PREV_AS = "__from_previous_as_"
_OD_KEY = "__from_previous_as_origins_destinations"


# ---- value rendering -----------------------------------------------------------------
def render_value(value: Any) -> str:
    """A value as AAR writes it inside a finish-line expression: numbers (and numeric
    strings such as a year) as integers, truncated toward zero; other text quoted."""
    number = _numeric(value)
    if number is not None:
        return str(int(number))
    return json.dumps(value, ensure_ascii=False)


def render_code_value(value: Any) -> str:
    """A value as AAR writes it inside merge code: Python literal (floats keep their '.0')."""
    number = _numeric(value)
    if number is not None and not isinstance(value, int):
        return repr(number)
    return repr(value)


def render_expression(expression: str | None, stops: list[Stop], render=render_value) -> str | None:
    """Replace ``s<i>`` names by the stops' values, as the published AAR JSON shows them."""
    if expression is None:
        return None
    by_index = {s.index: s for s in stops}

    def sub(m: re.Match) -> str:
        stop = by_index.get(int(m.group(1)))
        return render(stop.value) if stop is not None and stop.value is not None else m.group(0)

    return re.sub(r"\bs(\d+)\b", sub, expression)


# Helper functions a finish-line expression may call, defined in its exported code.
CODE_HELPERS = {
    "digital_root": "def digital_root(n):\n    n = abs(int(n))\n    return 0 if n == 0 else 1 + (n - 1) % 9\n",
}


def expression_code(rendered: str, prelude: str | None = None) -> str:
    if prelude is None:
        prelude = "".join(code for name, code in CODE_HELPERS.items() if re.search(rf"\b{name}\(", rendered))
    return f"{prelude}result = {rendered}\nprint(result)"


_NUMBER = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)(?![\w.])")


def _numeric(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", v):
        return float(v)
    return None


def referencing_expression(expression: str, stops: list[Stop], referenced: list[int], render=render_value) -> str:
    """Turn literal values back into ``s<i>`` names when they equal a referenced stop's value.

    A literal right after ``%`` (the final ``% 10``) is a modulus, never a stop value. Each
    referenced stop is used at most once, in order; unmatched literals stay literal.
    """
    by_index = {s.index: s for s in stops}
    unused = [i for i in referenced if i in by_index]
    out, last = [], 0
    for m in _NUMBER.finditer(expression):
        before = expression[:m.start()].rstrip()
        if before.endswith("%"):
            continue
        hit = next((i for i in unused if _numeric(by_index[i].value) is not None
                    and render(by_index[i].value) == m.group(1)), None)
        if hit is None:
            continue
        # AAR truncates values in expressions: only an exact literal match is a reference.
        unused.remove(hit)
        out.append(expression[last:m.start()] + f"s{hit}")
        last = m.end()
    out.append(expression[last:])
    return "".join(out)


# ---- tool arguments ------------------------------------------------------------------
def _stop_values(stops: list[Stop]) -> dict[int, Any]:
    return {s.index: s.value for s in stops if s.value is not None}


def _step_key(v: Any, chain: list[ToolStep]) -> str | None:
    """The AAR output_key a ``{"$step": k}`` reference names, or None if ``v`` is none."""
    if refs.is_step_ref(v) and 0 <= v[refs.STEP] < len(chain):
        return chain[v[refs.STEP]].output_key
    return None


def args_to_aar(args: dict, stops: list[Stop], chain: list[ToolStep] | None = None,
                aar_args: dict | None = None) -> dict:
    """Our step arguments in AAR form: stop references substituted, step references as
    ``__from_previous_as_<arg>`` keys (``__from_previous`` for a weather ``location``,
    ``__from_previous_as_origins_destinations`` for a one-to-one distance matrix)."""
    chain = chain or []
    values = _stop_values(stops)
    out: dict[str, Any] = {}
    origins, destinations = args.get("origins"), args.get("destinations")
    if (isinstance(origins, list) and isinstance(destinations, list) and len(origins) == len(destinations) == 1
            and _step_key(origins[0], chain) and _step_key(destinations[0], chain)):
        out[_OD_KEY] = [_step_key(origins[0], chain), _step_key(destinations[0], chain)]
        args = {k: v for k, v in args.items() if k not in ("origins", "destinations")}
    for name, v in args.items():
        key = _step_key(v, chain)
        if key is not None:
            out[_FROM_PREV if name == "location" else _FROM_PREV_AS + name] = key
        else:
            out[name] = refs.resolve(v, values, partial=True)
    return {**out, **(aar_args or {})}


def args_from_aar(tool: str, args: dict, earlier: list[ToolStep], warnings: list[str], where: str) -> ToolStep:
    """AAR step arguments as ours, converted once on the way in: ``__from_previous*`` keys become
    ``{"$step": k}`` references to the earlier step with that output_key (only ``lat``/``lng`` of a
    geocode result, which is what the consuming tools accept); arguments our tool schema lacks go
    to ``ToolStep.aar_args`` (kept for export, never sent)."""
    known = TOOLS.get(tool, {}).get("parameters", {}).get("properties")
    out: dict[str, Any] = {}
    extra: dict[str, Any] = {}

    def ref(key: Any) -> Any:
        k = next((n for n in range(len(earlier) - 1, -1, -1) if earlier[n].output_key == key), None)
        if k is None:
            raise LookupError(key)
        return refs.step_ref(k, pick=["lat", "lng"]) if earlier[k].tool == "maps_geocode" else refs.step_ref(k)

    for name, v in args.items():
        try:
            if name == _OD_KEY and isinstance(v, list) and len(v) == 2:
                out["origins"], out["destinations"] = [ref(v[0])], [ref(v[1])]
            elif name == _FROM_PREV:
                out["location"] = ref(v)
            elif name.startswith(_FROM_PREV_AS):
                out[name[len(_FROM_PREV_AS):]] = ref(v)
            elif known is not None and name not in known:
                extra[name] = v
            else:
                out[name] = v
        except LookupError:
            warnings.append(f"{where}: {name} names no earlier output {v!r}; kept for export only")
            extra[name] = v
    return ToolStep(tool=tool, args=out, output_key="", extract="", aar_args=extra or None)


# ---- export ----------------------------------------------------------------------------
def _empty_bridge(kind: str) -> dict:
    return {"bridge_type": kind, "target_url": None, "search_query": None, "expected_result_url": None,
            "tool_chain": [], "expression": None, "expression_code": None, "referenced_stops": []}


def _page_bridge(leg: Leg, stop: Stop) -> dict:
    if stop.aar and stop.aar.bridge is not None:
        return dict(stop.aar.bridge)
    pages = [s for s in leg.stops if s.kind == ROUTE_INFO]
    following = [s for s in pages if s.index > stop.index]
    nxt = following[0] if following else None
    if nxt is None or nxt.transition is None:
        bridge = _empty_bridge(LINK_FOLLOW)
        bridge["target_url"] = stop.page_url
        return bridge
    t = nxt.transition
    if t.kind == SEARCH_QUERY:
        bridge = _empty_bridge(SEARCH_QUERY)
        bridge["search_query"] = t.search_query
        bridge["expected_result_url"] = t.target_url or nxt.page_url
    else:
        bridge = _empty_bridge(LINK_FOLLOW)
        bridge["target_url"] = t.target_url or nxt.page_url
    return bridge


def _step_values(leg: Leg) -> dict[tuple[int, int], Any]:
    return {(t.stop, t.step): t.value for t in leg.trace}


def _merge_code(leg: Leg, stop: Stop) -> str:
    return f"result = {render_expression(stop.expression, leg.stops, render_code_value)}\nprint(result)"


def _tool_bridge(leg: Leg, stop: Stop) -> dict:
    bridge = _empty_bridge(TOOL_CALL)
    values = _step_values(leg)
    chain = stop.tool_chain
    if not chain and stop.kind == MERGE and stop.expression:
        chain = [ToolStep("python_execute_code", {"code": _merge_code(leg, stop)}, "merged", "stdout")]
    bridge["tool_chain"] = [
        {"tool_name": step.tool, "arguments": args_to_aar(step.args, leg.stops, chain, step.aar_args),
         "expected_output": values.get((stop.index, j)), "output_key": step.output_key}
        for j, step in enumerate(chain)
    ]
    return bridge


def _wide_bridge(leg: Leg, stop: Stop) -> dict:
    """A wide stop's bridge: its golden collection calls as a tool chain (AAR has no set-valued stop;
    the set itself goes beside it as ``wide_set``)."""
    bridge = _empty_bridge(TOOL_CALL)
    bridge["tool_chain"] = [{"tool_name": t.tool, "arguments": t.args, "expected_output": t.value,
                             "output_key": f"call_{t.step}"} for t in leg.trace if t.stop == stop.index]
    return bridge


def _stop_to_aar(leg: Leg, stop: Stop) -> dict:
    if stop.kind == ROUTE_INFO:
        bridge = _page_bridge(leg, stop)
    elif stop.kind in (ROADBLOCK, MERGE):
        bridge = _tool_bridge(leg, stop)
    elif stop.kind == WIDE:
        bridge = _wide_bridge(leg, stop)
    else:
        bridge = _empty_bridge(COMPUTE)
    aar = stop.aar or AarSource()
    if stop.kind == FINISH_LINE:
        rendered = render_expression(stop.expression, leg.stops)
        bridge["expression"] = rendered
        bridge["expression_code"] = aar.expression_code or (
            expression_code(rendered, aar.code_prelude) if rendered is not None else None)
        bridge["referenced_stops"] = list(stop.depends_on if aar.referenced_stops is None else aar.referenced_stops)
    section = None
    if stop.extraction is not None:
        section = "infobox" if stop.extraction.source == "infobox" else stop.extraction.section
    reason_code = aar.reason_code
    if stop.kind == DETOUR and reason_code is None and stop.source_stop is not None:
        src = next((s for s in leg.stops if s.index == stop.source_stop), None)
        reason_code = f"result = {stop.transform}({render_value(src.value if src else None)})\nprint(result)"
    out = {
        "index": stop.index,
        "stop_type": AAR_STOP_TYPE[stop.kind],
        "page_url": stop.page_url,
        "extraction_target": stop.description,
        "extraction_section": section,
        "extracted_value": stop.value,
        "extracted_value_type": stop.value_type,
        "bridge": bridge,
        "reasoning": aar.reasoning,
        "reason_transform": stop.transform if stop.kind == DETOUR else None,
        "reason_source_stop": stop.source_stop if stop.kind == DETOUR else None,
        "reason_code": reason_code if stop.kind == DETOUR else None,
        "depends_on": list(stop.depends_on),
    }
    if stop.wide is not None:   # issue 34: the exact set and how it is defined, beside AAR's fields
        out["wide_set"] = plain(stop.wide)
    return out


def leg_to_aar(leg: Leg) -> dict:
    """One leg in the public AAR JSON schema (values substituted, references rendered)."""
    md = dict(leg.metadata)
    aar_difficulty = md.pop("aar_difficulty", {})
    trail_id = md.pop("aar_trail_id", None) or leg.leg_id
    riddle = md.pop("aar_riddle", None) or leg.riddle
    generated_at = md.pop("generated_at", None)
    metadata = {**md, "theme": leg.theme, "difficulty": leg.level, "variant": leg.variant,
                "leg_id": leg.leg_id, "seed": leg.seed}
    kinds = [s.kind for s in leg.stops]
    return {
        "trail_id": trail_id,
        "seed_url": leg.seed_url,
        "seed_title": leg.seed_title,
        "stops": [_stop_to_aar(leg, s) for s in leg.stops],
        "passcode": leg.passcode,
        "difficulty": {**aar_difficulty, "level": leg.level, "depth": len(leg.stops),
                       "tool_stop_count": sum(k in (ROADBLOCK, MERGE) for k in kinds),
                       "reason_stop_count": kinds.count(DETOUR)},
        "riddle": riddle,
        "metadata": metadata,
        "generated_at": generated_at,
    }


# ---- import ----------------------------------------------------------------------------
def _infer_variant(d: dict) -> str:
    md = d.get("metadata") or {}
    if md.get("variant") in ("linear", "dag"):
        return md["variant"]
    return "dag" if any("depends_on" in s for s in d.get("stops", [])) else "linear"


def _stable_seed(trail_id: str) -> int:
    return int(hashlib.sha256(trail_id.encode("utf-8")).hexdigest()[:8], 16)


def aar_to_leg(d: dict, *, variant: str | None = None, leg_id: str | None = None) -> Leg:
    """Import one AAR leg. Tolerant: odd values are kept and noted in metadata['import_warnings']."""
    warnings: list[str] = []
    md_in = dict(d.get("metadata") or {})
    trail_id = d.get("trail_id") or md_in.get("sample_id") or "unknown"
    variant = variant or _infer_variant(d)
    level = (d.get("difficulty") or {}).get("level") or md_in.get("difficulty") or "easy"
    raw_stops = sorted(d.get("stops", []), key=lambda s: s.get("index", 0))
    stops: list[Stop] = []
    for s in raw_stops:
        aar_type = s.get("stop_type")
        bridge = s.get("bridge") or {}
        reasoning = s.get("reasoning") or ""
        source = AarSource(reasoning=reasoning)
        value = s.get("extracted_value")
        if isinstance(value, (dict, list)):
            warnings.append(f"stop {s.get('index')}: extracted_value is a {type(value).__name__}, not a "
                            f"{s.get('extracted_value_type')}; kept as is")
        if aar_type == "page":
            kind = ROUTE_INFO
        elif aar_type == "tool" and isinstance(s.get("wide_set"), dict):   # our wide stop (issue 34)
            kind = WIDE
        elif aar_type == "tool":
            kind = MERGE if reasoning.lower().startswith("diamond merge") else ROADBLOCK
        elif aar_type == "reason":
            kind = DETOUR
        elif aar_type == "compute":
            kind = FINISH_LINE
        else:
            warnings.append(f"stop {s.get('index')}: unknown stop_type {aar_type!r}, imported as roadblock")
            kind = ROADBLOCK
        section = s.get("extraction_section")
        extraction = None
        if section == "infobox":
            extraction = Extraction(source="infobox")
        elif section is not None:
            extraction = Extraction(source="prose", section=section)
        chain: list[ToolStep] = []
        for n, t in enumerate([] if kind == WIDE else bridge.get("tool_chain") or []):   # a set is collected by its spec
            step = args_from_aar(t.get("tool_name", ""), t.get("arguments") or {}, chain, warnings,
                                 f"stop {s.get('index')} step {n}")
            step.output_key = t.get("output_key") or ""
            step.extract = AAR_OUTPUT_EXTRACT.get(t.get("output_key"), "")
            chain.append(step)
        if kind == DETOUR and s.get("reason_code") is not None:
            source.reason_code = s["reason_code"]
        stop = Stop(
            index=int(s.get("index", len(stops))), kind=kind, description=s.get("extraction_target") or "",
            depends_on=list(s.get("depends_on") or []), page_url=s.get("page_url"),
            page_title=_title_of(s.get("page_url")), extraction=extraction,
            transition=Transition(TOOL_CALL) if kind in (ROADBLOCK, MERGE) else (
                Transition(COMPUTE) if kind in (DETOUR, FINISH_LINE) else None),
            tool_chain=chain, transform=s.get("reason_transform") if kind == DETOUR else None,
            source_stop=s.get("reason_source_stop") if kind == DETOUR else None,
            value=value, value_type=s.get("extracted_value_type"), aar=source,
        )
        if kind == WIDE:
            stop.wide = WideSpec(**s["wide_set"])
        if kind == ROADBLOCK and reasoning.lower().startswith("diamond branch"):
            stop.diamond_role = "branch"
        stops.append(stop)

    _link_page_transitions(raw_stops, stops)
    _assign_diamonds(stops)
    for s, raw in zip(stops, raw_stops):
        bridge = raw.get("bridge") or {}
        if s.kind == FINISH_LINE:
            referenced = list(bridge.get("referenced_stops") or [])
            if referenced != s.depends_on:
                s.aar.referenced_stops = referenced
            if bridge.get("expression"):
                s.expression = referencing_expression(bridge["expression"], stops, referenced or s.depends_on)
                if render_expression(s.expression, stops) != bridge["expression"]:
                    warnings.append(f"stop {s.index}: expression does not re-render; kept literal")
                    s.expression = bridge["expression"]
            code = bridge.get("expression_code") or ""
            marker = f"result = {bridge.get('expression')}\nprint(result)"
            if code.endswith(marker) and code != expression_code(bridge.get("expression") or ""):
                s.aar.code_prelude = code[: -len(marker)]
            elif not code.endswith(marker) and code:
                s.aar.expression_code = code
        elif s.kind == MERGE and len(s.tool_chain) == 1 and s.tool_chain[0].tool == "python_execute_code":
            code = s.tool_chain[0].args.get("code", "")
            m = re.match(r"result = (.*)\nprint\(result\)$", code, re.DOTALL)
            if m:
                s.expression = referencing_expression(m.group(1), stops, s.depends_on, render_code_value)

    passcode = d.get("passcode")
    if not (isinstance(passcode, int) and 0 <= passcode <= 9):
        warnings.append(f"passcode {passcode!r} is not one digit")
    clues = [Clue(number=n, stop=n - 1, text=t) for n, t in numbered_clues(d.get("riddle") or "")]
    leg = Leg(
        leg_id=leg_id or md_in.get("leg_id") or f"aar-{variant}-{level}-{md_in.get('sample_id') or trail_id}",
        level=level, variant=variant, seed=int(md_in.get("seed") or _stable_seed(trail_id)), seed_title=d.get("seed_title") or "",
        seed_url=d.get("seed_url") or "", stops=stops, passcode=passcode, clues=clues,
        theme=md_in.pop("theme", "") or "",
    )
    for key in ("difficulty", "variant", "leg_id", "seed"):
        md_in.pop(key, None)
    md = {**md_in, "aar_trail_id": trail_id, "source_format": "aar"}
    extra_difficulty = {k: v for k, v in (d.get("difficulty") or {}).items()
                        if k not in ("level", "depth", "tool_stop_count", "reason_stop_count")}
    if extra_difficulty:
        md["aar_difficulty"] = extra_difficulty
    if d.get("generated_at"):
        md["generated_at"] = d["generated_at"]
    if (d.get("riddle") or "") != leg.riddle:
        md["aar_riddle"] = d.get("riddle") or ""
    if warnings:
        md["import_warnings"] = warnings
    leg.metadata = md
    return leg


def _title_of(url: str | None) -> str | None:
    if not url:
        return None
    return unquote(url.rsplit("/wiki/", 1)[-1]).replace("_", " ")


def _link_page_transitions(raw_stops: list[dict], stops: list[Stop]) -> None:
    """A page stop's bridge that leads to the next page stop becomes that stop's transition;
    any other bridge (self-loops, mismatches) is kept verbatim in ``Stop.aar.bridge``."""
    pages = [(raw, s) for raw, s in zip(raw_stops, stops) if s.kind == ROUTE_INFO]
    for k, (raw, s) in enumerate(pages):
        bridge = raw.get("bridge") or {}
        nxt = pages[k + 1][1] if k + 1 < len(pages) else None
        btype = bridge.get("bridge_type")
        if nxt is not None and btype == LINK_FOLLOW and bridge.get("target_url") == nxt.page_url and not bridge.get("search_query"):
            nxt.transition = Transition(LINK_FOLLOW, from_stop=s.index, target_url=bridge["target_url"])
        elif nxt is not None and btype == SEARCH_QUERY and bridge.get("expected_result_url") == nxt.page_url \
                and not bridge.get("target_url"):
            nxt.transition = Transition(SEARCH_QUERY, from_stop=s.index, target_url=nxt.page_url,
                                        search_query=bridge.get("search_query"))
        else:
            s.aar.bridge = {k2: bridge.get(k2) for k2 in _empty_bridge(LINK_FOLLOW)}


def _assign_diamonds(stops: list[Stop]) -> None:
    """Number diamonds by merge order: merge, its branches (depends_on) and their common source."""
    by_index = {s.index: s for s in stops}
    number = 0
    for s in stops:
        if s.kind != MERGE:
            continue
        s.diamond, s.diamond_role = number, "merge"
        sources: set[int] | None = None
        for b in s.depends_on:
            branch = by_index.get(b)
            if branch is None:
                continue
            branch.diamond, branch.diamond_role = number, "branch"
            sources = set(branch.depends_on) if sources is None else sources & set(branch.depends_on)
        for src in sorted(sources or ()):
            if by_index[src].diamond is None:
                by_index[src].diamond, by_index[src].diamond_role = number, "source"
        number += 1


# ---- directories ------------------------------------------------------------------------
def aar_filename(leg: Leg) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", leg.leg_id) + ".json"


def write_aar_dir(legs: Iterable[Leg], directory: str | Path) -> list[Path]:
    """One AAR JSON file per leg (``<leg_id>.json``); returns the paths written."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for leg in legs:
        p = out / aar_filename(leg)
        p.write_text(json.dumps(leg_to_aar(leg), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        paths.append(p)
    return paths


def read_aar_dir(directory: str | Path) -> list[Leg]:
    """Every ``*.json`` leg under a directory (recursively, sorted by path). The variant comes
    from a path part ``aar-linear``/``aar-dag`` when present; a file that is not a leg is skipped."""
    legs = []
    root = Path(directory)
    for p in sorted(root.rglob("*.json")):
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(d, dict) or "stops" not in d:
            continue
        variant = next((part.split("-", 1)[1] for part in p.parts if part in ("aar-linear", "aar-dag")), None)
        leg_id = None
        if variant:
            level = (d.get("difficulty") or {}).get("level", "unknown")
            leg_id = f"aar-{variant}-{level}-{p.stem}"
        leg = aar_to_leg(d, variant=variant, leg_id=leg_id)
        leg.metadata.setdefault("source_path", str(p.relative_to(root)))
        legs.append(leg)
    return legs
