"""The tool registry as a Model Context Protocol server: ``python -m pipeline.tools serve``.

Any MCP client (an agent framework, an IDE, the SDK's own client) gets the same tools, schemas and
backends as generation: ``tools/list`` answers exactly what ``python -m pipeline.tools list`` prints
(name, description, JSON-schema arguments), and ``tools/call`` goes through the same ``Toolbox``
(offline by default; every call is answered from the record/replay cache first).

    python -m pipeline.tools serve                                  # stdio (what MCP clients launch)
    python -m pipeline.tools serve --http [--host 127.0.0.1] [--port 8765]   # streamable HTTP at /mcp
    python -m pipeline.tools serve --dataset data/runs/easy-dag-s0 --log-dir runs/ --answer-tool

What is served is fixed by the server's settings (``legwork.toml``, environment, ``--backend``,
``--cache``, ``--snapshot``): a client names tools and arguments, never files, snapshots, worlds or
backends. At start the server states on stderr (and in its MCP ``instructions``) the snapshot hash
and the data version it serves. ``--dataset`` names the legs to be raced; a dataset built on
another snapshot is refused unless ``--allow-other-snapshot``.

Trials. With ``--log-dir DIR`` each trial gets ``DIR/<trial_id>/tool_log.jsonl`` (the format
``pipeline.score`` reads, written by ``pipeline.tools.toollog``) and a ``trial.json`` kept up to date
after each call. The trial of a call is named by the request's ``_meta``: ``legwork/trial_id``,
``legwork/leg_id`` and ``legwork/agent``; without them, by ``--trial-id``/``--leg-id``; without
those, each client session is its own trial ``session-<id>`` (a stdio server process serves one client;
over HTTP, an MCP session of a handshake-era client; requests of the 2026-07-28 protocol carry no session,
so over HTTP they go to one trial ``unnamed-<hex>`` unless they name theirs). ``--answer-tool`` adds one tool,
``legwork_submit_answer {answer, message?, leg_id?}``, which stores the agent's final answer (and
its closing message) in ``trial.json``; a harness may instead write ``answer`` into ``trial.json``
itself. Then ``python -m pipeline.score --legs DATASET --runs DIR`` scores the race.

Security: HTTP listens on 127.0.0.1 unless told otherwise; any other address requires the bearer
token the server prints on stderr at start (or reads from ``--token-file``). Arguments are checked
against the tool's JSON schema before anything runs; ``fetch_webpage`` takes only wiki page URLs
(http(s), a ``*.wikipedia.org`` host or none), answered offline from the served snapshot;
``python_execute_code`` runs in the same sandbox as always. Bad arguments come back as an MCP tool
error (``isError``), never as a crash.
"""
from __future__ import annotations

import argparse
import hmac
import importlib.metadata
import ipaddress
import json
import re
import secrets
import socket
import sys
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import jsonschema

from pipeline.agents.trial import TOOL_LOG, read_record, write_record  # the one trial writer (race's too)
from pipeline.cache import canonical_json
from pipeline.config import ConfigError, load_settings
from pipeline.export import load_legs
from pipeline.tools.registry import OFFLINE_DATA_VERSION, Toolbox, bundled_data_digest
from pipeline.tools.spec import TOOLS
from pipeline.tools.toollog import MAX_CHARS, ToolLog, call_tool, truncate

SERVER_NAME = "legwork-tools"
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
HTTP_PATH = "/mcp"
META_TRIAL, META_LEG, META_AGENT = "legwork/trial_id", "legwork/leg_id", "legwork/agent"
ANSWER_TOOL = "legwork_submit_answer"
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "pattern": r"^[0-9]$", "description": "the final answer: one digit"},
        "message": {"type": "string", "maxLength": 100_000, "description": "optional: your closing message "
                                                                          "(the values you found, clue by clue)"},
        "leg_id": {"type": "string", "minLength": 1, "maxLength": 200},
    },
    "required": ["answer"],
    "additionalProperties": False,
}
TRIAL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
WIKI_HOST = re.compile(r"(?:[a-z0-9-]+\.)*wikipedia\.org", re.IGNORECASE)


class ServeError(Exception):
    """The server refuses to start (the message says why)."""


class CallRefused(ValueError):
    """A call the server refuses before any tool runs: reported to the client as a tool error."""


# ---- what is served ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Served:
    """The identity of what the server answers from: stated at start and recorded in every trial."""

    snapshot_hash: str
    data_version: str
    default_backend: str
    backends: dict[str, str]

    def describe(self) -> str:
        overrides = {t: b for t, b in self.backends.items() if b != self.default_backend}
        extra = f" (per tool: {json.dumps(overrides, sort_keys=True)})" if overrides else ""
        return (f"Legwork tools: snapshot {self.snapshot_hash}, data version {self.data_version}, "
                f"backend {self.default_backend}{extra}; every call is answered from the record/replay "
                "cache first.")

    def to_dict(self) -> dict[str, Any]:
        overrides = {t: b for t, b in sorted(self.backends.items()) if b != self.default_backend}
        return {"snapshot": self.snapshot_hash, "data_version": self.data_version,
                "default_backend": self.default_backend, "backend_overrides": overrides}


def served_identity(settings) -> Served:
    manifest = Path(settings.snapshot_dir) / "manifest.json"
    if not manifest.is_file():
        raise ServeError(f"no snapshot at {settings.snapshot_dir} (manifest.json missing); "
                         "build one with python -m pipeline.snapshot build")
    snapshot_hash = json.loads(manifest.read_text(encoding="utf-8"))["hash"]
    data_version = f"{OFFLINE_DATA_VERSION}/{bundled_data_digest(settings.world_dir)}"
    return Served(snapshot_hash, data_version, settings.default_backend,
                  {name: settings.backend_for(name) for name in TOOLS})


# ---- the dataset to be raced ---------------------------------------------------------------------
_TRACE_SNAPSHOT = re.compile(r"legwork snapshot ([0-9a-f]{12,64})")


def dataset_snapshot(path: str | Path) -> tuple[str | None, str, list[str]]:
    """(snapshot hash or its 12-character prefix, where it was read, leg ids) of a dataset.

    The run's ``run.json`` states the full hash; without one (an exported or hub copy), the golden
    traces name the snapshot their pages came from (``source: legwork snapshot <hash12>``)."""
    p = Path(path)
    legs = load_legs(p)
    leg_ids = [leg.leg_id for leg in legs]
    run_json = (p if p.is_dir() else p.parent) / "run.json"
    if run_json.is_file():
        stated = json.loads(run_json.read_text(encoding="utf-8")).get("snapshot")
        if stated:
            return stated, str(run_json), leg_ids
    found = {m.group(1) for leg in legs for t in leg.trace for m in _TRACE_SNAPSHOT.finditer(t.response or "")}
    if len(found) == 1:
        return found.pop(), "the golden traces", leg_ids
    if len(found) > 1:
        raise ServeError(f"{p}: the golden traces name several snapshots ({', '.join(sorted(found))})")
    if legs and not any(leg.trace for leg in legs):
        return None, "imported", leg_ids        # AAR imports: no golden trace any snapshot could contradict
    return None, "nowhere", leg_ids


def check_dataset(path: str | Path, served: Served, allow_other: bool) -> tuple[str, list[str]]:
    """A one-line statement of the dataset's snapshot; ServeError when it is not the served one."""
    stated, where, leg_ids = dataset_snapshot(path)
    same = stated is not None and served.snapshot_hash.startswith(stated) and len(stated) >= 12
    if same:
        return f"dataset {path}: {len(leg_ids)} legs, snapshot {stated[:12]} (from {where}) = served", leg_ids
    if where == "imported":
        return (f"dataset {path}: {len(leg_ids)} imported legs without golden traces (nothing to differ from "
                f"snapshot {served.snapshot_hash[:12]})"), leg_ids
    what = (f"was built on snapshot {stated[:12]} (from {where})" if stated
            else "does not say which snapshot it was built on")
    message = f"dataset {path} {what}, but this server serves snapshot {served.snapshot_hash[:12]}"
    if not allow_other:
        raise ServeError(message + "; serve its snapshot (--snapshot DIR) or pass --allow-other-snapshot")
    return message + " (allowed by --allow-other-snapshot: tool answers may differ from the golden traces)", leg_ids


# ---- argument confinement ----------------------------------------------------------------------------
def confinement_error(tool: str, args: Any) -> str | None:
    """Why a call must not run although its schema may allow it (None: it may run). The schema itself
    is checked by ``Toolbox.call``, which every call goes through."""
    if tool == "fetch_webpage" and isinstance(args, dict) and isinstance(args.get("url"), str):
        try:
            check_page_url(args["url"])
        except CallRefused as exc:
            return str(exc)
    return None


def check_page_url(url: str) -> None:
    """A wiki page URL or bare title: no other scheme (file:, data:, ...) and no host but Wikipedia's,
    so a live backend never becomes a way to reach other hosts, and offline the page is the snapshot's."""
    parts = urlsplit(url.strip())
    if "//" not in url and not parts.scheme:
        return  # a bare title such as "Ray Charles"
    if parts.scheme.lower() not in ("http", "https") or not WIKI_HOST.fullmatch(parts.hostname or ""):
        raise CallRefused(f"fetch_webpage: only Wikipedia page URLs are served (https://en.wikipedia.org/wiki/"
                          f"TITLE), got {url!r}")
    if parts.port is not None or parts.username or parts.password:
        raise CallRefused(f"fetch_webpage: a page URL takes no port or credentials, got {url!r}")


# ---- trials -------------------------------------------------------------------------------------
@dataclass
class TrialState:
    trial_id: str
    directory: Path
    record: dict[str, Any]
    log: ToolLog
    started: float = field(default_factory=time.monotonic)


class Trials:
    """One directory per trial under ``log_dir``: ``tool_log.jsonl`` plus a ``trial.json`` that
    ``pipeline.scoring.trials.load_trials`` reads (rewritten atomically after each change)."""

    def __init__(self, log_dir: Path, served: Served, leg_ids: list[str] | None = None):
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.served = served
        self.leg_ids = set(leg_ids) if leg_ids is not None else None
        self._trials: dict[str, TrialState] = {}
        self._lock = threading.RLock()

    def get(self, trial_id: str, leg_id: str | None, agent: str | None) -> TrialState:
        if not TRIAL_ID.fullmatch(trial_id):
            raise CallRefused(f"trial id {trial_id!r}: use 1-128 letters, digits, '_', '.', '-' (not first)")
        self._check_leg(leg_id)
        with self._lock:
            state = self._trials.get(trial_id)
            if state is None:
                directory = self.log_dir / trial_id
                directory.mkdir(parents=True, exist_ok=True)
                record = read_record(directory) or {"trial_id": trial_id, "leg_id": None, "agent": "mcp",
                                                    "answer": None, "tool_log": TOOL_LOG, "steps": 0, "messages": []}
                record["served"] = self.served.to_dict()
                state = self._trials[trial_id] = TrialState(trial_id, directory, record,
                                                            ToolLog(directory / TOOL_LOG))
                state.log.calls = int(record.get("steps") or 0)
            if leg_id is not None:
                if state.record.get("leg_id") not in (None, leg_id):
                    raise CallRefused(f"trial {trial_id} is a trial of leg {state.record['leg_id']}, not {leg_id}")
                state.record["leg_id"] = leg_id
            if agent:
                state.record["agent"] = agent
            return state

    def _check_leg(self, leg_id: str | None) -> None:
        if leg_id is not None and self.leg_ids is not None and leg_id not in self.leg_ids:
            raise CallRefused(f"leg {leg_id!r} is not in the served dataset")

    def save(self, state: TrialState) -> None:
        with self._lock:
            state.record["steps"] = state.log.calls
            state.record["wall_time_s"] = round(time.monotonic() - state.started, 3)
            write_record(state.directory, state.record)

    def submit(self, state: TrialState, answer: str, message: str | None) -> None:
        with self._lock:
            state.record["answer"] = answer
            state.record["stop_reason"] = "answered"
            if message:
                state.record["messages"] = [*state.record.get("messages", []), message]
            self.save(state)


# ---- the service behind the transports ---------------------------------------------------------------
@dataclass
class CallContext:
    """Who is calling: the trial named in the request's ``_meta``, else the server's or the session's."""

    session_key: str
    meta: dict[str, Any] = field(default_factory=dict)


class ToolService:
    """Transport-independent: the tool list, one call (validated, run, logged), and trial bookkeeping."""

    def __init__(self, settings, *, served: Served, log_dir: Path | None = None, leg_ids: list[str] | None = None,
                 trial_id: str | None = None, leg_id: str | None = None, agent: str = "mcp",
                 answer_tool: bool = False, max_chars: int = MAX_CHARS):
        self.settings = settings
        self.served = served
        self.toolbox = Toolbox(settings)
        self.trials = Trials(log_dir, served, leg_ids) if log_dir is not None else None
        self.leg_ids = leg_ids
        self.trial_id, self.leg_id, self.agent = trial_id, leg_id, agent
        self.answer_tool = answer_tool
        self.max_chars = max_chars
        self._call_lock = threading.Lock()  # one call at a time: the order of a trial's log is the order of its calls

    def tool_specs(self) -> list[dict[str, Any]]:
        """Name, description and input schema of every served tool (``tools list``'s content)."""
        specs = [{"name": name, "description": spec["description"], "input_schema": spec["parameters"]}
                 for name, spec in TOOLS.items()]
        if self.answer_tool:
            specs.append({"name": ANSWER_TOOL, "input_schema": ANSWER_SCHEMA,
                          "description": "Submit your final answer (one digit) for the leg you are racing; "
                                         "optionally with your closing message. Ends nothing: you may resubmit."})
        return specs

    def input_schema(self, name: str) -> dict | None:
        if name == ANSWER_TOOL and self.answer_tool:
            return ANSWER_SCHEMA
        spec = TOOLS.get(name)
        return spec["parameters"] if spec else None

    def _trial(self, ctx: CallContext, leg_id: str | None = None) -> TrialState | None:
        """The trial a call belongs to (see the module docstring), or None when no trials are kept."""
        if self.trials is None:
            return None
        meta = ctx.meta or {}
        named = {key: meta.get(key) for key in (META_TRIAL, META_LEG, META_AGENT)}
        for key, value in named.items():
            if value is not None and not isinstance(value, str):
                raise CallRefused(f"_meta {key} must be a string")
        if leg_id is not None and named[META_LEG] not in (None, leg_id):
            raise CallRefused(f"two leg ids for one call: {named[META_LEG]} (_meta) and {leg_id}")
        return self.trials.get(named[META_TRIAL] or self.trial_id or ctx.session_key,
                               named[META_LEG] or leg_id or self.leg_id, named[META_AGENT] or self.agent)

    def call(self, name: str, args: Any, ctx: CallContext) -> tuple[bool, str]:
        """(is_error, text) of one call, logged in its trial. Never raises for anything a client can send:
        unknown tools and schema violations come back from ``call_tool`` as ``{error}``, as in race."""
        args = {} if args is None else args
        try:
            if name == ANSWER_TOOL and self.answer_tool:
                return self._submit(args, ctx)
            state = self._trial(ctx)
        except CallRefused as exc:
            return True, canonical_json({"error": f"CallRefused: {exc}"})
        log = state.log if state is not None else ToolLog(None)
        refused = confinement_error(name, args)
        with self._call_lock:
            if refused is not None:
                ok, text = False, canonical_json({"error": f"CallRefused: {refused}"})
                log.record(name, args, ok, text)
            else:
                ok, text, _ = call_tool(self.toolbox, log, name, args)
            if state is not None:
                self.trials.save(state)
        return (not ok), truncate(text, self.max_chars) if self.max_chars > 0 else text

    def _submit(self, args: Any, ctx: CallContext) -> tuple[bool, str]:
        errors = sorted(jsonschema.Draft202012Validator(ANSWER_SCHEMA).iter_errors(args), key=lambda e: list(e.path))
        if errors:
            raise CallRefused(f"{ANSWER_TOOL}: invalid arguments: "
                              + "; ".join(f"{'/'.join(map(str, e.path)) or '(arguments)'}: {e.message}"
                                          for e in errors[:5]))
        if self.trials is None:
            raise CallRefused(f"{ANSWER_TOOL}: this server keeps no trials (start it with --log-dir)")
        state = self._trial(ctx, args.get("leg_id"))
        self.trials.submit(state, args["answer"], args.get("message"))
        return False, json.dumps({"recorded": True, "trial_id": state.trial_id, "leg_id": state.record["leg_id"],
                                  "answer": args["answer"]})


# ---- MCP wiring (the official SDK's low-level server: full control of the JSON schemas) -----------------
def build_server(service: ToolService, *, stdio: bool = False):
    """The SDK's low-level server over ``service``. Over stdio the process serves one client: its calls
    that name no trial form one trial; over HTTP a trial per HTTP session (see ``session_key``)."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    process_hex = uuid.uuid4().hex[:12]

    def session_key(ctx) -> str:
        """The trial of a call that names none: over stdio the process (it serves one client); over HTTP the
        MCP session (handshake-era clients), else one shared ``unnamed-*`` trial: on the 2026-07-28 protocol
        HTTP requests stand alone, so such clients should name their trial in ``_meta``."""
        if stdio:
            return f"session-{process_hex}"
        headers = getattr(ctx.request, "headers", None)
        sid = headers.get("mcp-session-id") if headers is not None else None
        if sid and TRIAL_ID.fullmatch(f"session-{sid}"):
            return f"session-{sid}"
        return f"unnamed-{process_hex}"

    tools = [types.Tool(name=s["name"], description=s["description"], input_schema=s["input_schema"])
             for s in service.tool_specs()]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        meta = dict(params.meta or {}) if isinstance(params.meta, dict) else dict(getattr(params, "meta", None) or {})
        call_ctx = CallContext(session_key(ctx), meta)
        is_error, text = await anyio.to_thread.run_sync(service.call, params.name, params.arguments, call_ctx)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)

    return Server(SERVER_NAME, version=_version(), instructions=service.served.describe(),
                  description=service.served.describe(), on_list_tools=list_tools, on_call_tool=call_tool,
                  get_tool_input_schema=service.input_schema)


def _version() -> str:
    try:
        return importlib.metadata.version("legwork")
    except Exception:  # noqa: BLE001 - a source checkout without metadata still serves
        return "0"


async def run_stdio(server) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class BearerGate:
    """ASGI wrapper: every HTTP request must carry ``Authorization: Bearer <token>`` (constant-time check)."""

    def __init__(self, app, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            given = next((v for k, v in scope.get("headers", []) if k.lower() == b"authorization"), b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b'{"error": "a valid bearer token is required"}'})
                return
        await self.app(scope, receive, send)


def http_app(server, host: str, token: str | None):
    app = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=host)
    return BearerGate(app, token) if token else app


async def run_http(server, host: str, port: int, token: str | None) -> None:
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections made once the address is printed wait in the backlog until uvicorn serves
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"serving MCP (streamable HTTP) at http://{shown}:{bound}{HTTP_PATH}", file=sys.stderr, flush=True)
    config = uvicorn.Config(http_app(server, host, token), log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock])


# ---- command line ---------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pipeline.tools serve",
                                description="Serve the Legwork tools over the Model Context Protocol.")
    p.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    p.add_argument("--host", default=DEFAULT_HOST, help="HTTP address (default 127.0.0.1; any other needs a token)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP port (0: a free one, printed at start)")
    p.add_argument("--token-file", type=Path, help="read the bearer token from this file instead of making one")
    p.add_argument("--require-token", action="store_true", help="require the bearer token on loopback too")
    p.add_argument("--backend", choices=("offline", "live", "replay"), help="default backend (settings otherwise)")
    p.add_argument("--cache", type=Path, help="record/replay cache file")
    p.add_argument("--snapshot", type=Path, help="snapshot directory to serve")
    p.add_argument("--no-simulated", action="store_true", help="refuse simulated answers")
    p.add_argument("--dataset", type=Path, help="the legs to be raced (run dir, legs.parquet, AAR dir): checked "
                                                "against the served snapshot; leg ids outside it are refused")
    p.add_argument("--allow-other-snapshot", action="store_true",
                   help="serve a dataset built on another snapshot anyway")
    p.add_argument("--log-dir", type=Path, help="one trial directory per trial/session under here")
    p.add_argument("--trial-id", help="trial id for calls whose _meta names none (default: one per session)")
    p.add_argument("--leg-id", help="leg id for calls whose _meta names none")
    p.add_argument("--agent", default="mcp", help="agent name recorded in trial.json (default mcp)")
    p.add_argument("--answer-tool", action="store_true", help=f"add the {ANSWER_TOOL} tool (needs --log-dir)")
    p.add_argument("--max-chars", type=int, default=MAX_CHARS, help="cut tool results after this many characters, as race cuts them for its agents (0: never)")
    return p


def prepare(a: argparse.Namespace) -> tuple[ToolService, list[str]]:
    """Settings, identity, dataset check and the service; the lines to state at start."""
    try:
        settings = load_settings(default_backend=a.backend, cache_path=a.cache, snapshot_dir=a.snapshot,
                                 allow_simulated=False if a.no_simulated else None)
    except ConfigError as exc:
        raise ServeError(f"configuration: {exc}") from None
    served = served_identity(settings)
    lines = [served.describe()]
    leg_ids = None
    if a.dataset is not None:
        line, leg_ids = check_dataset(a.dataset, served, a.allow_other_snapshot)
        lines.append(line)
    if a.answer_tool and a.log_dir is None:
        raise ServeError("--answer-tool needs --log-dir (the answer goes into the trial's trial.json)")
    for value, what in ((a.trial_id, "--trial-id"),):
        if value is not None and not TRIAL_ID.fullmatch(value):
            raise ServeError(f"{what} {value!r}: use letters, digits, '_', '.', '-'")
    if a.leg_id is not None and leg_ids is not None and a.leg_id not in leg_ids:
        raise ServeError(f"--leg-id {a.leg_id} is not in the dataset")
    service = ToolService(settings, served=served, log_dir=a.log_dir, leg_ids=leg_ids, trial_id=a.trial_id,
                          leg_id=a.leg_id, agent=a.agent, answer_tool=a.answer_tool, max_chars=a.max_chars)
    if a.log_dir is not None:
        lines.append(f"trial logs under {a.log_dir} (score with python -m pipeline.score --runs {a.log_dir})")
    return service, lines


def http_token(a: argparse.Namespace) -> str | None:
    """The bearer token: from --token-file, else a fresh one when the bind is not loopback or one is required."""
    if a.token_file is not None:
        token = a.token_file.read_text(encoding="utf-8").strip()
        if len(token) < 16:
            raise ServeError(f"{a.token_file}: a token of at least 16 characters is required")
        return token
    if a.require_token or not is_loopback(a.host):
        return secrets.token_urlsafe(32)
    return None


def main(argv: list[str] | None = None) -> int:
    a = _parser().parse_args(argv)
    try:
        service, lines = prepare(a)
        token = http_token(a) if a.http else None
    except ServeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(line, file=sys.stderr)
    server = build_server(service, stdio=not a.http)
    if not a.http:
        anyio.run(run_stdio, server)
        return 0
    if token is not None and a.token_file is None:
        print(f"bearer token (send 'Authorization: Bearer <token>'): {token}", file=sys.stderr, flush=True)
    try:
        anyio.run(run_http, server, a.host, a.port, token)
    except KeyboardInterrupt:
        pass
    return 0


__all__ = ["ANSWER_TOOL", "BearerGate", "CallRefused", "ServeError", "Served", "ToolService", "build_server",
           "check_dataset", "check_page_url", "confinement_error", "dataset_snapshot", "is_loopback", "main",
           "served_identity"]
