"""Render chat rows with real chat templates (tests/fixtures/chat_templates, from TRL 1.16.0) the way
``transformers``' ``apply_chat_template`` renders them, and read the tool calls and tool schemas back
out of the text, so a test can tell a row a model would learn from as intended from one it would not.

The jinja2 environment is the one ``transformers`` compiles chat templates in: sandboxed (immutable),
``trim_blocks`` and ``lstrip_blocks``, its ``tojson`` filter (``json.dumps`` with ``ensure_ascii=False``),
``raise_exception`` and the ``loopcontrols`` extension; ``bos_token`` and ``eos_token`` are passed as the
tokenizer passes its special tokens.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

TEMPLATES = Path(__file__).parent / "fixtures" / "chat_templates"
NAMES = ("qwen2_5", "qwen3", "llama3_1")
SPECIAL = {"qwen2_5": {"bos_token": "", "eos_token": "<|im_end|>"},
           "qwen3": {"bos_token": "", "eos_token": "<|im_end|>"},
           "llama3_1": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"}}


def _tojson(x: Any, ensure_ascii: bool = False, indent: int | None = None, separators=None,
            sort_keys: bool = False) -> str:
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def _raise(message: str):
    raise jinja2.exceptions.TemplateError(message)


def compile_template(name: str) -> jinja2.Template:
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env.from_string((TEMPLATES / f"{name}.jinja").read_text(encoding="utf-8"))


def render(name: str, messages: list[dict], tools: Any) -> str:
    return compile_template(name).render(messages=messages, tools=tools, add_generation_prompt=False,
                                         **SPECIAL[name])


_QWEN_CALL = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)
_QWEN_TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.DOTALL)
_LLAMA_CALL = re.compile(r"<\|start_header_id\|>assistant<\|end_header_id\|>\n\n(\{\"name\": .*?)<\|eot_id\|>", re.DOTALL)


def rendered_calls(name: str, text: str) -> list[tuple[str, Any]]:
    """(name, arguments) of every tool call the text shows the model writing, as the model would parse it."""
    if name.startswith("qwen"):   # after the system turn, whose instructions show the call format
        body = text[text.index("<|im_end|>"):]
        return [(d["name"], d["arguments"]) for d in map(json.loads, _QWEN_CALL.findall(body))]
    return [(d["name"], d["parameters"]) for d in map(json.loads, _LLAMA_CALL.findall(text))]


def rendered_tools(name: str, text: str) -> list[Any]:
    """The tool schemas as the text shows them to the model."""
    if name.startswith("qwen"):
        [block] = _QWEN_TOOLS.findall(text)
        return [json.loads(line) for line in block.split("\n")]
    decoder, out, i = json.JSONDecoder(), [], 0
    start = text.index("Do not use variables.\n\n") + len("Do not use variables.\n\n")
    while text.startswith("{", start + i):
        obj, end = decoder.raw_decode(text, start + i)
        out.append(obj)
        i = end - start + 2                       # each schema is followed by a blank line
    return out


def null_keys(messages: list[dict]) -> list[str]:
    """``<message index>.<key>`` of every key whose value is null."""
    return [f"{i}.{k}" for i, m in enumerate(messages) for k, v in m.items() if v is None]


def template_problems(name: str, messages: list[dict], tools: Any) -> list[str]:
    """What is wrong with a chat row under template ``name``: an error while rendering, null keys, a call
    whose arguments the model would see as anything but the row's argument object (double-encoded JSON
    text), tool schemas shown as anything but the row's schema objects, a tool response or the final
    answer missing from the text."""
    problems = [f"null key {k}" for k in null_keys(messages)]
    try:    # no tools: None, as TRL passes them (``tools or None``: Llama 3.1 renders its tool preamble for [])
        text = render(name, messages, tools if not isinstance(tools, list) or tools else None)
    except Exception as exc:  # noqa: BLE001 - a template error is the finding
        return [*problems, f"{name} fails: {type(exc).__name__}: {exc}"]
    want = [(c["function"]["name"], c["function"]["arguments"]) for m in messages for c in m.get("tool_calls") or []]
    try:
        got = rendered_calls(name, text)
    except (ValueError, KeyError) as exc:
        return [*problems, f"{name}: a call renders as no JSON object: {exc}"]
    if got != want:
        bad = next(((g, w) for g, w in zip(got, want) if g != w), (got[len(want):], want[len(got):]))
        problems.append(f"{name}: the calls render as {bad[0]!r}, not {bad[1]!r}")
    if any(not isinstance(args, dict) for _, args in got):
        problems.append(f"{name}: arguments render as JSON text, not an object (double-encoded)")
    if tools == []:
        if "<tools>" in text or "Do not use variables." in text:
            problems.append(f"{name}: a chat without tools shows a tool preamble")
    else:
        try:
            shown = rendered_tools(name, text)
        except (ValueError, json.JSONDecodeError) as exc:
            shown = [f"unreadable: {exc}"]
        if not shown or not all(isinstance(t, dict) for t in shown) or not isinstance(tools, list) or shown != tools:
            problems.append(f"{name}: the tool schemas render as {str(shown)[:200]}")
    for m in messages:
        if m["role"] == "tool" and m["content"] not in text and json.dumps(m["content"], ensure_ascii=False) not in text:
            problems.append(f"{name}: the response to {m['tool_call_id']} is missing")
    if messages[-1]["content"].strip() not in text:
        problems.append(f"{name}: the final answer is missing")
    return problems
