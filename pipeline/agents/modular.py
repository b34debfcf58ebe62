"""CapaBench's modular agent: Planning, Reasoning, Action and Reflection, each a prompt and a model.

Each module is a jinja2 prompt ``prompts/modules/<role>.j2`` (blocks ``system`` and ``user``) bound to
an OpenAI-compatible endpoint and model (``ModelSpec``: ``MODEL[@URL][#t=TEMPERATURE]``). A *default*
model drives every module; a *test* model replaces the modules a configuration names
(``--modules P=test,R=default,A=test,F=default``; P planning, R reasoning, A action, F reflection).

One trial:
  planning    runs once: the task (instructions, the family's format, the tool names) -> a plan.
  reasoning   each turn: the plan, the steps so far (step, action, OK/FAILED and a preview of the
              result), the last observation and the reflection note if one was just written -> the
              next step, in prose.
  action      each turn: the task, the last observation and that step -> one action in the family's
              format: a tool call (legs, math, OS ``bash``/``answer``/``finish``, ``git``) or a plain
              reply (the final ``ANSWER:`` of legs and math, the proof file for ATP, ``done`` for git).
              Only the first tool call of a reply runs; each action is a step of the trial's budget.
  reflection  runs when the family's trigger fires and its note feeds the next reasoning turn only:
                legs, math  the last action failed: a tool error (``success: false`` in the tool log,
                            arguments that are not JSON), or a failed check of a final reply (legs: no
                            digit can be read from it; math: no ``ANSWER: <value>`` line);
                atp         the prover (or the structural checks) rejected the submission;
                os          the last command failed (non-zero exit, or the call was refused);
                git         the tree has not changed for two steps since the last reflection (a command
                            git refused counts as unchanged).
              A reply cut off at ``max_tokens`` (finish reason ``length``) is a failed step for the action
              module (shown to reasoning as the observation) and used as cut for the other modules.

The trial ends when the environment is done (answered, submitted, finished) or at its step budget
(legs: ``Budget.steps`` or the leg's B; task families: the environment's ``max_steps``; either capped by
``ModularAgent.max_steps``), token budget,
wall clock or an LLM error (``llm_error``: a re-run redoes it). Tokens are summed from every module's
``usage``; ``trial.json`` carries ``modular``: the configuration, the model per module, calls, tokens and
cut replies per module, reflections, the plan.

Trials run through the runtime (``pipeline.agents.runtime.race``, via ``pipeline.race`` and ``pipeline.agents.tasks``)
with the agent ``modular`` and a ``ModularAgent`` as the client; the trial directory is named after
``ModularAgent.label`` = ``modular-<P,R,A,F each t or d>-<hash of the model per module>``, so the 16
configurations of a pair of models never collide, and two configurations that put the same model on every
module (e.g. all-default under two test models) share their trials.
"""
from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from pipeline.agents.environments import Entry, Environment, Observation
from pipeline.agents.loop import OVERRUN_NOTE, ask_model
from pipeline.agents.trial import Budget, TrialResult
from pipeline.cache import canonical_json
from pipeline.config import PROJECT_ROOT
from pipeline.llm import LLMClient, LLMError

ROLES = ("planning", "reasoning", "action", "reflection")
LETTERS = {"planning": "P", "reasoning": "R", "action": "A", "reflection": "F"}
SIDES = ("default", "test")
PROMPTS_DIR = PROJECT_ROOT / "prompts" / "modules"
OBSERVATION_CHARS = 4000      # the last observation as reasoning and action see it
PREVIEW_CHARS = 300           # each earlier step's result in the history
HISTORY_STEPS = 12            # earlier steps shown to reasoning


# ---- configuration ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelSpec:
    """One model binding: ``MODEL[@URL][#t=TEMPERATURE]`` (no URL: the settings' ``llm_base_url``)."""
    model: str
    base_url: str | None = None
    temperature: float = 0.0

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        body, _, fragment = text.strip().partition("#")
        temperature = 0.0
        for part in filter(None, (p.strip() for p in fragment.split(","))):
            key, _, value = part.partition("=")
            if key.strip() not in ("t", "temperature"):
                raise ValueError(f"unknown model option {key!r} in {text!r} (known: t=TEMPERATURE)")
            temperature = float(value)
        m = re.fullmatch(r"(.+?)@(https?://\S+)", body)
        model, url = (m.group(1), m.group(2)) if m else (body, None)
        if not model:
            raise ValueError(f"no model name in {text!r} (MODEL[@URL][#t=TEMPERATURE])")
        return cls(model, url, temperature)

    @property
    def key(self) -> str:
        """The model as the cache sees it: name and temperature, not the address."""
        return self.model + (f"#t={self.temperature:g}" if self.temperature else "")

    def __str__(self) -> str:
        return self.model + (f"@{self.base_url}" if self.base_url else "") + \
            (f"#t={self.temperature:g}" if self.temperature else "")


def parse_modules(text: str | None) -> dict[str, str]:
    """``P=test,R=default,A=test,F=default`` (letters or role names, sides ``test``/``default`` or
    ``t``/``d``) -> ``{role: side}``; roles not named use the default model."""
    out = dict.fromkeys(ROLES, "default")
    by_name = {**{v: k for k, v in LETTERS.items()}, **{r: r for r in ROLES}}
    for part in filter(None, (p.strip() for p in (text or "").split(","))):
        key, _, value = part.partition("=")
        role = by_name.get(key.strip()) or by_name.get(key.strip().upper())
        side = {"t": "test", "d": "default"}.get(value.strip().lower(), value.strip().lower())
        if role is None or side not in SIDES:
            raise ValueError(f"bad module binding {part!r}: ROLE=SIDE with ROLE in P,R,A,F and SIDE test or default")
        out[role] = side
    return out


def modules_for(test_roles) -> dict[str, str]:
    """The configuration putting the test model on ``test_roles`` (a set of roles or letters)."""
    named = {r for r in ROLES if r in test_roles or LETTERS[r] in test_roles}
    return {r: "test" if r in named else "default" for r in ROLES}


def config_tag(modules: dict[str, str]) -> str:
    """``PtRdAtFd``: each module's letter and the side driving it."""
    return "".join(LETTERS[r] + modules[r][0] for r in ROLES)


def format_modules(modules: dict[str, str]) -> str:
    return ",".join(f"{LETTERS[r]}={modules[r]}" for r in ROLES)


@dataclass
class ModularAgent:
    """The four modules' configuration and an LLM client per module (anything with ``chat`` and
    ``achat`` returning ``pipeline.llm`` replies)."""
    modules: dict[str, str]
    specs: dict[str, ModelSpec]
    clients: dict[str, Any]
    prompts_dir: Path = PROMPTS_DIR
    max_steps: int | None = None       # a lower step budget than the environment's (None: the environment's)

    def spec(self, role: str) -> ModelSpec:
        return self.specs[self.modules[role]]

    @property
    def label(self) -> str:
        models = canonical_json({r: self.spec(r).key for r in ROLES})
        return f"modular-{config_tag(self.modules)}-{hashlib.sha256(models.encode()).hexdigest()[:8]}"

    def describe(self) -> dict[str, Any]:
        return {"label": self.label, "modules": {LETTERS[r]: self.modules[r] for r in ROLES},
                "models": {LETTERS[r]: str(self.spec(r)) for r in ROLES}}


def make_agent(settings, cache, modules: dict[str, str], default: ModelSpec, test: ModelSpec | None = None, *,
               prompts_dir: Path | None = None, max_steps: int | None = None, **client_options) -> ModularAgent:
    """A ``ModularAgent`` with one ``LLMClient`` per distinct model (``client_options``: ``timeout_s``,
    ``max_attempts``, ``max_tokens``)."""
    specs = {"default": default} | ({"test": test} if test is not None else {})
    missing = [LETTERS[r] for r in ROLES if modules[r] not in specs]
    if missing:
        raise ValueError(f"modules {', '.join(missing)} are bound to the test model but none was given (--test)")
    clients: dict[ModelSpec, Any] = {}
    for spec in specs.values():
        if spec not in clients:
            mine = dataclasses.replace(settings, llm_model=spec.model, llm_base_url=spec.base_url or settings.llm_base_url)
            clients[spec] = LLMClient(mine, cache, temperature=spec.temperature, **client_options)
    return ModularAgent(dict(modules), specs, {r: clients[specs[modules[r]]] for r in ROLES},
                        prompts_dir or PROMPTS_DIR, max_steps)


def agent_from_args(a, settings, cache, **client_options) -> ModularAgent:
    """The race CLI's ``--modules``, ``--default`` and ``--test`` (``--default`` falls back to
    ``--llm-model``/``--llm-base-url`` or the settings)."""
    default = ModelSpec.parse(a.default) if getattr(a, "default", None) else None
    if default is None:
        if not settings.llm_model:
            raise SystemExit("--agent modular needs --default MODEL[@URL] (or --llm-model / LEGWORK_LLM_MODEL)")
        default = ModelSpec(settings.llm_model, settings.llm_base_url)
    test = ModelSpec.parse(a.test) if getattr(a, "test", None) else None
    try:
        return make_agent(settings, cache, parse_modules(getattr(a, "modules", None)), default, test,
                          **client_options)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


# ---- prompts --------------------------------------------------------------------------------------
_ENVS: dict[Path, jinja2.Environment] = {}


def render(prompts_dir: Path, role: str, **context) -> list[dict]:
    """The module's messages: its template's ``system`` block, then its ``user`` block."""
    env = _ENVS.get(prompts_dir)
    if env is None:
        env = _ENVS[prompts_dir] = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(prompts_dir)), undefined=jinja2.StrictUndefined,
            trim_blocks=True, lstrip_blocks=True, autoescape=False)
    template = env.get_template(f"{role}.j2")
    ctx = template.new_context(context)
    return [{"role": "system", "content": "".join(template.blocks["system"](ctx)).strip()},
            {"role": "user", "content": "".join(template.blocks["user"](ctx)).strip()}]


# ---- history ---------------------------------------------------------------------------------------
def _one_line(text: str, limit: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


# ---- the agent ------------------------------------------------------------------------------------
@dataclass
class ModularRun:
    stop_reason: str = "answered"
    tokens: int = 0
    texts: list[str] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    module_tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    cut: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ROLES, 0))
    reflections: int = 0
    unlogged_steps: int = 0      # steps of the budget that left no tool-log line (failed checks, cut-off actions)
    plan: str = ""
    error: str | None = None

    def record(self, agent: ModularAgent) -> dict[str, Any]:
        """The ``modular`` entry of ``trial.json``."""
        return {**agent.describe(),
                "calls": {LETTERS[r]: self.calls[r] for r in ROLES},
                "tokens": {LETTERS[r]: self.module_tokens[r] for r in ROLES},
                "cut_replies": {LETTERS[r]: self.cut[r] for r in ROLES},
                "reflections": self.reflections, "unlogged_steps": self.unlogged_steps, "plan": self.plan[:4000]}


class _Stop(Exception):
    def __init__(self, reason: str, error: str | None = None):
        super().__init__(reason)
        self.reason, self.error = reason, error


async def run_modular_async(env: Environment, agent: ModularAgent, *, timeout_s: float = 600.0,
                            max_tokens: int = 1024, trial_tokens: int = 200_000, stop: tuple[str, ...] = (),
                            asynchronous: bool = True, steps_allowed: int | None = None) -> ModularRun:
    """One trial of the modular agent on an environment. ``asynchronous``: ask with ``achat`` and act in a
    thread (many trials in one event loop); else with the blocking ``chat`` (one trial per thread)."""

    run = ModularRun()
    start = time.monotonic()
    tools = env.tool_schemas()
    base = {"family": env.family, "instructions": env.instructions(),
            "format": env.system_prompt.replace("\n", " "),
            "tools": [{"name": t["function"]["name"], "description": t["function"].get("description", "")}
                      for t in tools or []]}

    async def ask(role: str, tools: list[dict] | None = None, **context) -> dict:
        left = timeout_s - (time.monotonic() - start)
        if left <= 0:
            raise _Stop("timeout")
        if run.tokens >= trial_tokens:
            raise _Stop("token_limit")
        messages = render(agent.prompts_dir, role, **base, **context)
        client = agent.clients[role]
        try:
            reply = await ask_model(client, messages, asynchronous, left, tools=tools, max_tokens=max_tokens,
                                    stop=list(stop) or None)
        except TimeoutError:
            raise _Stop("timeout") from None
        except LLMError as exc:
            raise _Stop("llm_error", str(exc)) from None
        used = int((reply.get("usage") or {}).get("total_tokens") or 0)
        run.tokens += used
        run.module_tokens[role] += used
        run.calls[role] += 1
        if reply.get("finish_reason") == "length":
            run.cut[role] += 1
        if reply.get("content"):
            run.texts.append(f"[{role}] {reply['content']}")
        return reply

    history: list[Entry] = []
    since_reflection: list[Entry] = []
    observation, note = "", ""
    try:
        run.plan = (await ask("planning")).get("content") or ""
        allowed = steps_allowed or env.max_steps
        max_steps = min(allowed, agent.max_steps or allowed)
        while not env.done:
            if env.steps >= max_steps:
                raise _Stop("step_limit")
            step = (await ask("reasoning", plan=run.plan, history=history[-HISTORY_STEPS:],
                              observation=observation, reflection=note)).get("content") or ""
            note = ""
            reply = await ask("action", tools=tools, step=step, observation=observation)
            calls = reply.get("tool_calls") or []
            if reply.get("finish_reason") == "length":
                env.extra_steps += 1
                action, obs = "(reply cut off)", Observation(OVERRUN_NOTE.format(n=max_tokens), False, False)
            elif calls:
                first = calls[0]
                action = f"{first['name']} {first['arguments'] or '{}'}"
                obs = await _in_thread(asynchronous, env.step, first["name"], first["arguments"])
                obs.text = obs.text[:OBSERVATION_CHARS]
                if len(calls) > 1:
                    obs.text += f"\n(only the first of the {len(calls)} tool calls was run)"
            else:
                content = reply.get("content") or ""
                action = "reply: " + json.dumps(content, ensure_ascii=False)[:PREVIEW_CHARS]
                obs = await _in_thread(asynchronous, env.submit, content)
            entry = Entry(len(history) + 1, step.strip(), action, obs.ok, _one_line(obs.text, PREVIEW_CHARS),
                          obs.changed)
            history.append(entry)
            since_reflection.append(entry)
            observation = obs.text[:OBSERVATION_CHARS]
            if env.done:
                break
            why = env.reflection_trigger(since_reflection)
            if why:
                note = (await ask("reflection", plan=run.plan, step=step, action=action, observation=observation,
                                  trigger=why)).get("content") or ""
                run.reflections += 1
                since_reflection = []
    except _Stop as stop_:
        run.stop_reason, run.error = stop_.reason, stop_.error
    run.texts = run.texts[-3:]
    run.unlogged_steps = env.extra_steps
    return run


async def _in_thread(asynchronous: bool, fn, *args):
    return await asyncio.to_thread(fn, *args) if asynchronous else fn(*args)


async def run_modular(env: Environment, agent: ModularAgent, *, seed: int = 0, budget: Budget | None = None,
                      asynchronous: bool = True) -> TrialResult:
    """The modular agent on one environment (a leg or a task): a ``TrialResult`` whose ``extra`` holds
    ``modular``."""
    budget = budget or Budget()
    start = time.monotonic()
    run = await run_modular_async(env, agent, timeout_s=budget.timeout_s, max_tokens=budget.max_tokens,
                                  trial_tokens=budget.trial_tokens, stop=budget.stop, asynchronous=asynchronous,
                                  steps_allowed=budget.steps)
    stop_reason = env.finished_reason() if run.stop_reason == "answered" else run.stop_reason
    return TrialResult(env.item_id, agent.label, seed, env.answer, env.record_steps(), tokens=run.tokens,
                       wall_time_s=round(time.monotonic() - start, 3), stop_reason=stop_reason,
                       messages=run.texts, error=run.error, extra={"modular": run.record(agent)})


__all__ = ["LETTERS", "ROLES", "ModelSpec", "ModularAgent", "ModularRun", "agent_from_args", "config_tag",
           "format_modules", "make_agent", "modules_for", "parse_modules", "render", "run_modular",
           "run_modular_async"]
