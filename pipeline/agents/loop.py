"""The one LLM loop: a tool-calling conversation with any environment (legs and every task family).

The system prompt and instructions come from the environment, tools from ``tool_schemas`` (none:
plain replies, as ATP proofs). A reply with tool calls runs them through ``Environment.step`` (each
a step of the budget; outputs cut at ``TOOL_OUTPUT_CHARS``); a reply without goes to
``Environment.reply``, which ends the trial or answers back (the prover's verdict). A reply cut off
at ``max_tokens`` is a failed step the agent is told about (``OVERRUN_NOTE``), never the same request
again. The trial ends when the environment is done, at its step, token or time budget, or when the
LLM cannot be asked (``llm_error``: a re-run redoes it).

``asynchronous``: ask with the client's ``achat`` and run tool calls in a thread (many trials in one
event loop, ``concurrency`` at a time); else the blocking ``chat`` (one trial per thread).
"""
from __future__ import annotations

import asyncio
import time

from pipeline.agents.environments import Environment
from pipeline.agents.trial import Budget, TrialResult
from pipeline.cache import canonical_json
from pipeline.llm import LLMError, assistant_tool_calls

TOOL_OUTPUT_CHARS = 8000
OVERRUN_NOTE = ("Your last reply was cut off at {n} tokens, the limit of one reply, so it was not used. Reply "
                "shorter: one tool call, or your final answer ending with ANSWER: <digit>.")


async def ask_model(client, messages: list[dict], asynchronous: bool, left: float, **options) -> dict:
    """One chat request with what is left of the trial's time (``TimeoutError`` past it): the LLM loop and
    the modular agent's modules ask the same way."""
    if asynchronous:
        return await asyncio.wait_for(client.achat(messages, timeout_s=left, **options), timeout=left)
    return client.chat(messages, timeout_s=left, **options)


async def run_llm_loop(env: Environment, client, *, agent: str = "llm", seed: int = 0, budget: Budget | None = None,
                       asynchronous: bool = True) -> TrialResult:
    budget = budget or Budget()
    steps_allowed = budget.steps or env.max_steps
    start = time.monotonic()
    messages: list[dict] = [{"role": "system", "content": env.system_prompt},
                            {"role": "user", "content": env.instructions()}]
    tools = env.tool_schemas()
    texts: list[str] = []
    result = TrialResult(env.item_id, agent, seed, None, 0, tokens=0)
    stop_reason = None
    while not env.done:
        left = budget.timeout_s - (time.monotonic() - start)
        if left <= 0:
            stop_reason = "timeout"
            break
        if env.steps >= steps_allowed:
            stop_reason = "step_limit"
            break
        if result.tokens >= budget.trial_tokens:
            stop_reason = "token_limit"
            break
        try:
            reply = await ask_model(client, messages, asynchronous, left, tools=tools, max_tokens=budget.max_tokens,
                                    stop=list(budget.stop) or None)
        except TimeoutError:
            stop_reason = "timeout"
            break
        except LLMError as exc:
            stop_reason, result.error = "llm_error", str(exc)
            break
        result.tokens += int((reply.get("usage") or {}).get("total_tokens") or 0)
        content = reply.get("content") or ""
        if content:
            texts.append(content)
        if reply.get("finish_reason") == "length":   # overran its token budget: a failed step, shown to the agent
            env.extra_steps += 1
            messages.append({"role": "assistant", "content": content})
            messages.append({"role": "user", "content": OVERRUN_NOTE.format(n=budget.max_tokens)})
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
            if env.done or env.steps >= steps_allowed:
                output = canonical_json({"error": "the task is over" if env.done else "step budget exhausted"})
            elif asynchronous:
                output = (await asyncio.to_thread(env.step, c["name"], c["arguments"])).text
            else:
                output = env.step(c["name"], c["arguments"]).text
            messages.append({"role": "tool", "tool_call_id": c["id"], "content": output[:TOOL_OUTPUT_CHARS]})
    result.stop_reason = stop_reason or env.finished_reason()
    result.answer = env.answer
    result.steps = env.record_steps()
    result.messages = texts[-3:]
    result.wall_time_s = round(time.monotonic() - start, 3)
    return result


__all__ = ["OVERRUN_NOTE", "TOOL_OUTPUT_CHARS", "run_llm_loop"]
