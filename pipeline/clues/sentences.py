"""Where a clue's sentence stands on a page: the block ("opening text", 'section "History"', "fifth
section") and the sentence in it ("the third sentence", 'the sentence that begins with the words
"..."'). Page asks and hops name a sentence so; ``BLOCK`` and ``SENTENCE`` read it back (their groups,
in order: lead, section title, section ordinal; sentence ordinal, opening words)."""
from __future__ import annotations

from pipeline.clues.numbers import ordinal, ordinal_value

LEAD = "opening text"


def section_ref(title: str) -> str:
    """A section by its title (one no other section shares)."""
    return f'section "{title}"'


def nth_section_ref(n: int) -> str:
    """A section by its place in the page's list of sections (1-based)."""
    return f"{ordinal(n)} section"


def sentence_rank_ref(n: int) -> str:
    """A sentence by its rank in its block (1-based)."""
    return f"the {ordinal(n)} sentence"


def sentence_opening_ref(opening: str) -> str:
    """A sentence by its first words."""
    return f'the sentence that begins with the words "{opening}"'


SENTENCE = r'(?:the (\w+) sentence|the sentence that begins with the words "(.*?)")'
BLOCK = r'(?:(opening text)|section "(.*?)"|(\w+) section)'


def read_place(lead: str | None, title: str | None, section_ordinal: str | None, sentence_ordinal: str | None,
               opening: str | None) -> dict:
    """The groups of ``BLOCK`` then ``SENTENCE`` as fields: ``block`` (``LEAD``, ("section", title) or
    ("nth_section", n)) and ``sentence`` (("rank", n) or ("opening", words))."""
    block = (LEAD if lead else ("section", title) if title is not None
             else ("nth_section", ordinal_value(section_ordinal or "")))
    sentence = ("opening", opening) if opening is not None else ("rank", ordinal_value(sentence_ordinal or ""))
    return {"block": block, "sentence": sentence}
