"""The one tool-log writer: every agent path (race, the tool CLI, the MCP server) writes the same lines.

A tool log is JSONL, one line per call, in the shape of the AAR reference's ``tool_log.jsonl``:
``{tool, args, success, result_preview, result_len, ts, url?}``. ``result_preview`` is the
first ``PREVIEW_CHARS`` characters of the exact response text, ``result_len`` its full length,
``ts`` seconds since the epoch (milliseconds), ``url`` the fetched page for calls that name one.
The reader is ``pipeline.scoring.trials.read_tool_log``; keeping one writer keeps both sides of
that format in step, so a trial scores the same whichever way its calls were made.

Kept free of heavy imports: the tool CLI runs once per agent tool call.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.cache import canonical_json
from pipeline.tools.view import fit

if TYPE_CHECKING:
    from pipeline.tools.registry import Toolbox

PREVIEW_CHARS = 2000
# Characters JSON leaves raw with ensure_ascii=False but str.splitlines() breaks lines at: escaped, so a
# page text holding one cannot split a log line for a line-by-line reader (the scorer's is one).
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def log_entry(tool: str, args: Any, success: bool, response: str) -> dict[str, Any]:
    """One log line as a dict (``args`` may be the raw text of arguments that were not JSON)."""
    entry = {"tool": tool, "args": args, "success": bool(success), "result_preview": response[:PREVIEW_CHARS],
             "result_len": len(response), "ts": round(time.time(), 3)}
    if isinstance(args, dict) and isinstance(args.get("url"), str):
        entry["url"] = args["url"]
    return entry


class ToolLog:
    """Append-only JSONL tool log, flushed line by line (a crash leaves a readable prefix).

    Each line is one ``write`` on a file opened for appending, so concurrent writers (two
    processes of the tool CLI, two requests of one MCP session) never interleave inside a line.
    """

    def __init__(self, path: str | Path | None):
        self.path = None if path is None else Path(path)  # None: count calls, write nothing
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.calls = 0
        self.last_success: bool | None = None   # the success flag of the last line written
        self._lock = threading.Lock()

    def record(self, tool: str, args: Any, success: bool, response: str, refused: bool = False) -> dict[str, Any]:
        entry = log_entry(tool, args, success, response)
        if refused:   # past the step budget: logged, not run, and no call (``calls_made``, the scorer)
            entry["refused"] = True
        line = json.dumps(entry, ensure_ascii=False).translate(_LINE_BREAKS) + "\n"
        with self._lock:
            if self.path is not None:
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(line)
            self.calls += 1
            self.last_success = entry["success"]
        return entry


def calls_made(path: str | Path) -> int:
    """The calls a tool log holds (refused lines are no calls; a missing log holds none)."""
    p = Path(path)
    if not p.is_file():
        return 0
    made = 0
    for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            made += bool(line.strip()) and not json.loads(line).get("refused")
        except (json.JSONDecodeError, AttributeError):
            made += 1   # a broken line still stood for a call
    return made


def call_tool(toolbox: Toolbox, log: ToolLog, tool: str, args: Any) -> tuple[bool, str, dict | None]:
    """Call one tool through the registry and log it; errors become an ``{error}`` response.

    Every agent path goes through here (race's agents, the MCP server), so an argument error,
    a missing backend or a replay miss reads the same in every log."""
    try:
        result = toolbox.call(tool, args)
        ok, text, data = result.ok, result.response_json, result.data
    except Exception as exc:  # noqa: BLE001 - the agent sees every failure as a message, never a trace
        ok, data = False, None
        text = canonical_json({"error": f"{type(exc).__name__}: {exc}"})
    log.record(tool, args, ok, text)
    return ok, text, data


SHORT_FIELD = 200   # a field whose JSON is shorter than this is printed before the long ones of a cut result


def short_fields_first(text: str) -> str:
    """A JSON object's text with its short fields (title, url, description, ...) before its long ones
    (lead, sections), each group in canonical key order: the same characters, so that a cut result keeps
    what names it (blind race 13: a page fetch cut before its ``title``, R11 and R13 fetched twice)."""
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not isinstance(data, dict):
        return text
    items = sorted(data.items())
    parts = [(len(canonical_json(v)) >= SHORT_FIELD, k, v) for k, v in items]
    ordered = {k: v for _, k, v in sorted(parts, key=lambda p: p[0])}   # stable: key order within a group
    out = json.dumps(ordered, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return out if len(out) == len(text) else text   # (a text not in canonical form is shown as it came)


MAX_CHARS = 8000   # the cut an agent reads a tool's answer at by default (the tool CLI, the MCP server, the seed
# paper's protocol); the golden collection of a page's links pages through them as that cut shows them


def truncate(text: str, max_chars: int, indent: int | None = None) -> str:
    """``text`` as an agent reads it at a cut of ``max_chars`` characters (the tool CLI and the MCP server
    cut a result the same way): itself when it fits, else shortened inside its JSON so that what is
    printed still parses (``pipeline.tools.view.fit``: a page keeps its title, contents and infobox and
    says how to read the rest); strict JSON either way."""
    return fit(text, max_chars, indent)


__all__ = ["PREVIEW_CHARS", "ToolLog", "call_tool", "log_entry", "truncate"]
