"""Tolerant comparison of values and tool arguments (the one place the tolerances live).

strings: equal after Unicode accent stripping, case folding and whitespace collapsing;
numbers: within 1 % relative (exact for 0); coordinates: within 1 km (haversine).
"""
from __future__ import annotations

import bisect
import functools
import itertools
import json
import math
import re
import unicodedata
from typing import Any

from pipeline.refs import is_reference  # an unresolved reference left in a golden argument

REL_TOL = 0.01
COORD_TOL_KM = 1.0
EARTH_RADIUS_KM = 6371.0088


def normalize_text(text: Any) -> str:
    s = unicodedata.normalize("NFKD", str(text))
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    return " ".join(s.casefold().split())


def as_number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, str):
        t = v.strip().replace(",", "")
        if re.fullmatch(r"[-+]?\d+(\.\d+)?([eE][-+]?\d+)?", t):
            return float(t)
    return None


def as_coords(v: Any) -> tuple[float, float] | None:
    if isinstance(v, dict):
        lat = next((v[k] for k in ("lat", "latitude") if k in v), None)
        lng = next((v[k] for k in ("lng", "lon", "long", "longitude") if k in v), None)
        if as_number(lat) is not None and as_number(lng) is not None:
            return as_number(lat), as_number(lng)
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(as_number(x) is not None for x in v) \
            and not any(isinstance(x, str) for x in v):
        return float(v[0]), float(v[1])
    return None


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def numbers_close(golden: float, actual: float, rel: float = REL_TOL) -> bool:
    if golden == 0:
        return abs(actual) <= 1e-9
    return abs(actual - golden) <= rel * abs(golden)


def values_match(golden: Any, actual: Any) -> bool:
    """Does ``actual`` equal ``golden`` within the house tolerances? References match anything."""
    if is_reference(golden):  # unresolved (no golden trace): any argument the agent passed counts
        return True
    gc = as_coords(golden)
    if gc is not None:
        if isinstance(actual, list) and len(actual) == 1:
            actual = actual[0]
        ac = as_coords(actual)
        return ac is not None and haversine_km(gc, ac) <= COORD_TOL_KM
    gn = as_number(golden)
    if gn is not None:
        an = as_number(actual)
        return an is not None and numbers_close(gn, an)
    if isinstance(golden, str):
        return isinstance(actual, str) and normalize_text(golden) == normalize_text(actual)
    if isinstance(golden, list):
        if not isinstance(actual, list):
            actual = [actual]
        return len(golden) == len(actual) and all(values_match(g, a) for g, a in zip(golden, actual))
    if isinstance(golden, dict):
        return isinstance(actual, dict) and all(values_match(v, actual.get(k)) for k, v in golden.items())
    return golden == actual


def args_match(golden: dict, actual: dict, defaults: dict | None = None) -> bool:
    """Every golden argument present in ``actual`` with a matching value; a golden argument the
    agent left out matches when it equals the tool's default. Extra agent arguments are ignored."""
    if not isinstance(actual, dict):
        return False
    defaults = defaults or {}
    for key, g in golden.items():
        if key not in actual:
            if key in defaults and values_match(g, defaults[key]):
                continue
            return False
        if not values_match(g, actual[key]):
            return False
    return True


_NUM_IN_TEXT = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def numbers_in(text: str) -> list[float]:
    return list(_numbers_cached(text))


@functools.lru_cache(maxsize=1 << 16)
def _numbers_cached(text: str) -> tuple[float, ...]:
    """Trials on the same legs see the same tool results again and again: parse each text once."""
    out = []
    for tok in _NUM_IN_TEXT.findall(text):
        try:
            out.append(float(tok.replace(",", "")))
        except ValueError:
            pass
    return tuple(out)


class TextIndex:
    """A text prepared once for many value look-ups: its numbers (in order and sorted) and
    its normalised form."""

    __slots__ = ("_norm", "_nums", "_sorted", "text")

    def __init__(self, text: str):
        self.text = text or ""
        self._nums = self._sorted = self._norm = None

    @classmethod
    def merged(cls, parts: list[TextIndex]) -> TextIndex:
        """One index over several texts, reusing what the parts already computed."""
        m = cls("\n".join(p.text for p in parts))
        m._nums = [n for p in parts for n in p.nums]
        return m

    @property
    def nums(self) -> list[float]:
        if self._nums is None:
            self._nums = numbers_in(self.text)
        return self._nums

    @property
    def sorted_nums(self) -> list[float]:
        if self._sorted is None:
            self._sorted = sorted(self.nums)
        return self._sorted

    @property
    def norm(self) -> str:
        if self._norm is None:
            self._norm = normalize_text(self.text)
        return self._norm


class PreparedValue:
    """A golden value classified once (coordinates, number with its tolerance band, or text)."""

    __slots__ = ("coords", "hi", "kind", "lo", "text")

    def __init__(self, golden: Any):
        self.coords = as_coords(golden)
        n = None if self.coords is not None else as_number(golden)
        self.lo = self.hi = None
        self.text = None
        if self.coords is not None:
            self.kind = "coords"
        elif n is not None:
            tol = REL_TOL * abs(n) if n != 0 else 1e-9
            self.kind, self.lo, self.hi = "number", n - tol, n + tol
        elif isinstance(golden, str):
            self.kind, self.text = "text", normalize_text(golden)
        elif isinstance(golden, (list, dict)):
            self.kind, self.text = "text", normalize_text(json.dumps(golden, ensure_ascii=False))
        else:
            self.kind = "none"

    def found_in(self, idx: TextIndex) -> bool:
        if not idx.text:
            return False
        if self.kind == "number":
            nums = idx.sorted_nums
            k = bisect.bisect_left(nums, self.lo)
            return k < len(nums) and nums[k] <= self.hi
        if self.kind == "text":
            return bool(self.text) and self.text in idx.norm
        if self.kind == "coords":
            nums = idx.nums
            return any(haversine_km(self.coords, (a, b)) <= COORD_TOL_KM for a, b in itertools.pairwise(nums)
                       if -90 <= a <= 90 and -180 <= b <= 180)
        return False


def value_in_text(golden: Any, text: str | TextIndex) -> bool:
    """Does a golden value appear in free text (a tool result, an argument, an answer)?"""
    idx = text if isinstance(text, TextIndex) else TextIndex(text)
    if isinstance(golden, PreparedValue):
        return golden.found_in(idx)
    if golden is None or not idx.text:
        return False
    gc = as_coords(golden)
    if gc is not None:
        nums = idx.nums
        return any(haversine_km(gc, (a, b)) <= COORD_TOL_KM for a, b in itertools.pairwise(nums)
                   if -90 <= a <= 90 and -180 <= b <= 180)
    gn = as_number(golden)
    if gn is not None:
        tol = REL_TOL * abs(gn) if gn != 0 else 1e-9
        nums = idx.sorted_nums
        k = bisect.bisect_left(nums, gn - tol)
        return k < len(nums) and nums[k] <= gn + tol
    if isinstance(golden, str):
        g = normalize_text(golden)
        return bool(g) and g in idx.norm
    if isinstance(golden, (list, dict)):
        return normalize_text(json.dumps(golden, ensure_ascii=False)) in idx.norm
    return False


def is_scalar_value(v: Any) -> bool:
    """Values intermediate accuracy can look for (numbers, text, coordinates)."""
    return as_number(v) is not None or isinstance(v, str) and v.strip() != "" or as_coords(v) is not None
