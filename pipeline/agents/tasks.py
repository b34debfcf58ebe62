"""Races on task sets (math, atp, os, git): one environment per family, agents oracle, random, llm, modular.

``python -m pipeline.race --tasks DIR --agent {oracle,random,llm,modular} --out RUNS`` lands here.

Environments (each judges with its family's own checker, never a second one):
  math  the agent may call ``calculator`` and ``math_knowledge_search`` through the ``Toolbox``
        (logged by ``call_tool``, the legs' tool-log format) and ends with ``ANSWER: <answer>``;
        judged by ``pipeline.tasks.math.answers.check_answer``.
  atp   the agent submits the proof file; the prover's verdict comes back for another try (at most
        ``ATP_TRIES``); judged by ``pipeline.tasks.atp.verify.check_proof`` on its last submission.
        Where no prover runs here (Lean 4, Isabelle; Coq without coqc) a proof that passes the
        structural checks is not judged: ``judged: false``, ``success: null`` and the reason in
        ``judge_note``. A proof the structural checks reject is judged a failure.
  os    one shell command per turn, run in the sandbox (``pipeline.tasks.os.sandbox``) after the
        task's init and start scripts, its output and exit code back as the observation
        (AgentBench style). The sandbox keeps no session between turns, so each turn runs init,
        start and every earlier command again in a fresh root before the new one. Answer tasks
        are judged by the submitted answer against ``evaluation.match``, check tasks by the
        task's check script run after all the agent's commands.
  git   git commands (Learn Git Branching verbs), the tree after each as the observation, played
        on a real repository (``pipeline.tasks.git.replay.Repo``); judged by replaying the
        commands git accepted from the start tree with real git and comparing the result with the
        goal by the LGB rules (``pipeline.tasks.git.trees.trees_match`` with the level's flags).

Agents:
  oracle  follows the row's golden solution (math: the golden trace's tool calls and answer; atp:
          the golden proof; os: the example script, then the expected answer or finish; git: the
          solution commands);
  random  a seeded, plausible but uninformed policy: a random integer for math, one generic tactic
          for ATP, a harmless command then a random integer for OS, one random git command on the
          start tree's refs for git;
  llm     the family's format over an OpenAI-compatible endpoint (``pipeline.llm.LLMClient``):
          function tools for math (the two math tools), os (``bash``, ``answer``, ``finish``) and
          git (``git``), plain replies holding the proof for ATP. ``usage.total_tokens`` of every
          reply is summed into the trial's ``tokens``;
  modular CapaBench's planning, reasoning, action and reflection modules on the same environments
          (``pipeline.agents.modular``; the client is a ``ModularAgent``), trials filed under its label
          ``modular-PtRdAtFd-<models hash>`` (directory and ``agent``), with a ``modular`` entry.

A trial is ``RUNS/<agent>-<task_id>-s<seed>/trial.json`` plus ``tool_log.jsonl``: one line per
action the environment executed (math tool calls, ``submit_proof``, ``bash``, ``git``), written by
``pipeline.tools.toollog.ToolLog``; ``steps`` counts those lines. An agent that raises gives a failed
trial (``stop_reason: "crash"``, ``agent_error``), never a failed run. ``trial.json`` is written
last and atomically; a re-run skips every trial whose ``trial.json`` is complete, except crashed ones
(``stop_reason`` crash or llm_error), which it runs again, as ``pipeline.race`` does for legs.
"""
from __future__ import annotations

import json
import os
import random
import re
import shlex
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.cache import canonical_json
from pipeline.llm import assistant_tool_calls
from pipeline.race import BROKEN
from pipeline.tasks.common import FAMILIES, GoldenTrace, read_task_rows
from pipeline.tasks.math import MAX_TRACE_CALLS
from pipeline.tools.toollog import ToolLog, call_tool

TASK_AGENTS = ("oracle", "random", "llm", "modular")
OBSERVATION_CHARS = 8000
MAX_TOKENS = 2048            # completion tokens per llm request
# tool calls: the longest golden math trace (``MAX_TRACE_CALLS``, which the math build enforces), one failed
# call to recover from (a mistyped call a reflection repairs), and the final reply, which needs a step left
MATH_STEPS = MAX_TRACE_CALLS + 2
ATP_TRIES = 3                # proof submissions
OS_STEPS = 8                 # shell commands (AgentBench's round limit)
GIT_STEPS = 12               # git commands
MATH_TOOLS = ("calculator", "math_knowledge_search")
# the fields of a finished trial: a trial.json holding all of them is not run again
TRIAL_KEYS = ("task_id", "family", "domain", "topic", "difficulty", "agent", "seed", "success", "judged",
              "steps", "tokens", "wall_time_s", "stop_reason", "answer")


@dataclass
class Judgement:
    judged: bool                 # False: nothing here can decide (no prover, task not runnable)
    success: bool | None         # None exactly when not judged
    note: str = ""


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


# ---- environments ------------------------------------------------------------------------------
class TaskEnv:
    """One task's world. ``act`` runs a tool call, ``reply`` takes a plain-text turn; both may end
    the episode (``done``). ``judge`` decides the trial with the family's checker."""

    family = ""
    max_steps = 10
    system_prompt = ""

    def __init__(self, row: dict, log: ToolLog, toolbox=None):
        self.row, self.log, self.toolbox = row, log, toolbox
        self.meta = json.loads(row["metadata_json"])
        self.answer_ref = json.loads(row["answer_json"])
        self.trace = GoldenTrace.from_json(row["trace_json"])
        self.done = False
        self.answer: Any = None

    @property
    def steps(self) -> int:
        return self.log.calls

    def instructions(self) -> str:
        return self.row["prompt"]

    def tool_schemas(self) -> list[dict] | None:
        return None

    def act(self, name: str, args: dict) -> str:
        raise NotImplementedError

    def reply(self, text: str) -> str | None:
        """A turn without a tool call; returns what the agent is told next, or None once done."""
        raise NotImplementedError

    def judge(self) -> Judgement:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def _unknown(self, name: str, args: Any) -> str:
        text = canonical_json({"error": f"unknown tool {name!r}; tools: "
                                        f"{', '.join(t['function']['name'] for t in self.tool_schemas() or [])}"})
        self.log.record(name, args, False, text)
        return text


class MathEnv(TaskEnv):
    family = "math"
    max_steps = MATH_STEPS
    system_prompt = ("Solve the math problem. You may call the tools calculator (exact evaluation with sympy) and "
                     "math_knowledge_search (definitions, formulas and worked examples). When you are done, reply "
                     "without a tool call and end your reply with one line: ANSWER: <answer> (a number, a list of "
                     "roots such as [-1, 5/2], a tuple, an equation, an inequality in x or a factored expression, "
                     "as the problem asks).")

    def tool_schemas(self) -> list[dict]:
        from pipeline.tools.spec import openai_schema
        return [openai_schema(name) for name in MATH_TOOLS]

    def act(self, name: str, args: dict) -> str:
        if name not in MATH_TOOLS:
            return self._unknown(name, args)
        _ok, text, _data = call_tool(self.toolbox, self.log, name, args)
        return text

    def reply(self, text: str) -> None:
        self.answer = _after_answer_tag(text)
        self.done = True

    def judge(self) -> Judgement:
        from pipeline.tasks.math.answers import check_answer
        if self.answer is None:
            return Judgement(True, False, "no answer")
        ok = check_answer(self.answer, self.answer_ref)
        return Judgement(True, ok, "check_answer: equal to the reference" if ok else "check_answer: not equal")


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
        from pipeline.tasks.atp.verify import check_proof
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
        from pipeline.tasks.os import agentbench
        from pipeline.tasks.os.sandbox import sandbox_available
        super().__init__(row, log, toolbox)
        self.task = self.meta["agentbench"]
        self.commands: list[str] = []
        self.runnable, self.why = agentbench.is_runnable(self.task)
        if self.runnable and not sandbox_available():
            self.runnable, self.why = False, "sandbox unavailable (needs root, unshare and overlayfs)"
        self.match = agentbench.match_value(self.task) if self.runnable else None

    def _setup(self) -> list[tuple[str, str]]:
        from pipeline.tasks.os import agentbench
        return [(name, script) for name, script in (("init", agentbench.init_script(self.task)),
                                                     ("start", agentbench.start_script(self.task))) if script]

    def tool_schemas(self) -> list[dict]:
        return [_fn("bash", "Run a bash command as root and see its output and exit code.",
                    {"command": {"type": "string", "minLength": 1}}, ["command"]),
                _fn("answer", "Submit the final answer to the question (ends the task).",
                    {"answer": {"type": "string"}}, ["answer"]),
                _fn("finish", "Say the task is done (ends the task).", {}, [])]

    def act(self, name: str, args: dict) -> str:
        from pipeline.tasks.os.sandbox import run_session
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
        last = run_session(steps)[-1]
        output = (last.stdout + last.stderr)[:OBSERVATION_CHARS]
        text = canonical_json({"exit_code": last.exit_code, "output": output})
        self.log.record("bash", {"command": command}, last.exit_code == 0, text)
        return f"exit code {last.exit_code}\n{output}"

    def reply(self, text: str) -> None:
        m = re.findall(r"answer\((.*?)\)", text or "")
        self.answer = m[-1].strip().strip("'\"") if m else _after_answer_tag(text) if self.match is not None else None
        self.done = True

    def judge(self) -> Judgement:
        from pipeline.tasks.os import agentbench
        from pipeline.tasks.os.sandbox import run_session
        if not self.runnable:
            return Judgement(False, None, f"not runnable here: {self.why}")
        if self.match is not None:
            ok = self.answer is not None and str(self.answer).strip() == self.match.strip()
            return Judgement(True, ok, "answer matches evaluation.match" if ok else
                             f"answer {str(self.answer)[:60]!r} is not the expected one")
        steps = self._setup() + [(f"cmd{i}", c) for i, c in enumerate(self.commands)]
        check = run_session(steps + [("check", agentbench.check_script(self.task))])[-1]
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
        from pipeline.tasks.git.replay import Repo
        from pipeline.tasks.git.trees import default_tree
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

    def judge(self) -> Judgement:
        from pipeline.tasks.git.replay import GitCommandError, replay
        from pipeline.tasks.git.trees import level_flags, trees_match
        try:
            tree, _ = replay(self.start, self.accepted)
        except GitCommandError as exc:
            return Judgement(True, False, f"replay failed: {exc}")
        ok = trees_match(tree, self.level["goalTreeString"], level_flags(self.level))
        return Judgement(True, ok, "replayed tree matches the goal (LGB rules)" if ok else
                         "replayed tree does not match the goal (LGB rules)")

    def close(self) -> None:
        self._tmp.cleanup()


ENVIRONMENTS: dict[str, type[TaskEnv]] = {"math": MathEnv, "atp": AtpEnv, "os": OsEnv, "git": GitEnv}


# ---- scripted agents ----------------------------------------------------------------------------
# An action is ("act", tool, args) or ("reply", text).
def oracle_actions(env: TaskEnv) -> list[tuple]:
    family = env.family
    if family == "math":
        return [("act", s.tool, s.args) for s in env.trace.steps] + [("reply", f"ANSWER: {env.answer_ref['value']}")]
    if family == "atp":
        return [("reply", env.answer_ref["proof"])]
    if family == "os":
        actions = []
        for p in env.trace.plan:
            if p.get("act") == "bash" and p.get("script"):
                actions.append(("act", "bash", {"command": p["script"]}))
            elif p.get("act") == "answer":
                actions.append(("act", "answer", {"answer": p["value"]}))
        return actions + [("act", "finish", {})]
    if family == "git":
        from pipeline.tasks.git.replay import split_commands
        return [("act", "git", {"command": c}) for c in split_commands(env.answer_ref["solutionCommand"])] + \
            [("reply", "done")]
    raise ValueError(f"no oracle for family {family!r}")


# one-step tactics that do not search: ``auto.`` alone closes 7 of the 40 Coq theorems of the default
# set (seed 0: lists, logic, trees), a floor of the set's own, not of an agent that does not read the goal
GENERIC_TACTICS = {"coq": ("trivial.", "reflexivity.", "simpl.", "intros."),
                   "lean4": ("rfl", "constructor", "intro h"),
                   "isabelle": ("by rule", "by assumption", "by (rule refl)")}
HARMLESS_COMMANDS = ("ls /", "pwd", "whoami", "date", "uname -a")


def random_actions(env: TaskEnv, rng: random.Random) -> list[tuple]:
    family = env.family
    if family == "math":
        return [("reply", f"ANSWER: {rng.randint(-20, 20)}")]
    if family == "atp":
        closing = env.meta["closing"]
        tactic = rng.choice(GENERIC_TACTICS[env.language])
        return [("reply", f"{env.statement}\n  {tactic}\n{closing}\n")]
    if family == "os":
        actions = [("act", "bash", {"command": rng.choice(HARMLESS_COMMANDS)})]
        if env.match is not None:
            actions.append(("act", "answer", {"answer": str(rng.randint(0, 99))}))
        return actions + [("act", "finish", {})]
    if family == "git":
        from pipeline.tasks.git.trees import parse_tree
        tree = parse_tree(env.start)
        branches = sorted(b for b in tree["branches"] if not b.startswith("o/"))
        commits = sorted(tree["commits"])
        verb = rng.choice(("commit", "checkout", "branch", "merge", "rebase", "cherry-pick", "reset", "revert"))
        target = {"checkout": branches, "merge": branches, "rebase": branches, "cherry-pick": commits,
                  "reset": commits, "revert": commits, "branch": ("tmp", "wip", "scratch")}.get(verb)
        command = f"git {verb}" + (f" {shlex.quote(rng.choice(target))}" if target else "")
        return [("act", "git", {"command": command}), ("reply", "done")]
    raise ValueError(f"no random policy for family {family!r}")


def run_scripted(env: TaskEnv, actions: list[tuple]) -> str:
    for action in actions:
        if env.done:
            break
        if action[0] == "act":
            env.act(action[1], action[2])
        else:
            env.reply(action[1])
    return "answered" if env.done else "gave_up"


# ---- llm agent -------------------------------------------------------------------------------------
@dataclass
class LLMRun:
    stop_reason: str = "answered"
    tokens: int | None = None
    texts: list[str] = field(default_factory=list)


def run_llm(env: TaskEnv, client, *, timeout_s: float = 600.0, max_tokens: int = MAX_TOKENS,
            trial_tokens: int = 200_000) -> LLMRun:
    """The family's interaction format over an OpenAI-compatible endpoint. A reply cut off at
    ``max_tokens`` is a failed step the agent is told about (``pipeline.race.OVERRUN_NOTE``); the
    trial ends at its step, token or time budget."""
    from pipeline.race import OVERRUN_NOTE
    start = time.monotonic()
    messages: list[dict] = [{"role": "system", "content": env.system_prompt},
                            {"role": "user", "content": env.instructions()}]
    tools = env.tool_schemas()
    run = LLMRun()
    overruns = 0
    while not env.done:
        if time.monotonic() - start > timeout_s:
            run.stop_reason = "timeout"
            break
        if env.steps + overruns >= env.max_steps:   # a reply cut off at max_tokens was a step too
            run.stop_reason = "step_limit"
            break
        if (run.tokens or 0) >= trial_tokens:
            run.stop_reason = "token_limit"
            break
        reply = client.chat(messages, tools=tools, max_tokens=max_tokens,
                            timeout_s=max(1.0, timeout_s - (time.monotonic() - start)))
        total = (reply.get("usage") or {}).get("total_tokens")
        if isinstance(total, int):
            run.tokens = (run.tokens or 0) + total
        content = reply.get("content") or ""
        if content:
            run.texts.append(content)
        if reply.get("finish_reason") == "length":
            overruns += 1
            messages.append({"role": "assistant", "content": content})
            messages.append({"role": "user", "content": OVERRUN_NOTE.format(n=max_tokens)})
            continue
        calls = reply.get("tool_calls") or []
        if not calls:
            messages.append({"role": "assistant", "content": content})
            follow_up = env.reply(content)
            if follow_up is not None:
                messages.append({"role": "user", "content": follow_up})
            continue
        messages.append(assistant_tool_calls(content, calls))
        for c in calls:
            if env.done or env.steps >= env.max_steps:
                output = canonical_json({"error": "the task is over" if env.done else "step budget exhausted"})
            else:
                try:
                    args = json.loads(c["arguments"] or "{}")
                except json.JSONDecodeError as exc:
                    args = None
                    output = canonical_json({"error": f"arguments are not JSON: {exc.msg}"})
                    env.log.record(c["name"], c["arguments"], False, output)
                if isinstance(args, dict):
                    output = env.act(c["name"], args)
                elif args is not None:
                    output = canonical_json({"error": "arguments must be a JSON object"})
                    env.log.record(c["name"], args, False, output)
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": output[:OBSERVATION_CHARS]})
    return run


# ---- trials ----------------------------------------------------------------------------------------
def trial_complete(path: Path, task_id: str | None = None) -> bool:
    """A ``trial.json`` that parses and holds every field of a finished trial (for ``task_id``), which
    was not broken by its surroundings (``pipeline.race.BROKEN``: a re-run redoes those)."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and all(k in record for k in TRIAL_KEYS) and \
        (task_id is None or record["task_id"] == task_id) and record["stop_reason"] not in BROKEN


def run_task_trial(row: dict, agent: str, out_dir: Path, *, toolbox=None, seed: int = 0, client=None,
                   timeout_s: float = 600.0, max_tokens: int = MAX_TOKENS, trial_tokens: int = 200_000) -> Path:
    """Run one agent on one task; write ``tool_log.jsonl`` then ``trial.json``; return the trial dir."""
    from pipeline.race import trial_dir_name, trial_label
    if agent not in TASK_AGENTS:
        raise ValueError(f"unknown task agent {agent!r}: {', '.join(TASK_AGENTS)}")
    label = trial_label(agent, client)
    d = Path(out_dir) / trial_dir_name(label, row["task_id"], seed)
    d.mkdir(parents=True, exist_ok=True)
    (d / "trial.json").unlink(missing_ok=True)     # written last: its presence means finished
    log_path = d / "tool_log.jsonl"
    log_path.write_text("", encoding="utf-8")
    log = ToolLog(log_path)
    start = time.monotonic()
    env, error, tokens, texts, extra = None, None, None, [], {}
    stop_reason = "answered"
    try:
        if row["family"] not in ENVIRONMENTS:
            raise ValueError(f"no environment for family {row['family']!r}")
        env = ENVIRONMENTS[row["family"]](row, log, toolbox)
        if agent == "oracle":
            stop_reason = run_scripted(env, oracle_actions(env))
        elif agent == "random":
            stop_reason = run_scripted(env, random_actions(env, random.Random(f"{seed}:{row['task_id']}")))
        elif agent == "modular":
            from pipeline.agents.modular import run_modular_task
            if client is None:
                raise ValueError("the modular agent needs a ModularAgent (pipeline.agents.modular)")
            run = run_modular_task(env, client, timeout_s=timeout_s, max_tokens=max_tokens, trial_tokens=trial_tokens)
            stop_reason, tokens, texts, error = run.stop_reason, run.tokens, run.texts, run.error
            extra = {"modular": run.record(client)}
        else:
            if client is None:
                raise ValueError("the llm agent needs an LLM client")
            run = run_llm(env, client, timeout_s=timeout_s, max_tokens=max_tokens, trial_tokens=trial_tokens)
            stop_reason, tokens, texts = run.stop_reason, run.tokens, run.texts[-3:]
        judgement = env.judge()
    except Exception as exc:  # noqa: BLE001 - an agent crash is a failed trial with its reason, not a failed run
        error = f"{type(exc).__name__}: {exc}"
        stop_reason, judgement = "crash", Judgement(True, False, "the trial crashed")
    finally:
        if env is not None:
            env.close()
    answer = None if env is None else env.answer
    record = {"task_id": row["task_id"], "family": row["family"], "domain": row["domain"], "topic": row["topic"],
              "difficulty": row["difficulty"], "agent": label, "seed": seed, "success": judgement.success,
              "judged": judgement.judged, "judge_note": judgement.note, "steps": log.calls, "tokens": tokens,
              "wall_time_s": round(time.monotonic() - start, 3), "stop_reason": stop_reason, "answer": answer,
              "tool_log": "tool_log.jsonl", "messages": texts, **extra}
    if error:
        record["agent_error"] = error
    tmp = d / "trial.json.tmp"
    tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, d / "trial.json")
    return d


@dataclass
class RaceSummary:
    trials: list[Path] = field(default_factory=list)
    skipped: int = 0


def race_task_set(task_dir: Path, agent: str, out_dir: Path, *, settings=None, limit: int | None = None,
                  seed: int = 0, client=None, timeout_s: float = 600.0, max_tokens: int = MAX_TOKENS,
                  workers: int = 1, echo: bool = False, trial_tokens: int = 200_000,
                  client_options: dict | None = None) -> RaceSummary:
    """Run ``agent`` on every task of ``task_dir`` (the first ``limit``), skipping finished trials;
    ``workers`` trials at a time (threads)."""
    from pipeline.race import trial_dir_name, trial_label
    from pipeline.tools.faults import fault_scope
    from pipeline.tools.registry import Toolbox

    if agent not in TASK_AGENTS:
        raise ValueError(f"agent {agent!r} does not race on task sets; choose one of {', '.join(TASK_AGENTS)}")
    if agent == "modular" and client is None:
        raise ValueError("the modular agent needs a ModularAgent (pipeline.agents.modular) as its client")
    label = trial_label(agent, client)
    rows = [r for r in read_task_rows(Path(task_dir)) if r["family"] in FAMILIES]
    rows = rows[:limit] if limit else rows
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary = RaceSummary()
    todo = [r for r in rows if not trial_complete(out / trial_dir_name(label, r["task_id"], seed) / "trial.json",
                                                  r["task_id"])]
    summary.skipped = len(rows) - len(todo)
    toolbox = None
    if todo and (agent in ("llm", "modular") or any(r["family"] == "math" for r in todo)):
        from pipeline.config import load_settings
        toolbox = Toolbox(settings or load_settings())
    if agent == "llm" and todo and client is None:
        from pipeline.llm import LLMClient
        client = LLMClient(toolbox.settings, toolbox.cache, **(client_options or {}))

    def one(row: dict) -> None:
        d = out / trial_dir_name(label, row["task_id"], seed)
        with fault_scope(d.name):
            run_task_trial(row, agent, out, toolbox=toolbox, seed=seed, client=client, timeout_s=timeout_s,
                           max_tokens=max_tokens, trial_tokens=trial_tokens)
        if echo:
            rec = json.loads((d / "trial.json").read_text(encoding="utf-8"))
            print(f"{row['task_id']}: success={rec['success']} steps={rec['steps']} ({rec['stop_reason']})",
                  file=sys.stderr)

    if workers > 1 and len(todo) > 1:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, todo))
    else:
        for row in todo:
            one(row)
    summary.trials = [out / trial_dir_name(label, r["task_id"], seed) for r in rows]
    return summary


def print_race_summary(trials: list[Path]) -> None:
    per: dict[str, list[int]] = {}
    for d in trials:
        rec = json.loads((d / "trial.json").read_text(encoding="utf-8"))
        n = per.setdefault(rec["family"], [0, 0, 0])
        n[0] += 1
        n[1] += bool(rec["judged"])
        n[2] += rec["success"] is True
    for family, (n, judged, ok) in sorted(per.items()):
        rate = f"{ok / judged:.3f}" if judged else "-"
        print(f"{family}: {n} trials, {judged} judged, {ok} succeeded, success rate {rate}")


def main_tasks(a) -> int:
    """``python -m pipeline.race --tasks DIR ...`` (``a``: the race CLI's parsed arguments)."""
    from pipeline.config import load_settings

    if a.agent not in TASK_AGENTS:
        raise SystemExit(f"--tasks races the agents {', '.join(TASK_AGENTS)}, not {a.agent!r}")
    if not read_task_rows(Path(a.tasks)):
        print(f"no task rows in {a.tasks} (build a task set with python -m pipeline.tasks build)", file=sys.stderr)
        return 2
    settings = load_settings(llm_base_url=getattr(a, "llm_base_url", None), llm_model=getattr(a, "llm_model", None),
                             faults=getattr(a, "faults", None))
    client = None
    if a.agent == "modular":
        from pipeline.agents.modular import agent_from_args
        from pipeline.cache import CallCache
        client = agent_from_args(a, settings, CallCache(settings.cache_path),
                                 timeout_s=getattr(a, "request_timeout_s", 120.0),
                                 max_attempts=getattr(a, "max_retries", 3) + 1,
                                 max_tokens=getattr(a, "max_tokens", None) or MAX_TOKENS)
    summary = race_task_set(Path(a.tasks), a.agent, Path(a.out), settings=settings, limit=a.limit, seed=a.seed,
                            client=client,
                            timeout_s=getattr(a, "timeout_s", 600.0),
                            max_tokens=getattr(a, "max_tokens", None) or MAX_TOKENS,
                            workers=getattr(a, "concurrency", None) or 1, echo=True,
                            trial_tokens=getattr(a, "trial_tokens", 200_000),
                            client_options={"timeout_s": getattr(a, "request_timeout_s", 120.0),
                                            "max_attempts": getattr(a, "max_retries", 3) + 1,
                                            "max_tokens": getattr(a, "max_tokens", None) or MAX_TOKENS})
    print_race_summary(summary.trials)
    print(f"{len(summary.trials)} trials in {a.out} ({summary.skipped} already complete, skipped)")
    return 0


__all__ = ["ENVIRONMENTS", "TASK_AGENTS", "Judgement", "TaskEnv", "main_tasks", "oracle_actions", "race_task_set",
           "random_actions", "run_llm", "run_task_trial", "trial_complete"]
