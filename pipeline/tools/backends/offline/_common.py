"""Helpers shared by the offline backends: result envelopes and place resolution."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext
from pipeline.tools.spec import TOOLS


def world_dir(ctx: BackendContext) -> Path:
    return Path(ctx.settings.world_dir)


def result(tool: str, values: dict, provenance: str, source: str) -> dict:
    """A tool result: the values plus the tool's canonical units, provenance and source."""
    return {**values, "units": dict(TOOLS[tool]["units"]), "provenance": provenance, "source": source}


def resolve_place(ctx: BackendContext, place: str | dict, label: str) -> tuple[float, float, str]:
    """Coordinates of a place argument; strings are geocoded through the toolbox (so cached too)."""
    if isinstance(place, dict):
        return float(place["lat"]), float(place["lng"]), f"{place['lat']},{place['lng']}"
    data = ctx.call("maps_geocode", {"address": place})
    if "error" in data:
        raise ToolError(f"{label}: {data['error']}")
    return float(data["lat"]), float(data["lng"]), data.get("formatted_address") or place


def parse_date(text: str, label: str = "date") -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ToolError(f"{label} {text!r} is not a valid calendar date (YYYY-MM-DD)") from None
