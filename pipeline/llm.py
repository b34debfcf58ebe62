"""An OpenAI-compatible chat client behind the record/replay cache.

Any server speaking ``/v1/chat/completions`` works (vLLM, llama.cpp server, Ollama, OpenAI):
``settings.llm_base_url``, ``settings.llm_model`` and ``settings.llm_api_key`` (``"EMPTY"``
when unset, which local servers accept). Calls use temperature 0 and go through
``cached_call`` with kind ``llm``, name = the model and namespace ``llm/<model>``. The
namespace deliberately leaves out the server's address: the same model answering the
same messages is the same record whether it was served from localhost or a cluster, so a
cache recorded on one machine replays on another. In replay mode only the cache answers
(``ReplayMiss`` names the call); nothing is sent.

Transient failures (connection errors, timeouts, HTTP 429 and 5xx) are retried with
exponential backoff; other HTTP errors raise at once. ``json_chat`` parses the reply as
strict JSON and raises ``LLMJunk`` carrying the raw text when it is not.
"""
from __future__ import annotations

import json
import re
import time
from typing import Any

from pipeline.cache import CallCache, cached_call, canonical_json
from pipeline.config import Settings


class LLMError(RuntimeError):
    """The LLM could not be asked (not configured, or the server kept failing)."""


class LLMJunk(LLMError):
    """The reply is not what was asked for (e.g. not JSON); ``raw`` holds the text."""

    def __init__(self, message: str, raw: str):
        super().__init__(f"{message}: {raw[:300]!r}")
        self.raw = raw


_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """Strict JSON, allowing only surrounding whitespace and one ```json fence around it."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        return json.loads(body)
    except (json.JSONDecodeError, TypeError) as exc:
        raise LLMJunk(f"LLM reply is not JSON ({exc})", text or "") from None


class LLMClient:
    """Chat with the configured model; every call is recorded in (or replayed from) the cache."""

    def __init__(self, settings: Settings, cache: CallCache | None = None, *, mode: str | None = None,
                 timeout_s: float = 120.0, max_attempts: int = 4, backoff_s: float = 1.0):
        self.settings = settings
        self.cache = cache
        self.mode = mode or ("replay" if settings.default_backend == "replay" else "live")
        if self.mode not in ("live", "replay"):
            raise ValueError(f"LLM mode must be 'live' or 'replay', got {self.mode!r}")
        self.model = settings.llm_model
        self.base_url = settings.llm_base_url
        if not self.model:
            raise LLMError("no LLM configured: set llm_model (and llm_base_url), e.g. LEGWORK_LLM_MODEL")
        if self.mode == "live" and not self.base_url:
            raise LLMError("no LLM endpoint configured: set llm_base_url, e.g. LEGWORK_LLM_BASE_URL="
                           "http://127.0.0.1:8000/v1")
        self.timeout_s = timeout_s
        self.max_attempts = max_attempts
        self.backoff_s = backoff_s
        self._client = None
        self.requests_sent = 0  # HTTP requests actually made (cache hits send none)

    @property
    def namespace(self) -> str:
        return f"llm/{self.model}"

    def _openai(self):
        if self._client is None:
            import openai  # heavy: imported on the first real call only

            self._client = openai.OpenAI(base_url=self.base_url, api_key=self.settings.llm_api_key or "EMPTY",
                                         timeout=self.timeout_s, max_retries=0)
        return self._client

    def chat(self, messages: list[dict], *, tools: list[dict] | None = None,
             response_format: dict | None = None, max_tokens: int | None = None) -> dict:
        """One assistant turn: ``{content, tool_calls[{id, name, arguments}], finish_reason, model}``."""
        params: dict[str, Any] = {"temperature": 0}
        if response_format is not None:
            params["response_format"] = response_format
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        request = {"messages": messages, "tools": tools, "params": params}

        def compute() -> tuple[str, str, bool, str | None]:
            return canonical_json(self._send(messages, tools, params)), "live", True, None

        response, _served = cached_call(self.cache, kind="llm", name=self.model, request=request,
                                        namespace=self.namespace, mode=self.mode, compute=compute)
        return json.loads(response)

    def json_chat(self, messages: list[dict], **kwargs) -> Any:
        """Ask for a JSON answer and parse it; ``LLMJunk`` (with the raw text) when it is not JSON."""
        reply = self.chat(messages, **kwargs)
        return parse_json_reply(reply.get("content") or "")

    def _send(self, messages: list[dict], tools: list[dict] | None, params: dict) -> dict:
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "messages": messages, **params}
        if tools:
            kwargs["tools"] = tools
        last: Exception | None = None
        for attempt in range(self.max_attempts):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                self.requests_sent += 1
                completion = self._openai().chat.completions.create(**kwargs)
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
                last = exc  # APITimeoutError is an APIConnectionError
                continue
            except openai.APIStatusError as exc:
                if exc.status_code >= 500:
                    last = exc
                    continue
                raise LLMError(f"LLM server {self.base_url} refused the request: HTTP {exc.status_code}: "
                               f"{exc.message}") from None
            except openai.APIResponseValidationError as exc:
                raise LLMJunk("LLM server sent a malformed response", str(exc.body)) from None
            return _reply(completion)
        raise LLMError(f"LLM server {self.base_url} failed {self.max_attempts} times; last error: {last}")


def _reply(completion) -> dict:
    if not getattr(completion, "choices", None):
        raise LLMJunk("LLM response has no choices", str(completion))
    choice = completion.choices[0]
    message = choice.message
    tool_calls = [{"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
                  for call in (message.tool_calls or [])]
    return {"content": message.content, "tool_calls": tool_calls, "finish_reason": choice.finish_reason,
            "model": completion.model}


__all__ = ["LLMClient", "LLMError", "LLMJunk", "parse_json_reply"]
