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


def page_result(page, section: str | None = None) -> dict:
    """The structured page an agent reads: infobox first, then lead, sections and links; with
    ``section``, only that section (case-insensitive title match)."""
    if section is not None:
        wanted = section.strip().lower()
        found = next((s for s in page.sections if s.title.strip().lower() == wanted), None)
        if found is None:
            raise ToolError(f"{page.title!r} has no section {section!r}; sections: "
                            + ", ".join(s.title for s in page.sections[:30]))
        return {"url": page.url, "title": page.title, "section": found.title, "text": found.text}
    return {
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


@implements("fetch_webpage", "offline")
def fetch_webpage(args: dict, ctx: BackendContext) -> dict:
    store = snapshot_store(ctx)
    try:
        page = store.get(args["url"])
    except MalformedPage as exc:
        raise ToolError(f"page {args['url']} is malformed in the snapshot: {exc}") from None
    if page is None:
        raise ToolError(f"page not found in the snapshot: {args['url']}")
    result = page_result(page, args.get("section"))
    result.update(provenance="snapshot", source=_source(store), units={})
    return result


@implements("web_search", "offline")
def web_search(args: dict, ctx: BackendContext) -> dict:
    store = snapshot_store(ctx)
    hits = store.search(args["query"], k=args.get("num_results", 5))
    results = [{"title": h["title"], "url": h["url"], "snippet": h["snippet"]} for h in hits]
    return {"query": args["query"], "results": results, "provenance": "snapshot",
            "source": _source(store) + " (BM25 full-text index)", "units": {}}
