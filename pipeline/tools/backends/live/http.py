"""One HTTP session for every live backend: timeouts, retries with backoff, per-service rate limits.

Retries use urllib3's ``Retry`` (exponential backoff, honours ``Retry-After``) on connection
errors, HTTP 429 and 5xx. What a failure means for the cache decides its exception:

* ``ToolError``: the service answered and the answer is "no" (unknown place, no data for the
  date, 4xx). The registry records it like any answer.
* ``LiveServiceError``: the service could not be reached or kept failing, or the key was
  refused. Not recorded, so a later run asks again.

Settings (``settings.live``; every base URL is overridable the same way, see each backend):
``user_agent``, ``http_timeout_s`` (30), ``http_retries`` (4), ``http_backoff_s`` (1.0),
``<service>_min_interval_s`` (Nominatim and the FOSSGIS OSRM servers default to 1 s, their
usage policies' limit).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from pipeline.tools.errors import LiveServiceError, ToolError
from pipeline.tools.registry import BackendContext

USER_AGENT = "Legwork/0.1 (dataset factory for LLM-agent evaluation; https://github.com/legwork)"

# Usage policies: Nominatim and routing.openstreetmap.de ask for at most one request a second.
DEFAULT_MIN_INTERVAL_S = {"nominatim": 1.0, "osrm": 1.0}


def live_setting(ctx: BackendContext, key: str, default: Any = None, env: str | None = None) -> Any:
    """``settings.live[key]``, else the environment variable ``env``, else ``default``."""
    value = ctx.settings.live.get(key)
    if value in (None, "") and env:
        value = os.environ.get(env)
    return default if value in (None, "") else value


class _RateLimiter:
    def __init__(self):
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}

    def wait(self, service: str, interval: float) -> None:
        if interval <= 0:
            return
        with self._lock:
            now = time.monotonic()
            start = max(now, self._next.get(service, 0.0))
            self._next[service] = start + interval
        if start > now:
            time.sleep(start - now)


_limiter = _RateLimiter()
_sessions: dict[tuple, Any] = {}
_sessions_lock = threading.Lock()


def _session(retries: int, backoff: float, user_agent: str):
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.util.retry import Retry

    key = (retries, backoff, user_agent, threading.get_ident())
    with _sessions_lock:
        session = _sessions.get(key)
        if session is None:
            retry = Retry(total=retries, connect=retries, read=retries, status=retries, backoff_factor=backoff,
                          status_forcelist=(429, 500, 502, 503, 504), allowed_methods=frozenset({"GET", "POST"}),
                          respect_retry_after_header=True, raise_on_status=False)
            session = requests.Session()
            adapter = HTTPAdapter(max_retries=retry)
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            session.headers["User-Agent"] = user_agent
            _sessions[key] = session
    return session


def request(ctx: BackendContext, service: str, method: str, url: str, *, params: dict | None = None,
            json_body: Any = None, headers: dict | None = None, expect: str = "json",
            not_found_ok: bool = False):
    """Send one request to ``service`` and return the decoded body (``json`` or ``text``)."""
    import requests

    retries = int(live_setting(ctx, "http_retries", 4))
    backoff = float(live_setting(ctx, "http_backoff_s", 1.0))
    timeout = float(live_setting(ctx, "http_timeout_s", 30.0))
    agent = str(live_setting(ctx, "user_agent", USER_AGENT))
    interval = float(live_setting(ctx, f"{service}_min_interval_s", DEFAULT_MIN_INTERVAL_S.get(service, 0.0)))
    _limiter.wait(service, interval)
    host = urlsplit(url).netloc
    try:
        response = _session(retries, backoff, agent).request(method, url, params=params, json=json_body,
                                                             headers=headers, timeout=timeout)
    except requests.RequestException as exc:
        raise LiveServiceError(f"{service}: {host} unreachable: {type(exc).__name__}: {exc}") from None
    status = response.status_code
    if status == 404 and not_found_ok:
        return None
    if status in (401, 403):
        raise LiveServiceError(f"{service}: {host} refused the request (HTTP {status}): check the API key")
    if status == 429 or status >= 500:
        raise LiveServiceError(f"{service}: {host} kept failing (HTTP {status}) after {retries} retries")
    if status >= 400:
        raise ToolError(f"{service}: {host} answered HTTP {status}: {response.text[:200]}")
    if expect == "text":
        return response.text
    try:
        return response.json()
    except ValueError:
        raise LiveServiceError(f"{service}: {host} sent something that is not JSON: {response.text[:200]!r}") \
            from None


def get_json(ctx: BackendContext, service: str, url: str, params: dict | None = None, **kwargs):
    return request(ctx, service, "GET", url, params=params, **kwargs)
