"""Golden trajectories for training: one chat per accepted leg or task, in the form chat templates and
TRL read, in OpenAI's fine-tuning form, and in ATIF.

A row (``TRAJECTORY_SCHEMA``) is what an agent racing the item would say and see if it followed the
golden trace exactly:

* ``messages``: the system prompt the racing agents get (``pipeline.agents.environments.LEG_SYSTEM_PROMPT`` for legs, the
  family environment's for tasks), the user turn (seed URL and riddle, or the task prompt), then one
  assistant turn per traced call (``tool_calls``: id, type ``function``, name, and the ``arguments``
  as a JSON object) followed by a ``tool`` turn with the exact traced response (``tool_call_id``,
  ``name``), and the final assistant answer (legs: the value of every clue by its number in the
  riddle, then ``ANSWER: <digit>``, the form race's agents are asked for; math ``ANSWER: <value>``;
  ATP the golden proof file). A message holds only the keys it uses (an assistant turn that calls a
  tool has no ``content``; no turn has a null key), as the chat templates of Qwen2.5, Qwen3 and
  Llama 3.1 need: Llama 3.1's branches on ``'tool_calls' in message`` and fails on a null one, and
  Qwen2.5's and Llama 3.1's write ``arguments | tojson``, which would encode a JSON string again;
* ``tools``: the OpenAI function schemas (``pipeline.tools.spec``) of the tools the trace calls, in
  registry order, a list of objects (``tokenizer.apply_chat_template(messages, tools=tools)``);
* ``metadata``: what the row is and where it came from (kind, family, level, variant, passcode,
  counts, the provenance of every tool value, the run digest or task file, the snapshot hash).

Messages and tool schemas have no fixed Arrow type (each tool has its own arguments), so Parquet
stores each as Arrow's JSON extension type (``pa.json_()``, one JSON document per message), which
``datasets`` reads as its ``Json`` feature: plain dicts with exactly the keys written.

``openai_finetune_line`` writes the same chat in OpenAI's fine-tuning format, which differs on
purpose: ``arguments`` is a JSON string there, a tool turn has no ``name``, and a line holds only
``messages``, ``tools`` and ``parallel_tool_calls``.

Families whose golden actions are not registry tool calls are not written: ``os`` (bash, answer,
finish in the sandbox) and ``git`` (git commands on a replayed tree) have no traced responses to
put in tool turns. ATP rows no prover verified are left out, as a release leaves them out.

``atif_trajectory`` writes the same conversation as Harbor's ATIF (``harbor_schema.Trajectory``).
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from pipeline.agents.environments import LEG_SYSTEM_PROMPT, instruction_text
from pipeline.agents.tasks import ENVIRONMENTS, oracle_actions
from pipeline.cache import canonical_json
from pipeline.export.harbor_schema import ATIF_SCHEMA_VERSION
from pipeline.model import Leg, simulated_share
from pipeline.tasks.common import GoldenTrace
from pipeline.tools.spec import TOOLS, openai_schema
from pipeline.tools.toollog import ToolLog

CONFIG = "trajectories"
SPLIT = "train"                                  # training data (the evaluation configs are ``test``)
TASK_FAMILIES = ("math", "atp")                 # families whose golden actions are registry tool calls
LEFT_OUT_FAMILIES = {"os": "golden actions are sandbox commands (bash, answer, finish), not registry tools",
                     "git": "golden actions are git commands on a replayed tree, not registry tools"}

METADATA = pa.struct([
    pa.field("kind", pa.string()),                  # leg | task
    pa.field("source_id", pa.string()),             # leg_id or task_id
    pa.field("family", pa.string()),                # legs | math | atp
    pa.field("level", pa.string()),                 # legs: easy..extreme; tasks: the family's difficulty
    pa.field("variant", pa.string()),               # legs: linear | dag; tasks: the domain (algebra, coq, ...)
    pa.field("topic", pa.string()),                 # legs: the seed page title; tasks: the topic
    pa.field("passcode", pa.string()),              # legs: y*; tasks: the reference answer (canonical JSON)
    pa.field("n_stops", pa.int64()),                # legs only
    pa.field("n_tool_calls", pa.int64()),
    pa.field("n_messages", pa.int64()),
    pa.field("tool_provenance", pa.list_(pa.string())),  # provenance of each traced call, in order
    pa.field("simulated_share", pa.float64()),
    pa.field("source", pa.string()),                # run:<run.json digest> | tasks:<file>@<sha256[:16]>
    pa.field("snapshot", pa.string()),              # snapshot hash the legs were made on (tasks: null)
])
TRAJECTORY_SCHEMA = pa.schema([
    pa.field("trajectory_id", pa.string(), nullable=False),
    pa.field("messages", pa.list_(pa.json_()), nullable=False),   # one JSON object per message
    pa.field("tools", pa.list_(pa.json_()), nullable=False),      # one OpenAI function schema per tool
    pa.field("metadata", METADATA, nullable=False),
])


@dataclass(frozen=True)
class Origin:
    """Where rows come from: a run's digest and snapshot hash, or a task file."""
    source: str | None = None
    snapshot: str | None = None


def call_id(n: int) -> str:
    return f"call_{n:03d}"


def _tool_turns(calls: Iterable[tuple[str, dict, str]]) -> list[dict]:
    out = []
    for n, (tool, args, response) in enumerate(calls):
        out.append({"role": "assistant", "tool_calls": [
            {"id": call_id(n), "type": "function", "function": {"name": tool, "arguments": dict(args)}}]})
        out.append({"role": "tool", "tool_call_id": call_id(n), "name": tool, "content": response})
    return out


def _turn(role: str, content: str) -> dict:
    return {"role": role, "content": content}


def tool_schemas(names: Iterable[str]) -> list[dict]:
    used = set(names)
    return [openai_schema(n) for n in TOOLS if n in used]


def _json(obj: Any) -> str:
    """One JSON document as stored in a ``pa.json_()`` cell: the row's key order, no whitespace."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def storage_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row as ``TRAJECTORY_SCHEMA`` stores it: every message and tool schema one JSON document."""
    return {**row, "messages": [_json(m) for m in row["messages"]], "tools": [_json(t) for t in row["tools"]]}


def openai_finetune_line(row: dict[str, Any]) -> dict[str, Any]:
    """A row in OpenAI's fine-tuning format for chat models: ``arguments`` as JSON text, tool turns
    without ``name``, and nothing but ``messages``, ``tools`` and ``parallel_tool_calls`` (one call a turn)."""
    messages = []
    for m in row["messages"]:
        if m.get("tool_calls"):
            m = {**m, "tool_calls": [{**c, "function": {"name": c["function"]["name"],
                                                        "arguments": canonical_json(c["function"]["arguments"])}}
                                     for c in m["tool_calls"]]}
        elif m["role"] == "tool":
            m = {k: v for k, v in m.items() if k != "name"}
        messages.append(m)
    return {"messages": messages, "tools": row["tools"], "parallel_tool_calls": False}


def final_answer(leg: Leg) -> str:
    """The closing turn of a leg: each clue's value, numbered as the riddle numbers it, and the passcode."""
    values = {s.index: s.value for s in leg.stops}
    lines = [f"Clue {c.number}: {json.dumps(values[c.stop], ensure_ascii=False, default=str)}"
             for c in leg.clues if values.get(c.stop) is not None]
    return "\n".join(lines + [f"ANSWER: {leg.passcode}"])


def leg_trajectory(leg: Leg, origin: Origin = Origin()) -> dict[str, Any]:
    """One row for an accepted leg (it needs its passcode and golden trace)."""
    if leg.passcode is None or not leg.trace:
        raise ValueError(f"{leg.leg_id}: no passcode or no golden trace (not an accepted leg)")
    messages = [_turn("system", LEG_SYSTEM_PROMPT), _turn("user", instruction_text(leg))]
    messages += _tool_turns((t.tool, t.args, t.response) for t in leg.trace)
    messages.append(_turn("assistant", final_answer(leg)))
    return {"trajectory_id": f"leg/{leg.leg_id}", "messages": messages,
            "tools": tool_schemas(t.tool for t in leg.trace),
            "metadata": {"kind": "leg", "source_id": leg.leg_id, "family": "legs", "level": leg.level,
                         "variant": leg.variant, "topic": leg.seed_title, "passcode": str(leg.passcode),
                         "n_stops": len(leg.stops), "n_tool_calls": len(leg.trace), "n_messages": len(messages),
                         "tool_provenance": [t.provenance or "none" for t in leg.trace],
                         "simulated_share": float(simulated_share(leg) or 0.0),
                         "source": origin.source, "snapshot": origin.snapshot}}


def task_trajectory(row: dict, origin: Origin = Origin()) -> dict[str, Any]:
    """One row for a task of a family in ``TASK_FAMILIES``: its environment's prompt and the oracle's
    actions (``pipeline.agents.tasks.oracle_actions``), tool turns answered by the golden trace."""
    family = row["family"]
    if family not in TASK_FAMILIES:
        raise ValueError(f"{row['task_id']}: family {family!r} has no registry-tool trajectory "
                         f"({LEFT_OUT_FAMILIES.get(family, 'unknown family')})")
    env = ENVIRONMENTS[family](row, ToolLog(None))
    trace = GoldenTrace.from_json(row["trace_json"])
    messages = [_turn("system", env.system_prompt), _turn("user", env.instructions())]
    acts = [a for a in oracle_actions(env) if a[0] == "act"]
    if len(acts) != len(trace.steps) or any((a[1], canonical_json(a[2])) != (s.tool, canonical_json(s.args))
                                            for a, s in zip(acts, trace.steps)):
        raise ValueError(f"{row['task_id']}: the oracle's tool calls are not the golden trace's")
    messages += _tool_turns((s.tool, s.args, s.response) for s in trace.steps)
    messages += [_turn("assistant", a[1]) for a in oracle_actions(env) if a[0] == "reply"]
    return {"trajectory_id": f"task/{row['task_id']}", "messages": messages,
            "tools": tool_schemas(s.tool for s in trace.steps),
            "metadata": {"kind": "task", "source_id": row["task_id"], "family": family,
                         "level": str(row["difficulty"]), "variant": row["domain"], "topic": row["topic"],
                         "passcode": canonical_json(json.loads(row["answer_json"])), "n_stops": None,
                         "n_tool_calls": len(trace.steps), "n_messages": len(messages),
                         "tool_provenance": [s.provenance or "none" for s in trace.steps],
                         "simulated_share": (sum(s.provenance == "simulated" for s in trace.steps) / len(trace.steps)
                                             if trace.steps else 0.0),
                         "source": origin.source, "snapshot": origin.snapshot}}


def trajectory_rows(legs: Iterable[tuple[Leg, Origin]] = (), tasks: Iterable[tuple[dict, Origin]] = ()
                    ) -> tuple[list[dict], dict[str, int]]:
    """Rows for every leg with a golden trace and every task of a trajectory family, sorted by id;
    and what was left out, counted by reason. (Unverified ATP rows are the caller's to drop, as a
    release drops them.)"""
    rows: dict[str, dict] = {}
    left_out: dict[str, int] = {}
    for leg, origin in legs:
        if leg.passcode is None or not leg.trace:      # e.g. an AAR import: no recorded calls to show
            left_out["legs without a golden trace"] = left_out.get("legs without a golden trace", 0) + 1
            continue
        row = leg_trajectory(leg, origin)
        rows.setdefault(row["trajectory_id"], row)
    for task, origin in tasks:
        if task["family"] not in TASK_FAMILIES:
            left_out[task["family"]] = left_out.get(task["family"], 0) + 1
            continue
        row = task_trajectory(task, origin)
        rows.setdefault(row["trajectory_id"], row)
    return [rows[k] for k in sorted(rows)], left_out


def run_origin(dataset: str | Path) -> Origin:
    """The run digest and snapshot hash of a generate run folder (or of the folder of a legs.parquet)."""
    p = Path(dataset)
    folder = p if p.is_dir() else p.parent
    info_path = folder / "run.json"
    if not info_path.is_file():
        return Origin()
    info = json.loads(info_path.read_text(encoding="utf-8"))
    return Origin(source=f"run:{info.get('digest', 'unknown')}", snapshot=info.get("snapshot"))


# ---- ATIF ------------------------------------------------------------------------------------
def _arguments(args: Any) -> dict:
    """A call's arguments as an object (rows carry objects; OpenAI's fine-tuning lines JSON text)."""
    return json.loads(args) if isinstance(args, str) else args


def atif_trajectory(row: dict[str, Any], agent_name: str = "legwork-oracle", agent_version: str = "1") -> dict:
    """A trajectory row as Harbor's ATIF: the system and user turns, one agent step per tool call with
    its observation (the exact traced response), the final answer as the last agent step."""
    steps: list[dict] = []
    pending: dict | None = None
    for m in row["messages"]:
        if m["role"] in ("system", "user"):
            steps.append({"source": m["role"], "message": m["content"]})
        elif m["role"] == "assistant" and m.get("tool_calls"):
            calls = [{"tool_call_id": c["id"], "function_name": c["function"]["name"],
                      "arguments": _arguments(c["function"]["arguments"])} for c in m["tool_calls"]]
            pending = {"source": "agent", "message": m.get("content") or "", "tool_calls": calls,
                       "observation": {"results": []}}
            steps.append(pending)
        elif m["role"] == "tool":
            if pending is None:
                raise ValueError(f"{row['trajectory_id']}: a tool turn answers no call")
            pending["observation"]["results"].append({"source_call_id": m["tool_call_id"], "content": m["content"]})
        else:
            pending = None
            steps.append({"source": "agent", "message": m.get("content") or ""})
    for n, step in enumerate(steps, 1):
        step["step_id"] = n
    tools = [json.loads(t) if isinstance(t, str) else t for t in row["tools"]]
    meta = row["metadata"]
    return {"schema_version": ATIF_SCHEMA_VERSION, "session_id": row["trajectory_id"],
            "agent": {"name": agent_name, "version": agent_version, "tool_definitions": tools},
            "steps": [{"step_id": s.pop("step_id"), **s} for s in steps],
            "notes": "Golden trajectory generated by Legwork: every observation is the exact tool response "
                     "recorded in the golden trace (offline backends).",
            "final_metrics": {"total_steps": len(steps)},
            "extra": {k: meta[k] for k in ("kind", "source_id", "family", "level", "variant", "passcode",
                                           "source", "snapshot")}}
