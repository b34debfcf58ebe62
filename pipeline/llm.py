"""An OpenAI-compatible chat client behind the record/replay cache.

Any server speaking ``/v1/chat/completions`` works (vLLM, llama.cpp server, Ollama, OpenAI):
``settings.llm_base_url``, ``settings.llm_model`` and ``settings.llm_api_key`` (``"EMPTY"``
when unset, which local servers accept). Calls use temperature 0 (or the client's ``temperature``,
which is sent with the request and so is part of its cache key) and go through
``cached_call`` with kind ``llm``, name = the model and namespace ``llm/<model>``. The
namespace deliberately leaves out the server's address: the same model answering the
same messages is the same record whether it was served from localhost or a cluster, so a
cache recorded on one machine replays on another. In replay mode only the cache answers
(``ReplayMiss`` names the call); nothing is sent.

Transient failures (connection errors, timeouts, HTTP 408, 409, 429 and 5xx) are retried by
the openai SDK itself (``max_retries``: exponential backoff, ``Retry-After`` honoured); other
HTTP errors raise at once. Every request carries ``max_tokens`` (default ``DEFAULT_MAX_TOKENS``):
a request without it lets a weak model write until its context is full. ``chat`` and the
asynchronous ``achat`` (``openai.AsyncOpenAI``, for concurrent races) share the cache and the
reply format, which includes the token ``usage`` the server reports. ``json_chat`` parses the
reply as strict JSON and raises ``LLMJunk`` carrying the raw text when it is not.
"""
from __future__ import annotations

import asyncio
import functools
import json
import re
import ssl
from typing import Any
from urllib.parse import urlsplit

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


DEFAULT_MAX_TOKENS = 1024


class _NotCached(Exception):
    """Inside ``achat``: the cache does not hold the request, so it must be sent."""


@functools.cache
def _plain_http_tls() -> ssl.SSLContext:
    """One verifying TLS context for the clients of a plain-HTTP endpoint (``LLMClient._async_openai``)."""
    return ssl.create_default_context()


class LLMClient:
    """Chat with the configured model; every call is recorded in (or replayed from) the cache."""

    def __init__(self, settings: Settings, cache: CallCache | None = None, *, mode: str | None = None,
                 timeout_s: float = 120.0, max_attempts: int = 4, max_tokens: int = DEFAULT_MAX_TOKENS,
                 temperature: float = 0.0):
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
        self.max_attempts = max_attempts       # the first try and the SDK's retries
        self.max_tokens = max_tokens
        self.temperature = temperature          # sent with every request, so part of its cache key
        self._client = None
        self._async_clients: dict[int, tuple[asyncio.AbstractEventLoop, Any]] = {}  # loop id: (loop, client)
        self.requests_sent = 0  # requests made (cache hits send none; the SDK's retries not counted)

    @property
    def namespace(self) -> str:
        return f"llm/{self.model}"

    def _openai(self):
        if self._client is None:
            import openai  # heavy: imported on the first real call only

            self._client = openai.OpenAI(base_url=self.base_url, api_key=self.settings.llm_api_key or "EMPTY",
                                         timeout=self.timeout_s, max_retries=self.max_attempts - 1)
        return self._client

    def _async_openai(self):
        """The running event loop's client (an httpx pool is bound to its loop; the loop is kept beside it, so
        its id cannot be another loop's). A plain-HTTP endpoint (a local server) gets the process's one TLS
        context (only a redirect to HTTPS would use it) instead of a new one a loop: building one reads the
        CA bundle, ~35 ms, as long as a local model's answer, and an attribution runs a loop a configuration."""
        import openai

        loop = asyncio.get_running_loop()
        if id(loop) not in self._async_clients:
            extra = {}
            if urlsplit(self.base_url or "").scheme == "http":
                extra["http_client"] = openai.DefaultAsyncHttpxClient(verify=_plain_http_tls())
            self._async_clients[id(loop)] = (loop, openai.AsyncOpenAI(
                base_url=self.base_url, api_key=self.settings.llm_api_key or "EMPTY", timeout=self.timeout_s,
                max_retries=self.max_attempts - 1, **extra))
        return self._async_clients[id(loop)][1]

    def _request(self, messages, tools, response_format, max_tokens, stop) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.temperature or 0, "max_tokens": max_tokens or self.max_tokens}
        if response_format is not None:
            params["response_format"] = response_format
        if stop:
            params["stop"] = list(stop)
        return {"messages": messages, "tools": tools, "params": params}

    def _cached(self, request: dict[str, Any], compute) -> dict:
        response, _served = cached_call(self.cache, kind="llm", name=self.model, request=request,
                                        namespace=self.namespace, mode=self.mode, compute=compute)
        return json.loads(response)

    def chat(self, messages: list[dict], *, tools: list[dict] | None = None, response_format: dict | None = None,
             max_tokens: int | None = None, stop: list[str] | None = None, timeout_s: float | None = None) -> dict:
        """One assistant turn: ``{content, tool_calls[{id, name, arguments}], finish_reason, model, usage}``.
        ``timeout_s`` bounds this request (default: the client's)."""
        request = self._request(messages, tools, response_format, max_tokens, stop)

        def compute() -> tuple[str, str, bool, str | None]:
            return canonical_json(self._send(request, timeout_s)), "live", True, None
        return self._cached(request, compute)

    async def achat(self, messages: list[dict], *, tools: list[dict] | None = None,
                    response_format: dict | None = None, max_tokens: int | None = None,
                    stop: list[str] | None = None, timeout_s: float | None = None) -> dict:
        """``chat`` over the asynchronous client: many trials wait on the server at once."""
        request = self._request(messages, tools, response_format, max_tokens, stop)

        def miss():
            raise _NotCached
        try:
            return self._cached(request, miss)
        except _NotCached:
            pass
        reply = canonical_json(await self._asend(request, timeout_s))
        return self._cached(request, lambda: (reply, "live", True, None))

    def json_chat(self, messages: list[dict], **kwargs) -> Any:
        """Ask for a JSON answer and parse it; ``LLMJunk`` (with the raw text) when it is not JSON."""
        reply = self.chat(messages, **kwargs)
        return parse_json_reply(reply.get("content") or "")

    def _create_kwargs(self, request: dict[str, Any], timeout_s: float | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "messages": request["messages"], **request["params"]}
        if request["tools"]:
            kwargs["tools"] = request["tools"]
        if timeout_s is not None:
            kwargs["timeout"] = max(1.0, timeout_s)
        return kwargs

    def _send(self, request: dict[str, Any], timeout_s: float | None) -> dict:
        import openai

        self.requests_sent += 1
        try:
            return _reply(self._openai().chat.completions.create(**self._create_kwargs(request, timeout_s)))
        except openai.OpenAIError as exc:
            raise self._error(exc) from None

    async def _asend(self, request: dict[str, Any], timeout_s: float | None) -> dict:
        import openai

        self.requests_sent += 1
        try:
            completion = await self._async_openai().chat.completions.create(**self._create_kwargs(request, timeout_s))
        except openai.OpenAIError as exc:
            raise self._error(exc) from None
        return _reply(completion)

    def _error(self, exc: Exception) -> LLMError:
        """The SDK has retried what was worth retrying; say what went wrong, in our terms."""
        import openai

        if isinstance(exc, openai.APIResponseValidationError):
            return LLMJunk("LLM server sent a malformed response", str(exc.body))
        if isinstance(exc, openai.APIStatusError) and exc.status_code < 500 and exc.status_code not in (408, 409, 429):
            return LLMError(f"LLM server {self.base_url} refused the request: HTTP {exc.status_code}: {exc.message}")
        return LLMError(f"LLM server {self.base_url} failed {self.max_attempts} times; last error: "
                        f"{type(exc).__name__}: {exc}")


def assistant_tool_calls(content: str | None, calls: list[dict]) -> dict:
    """The assistant message that carries a reply's tool calls back into the conversation."""
    return {"role": "assistant", "content": content or None,
            "tool_calls": [{"id": c["id"], "type": "function",
                            "function": {"name": c["name"], "arguments": c["arguments"] or "{}"}} for c in calls]}


def _reply(completion) -> dict:
    if not getattr(completion, "choices", None):
        raise LLMJunk("LLM response has no choices", str(completion))
    choice = completion.choices[0]
    message = choice.message
    tool_calls = [{"id": call.id, "name": call.function.name, "arguments": call.function.arguments}
                  for call in (message.tool_calls or [])]
    usage = getattr(completion, "usage", None)
    tokens = None if usage is None else {k: getattr(usage, k, None)
                                         for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return {"content": message.content, "tool_calls": tool_calls, "finish_reason": choice.finish_reason,
            "model": completion.model, "usage": tokens}


__all__ = ["LLMClient", "LLMError", "LLMJunk", "assistant_tool_calls", "parse_json_reply"]
