"""Turn an infobox value as a reader sees it into a typed value: number + canonical unit, date, year.

Both the wikitext importers and the ZIM (HTML) importer end with a label and a plain-text
value; this module decides the field's ``kind`` and normalises numbers so that downstream
question generators can compare them ("2,731,571" and "2731571" are the same number, an
area in square miles is stored in km2, a height in feet in metres).
"""
from __future__ import annotations

import datetime
import re

from pipeline.snapshot.page import InfoboxField

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9,
    "oct": 10, "nov": 11, "dec": 12,
}
_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))

SQ_MI_TO_KM2 = 2.589988110336
FT_TO_M = 0.3048
MI_TO_KM = 1.609344
ACRE_TO_KM2 = 0.0040468564224
HA_TO_KM2 = 0.01

# A number as written in an infobox: 2,731,571 / 2731571 / 467.63 / −3 / 1 234 (thin spaces).
_NUMBER = r"[-−–]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
_SCALES = {"thousand": 1e3, "million": 1e6, "mln": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}
_CURRENCY_SYMBOLS = [("US$", "USD"), ("C$", "CAD"), ("A$", "AUD"), ("$", "USD"), ("€", "EUR"), ("£", "GBP"),
                     ("¥", "JPY"), ("₹", "INR")]
_CURRENCY_CODES = {"USD", "EUR", "GBP", "JPY", "CAD", "AUD", "CHF", "CNY", "INR", "RUB"}

# Unit words found right after a number in the text, mapped to (canonical unit, factor).
_TEXT_UNITS: list[tuple[str, str, float]] = [
    (r"km2|km²|sq\.? ?km|square kilomet(?:er|re)s?", "km2", 1.0),
    (r"sq\.? ?mi|mi2|mi²|square miles?", "km2", SQ_MI_TO_KM2),
    (r"ha|hectares?", "km2", HA_TO_KM2),
    (r"acres?", "km2", ACRE_TO_KM2),
    (r"km|kilomet(?:er|re)s?", "km", 1.0),
    (r"mi|miles?", "km", MI_TO_KM),
    (r"m|met(?:er|re)s?", "m", 1.0),
    (r"ft|feet|foot", "m", FT_TO_M),
    (r"cm", "m", 0.01),
    (r"mm", "mm", 1.0),
    (r"kg|kilograms?", "kg", 1.0),
    (r"lb|lbs|pounds?", "kg", 0.45359237),
    (r"°C|degC", "degC", 1.0),
    (r"%|per ?cent", "%", 1.0),
    (r"min|mins|minutes?", "min", 1.0),
    (r"h|hrs?|hours?", "min", 60.0),
]
_TEXT_UNIT_RES = [(re.compile(r"\s*(?:" + pat + r")(?![A-Za-z0-9²])", re.IGNORECASE), unit, factor)
                  for pat, unit, factor in _TEXT_UNITS]

# Parameter-name tokens marking codes, identifiers and layout even when the value looks numeric.
_TEXT_TOKENS = {
    "code", "codes", "iso", "cctld", "website", "url", "homepage", "image", "img", "caption", "map",
    "mapsize", "logo", "flag", "seal", "coat", "motto", "anthem", "zip", "postal", "postcode", "phone",
    "calling", "utc", "offset", "timezone", "zone", "tz", "footnote", "footnotes", "ref", "refs", "note",
    "notes", "blank", "signature", "alt", "size", "imagesize", "jersey", "isbn", "issn", "oclc", "imdb",
    "id", "pushpin", "style", "color", "colour", "width", "label", "type", "link", "shield", "symbol",
    "title", "name", "dst", "rank", "coordinates", "region", "dial", "plate", "class",
}


def _is_text_name(name: str) -> bool:
    tokens = re.split(r"[_\s-]+", re.sub(r"\d+$", "", name.lower()))
    return any(t in _TEXT_TOKENS for t in tokens)


_DATE_NAMES = re.compile(r"(date|born|birth|died|death|founded|foundation|established|opened|released|"
                         r"release|formed|dissolved|closed|built|completed|began|ended|start|end|published|adopted|recorded|"
                         r"premiered?|launched|discovered|inaugurated|signed|ratified|incorporated|settled|"
                         r"commissioned|decommissioned|retired|debut|elected)", re.IGNORECASE)
_YEAR_NAMES = re.compile(r"(year|_as_of|as_of|since|active|date|founded|established|built|formed)", re.IGNORECASE)


def label_for(name: str) -> str:
    """Human label for a template parameter: ``population_total`` -> ``population total``."""
    return " ".join(name.replace("_", " ").replace("-", " ").split())


def parse_number(text: str) -> float | None:
    """The first number in ``text`` with thousands separators removed ("2,731,571" -> 2731571)."""
    m = _NUMBER_RE.search(text)
    if not m:
        return None
    raw = m.group(0).replace(",", "").replace("−", "-").replace("–", "-")
    try:
        return float(raw)
    except ValueError:
        return None


def _clean_number_text(text: str) -> str:
    text = text.replace("\u00a0", " ").replace("\u2009", " ").replace("\u202f", " ")
    # "1 234 567" written with (thin) spaces as thousands separators
    return re.sub(r"(?<=\d) (?=\d{3}(?!\d))", ",", text.strip())


def parse_date(text: str) -> str | None:
    """An ISO date (YYYY-MM-DD, YYYY-MM or YYYY) from the usual English date spellings."""
    t = text.replace("\u00a0", " ")
    m = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", t)
    if m and _valid(int(m.group(1)), int(m.group(2)), int(m.group(3))):
        return m.group(0)
    m = re.search(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}}),?\s+(\d{{3,4}})\b", t, re.IGNORECASE)
    if m:
        y, mo, d = int(m.group(3)), MONTHS[m.group(1).lower()], int(m.group(2))
        if _valid(y, mo, d):
            return f"{y:04d}-{mo:02d}-{d:02d}"
    m = re.search(rf"\b(\d{{1,2}})\s+({_MONTH_RE})\.?,?\s+(\d{{3,4}})\b", t, re.IGNORECASE)
    if m:
        y, mo, d = int(m.group(3)), MONTHS[m.group(2).lower()], int(m.group(1))
        if _valid(y, mo, d):
            return f"{y:04d}-{mo:02d}-{d:02d}"
    m = re.search(rf"\b({_MONTH_RE})\.?,?\s+(\d{{4}})\b", t, re.IGNORECASE)
    if m:
        return f"{int(m.group(2)):04d}-{MONTHS[m.group(1).lower()]:02d}"
    return None


def _valid(y: int, mo: int, d: int) -> bool:
    try:
        datetime.date(y, mo, d)
        return True
    except ValueError:
        return False


def iso_date(year, month=None, day=None) -> str | None:
    """ISO text from template parameters ({{birth date|1930|9|23}}); None when not a date."""
    try:
        y = int(str(year).strip())
    except (TypeError, ValueError):
        return None
    if not 0 < y < 10000:
        return None
    try:
        mo = int(str(month).strip()) if month not in (None, "") else None
    except ValueError:
        mo = MONTHS.get(str(month).strip().lower())
    if mo is None or not 1 <= mo <= 12:
        return f"{y:04d}"
    try:
        d = int(str(day).strip()) if day not in (None, "") else None
    except ValueError:
        d = None
    if d is None or not _valid(y, mo, d):
        return f"{y:04d}-{mo:02d}"
    return f"{y:04d}-{mo:02d}-{d:02d}"


def unit_from_name(name: str) -> tuple[str | None, float]:
    """Canonical unit implied by an infobox parameter name, with the factor to reach it."""
    n = name.lower()
    if "density" in n:
        if n.endswith(("sq_mi", "sqmi", "_mi2")):
            return "people/km2", 1 / SQ_MI_TO_KM2
        return "people/km2", 1.0
    if n.endswith(("_sq_mi", "_sqmi", "_mi2")):
        return "km2", SQ_MI_TO_KM2
    if n.endswith(("_km2", "_sq_km", "_km²")):
        return "km2", 1.0
    if n.endswith(("_acre", "_acres")):
        return "km2", ACRE_TO_KM2
    if n.endswith("_ha"):
        return "km2", HA_TO_KM2
    if n.endswith("_ft"):
        return "m", FT_TO_M
    if n.endswith("_m") or n in ("elevation", "height", "prominence"):
        return "m", 1.0
    if n.endswith("_km"):
        return "km", 1.0
    if n.endswith("_mi"):
        return "km", MI_TO_KM
    if n.startswith("area") or n == "area":
        return "km2", 1.0
    if n.startswith("percent") or n.endswith(("percent", "_pct")) or "_percent" in n:
        return "%", 1.0
    if "population" in n or n.startswith("pop_") or n in ("pop", "inhabitants", "residents"):
        if "rank" in n or "year" in n or "as_of" in n or "date" in n:
            return None, 1.0
        return "people", 1.0
    if n in ("hdi", "gini"):
        return None, 1.0
    return None, 1.0


def _unit_after(text: str, end: int) -> tuple[str | None, float, int]:
    rest = text[end:]
    for rx, unit, factor in _TEXT_UNIT_RES:
        m = rx.match(rest)
        if m:
            return unit, factor, end + m.end()
    return None, 1.0, end


# Words that may follow a measurement without making the value a phrase.
_TRAILING_OK = re.compile(r"\s*(?:\(|\[|$|,|;|/|above|below|amsl|asl|est|estimated|approx|people|"
                          r"inhabitants|residents|as of|in \d{4}|\d{4}|per|total|census|metro|urban|"
                          r"city|sq|square|km|mi|m\b|ft\b)", re.IGNORECASE)


def parse_quantity(name: str, text: str) -> tuple[float, str | None] | None:
    """The value of a numeric infobox field in its canonical unit, or None when it is not numeric.

    The value must start with the number (after an optional currency sign, "c." or "~"):
    "2,615,060 (1st)" is a number, "179th" and "as of 2011: 12" are not.
    """
    t = _clean_number_text(text)
    t = re.sub(r"^(?:approx(?:imately|\.)?|about|c\.|ca\.|circa|~|≈|est\.)\s*", "", t, flags=re.IGNORECASE)
    currency = None
    for sym, code in _CURRENCY_SYMBOLS:
        if t.startswith(sym):
            currency, t = code, t[len(sym):].lstrip()
            break
    if currency is None:
        m = re.match(r"^([A-Z]{3})\s*(?=\d)", t)
        if m and m.group(1) in _CURRENCY_CODES:
            currency, t = m.group(1), t[m.end():]
    m = re.match(_NUMBER, t)
    if not m:
        return None
    value = parse_number(m.group(0))
    if value is None:
        return None
    end = m.end()
    after = t[end:]
    if re.match(r"(?:st|nd|rd|th)\b|[A-Za-z]*\d|\s?[-–—/:]\s?\d|\.\d", after):  # ordinal, code, date, version
        return None
    sm = re.match(r"\s*(thousand|million|billion|trillion|mln|bn)\b", after, re.IGNORECASE)
    if sm:
        value = _tidy(value * _SCALES[sm.group(1).lower()])
        end += sm.end()
        after = t[end:]
    if currency is None:
        cm = re.match(r"\s*([A-Z]{3})\b", after)
        if cm and cm.group(1) in _CURRENCY_CODES:
            currency = cm.group(1)
    if currency:
        return value, currency
    unit, factor, unit_end = _unit_after(t, end)
    if not _TRAILING_OK.match(t[unit_end:]):
        return None  # "49% Andorran", "3 Grammy Awards": a phrase, not a measurement
    if unit is None:
        unit, factor = unit_from_name(name)
    elif unit in ("km2",) and "density" in name.lower():
        unit, factor = "people/km2", (1 / factor if factor != 1.0 else 1.0)
    return (_tidy(value * factor) if factor != 1.0 else value), unit


def _tidy(x: float) -> float:
    """Round away float noise from unit conversion so equal inputs give equal bytes."""
    r = float(f"{x:.12g}")
    return float(int(r)) if r.is_integer() and abs(r) < 1e15 else r


def clean_debris(text: str) -> str:
    """Markup debris a rendered value keeps: doubled commas and spaces before punctuation left where
    a template or a link was dropped ("Washington, D.C.,, United States")."""
    text = re.sub(r"\s*,(?:\s*,)+", ",", text)
    text = re.sub(r"\s+([,;.])", r"\1", text)
    return text.strip(" ,;")


def classify(name: str, text: str, *, date_hint: str | None = None,
             coords_hint: tuple[float, float] | None = None,
             quantity_hint: tuple[float, str | None] | None = None,
             label: str | None = None) -> InfoboxField:
    """Build an ``InfoboxField``: decide kind (number|date|year|text|coords) and normalise the value.

    Hints come from templates the wikitext renderer understood ({{birth date}}, {{coord}},
    {{convert}}) and win over guessing from the text.
    """
    label = label if label is not None else label_for(name)
    text = clean_debris(" ".join(text.split()))
    field = InfoboxField(name=name, label=label, text=text, kind="text")
    if coords_hint is not None:
        field.kind = "coords"
        return field
    if date_hint is not None:
        field.kind = "year" if len(date_hint) == 4 else "date"
        field.date = date_hint
        return field
    if not text or _is_text_name(name):
        return field
    if quantity_hint is not None:
        field.kind, field.number, field.unit = "number", _tidy(quantity_hint[0]), quantity_hint[1]
        return field
    date_like = bool(_DATE_NAMES.search(name) or _DATE_NAMES.search(label))
    if date_like or re.search(rf"\b({_MONTH_RE})\b", text, re.IGNORECASE):
        iso = parse_date(text)
        if iso and (date_like or len(text) <= 40):
            field.kind = "date" if len(iso) > 4 else "year"
            field.date = iso
            return field
    year = re.match(r"^(?:c\.\s*|ca\.\s*)?(\d{3,4})(?:\b(?![,.]\d)|$)", text)
    if year and (date_like or _YEAR_NAMES.search(name)) and 0 < int(year.group(1)) <= 2100:
        rest = text[year.end():].strip()
        if not rest or rest.startswith(("(", "[", ";", ",")) or date_like:
            field.kind, field.date = "year", f"{int(year.group(1)):04d}"
            return field
    quantity = parse_quantity(name, text)
    if quantity is not None:
        field.kind, field.number, field.unit = "number", quantity[0], quantity[1]
    return field
