"""Defects blind race 52 (benchmarks/blind_race/race-363636) found in solved legs, each checked where it was fixed."""
from __future__ import annotations

from pipeline.snapshot.page import Page

UKRAINE_HISTORY = ("The country is twinned with Lanamard in Spain. The writer Rose U. Talisholt described the old town "
                   "square in a book published in 1770. Most people of the parish were farmers then.")


def _page(title: str, lead: str) -> Page:
    return Page(title=title, url=f"https://en.wikipedia.org/wiki/{title.replace(' ', '_')}", lead=lead)


def test_a_page_called_two_things_in_one_sentence_is_each(ctx):
    """R04: "go to the page of the seat that the second sentence of its section "Demographics" names" of a sentence
    naming Buenos Aires and Kirepakwick. Kirepakwick's description says "a village and the seat of a district";
    Buenos Aires's says "Capital city of Argentina", but its opening sentence "is a city and the seat of a district":
    a seat to a reader too. What an opening sentence calls its subject was read only up to the first "and"."""
    from pipeline.stages.hops import called_so
    buenos_aires = _page("Buenos Aires", "Buenos Aires is a city and the seat of a district in the Argentine Republic. "
                                         "Founded in 1192, it is known for its secondary school.")
    assert called_so(buenos_aires, "seat") and called_so(buenos_aires, "city")
    assert not called_so(buenos_aires, "district")       # the seat of a district is no district
    assert not called_so(_page("Xville", "Xville is a town in the region of Yland and Zland. It is small."), "region")


def test_no_clue_points_at_a_sentence_by_words_a_reader_reads_inside_another(ctx):
    """R03: "the sentence that begins with the words "Talisholt described the old"" of a section where the sentence
    reads "The writer Rose U. Talisholt described the old town square ...": the split cut after the initial, a
    reader does not. A sentence after a doubtful cut is pointed at neither by its rank nor by its first words."""
    from pipeline.stages.verbalize import sentence_refs
    assert sentence_refs(UKRAINE_HISTORY, "Talisholt described the old town square in a book published in 1770.", []) == []
    plain = UKRAINE_HISTORY.replace("Rose U. Talisholt", "Rose Talisholt")
    assert sentence_refs(plain, "The writer Rose Talisholt described the old town square in a book published in 1770.", [])
    # the sentence after it has its first words still (its rank crosses the doubtful cut: not counted)
    refs = sentence_refs(UKRAINE_HISTORY, "Most people of the parish were farmers then.", [])
    assert len(refs) == 1 and '"Most people of' in refs[0] and "third" not in refs[0]
