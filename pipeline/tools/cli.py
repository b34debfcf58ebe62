"""The agent executor: ``python -m pipeline.tools`` runs one tool call per process.

    python -m pipeline.tools list
    python -m pipeline.tools call maps_geocode '{"address": "Ulm"}'
    python -m pipeline.tools maps_geocode '{"address": "Ulm"}'      # same (AAR tools.py form)
    python -m pipeline.tools --backend replay --cache run.sqlite --log tool_log.jsonl call ...
    python -m pipeline.tools serve [--http] ...                      # the same tools over MCP

``list`` prints every tool in OpenAI function-calling form (a JSON array). ``call`` prints
the result object as canonical JSON (what the cache recorded); a result longer than
``--max-chars`` (8,000) is shortened inside its JSON (``pipeline.tools.view``: a page keeps its title,
contents, infobox and first links and says how to read the rest), so the output always parses as strict
JSON. The executor's options may come before the command or after it. Exit status: 0 for
an answer, 1 when the tool could not answer (the JSON then holds ``error``) or a replay
miss, 2 with a one-line message on stderr for an unknown tool, invalid JSON or arguments
that break the tool's schema. With ``--budget B`` (and ``--log``) a call made when the log already
holds B calls is refused: not run, logged with ``refused: true`` (a refused line is no call), exit 1. With ``--log FILE`` (or LEGWORK_TOOL_LOG / settings.tool_log)
each call appends one JSON line ``{tool, args, success, result_preview, result_len, ts, url?}``,
the shape of the AAR reference's tool_log.jsonl, written by ``pipeline.tools.toollog``.
``serve`` runs the same tools as an MCP server (``pipeline.tools.serve``; ``pipeline.tools.__main__``
hands it the arguments from ``serve_arguments``).

Agents call this once per tool call, so start-up time matters: it imports the registry (the
backends load on the first call), never pyarrow, pandas, Prefect or the MCP server.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from pipeline.cache import ReplayMiss
from pipeline.config import ConfigError, load_settings
from pipeline.tools.errors import SimulatedRefused, ToolArgumentError, ToolError
from pipeline.tools.registry import Toolbox, validate_args
from pipeline.tools.spec import TOOL_NAMES, TOOLS, openai_schema
from pipeline.tools.toollog import MAX_CHARS, PREVIEW_CHARS, ToolLog, calls_made, truncate
from pipeline.usage import UserError

EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A call the executor refuses before running anything (exit status 2)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pipeline.tools",
                                     description="Legwork tools: list the schemas or make one call.")
    parser.add_argument("--backend", choices=("offline", "live", "replay"),
                        help="default backend for every tool (per-tool settings still win)")
    parser.add_argument("--cache", type=Path, help="record/replay cache file (SQLite)")
    parser.add_argument("--snapshot", type=Path, help="snapshot directory")
    parser.add_argument("--log", type=Path, help="append one JSON line per call to this file")
    parser.add_argument("--max-chars", type=int, default=MAX_CHARS,
                        help="shorten printed results to this many characters (inside their JSON)")
    parser.add_argument("--pretty", action="store_true", help="indent the result JSON")
    parser.add_argument("--budget", type=int, default=None,
                        help="with --log: the step budget B; a call when the log already holds B calls is refused "
                             "(not run, logged as refused, exit status 1); --max-chars may then only lower the cut")
    parser.add_argument("command", help="list | call | serve | a tool name")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="for call: TOOL_NAME 'JSON_ARGS'; for serve: its options")
    return parser


_VALUED = ("--backend", "--cache", "--snapshot", "--log", "--max-chars", "--budget")   # the executor's options with a value
_FLAGS = ("--pretty",)


def hoist_options(argv: list[str]) -> list[str]:
    """``argv`` with the executor's own options that follow ``call`` (or a tool name) moved before it:
    ``call web_search '{...}' --max-chars 8000`` reads as ``--max-chars 8000 call web_search '{...}'``
    (blind race 14: agents put them last). ``serve`` keeps its arguments: they are the server's."""
    head, i = [], 0
    while i < len(argv) and argv[i].startswith("-"):   # the options before the command, as given
        head.append(argv[i])
        if argv[i] in _VALUED and i + 1 < len(argv):
            head.append(argv[i + 1])
            i += 1
        i += 1
    if i >= len(argv) or argv[i] == "serve":
        return list(argv)
    moved, rest, j = [], [argv[i]], i + 1
    while j < len(argv):
        token = argv[j]
        if token in _VALUED and j + 1 < len(argv):
            moved += [token, argv[j + 1]]
            j += 2
            continue
        if token in _FLAGS or token.split("=", 1)[0] in _VALUED and "=" in token:
            moved.append(token)
        else:
            rest.append(token)
        j += 1
    return head + moved + rest


def _list_tools() -> int:
    print(json.dumps([openai_schema(name) for name in TOOL_NAMES], indent=2, ensure_ascii=False))
    return EXIT_OK


def _parse_args_json(tool: str, raw: str | None) -> dict:
    if raw is None or not raw.strip():
        return {}
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{tool}: arguments are not valid JSON: {exc}") from None
    if not isinstance(args, dict):
        raise UsageError(f"{tool}: arguments must be a JSON object, got {type(args).__name__}")
    return args


def _log_call(path: Path | None, tool: str, args, success: bool, text: str) -> None:
    if path is not None:
        ToolLog(path).record(tool, args, success, text)


def _call(options: argparse.Namespace, tool: str, raw_args: str | None) -> int:
    try:
        settings = load_settings(default_backend=options.backend, cache_path=options.cache,
                                 snapshot_dir=options.snapshot, tool_log=options.log)
    except ConfigError as exc:
        raise UsageError(f"configuration: {exc}") from None
    log_path = settings.tool_log
    try:
        if tool not in TOOLS:
            raise UsageError(f"unknown tool {tool!r}; run 'python -m pipeline.tools list' "
                             f"(tools: {', '.join(TOOLS)})")
        args = _parse_args_json(tool, raw_args)
        try:
            validate_args(tool, args)
        except ToolArgumentError as exc:
            raise UsageError(str(exc)) from None
    except UsageError as exc:
        _log_call(log_path, tool, raw_args if raw_args is not None else {}, False, f"error: {exc}")
        raise

    if options.budget is not None:
        if log_path is None:
            raise UsageError("--budget counts the calls of a --log file: give --log")
        made = calls_made(log_path)
        if made >= options.budget:
            text = json.dumps({"error": f"step budget reached: {made} of {options.budget} calls made; this call "
                                        "was refused and not run. Give your best answer from what you have.",
                               "budget_reached": True}, ensure_ascii=False)
            ToolLog(log_path).record(tool, args, False, text, refused=True)
            print(text)
            print(f"error: step budget of {options.budget} calls reached", file=sys.stderr)
            return EXIT_TOOL_ERROR

    try:
        result = Toolbox(settings).call(tool, args)
    except UserError as exc:   # the user's setting (a snapshot that is not there), not an answer of the tool
        _log_call(log_path, tool, args, False, f"error: {exc}")
        raise UsageError(str(exc)) from None
    except (ReplayMiss, SimulatedRefused, ToolError, Exception) as exc:  # noqa: BLE001 - a message, not a trace
        text = json.dumps({"error": str(exc)}, ensure_ascii=False)
        _log_call(log_path, tool, args, False, text)
        print(truncate(text, options.max_chars))
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_TOOL_ERROR
    text = (json.dumps(result.data, indent=2, ensure_ascii=False, sort_keys=True)
            if options.pretty else result.response_json)
    _log_call(log_path, tool, args, result.ok, text)
    print(truncate(text, options.max_chars, indent=2 if options.pretty else None))
    return EXIT_OK if result.ok else EXIT_TOOL_ERROR


def serve_arguments(argv: list[str]) -> list[str] | None:
    """The MCP server's arguments when the command is ``serve`` (the executor's --backend, --cache and
    --snapshot carry over), else None. ``pipeline.tools.__main__`` runs ``pipeline.tools.serve`` with them."""
    options = _parser().parse_args(argv)
    if options.command != "serve":
        return None
    carried = [f"--{name}={value}" for name, value in (("backend", options.backend), ("cache", options.cache),
                                                        ("snapshot", options.snapshot)) if value is not None]
    return carried + list(options.rest)


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(hoist_options(sys.argv[1:] if argv is None else list(argv)))
    try:
        if options.budget is not None and options.max_chars > MAX_CHARS:
            # a race's rules (BLIND_RACE.md): the step budget and the 8,000-character cut hold together; a
            # racer once read the whole country list in one call this way (blind race 27, R09)
            raise UsageError(f"under a step budget tool output is cut at {MAX_CHARS} characters: --max-chars "
                             f"may lower the cut, not raise it (not run, not counted)")
        if options.command == "serve":
            raise UsageError("serve is its own program: python -m pipeline.tools serve (pipeline.tools.serve.main)")
        if options.command == "list":
            if options.rest:
                raise UsageError("list takes no arguments")
            return _list_tools()
        if options.command == "call":
            if not options.rest or len(options.rest) > 2:
                raise UsageError("usage: call TOOL_NAME ['JSON_ARGS']")
            return _call(options, options.rest[0], options.rest[1] if len(options.rest) > 1 else None)
        if len(options.rest) > 1:
            raise UsageError(f"usage: {options.command} ['JSON_ARGS'] (one JSON object, quoted)")
        return _call(options, options.command, options.rest[0] if options.rest else None)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


__all__ = ["MAX_CHARS", "PREVIEW_CHARS", "main", "truncate"]
