"""Live fetch_webpage and web_search against the MediaWiki API (Serper for web search with a key).

fetch_webpage asks the wiki named in the URL (``https://<host>/w/api.php``, or
``settings.live["mediawiki_api_url"]``) for the page's current wikitext, following redirects,
and parses it with the snapshot's own wikitext parser (``pipeline.snapshot.wikitext``), so a
live page has exactly the shape of an offline one. web_search uses MediaWiki's full-text
search, or Serper's Google search when ``settings.live["serper_key"]`` / env ``SERPER_API_KEY``
is set (``serper_url`` overrides its endpoint).
"""
from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, unquote, urlsplit

from pipeline.snapshot.page import title_to_url
from pipeline.snapshot.wikitext import WikitextError, page_from_wikitext
from pipeline.tools.backends.live.http import get_json, live_setting, request
from pipeline.tools.backends.offline.web import page_result, search_window
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements

SERPER_URL = "https://google.serper.dev/search"
DEFAULT_WIKI_HOST = "en.wikipedia.org"


def title_from_url(url: str) -> tuple[str, str]:
    """(wiki host, page title) of a wiki URL such as https://en.wikipedia.org/wiki/Ulm_Minster#History."""
    parts = urlsplit(url if "//" in url else f"https://{DEFAULT_WIKI_HOST}/wiki/{url}")
    host = parts.netloc or DEFAULT_WIKI_HOST
    if parts.path.startswith("/wiki/"):
        title = unquote(parts.path[len("/wiki/"):])
    else:
        title = (parse_qs(parts.query).get("title") or [""])[0]
    title = title.replace("_", " ").strip()
    if not title:
        raise ToolError(f"not a wiki page URL: {url}")
    return host, title


def _api_url(ctx: BackendContext, host: str) -> str:
    return live_setting(ctx, "mediawiki_api_url", f"https://{host}/w/api.php")


def _wikitext(ctx: BackendContext, api: str, title: str) -> tuple[str, str, str | None]:
    data = get_json(ctx, "mediawiki", api, {
        "action": "query", "prop": "revisions", "rvprop": "content|timestamp", "rvslots": "main",
        "titles": title, "redirects": 1, "format": "json", "formatversion": 2})
    if "error" in data:
        raise ToolError(f"MediaWiki: {data['error'].get('info', data['error'])}")
    pages = data.get("query", {}).get("pages", [])
    if not pages or pages[0].get("missing") or pages[0].get("invalid") or not pages[0].get("revisions"):
        raise ToolError(f"page not found: {title}")
    page = pages[0]
    revision = page["revisions"][0]
    return page["title"], revision["slots"]["main"]["content"], revision.get("timestamp")


@implements("fetch_webpage", "live")
def fetch_webpage(args: dict, ctx: BackendContext) -> dict:

    host, title = title_from_url(args["url"])
    api = _api_url(ctx, host)
    real_title, text, timestamp = _wikitext(ctx, api, title)
    try:
        page = page_from_wikitext(real_title, text, source=f"live MediaWiki API {host}", revision_ts=timestamp)
    except WikitextError as exc:
        raise ToolError(f"{real_title}: {exc}") from None
    result = page_result(page, args.get("section"), args.get("links_offset"), args.get("text_offset"))
    result.update(provenance="live", units={},
                  source=f"MediaWiki API {host}, revision of {timestamp} (live, CC BY-SA 4.0)")
    return result


def _strip_tags(snippet: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", snippet or "")).strip()


@implements("web_search", "live")
def web_search(args: dict, ctx: BackendContext) -> dict:
    """The offline tool's paging over a live search: ``offset``/``page`` and ``num_results`` as offline,
    ``total`` and ``next_offset`` from MediaWiki's ``totalhits`` and ``continue``. The offline modes and
    fields are the snapshot index's own: another ``mode`` than words or ``field`` than all is refused
    (MediaWiki matches every word, by its own stemming), as is paging through Serper (no total)."""
    query = args["query"]
    offset, count = search_window(args)
    mode, field = args.get("mode", "words"), args.get("field", "all")
    if mode != "words" or field != "all":
        raise ToolError(f"web_search mode {mode!r} and field {field!r}: the live backend searches only as "
                        "its service does (mode \"words\", field \"all\"); use the offline backend for "
                        "whole-word, phrase or field searches")
    key = live_setting(ctx, "serper_key", env="SERPER_API_KEY")
    if key:
        if offset:
            raise ToolError("web_search offset/page: the live Serper backend gives no total and no paging; "
                            "use the MediaWiki search (no serper_key) or the offline backend")
        data = request(ctx, "serper", "POST", live_setting(ctx, "serper_url", SERPER_URL),
                       json_body={"q": query, "num": count}, headers={"X-API-KEY": key})
        results = [{"rank": i + 1, "title": r.get("title", ""), "url": r.get("link", ""), "snippet": r.get("snippet", "")}
                   for i, r in enumerate(data.get("organic", [])[:count])]
        return {"query": query, "mode": mode, "field": field, "offset": 0, "total": None, "next_offset": None,
                "results": results, "units": {}, "provenance": "live", "source": "Serper Google Search API (live)"}
    api = _api_url(ctx, DEFAULT_WIKI_HOST)
    data = get_json(ctx, "mediawiki", api, {"action": "query", "list": "search", "srsearch": query,
                                            "srlimit": count, "sroffset": offset, "srprop": "snippet",
                                            "srinfo": "totalhits", "format": "json", "formatversion": 2})
    if "error" in data:
        raise ToolError(f"MediaWiki search: {data['error'].get('info', data['error'])}")
    hits = data.get("query", {}).get("search", [])
    results = [{"rank": offset + i + 1, "title": hit["title"], "url": title_to_url(hit["title"]),
                "snippet": _strip_tags(hit.get("snippet"))} for i, hit in enumerate(hits)]
    total = data.get("query", {}).get("searchinfo", {}).get("totalhits")
    more = data.get("continue", {}).get("sroffset")
    return {"query": query, "mode": mode, "field": field, "offset": offset, "total": total,
            "next_offset": int(more) if more is not None and hits else None, "results": results,
            "units": {}, "provenance": "live", "source": f"MediaWiki full-text search {DEFAULT_WIKI_HOST} (live)"}
