"""Small geographic helpers shared by the offline world: distances, name normalisation, a geocoding answer."""
from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass, field

EARTH_RADIUS_KM = 6371.0088


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance on the mean Earth sphere."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


_NON_WORD = re.compile(r"[^0-9a-z]+")


def strip_accents(text: str) -> str:
    """``text`` with its letters' accents dropped ("Zaïre" -> "Zaire"), case and all else kept."""
    return "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))


@functools.lru_cache(maxsize=1 << 18)   # pure, and asked of the same names hundreds of thousands of times a run
def normalise_name(text: str) -> str:
    """Case-, accent- and punctuation-insensitive form of a place name ("Saint-Étienne" -> "saint etienne")."""
    if text.isascii():   # most names: no accents to strip (the same result, five times faster)
        return _NON_WORD.sub(" ", text.lower().replace("'", "")).strip()
    stripped = strip_accents(text.casefold())
    stripped = stripped.replace("ß", "ss").replace("ø", "o").replace("æ", "ae").replace("đ", "d").replace("ł", "l")
    stripped = stripped.replace("'", "").replace("\u2019", "").replace("\u02bc", "")
    return _NON_WORD.sub(" ", stripped).strip()


@dataclass(frozen=True)
class PlaceHit:
    """One geocoding answer."""

    name: str
    lat: float
    lng: float
    country_code: str
    place_type: str                 # country | city | airport | poi | place
    formatted_address: str
    source: str
    provenance: str = "offline-data"
    population: int | None = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)
