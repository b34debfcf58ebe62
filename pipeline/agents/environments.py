"""One environment protocol, one implementation per product: legs, math, atp, os, git.

An environment is one item (a leg or a task row) as an agent meets it: its instructions and system
prompt, its tools, what a tool call (``act``) and a plain reply (``reply``) do, when it is over
(``done``), and what an agent has answered (``answer``). Each carries what used to sit in
``if family ==`` chains around the agents:

  oracle_actions()      the golden solution as actions (``("act", tool, args)``, ``("reply", text)``,
                        ``("message", text)``: a closing message the oracle writes);
  random_actions(rng)   a seeded, plausible but uninformed policy;
  judge()               the product's own checker (legs: the passcode, exactly; math
                        ``check_answer``; atp the prover; os the AgentBench check in the sandbox;
                        git a real-git replay compared with the goal by the LGB rules);
  check_reply(text)     the check a final reply must pass before it is taken (the modular agent's
                        "failed check": legs no digit, math no ``ANSWER:`` line);
  reflection_trigger()  when the modular agent's reflection module runs;
  record(result)        the item's identity and judgement in ``trial.json`` (``pipeline.agents.trial``).

``step`` and ``submit`` are the drivers every agent uses: ``step`` parses an agent's raw arguments,
runs the call and says whether it succeeded and whether the state changed; ``submit`` checks and
takes a final reply. ``steps`` is the tool-log lines plus the failed steps that left none
(``extra_steps``: replies cut off at the token limit, replies that failed their check).

Environments are registered by name in ``ENVIRONMENTS``; ``environment_for(item, log, toolbox)``
picks one for a ``Leg`` or a task row.
"""
from __future__ import annotations

import json
import random
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.cache import canonical_json
from pipeline.execute import execute_leg
from pipeline.tasks.atp.verify import check_proof
from pipeline.tasks.common import GoldenTrace
from pipeline.tasks.git.replay import GitCommandError, Repo, replay, split_commands
from pipeline.tasks.git.trees import default_tree, level_flags, parse_tree, trees_match
from pipeline.tasks.math import MAX_TRACE_CALLS
from pipeline.tasks.math.answers import check_answer
from pipeline.tasks.os import agentbench
from pipeline.tasks.os.sandbox import run_session, sandbox_available
from pipeline.tools.spec import openai_schema
from pipeline.tools.toollog import ToolLog, call_tool

OBSERVATION_CHARS = 8000
# tool calls: the longest golden math trace (``MAX_TRACE_CALLS``, which the math build enforces), one failed
# call to recover from (a mistyped call a reflection repairs), and the final reply, which needs a step left
MATH_STEPS = MAX_TRACE_CALLS + 2
ATP_TRIES = 3                # proof submissions
OS_STEPS = 8                 # shell commands (AgentBench's round limit)
GIT_STEPS = 12               # git commands
MATH_TOOLS = ("calculator", "math_knowledge_search")

LEG_SYSTEM_PROMPT = """You are racing through a puzzle leg. Start at the seed page, solve the numbered clues in order
using the tools (fetch_webpage to read pages, the other tools as the clues require), keep track of every value,
and finish with the final computation. The answer is a single digit 0-9. When you are done, reply without a tool
call and end your reply with: ANSWER: <digit>"""


@dataclass
class Judgement:
    judged: bool                 # False: nothing here can decide (no prover, task not runnable)
    success: bool | None         # None exactly when not judged
    note: str = ""


@dataclass
class Observation:
    text: str
    ok: bool
    changed: bool = True          # the environment's state changed (git: the tree)


@dataclass
class Entry:
    """One step of a trial as the modular agent's history (and reflection triggers) see it."""
    n: int
    step: str
    action: str
    ok: bool
    preview: str
    changed: bool = True


def _fn(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}


def _after_answer_tag(text: str) -> str | None:
    """The text after the last ``ANSWER:`` (to the end of its line), else the last non-empty line."""
    if not text or not text.strip():
        return None
    tagged = re.findall(r"ANSWER\s*[:=]\s*(.+)", text, re.IGNORECASE)
    value = tagged[-1] if tagged else [line for line in text.splitlines() if line.strip()][-1]
    value = value.strip().strip("*`").strip()
    return value.removesuffix(".").strip() or None


def parse_digit(text: str | None) -> str | None:
    """A leg's final answer: 'ANSWER: d' if present, else a reply that is one digit, else the last lone digit."""
    if not text:
        return None
    m = re.findall(r"ANSWER\s*[:=]\s*\**\s*(\d)\b", text, re.IGNORECASE)
    if m:
        return m[-1]
    if re.fullmatch(r"\s*\d\s*", text):
        return text.strip()
    lone = re.findall(r"(?<![\d.,])(\d)(?![\d.,]\d)", text)
    return lone[-1] if lone else None


# ---- the protocol --------------------------------------------------------------------------------
class Environment:
    """One item as agents meet it (see the module docstring)."""

    family = ""
    item_key = "task_id"          # the record's field naming the item
    system_prompt = ""
    max_steps = 10
    private: tuple[str, ...] = ()   # host folders shown empty to commands run on a view of the host

    def __init__(self, log: ToolLog, toolbox=None):
        self.log, self.toolbox = log, toolbox
        self.done = False
        self.answer: Any = None
        self.extra_steps = 0       # steps that left no tool-log line

    # -- what the agent sees and does
    @property
    def item_id(self) -> str:
        raise NotImplementedError

    @property
    def steps(self) -> int:
        return self.log.calls + self.extra_steps

    def instructions(self) -> str:
        raise NotImplementedError

    def tool_schemas(self) -> list[dict] | None:
        return None

    def act(self, name: str, args: dict) -> str:
        """Run one tool call (arguments already a JSON object); the text the agent sees."""
        raise NotImplementedError

    def reply(self, text: str) -> str | None:
        """A turn without a tool call; returns what the agent is told next, or None once done."""
        raise NotImplementedError

    def state(self) -> str | None:
        """What ``Observation.changed`` compares (None: every action counts as a change)."""
        return None

    def close(self) -> None:
        pass

    # -- the product's own policies and checks
    def oracle_actions(self) -> list[tuple]:
        raise NotImplementedError

    def random_actions(self, rng: random.Random) -> list[tuple]:
        raise NotImplementedError

    def judge(self) -> Judgement:
        raise NotImplementedError

    def check_reply(self, text: str) -> str | None:
        """Why a final reply fails its check (None: it passes)."""
        return None

    def reply_ok(self) -> bool:
        return True

    def reply_note(self) -> str:
        return "reply received; the task is over"

    def reflection_trigger(self, since_reflection: list[Entry]) -> str | None:
        last = since_reflection[-1] if since_reflection else None
        return None if last is None or last.ok else "the last action failed (a tool error or a failed check)"

    def finished_reason(self) -> str:
        """The stop reason of a trial that ended with the environment done."""
        return "answered"

    def record(self, result) -> dict[str, Any]:
        """The item's identity and judgement for ``trial.json`` (``result``: a ``TrialResult``)."""
        raise NotImplementedError

    def record_steps(self) -> int:
        return self.steps

    # -- drivers shared by every agent
    def step(self, name: str, arguments: str | dict | None) -> Observation:
        """One tool call as an agent wrote it (raw JSON text or an object): arguments that are not a JSON
        object are a failed, logged call."""
        if isinstance(arguments, dict):
            args = arguments
        else:
            try:
                args = json.loads(arguments or "{}")
            except json.JSONDecodeError as exc:
                text = canonical_json({"error": f"arguments are not JSON: {exc.msg}"})
                self.log.record(name, arguments, False, text)
                return Observation(text, False, False)
        if not isinstance(args, dict):
            text = canonical_json({"error": "arguments must be a JSON object"})
            self.log.record(name, args, False, text)
            return Observation(text, False, False)
        calls, before = self.log.calls, self.state()
        text = self.act(name, args)
        ok = True if self.log.calls == calls else bool(self.log.last_success)
        changed = True if before is None else self.state() != before
        return Observation(text, ok, changed)

    def submit(self, text: str) -> Observation:
        """A final reply, checked first (``check_reply``): a failed check is a failed step."""
        why = self.check_reply(text)
        if why is not None:
            self.extra_steps += 1
            return Observation(why, False, False)
        follow_up = self.reply(text)
        return Observation(follow_up or self.reply_note(), self.reply_ok())

    def play(self, actions: list[tuple]) -> tuple[str, list[str]]:
        """Run scripted actions until done: (stop reason, the messages written)."""
        messages = []
        for action in actions:
            if self.done:
                break
            if action[0] == "act":
                self.step(action[1], action[2])
            elif action[0] == "message":
                messages.append(action[1])
            else:
                self.reply(action[1])
        return ("answered" if self.done else "gave_up"), messages


# ---- legs ----------------------------------------------------------------------------------------------
class _LoggedToolbox:
    """The toolbox as the oracle's executor sees it: every call also goes to the trial's tool log."""

    def __init__(self, toolbox, log: ToolLog):
        self.toolbox, self.log = toolbox, log

    def call(self, tool: str, args: Any):
        try:
            result = self.toolbox.call(tool, args)
        except Exception as exc:
            self.log.record(tool, args, False, canonical_json({"error": f"{type(exc).__name__}: {exc}"}))
            raise
        self.log.record(tool, args, result.ok, result.response_json)
        return result


class _Recorder:
    """A toolbox that notes every call made through it, failed ones too."""

    def __init__(self, toolbox):
        self.toolbox, self.calls = toolbox, []

    def call(self, tool: str, args: Any):
        self.calls.append((tool, args))
        return self.toolbox.call(tool, args)


def oracle_calls(leg, toolbox) -> list[tuple[str, dict]]:
    """The calls the oracle makes on ``leg``: its golden trace; for a leg imported without one, the
    calls ``pipeline.execute`` makes running the leg on ``toolbox`` (failed ones included: a recorded
    chain the offline world cannot answer stops at its failed step), as ``LegEnv.oracle_actions`` makes
    them. Harbor's ``solve.sh`` and Inspect's scripted oracle replay these."""
    if leg.trace:
        return [(t.tool, t.args) for t in leg.trace]
    recorder = _Recorder(toolbox)
    execute_leg(leg, recorder, failures={})
    return recorder.calls


def worked_solution(leg, answer: str | None) -> str:
    """The oracle's closing message: every clue's value, as a careful agent would write its working.

    Reason-stop values never pass through a tool, so without this the oracle's intermediate
    accuracy would understate what it knew."""
    lines = [f"Clue {stop.index}: {json.dumps(stop.value, ensure_ascii=False, default=str)}"
             for stop in leg.stops if stop.value is not None]
    return "\n".join(lines + [f"ANSWER: {answer}"])


class LegEnv(Environment):
    """A race leg: the riddle and the seed URL, the registry's tools, a final ``ANSWER: <digit>``;
    judged by the passcode, exactly (FA; PVR and RCR come from ``pipeline.scoring`` over the log)."""

    family = "legs"
    item_key = "leg_id"
    system_prompt = LEG_SYSTEM_PROMPT

    def __init__(self, leg, log: ToolLog, toolbox=None):
        super().__init__(log, toolbox)
        self.leg = leg

    @property
    def item_id(self) -> str:
        return self.leg.leg_id

    @property
    def max_steps(self) -> int:
        return self.leg.step_budget

    def instructions(self) -> str:
        return f"Seed URL: {self.leg.seed_url}\n\nRiddle:\n{self.leg.riddle}"

    def tool_schemas(self) -> list[dict]:
        return self.toolbox.schemas()

    def act(self, name: str, args: dict) -> str:
        return call_tool(self.toolbox, self.log, name, args)[1]

    def reply(self, text: str) -> None:
        self.answer, self.done = parse_digit(text), True

    def check_reply(self, text: str) -> str | None:
        if parse_digit(text) is None:
            return "Check failed: no final digit could be read from the reply; end the final reply with ANSWER: <digit>."
        return None

    def reply_note(self) -> str:
        return f"final answer {self.answer} submitted"

    def finished_reason(self) -> str:
        return "answered" if self.answer is not None else "no_digit"

    def oracle_actions(self) -> list[tuple]:
        """Replay the golden trace; a leg without one (an AAR import) is executed here by
        ``pipeline.execute``, the generator's own executor, logging every call."""
        leg = self.leg
        answer = None if leg.passcode is None else str(leg.passcode)
        if leg.trace:
            actions = [("act", t.tool, t.args) for t in leg.trace]
        else:
            execute_leg(leg, _LoggedToolbox(self.toolbox, self.log), failures={})
            actions = []
        return actions + [("message", worked_solution(leg, answer)), ("reply", f"ANSWER: {answer}" if answer else "")]

    def random_actions(self, rng: random.Random) -> list[tuple]:
        return [("reply", str(rng.randrange(10)))]

    def judge(self) -> Judgement:
        if self.leg.passcode is None:
            return Judgement(False, None, "the leg has no passcode")
        ok = self.answer is not None and str(self.answer).strip() == str(self.leg.passcode)
        return Judgement(True, ok, "the passcode" if ok else f"answer {self.answer!r} is not the passcode")

    def record(self, result) -> dict[str, Any]:
        return {"leg_id": self.leg.leg_id, "variant": self.leg.variant, "level": self.leg.level}


# ---- task families -------------------------------------------------------------------------------------
class TaskEnv(Environment):
    """One task row of a family set (``pipeline.tasks``); judged by the family's checker."""

    def __init__(self, row: dict, log: ToolLog, toolbox=None):
        super().__init__(log, toolbox)
        self.row = row
        self.meta = json.loads(row["metadata_json"])
        self.answer_ref = json.loads(row["answer_json"])
        self.trace = GoldenTrace.from_json(row["trace_json"])

    @property
    def item_id(self) -> str:
        return self.row["task_id"]

    def instructions(self) -> str:
        return self.row["prompt"]

    def record_steps(self) -> int:
        return self.log.calls       # the tool-log lines (the actions the environment executed)

    def record(self, result) -> dict[str, Any]:
        judgement = self.judge() if result.stop_reason != "crash" else Judgement(True, False, "the trial crashed")
        return {"task_id": self.row["task_id"], "family": self.row["family"], "domain": self.row["domain"],
                "topic": self.row["topic"], "difficulty": self.row["difficulty"], "success": judgement.success,
                "judged": judgement.judged, "judge_note": judgement.note}

    def _unknown(self, name: str, args: Any) -> str:
        text = canonical_json({"error": f"unknown tool {name!r}; tools: "
                                        f"{', '.join(t['function']['name'] for t in self.tool_schemas() or [])}"})
        self.log.record(name, args, False, text)
        return text


def instruction_text(leg) -> str:
    """What a racing agent is told about ``leg``: its seed URL and riddle (``LegEnv.instructions``)."""
    return LegEnv(leg, ToolLog(None)).instructions()


class MathEnv(TaskEnv):
    family = "math"
    max_steps = MATH_STEPS
    system_prompt = ("Solve the math problem. You may call the tools calculator (exact evaluation with sympy) and "
                     "math_knowledge_search (definitions, formulas and worked examples). When you are done, reply "
                     "without a tool call and end your reply with one line: ANSWER: <answer> (a number, a list of "
                     "roots such as [-1, 5/2], a tuple, an equation, an inequality in x or a factored expression, "
                     "as the problem asks).")

    def tool_schemas(self) -> list[dict]:
        return [openai_schema(name) for name in MATH_TOOLS]

    def act(self, name: str, args: dict) -> str:
        if name not in MATH_TOOLS:
            return self._unknown(name, args)
        _ok, text, _data = call_tool(self.toolbox, self.log, name, args)
        return text

    def reply(self, text: str) -> None:
        self.answer = _after_answer_tag(text)
        self.done = True

    def check_reply(self, text: str) -> str | None:
        if not _ANSWER_LINE.search(text or ""):
            return "Check failed: the reply has no final line ANSWER: <answer>."
        return None

    def oracle_actions(self) -> list[tuple]:
        return [("act", s.tool, s.args) for s in self.trace.steps] + [("reply", f"ANSWER: {self.answer_ref['value']}")]

    def random_actions(self, rng: random.Random) -> list[tuple]:
        return [("reply", f"ANSWER: {rng.randint(-20, 20)}")]

    def judge(self) -> Judgement:
        if self.answer is None:
            return Judgement(True, False, "no answer")
        ok = check_answer(self.answer, self.answer_ref)
        return Judgement(True, ok, "check_answer: equal to the reference" if ok else "check_answer: not equal")


_ANSWER_LINE = re.compile(r"ANSWER\s*[:=]\s*\S", re.IGNORECASE)
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)


class AtpEnv(TaskEnv):
    family = "atp"
    max_steps = ATP_TRIES
    system_prompt = ("You write formal proofs. Reply with the complete file in one fenced code block: the given "
                     "text exactly as shown, then your proof. The prover's verdict comes back and you may try "
                     f"again, {ATP_TRIES} submissions in all.")

    def __init__(self, row, log, toolbox=None):
        super().__init__(row, log, toolbox)
        self.language, self.statement, self.theorem = row["domain"], self.meta["statement"], self.meta["theorem"]
        self.check = None

    def candidate(self, text: str) -> str:
        """The proof file in a reply: its last fenced block (else the whole reply), the statement put in
        front when the agent wrote only the proof."""
        blocks = _FENCE.findall(text or "")
        body = (blocks[-1] if blocks else text or "").strip("\n")
        if body.lstrip().startswith(self.statement):
            body = body.lstrip()
        else:
            body = f"{self.statement}\n{body}"
        return body if body.endswith("\n") else body + "\n"

    def reply(self, text: str) -> str | None:
        proof = self.candidate(text)
        self.answer = proof
        self.check = check_proof(self.language, self.statement, proof, self.theorem)
        self.log.record("submit_proof", {"language": self.language, "proof": proof}, self.check.ok,
                        canonical_json({"ok": self.check.ok, "verified": self.check.verified,
                                        "detail": self.check.detail}))
        if self.check.verified or self.check.ok or self.steps >= self.max_steps:
            self.done = True       # accepted, or nothing here can say more (no prover), or out of tries
            return None
        return (f"The proof was rejected: {self.check.detail}\nSubmit the corrected complete file "
                f"({self.max_steps - self.steps} tries left).")

    def act(self, name: str, args: dict) -> str:
        return self._unknown(name, args)

    def reply_ok(self) -> bool:
        return bool(self.check and (self.check.verified or self.check.ok))

    def reply_note(self) -> str:
        return self.check.detail if self.check else "submitted"

    def reflection_trigger(self, since_reflection: list[Entry]) -> str | None:
        return "the prover rejected the proof" if since_reflection and not since_reflection[-1].ok else None

    def oracle_actions(self) -> list[tuple]:
        return [("reply", self.answer_ref["proof"])]

    def random_actions(self, rng: random.Random) -> list[tuple]:
        tactic = rng.choice(GENERIC_TACTICS[self.language])
        return [("reply", f"{self.statement}\n  {tactic}\n{self.meta['closing']}\n")]

    def judge(self) -> Judgement:
        if self.check is None:
            return Judgement(True, False, "no proof submitted")
        if self.check.verified:
            return Judgement(True, True, self.check.detail)
        if not self.check.ok:
            return Judgement(True, False, self.check.detail)
        return Judgement(False, None, self.check.detail)


class OsEnv(TaskEnv):
    family = "os"
    max_steps = OS_STEPS
    system_prompt = ("You are root on a Linux machine (bash). Solve the task with the tools: bash runs one command "
                     "(or a short script) and shows its output and exit code; answer submits your final answer to "
                     "a question; finish says you are done with a task that changes the system. At most "
                     f"{OS_STEPS} commands.")

    def __init__(self, row, log, toolbox=None):
        super().__init__(row, log, toolbox)
        self.task = self.meta["agentbench"]
        self.commands: list[str] = []
        self.runnable, self.why = agentbench.is_runnable(self.task)
        if self.runnable and not sandbox_available():
            self.runnable, self.why = False, "sandbox unavailable (needs root, unshare and overlayfs)"
        self.match = agentbench.match_value(self.task) if self.runnable else None

    def _setup(self) -> list[tuple[str, str]]:
        return [(name, script) for name, script in (("init", agentbench.init_script(self.task)),
                                                     ("start", agentbench.start_script(self.task))) if script]

    def tool_schemas(self) -> list[dict]:
        return [_fn("bash", "Run a bash command as root and see its output and exit code.",
                    {"command": {"type": "string", "minLength": 1}}, ["command"]),
                _fn("answer", "Submit the final answer to the question (ends the task).",
                    {"answer": {"type": "string"}}, ["answer"]),
                _fn("finish", "Say the task is done (ends the task).", {}, [])]

    def act(self, name: str, args: dict) -> str:
        if name == "answer":
            self.answer, self.done = str(args.get("answer", "")), True
            return "answer submitted"
        if name == "finish":
            self.done = True
            return "finished"
        if name != "bash":
            return self._unknown(name, args)
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            text = canonical_json({"error": "bash needs a non-empty command"})
            self.log.record("bash", args, False, text)
            return text
        if not self.runnable:
            text = canonical_json({"error": f"this task cannot run here: {self.why}"})
            self.log.record("bash", args, False, text)
            return text
        self.commands.append(command)
        steps = self._setup() + [(f"cmd{i}", c) for i, c in enumerate(self.commands)]
        last = run_session(steps, private=self.private)[-1]
        output = (last.stdout + last.stderr)[:OBSERVATION_CHARS]
        text = canonical_json({"exit_code": last.exit_code, "output": output})
        self.log.record("bash", {"command": command}, last.exit_code == 0, text)
        return f"exit code {last.exit_code}\n{output}"

    def reply(self, text: str) -> None:
        m = re.findall(r"answer\((.*?)\)", text or "")
        self.answer = m[-1].strip().strip("'\"") if m else _after_answer_tag(text) if self.match is not None else None
        self.done = True

    def reflection_trigger(self, since_reflection: list[Entry]) -> str | None:
        return "the last command failed" if since_reflection and not since_reflection[-1].ok else None

    def oracle_actions(self) -> list[tuple]:
        actions = []
        for p in self.trace.plan:
            if p.get("act") == "bash" and p.get("script"):
                actions.append(("act", "bash", {"command": p["script"]}))
            elif p.get("act") == "answer":
                actions.append(("act", "answer", {"answer": p["value"]}))
        return actions + [("act", "finish", {})]

    def random_actions(self, rng: random.Random) -> list[tuple]:
        actions = [("act", "bash", {"command": rng.choice(HARMLESS_COMMANDS)})]
        if self.match is not None:
            actions.append(("act", "answer", {"answer": str(rng.randint(0, 99))}))
        return actions + [("act", "finish", {})]

    def judge(self) -> Judgement:
        if not self.runnable:
            return Judgement(False, None, f"not runnable here: {self.why}")
        if self.match is not None:
            ok = self.answer is not None and str(self.answer).strip() == self.match.strip()
            return Judgement(True, ok, "answer matches evaluation.match" if ok else
                             f"answer {str(self.answer)[:60]!r} is not the expected one")
        steps = self._setup() + [(f"cmd{i}", c) for i, c in enumerate(self.commands)]
        check = run_session(steps + [("check", agentbench.check_script(self.task))], private=self.private)[-1]
        ok = check.exit_code == 0
        return Judgement(True, ok, f"check script exit {check.exit_code} after {len(self.commands)} commands")


class GitEnv(TaskEnv):
    family = "git"
    max_steps = GIT_STEPS
    system_prompt = ("Learn Git Branching. Call the git tool with one git command at a time (commit, branch, "
                     "checkout, switch, merge, rebase, cherry-pick, reset, revert, tag, fetch; refer to commits by "
                     "their ids such as C3); after each you see the repository as a tree. When the repository "
                     f"matches the goal tree, reply without a tool call. At most {GIT_STEPS} commands.")

    def __init__(self, row, log, toolbox=None):
        super().__init__(row, log, toolbox)
        self.level = self.meta["level"]
        self.start = self.level.get("startTree") or default_tree()
        self.accepted: list[str] = []
        self._tmp = tempfile.TemporaryDirectory(prefix="legwork-gitrace-")
        self.repo = Repo(self.start, Path(self._tmp.name))
        self.repo._sync()

    def tool_schemas(self) -> list[dict]:
        return [_fn("git", "Run one git command, e.g. `git rebase main bugFix`; returns the tree after it.",
                    {"command": {"type": "string", "minLength": 1}}, ["command"])]

    def act(self, name: str, args: dict) -> str:
        if name != "git":
            return self._unknown(name, args)
        command = str(args.get("command", "")).strip()
        if command and not command.startswith("git "):
            command = f"git {command}"
        try:
            self.repo.run(command)
        except Exception as exc:  # noqa: BLE001 - git refusing (or a command we cannot replay) is an observation
            text = canonical_json({"error": f"{type(exc).__name__}: {exc}"})
            self.log.record("git", {"command": command}, False, text)
            return text
        self.accepted.append(command)
        self.answer = ";".join(self.accepted)
        text = canonical_json({"tree": self.repo.tree()})
        self.log.record("git", {"command": command}, True, text)
        return text

    def reply(self, text: str) -> None:
        self.done = True

    def state(self) -> str:
        return json.dumps(self.repo.tree(), sort_keys=True)

    def reflection_trigger(self, since_reflection: list[Entry]) -> str | None:
        unchanged = 0
        for e in reversed(since_reflection):
            if e.changed:
                break
            unchanged += 1
        return "the tree has not changed for two steps" if unchanged >= 2 else None

    def oracle_actions(self) -> list[tuple]:
        return [("act", "git", {"command": c}) for c in split_commands(self.answer_ref["solutionCommand"])] + \
            [("reply", "done")]

    def random_actions(self, rng: random.Random) -> list[tuple]:
        tree = parse_tree(self.start)
        branches = sorted(b for b in tree["branches"] if not b.startswith("o/"))
        commits = sorted(tree["commits"])
        verb = rng.choice(("commit", "checkout", "branch", "merge", "rebase", "cherry-pick", "reset", "revert"))
        target = {"checkout": branches, "merge": branches, "rebase": branches, "cherry-pick": commits,
                  "reset": commits, "revert": commits, "branch": ("tmp", "wip", "scratch")}.get(verb)
        command = f"git {verb}" + (f" {shlex.quote(rng.choice(target))}" if target else "")
        return [("act", "git", {"command": command}), ("reply", "done")]

    def judge(self) -> Judgement:
        try:
            tree, _ = replay(self.start, self.accepted)
        except GitCommandError as exc:
            return Judgement(True, False, f"replay failed: {exc}")
        ok = trees_match(tree, self.level["goalTreeString"], level_flags(self.level))
        return Judgement(True, ok, "replayed tree matches the goal (LGB rules)" if ok else
                         "replayed tree does not match the goal (LGB rules)")

    def close(self) -> None:
        self._tmp.cleanup()


# one-step tactics that do not search: ``auto.`` alone closes 7 of the 40 Coq theorems of the default
# set (seed 0: lists, logic, trees), a floor of the set's own, not of an agent that does not read the goal
GENERIC_TACTICS = {"coq": ("trivial.", "reflexivity.", "simpl.", "intros."),
                   "lean4": ("rfl", "constructor", "intro h"),
                   "isabelle": ("by rule", "by assumption", "by (rule refl)")}
HARMLESS_COMMANDS = ("ls /", "pwd", "whoami", "date", "uname -a")

# ---- the registry ---------------------------------------------------------------------------------------
ENVIRONMENTS: dict[str, type[Environment]] = {"legs": LegEnv, "math": MathEnv, "atp": AtpEnv, "os": OsEnv,
                                              "git": GitEnv}
TASK_FAMILIES = ("math", "atp", "os", "git")


def environment_for(item, log: ToolLog, toolbox=None, private: tuple[str, ...] = ()) -> Environment:
    """The environment of a ``Leg`` or of a task row (by its ``family``). ``private``: host folders an
    environment that runs the agent's commands on a view of the host must show empty (the dataset
    being raced, the race's records)."""
    if isinstance(item, dict):
        family = item.get("family")
        if family not in TASK_FAMILIES:
            raise ValueError(f"no environment for family {family!r}")
        env = ENVIRONMENTS[family](item, log, toolbox)
    else:
        env = LegEnv(item, log, toolbox)
    env.private = tuple(str(p) for p in private)
    return env


__all__ = ["ENVIRONMENTS", "LEG_SYSTEM_PROMPT", "OBSERVATION_CHARS", "TASK_FAMILIES", "AtpEnv", "Entry", "Environment",
           "GitEnv", "Judgement", "LegEnv", "MathEnv", "Observation", "OsEnv", "TaskEnv", "environment_for",
           "parse_digit", "worked_solution"]
