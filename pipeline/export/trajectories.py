"""Golden trajectories for training: one chat per accepted leg or task, in OpenAI form and in ATIF.

A row (``TRAJECTORY_SCHEMA``) is what an agent racing the item would say and see if it followed the
golden trace exactly:

* ``messages``: the system prompt the racing agents get (``pipeline.agents.environments.LEG_SYSTEM_PROMPT`` for legs, the
  family environment's for tasks), the user turn (seed URL and riddle, or the task prompt), then one
  assistant turn per traced call (``tool_calls``: id, type ``function``, name, canonical JSON
  arguments) followed by a ``tool`` turn with the exact traced response (``tool_call_id``), and the
  final assistant answer (legs: the value of every clue by its number in the riddle, then
  ``ANSWER: <digit>``, the form race's agents are asked for; math ``ANSWER: <value>``; ATP the
  golden proof file);
* ``tools``: canonical JSON list of the OpenAI function schemas (``pipeline.tools.spec``) of the
  tools the trace calls, in registry order (a JSON string: tool parameter schemas have no fixed
  Arrow type);
* ``metadata``: what the row is and where it came from (kind, family, level, variant, passcode,
  counts, the provenance of every tool value, the run digest or task file, the snapshot hash).

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
TASK_FAMILIES = ("math", "atp")                 # families whose golden actions are registry tool calls
LEFT_OUT_FAMILIES = {"os": "golden actions are sandbox commands (bash, answer, finish), not registry tools",
                     "git": "golden actions are git commands on a replayed tree, not registry tools"}

_FUNCTION = pa.struct([pa.field("name", pa.string()), pa.field("arguments", pa.string())])
_TOOL_CALL = pa.struct([pa.field("id", pa.string()), pa.field("type", pa.string()), pa.field("function", _FUNCTION)])
MESSAGE = pa.struct([
    pa.field("role", pa.string()),                  # system | user | assistant | tool
    pa.field("content", pa.string()),               # null on an assistant turn that only calls a tool
    pa.field("tool_calls", pa.list_(_TOOL_CALL)),   # assistant turns that call a tool
    pa.field("tool_call_id", pa.string()),          # tool turns: the call they answer
    pa.field("name", pa.string()),                  # tool turns: the tool's name
])
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
    pa.field("messages", pa.list_(MESSAGE), nullable=False),
    pa.field("tools", pa.string(), nullable=False),
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
        out.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id(n), "type": "function", "function": {"name": tool, "arguments": canonical_json(args)}}],
            "tool_call_id": None, "name": None})
        out.append({"role": "tool", "content": response, "tool_calls": None, "tool_call_id": call_id(n), "name": tool})
    return out


def _turn(role: str, content: str) -> dict:
    return {"role": role, "content": content, "tool_calls": None, "tool_call_id": None, "name": None}


def tools_json(names: Iterable[str]) -> str:
    used = set(names)
    return canonical_json([openai_schema(n) for n in TOOLS if n in used])


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
            "tools": tools_json(t.tool for t in leg.trace),
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
            "tools": tools_json(s.tool for s in trace.steps),
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
                      "arguments": json.loads(c["function"]["arguments"])} for c in m["tool_calls"]]
            pending = {"source": "agent", "message": m.get("content") or "", "tool_calls": calls,
                       "observation": {"results": []}}
            steps.append(pending)
        elif m["role"] == "tool":
            if pending is None:
                raise ValueError(f"{row['trajectory_id']}: a tool turn answers no call")
            pending["observation"]["results"].append({"source_call_id": m["tool_call_id"], "content": m["content"]})
        else:
            pending = None
            steps.append({"source": "agent", "message": m["content"] or ""})
    for n, step in enumerate(steps, 1):
        step["step_id"] = n
    tools = json.loads(row["tools"])
    meta = row["metadata"]
    return {"schema_version": ATIF_SCHEMA_VERSION, "session_id": row["trajectory_id"],
            "agent": {"name": agent_name, "version": agent_version, "tool_definitions": tools},
            "steps": [{"step_id": s.pop("step_id"), **s} for s in steps],
            "notes": "Golden trajectory generated by Legwork: every observation is the exact tool response "
                     "recorded in the golden trace (offline backends).",
            "final_metrics": {"total_steps": len(steps)},
            "extra": {k: meta[k] for k in ("kind", "source_id", "family", "level", "variant", "passcode",
                                           "source", "snapshot")}}
