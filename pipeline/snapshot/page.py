"""The page record every importer produces and every consumer reads.

Importers (MediaWiki XML, Kiwix ZIM, raw wikitext, title/summary JSON) all turn their
input into ``Page`` objects; the store keeps them as canonical JSON, so the snapshot's
content hash depends on content only.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

WIKI_BASE = "https://en.wikipedia.org/wiki/"

# Kiwix HTML marks infoboxes with microformat classes rather than template names
MICROFORMAT_KINDS = {"haudio": "album", "vcard": "person or organisation", "vevent": "event", "hproduct": "product",
                     "geography": "place", "biography": "person"}


def infobox_kind(infobox_type: str | None) -> str:
    """The kind of subject an infobox describes, in words (what clues name and solvers match)."""
    kind = (infobox_type or "").strip().lower()
    return MICROFORMAT_KINDS.get(kind, kind)


def canonical_title(title: str) -> str:
    """MediaWiki title normalisation: underscores to spaces, collapse spaces, first letter upper."""
    t = " ".join(title.replace("_", " ").split())
    return t[:1].upper() + t[1:] if t else t


def name_pattern(name: str) -> str:
    """A page's name as a whole word, also in its plural or possessive form ("junipers", "Ray's"):
    what invariant 5 and verbalize's masking both look for (a regex; match case-insensitively)."""
    return r"(?<!\w)" + re.escape(name) + r"(?:s|es|'s|\u2019s)?(?!\w)"


@functools.lru_cache(maxsize=1 << 14)   # a run checks the same names in thousands of clues; re keeps only 512
def name_regex(name: str) -> re.Pattern:
    """``name_pattern(name)`` compiled, case-insensitive."""
    return re.compile(name_pattern(name), re.IGNORECASE)


@functools.lru_cache(maxsize=1 << 15)
def compiled(pattern: str, flags: int = 0) -> re.Pattern:
    """``re.compile`` kept for patterns built from names (re's own cache holds 512 and a run builds
    tens of thousands, so it compiled most of them again and again)."""
    return re.compile(pattern, flags)


def subject_name(title: str) -> str:
    """A page's subject as a name: its title without a parenthesised disambiguation
    ("Georgia (country)" -> "Georgia")."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", title).strip()


def title_to_url(title: str) -> str:
    return WIKI_BASE + quote(canonical_title(title).replace(" ", "_"), safe="()'!*,;:@$-._~/")


@dataclass
class Section:
    title: str          # "" for the lead
    level: int          # 2 for ==H==, 3 for ===H===, ...
    text: str           # plain text, templates and markup removed


@dataclass
class InfoboxField:
    name: str                   # template parameter name, e.g. "population_total"
    label: str                  # human label, e.g. "population total"
    text: str                   # plain-text value as a reader sees it
    kind: str                   # number | date | year | text | coords
    number: float | None = None # normalised numeric value (canonical unit)
    unit: str | None = None     # canonical unit: m, km, km2, people, USD, degC, mm, ...
    date: str | None = None     # ISO date (YYYY, YYYY-MM or YYYY-MM-DD) for date/year kinds


@dataclass
class Link:
    title: str                  # canonical target title after redirect resolution
    in_snapshot: bool           # target page is in this snapshot
    # the texts the page shows for this link, in order of first appearance ("U.S." for United States,
    # "Paris" for Paris, Texas): what a reader of a sentence clicks, so what a hop follows (issue 33)
    anchors: list[str] = field(default_factory=list)


@dataclass
class Page:
    title: str
    url: str
    description: str = ""            # short description (lead's first sentence when none)
    lead: str = ""
    sections: list[Section] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    infobox_type: str | None = None  # e.g. "settlement", "person", "musical artist"
    infobox: list[InfoboxField] = field(default_factory=list)
    coords: tuple[float, float] | None = None
    categories: list[str] = field(default_factory=list)
    aliases: list[str] = field(default_factory=list)  # redirect titles pointing here
    revision_ts: str | None = None
    source: str = ""                 # e.g. "enwiki-sample-pages-articles.xml.bz2"
    language: str = ""               # identified at build (snapshot.language); "" undetermined
    licence: str = "CC BY-SA 4.0"

    def to_dict(self) -> dict[str, Any]:
        """``asdict`` with coords as a list, built directly (asdict's deep copy is slow on long pages);
        tests/test_snapshot_importers.py checks it against ``asdict``."""
        d = {k: v for k, v in self.__dict__.items() if not k.startswith("_")}   # no memo a reader keeps on it
        d["sections"] = [dict(s.__dict__) for s in self.sections]
        d["links"] = [{"title": link.title, "in_snapshot": link.in_snapshot, "anchors": list(link.anchors)}
                      for link in self.links]
        d["infobox"] = [dict(f.__dict__) for f in self.infobox]
        d["categories"] = list(self.categories)
        d["aliases"] = list(self.aliases)
        d["coords"] = list(self.coords) if self.coords else None
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Page:
        d = dict(d)
        d["sections"] = [Section(**s) for s in d.get("sections", [])]
        d["links"] = [Link(**l) for l in d.get("links", [])]
        d["infobox"] = [InfoboxField(**f) for f in d.get("infobox", [])]
        d["coords"] = tuple(d["coords"]) if d.get("coords") else None
        return cls(**d)

    def field(self, name: str) -> InfoboxField | None:
        for f in self.infobox:
            if f.name == name:
                return f
        return None

    def section(self, title: str) -> Section | None:
        for s in self.sections:
            if s.title == title:
                return s
        return None


def links_with_anchors(title: str, targets: list[str], anchors: list[tuple[str, str]]) -> list[Link]:
    """A page's links in order of first appearance, each with the distinct texts it is shown as."""
    shown: dict[str, list[str]] = {}
    for target, text in anchors:
        texts = shown.setdefault(target, [])
        if text and text not in texts:
            texts.append(text)
    seen: set[str] = set()
    links: list[Link] = []
    for target in targets:
        if target and target != title and target not in seen:
            seen.add(target)
            links.append(Link(title=target, in_snapshot=False, anchors=shown.get(target, [])))
    return links
