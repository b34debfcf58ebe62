"""Rendered Wikipedia HTML (as stored in Kiwix ZIM archives) -> ``Page``.

Uses the stdlib ``html.parser`` to build a small element tree, then reads the parts a
reader sees: paragraphs before the first h2 as lead, h2/h3 sections, the
``table.infobox`` rows (th -> td, grouped under their header rows the way settlement
infoboxes nest "Area / • Total"), article links, and ``span.geo`` coordinates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

from pipeline.snapshot.page import InfoboxField, Page, Section, canonical_title, links_with_anchors, title_to_url
from pipeline.snapshot.values import classify
from pipeline.snapshot.wikitext import first_sentence

_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
         "track", "wbr"}
_DROP = {"script", "style", "noscript", "template", "svg", "math", "figure", "audio", "video", "button"}
_DROP_CLASSES = {"mw-editsection", "reference", "mw-ref", "noprint", "navbox", "navbox-inner", "vertical-navbox",
                 "metadata", "mw-empty-elt", "hatnote", "reflist", "references", "mw-references-wrap",
                 "sistersitebox", "thumb", "thumbinner", "gallery", "toc", "catlinks", "printfooter",
                 "mw-jump-link", "ambox", "mbox-small", "portal", "sidebar", "shortdescription"}
_BLOCKS = {"p", "li", "dd", "dt", "blockquote", "pre"}
_SKIP_SECTIONS = {"references", "notes", "footnotes", "citations", "sources", "external links",
                  "notes and references", "references and notes", "bibliography", "further reading"}
_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list = field(default_factory=list)
    parent: Element | None = None

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def hidden(self) -> bool:
        return "display:none" in self.attrs.get("style", "").replace(" ", "").lower()

    def iter(self):
        yield self
        for c in self.children:
            if isinstance(c, Element):
                yield from c.iter()

    def find_all(self, pred):
        return [e for e in self.iter() if pred(e)]

    def find(self, pred):
        for e in self.iter():
            if pred(e):
                return e
        return None


class _TreeBuilder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        el = Element(tag, {k: (v or "") for k, v in attrs}, parent=self.stack[-1])
        self.stack[-1].children.append(el)
        if tag not in _VOID:
            self.stack.append(el)

    def handle_startendtag(self, tag, attrs):
        el = Element(tag, {k: (v or "") for k, v in attrs}, parent=self.stack[-1])
        self.stack[-1].children.append(el)

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].children.append(data)


def parse_html(html: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(html)
    builder.close()
    return builder.root


def _dropped(el: Element) -> bool:
    return el.tag in _DROP or bool(el.classes & _DROP_CLASSES) or (el.tag == "sup" and "reference" in el.classes)


def text_of(el, *, keep_hidden: bool = False, sep_blocks: str = "\n") -> str:
    """Visible text of an element: drops references, edit links, hidden spans; <br> and list items break lines."""
    out: list[str] = []

    def walk(node):
        if isinstance(node, str):
            out.append(node)
            return
        if _dropped(node) or (node.hidden() and not keep_hidden):
            return
        if node.tag == "br":
            out.append("\n")
            return
        block = node.tag in _BLOCKS or node.tag in ("div", "ul", "ol", "tr", "table")
        if block:
            out.append(sep_blocks)
        for c in node.children:
            walk(c)
        if block:
            out.append(sep_blocks)

    walk(el)
    return "".join(out)


def _clean(text: str, joiner: str = " ") -> str:
    lines = [" ".join(x.split()) for x in text.replace("\u00a0", " ").split("\n")]
    text = joiner.join(x for x in lines if x)
    text = re.sub(r"\s+([,.;:!?])(?=\s|$)", r"\1", text)
    text = re.sub(r"\(\s*\)", "", text)
    return " ".join(text.split()) if joiner == " " else text


def _slug(label: str) -> str:
    s = re.sub(r"[^\w]+", "_", label.strip().lower()).strip("_")
    return s or "field"


def _article_target(href: str) -> str | None:
    """Title of an internal article link (ZIM-relative or /wiki/ URL), None for anything else."""
    if not href or href.startswith("#"):
        return None
    parts = urlsplit(href)
    if parts.scheme or parts.netloc:
        if parts.netloc.endswith("wikipedia.org") and parts.path.startswith("/wiki/"):
            path = parts.path[len("/wiki/"):]
        else:
            return None
    else:
        path = parts.path
        while path.startswith(("../", "./")):
            path = path.split("/", 1)[1]
        path = path.removeprefix("A/")
        if path.startswith(("-/", "I/", "M/", "X/", "_/")) or "/" in path.split(":")[0] and path.startswith("-"):
            return None
    title = unquote(path).replace("_", " ")
    if not title or re.match(r"^(File|Image|Category|Template|Special|Help|Wikipedia|Portal|Talk|User):", title):
        return None
    if re.search(r"\.(png|jpe?g|svg|gif|css|js|webp)$", title, re.IGNORECASE):
        return None
    return canonical_title(title)


def _parse_geo(root: Element) -> tuple[float, float] | None:
    geo = root.find(lambda e: "geo" in e.classes)
    if geo is not None:
        nums = re.findall(r"-?\d+(?:\.\d+)?", text_of(geo, keep_hidden=True))
        if len(nums) >= 2:
            lat, lon = float(nums[0]), float(nums[1])
            if -90 <= lat <= 90 and -180 <= lon <= 180:
                return round(lat, 6), round(lon, 6)
    lat_el = root.find(lambda e: "latitude" in e.classes)
    lon_el = root.find(lambda e: "longitude" in e.classes)
    if lat_el is not None and lon_el is not None:
        def dms(text):
            nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", text)]
            if not nums:
                return None
            v = nums[0] + (nums[1] / 60 if len(nums) > 1 else 0) + (nums[2] / 3600 if len(nums) > 2 else 0)
            return -v if re.search(r"[SW]\s*$", text.strip()) else v
        lat, lon = dms(text_of(lat_el)), dms(text_of(lon_el))
        if lat is not None and lon is not None and -90 <= lat <= 90 and -180 <= lon <= 180:
            return round(lat, 6), round(lon, 6)
    return None


def _infobox_fields(table: Element) -> list[InfoboxField]:
    fields: list[InfoboxField] = []
    group = ""
    used: dict[str, int] = {}
    for tr in table.find_all(lambda e: e.tag == "tr"):
        cells = [c for c in tr.children if isinstance(c, Element) and c.tag in ("th", "td")]
        ths = [c for c in cells if c.tag == "th"]
        tds = [c for c in cells if c.tag == "td"]
        if ths and not tds:
            header = _clean(text_of(ths[0]))
            group = header if header and len(header) < 60 else ""
            continue
        if not ths or not tds:
            continue
        label = _clean(text_of(ths[0]))
        if not label:
            continue
        bullet = label.startswith(("•", "·", "-"))
        label = label.lstrip("•·- ").strip()
        if bullet and group:
            label = f"{re.sub(r'[(].*?[)]', ' ', group).strip()} {label}"
        elif "mergedtoprow" in tr.classes:
            group = label
        td = tds[0]
        hidden_iso = None
        for e in td.iter():
            if e.hidden() or e.classes & {"bday", "dday", "published", "updated"}:
                t = text_of(e, keep_hidden=True).strip("() \n")
                if _ISO_RE.match(t):
                    hidden_iso = t
                    break
        text = _clean(text_of(td), joiner=", ")
        text = _clean(re.sub(r",\s*,", ",", text))
        if not text:
            continue
        name = _slug(label)
        if name in used:
            used[name] += 1
            name = f"{name}_{used[name]}"
        else:
            used[name] = 1
        date_hint = hidden_iso
        fields.append(classify(name, text, date_hint=date_hint, label=label))
    return fields


def _first_sentence(text: str) -> str:
    return first_sentence(text)


def page_from_html(title: str, html: str, *, source: str = "", revision_ts: str | None = None) -> Page:
    """Parse one rendered article. Raises ValueError when it holds no text."""
    title = canonical_title(title or "")
    if not title:
        raise ValueError("missing title")
    root = parse_html(html)
    content = root.find(lambda e: e.attrs.get("id") == "mw-content-text") or \
        root.find(lambda e: e.tag == "body") or root
    infobox = content.find(lambda e: e.tag == "table" and any(c.startswith("infobox") for c in e.classes))
    fields = _infobox_fields(infobox) if infobox is not None else []
    infobox_type = None
    if infobox is not None:
        kinds = sorted(c for c in infobox.classes if c not in ("infobox", "plainlist", "plainlinks", "nowrap"))
        infobox_type = kinds[0].replace("infobox_", "").replace("_", " ") if kinds else "generic"
        infobox_type = {"vcard": "person", "geography": "settlement"}.get(infobox_type, infobox_type)

    lead_parts: list[str] = []
    sections: list[Section] = []
    current: Section | None = None

    def visit(el: Element, in_table: bool):
        nonlocal current
        for c in el.children:
            if not isinstance(c, Element) or _dropped(c) or c.hidden():
                continue
            if c.tag in ("h2", "h3"):
                heading = _clean(text_of(c))
                current = Section(title=heading, level=int(c.tag[1]), text="")
                sections.append(current)
                continue
            if c.tag in ("h4", "h5", "h6"):
                heading = _clean(text_of(c))
                if current is not None and heading:
                    current.text = (current.text + "\n\n" + heading).strip()
                continue
            if c.tag == "table":
                continue  # infobox and data tables are not prose
            if c.tag in ("p", "blockquote", "pre") or (c.tag in ("ul", "ol", "dl") and current is not None):
                text = _clean(text_of(c), joiner="\n") if c.tag in ("ul", "ol", "dl") else _clean(text_of(c))
                if not text:
                    continue
                if current is None:
                    lead_parts.append(text)
                else:
                    current.text = (current.text + "\n\n" + text).strip()
                continue
            visit(c, in_table)

    visit(content, False)
    if not lead_parts and not sections and not fields:
        raise ValueError("no article text")
    sections = [s for s in sections if s.text and s.title.lower() not in _SKIP_SECTIONS]
    lead = "\n\n".join(lead_parts)

    targets: list[str] = []
    anchors: list[tuple[str, str]] = []
    for a in content.find_all(lambda e: e.tag == "a" and "href" in e.attrs):
        if any(_dropped(p) for p in _ancestors(a)):
            continue
        target = _article_target(a.attrs["href"])
        if target:
            targets.append(target)
            anchors.append((target, _clean(text_of(a))))
    links = links_with_anchors(title, targets, anchors)

    return Page(
        title=title, url=title_to_url(title), description=_first_sentence(lead), lead=lead,
        sections=sections, links=links, infobox_type=infobox_type, infobox=fields,
        coords=_parse_geo(content), categories=[], revision_ts=revision_ts, source=source,
    )


def _ancestors(el: Element):
    p = el.parent
    while p is not None:
        yield p
        p = p.parent


def revision_date(html: str) -> str | None:
    """mwoffliner writes "Last edited on YYYY-MM-DD" in the footer link to the source revision."""
    m = re.search(r'title="Last edited on (\d{4}-\d{2}-\d{2})', html)
    return m.group(1) if m else None
