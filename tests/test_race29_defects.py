"""Defects blind race 29 found on solved legs, each fixed at its cause."""
from __future__ import annotations

from pipeline.clues.numbers import number_kinds
from pipeline.snapshot.store import open_default


def test_a_number_that_labels_is_not_asked_as_a_count():
    """R03: "the group 11 elements" was asked as "gives a number of elements: how many?"; 11 names the
    group, it counts nothing (the racer took 11 and called it the leg's riskiest reading). A number after
    a label word or a name is asked as a number only; a count after a name stays a count."""
    section = next(s for s in open_default().get("Alkali metal").sections if s.title == "Copper, silver, and gold")
    sentence = next(x for x in section.text.split(". ") if x.startswith("Mendeleev's main criterion"))
    assert [k.singular for _, k in number_kinds(sentence)] == ["a number"]
    for labelled in ("Apollo 11 astronauts landed.", "Highway 43 travels northwest into the towns.",
                     "It was the Channel 9 studios."):
        assert [k.cls for _, k in number_kinds(labelled)] == ["number"], labelled
    counted = "Lincoln received 1,866,452 votes, Douglas 1,376,957 votes, and Bell 588,789 votes."
    assert [k.singular for _, k in number_kinds(counted)] == ["a number of votes"] * 3
    assert [k.singular for _, k in number_kinds("In 16 countries the harvest failed.")] == ["a number of countries"]
