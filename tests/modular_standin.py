"""Stand-in OpenAI-compatible servers for the modular agent (tests only): per module role, programmed
and seeded behaviour.

The server recognises the role from the module prompt (``You are the PLANNING module``) and the task
from the conversation (its instructions are in every module prompt), and reads the task's golden
solution from the solutions it was given: it stands in for a capable model. Its private language:
the plan is ``N. STEP {json}`` lines; reasoning answers ``NEXT {json}`` (plus ``FIX {json}`` copied from
a reflection note); reflection writes ``FIX {json}`` or a useless note; a step is
``{"kind": "call", "tool", "args"}``, ``{"kind": "answer", "value"}`` or ``{"kind": "reply", "text"}``.

A model is a ``Behaviour``: per role an error probability p and a seed. Of the N tasks the server is
given, role r *errs* on exactly round(p N) of them: the tasks with the smallest ``sha256(seed:t:r)``
(a seeded uniform random subset of that size, drawn independently per role). So each task errs in role
r with probability p, independently across roles (choose p N whole), and the draw of (task, role) is the
same in every configuration and every call; fixing the count per role (rather than one coin per task)
keeps the measured values near their expectation at 10-20 tasks. What an erring role does:

  planning    the plan's final answer is wrong (legs: passcode + 1 mod 10; math: 987654321);
  reasoning   its first step is the final answer, wrong (the plan is not followed);
  action      it mistranslates the task's first golden step whenever that step comes in prose: a tool
              call whose arguments are not JSON (legs, math), a mistyped command (git, OS), a final reply
              without the required form (legs: no digit; math: no ANSWER line); a step that carries a
              reflection's ``FIX`` it copies exactly;
  reflection  its note names no fix (``try the same step again``).

A role that does not err does it right: planning writes the golden steps, reasoning the next plan step
not yet carried out (it walks the history's actions against the plan; it names the step ``Plan step k of
n.``, so when the agent shows only the last ``HISTORY_STEPS`` steps of a long trial the walk starts at the
plan step the first shown step was about) and passes a reflection's FIX on,
action translates the step into the family's format, reflection writes ``FIX <intended step>`` when the
action did not carry the step out (and a plain go-on note when it did and the tool itself failed).
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from live_http import chat_completion, send_json

ROLES = ("planning", "reasoning", "action", "reflection")
MATH_WRONG = "987654321"


@functools.cache
def erring_tasks(seed: str, role: str, p: float, universe: tuple[str, ...]) -> frozenset:
    """The round(p N) tasks of ``universe`` on which the role errs (smallest seeded hashes)."""
    def rank(task_id: str) -> bytes:
        return hashlib.sha256(f"{seed}:{task_id}:{role}".encode()).digest()
    return frozenset(sorted(universe, key=rank)[: round(p * len(universe))])


@dataclass(frozen=True)
class Behaviour:
    """Per role p (a role missing never errs) and seed (``seeds[role]``, else ``seed``)."""
    p: dict[str, float] = field(default_factory=dict)
    seeds: dict[str, str] = field(default_factory=dict)
    seed: str = "s"

    def errs(self, task_id: str, role: str, universe: tuple[str, ...]) -> bool:
        p = self.p.get(role, 0.0)
        return p > 0 and task_id in erring_tasks(self.seeds.get(role, self.seed), role, p, universe)


@dataclass
class Solution:
    task_id: str
    family: str
    steps: list[dict]
    wrong: str


# ---- solutions from task sets and legs ------------------------------------------------------------
def task_solutions(rows: list[dict]) -> dict[str, Solution]:
    """Golden steps of task rows, keyed by the instructions the agent shows (``env.instructions()``)."""
    from pipeline.agents.tasks import ENVIRONMENTS, oracle_actions
    from pipeline.tools.toollog import ToolLog
    out = {}
    for row in rows:
        env = ENVIRONMENTS[row["family"]](row, ToolLog(None), None)
        try:
            steps = []
            for action in oracle_actions(env):
                if action[0] == "act":
                    if row["family"] == "os" and action[1] == "answer":
                        steps.append({"kind": "answer", "value": action[2]["answer"]})
                    else:
                        steps.append({"kind": "call", "tool": action[1], "args": action[2]})
                elif row["family"] == "math":
                    steps.append({"kind": "answer", "value": env.answer_ref["value"]})
                else:
                    steps.append({"kind": "reply", "text": action[1]})
            out[env.instructions()] = Solution(row["task_id"], row["family"], steps, MATH_WRONG)
        finally:
            env.close()
    return out


def leg_solutions(legs) -> dict[str, Solution]:
    from pipeline.agents.environments import instruction_text
    return {instruction_text(leg): Solution(
        leg.leg_id, "legs", [{"kind": "call", "tool": t.tool, "args": t.args} for t in leg.trace] +
        [{"kind": "answer", "value": str(leg.passcode)}], str((leg.passcode + 1) % 10)) for leg in legs}


# ---- the private language ------------------------------------------------------------------------
def dumps(step: dict) -> str:
    return json.dumps(step, sort_keys=True)


def _tagged(text: str, tag: str) -> list[dict]:
    return [json.loads(m) for m in re.findall(rf"\b{tag} (\{{.*\}})\s*$", text, re.MULTILINE)]


def _section(text: str, start: str, end: str | None) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    j = text.find(end, i + len(start)) if end else -1
    return text[i + len(start): j if j >= 0 else None]


def _matches(action: str, step: dict) -> bool:
    name, _, arguments = action.partition(" ")
    if step.get("kind") != "call" or name != step["tool"]:
        return False
    try:
        return json.loads(arguments or "{}") == step["args"]
    except json.JSONDecodeError:
        return False


def progress(history: str, plan: list[dict]) -> int:
    """How many plan steps the shown history carried out: its actions walked in order against the plan.
    Reasoning sees only the last ``HISTORY_STEPS`` steps (``pipeline.agents.modular``), numbered from the
    trial's start; when the shown history does not start at step 1, the walk starts at the plan step the
    first shown step was about (its ``Plan step k of n.`` line, which this reasoning wrote then), so a
    golden trace of any length is followed to its end."""
    done = 0
    for i, entry in enumerate(re.split(r"^(?=Step \d+: )", history, flags=re.MULTILINE)[1:]):
        if i == 0 and not entry.startswith("Step 1: "):
            at = re.search(r"\bPlan step (\d+) of \d+\.", entry)
            done = int(at.group(1)) - 1 if at else 0
        action = re.search(r"^Action: (.*)$", entry, re.MULTILINE)
        if action and done < len(plan) and _matches(action.group(1), plan[done]):
            done += 1
    return done


def wrong_final(sol: Solution) -> dict:
    if sol.family in ("legs", "math") or any(s["kind"] == "answer" for s in sol.steps):
        return {"kind": "answer", "value": sol.wrong}
    if sol.family == "os":
        return {"kind": "call", "tool": "finish", "args": {}}
    if sol.family == "atp":
        return {"kind": "reply", "text": "(* no proof *)"}
    return {"kind": "reply", "text": "done"}


def bad_plan(sol: Solution) -> list[dict]:
    steps = [dict(s) for s in sol.steps]
    answers = [i for i, s in enumerate(steps) if s["kind"] == "answer"]
    if answers:
        steps[answers[-1]] = {"kind": "answer", "value": sol.wrong}
    elif sol.family == "atp":
        steps = [{"kind": "reply", "text": "(* no proof *)"}]
    else:
        calls = [i for i, s in enumerate(steps) if s["kind"] == "call"]
        if calls:
            del steps[calls[-1]]
    return steps


def translate(step: dict, family: str) -> dict:
    """The step in the family's format: ``{content}`` or ``{tool_calls}``."""
    if step["kind"] == "call":
        return {"tool_calls": [(step["tool"], json.dumps(step["args"]))]}
    if step["kind"] == "answer":
        if family == "os":
            return {"tool_calls": [("answer", json.dumps({"answer": step["value"]}))]}
        return {"content": f"Done.\nANSWER: {step['value']}"}
    return {"content": step["text"]}


def mistranslate(step: dict, family: str) -> dict:
    if step["kind"] == "call":
        if family in ("git", "os") and isinstance(step["args"].get("command"), str):
            command = step["args"]["command"]
            typo = ("git x" + command[4:]) if command.startswith("git ") else f"ehco_typo && (\n{command}\n)"
            return {"tool_calls": [(step["tool"], json.dumps({"command": typo}))]}
        return {"tool_calls": [(step["tool"], json.dumps(step["args"])[:-1])]}
    if step["kind"] == "answer":
        return {"content": "I am not sure about the final value."}
    return {"content": "(* a proof I forgot to write *)"}


# ---- the roles -----------------------------------------------------------------------------------
def respond(role: str, sol: Solution, behaviour: Behaviour, user: str, universe: tuple[str, ...]) -> dict:
    erring = behaviour.errs(sol.task_id, role, universe)
    if role == "planning":
        steps = bad_plan(sol) if erring else sol.steps
        return {"content": "\n".join(f"{i + 1}. STEP {dumps(s)}" for i, s in enumerate(steps))}
    if role == "reasoning":
        if erring:
            return {"content": f"NEXT {dumps(wrong_final(sol))}"}
        plan = _tagged(_section(user, "Plan:", "Steps so far:"), "STEP")
        fixes = _tagged(_section(user, "Reflection on the last failure:", "State the next step."), "FIX")
        fix = f"\nFIX {dumps(fixes[-1])}" if fixes else ""
        if not plan:
            return {"content": f"NEXT {dumps(wrong_final(sol))}{fix}"}
        at = min(progress(_section(user, "Steps so far:", "State the next step."), plan), len(plan) - 1)
        return {"content": f"Plan step {at + 1} of {len(plan)}.\nNEXT {dumps(plan[at])}{fix}"}
    if role == "action":
        given = _section(user, "Step to carry out:", None)
        fixes, nexts = _tagged(given, "FIX"), _tagged(given, "NEXT")
        if fixes:
            return translate(fixes[-1], sol.family)
        if not nexts:
            return {"content": "I do not know what to do."}
        step = nexts[-1]
        if erring and sol.steps and step == sol.steps[0]:
            return mistranslate(step, sol.family)
        return translate(step, sol.family)
    # reflection
    if erring:
        return {"content": "The tools seem unreliable; try the same step again."}
    part = _section(user, "Step:", "\nAction:")
    intended = (_tagged(part, "FIX") or _tagged(part, "NEXT") or [None])[-1]
    action = _section(user, "\nAction: ", "\nObservation:").strip()
    if intended is None or _matches(action, intended):
        return {"content": "The step was carried out as planned; go on with the plan."}
    return {"content": f"The action did not carry out the step.\nFIX {dumps(intended)}"}


class StandIn(BaseHTTPRequestHandler):
    """``behaviours``: model name -> Behaviour; ``solutions``: instructions -> Solution."""
    behaviours: dict[str, Behaviour] = {}   # noqa: RUF012 - set per server by serve()
    solutions: dict[str, Solution] = {}     # noqa: RUF012
    lock = threading.Lock()
    requests: dict[str, int] = {}           # noqa: RUF012 - per role
    # one connection per client (HTTP/1.1 keep-alive) answered without Nagle's wait: a reply is written
    # as headers then body, and a small second write would sit out the client's delayed ACK (~40 ms)
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        system = next((m["content"] for m in messages if m["role"] == "system"), "")
        user = "\n".join(m["content"] or "" for m in messages if m["role"] == "user")
        m = re.search(r"You are the (\w+) module", system)
        role = m.group(1).lower() if m else None
        keys = [k for k in self.solutions if k in user]
        behaviour = self.behaviours.get(body["model"])
        if role not in ROLES or not keys or behaviour is None:
            send_json(self, 400, {"error": {"message": f"stand-in: role {role!r}, task found {bool(keys)}, "
                                                       f"model {body['model']!r}"}})
            return
        with self.lock:
            self.requests[role] = self.requests.get(role, 0) + 1
        universe = tuple(sorted(s.task_id for s in self.solutions.values()))
        out = respond(role, self.solutions[max(keys, key=len)], behaviour, user, universe)
        content = out.get("content")
        calls = [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                 for i, (n, a) in enumerate(out.get("tool_calls") or [])]
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        prompt_tokens = sum(len(x["content"] or "") for x in messages) // 4
        completion_tokens = max(1, len(content or json.dumps([c["function"] for c in calls])) // 4)
        send_json(self, 200, chat_completion(body["model"], message, "tool_calls" if calls else "stop",
                                             (prompt_tokens, completion_tokens)))

    def log_message(self, *args):
        pass


def serve(behaviours: dict[str, Behaviour], solutions: dict[str, Solution]):
    """Start a stand-in on 127.0.0.1 (a thread); returns (base URL, server) -- call ``server.shutdown()``."""
    handler = type("StandInServer", (StandIn,), {"behaviours": behaviours, "solutions": solutions,
                                                 "requests": {}, "lock": threading.Lock()})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_port}/v1", httpd


# ---- the expected values on paper ------------------------------------------------------------------
def success(task_id: str, test_roles, default: Behaviour, test: Behaviour, universe: tuple[str, ...]) -> bool:
    """Success of one task under configuration ``test_roles``: P and R right, and A right or F right
    (a right reflection rescues a mistranslated first step)."""
    ok = {r: not (test if r in test_roles else default).errs(task_id, r, universe) for r in ROLES}
    return ok["planning"] and ok["reasoning"] and (ok["action"] or ok["reflection"])


def expected_v(test_roles, default: Behaviour, test: Behaviour) -> float:
    """E[v(S)] = (1 - q_P)(1 - q_R)(1 - q_A q_F), q_r the error probability of the model driving r:
    for one task the roles' draws are independent, each errs with probability q_r (q_r N whole), and the
    task succeeds iff P and R are right and A or F is (``success``). A test model sharing the default's
    seed and p for a role shares its draws, which changes nothing in the expectation."""
    q = {r: (test if r in test_roles else default).p.get(r, 0.0) for r in ROLES}
    return (1 - q["planning"]) * (1 - q["reasoning"]) * (1 - q["action"] * q["reflection"])
