"""Wikitext -> ``Page`` with mwparserfromhell.

The renderer walks the parse tree itself (rather than ``strip_code``) so that the common
inline templates keep the text a reader sees ({{convert|630|km2}} -> "630 km2",
{{birth date|1930|9|23}} -> "September 23, 1930", {{flag|Canada}} -> "Canada") and so
that the dates, coordinates and quantities those templates carry reach the infobox
normaliser as hints instead of being re-guessed from text.
"""
from __future__ import annotations

import functools
import gc
import re
from dataclasses import dataclass, field

import mwparserfromhell
from mwparserfromhell.nodes import Argument, Comment, ExternalLink, Heading, HTMLEntity, Tag, Template, Text, Wikilink
from mwparserfromhell.parser import CTokenizer, ParserError, tokens
from mwparserfromhell.wikicode import Wikicode

from pipeline.snapshot import treebuilder
from pipeline.snapshot.page import InfoboxField, Page, Section, canonical_title, links_with_anchors, title_to_url
from pipeline.snapshot.values import FT_TO_M, MI_TO_KM, SQ_MI_TO_KM2, classify, iso_date, parse_date, parse_number

REDIRECT_RE = re.compile(r"^\s*#\s*REDIRECT\s*:?\s*\[\[([^\]|]+)(?:\|[^\]]*)?\]\]", re.IGNORECASE)

# Link prefixes that are not articles: namespaces (English and a few common German ones seen in
# test data) and interlanguage prefixes (two or three lowercase letters, handled by regex).
_NON_ARTICLE_NS = {
    "file", "image", "media", "category", "template", "wikipedia", "wp", "help", "portal", "user",
    "talk", "user talk", "special", "module", "draft", "mediawiki", "book", "timedtext", "wikt",
    "wiktionary", "commons", "s", "q", "n", "b", "v", "voy", "species", "meta", "mw", "wikisource",
    "wikiquote", "wikinews", "wikibooks", "wikiversity", "wikivoyage", "wikidata", "d", "w",
    "datei", "bild", "kategorie", "vorlage", "doi", "arxiv", "google", "imdbname", "imdbtitle",
}
_CATEGORY_NS = {"category", "kategorie"}
_FILE_NS = {"file", "image", "media", "datei", "bild"}
_SKIP_SECTIONS = {"references", "notes", "footnotes", "citations", "sources", "external links",
                  "notes and references", "references and notes", "bibliography", "further reading",
                  "einzelnachweise", "weblinks", "literatur"}
_MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December"]

# {{convert}} unit codes -> (display, canonical unit, factor)
_CONVERT_UNITS = {
    "km2": ("km2", "km2", 1.0), "sqkm": ("km2", "km2", 1.0), "sqmi": ("sq mi", "km2", SQ_MI_TO_KM2),
    "mi2": ("sq mi", "km2", SQ_MI_TO_KM2), "ha": ("ha", "km2", 0.01), "acre": ("acres", "km2", 0.0040468564224),
    "m2": ("m2", "km2", 1e-6), "sqft": ("sq ft", "km2", 9.290304e-8),
    "km": ("km", "km", 1.0), "mi": ("mi", "km", MI_TO_KM), "m": ("m", "m", 1.0), "ft": ("ft", "m", FT_TO_M),
    "cm": ("cm", "m", 0.01), "in": ("in", "m", 0.0254), "mm": ("mm", "mm", 1.0), "yd": ("yd", "m", 0.9144),
    "kg": ("kg", "kg", 1.0), "lb": ("lb", "kg", 0.45359237), "t": ("t", "kg", 1000.0),
    "C": ("°C", "degC", 1.0), "°C": ("°C", "degC", 1.0), "km/h": ("km/h", "km/h", 1.0),
    "mph": ("mph", "km/h", MI_TO_KM), "nmi": ("nmi", "km", 1.852), "L": ("L", "L", 1.0),
}


if CTokenizer is not None:
    _Tokenizer = CTokenizer
else:  # pragma: no cover - the C extension is missing: mwparserfromhell's own fallback
    from mwparserfromhell.parser.tokenizer import Tokenizer as _Tokenizer


class WikitextError(ValueError):
    """A page's wikitext could not be turned into a page (recorded as a skipped page)."""


@dataclass
class _Context:
    """What the renderer learnt from templates while producing text."""
    dates: list[str] = field(default_factory=list)
    coords: list[tuple[float, float, bool]] = field(default_factory=list)  # (lat, lon, is_title)
    quantities: list[tuple[float, str | None]] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    anchors: list[tuple[str, str]] = field(default_factory=list)   # (target, the text the link shows)
    categories: list[str] = field(default_factory=list)
    short_description: str | None = None
    prose: bool = True  # prose drops tables; infobox values keep list items as lines


def is_redirect(text: str) -> str | None:
    """The redirect target of a ``#REDIRECT [[X]]`` page, else None."""
    m = REDIRECT_RE.match(text or "")
    return canonical_title(m.group(1).split("#")[0]) if m and m.group(1).split("#")[0].strip() else None


def template_name(t: Template) -> str:
    return _normal_template_name(t.name.strip_code() if isinstance(t.name, Wikicode) else str(t.name))


def _normal_template_name(name: str) -> str:
    name = " ".join(name.replace("_", " ").split()).strip()
    if name.lower().startswith("template:"):
        name = name[9:].strip()
    return name


def _positional(t: Template) -> list:
    """Positional parameters in order (1, 2, ...)."""
    out = {}
    for p in t.params:
        key = str(p.name).strip()
        if key.isdigit():
            out[int(key)] = p.value
    return [out[k] for k in sorted(out)]


def _named(t: Template, *names: str):
    for n in names:
        if t.has(n):
            return t.get(n).value
    return None


def _plain(value) -> str:
    return " ".join(value.strip_code().split()) if value is not None else ""


def _date_text(iso: str) -> str:
    parts = iso.split("-")
    if len(parts) == 3:
        return f"{_MONTH_NAMES[int(parts[1]) - 1]} {int(parts[2])}, {parts[0]}"
    if len(parts) == 2:
        return f"{_MONTH_NAMES[int(parts[1]) - 1]} {parts[0]}"
    return parts[0]


def _numeric(value) -> float | None:
    text = _plain(value).replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def _parse_coord(params: list[str]) -> tuple[float, float] | None:
    """{{coord}} positional parameters: decimal (lat|lon) or d|m|s|N|d|m|s|E with 1-3 numbers each."""
    vals = [p.strip() for p in params if p.strip() and ":" not in p and "=" not in p]
    groups: list[list[float]] = [[]]
    hemis: list[str] = []
    for v in vals:
        u = v.upper()
        if u in ("N", "S", "E", "W"):
            hemis.append(u)
            groups.append([])
            continue
        try:
            groups[-1].append(float(v.replace("−", "-")))
        except ValueError:
            break
    groups = [g for g in groups if g]
    if len(hemis) >= 2 and len(groups) >= 2:
        def dms(g, h):
            x = g[0] + (g[1] / 60 if len(g) > 1 else 0) + (g[2] / 3600 if len(g) > 2 else 0)
            return -x if h in ("S", "W") else x
        lat, lon = dms(groups[0], hemis[0]), dms(groups[1], hemis[1])
    elif not hemis and groups and len(groups[0]) >= 2:
        lat, lon = groups[0][0], groups[0][1]
    else:
        return None
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        return None
    return round(lat, 6), round(lon, 6)


def _coord_text(lat: float, lon: float) -> str:
    return f"{abs(lat):.4f}°{'N' if lat >= 0 else 'S'} {abs(lon):.4f}°{'E' if lon >= 0 else 'W'}"


# Tags rendered as nothing whatever they hold, and tags whose contents are rendered by strip_code().
_SILENT_TAGS = frozenset({
    "ref", "references", "gallery", "timeline", "imagemap", "score", "graph", "templatedata",
    "indicator", "mapframe", "maplink", "noinclude", "includeonly", "syntaxhighlight",
    "source", "hiero", "chem", "ce", "categorytree", "inputbox", "style", "script"})
_STRIPPED_TAGS = frozenset({"nowiki", "pre", "math", "code", "tt"})
_PARSER_FUNCTIONS = ("formatnum", "lc", "uc", "lcfirst", "ucfirst", "padleft", "padright")


def _link_target(title: str) -> tuple[bool, str, str]:
    """A wikilink's title as (leading colon?, target without it, lower-case namespace prefix or "")."""
    target = title.strip()
    leading_colon = target.startswith(":")
    target = target.lstrip(":").strip()
    prefix = target.split(":", 1)[0].strip().lower() if ":" in target else ""
    return leading_colon, target, prefix


def _is_foreign(prefix: str) -> bool:
    """A namespace or interlanguage prefix: the link is no article link."""
    return bool(prefix) and (prefix in _NON_ARTICLE_NS or re.fullmatch(r"[a-z]{2,3}(-[a-z]+)?", prefix) is not None)


def _silent_link(title: str) -> bool:
    """A wikilink with this title renders as "" and records nothing (a file, an interlanguage link)."""
    leading_colon, _, prefix = _link_target(title)
    if prefix in _CATEGORY_NS and not leading_colon:
        return False
    return prefix in _FILE_NS or (_is_foreign(prefix) and not leading_colon)


class Renderer:
    """Plain text from a parse tree, with template handlers for the common inline templates."""

    def __init__(self, ctx: _Context):
        self.ctx = ctx

    def render(self, code) -> str:
        if code is None:
            return ""
        if isinstance(code, str):
            code = mwparserfromhell.parse(code)
        return "".join(self.node(n) for n in code.nodes)

    def node(self, n) -> str:
        if isinstance(n, Text):
            return str(n.value)
        if isinstance(n, Wikilink):
            return self.wikilink(n)
        if isinstance(n, Template):
            return self.template(n)
        if isinstance(n, Tag):
            return self.tag(n)
        if isinstance(n, HTMLEntity):
            try:
                return n.normalize()
            except (ValueError, OverflowError):
                return ""
        if isinstance(n, ExternalLink):
            return self.render(n.title) if n.title is not None else ""
        if isinstance(n, Heading):
            return "\n" + self.render(n.title).strip() + "\n"
        if isinstance(n, (Comment, Argument)):
            return self.render(n.default) if isinstance(n, Argument) and n.default is not None else ""
        return ""

    def wikilink(self, n: Wikilink) -> str:
        leading_colon, target, prefix = _link_target(str(n.title))
        if prefix in _CATEGORY_NS and not leading_colon:
            name = canonical_title(target.split(":", 1)[1].split("|")[0])
            if name and name not in self.ctx.categories:
                self.ctx.categories.append(name)
            return ""
        if prefix in _FILE_NS:
            return ""
        if _is_foreign(prefix):
            return self.render(n.text) if (leading_colon and n.text is not None) else ""
        page = canonical_title(target.split("#")[0])
        if page:
            self.ctx.links.append(page)
        shown = self.render(n.text) if n.text is not None else (target.split("#")[0] if page else target.lstrip("#"))
        if page:
            self.ctx.anchors.append((page, " ".join(shown.split())))
        return shown

    def tag(self, n: Tag) -> str:
        name = str(n.tag).lower().strip()
        if name in _SILENT_TAGS:
            return ""
        if name == "br":
            return "\n"
        if name in ("li", "dt", "dd") and n.wiki_markup:
            return ""
        if name == "hr":
            return "\n"
        if name == "table":
            return "" if self.ctx.prose else self.render(n.contents)
        if name in _STRIPPED_TAGS:
            return n.contents.strip_code() if n.contents is not None else ""
        if n.contents is None:
            return ""
        inner = self.render(n.contents)
        if name == "sup" and re.fullmatch(r"\s*[a-zA-Z]{1,2}\s*|\s*\[\w+\]\s*", inner):
            return ""  # footnote markers such as <sup>a</sup>
        if name in ("p", "div", "blockquote", "center", "poem", "ul", "ol", "li"):
            return "\n" + inner + "\n"
        return inner

    # ---- templates -------------------------------------------------------------------------
    def template(self, t: Template) -> str:
        name = template_name(t)
        key = name.lower()
        if ":" in key and not key.startswith("#"):
            fn, _, arg = name.partition(":")
            if fn.strip().lower() in _PARSER_FUNCTIONS:
                return arg.strip()
        try:
            handler = _handler(key)
            return handler(self, t) if handler else ""
        except (IndexError, ValueError, KeyError, ZeroDivisionError, OverflowError):
            return ""

    def pos(self, t: Template, i: int) -> str:
        p = _positional(t)
        return self.render(p[i]).strip() if len(p) > i else ""

    def items(self, t: Template) -> str:
        return "\n".join(x for x in (self.render(v).strip() for v in _positional(t)) if x)


def _h_first(r: Renderer, t: Template) -> str:
    return r.pos(t, 0)


def _h_second(r: Renderer, t: Template) -> str:
    return r.pos(t, 1) or r.pos(t, 0)


def _h_last(r: Renderer, t: Template) -> str:
    p = _positional(t)
    return r.render(p[-1]).strip() if p else ""


def _h_empty(r: Renderer, t: Template) -> str:
    return ""


def _h_list(r: Renderer, t: Template) -> str:
    return r.items(t)


def _h_short_description(r: Renderer, t: Template) -> str:
    text = _plain(_positional(t)[0]) if _positional(t) else ""
    if text and text.lower() != "none" and r.ctx.short_description is None:
        r.ctx.short_description = text
    return ""


def _h_date(r: Renderer, t: Template) -> str:
    p = [_plain(v) for v in _positional(t)]
    if not p:
        return ""
    iso = iso_date(*(p + [None, None])[:3]) if re.fullmatch(r"\d{1,4}", p[0]) else parse_date(p[0])
    if iso is None:
        return p[0]
    r.ctx.dates.append(iso)
    return _date_text(iso)


def _h_birth_year_and_age(r: Renderer, t: Template) -> str:
    p = [_plain(v) for v in _positional(t)]
    iso = iso_date(p[0], p[1] if len(p) > 1 else None) if p else None
    if iso:
        r.ctx.dates.append(iso)
        return _date_text(iso)
    return ""


def _h_coord(r: Renderer, t: Template) -> str:
    params = [_plain(v) for v in _positional(t)]
    latlon = _parse_coord(params)
    if latlon is None:
        return ""
    display = _plain(_named(t, "display")).lower()
    is_title = "title" in display or display == "t" or "ti" == display
    r.ctx.coords.append((latlon[0], latlon[1], is_title))
    if is_title and "inline" not in display:
        return ""
    return _coord_text(*latlon)


def _h_convert(r: Renderer, t: Template) -> str:
    p = [_plain(v) for v in _positional(t)]
    if not p:
        return ""
    value = parse_number(p[0])
    if len(p) >= 4 and p[1] in ("-", "–", "to", "and", "or", "x", "×", "by", "+/-", "±"):
        unit_code, shown = p[3], f"{p[0]} {p[1]} {p[2]}".replace(" - ", "–")
    else:
        unit_code, shown = (p[1] if len(p) > 1 else ""), p[0]
    display, unit, factor = _CONVERT_UNITS.get(unit_code, (unit_code, None, 1.0))
    total = value
    if unit_code == "ft" and len(p) >= 4 and p[3] == "in" and value is not None:
        inches = parse_number(p[2])
        shown, total = f"{p[0]} ft {p[2]}", value + (inches or 0) / 12
        display = "in"
    if total is not None and unit is not None:
        r.ctx.quantities.append((total * factor, unit))
    return f"{shown} {display}".strip()


def _h_height(r: Renderer, t: Template) -> str:
    for key, (display, unit, factor) in (("m", ("m", "m", 1.0)), ("cm", ("cm", "m", 0.01)),
                                         ("ft", ("ft", "m", FT_TO_M))):
        v = _named(t, key)
        if v is not None and _numeric(v) is not None:
            inches = _numeric(_named(t, "in")) if key == "ft" and _named(t, "in") is not None else 0
            r.ctx.quantities.append((_numeric(v) * factor + (inches or 0) * 0.0254, unit))
            return f"{_plain(v)} {display}" + (f" {_plain(_named(t, 'in'))} in" if inches else "")
    return ""


def _h_url(r: Renderer, t: Template) -> str:
    return r.pos(t, 1) or r.pos(t, 0)


def _h_flag(r: Renderer, t: Template) -> str:
    return r.pos(t, 0)


def _h_circa(r: Renderer, t: Template) -> str:
    return ("c. " + r.pos(t, 0)).strip()


def _h_as_of(r: Renderer, t: Template) -> str:
    p = [_plain(v) for v in _positional(t)]
    iso = iso_date(*(p + [None, None])[:3]) if p else None
    return f"As of {_date_text(iso)}" if iso else ""


def _h_currency(r: Renderer, t: Template) -> str:
    amount = r.pos(t, 0)
    code = r.pos(t, 1) or "USD"
    return f"{amount} {code}".strip()


def _h_usd(r: Renderer, t: Template) -> str:
    return "US$" + r.pos(t, 0)


def _h_val(r: Renderer, t: Template) -> str:
    unit = _plain(_named(t, "u", "ul"))
    return (r.pos(t, 0) + (" " + unit if unit else "")).strip()


def _h_frac(r: Renderer, t: Template) -> str:
    p = [r.pos(t, i) for i in range(3)]
    p = [x for x in p if x]
    if len(p) == 3:
        return f"{p[0]} {p[1]}/{p[2]}"
    if len(p) == 2:
        return f"{p[0]}/{p[1]}"
    return f"1/{p[0]}" if p else ""


def _h_lang(r: Renderer, t: Template) -> str:
    return r.pos(t, 1)


def _h_collapsible(r: Renderer, t: Template) -> str:
    return r.items(t)


def _h_marriage(r: Renderer, t: Template) -> str:
    name = r.pos(t, 0)
    years = "–".join(x for x in (_plain(_positional(t)[1]) if len(_positional(t)) > 1 else "",
                                 _plain(_positional(t)[2]) if len(_positional(t)) > 2 else "") if x)
    return f"{name} ({years})" if years else name


def _const(text: str):
    return lambda r, t: text


_HANDLERS = {
    "short description": _h_short_description,
    # dates
    **{k: _h_date for k in ("birth date", "birth date and age", "bda", "dob", "birth-date", "birth date and age2",
                            "death date", "death date and age", "dda", "death-date", "start date", "end date",
                            "start date and age", "end date and age", "film date", "release date", "date",
                            "start", "end", "birthdate and age", "deathdate and age", "date and age",
                            "opening date", "founded date")},
    **{k: _h_birth_year_and_age for k in ("birth year and age", "death year and age", "birth year", "death year")},
    "coord": _h_coord, "coords": _h_coord, "coor": _h_coord,
    "convert": _h_convert, "cvt": _h_convert, "convinfobox": _h_convert,
    "height": _h_height,
    # wrappers that show their first parameter
    **{k: _h_first for k in ("nowrap", "nobr", "no wrap", "small", "big", "smaller", "larger", "nobold", "noitalic",
                             "abbr", "abbrlink", "ill", "interlanguage link", "interlanguage link multi", "vanchor",
                             "visible anchor", "keypress", "code", "tooltip", "sic", "center", "centre", "text",
                             "nowrap begin", "plural", "lang-en", "cite title", "nihongo", "script", "bold",
                             "italic", "em", "strong", "mvar", "var", "math", "tone", "hover title", "nbsp-join",
                             "wikt-lang", "angle bracket", "linktext", "inflation-fn", "resize", "serif",
                             "flagicon image", "pslink", "player", "sortname", "nts", "ntsh", "formatnum",
                             "official website", "official url", "official", "website", "webarchive link",
                             "nowrap end", "sup", "sub", "ruby", "ipa", "post-nominals")},
    **{k: _h_second for k in ("lang", "native name", "nativename", "native phrase", "sort", "sortname2",
                              "transl", "transliteration", "ill2", "audio", "hidden", "font color", "color",
                              "colour", "highlight", "tooltip2", "sronly")},
    "sortname": lambda r, t: (r.pos(t, 0) + " " + r.pos(t, 1)).strip(),
    **{k: _h_flag for k in ("flag", "flagcountry", "flagu", "flag country", "country", "flagcountry2", "flagathlete",
                            "flag link", "flaglink")},
    **{k: _h_empty for k in ("flagicon", "flagdeco", "flag icon", "increase", "decrease", "steady", "up", "down",
                             "efn", "refn", "sfn", "sfnp", "r", "rp", "cn", "citation needed", "clarify", "when",
                             "dead link", "by whom", "who", "which", "according to whom", "update needed",
                             "ipac-en", "ipa-en", "respell", "pronunciation", "anchor", "clear", "-", "reflist",
                             "main", "see also", "further", "about", "other uses", "distinguish", "redirect",
                             "use dmy dates", "use mdy dates", "good article", "featured article", "toc",
                             "portal", "commons category", "authority control", "coord missing", "infobox",
                             "efn-ua", "efn-lr", "notetag", "ref label", "note label", "cref", "nbsp-",
                             "pp-semi-indef", "pp-move-indef", "italic title", "dmy", "mdy")},
    **{k: _h_list for k in ("plainlist", "plain list", "flatlist", "flat list", "ubl", "unbulleted list",
                            "hlist", "bulleted list", "blist", "bull list", "flowlist", "cslist", "enum",
                            "ordered list", "collapsible list", "unbulleted", "endplainlist", "startplainlist",
                            "indented plainlist", "br separated entries", "comma separated entries",
                            "pagelist", "tree list", "small caps")},
    "url": _h_url, "official url": _h_url,
    "circa": _h_circa, "c.": _h_circa, "ca.": _h_circa,
    "as of": _h_as_of,
    "currency": _h_currency, "us$": _h_usd, "usd": _h_usd,
    "val": _h_val, "frac": _h_frac, "sfrac": _h_frac, "fraction": _h_frac,
    "marriage": _h_marriage, "married": _h_marriage,
    "ndash": _const("–"), "snd": _const(" – "), "spaced ndash": _const(" – "), "mdash": _const("—"),
    "spaced mdash": _const(" — "), "nbsp": _const(" "), "!": _const("|"), "·": _const(" · "),
    "dot": _const(" · "), "middot": _const(" · "), "bull": _const(" • "), "•": _const(" • "),
    "spaces": _const(" "), "sp": _const(" "), "pipe": _const("|"), "=": _const("="), "en dash": _const("–"),
    "em dash": _const("—"), "-wrap": _const(""), "space": _const(" "), "thinsp": _const(" "),
}
_PREFIX_HANDLERS = [
    ("lang-", lambda r, t: r.pos(t, 0)),
    ("cite", _h_empty), ("citation", _h_empty), ("ipa", _h_empty), ("infobox", _h_empty),
    ("use ", _h_empty), ("pp-", _h_empty), ("wayback", _h_empty), ("webarchive", _h_empty),
]


def _handler(key: str):
    """The handler of a template by its lower-case name; None: the template renders as nothing."""
    handler = _HANDLERS.get(key)
    if handler is None:
        for prefix, h in _PREFIX_HANDLERS:
            if key.startswith(prefix):
                return h
    return handler


def _renders_nothing(name: str) -> bool:
    """A template of this (normalised) name renders as "" without looking at its parameters."""
    key = name.lower()
    if ":" in key and not key.startswith("#") and key.partition(":")[0].strip() in _PARSER_FUNCTIONS:
        return False
    return _handler(key) in (None, _h_empty)


# ---- page assembly -------------------------------------------------------------------------------

_BULLET_RE = re.compile(r"^[*#:;]+\s*")
_OPEN_DEBRIS_RE = re.compile(r"\(\s*[,;]+[\s,;]*")
_CLOSE_DEBRIS_RE = re.compile(r"[\s,;]*[,;]\s*\)")
_EMPTY_PARENS_RE = re.compile(r"\(\s*\)")
_SPACE_PUNCT_RE = re.compile(r"\s+([,.;:!?])(?=\s|$|[)\]\"'])")
_SPACE_CLOSE_RE = re.compile(r"\s+\)")
_OPEN_SPACE_RE = re.compile(r"([(])\s+")
_QUOTES_RE = re.compile(r"''+")
_PARAGRAPH_RE = re.compile(r"\n\s*\n")
_SPACE_BEFORE_PUNCT_RE = re.compile(r" [,.;:!?]")   # where _SPACE_PUNCT_RE can match in a collapsed line


def _tidy_text(text: str, *, lines_sep: str | None = None) -> str:
    """Collapse whitespace, drop list bullets and leftovers of removed templates ("( ; )")."""
    lines = []
    for raw in text.replace("\u00a0", " ").split("\n"):
        line = " ".join(raw.split())
        if not line:
            continue
        collapsed = line
        # each substitution only where its pattern can match (they add no bracket nor quote, nor any
        # whitespace: the line's only whitespace is " ", which \s+ before punctuation must end with)
        if line[0] in "*#:;":
            line = _BULLET_RE.sub("", line)
        if "(" in line:
            line = _OPEN_DEBRIS_RE.sub("(", line)
        if ")" in line:
            line = _CLOSE_DEBRIS_RE.sub(")", line)
        if "(" in line:
            line = _EMPTY_PARENS_RE.sub("", line)
        if _SPACE_BEFORE_PUNCT_RE.search(line):
            line = _SPACE_PUNCT_RE.sub(r"\1", line)
        if ")" in line:
            line = _SPACE_CLOSE_RE.sub(")", line)
        if "(" in line:
            line = _OPEN_SPACE_RE.sub(r"\1", line)
        if "''" in line:
            line = _QUOTES_RE.sub("", line)
        if line is not collapsed:       # changed (re's sub returns the very string when it replaces nothing)
            line = " ".join(line.split())
        if line:
            lines.append(line)
    if lines_sep is not None:
        return lines_sep.join(lines)
    # prose: paragraphs separated by blank lines in the source become "\n\n"; keep single lines
    return "\n".join(lines)


def _prose(code: Wikicode, ctx: _Context) -> str:
    text = Renderer(ctx).render(code)
    paras = [p for p in (_tidy_text(x) for x in _PARAGRAPH_RE.split(text)) if p]
    return "\n\n".join(paras)


def first_sentence(text: str, limit: int = 300) -> str:
    """The lead's first sentence (used as description when a page has no short description)."""
    text = " ".join(text.split())
    m = re.search(r"(?<![A-Z])(?<!\b[A-Z][a-z])(?<!\bSt)(?<!\bDr)(?<!\bMr)(?<!\bMrs)(?<!\bJr)(?<!\bSr)"
                  r"(?<!\bc)(?<!\bca)(?<!\bNo)[.!?](?=\s+[A-Z\"'(])", text)
    sentence = text[: m.start() + 1] if m else text
    if len(sentence) > limit:
        cut = sentence[:limit].rsplit(" ", 1)[0]
        sentence = cut + "…"
    return sentence


# ---- parsing -----------------------------------------------------------------------------------
#
# mwparserfromhell's tokenizer is C; the tree builder is Python and, on all of an article's tokens,
# costs ~1.2x as much as the tokenizer (``treebuilder``; mwparserfromhell's own ~4.5x). Half of an
# article's tokens build nodes the page never shows: references (<ref> and cite templates), tables in
# the prose, navboxes and other templates rendered as "", comments, list bullets, file and
# interlanguage links. Such a node's tokens are left out between tokenizer and builder (``_prune``),
# only where nothing but ``Renderer`` reads the node, which renders it as "" whatever it holds;
# adjacent texts left there become one node. The rest of the tree is as parsed.
# tests/test_snapshot_importers.py checks every real article against a full parse, and the rebuilt
# default snapshot keeps its content hash.
#
# A token's position is "rendered" when each node around it reaches it only through ``Renderer``
# (page text, a heading, a link's label, a tag's body, an argument's default, a named value of an
# infobox template): there, a silent tag, template or link and a table outside templates (prose
# drops tables) are rendered as "" and read by nobody else. Elsewhere (template names and parameters
# read by ``str``/``strip_code``, link targets, tag attributes, <code>-like bodies) nothing is left
# out. Nor is a node holding a template that ``_find_infobox`` might choose.

_OPENERS = frozenset({tokens.TemplateOpen, tokens.ArgumentOpen, tokens.WikilinkOpen, tokens.ExternalLinkOpen,
                      tokens.HeadingStart, tokens.CommentStart, tokens.TagOpenOpen, tokens.HTMLEntityStart})
_CLOSERS = frozenset({tokens.TemplateClose, tokens.ArgumentClose, tokens.WikilinkClose, tokens.ExternalLinkClose,
                      tokens.HeadingEnd, tokens.CommentEnd, tokens.TagCloseSelfclose, tokens.TagCloseClose,
                      tokens.HTMLEntityEnd})
_Text = tokens.Text
# the token that makes the rest of a node's own tokens rendered (True) or read otherwise (False)
_SWITCHES = {tokens.ArgumentSeparator: True, tokens.WikilinkSeparator: True, tokens.ExternalLinkSeparator: True,
             tokens.TemplateParamSeparator: False, tokens.TagOpenClose: False}
_OPEN_STATE = {tokens.HeadingStart: True}     # other nodes open on a name, target or attributes


def _text_name(toks: list, i: int) -> tuple[str, int]:
    """The text of the Text tokens from ``toks[i]`` on, and the index of the token after them."""
    parts = []
    n = len(toks)
    while i < n and type(toks[i]) is _Text:
        parts.append(toks[i]["text"])
        i += 1
    return "".join(parts), i


def _end_of(toks: list, i: int, stop: type | None = None) -> tuple[int, bool]:
    """From ``toks[i]`` (inside a node), the index of the token closing that node, or of its first own
    ``stop`` token, and whether no template in between could be an infobox (see ``_find_infobox``)."""
    depth = 0
    clean = True
    n = len(toks)
    while i < n:
        cls = type(toks[i])
        if cls in _OPENERS:
            if cls is tokens.TemplateOpen and clean:
                name, j = _text_name(toks, i + 1)
                if j < n and type(toks[j]) not in (tokens.TemplateParamSeparator, tokens.TemplateClose):
                    clean = False          # a name with a comment or entity in it: maybe an infobox
                elif _is_infobox_name(_normal_template_name(name).lower()):
                    clean = False
            depth += 1
        elif cls in _CLOSERS:
            if depth == 0:
                return i, clean
            depth -= 1
        elif depth == 0 and cls is stop:
            return i, clean
        i += 1
    raise ParserError("unbalanced tokens")


def _prune(toks: list) -> tuple[list, bool]:
    """The tokens without the nodes nobody reads (see above), and whether a template that is kept
    might be an infobox (False: ``_find_infobox`` finds none)."""
    out: list = []
    infobox = False
    # one entry per open node: [kind, rendered above, own position rendered, node is an infobox-like template]
    stack: list[list] = []
    rendered = True              # the current position is rendered
    templates = 0                # templates around the current position
    i, n = 0, len(toks)
    while i < n:
        tok = toks[i]
        cls = type(tok)
        if cls is _Text:
            if rendered and out and type(out[-1]) is _Text:     # one node instead of two
                out[-1] = _Text(text=out[-1]["text"] + tok["text"])
            else:
                out.append(tok)
            i += 1
            continue
        if cls is tokens.TemplateOpen:
            name, j = _text_name(toks, i + 1)
            norm = _normal_template_name(name)
            whole_name = j < n and type(toks[j]) in (tokens.TemplateParamSeparator, tokens.TemplateClose)
            if rendered and whole_name and type(toks[j]) is tokens.TemplateParamSeparator \
                    and not _is_infobox_name(norm.lower()) and _renders_nothing(norm):
                end, clean = _end_of(toks, j + 1)
                if clean and type(toks[end]) is tokens.TemplateClose:
                    i = end + 1
                    continue
            boxlike = _is_infobox_name(norm.lower())
            infobox = infobox or boxlike or not whole_name
            stack.append([cls, rendered, False, whole_name and boxlike])
            templates += 1
            rendered = False
        elif cls is tokens.TagOpenOpen:
            name, j = _text_name(toks, i + 1)
            whole_name = j < n and type(toks[j]) in (tokens.TagAttrStart, tokens.TagCloseOpen, tokens.TagCloseSelfclose)
            key = name.lower().strip() if whole_name else None   # None: a body that is not rendered
            if rendered and (key in _SILENT_TAGS or (key == "table" and not templates)):
                body, clean = _end_of(toks, j, tokens.TagCloseOpen)
                if clean and type(toks[body]) is tokens.TagCloseOpen:
                    close, clean = _end_of(toks, body + 1, tokens.TagOpenClose)
                    if clean and type(toks[close]) is tokens.TagOpenClose:
                        i = _end_of(toks, close + 1)[0] + 1
                        continue
            if rendered and key in ("li", "dt", "dd") and tok.get("wiki_markup"):
                end, clean = _end_of(toks, i + 1)        # a list bullet: rendered as ""
                if clean:
                    i = end + 1
                    continue
            stack.append([cls, rendered, False, key])
            rendered = False
        elif rendered and cls is tokens.CommentStart:
            i = _end_of(toks, i + 1)[0] + 1             # rendered as ""; holds text only
            continue
        elif rendered and cls is tokens.WikilinkOpen:
            title, j = _text_name(toks, i + 1)
            if j < n and type(toks[j]) in (tokens.WikilinkSeparator, tokens.WikilinkClose) and _silent_link(title):
                end, clean = _end_of(toks, j)
                if clean:
                    i = end + 1
                    continue
            stack.append([cls, rendered, False, None])
            rendered = False
        elif cls in _OPENERS:
            own = _OPEN_STATE.get(cls, False)
            stack.append([cls, rendered, own, None])
            rendered = rendered and own
        elif cls in _CLOSERS:
            if stack:
                entry = stack.pop()
                if entry[0] is tokens.TemplateOpen:
                    templates -= 1
                rendered = stack[-1][1] and stack[-1][2] if stack else True
        elif stack:
            entry = stack[-1]
            if cls in _SWITCHES:
                entry[2] = _SWITCHES[cls]
            elif cls is tokens.TemplateParamEquals and entry[0] is tokens.TemplateOpen:
                entry[2] = entry[3]                      # a named value: rendered in an infobox
            elif cls is tokens.TagCloseOpen and entry[0] is tokens.TagOpenOpen:
                entry[2] = entry[3] is not None and entry[3] not in _STRIPPED_TAGS
            rendered = entry[1] and entry[2]
        out.append(tok)
        i += 1
    return out, infobox


# what a page's prose references are found beside: template and link brackets (a reference inside one is
# left to _prune, which keeps it where the template is not rendered) and comments (which may hide either)
_REFERENCE_SCAN = re.compile(r"\{\{|\}\}|\[\[|\]\]|<!--.*?-->|<ref(?:\s[^<>/]*)?/>"
                             r"|<ref(?:\s[^<>]*)?>(?:(?!<ref[\s>/]|<!--).)*?</ref\s*>", re.DOTALL | re.IGNORECASE)
_ANY_REFERENCE = re.compile(r"<ref[\s>/]", re.IGNORECASE)
# a template an infobox may be (``_find_infobox`` looks inside references too): a reference holding one stays
_BOXLIKE = re.compile(r"\{\{\s*(?:infobox|taxobox|automatic taxobox|speciesbox|chembox|drugbox)", re.IGNORECASE)
# tags whose body the tokenizer reads otherwise (verbatim text, another language): a page with one is not cut
_OTHER_BODIES = re.compile(r"<(?:nowiki|pre|math|code|tt|source|syntaxhighlight|chem|ce|score|hiero|timeline|graph|"
                           r"templatedata|gallery|imagemap|includeonly|noinclude|onlyinclude|poem)\b", re.IGNORECASE)


def _cut_references(text: str) -> str:
    """The text without the references of its prose, cut before the tokenizer: they are about a third of
    an article's bytes and more than a third of the tokenizer's time (the shared sample's 103 articles:
    0.68 -> 0.43 s), and ``_prune`` drops each of them anyway. Cut only where that is sure to give the
    same tree: outside every template and link (inside one ``_prune`` decides), not at a line's start (the
    next character would start the line), well formed (no reference or comment inside it), holding no
    template an infobox may be (``_find_infobox`` finds one inside a reference), and never in a
    page with a tag whose body the tokenizer reads otherwise (nowiki, pre, math ...) or with unbalanced
    brackets. A page with no reference comes back as it is."""
    if not _ANY_REFERENCE.search(text) or _OTHER_BODIES.search(text):
        return text
    pieces, last, depth = [], 0, 0
    for m in _REFERENCE_SCAN.finditer(text):
        token = m.group(0)
        if token in ("{{", "[["):
            depth += 1
        elif token in ("}}", "]]"):
            depth -= 1
            if depth < 0:
                return text
        elif token.startswith("<!--"):
            continue
        elif depth == 0 and m.start() > 0 and text[m.start() - 1] != "\n" and not _BOXLIKE.search(token):
            pieces.append(text[last:m.start()])
            last = m.end()
    if depth:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def parse_wikitext(text: str) -> tuple[Wikicode, bool]:
    """``mwparserfromhell.parse(text, skip_style_tags=True)`` without the nodes nobody reads (see
    above), and whether it may hold an infobox. Bold and italic quotes stay text (``_tidy_text``
    drops them): parsed as tags, one run the tokenizer misread ("Iliad" in two quotes, then three
    and an s) made a tag of the rest of the page, headings and all, and 17 of the dump's 106
    articles lost their later sections into one (blind race 10, R29: Achilles' "Memnon, and the
    fall of Achilles" ran on to "Popular culture")."""
    toks = _Tokenizer().tokenize(_cut_references(text), 0, True)   # skip_style_tags: see the docstring
    try:
        kept, infobox = _prune(toks)
    except ParserError:          # tokens not nested as expected (never seen): build them all
        kept, infobox = toks, True
    return treebuilder.build(kept), infobox


_INFOBOX_FALLBACKS = ("taxobox", "automatic taxobox", "speciesbox", "chembox", "drugbox")


def _is_infobox_name(lower_name: str) -> bool:
    return lower_name.startswith("infobox") or lower_name in _INFOBOX_FALLBACKS


def _find_infobox(code: Wikicode) -> Template | None:
    fallback = None
    for t in code.ifilter_templates(recursive=True):
        name = template_name(t).lower()
        if name.startswith("infobox"):
            return t
        if fallback is None and name in _INFOBOX_FALLBACKS:
            fallback = t
    return fallback


def _infobox_type(t: Template) -> str:
    name = template_name(t)
    lower = name.lower()
    if lower.startswith("infobox"):
        return " ".join(lower[len("infobox"):].replace("_", " ").split()) or "generic"
    return lower


def parse_infobox(t: Template) -> tuple[list[InfoboxField], tuple[float, float] | None]:
    """Every non-empty parameter as an ``InfoboxField``, plus coordinates found in the infobox."""
    fields, coords, _, _ = _parse_infobox(t)
    return fields, coords


def _parse_infobox(t: Template) -> tuple[list[InfoboxField], tuple[float, float] | None, list[str], list]:
    """``parse_infobox``, plus the links and anchors of all the template's values, as rendering each
    value once more with one shared ``_Context(prose=False)`` would give: a context changes nothing a
    render returns or records but its prose flag, so they are those of each value's own render (the
    infobox's values were rendered twice, once for fields and once for links). A value whose name is
    empty has no field; it is rendered for its links after the others, in order, as it was before."""
    fields: list[InfoboxField] = []
    coords: tuple[float, float] | None = None
    raw: dict[str, str] = {}
    params = t.params
    rendered: list[_Context | None] = [None] * len(params)
    for i, p in enumerate(params):
        name = " ".join(str(p.name).split())
        if not name:
            continue
        ctx = rendered[i] = _Context(prose=False)
        text = _tidy_text(Renderer(ctx).render(p.value), lines_sep=", ")
        raw[name.lower()] = text
        if not text:
            continue
        coords_hint = (ctx.coords[0][0], ctx.coords[0][1]) if ctx.coords else None
        if coords_hint and coords is None:
            coords = coords_hint
        if coords_hint:
            text = _coord_text(*coords_hint)
        date_hint = ctx.dates[0] if ctx.dates and not coords_hint else None
        quantity_hint = ctx.quantities[0] if ctx.quantities and not date_hint else None
        fields.append(classify(name, text, date_hint=date_hint, coords_hint=coords_hint,
                               quantity_hint=quantity_hint))
    if coords is None:
        coords = _infobox_latlon(raw)
    links: list[str] = []
    anchors: list[tuple[str, str]] = []
    for i, p in enumerate(params):
        if rendered[i] is None:
            ctx = rendered[i] = _Context(prose=False)
            Renderer(ctx).render(p.value)
    for ctx in rendered:
        links += ctx.links
        anchors += ctx.anchors
    return fields, coords, links, anchors


def _infobox_latlon(raw: dict[str, str]) -> tuple[float, float] | None:
    """Coordinates given as latd/latm/latNS/longd/... or latitude/longitude parameters."""
    def num(key):
        v = raw.get(key, "").replace("−", "-")
        try:
            return float(v) if v else None
        except ValueError:
            return None
    for lat_key, lon_key in (("latitude", "longitude"), ("lat", "long"), ("lat", "lon"), ("lat_deg", "lon_deg")):
        lat, lon = num(lat_key), num(lon_key)
        if (lat is not None and lon is not None and ("_deg" not in lat_key or not raw.get("lat_min"))
                and -90 <= lat <= 90 and -180 <= lon <= 180):
            return round(lat, 6), round(lon, 6)
    for d, m, s, h, dd, mm, ss, hh in (("latd", "latm", "lats", "latns", "longd", "longm", "longs", "longew"),
                                       ("lat_d", "lat_m", "lat_s", "lat_ns", "long_d", "long_m", "long_s", "long_ew"),
                                       ("lat_deg", "lat_min", "lat_sec", "lat_dir", "lon_deg", "lon_min", "lon_sec",
                                        "lon_dir")):
        if num(d) is None or num(dd) is None:
            continue
        lat = num(d) + (num(m) or 0) / 60 + (num(s) or 0) / 3600
        lon = num(dd) + (num(mm) or 0) / 60 + (num(ss) or 0) / 3600
        if raw.get(h, "").upper().startswith("S"):
            lat = -lat
        if raw.get(hh, "").upper().startswith("W"):
            lon = -lon
        if -90 <= lat <= 90 and -180 <= lon <= 180:
            return round(lat, 6), round(lon, 6)
    return None


def _collector_paused(fn):
    """``fn`` with Python's cyclic garbage collector paused while it runs. A page's parse makes some
    10^5 container objects (tokens are dicts, nodes, lists) that reference counting frees with the page
    (the sample dump's pages leave no cycle at all), and their number kept triggering collections that
    walked them over and over: ~13% of an import. The collector runs again once the page is done."""
    @functools.wraps(fn)
    def paused(*args, **kwargs):
        if not gc.isenabled():
            return fn(*args, **kwargs)
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            gc.enable()
    return paused


@_collector_paused
def page_from_wikitext(title: str, text: str, *, source: str = "", revision_ts: str | None = None) -> Page:
    """Parse one article. Raises ``WikitextError`` for an empty or unparsable page."""
    title = canonical_title(title or "")
    if not title:
        raise WikitextError("missing title")
    if not text or not text.strip():
        raise WikitextError("empty text")
    try:
        code, maybe_infobox = parse_wikitext(text)
    except Exception as exc:  # the tokenizer can fail on pathological input
        raise WikitextError(f"wikitext parser failed: {type(exc).__name__}: {exc}") from exc

    ctx = _Context()
    infobox_t = _find_infobox(code) if maybe_infobox else None
    if infobox_t is not None:
        fields, infobox_coords, infobox_links, infobox_anchors = _parse_infobox(infobox_t)
    else:
        fields, infobox_coords, infobox_links, infobox_anchors = [], None, [], []

    # split top-level nodes at headings
    chunks: list[tuple[int, str, list]] = [(0, "", [])]
    for node in code.nodes:
        if isinstance(node, Heading):
            heading = _tidy_text(Renderer(_Context()).render(node.title), lines_sep=" ")
            chunks.append((node.level, heading, []))
        else:
            chunks[-1][2].append(node)

    lead = ""
    sections: list[Section] = []
    for level, heading, nodes in chunks:
        body = Wikicode(nodes)
        if level and heading.lower() in _SKIP_SECTIONS:
            Renderer(ctx).render(body)     # its text is dropped, its links and categories kept
            continue
        text_out = _prose(body, ctx)
        if level == 0:
            lead = text_out
            continue
        if level >= 4 and sections:
            merged = "\n\n".join(x for x in (sections[-1].text, heading, text_out) if x)
            sections[-1] = Section(sections[-1].title, sections[-1].level, merged)
            continue
        if text_out or level <= 3:
            sections.append(Section(title=heading, level=max(2, min(level, 3)), text=text_out))
    sections = [s for s in sections if s.text]

    coords = next(((la, lo) for la, lo, is_title in ctx.coords if is_title), None) or infobox_coords
    description = ctx.short_description or first_sentence(lead)
    links = links_with_anchors(title, infobox_links + ctx.links, infobox_anchors + ctx.anchors)
    return Page(
        title=title,
        url=title_to_url(title),
        description=description,
        lead=lead,
        sections=sections,
        links=links,
        infobox_type=_infobox_type(infobox_t) if infobox_t is not None else None,
        infobox=fields,
        coords=coords,
        categories=ctx.categories,
        revision_ts=revision_ts,
        source=source,
    )
