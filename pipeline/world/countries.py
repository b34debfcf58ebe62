"""Countries: population, area, capital, from the countryinfo package (MIT), via a compact extract.

``build_extract`` reads countryinfo's per-country JSON files once (build time) and writes
``countries.json``; at run time only that extract is read. Names are matched case-, accent- and
punctuation-insensitively against the official name, countryinfo's alternative spellings, ISO
codes, and a short list of common English aliases ("USA", "UK", "Holland"...).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.world import DEFAULT_WORLD_DIR, load_once, package_file, package_version
from pipeline.world.geo import normalise_name

EXTRACT_NAME = "countries.json"

# Common names that countryinfo's altSpellings lack. Keys are ISO 3166-1 alpha-2 codes.
EXTRA_ALIASES: dict[str, tuple[str, ...]] = {
    "US": ("USA", "U.S.", "U.S.A.", "United States of America", "America", "the States"),
    "GB": ("UK", "U.K.", "Great Britain", "Britain", "United Kingdom of Great Britain and Northern Ireland"),
    "NL": ("Holland", "The Netherlands"),
    "CZ": ("Czechia",),
    "KR": ("Korea, South", "Republic of Korea"),
    "KP": ("Korea, North",),
    "CI": ("Cote d'Ivoire", "Côte d'Ivoire"),
    "MM": ("Burma",),
    "SZ": ("Eswatini",),
    "MK": ("North Macedonia", "Macedonia"),
    "TL": ("Timor-Leste",),
    "CV": ("Cabo Verde",),
    "VA": ("Vatican", "Vatican City", "Holy See"),
    "RU": ("Russian Federation",),
    "CD": ("DR Congo", "DRC", "Congo-Kinshasa"),
    "CG": ("Congo", "Congo-Brazzaville"),
    "BS": ("Bahamas",),
    "GM": ("Gambia",),
    "AE": ("UAE", "Emirates"),
    "TR": ("Türkiye", "Turkiye"),
}


def build_extract(out_dir: Path) -> Path:
    """Write ``countries.json`` from the installed countryinfo package (one record per ISO code)."""
    data_dir = package_file("countryinfo", "data")
    best: dict[str, dict] = {}
    aliases: dict[str, set[str]] = {}
    for path in sorted(data_dir.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        iso = (raw.get("ISO") or {}).get("alpha2")
        if not iso or not raw.get("name"):
            continue
        names = {raw["name"], *(raw.get("altSpellings") or [])}
        if isinstance(raw.get("nativeName"), str):
            names.add(raw["nativeName"])
        alpha3 = (raw.get("ISO") or {}).get("alpha3")
        if alpha3:
            names.add(alpha3)
        aliases.setdefault(iso, set()).update(n for n in names if isinstance(n, str) and n.strip())
        capital = raw.get("capital")
        if isinstance(capital, list):
            capital = capital[0] if capital else None
        record = {
            "iso2": iso, "iso3": alpha3, "name": raw["name"],
            "population": raw.get("population"), "area_km2": raw.get("area"),
            "capital": capital or None, "capital_latlng": raw.get("capital_latlng") or None,
            "latlng": raw.get("latlng") or None, "file": path.name,
        }
        # Duplicates exist (e.g. two files for VA, PS, CW): keep the most complete, then the larger population.
        score = (sum(record[k] is not None for k in ("population", "area_km2", "capital")), record["population"] or 0)
        if iso not in best or score > best[iso]["_score"]:
            best[iso] = {**record, "_score": score}
    countries = []
    for iso in sorted(best):
        record = {k: v for k, v in best[iso].items() if k != "_score"}
        names = aliases[iso] | set(EXTRA_ALIASES.get(iso, ()))
        names.discard(record["name"])
        record["aliases"] = sorted(names)
        countries.append(record)
    out = out_dir / EXTRACT_NAME
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"source": f"countryinfo {package_version('countryinfo')} (MIT)", "countries": countries}
    out.write_text(json.dumps(payload, ensure_ascii=False, sort_keys=True, indent=0) + "\n", encoding="utf-8")
    return out


def _first_capital(capital: str | None) -> str | None:
    """A country with several seats ("Kralendijk / Oranjestad / The Bottom") is represented by the first."""
    return capital.split(" / ")[0].strip() or None if capital else None


def _point(value) -> tuple[float, float] | None:
    """A (lat, lng) pair; countryinfo gives a list of pairs for a country with several seats: the first."""
    if not value:
        return None
    if isinstance(value[0], (list, tuple)):
        value = value[0]
    return (float(value[0]), float(value[1]))


@dataclass(frozen=True)
class Country:
    iso2: str
    iso3: str | None
    name: str
    population: int | None
    area_km2: float | None
    capital: str | None
    capital_latlng: tuple[float, float] | None
    latlng: tuple[float, float] | None


class CountryTable:
    """All countries of the extract, indexed by every normalised name, alias and code."""

    def __init__(self, path: Path):
        payload = json.loads(path.read_text(encoding="utf-8"))
        self.source: str = payload["source"]
        self.by_iso2: dict[str, Country] = {}
        self._index: dict[str, str] = {}
        ambiguous: set[str] = set()
        for rec in payload["countries"]:
            country = Country(rec["iso2"], rec.get("iso3"), rec["name"], rec.get("population"), rec.get("area_km2"),
                              _first_capital(rec.get("capital")), _point(rec.get("capital_latlng")),
                              _point(rec.get("latlng")))
            self.by_iso2[country.iso2] = country
        # Keys that are only ISO codes (not also a common alias such as "USA").
        named = {normalise_name(a) for names in EXTRA_ALIASES.values() for a in names}
        self._code_keys = {normalise_name(c) for rec in payload["countries"]
                           for c in (rec["iso2"], rec.get("iso3")) if c} - named
        # Official names win over aliases when both claim a key.
        for country in self.by_iso2.values():
            self._index[normalise_name(country.name)] = country.iso2
        for rec in payload["countries"]:
            for alias in [rec["iso2"], *rec["aliases"]]:
                key = normalise_name(alias)
                if not key or key in ambiguous:
                    continue
                owner = self._index.get(key)
                if owner is None:
                    self._index[key] = rec["iso2"]
                elif owner != rec["iso2"] and normalise_name(self.by_iso2[owner].name) != key:
                    ambiguous.add(key)
                    del self._index[key]

    def with_statistics(self) -> list[Country]:
        """The countries the statistics give both a population and an area for (those that
        ``countries_population`` and ``countries_area`` answer for), by ISO code."""
        return [c for _, c in sorted(self.by_iso2.items()) if c.population is not None and c.area_km2 is not None]

    def lookup(self, name: str, allow_codes: bool = True) -> Country | None:
        """The country called ``name``; ISO codes ("DE", "FRA") count only when ``allow_codes``."""
        key = normalise_name(name)
        if not allow_codes and key in self._code_keys:
            return None
        if key.startswith("the "):
            key = key[4:] if key not in self._index else key
        iso = self._index.get(key)
        return self.by_iso2.get(iso) if iso else None


@load_once
def country_table(world_dir: Path | None = None) -> CountryTable:
    return CountryTable(Path(world_dir or DEFAULT_WORLD_DIR) / EXTRACT_NAME)
