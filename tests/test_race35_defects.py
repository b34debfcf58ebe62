"""Defects blind race 35 found, each fixed at its cause."""
from __future__ import annotations

from pipeline.clues.numbers import measured_alone, number_kinds


def test_a_unit_a_number_word_also_measures_is_not_asked_alone():
    """R07: Stonehenge's second sentence, "each around 13 feet (4.0 m) high, seven feet (2.1 m) wide", was
    asked as "gives a measurement in feet: what number?"; a reader sees two (the racer took 13 and said so).
    A unit that a number written as a word also measures is not asked by the unit alone."""
    sentence = ("It consists of an outer ring of vertical sarsen standing stones, each around 13 feet (4.0 m) high, "
                "seven feet (2.1 m) wide, and weighing around 25 tons, topped by connecting horizontal lintel stones.")
    asked = [number_kinds(sentence)[i][1].singular for i in measured_alone(sentence)]
    assert "a measurement in feet" not in asked and asked == ["a measurement in tonnes"]
    assert [number_kinds("The wall is 13 feet high.")[i][1].singular
            for i in measured_alone("The wall is 13 feet high.")] == ["a measurement in feet"]


def test_a_missing_link_a_reader_takes_for_a_longer_name_rules_its_word_out(ctx):
    """R18 and R19: "Collect every page that the page ... links to whose short description contains the
    word "physicist"" (Albert Einstein) and "... "state"" (Asia): each page links a title the world has no
    page for ("Robert Oppenheimer", "Muslim conquests"), which both racers took for a page it has (J. Robert
    Oppenheimer, Early Muslim conquests) and counted or not by a guess. A word such a page's description
    holds is not asked."""
    from pipeline.stages.wide import _link_words
    assert "physicist" not in {w for w, _ in _link_words(ctx, "Albert Einstein")}
    assert "state" not in {w for w, _ in _link_words(ctx, "Asia")}
