"""What an agent reads of a tool result: the result's JSON, shortened inside the JSON to fit a cut.

The tool CLI and the MCP server print at most ``max_chars`` characters of a result (8,000 by default,
the seed paper's cut). A result that fits is printed as it is. A longer one is shortened by its
structure, never by cutting its text, so what is printed always parses as JSON:

- a page (``fetch_webpage``): title, url, description, the ``contents`` (every section's title,
  level and length) and the infobox first; then the lead's first part, the first links (with the
  texts the page shows for them, ``link_anchors``) and the sections' texts, each shortened as far as
  the cut needs. ``shortened`` says what was left out and which arguments give it: ``section`` for
  one section (or the lead) in full, ``text_offset`` past a long one, ``links_offset`` for the links
  after the shown ones.
- a search (``web_search``) or another paged list (``countries_list``, ``maps_search_places``): the
  first results that fit, with ``next_offset`` set to the first one not shown, so reading on from it
  misses none.
- any other result: its longest lists and texts halved in turn, each noted in ``shortened``.

Printed JSON is strict: besides the control characters JSON escapes anyway, DEL, the C1 controls,
the line and paragraph separators and lone surrogates are escaped (``strict``), so a strict parser
reads it and a line-by-line reader never sees a line break inside it.
"""
from __future__ import annotations

import json
import re
from typing import Any

MIN_CHARS = 200     # the smallest cut the shortening keeps to (a smaller one gets the note that it cannot)
_PAGE_KEYS = {"url", "title", "lead", "sections", "links"}
_PAGED_LISTS = ("countries", "places")   # other paged results (countries_list, maps_search_places): cut as a search
_ESCAPED = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def strict(text: str) -> str:
    """``text`` (JSON) with the characters some strict parsers or line readers reject written as escapes.
    Outside strings JSON text is ASCII, so every such character lies inside a string, where the escape
    means the same character."""
    return _ESCAPED.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _dump(data: Any, indent: int | None) -> str:
    if indent is None:
        return strict(json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False))
    return strict(json.dumps(data, ensure_ascii=False, indent=indent, allow_nan=False))


def fit(text: str, max_chars: int, indent: int | None = None) -> str:
    """``text`` (a tool's JSON response) as an agent reads it: itself when it fits in ``max_chars``,
    else its data shortened to fit (see the module's docstring); always valid JSON of at most
    ``max_chars`` characters when ``max_chars >= MIN_CHARS``."""
    out = strict(text)
    if len(out) <= max_chars:
        return out
    try:
        data = json.loads(text)
    except ValueError:      # not JSON: cut as text, saying how much was cut
        return out[:max(0, max_chars - 60)] + f"\n[output truncated: {len(out)} characters, {max_chars} shown]"
    if not isinstance(data, dict):
        data = {"result": data}
    if _PAGE_KEYS <= data.keys():
        shaped = _fit_page(data, max_chars, indent)
    elif isinstance(data.get("links"), list) and "links_offset" in data:
        shaped = _fit_links(data, max_chars, indent)
    elif isinstance(data.get("text"), str) and "section" in data:
        shaped = _fit_section(data, max_chars, indent)
    elif isinstance(data.get("results"), list) and "total" in data:
        shaped = _fit_search(data, max_chars, indent)
    elif "next_offset" in data and "total" in data and any(isinstance(data.get(k), list) for k in _PAGED_LISTS):
        shaped = _fit_search(data, max_chars, indent, next(k for k in _PAGED_LISTS if isinstance(data.get(k), list)))
    else:
        shaped = None
    if shaped is None:
        shaped = _fit_generic(data, max_chars, indent, {})
    if shaped is None or len(shaped) > max_chars:
        note = {"shortened": f"the result ({len(out)} characters) does not fit in {max_chars}"}
        named = {k: data[k] for k in ("title", "url") if isinstance(data.get(k), str)}
        shaped = _dump({**named, **note}, indent)
        if len(shaped) > max_chars:
            shaped = _dump(note, indent)
    return shaped


# ---- pages -------------------------------------------------------------------------------------
def _cut(text: str, n: int | None) -> str:
    """The first ``n`` characters of ``text`` (None: all), ended at a word where one is near."""
    if n is None or len(text) <= n:
        return text
    cut = text[:n]
    space = cut.rfind(" ")
    return (cut[:space] if space > n * 0.8 else cut).rstrip() + " …"


def _shown_len(text: str, n: int | None) -> int:
    """How many characters of ``text`` ``_cut`` keeps (without the ellipsis)."""
    return len(text) if n is None or len(text) <= n else len(_cut(text, n)) - 2


# (section text, links, lead, infobox texts, contents entries) per step, most shown first
# (a long infobox, Alabama's 100 fields, gives way before the lead and the links do: a reader at the cut
# should still see how the page opens and where it leads)
_PAGE_STEPS = [
    (None, None, None, None, None), (2000, None, None, None, None), (800, 400, None, None, None),
    (300, 200, 4000, None, None), (100, 150, 3000, 100, None), (0, 100, 2000, 60, None),
    (0, 60, 1500, 40, None), (0, 40, 1200, 25, None), (0, 30, 1000, 15, None), (0, 20, 800, 10, None),
    (0, 10, 500, 10, None), (0, 5, 300, 10, 60), (0, 0, 100, 10, 30), (0, 0, 0, 10, 15), (0, 0, 0, 10, 5),
]


def _fit_page(data: dict, max_chars: int, indent: int | None) -> str | None:
    """The first of ``_PAGE_STEPS`` that fits, then as many more links and lead characters as still fit
    (up to the step before's)."""
    for i, step in enumerate(_PAGE_STEPS):
        out = _dump(_page_view(data, *step), indent)
        if len(out) > max_chars:
            continue
        if i == 0:
            return out
        step = list(step)
        for slot in (1, 2):             # links, then lead characters
            lo, hi = step[slot], _PAGE_STEPS[i - 1][slot]
            if lo is None or lo == hi:
                continue
            hi = hi if hi is not None else (len(data.get("links") or []) if slot == 1 else len(data.get("lead") or ""))

            def render(n: int, slot=slot, step=step) -> str:
                return _dump(_page_view(data, *step[:slot], n, *step[slot + 1:]), indent)
            step[slot] = _bisect(lo, hi, lambda n, render=render: len(render(n)) <= max_chars)
        return _dump(_page_view(data, *step), indent)
    return _fit_generic(_page_view(data, *_PAGE_STEPS[-1]), max_chars, indent, {})


def _page_view(data: dict, section_chars, links_n, lead_chars, infobox_chars, contents_n) -> dict:
    url, sections, links, lead = data.get("url"), data.get("sections") or [], data.get("links") or [], data.get("lead") or ""
    infobox = data.get("infobox") or []
    notes: dict[str, str] = {}
    view: dict[str, Any] = {"title": data.get("title"), "url": url, "description": data.get("description"),
                            "shortened": notes}
    contents = [{"title": s.get("title"), "level": s.get("level"), "chars": len(s.get("text") or "")} for s in sections]
    if contents_n is not None and len(contents) > contents_n:
        notes["contents"] = f"the first {contents_n} of {len(contents)} sections listed"
        contents = contents[:contents_n]
    view["contents"] = contents
    if "infobox_type" in data:
        view["infobox_type"] = data["infobox_type"]
    if infobox_chars is not None and any(len(str(f.get("text") or "")) > infobox_chars for f in infobox):
        infobox = [dict(f, text=_cut(f["text"], infobox_chars)) if isinstance(f.get("text"), str) else f for f in infobox]
        notes["infobox"] = f"field texts cut to {infobox_chars} characters; the numbers, units and dates are whole"
    # a field as a reader needs it: its label and text, and the number, unit and date where it has them
    view["infobox"] = [{k: v for k, v in f.items() if v is not None and not (k == "name" and v == f.get("label"))}
                       if isinstance(f, dict) else f for f in infobox]
    view["lead"] = _cut(lead, lead_chars)
    if len(view["lead"]) < len(lead):
        notes["lead"] = (f"the first {_shown_len(lead, lead_chars)} of {len(lead)} characters; fetch_webpage with "
                         f"section \"lead\" gives all of it")
    shown_links = links if links_n is None else links[:links_n]
    view["links"] = shown_links
    if len(shown_links) < len(links):
        notes["links"] = (f"the first {len(shown_links)} of {len(links)} links; fetch_webpage with links_offset "
                          f"{len(shown_links)} lists the next")
    anchors = data.get("link_anchors")
    if isinstance(anchors, dict):
        view["link_anchors"] = {t: anchors[t] for t in shown_links if t in anchors}
    if section_chars != 0:
        view["sections"] = [{"title": s.get("title"), "level": s.get("level"), "text": _cut(s.get("text") or "", section_chars)}
                            for s in sections]
        if section_chars is not None and any(len(s.get("text") or "") > section_chars for s in sections):
            notes["sections"] = (f"section texts cut to {section_chars} characters; fetch_webpage with section "
                                 "(a title from contents) gives one in full")
    elif sections:
        notes["sections"] = "texts left out; fetch_webpage with section (a title from contents) gives one in full"
    for key, value in data.items():
        if key not in view and key not in ("sections", "link_anchors"):
            view[key] = value
    if not notes:
        del view["shortened"]
    return view


def _fit_links(data: dict, max_chars: int, indent: int | None) -> str | None:
    """A page's links from ``links_offset``: the first ones that fit, the offset of the next."""
    links, start = data["links"], int(data.get("links_offset") or 0)

    def view(n: int) -> dict:
        out = {k: v for k, v in data.items() if k not in ("links", "link_anchors")}
        out["links"] = links[:n]
        if isinstance(data.get("link_anchors"), dict):
            out["link_anchors"] = {t: data["link_anchors"][t] for t in links[:n] if t in data["link_anchors"]}
        if n < len(links):
            out["shortened"] = {"links": f"links {start + 1}-{start + n} of {data.get('links_total', start + len(links))}; "
                                         f"fetch_webpage with links_offset {start + n} lists the next"}
        return out
    return _largest_fitting(len(links), lambda n: _dump(view(n), indent), max_chars)


def _fit_section(data: dict, max_chars: int, indent: int | None) -> str | None:
    """One section's (or the lead's) text from ``text_offset``: its first part that fits, the offset of the rest."""
    text, start = data["text"], int(data.get("text_offset") or 0)
    total = int(data.get("text_chars") or start + len(text))

    def view(n: int) -> str:
        out = dict(data)
        out["text"] = text[:n]
        if n < len(text):
            out["shortened"] = {"text": f"characters {start + 1}-{start + n} of {total}; fetch_webpage with this "
                                        f"section and text_offset {start + n} gives the rest"}
        return _dump(out, indent)
    return _largest_fitting(len(text), view, max_chars)


def _fit_search(data: dict, max_chars: int, indent: int | None, key: str = "results") -> str | None:
    """A search page (or another paged list, ``key``): snippets shortened, then the first results that
    fit; ``next_offset`` is then the first result not shown, so paging on from it reads every result."""
    results, offset = data[key], int(data.get("offset") or 0)
    size = "num_results" if key == "results" else "page size"

    def view(n: int, snippet_chars: int | None) -> str:
        out = dict(data)
        out[key] = [dict(r, snippet=_cut(r["snippet"], snippet_chars)) if isinstance(r.get("snippet"), str) else r
                    for r in results[:n]]
        notes = {}
        if snippet_chars is not None and any(len(str(r.get("snippet") or "")) > snippet_chars for r in results[:n]):
            notes["snippets"] = f"cut to {snippet_chars} characters"
        if n < len(results):
            out["next_offset"] = offset + n
            notes[key] = (f"the first {n} of this page's {len(results)} {key}; next_offset {offset + n} "
                          f"(with the same {size}) gives the rest")
        if notes:
            out["shortened"] = notes
        return _dump(out, indent)
    for snippet_chars in (None, 160, 80):
        if len(view(len(results), snippet_chars)) <= max_chars:
            return view(len(results), snippet_chars)
    return _largest_fitting(len(results), lambda n: view(n, 80), max_chars)


def _bisect(lo: int, hi: int, fits) -> int:
    """The largest ``n`` in lo..hi with ``fits(n)``, by bisection (``fits`` holds at ``lo`` and, as lengths
    grow with n, fails from some n on)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _largest_fitting(count: int, render, max_chars: int) -> str | None:
    """``render(n)`` for the largest ``n`` in 0..count whose text fits (lengths grow with n)."""
    if len(render(0)) > max_chars:
        return None
    return render(_bisect(0, count, lambda n: len(render(n)) <= max_chars))


# ---- anything else -----------------------------------------------------------------------------
def _fit_generic(data: dict, max_chars: int, indent: int | None, notes: dict) -> str | None:
    """The largest list or text shortened in turn, noted in ``shortened`` by its path: cut as little as
    makes the result fit when cutting it alone can, else halved, until the result fits."""
    data = json.loads(json.dumps(data))
    earlier = data.pop("shortened") if isinstance(data.get("shortened"), dict) else {}
    notes = {**earlier, **notes}                    # a view's own notes stay, beside the new ones
    totals: dict[str, int] = {}
    for _ in range(200):
        out = _dump(dict(data, shortened=notes) if notes else data, indent)
        if len(out) <= max_chars:
            return out
        found = _largest(data, ())
        if found is None:
            return None
        path, value = found
        parent = data
        for key in path[:-1]:
            parent = parent[key]
        label = ".".join(str(p) for p in path)
        total = totals.setdefault(label, len(value))

        def render(n: int, path=path, value=value, parent=parent, label=label, total=total) -> str:
            parent[path[-1]] = value[:n] if isinstance(value, list) else _cut(value, n)
            kept, unit = (n, "items") if isinstance(value, list) else (_shown_len(value, n), "characters")
            notes[label] = (f"{earlier[label]}; of those, the first {kept} {unit}" if label in earlier
                            else f"the first {kept} of {total} {unit}")
            return _dump(dict(data, shortened=notes), indent)
        least = 1 if isinstance(value, list) else 20
        if len(render(least)) <= max_chars:
            _largest_fitting_from(least, len(value) - 1, render, max_chars)
            return _dump(dict(data, shortened=notes), indent)
        render(len(value) // 2)
    return None


def _largest_fitting_from(lo: int, hi: int, render, max_chars: int) -> None:
    """``render(n)`` last for the largest ``n`` in lo..hi whose text fits (``render(lo)`` does)."""
    render(_bisect(lo, hi, lambda n: len(render(n)) <= max_chars))


def _largest(node: Any, path: tuple) -> tuple[tuple, Any] | None:
    """The path and value of the longest list (of 2+ items) or text (of 40+ characters) under ``node``,
    by the length of its JSON (sizes summed bottom-up in one walk)."""
    best: list = [None, -1]

    def size(value: Any, at: tuple) -> int:
        if isinstance(value, dict):
            n = 2 + sum(len(json.dumps(k, ensure_ascii=False)) + 2 + size(v, at + (k,)) for k, v in value.items())
        elif isinstance(value, list):
            n = 2 + sum(1 + size(v, at + (i,)) for i, v in enumerate(value))
        else:
            n = len(json.dumps(value, ensure_ascii=False))
        if at and (isinstance(value, list) and len(value) > 1 or isinstance(value, str) and len(value) >= 40) \
                and n > best[1]:
            best[0], best[1] = (at, value), n
        return n
    size(node, path)
    return best[0]
