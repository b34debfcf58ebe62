"""Detour transforms: analytical functions an agent applies to an earlier value.

Each transform declares the value type it takes and its valid input domain; a transform
whose output would collapse to 0 or 1 (no information left for the finish line) is
rejected by ``apply_detour``. The source of each function is exported as the AAR
``reason_code`` so the public tools can re-run it.
"""
from __future__ import annotations

import datetime as _dt
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True


def _prime_factors(n: int) -> list[int]:
    out, d = [], 2
    while d * d <= n:
        while n % d == 0:
            out.append(d)
            n //= d
        d += 1
    if n > 1:
        out.append(n)
    return out


def next_prime(n: int) -> int:
    """The smallest prime strictly greater than n."""
    m = n + 1
    while not _is_prime(m):
        m += 1
    return m


def num_divisors(n: int) -> int:
    count = 0
    for d in range(1, int(n ** 0.5) + 1):
        if n % d == 0:
            count += 1 if d * d == n else 2
    return count


def sum_prime_factors(n: int) -> int:
    """Sum of the prime factors counted with multiplicity (12 -> 2+2+3 = 7)."""
    return sum(_prime_factors(n))


def largest_prime_factor(n: int) -> int:
    return max(_prime_factors(n))


_ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def roman_numeral_letter_count(n: int) -> int:
    letters = 0
    for value, symbol in _ROMAN:
        count, n = divmod(n, value)
        letters += count * len(symbol)
    return letters


def binary_1bit_count(n: int) -> int:
    return (n).bit_count()


def digit_reversal(n: int) -> int:
    return int(str(n)[::-1])


def digital_root(n: int) -> int:
    n = abs(int(n))
    return 0 if n == 0 else 1 + (n - 1) % 9


def digit_sum(n: int) -> int:
    return sum(int(c) for c in str(abs(int(n))))


def day_of_week(iso_date: str) -> int:
    """ISO weekday of a date: Monday = 1 ... Sunday = 7."""
    return _dt.date.fromisoformat(iso_date).isoweekday()


def leap_years_to_2000(year: int) -> int:
    """How many leap years lie between the year and 2000, both included."""
    lo, hi = sorted((int(year), 2000))
    return sum(1 for y in range(lo, hi + 1) if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0)


_SCRABBLE = {**dict.fromkeys("aeilnorstu", 1), **dict.fromkeys("dg", 2), **dict.fromkeys("bcmp", 3),
             **dict.fromkeys("fhvwy", 4), "k": 5, **dict.fromkeys("jx", 8), **dict.fromkeys("qz", 10)}


def scrabble_score(text: str) -> int:
    return sum(_SCRABBLE.get(c, 0) for c in text.lower())


def vowel_count(text: str) -> int:
    return sum(1 for c in text.lower() if c in "aeiou")


def alpha_position_first_letter(text: str) -> int:
    for c in text.lower():
        if "a" <= c <= "z":
            return ord(c) - ord("a") + 1
    raise ValueError("no Latin letter")


@dataclass(frozen=True)
class Detour:
    name: str
    takes: str                       # number | date | text
    fn: Callable[[Any], int]
    domain: Callable[[Any], bool]
    phrase: str                      # clue wording; {ref} is the earlier result

    @property
    def code(self) -> str:
        return inspect.getsource(self.fn)


def _int_between(lo: int, hi: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _word(v: Any) -> bool:
    return isinstance(v, str) and sum(c.isalpha() for c in v) >= 3


# before the Gregorian calendar (1582) a year's leap days and a date's weekday depend on the calendar a
# reader reckons in (Julian, as then, or proleptic Gregorian): 1400 and 1500 are leap years in one and
# not the other (blind race 8, R14: "from 1351 to 2000" gives 158 or 163). Such values are not asked.
GREGORIAN_FROM = 1583


def _date(v: Any) -> bool:
    try:
        return _dt.date.fromisoformat(v).year >= GREGORIAN_FROM
    except (TypeError, ValueError):
        return False


DETOURS: dict[str, Detour] = {d.name: d for d in [
    Detour("next_prime", "number", next_prime, _int_between(2, 10_000_000),
           "the smallest prime number greater than {ref}"),
    Detour("num_divisors", "number", num_divisors, _int_between(4, 10_000_000),
           "how many positive whole numbers divide {ref} exactly"),
    Detour("sum_prime_factors", "number", sum_prime_factors, _int_between(4, 10_000_000),
           "the sum of the prime factors of {ref}, counted with multiplicity"),
    Detour("largest_prime_factor", "number", largest_prime_factor, _int_between(4, 10_000_000),
           "the largest prime factor of {ref}"),
    Detour("roman_numeral_letter_count", "number", roman_numeral_letter_count, _int_between(1, 3999),
           "how many letters it takes to write {ref} in Roman numerals"),
    Detour("binary_1bit_count", "number", binary_1bit_count, _int_between(3, 10 ** 12),
           "how many 1 bits there are when {ref} is written in binary"),
    Detour("digit_reversal", "number", digit_reversal, lambda v: _int_between(10, 10 ** 12)(v) and v % 10 != 0,
           "{ref} with its digits written in reverse order"),
    Detour("digital_root", "number", digital_root, _int_between(10, 10 ** 15),
           "the digital root of {ref} (add its digits repeatedly until one digit remains)"),
    Detour("digit_sum", "number", digit_sum, _int_between(10, 10 ** 15),
           "the sum of the digits of {ref}"),
    Detour("day_of_week", "date", day_of_week, _date,
           "the weekday of {ref} as a number (Monday = 1 ... Sunday = 7)"),
    Detour("leap_years_to_2000", "number", leap_years_to_2000, _int_between(GREGORIAN_FROM, 2100),
           "how many leap years there are between 2000 and {ref}, both years included"),
    Detour("scrabble_score", "text", scrabble_score, _word,
           "the Scrabble score of {ref} (letters only, standard English tile values)"),
    Detour("vowel_count", "text", vowel_count, _word,
           "how many vowels (a, e, i, o, u) appear in {ref}"),
    Detour("alpha_position_first_letter", "text", alpha_position_first_letter, _word,
           "the alphabet position of the first letter of {ref} (A = 1 ... Z = 26)"),
]}


class DetourError(ValueError):
    """The input is outside the transform's domain, or the output carries no information."""


def apply_detour(name: str, value: Any) -> int:
    detour = DETOURS[name]
    if not detour.domain(value):
        raise DetourError(f"{name}: input {value!r} outside its domain")
    out = detour.fn(value)
    if out in (0, 1):
        raise DetourError(f"{name}: output {out} collapses the value")
    return out
