"""What blind race 44 (benchmarks/blind_race/race-282828, the 10^6-page synthetic world) found, held by a
test: a hop to a person whose sentence calls that person by another occupation."""
from __future__ import annotations

import pytest

from pipeline.stages.hops import called_otherwise, named_hops


@pytest.mark.parametrize("sentence, said, kind, others, contradicts", [
    # race 44: R04 clue 10 and R08 clues 2 and 11 ("the painter", "the scientist" that the sentence names)
    ("The writer Olive Rosepisford described the old town square in a book published in 1635.",
     "Olive Rosepisford", "painter", [], True),
    # R02 clue 5 ("the architect")
    ("His brother, Julia Moreridholt, was also a well known politician.", "Julia Moreridholt", "architect", [], True),
    ("Carl Dorn, a German sculptor, met Anna Bolt in Paris.", "Carl Dorn", "physicist", [], True),
    # race 45: R16 clue 5 ("the footballer"): sports have no class of KIND_CLASSES, and are trades all the same
    ("The writer George Calarwick described the old town square in a book published in 1560.", "George Calarwick",
     "footballer", [], True),
    ("The footballer George Calarwick described the old town square.", "George Calarwick", "writer", [], True),
    ("The footballer George Calarwick described the old town square.", "George Calarwick", "footballer", [], False),
    # the kind's own word before another name, not of the kind by its page: a reader takes that one
    ("The painter Anna Bolt met Carl Dorn in Paris.", "Carl Dorn", "painter", ["Anna Bolt"], True),
    # words of the kind's class, or nothing said of the person: one reading
    ("The novelist Anna Bolt met Carl Dorn in Paris.", "Anna Bolt", "writer", [], False),
    ("Julia Moreridholt is a Dutch architect and painter.", "Julia Moreridholt", "architect", [], False),
    ("According to Victor Helenmore, the period after 1202 was a time of rapid change.", "Victor Helenmore",
     "scientist", [], False),
    ("He worked in Jakarta for most of his life and was a friend of Paul Welerabton.", "Paul Welerabton",
     "politician", [], False),
    # another person's occupation elsewhere in the sentence says nothing of this one
    (("Celebrated in William Shakespeare's Henriad as one of the greatest warrior-kings of medieval England, "
      "Henry was also a forceful ruler at home."), "William Shakespeare", "playwright", [], False),
    # not a person's kind: nothing to weigh
    ("The poet Anna Bolt founded the city.", "Anna Bolt", "city", [], False),
])
def test_a_person_called_by_another_occupation_is_no_hop_of_the_kind(sentence, said, kind, others, contradicts):
    assert called_otherwise(sentence, said, kind, others) is contradicts


def test_the_statesman_a_sentence_calls_a_philosopher_is_not_offered(ctx):
    """On the embedded world: "The Prince ... written by the Italian diplomat and political philosopher
    Niccolò Machiavelli" offered a hop to "the statesman that the first sentence names"; it no longer does
    (4 of the embedded world's 7,232 named hops go this way)."""
    assert "Niccolò Machiavelli" not in {h.target for h in named_hops(ctx.page("The Prince"), ctx)}
    # the check is narrow: the page's other named hops stay, and another page's person hop is offered
    assert {h.target for h in named_hops(ctx.page("Horace"), ctx)} >= {"Augustus"}
