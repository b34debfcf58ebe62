"""Wide stops (issue 34): stops that collect a whole set from the world, made by the build stage.

A wide stop's set is enumerated here over the whole world directly (the country statistics, the
airport list, every page's opening text, a page's links and their pages' short descriptions), never
through the tools; the golden run collects it through the tools an agent has (``execute.collect_wide``) and must find the same set. Parameters
are drawn so that no member sits on an edge a tool's precision could flip (a distance within
``EDGE_MARGIN`` of the radius, an elevation within ``ELEVATION_MARGIN`` m of the threshold, a
population within ``FIGURE_MARGIN`` of it), and so that memory cannot decide the set alone: some
candidate lies close to the radius (within ``NEAR_EDGE``), so only the tools' figures tell it."""
from __future__ import annotations

import bisect
import difflib
import functools
import itertools
import math
import random
import re
import unicodedata
from dataclasses import dataclass

import numpy as np

from pipeline.clues.kinds import kind_of
from pipeline.execute import WIDE_FIGURE_UNIT
from pipeline.model import WIDE, Stop, WideSpec
from pipeline.snapshot.page import subject_name
from pipeline.snapshot.store import phrase_pattern
from pipeline.stages.base import StageContext
from pipeline.tools.errors import TRANSIENT_FAILURES
from pipeline.world.elevation import elevation_grid
from pipeline.world.gazetteer import gazetteer
from pipeline.world.geo import haversine_km, normalise_name

EDGE_MARGIN = 0.03        # of the radius: no candidate this near it (points differ between readers' sources)
EDGE_MARGIN_KM = 5        # and never less than this
NEAR_EDGE = 0.15          # some candidate within this share of the radius: the tools, not memory, decide
ELEVATION_MARGIN = 40     # m: the elevation grid's steps are 28 m; no airport this near the threshold
FIGURE_MARGIN = 0.05      # of a threshold on a statistic: no member's figure this near it
HALF_MARGIN = 0.05        # a sum rounded to a whole number: its fraction this far from one half
MAX_RADIUS_KM = {"countries": 5000, "airports": 500}   # the place search's cap for airports: 500 km
PAGE_SCAN_MAX = 50000     # the page domain scans every opening text: only in worlds this small
DOMAINS = ("countries", "airports", "pages", "links")
PLACE_DOMAINS = ("countries", "airports", "pages")   # on a place or country a page stop gives; links: on its page
# words no links set is asked over: a page's linked countries are the countries domain's, read from memory as
# readily (and Asia's 46 were 8 of 10 links sets in 20 extreme legs)
LINK_WORDS_LEFT_OUT = frozenset({"country"})


@dataclass(frozen=True)
class Candidate:
    key: str                  # the member's id: a country's name, an airport's IATA code, a page's title
    distance_km: float = 0.0
    figures: tuple[tuple[str, float], ...] = ()

    def figure(self, name: str) -> float:
        for key, value in self.figures:   # a pair or two: no dict built per call (sorts call this often)
            if key == name:
                return value
        raise KeyError(name)


def _nice_threshold(lo: float, hi: float) -> float | None:
    """A threshold strictly inside (lo, hi) with as few significant digits as will fit."""
    if hi <= lo:
        return None
    for digits in range(1, 5):
        scale = 10 ** (math.floor(math.log10(hi)) - digits + 1)
        t = math.floor(hi / scale) * scale
        if t > lo:
            return float(t)
    return None


def radius_for(distances: list[float], n: int) -> float | None:
    """A radius holding exactly the ``n`` nearest of ``distances`` (sorted), no candidate within the edge
    margin, and some candidate near the edge (NEAR_EDGE), else None."""
    if n < 1 or n >= len(distances):
        return None
    inner, outer = distances[n - 1], distances[n]

    def fits(cand: float) -> bool:
        margin = max(EDGE_MARGIN * cand, EDGE_MARGIN_KM)
        return (cand >= 1 and inner < cand - margin and outer > cand + margin
                and any(abs(d - cand) <= NEAR_EDGE * cand for d in (inner, outer)))
    for step in (500, 250, 100, 50, 25, 10, 5):   # the roundest radius that keeps both margins
        # the largest multiple clear of the outer candidate; failing only the near-edge rule, the largest
        # that is near the inner one (every multiple between them fails the same way)
        top = math.floor(min(outer / (1 + EDGE_MARGIN), outer - EDGE_MARGIN_KM) / step) * step
        for cand in (top, top - step, math.floor(inner / (1 - NEAR_EDGE) / step) * step):
            if 0 < cand <= top and fits(cand):
                return float(cand)
    return None


def country_candidates(ctx: StageContext, lat: float, lng: float) -> list[Candidate]:
    """Every country of the statistics with its capital's distance from a point and its figures, read
    from the world's data (not through the tools), nearest first; kept per point for the context (a run
    reaches the same capitals again and again)."""
    return ctx.memo(f"wide_country_candidates|{lat!r}|{lng!r}", lambda: sorted(
        (Candidate(name, haversine_km(lat, lng, clat, clng), figures) for name, clat, clng, figures in _countries(ctx)),
        key=lambda c: (c.distance_km, c.key)))


def _countries(ctx: StageContext) -> list[tuple[str, float, float, tuple]]:
    """The statistics' countries with their capitals' points and figures, read once per context."""
    def read() -> list[tuple[str, float, float, tuple]]:
        gaz = gazetteer(ctx.settings.world_dir, ctx.settings.derived_dir)
        by_iso = gaz.countries.by_iso2
        return [(c.name, c.lat, c.lng, (("population", float(by_iso[c.iso2].population)),
                                        ("area", float(by_iso[c.iso2].area_km2)))) for c in gaz.country_list()]
    return ctx.memo("wide_countries", read)


def doubtful_countries(ctx: StageContext) -> frozenset[str]:
    """Countries of the statistics no set may hold, because a reader may count them or not:
    - those sharing their capital's point with another listed one ("Serbia and Montenegro" beside Serbia:
      the old state, blind race 34, R25);
    - those the statistics name no capital for (Macau, Heard Island and McDonald Islands): a set is of
      the countries "whose capital lies within R km", and the tools place such a country at its centre,
      so a reader may count it or leave it out (blind race 17, R07 and R14)."""
    def find() -> frozenset[str]:
        at: dict[tuple[float, float], list[str]] = {}
        for name, lat, lng, _ in _countries(ctx):
            at.setdefault((round(lat, 3), round(lng, 3)), []).append(name)
        twins = {n for names in at.values() if len(names) > 1 for n in names}
        listed = gazetteer(ctx.settings.world_dir, ctx.settings.derived_dir).country_list()
        return frozenset(twins | {c.name for c in listed if not c.capital})
    return ctx.memo("wide_doubtful_countries", find)


def _airports(ctx: StageContext) -> tuple[list, np.ndarray]:
    """The airport list and its latitudes, read once per context (a wide stop is drawn many times a run)."""
    def read() -> tuple[list, np.ndarray]:
        listed = gazetteer(ctx.settings.world_dir, ctx.settings.derived_dir).iata_airports()
        return listed, np.array([a.lat for a in listed])
    return ctx.memo("wide_airports", read)


def airport_candidates(ctx: StageContext, lat: float, lng: float, radius_km: float) -> list[Candidate]:
    """Every IATA airport within ``radius_km`` of a point with its ground elevation (the grid the
    elevation tool reads), from the airport list directly, nearest first; kept per point and radius."""
    def find() -> list[Candidate]:
        listed, lats = _airports(ctx)
        grid = elevation_grid()
        out = []
        for k in np.flatnonzero(np.abs(lats - lat) <= radius_km / 100):   # a degree of latitude is over 110 km
            a = listed[k]
            d = haversine_km(lat, lng, a.lat, a.lng)
            if d <= radius_km:
                out.append(Candidate(a.iata, d, (("elevation", float(grid.elevation_m(a.lat, a.lng))),)))
        return sorted(out, key=lambda c: (c.distance_km, c.key))
    return ctx.memo(f"wide_airport_candidates|{lat!r}|{lng!r}|{radius_km!r}", find)


def pages_with_word(ctx: StageContext, word: str) -> list[str]:
    """Every page whose opening text holds ``word`` as a whole word (case aside), by a scan of every
    page's opening text: the search index is what the tools read, so it is not read here."""
    if not word.split():
        return []

    def scan() -> list[str]:
        titles, leads, text, starts = _all_leads(ctx)
        pattern = phrase_pattern(word)
        first = word.split()[0].lower()
        # the texts holding the word's first part, found in one lower-cased text of all (a quick filter
        # before the pattern; a text it wrongly skipped would make the golden collection find an extra
        # member and fail the stop)
        holding, at = set(), text.find(first)
        while at >= 0:
            k = bisect.bisect_right(starts, at) - 1
            holding.add(k)
            at = text.find(first, starts[k + 1] if k + 1 < len(starts) else len(text))
        return sorted(titles[k] for k in holding if pattern.search(leads[k]))
    return ctx.memo(f"wide_pages|{word}", scan)


def _all_leads(ctx: StageContext) -> tuple[list[str], list[str], str, list[int]]:
    """Every opening text, read once per context: titles, texts, their lower cases joined by a NUL (no
    word runs across it) and where each starts in the join."""
    def read() -> tuple[list[str], list[str], str, list[int]]:
        pairs = [(t, lead) for t, lead in ctx.store.leads() if lead]
        lowered = [lead.lower() for _, lead in pairs]
        starts, at = [], 0
        for low in lowered:
            starts.append(at)
            at += len(low) + 1
        return [t for t, _ in pairs], [lead for _, lead in pairs], "\0".join(lowered), starts
    return ctx.memo("wide_leads", read)


def _above_threshold(cands: list[Candidate], n: int, figure: str, max_radius: float, skip: frozenset[str],
                     bounds, radius_at, figures_at) -> tuple[float, float, list[str]] | None:
    """A radius holding the nearest m candidates (some m past n) and a round threshold on ``figure``
    that exactly n of them reach, strictly inside ``bounds(lo, hi)`` (the figures either side of it, each
    kept clear of it by the margin a tool's precision needs); no candidate of ``skip`` inside the radius.
    ``figures_at(m)``: the nearest m candidates' figures, sorted (shared by every n a stop tries)."""
    first_skipped = next((k for k, c in enumerate(cands) if c.key in skip), len(cands))
    for m in range(n + 2, min(len(cands), 3 * n + 10, first_skipped + 1)):
        r = radius_at(m)
        if r is None or r > max_radius:
            continue
        figures = figures_at(m)
        inside = bounds(figures[m - n - 1], figures[m - n])
        t = _nice_threshold(*inside) if inside else None
        if t is None:
            continue
        members = sorted(c.key for c in cands[:m] if c.figure(figure) >= t)
        if len(members) == n:
            return r, t, members
    return None


def _threshold_spec(domain: str, measure: str, cands: list[Candidate], n: int, skip: frozenset[str], radius_at,
                    bounds, figures_at) -> WideSpec | None:
    """A count of the candidates within a radius whose ``measure`` reaches a threshold (``_above_threshold``)."""
    found = _above_threshold(cands, n, measure, MAX_RADIUS_KM[domain], skip, bounds, radius_at, figures_at)
    if found is None:
        return None
    r, t, members = found
    return WideSpec(domain, "count", radius_km=r, measure=measure, threshold=t, members=members)


def _figures_at(cands: list[Candidate], figure: str):
    """``figures_at`` of ``_above_threshold``: the nearest m candidates' ``figure`` sorted, once per m."""
    return functools.lru_cache(maxsize=None)(lambda m: sorted(c.figure(figure) for c in cands[:m]))


COUNTRY_STYLES = ("count", "sum", "threshold", "ranked")
AIRPORT_STYLES = ("count", "threshold", "ranked")
AIRPORT_FIGURE_STYLES = ("threshold", "ranked")   # the airports' elevations decide: no place search's total


def _style_order(rng: random.Random, style: str | None, styles: tuple[str, ...]) -> list[str]:
    """The styles a stop on one point tries, in turn: the one given, or all of ``styles`` in an order
    ``rng`` draws. One drawn style alone often had no clean set where another had: 223 of the 556
    extreme linear legs that reached build were rejected for too few wide stops (seed 4), 187 of them
    on routes with four or more clean (domain, place) pairs."""
    if style:
        return [style]
    return rng.sample(styles, len(styles))


def _spec_countries(ctx, rng: random.Random, lat, lng, size: tuple[int, int], style: str | None = None) -> WideSpec | None:
    """A countries stop around a point with a set size in ``size``, in the first style of ``_style_order``
    that gives a clean one (or the ``style`` given: ``benchmarks/wide_room.py`` asks each in turn), or
    None where none is clean."""
    cands = country_candidates(ctx, lat, lng)
    distances = [c.distance_km for c in cands]
    radius_at = functools.lru_cache(maxsize=None)(lambda m: radius_for(distances, m))   # one radius per count
    doubtful = doubtful_countries(ctx)
    targets = list(range(size[0], size[1] + 1))
    rng.shuffle(targets)
    styles = _style_order(rng, style, COUNTRY_STYLES)
    figures_at = _figures_at(cands, "population")
    figure, order, rank = rng.choice(["population", "area"]), rng.choice(["largest", "smallest"]), rng.randint(1, 4)
    return next(filter(None, (_country_spec(s, cands, targets, doubtful, radius_at, figures_at, figure, order, rank)
                              for s in styles)), None)


def _country_spec(style, cands, targets, doubtful, radius_at, figures_at, figure, order, rank) -> WideSpec | None:
    """``_spec_countries`` in one style: the first set size of ``targets`` that gives a clean stop."""
    for n in targets:
        if style == "threshold":   # the nearest m by capital, then those of them at least T people
            spec = _threshold_spec("countries", "population", cands, n, doubtful, radius_at,
                                   lambda lo, hi: (lo * (1 + FIGURE_MARGIN), hi * (1 - FIGURE_MARGIN)), figures_at)
            if spec:
                return spec
            continue
        r = radius_at(n)
        if r is None or r > MAX_RADIUS_KM["countries"] or doubtful & {c.key for c in cands[:n]}:
            continue
        members = sorted(c.key for c in cands[:n])
        if style == "ranked":
            if _ranked_clear(cands[:n], figure, order, rank, FIGURE_MARGIN * 100, relative=True):
                return WideSpec("countries", order, radius_km=r, figure=figure, rank=rank, members=members)
            continue
        if style == "sum":
            total = sum(c.figure("population") for c in cands[:n]) / WIDE_FIGURE_UNIT["population"]
            if abs(total - math.floor(total) - 0.5) < HALF_MARGIN:
                continue
            return WideSpec("countries", "sum", radius_km=r, figure="population", members=members)
        return WideSpec("countries", "count", radius_km=r, members=members)
    return None


def closed_airports(ctx: StageContext) -> frozenset[str]:
    """The IATA codes of airports OurAirports marks closed (Hellinikon, Tegel): their codes are withdrawn
    or given to another airport, so a reader counting "every airport with an IATA code" may leave them
    out; no airport set holds one. (One without scheduled flights, an air base, may be in a set: the clue
    says "with scheduled flights or not", blind race 18, R10.)"""
    return ctx.memo("wide_closed_airports", lambda: frozenset(a.iata for a in _airports(ctx)[0] if a.closed))


def _spec_airports(ctx, rng: random.Random, lat, lng, size: tuple[int, int], style: str | None = None,
                   styles: tuple[str, ...] = AIRPORT_STYLES) -> WideSpec | None:
    """An airports stop around a point, as ``_spec_countries`` makes a countries one."""
    cands = airport_candidates(ctx, lat, lng, MAX_RADIUS_KM["airports"] * (1 + EDGE_MARGIN))
    closed = closed_airports(ctx)
    distances = [c.distance_km for c in cands]
    radius_at = functools.lru_cache(maxsize=None)(lambda m: radius_for(distances, m))
    targets = list(range(size[0], size[1] + 1))
    rng.shuffle(targets)
    order = _style_order(rng, style, styles)
    rank = rng.randint(1, 3)
    figures_at = _figures_at(cands, "elevation")
    return next(filter(None, (_airport_spec(s, cands, targets, closed, radius_at, figures_at, rank) for s in order)),
                None)


def _airport_spec(style, cands, targets, closed, radius_at, figures_at, rank) -> WideSpec | None:
    """``_spec_airports`` in one style: the first set size of ``targets`` that gives a clean stop."""
    high = style == "threshold"
    for n in targets:
        if high:   # the airports within R whose ground lies at least E m high (none at or below sea level)
            spec = _threshold_spec("airports", "elevation", cands, n, closed, radius_at,
                                   lambda lo, hi: (lo + ELEVATION_MARGIN, hi - ELEVATION_MARGIN) if lo > 0 else None,
                                   figures_at)
            if spec:
                return spec
            continue
        r = radius_at(n)
        if r is None or r > MAX_RADIUS_KM["airports"] or closed & {c.key for c in cands[:n]}:
            continue
        members = sorted(c.key for c in cands[:n])
        if style == "ranked":   # the airport whose ground lies highest (second highest ...) among them
            if _ranked_clear(cands[:n], "elevation", "largest", rank, ELEVATION_MARGIN, relative=False):
                return WideSpec("airports", "largest", radius_km=r, figure="elevation", rank=rank, members=members)
            continue
        return WideSpec("airports", "count", radius_km=r, members=members)
    return None


def _ranked_clear(members: list[Candidate], figure: str, order: str, rank: int, margin: float, *,
                  relative: bool) -> bool:
    """May a stop ask the ``rank``-th ``order`` (largest | smallest) ``figure`` of these members? Every
    figure ranked above it, it and the one after it lie more than ``margin`` apart (per cent of the
    larger with ``relative``, else in the figure's unit), so no reading of a figure swaps the rank and
    no tie above it lets "the third highest" count figures instead of members (blind race 19, R25:
    two airports at 838 m); and the figure in the clue's
    unit is a whole number of at least 2 whose fraction is clear of one half (never one that rounds to
    zero or to its own unit, nor one a reader may round either way)."""
    if rank > len(members):
        return False
    ranked = sorted((c.figure(figure) for c in members), reverse=order == "largest")
    at = ranked[rank - 1]
    for high, low in itertools.pairwise(ranked[:rank + 1]):
        gap = abs(high - low)
        if gap <= (margin / 100 * max(abs(high), abs(low)) if relative else margin):
            return False
    value = at / WIDE_FIGURE_UNIT[figure]
    return value >= 2 and abs(value - math.floor(value) - 0.5) >= HALF_MARGIN


def _spec_pages(ctx, word: str, size: tuple[int, int]) -> WideSpec | None:
    if len(ctx.store) > PAGE_SCAN_MAX or len(word) < 4:
        return None
    members = pages_with_word(ctx, word)
    if not size[0] <= len(members) <= size[1] or _inside_longer_names(ctx, word, members):
        return None
    return WideSpec("pages", "count", word=word, members=members)


def _inside_longer_names(ctx: StageContext, word: str, members: list[str]) -> bool:
    """Does a member's opening text hold the word only as part of a longer name the world has a page for
    ("Guinea" in "Papua New Guinea", "Sahara" in "Western Sahara")? The clue's "as a whole word" counts
    it; a reader who means the place the earlier clue found would not (issue 34's note), so such a word
    gives no page set."""
    def find() -> bool:
        pattern = phrase_pattern(word)
        every = ctx.memo("wide_titles", lambda: [(t, t.lower()) for t in ctx.store.titles()])   # with lower cases
        low = " ".join(word.split()).lower()   # a quick filter before the pattern, as in pages_with_word
        longer = [t for t, t_low in every if len(t) > len(word) and low in t_low and pattern.search(t)]
        titles, texts, _, _ = _all_leads(ctx)
        leads = dict(zip(titles, texts)) if longer else {}
        named = [phrase_pattern(t) for t in longer]
        return any(p.search(leads[m]) for m in members for p in named)
    return ctx.memo(f"wide_inside|{word}", find)



def linked_descriptions(ctx: StageContext, title: str) -> list[tuple[str, str]]:
    """(title, short description) of every page in the world that the page ``title`` links to, in
    the page's order: what ``fetch_webpage`` lists as its links, read here from the store."""
    def read() -> list[tuple[str, str]]:
        page = ctx.page(title)
        if page is None:
            return []
        out = []
        for link in page.links:
            target = ctx.page(link.title) if link.in_snapshot else None
            if target is not None:
                out.append((target.title, target.description or ""))
        return out
    return ctx.memo(f"wide_linked|{title}", read)


def missed_link_descriptions(ctx: StageContext, title: str) -> list[str]:
    """The short descriptions of the world's pages that a reader may take a link of ``title`` for where
    the link itself leads to no page: its title without the qualifier after a comma or in brackets, or
    without its accents ("Oslo, Norway", which the world has no page for, read as Oslo: blind race 22,
    every racer; "Zürich" as Zurich: race 23), or a page whose title holds the link's words whole, of the
    search's first five for them ("Robert Oppenheimer" read as J. Robert Oppenheimer, "Muslim conquests"
    as Early Muslim conquests: race 35, R18 and R19)."""
    def read() -> list[str]:
        page = ctx.page(title)
        out = []
        for link in page.links if page is not None else ():
            if link.in_snapshot:
                continue
            bare = (subject_name(link.title), link.title.split(",")[0].strip())
            for name in dict.fromkeys((*bare, *(_without_accents(n) for n in bare))):
                target = ctx.page(name) if name and name != link.title else None
                if target is not None:
                    out.append(target.description or "")
            words = phrase_pattern(link.title)
            for hit in ctx.store.search(link.title, k=5, snippets=False):
                if hit["title"] != link.title and words.search(hit["title"]) and (target := ctx.page(hit["title"])):
                    out.append(target.description or "")
            out += [target.description or "" for name in spelled_alike(ctx, link.title) if (target := ctx.page(name))]
        return out
    return ctx.memo(f"wide_missed_links|{title}", read)


SPELLED_ALIKE = 0.9   # difflib's ratio of two folded titles at or above which a reader takes one for the other


def _folded(name: str) -> str:
    """A title as a reader compares two: ``geo.normalise_name`` (accents, apostrophes, punctuation and case
    aside), its spaces too."""
    return normalise_name(name).replace(" ", "")


def spelled_alike(ctx: StageContext, name: str) -> list[str]:
    """The world's titles, other than ``name``, that a reader takes a link to no page for though it spells
    them otherwise: one of the titles beginning with its first four characters (a range query, whatever
    the world's size) whose folded form is the link's or differs from it by a letter or two. Asia links
    "Zoroastranism" and "Bahá'í Faith" (a straight apostrophe), the world has Zoroastrianism and Baháʼí
    Faith, both "religion"s (blind race 36, R01, unsure whether to count them)."""
    key = _folded(name)
    if len(key) < 4:
        return []
    matcher = difflib.SequenceMatcher(None, a=key)   # the cheap upper bounds first, as ``get_close_matches``
    out = []
    for title in ctx.store.titles_starting(name[:4])[:500]:
        if title == name:
            continue
        matcher.set_seq2(other := _folded(title))
        if other == key or (matcher.real_quick_ratio() >= SPELLED_ALIKE and matcher.quick_ratio() >= SPELLED_ALIKE
                            and matcher.ratio() >= SPELLED_ALIKE):
            out.append(title)
    return out


def _without_accents(name: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", name) if not unicodedata.combining(ch))


def _word_unclear(word: str, descriptions: list[str]) -> bool:
    """Could a reader count a description the whole-word test does not, or not count one it does? The
    word's plural ("poets" beside "poet") or the word joined to another by a hyphen, an apostrophe or a
    slash ("poet-diplomat") in any of the page's linked descriptions: such a word gives no set."""
    doubtful = re.compile(r"(?<![^\W_])" + re.escape(word) + r"(?:e?s(?![^\W_])|[-'’/])|[-'’/]" + re.escape(word)
                          + r"(?![^\W_])", re.IGNORECASE)
    return any(doubtful.search(d) for d in descriptions)


_CAPITALISED = re.compile(r"[A-Z][\w'’.-]*")


def _inside_a_name(ctx: StageContext, word: str, descriptions: list[str]) -> bool:
    """Does a description hold the word inside a longer name the world has a page for ("Village in
    Vatican City" for "city": blind race 24, R04 counted it and asked whether a reader meaning the kind
    would)? Read from the run of capitalised words around each whole-word match, each stretch of it that
    holds the match looked up as a title (indexed lookups, so at any world size)."""
    pattern = phrase_pattern(word)
    for text in descriptions:
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        for match in pattern.finditer(text):
            at = next((i for i, (a, b) in enumerate(words) if a <= match.start() < b), None)
            if at is None or not _CAPITALISED.match(text, words[at][0]):
                continue
            lo = hi = at
            while lo > 0 and _CAPITALISED.match(text, words[lo - 1][0]):
                lo -= 1
            while hi + 1 < len(words) and _CAPITALISED.match(text, words[hi + 1][0]):
                hi += 1
            for first in range(lo, at + 1):
                for last in range(at, hi + 1):
                    if last > first:
                        name = text[words[first][0]:words[last][1]].strip(".,;:")
                        if ctx.page(name) is not None:
                            return True
    return False


def _link_words(ctx: StageContext, title: str) -> list[tuple[str, tuple[str, ...]]]:
    """Each word a links set may be asked over on the page ``title`` (a kind one of its linked pages is,
    ``kind_of``: "poet", "river"; none a reader may count otherwise, nor one a page a missing link may
    be read as holds, nor one a linked description holds inside a longer name: ``_inside_a_name``) and
    the linked pages whose short description holds it as a whole word, case aside.
    Kept per page on disk (``StageContext.kept``): it depends only on the world, and reading a hub's 400
    linked pages again was 3% of a release."""
    def compute() -> list[tuple[str, tuple[str, ...]]]:
        linked = linked_descriptions(ctx, title)
        descriptions = [d for _, d in linked]
        missed = missed_link_descriptions(ctx, title)
        out = []
        for word in sorted({k for d in descriptions if (k := kind_of(d)) and len(k) >= 4} - LINK_WORDS_LEFT_OUT):
            pattern = phrase_pattern(word)
            if (not _word_unclear(word, descriptions) and not any(pattern.search(d) for d in missed)
                    and not _inside_a_name(ctx, word, descriptions)):
                out.append((word, tuple(sorted({t for t, d in linked if pattern.search(d)}))))
        return out
    return ctx.kept("wide_link_words", title, compute)


def _spec_links(ctx, rng: random.Random, title: str, size: tuple[int, int]) -> WideSpec | None:
    """The pages ``title`` links to whose short description holds a word as a whole word (case aside),
    the word drawn among those whose set has the level's size (``_link_words``). The tools decide it
    member by member (the page's links, then each linked page's short description) or by a whole-word
    search of the short descriptions, paged, met with the links."""
    fits = [(word, members) for word, members in _link_words(ctx, title) if size[0] <= len(members) <= size[1]]
    fits = [(word, members) for word, members in fits if described_with(ctx, word) <= LINKS_SEARCH_MOST]
    if not fits:
        return None
    word, members = fits[rng.randrange(len(fits))]
    return WideSpec("links", "count", word=word, members=list(members))


# the most pages of the world whose short description may hold a links set's word: the golden collection
# pages through them all (``execute.phrase_matches``, 50 a call), so a word as common in a 10^6-page world
# as "politician" cost hundreds of calls a leg, growing with the world (prevalidate 399 ms a leg there
# against 53 at 10^5, 45% of a run); at most 20 calls here, whatever the world's size
LINKS_SEARCH_MOST = 1_000


def described_with(ctx: StageContext, word: str) -> int:
    """How many of the world's short descriptions hold ``word`` as a whole word (the whole-word search's
    total; an unanswered search counts as too many)."""
    def compute() -> int:
        try:
            found = ctx.toolbox.call("web_search", {"query": word, "mode": "phrase", "field": "description",
                                                    "num_results": 1})
        except TRANSIENT_FAILURES:   # the service failed this time (under faults): the word is not drawn
            return LINKS_SEARCH_MOST + 1
        total = found.data.get("total") if found.ok else None
        return int(total) if total is not None else LINKS_SEARCH_MOST + 1
    return ctx.memo_unfaulted(f"described_with|{word}", compute)


def make_wide_stops(pages: list[Stop], ctx: StageContext, rng: random.Random, level: str) -> list[tuple[int, Stop]]:
    """The level's wide stops, each on a place or country a page stop gives, or on the stop's page (links):
    (the input's page index, the stop), its ``depends_on`` the input stop's object id until indices
    exist; no input or domain twice where the route offers others."""
    preset = ctx.presets[level]
    want = rng.randint(*preset.wide) if preset.wide[1] else 0
    if not want:
        return []
    inputs = [(i, s) for i, s in enumerate(pages) if s.fact is not None]
    rng.shuffle(inputs)
    made: list[tuple[int, Stop]] = []
    used_domains: list[str] = []
    asked: set[tuple[str, str]] = set()   # (domain, the input's entity): Egypt reached twice is asked once
    for i, src in inputs:
        if len(made) >= want:
            break
        order = rng.sample(DOMAINS, len(DOMAINS))
        domains = [d for d in order if d not in used_domains] + [d for d in order if d in used_domains]
        for domain in domains:
            on = src.page_title if domain == "links" else src.value   # what the set is asked of
            if domain in PLACE_DOMAINS and not (src.fact.role in ("place", "country") and isinstance(src.value, str)):
                continue
            if (domain, str(on).casefold()) in asked:
                continue
            spec = _spec_for(domain, src, ctx, rng, preset.wide_members, preset.wide_total_counts)
            # one set once: two radii around two capitals can enclose the same countries (blind race 34, R14)
            if spec is not None and any(s.wide.domain == domain and s.wide.members == spec.members for _, s in made):
                spec = None
            if spec is not None:
                asked.add((domain, str(on).casefold()))
                made.append((i, Stop(index=-1, kind=WIDE, description=f"wide: {domain} {spec.aggregate}",
                                     depends_on=[id(src)], page_url=src.page_url, page_title=src.page_title,
                                     value_type="number", wide=spec)))
                used_domains.append(domain)
                break
    return made


def _spec_for(domain: str, src: Stop, ctx: StageContext, rng: random.Random, size,
              total_counts: bool = True) -> WideSpec | None:
    """A ``domain`` stop on ``src``'s place or country. Without ``total_counts`` (the level's
    ``wide_total_counts``) none whose count one tool answer reports as its total: no page set (its count
    is a whole-word search's total) and no airports counted (a place search's total)."""
    if domain == "pages":
        return _spec_pages(ctx, src.value, size) if total_counts else None
    if domain == "links":   # counted from two listings met: no one answer's total
        return _spec_links(ctx, rng, src.page_title, size) if src.page_title else None
    found = ctx.toolbox.call("maps_geocode", {"address": src.value})
    if not found.ok or found.data.get("partial_match"):
        return None
    lat, lng = found.data["lat"], found.data["lng"]
    if domain == "countries":
        return _spec_countries(ctx, rng, lat, lng, size)
    return _spec_airports(ctx, rng, lat, lng, size, styles=AIRPORT_STYLES if total_counts else AIRPORT_FIGURE_STYLES)
