"""fetch_webpage and web_search answered from the Wikipedia snapshot (provenance: snapshot)."""
from __future__ import annotations

import threading

from pipeline.snapshot.store import MalformedPage, SnapshotStore
from pipeline.tools.errors import ToolError
from pipeline.tools.registry import BackendContext, implements

_stores: dict[str, object] = {}
_lock = threading.Lock()


def snapshot_store(ctx: BackendContext):
    """The snapshot store for the configured directory, opened once per process."""
    key = str(ctx.settings.snapshot_dir)
    with _lock:
        store = _stores.get(key)
        if store is None:
            store = _stores[key] = SnapshotStore.open(ctx.settings.snapshot_dir, index_dir=ctx.settings.derived_dir)
    return store


def _source(store) -> str:
    return f"legwork snapshot {store.hash[:12]}"


def link_anchors(page) -> dict[str, list[str]]:
    """The texts the page shows for its links where they differ from the link's title ("U.S." for
    United States), by title: what a reader of a sentence clicks. Empty for a page stored without them."""
    shown = {}
    for link in page.links:
        texts = [t for t in getattr(link, "anchors", None) or () if t != link.title]
        if texts:
            shown[link.title] = texts
    return shown


def page_result(page, section: str | None = None, links_offset: int | None = None,
                text_offset: int | None = None) -> dict:
    """The structured page an agent reads: infobox first, then lead, sections and links (and
    ``link_anchors``, the texts shown for links where they are not the title); with ``section``,
    only that section (case-insensitive title match; "lead" for the opening text when no section is so
    titled), from character ``text_offset`` on when given; with ``links_offset``, only the links from
    that index on, with their number."""
    if section is not None:
        wanted = section.strip().lower()
        found = next((s for s in page.sections if s.title.strip().lower() == wanted), None)
        if found is None and wanted in ("lead", "(lead)"):
            title, text = "lead", page.lead or ""
        elif found is None:
            raise ToolError(f"{page.title!r} has no section {section!r}; sections: "
                            + ", ".join(s.title for s in page.sections[:30]) + ' (and "lead", the opening text)')
        else:
            title, text = found.title, found.text
        result = {"url": page.url, "title": page.title, "section": title, "text": text}
        if text_offset is not None:
            result.update(text=text[text_offset:], text_offset=text_offset, text_chars=len(text))
        return result
    if text_offset is not None:
        raise ToolError("text_offset reads on in one section's text: give section too")
    anchors = link_anchors(page)
    if links_offset is not None:
        shown = [link.title for link in page.links][links_offset:]
        result = {"url": page.url, "title": page.title, "links_offset": links_offset, "links_total": len(page.links),
                  "links": shown}
        if anchors:
            result["link_anchors"] = {t: anchors[t] for t in shown if t in anchors}
        return result
    result = {
        "url": page.url,
        "title": page.title,
        "description": page.description,
        "infobox_type": page.infobox_type,
        "infobox": [
            {"name": f.name, "label": f.label, "text": f.text, "number": f.number, "unit": f.unit, "date": f.date}
            for f in page.infobox
        ],
        "lead": page.lead,
        "sections": [{"title": s.title, "level": s.level, "text": s.text} for s in page.sections],   # level: 2 a
        #             section, 3 a subsection of the one before (as the page's headings nest them)
        "links": [link.title for link in page.links],
    }
    if anchors:     # only where a page records them: pages stored without anchors read as before
        result["link_anchors"] = anchors
    return result


@implements("fetch_webpage", "offline")
def fetch_webpage(args: dict, ctx: BackendContext) -> dict:
    store = snapshot_store(ctx)
    try:
        page = store.get(args["url"])
    except MalformedPage as exc:
        raise ToolError(f"page {args['url']} is malformed in the snapshot: {exc}") from None
    if page is None:
        raise ToolError(f"page not found in the snapshot: {args['url']}")
    result = page_result(page, args.get("section"), args.get("links_offset"), args.get("text_offset"))
    result.update(provenance="snapshot", source=_source(store), units={})
    return result


def search_window(args: dict) -> tuple[int, int]:
    """(offset, num_results) of a ``web_search`` call: ``offset``, or ``page`` (1-based) pages of
    ``num_results``; both given must name the same first result."""
    k = int(args.get("num_results", 5))
    offset = args.get("offset")
    if args.get("page") is not None:
        from_page = (int(args["page"]) - 1) * k
        if offset is not None and int(offset) != from_page:
            raise ToolError(f"offset {offset} and page {args['page']} (of {k} results) name different results; give one")
        offset = from_page
    return int(offset or 0), k


@implements("web_search", "offline")
def web_search(args: dict, ctx: BackendContext) -> dict:
    store = snapshot_store(ctx)
    offset, k = search_window(args)
    mode, field = args.get("mode", "words"), args.get("field", "all")
    found = store.search_page(args["query"], offset=offset, k=k, mode=mode, field=field)
    results = [{"rank": h["rank"], "title": h["title"], "url": h["url"], "snippet": h["snippet"]} for h in found["results"]]
    return {"query": args["query"], "mode": mode, "field": field, "offset": offset, "total": found["total"],
            "next_offset": found["next_offset"], "results": results, "provenance": "snapshot",
            "source": _source(store) + " (BM25 full-text index)", "units": {}}
