"""The number and unit vocabulary of clues: ordinals and counts ("the third sentence", "two
countries"), what a number in a sentence is in a clue's words ("a year", "a measurement in square
kilometres", ``number_kinds``), the numbers a careful reader may count (``doubtful_numbers``), and
the pattern of a number in text (``NUMBER_RE``, shared with ``execute.numbers_in`` so positions agree).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# a number as a sentence writes it ("1,234", "-3.5", "1990"); execute.numbers_in lists them in this order
NUMBER_RE = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])-?\d+(?:\.\d+)?(?![\w])")

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
            "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
            "twentieth")
COUNTS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
SCALES = ("thousand", "million", "billion", "trillion")
CURRENCIES = {"US$": "US dollars", "C$": "Canadian dollars", "A$": "Australian dollars", "$": "dollars", "£": "pounds",
              "€": "euros", "¥": "yen", "₹": "rupees"}
# unit words after a number, longest first, with the name a clue gives them
UNITS = (
    (r"square kilomet(?:re|er)s|sq\.? ?km|km2|km²", "square kilometres"),
    (r"square miles|sq\.? ?mi|mi2|mi²", "square miles"),
    (r"square met(?:re|er)s|m2|m²", "square metres"),
    (r"km/h|kilomet(?:re|er)s per hour", "kilometres per hour"),
    (r"mph|miles per hour", "miles per hour"),
    (r"kilomet(?:re|er)s|km", "kilometres"),
    (r"centimet(?:re|er)s|cm", "centimetres"),
    (r"millimet(?:re|er)s|mm", "millimetres"),
    (r"met(?:re|er)s|m", "metres"),
    (r"miles|mi", "miles"),
    (r"feet|ft", "feet"),
    (r"inches", "inches"),
    (r"kilograms|kg", "kilograms"),
    (r"tonnes|tons", "tonnes"),
    (r"hectares|ha", "hectares"),
    (r"acres", "acres"),
    (r"°C|°F|degrees", "degrees"),
    (r"megawatts|MW", "megawatts"),
    (r"lit(?:re|er)s", "litres"),
)
UNIT = re.compile(r"\s?(?:" + "|".join(f"(?P<u{i}>{p})" for i, (p, _) in enumerate(UNITS)) + r")(?![\w²])")
IRREGULAR_PLURALS = {"people", "children", "men", "women", "staff", "personnel", "cattle", "sheep", "fish", "deer",
                     "police", "aircraft", "crew", "troops", "alumni", "faculty", "media", "data"}
NOT_NOUNS = {"was", "has", "is", "its", "this", "thus", "as", "always", "perhaps", "across", "towards", "besides", "less",
             "unless", "whereas", "plus", "minus", "versus", "does", "goes", "his", "hers", "ours", "yours", "theirs"}
NOT_MODIFIERS = {"and", "or", "of", "in", "to", "the", "a", "an", "at", "by", "for", "from", "on", "with", "than", "that",
                 "which", "who", "more", "less", "other", "such", "were", "are", "had", "have", "has", "was", "is",
                 "per", "into", "over", "under", "after", "before", "since", "during", "between", "about"}


def ordinal(n: int) -> str:
    if 1 <= n <= len(ORDINALS):
        return ORDINALS[n - 1]
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def ordinal_value(word: str) -> int | None:
    if word in ORDINALS:
        return ORDINALS.index(word) + 1
    m = re.fullmatch(r"(\d+)(?:st|nd|rd|th)", word)
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


def count_word(n: int) -> str:
    return COUNTS[n - 1] if 1 <= n <= len(COUNTS) else str(n)


def count_value(word: str) -> int | None:
    if word in COUNTS:
        return COUNTS.index(word) + 1
    return int(word) if word.isdigit() else None


# ---- what a number in a sentence is -------------------------------------------------------------
@dataclass(frozen=True)
class NumberKind:
    """What a number in a sentence is, in a clue's words: ``singular`` ("a year", "a number of
    employees", "a measurement in square kilometres") and ``plural`` ("years", ...)."""
    cls: str            # year | day | age | percentage | population | money | measurement | count | scaled | number
    singular: str
    plural: str

    @property
    def question(self) -> str:
        scaled = re.search(r"\bin (thousands|millions|billions|trillions)$", self.singular)
        if scaled and self.cls in ("count", "population", "scaled"):
            return f"how many {scaled.group(1)}"
        return {"year": "which year", "day": "which day", "percentage": "what percentage", "age": "what age",
                "count": "how many", "population": "how many people"}.get(self.cls, "what number")


# a word naming what a number labels rather than counts: "the group 11 elements", "Route 66 motels",
# "Chapter 11 filings" (blind race 29, R03: "gives a number of elements" of the group 11 elements)
LABEL_WORDS = ("group", "groups", "chapter", "section", "article", "articles", "route", "highway", "interstate",
               "type", "class", "category", "level", "grade", "division", "book", "volume", "part", "phase",
               "stage", "series", "number", "no", "track", "season", "episode", "act", "scene", "psalm", "verse",
               "line", "platform", "gate", "unit", "block", "ward", "district", "zone", "sector", "pier", "flight",
               "squadron", "regiment", "battalion", "brigade", "corps", "army", "fleet", "wing", "formula", "model",
               "mark", "version", "tier", "rank", "row", "amendment", "rule", "step", "round", "day", "week",
               "year", "game", "match", "opus", "op", "channel", "lane", "terminal", "runway", "bus", "apollo")
_LABEL_BEFORE = re.compile(r"\b(?:" + "|".join(LABEL_WORDS) + r")\.?\s$", re.IGNORECASE)
_NAME_BEFORE = re.compile(r"(?<=\S\s)([A-Z][\w-]*)\s$")   # a capitalised word, not the sentence's first


def labels(before: str, raw: str = "") -> bool:
    """Is the number ``raw`` after ``before`` a label ("group 11", "Apollo 11", "World War 2") rather than
    a count? After a name only when written without thousands separators ("Douglas 1,376,957 votes" counts)."""
    if _LABEL_BEFORE.search(before) or re.search(r"[A-Za-z]-$", before):
        return True   # ... or joined to a word by a hyphen: "the omega-3 fatty acids" (blind race 30, R23)
    name = _NAME_BEFORE.search(before)
    return bool(name) and name.group(1).lower() not in NOT_MODIFIERS and "," not in raw


def _plural_noun(word: str) -> bool:
    return word in IRREGULAR_PLURALS or (len(word) >= 4 and word.endswith("s") and word not in NOT_NOUNS
                                         and not word.endswith(("ss", "us", "is", "ous")))


def number_kinds(sentence: str) -> list[tuple[str, NumberKind]]:
    """Every number of a sentence (in the order ``execute.numbers_in`` lists them) with what it is."""
    return [(m.group(0), kind_of_number(sentence, m.start(), m.end())) for m in NUMBER_RE.finditer(sentence)]


_SCALE_AFTER = re.compile(r"\s(?:" + "|".join(SCALES) + r")\b")


def scaled_numbers(sentence: str) -> set[int]:
    """The indices (in ``number_kinds``'s order) of the numbers a scale word follows ("over 140 million"):
    asked for "a number" of such a sentence, a reader may answer 140 or 140,000,000 (blind race 17, R21),
    so such a number is asked only by what it is ("a population in millions: how many millions?")."""
    return {i for i, m in enumerate(NUMBER_RE.finditer(sentence)) if _SCALE_AFTER.match(sentence, m.end())}


def unit_name(match: re.Match) -> str:
    """The name (``UNITS``') of the unit a ``UNIT`` match found."""
    return next(UNITS[int(k[1:])][1] for k, v in match.groupdict().items() if v is not None)


def kind_of_number(sentence: str, start: int, end: int) -> NumberKind:
    """What the number at ``sentence[start:end]`` is, read from the words around it."""
    raw, before, after = sentence[start:end], sentence[:start], sentence[end:]
    if re.match(r"\s?(?:%|percent\b|per cent\b)", after):
        return NumberKind("percentage", "a percentage", "percentages")
    scale = re.match(r"\s(" + "|".join(SCALES) + r")\b", after)
    rest = after[scale.end():] if scale else after
    in_scale = f"{scale.group(1)}s of " if scale else ""
    currency = re.search(r"(US\$|C\$|A\$|\$|£|€|¥|₹)\s?$", before)
    if currency:
        name = CURRENCIES[currency.group(1)]
        return NumberKind("money", f"an amount in {in_scale}{name}", f"amounts in {in_scale}{name}")
    unit = UNIT.match(rest)
    if unit:
        name = unit_name(unit)
        return NumberKind("measurement", f"a measurement in {in_scale}{name}", f"measurements in {in_scale}{name}")
    if re.search(r"\bpopulation (?:of|was|is|at)\s(?:(?:about|around|approximately|nearly|over|some|roughly|almost)\s)?$",
                 before):
        return NumberKind("population", f"a population{in_scale and ' in ' + scale.group(1) + 's'}",
                          f"populations{in_scale and ' in ' + scale.group(1) + 's'}")
    if not scale and (re.search(r"\b(?:age of|aged)\s$", before) or re.match(r"\s?-?years?[- ]old\b", after)):
        return NumberKind("age", "an age", "ages")
    if not scale and re.match(r"\s(?:BC|BCE)\b", after):
        return NumberKind("year", "a year BC", "years BC")
    if not scale and (re.match(r"\s(?:AD|CE)\b", after) or re.search(r"\bAD\s$", before)):
        return NumberKind("year", "a year", "years")
    words = re.match(r"\s([a-z][a-z-]+)(?:\s([a-z][a-z-]+))?", rest)
    noun = None
    if words and _plural_noun(words.group(1)):
        noun = words.group(1)
    elif words and words.group(2) and words.group(1) not in NOT_MODIFIERS and _plural_noun(words.group(2)):
        noun = f"{words.group(1)} {words.group(2)}"
    if noun and not labels(before, raw):
        in_scale = f" in {scale.group(1)}s" if scale else ""
        return NumberKind("count", f"a number of {noun}{in_scale}", f"numbers of {noun}{in_scale}")
    if scale:
        return NumberKind("scaled", f"a number in {scale.group(1)}s", f"numbers in {scale.group(1)}s")
    if re.fullmatch(r"1\d{3}|20\d{2}", raw):
        return NumberKind("year", "a year", "years")
    if re.fullmatch(r"[1-9]|[12]\d|3[01]", raw) and (re.search(r"\b(?:" + "|".join(MONTHS) + r")\s$", before)
                                                    or re.match(r"\s(?:" + "|".join(MONTHS) + r")\b", after)):
        return NumberKind("day", "a day of a month", "days of a month")
    return NumberKind("number", "a number", "numbers")


# ---- numbers a careful reader may count ------------------------------------------------------------------
_NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "hundreds", "thousand", "thousands", "million", "millions", "billion", "billions", "dozen", "dozens", "half"]
_MONTHS = "|".join(MONTHS)
DOUBTFUL_NUMBER = re.compile(r"(?<![\d.,]\s)(?<![\d.,])\b(?:" + "|".join(_NUMBER_WORDS) + r")\b"
                             r"|\b\d+(?:st|nd|rd|th|s)\b|[½¼¾⅓⅔]"
                             # a full date: its day and year are one date to some readers, two numbers to others
                             rf"|\b\d{{1,2}} (?:{_MONTHS}) \d{{3,4}}\b|\b(?:{_MONTHS}) \d{{1,2}}, \d{{3,4}}\b"
                             # a quantity and its conversion: one distance to some readers, two numbers to
                             # others ("178 miles (286 km)": blind race 10, R22's two racers; hyphened, "a
                             # 20-kilometre-long (12-mile) coast": race 13, R17; up to four words of unit and
                             # a "/" in the bracket, "25.5 inhabitants per square kilometre (66/sq mi)": race
                             # 14, R03)
                             # (a unit's power may be written as a digit: "2,780,085 km2 (1,073,397 mi2)", race 18, R08)
                             r"|\d[\d,.]*[\s-]?(?:[^\W\d_]+(?:²|³|[23](?![\d,.]))?[\s-]?|°\s?[CF]?\s?){1,4}\(\s*"
                             r"(?:about |approximately |approx\. ?|c\. ?|ca\. ?|~)?[$€£]?\d[\d,.]*[\s/-]?(?:[^\W\d_]|°|%)[^()]*\)"
                             # a number made a word's part by a hyphen: "a 3-way, 1,216 km long highway" gives
                             # one number to some readers, two to others (blind race 13, R14)
                             r"|(?<![\w.,-])\d[\d,.]*-[^\W\d_]+"
                             # a number a hyphen makes part of a name: "the WD-2's mask" gives a number to
                             # some readers, none to others (blind race 36, R22: "the 2 in WD-2"; "B-52")
                             r"|[^\W\d_]-\d[\d,.]*"
                             # a code of digits and letters: "Codes 2016 to 7E16" (the hexadecimal 20 and 7E, their
                             # base written as a subscript and flattened), read as a year and 7 x 10^16 by some
                             # readers, as codes by others (blind race 49, R16: "gives a year", 2016)
                             r"|\b\d+[^\W\d_]+\d\w*|\b0x[0-9A-Fa-f]+\b")


def doubtful_numbers(sentence: str) -> list[str]:
    """What a careful reader may count as a number of a sentence besides its numerals (issue 21: "one of
    the five pillars ... lasts 29 to 30 days" gives four numbers to some readers, two to others):
    numbers written as words, ordinals and decades written with digits ("19th", "1990s"), a number joined
    to a word by a hyphen ("3-way", "5-year"), fractions, full dates ("1 November 1956": one date or two
    numbers), a quantity with its conversion ("178 miles (286 km)": one distance or two numbers).
    A clue never counts the numbers of such a sentence."""
    return [m.group(0) for m in DOUBTFUL_NUMBER.finditer(sentence)]


SCALED_WITH_OTHERS = re.compile(r"\d\s(?:" + "|".join(SCALES) + r")\b")
SCALE_WORDS = re.compile(r"\b(?:" + "|".join(SCALES) + r")s?\b")


def counts_safely(sentence: str) -> bool:
    """May a clue count this sentence's numbers ("gives two numbers: the first")? Only where it gives
    one to three, none a reader may count differently (``doubtful_numbers``) and no scale word beside
    another number ("13 million people ... 1.3 billion": 13 or 13,000,000 where asked by rank?)."""
    n = len(NUMBER_RE.findall(sentence))
    return (1 <= n <= 3 and not doubtful_numbers(sentence)
            and not (n > 1 and SCALED_WITH_OTHERS.search(sentence)))


_WORD_NUMBER = re.compile(r"\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


def units_after_words(sentence: str) -> set[str]:
    """The units (``UNITS``' names) a number written as a word stands before: Stonehenge's "each around 13
    feet (4.0 m) high, seven feet (2.1 m) wide" gives two measurements in feet to a reader, so neither is
    asked as "a measurement in feet" (blind race 35, R07)."""
    found = set()
    for m in _WORD_NUMBER.finditer(sentence):
        unit = UNIT.match(sentence, m.end())
        if unit:
            found.add(unit_name(unit))
    return found


def measured_alone(sentence: str) -> list[int]:
    """The numbers of a sentence a clue may ask by their unit alone, however the sentence's numbers
    are counted: a measurement in a stated unit ("a measurement in square kilometres"), unscaled, the
    sentence's only one in that unit, and no other number's unit holds its unit's words ("kilometres"
    beside "square kilometres"). "163,696 square miles (423,970 km2)" gives one measurement in square
    kilometres to every reader, whether the pair is one quantity or two numbers (imported pages:
    the opening texts of states and rivers)."""
    kinds = [kind for _, kind in number_kinds(sentence)]
    worded = units_after_words(sentence)
    out = []
    for i, kind in enumerate(kinds):
        unit = kind.singular.removeprefix("a measurement in ")
        if kind.cls != "measurement" or unit == kind.singular or SCALE_WORDS.search(unit) or unit in worded:
            continue   # (a number written as a word in that unit too: "13 feet ... high, seven feet ... wide")
        if any(j != i and (unit in other.singular or other.cls == "number") for j, other in enumerate(kinds)):
            continue   # beside a number of no known kind ("195,000 mi2" to an older unit table): its unit unknown
        out.append(i)
    return out

