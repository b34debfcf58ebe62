"""``InspectClient``: Inspect's model behind the client interface of Legwork's LLM loop.

``achat(messages, tools=..., max_tokens=..., stop=..., timeout_s=...)`` takes OpenAI-form messages and
tool schemas (what ``pipeline.agents.loop`` speaks) and returns a ``pipeline.llm`` reply
(``content``, ``tool_calls`` with JSON-text ``arguments``, ``finish_reason``, ``usage``), asking the
model of the running Inspect sample (``get_model()``), so Inspect records every generation in its log.
"""
from __future__ import annotations

import json
import uuid
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolInfo, ToolParams


def tool_info(schema: dict) -> ToolInfo:
    fn = schema["function"]
    return ToolInfo(name=fn["name"], description=fn.get("description", ""),
                    parameters=ToolParams.model_validate(fn.get("parameters") or {"type": "object"}))


def to_inspect(messages: list[dict]) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    names: dict[str, str] = {}
    for m in messages:
        role, content = m["role"], m.get("content") or ""
        if role == "system":
            out.append(ChatMessageSystem(content=content))
        elif role == "user":
            out.append(ChatMessageUser(content=content))
        elif role == "assistant":
            calls = []
            for c in m.get("tool_calls") or []:
                fn = c["function"]
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = {"_unparsed_arguments": fn.get("arguments")}
                names[c["id"]] = fn["name"]
                calls.append(ToolCall(id=c["id"], function=fn["name"], arguments=args if isinstance(args, dict)
                                      else {"_arguments": args}))
            out.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            out.append(ChatMessageTool(content=content, tool_call_id=m.get("tool_call_id"),
                                       function=names.get(m.get("tool_call_id") or "")))
    return out


class InspectClient:
    """The loop's LLM client over an Inspect ``Model`` (default: the sample's model)."""

    def __init__(self, model: Model | None = None):
        self.model = model

    async def achat(self, messages: list[dict], *, tools: list[dict] | None = None, max_tokens: int | None = None,
                    stop: list[str] | None = None, timeout_s: float | None = None, **_: Any) -> dict:
        model = self.model or get_model()
        config = GenerateConfig(max_tokens=max_tokens, stop_seqs=stop or None,
                                timeout=int(timeout_s) if timeout_s else None)
        # a request that fails after Inspect's own retries raises: the runtime records a crashed trial
        output = await model.generate(to_inspect(messages), tools=[tool_info(t) for t in tools or []], config=config)
        message = output.message
        calls = [{"id": c.id or f"call_{uuid.uuid4().hex[:8]}", "name": c.function,
                  "arguments": json.dumps(c.arguments, ensure_ascii=False)} for c in message.tool_calls or []]
        finish = output.stop_reason
        usage = output.usage
        return {"content": message.text or "", "tool_calls": calls,
                "finish_reason": "length" if finish == "max_tokens" else ("tool_calls" if calls else "stop"),
                "usage": {"total_tokens": usage.total_tokens if usage else 0}}


__all__ = ["InspectClient", "to_inspect", "tool_info"]
