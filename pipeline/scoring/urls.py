"""URL identity for page-visit scoring: two URLs name the same page when their keys are equal.

The key ignores scheme, ``www.``/mobile ``m.``/language host prefixes, percent-encoding,
underscores vs spaces, the case of the first title letter, fragments and query strings
(except MediaWiki's ``index.php?title=``), and follows redirects through an optional
``resolve`` callable (e.g. ``SnapshotStore.open(dir).resolve``).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from pipeline.snapshot.page import canonical_title

Resolver = Callable[[str], Any]
_LANG = re.compile(r"^[a-z]{2,3}(-[a-z]+)?$")


def _host(netloc: str) -> str:
    parts = netloc.lower().split("@")[-1].split(":")[0].split(".")
    while len(parts) > 2 and (parts[0] in ("www", "m", "mobile") or _LANG.match(parts[0])):
        parts = parts[1:]
    return ".".join(parts)


def _resolved_title(title: str, resolve: Resolver | None) -> str:
    if resolve is None:
        return title
    try:
        target = resolve(title)
    except Exception:  # noqa: BLE001 - an unknown title is simply not redirected
        return title
    if target is None:
        return title
    if isinstance(target, str):
        return canonical_title(target)
    name = getattr(target, "title", None) or (target.get("title") if isinstance(target, dict) else None)
    return canonical_title(name) if name else title


def page_key(url_or_title: str, resolve: Resolver | None = None) -> str:
    """Normalised identity of a page URL (or a bare wiki title)."""
    if resolve is None:
        return _page_key_cached(url_or_title or "")
    return _page_key(url_or_title, resolve)


@lru_cache(maxsize=65536)
def _page_key_cached(url_or_title: str) -> str:
    return _page_key(url_or_title, None)


def _page_key(url_or_title: str, resolve: Resolver | None) -> str:
    text = (url_or_title or "").strip()
    if "://" not in text and not text.startswith("//"):
        if "/" in text.split("#")[0] and "." in text.split("/")[0]:
            text = "https://" + text
        else:
            return "wiki:" + _resolved_title(canonical_title(unquote(text.split("#")[0])), resolve)
    parts = urlsplit(text if "://" in text else "https:" + text)
    host = _host(parts.netloc)
    path = unquote(parts.path)
    title = None
    if "/wiki/" in path:
        title = path.split("/wiki/", 1)[1]
    elif path.rstrip("/").endswith("index.php"):
        title = (parse_qs(parts.query).get("title") or [None])[0]
    if title is not None:
        t = _resolved_title(canonical_title(title), resolve)
        return ("wiki:" if host.endswith("wikipedia.org") else host + ":") + t
    return host + path.rstrip("/")


def same_page(a: str, b: str, resolve: Resolver | None = None) -> bool:
    return page_key(a, resolve) == page_key(b, resolve)
