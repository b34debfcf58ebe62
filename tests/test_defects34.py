"""Issue 34, item 7: the blind race's open defects. A name a sentence says is a person's, an animal's or a
work's gives no hop to a place of that name (Santiago, the fisherman of The Old Man and the Sea); closed
airports and airports without scheduled service are marked in the place search's answer and are never
"the nearest airport" of a clue."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.snapshot.page import Link, Page
from pipeline.stages.hops import is_work, named_hops, named_otherwise, reading_of

SANTIAGO = "It tells the story of Santiago, an aging fisherman, and his long struggle to catch a giant marlin."


def _page(lead: str, description: str = "1952 novella by Ernest Hemingway", title: str = "The Fisher's Year") -> Page:
    """A lead-only page (no links: the link decides nothing) that the snapshot does not hold."""
    return Page(title=title, url=f"https://en.wikipedia.org/wiki/{title.replace(' ', '_')}", description=description,
                lead=lead)


def _targets(page, ctx) -> set[str]:
    return {h.target for h in named_hops(page, ctx)}


def test_the_old_man_and_the_sea_gives_no_hop_to_the_city(ctx):
    """The race's case, on the embedded snapshot's own page: "the city that the third sentence names" went
    to Santiago, Chile's capital, for the fisherman."""
    page = ctx.page("The Old Man and the Sea")
    assert page is not None and not page.links and SANTIAGO in page.lead
    assert ctx.page("Santiago").description == "Capital and largest city of Chile"
    assert "Santiago" not in _targets(page, ctx)


@pytest.mark.parametrize("lead", [
    "The story is set in Santiago, where the author lived for a year.",
    "The novella was first printed in Santiago by a small press.",
    "The fisherman sails from Santiago, Chile, every morning before dawn.",
])
def test_a_plain_place_on_a_work_s_page_still_gives_its_hop(ctx, lead):
    """"in Santiago", "from Santiago, Chile": the sentence places the name, so it is the city to a reader."""
    assert "Santiago" in _targets(_page(lead), ctx)


def test_the_appositive_names_a_person_on_any_page(ctx):
    """Not only on a work's page: an appositive whose head is a person's noun makes the name a person's.
    The same sentence with a place's appositive keeps the hop."""
    theme = "Literary theme of Cuban fiction"
    assert not is_work(_page("", theme))
    assert "Santiago" not in _targets(_page("Its best-known hero is Santiago, an aging fisherman of Cojimar.",
                                            theme), ctx)
    assert "Santiago" in _targets(_page("Its best-known setting is Santiago, the capital of Chile.", theme), ctx)


@pytest.mark.parametrize("sentence, said, kind", [
    (SANTIAGO, "Santiago", "city"),                                                      # an appositive's person
    ("He is often depicted with his pet dog Pluto and his nemesis Pete.", "Pluto", "dwarf planet"),   # a noun before
    ("It depicts the goddess Venus arriving at the shore after her birth.", "Venus", "planet"),
    ("The novel opens aboard the steamer Santiago as it leaves port.", "Santiago", "city"),          # a vessel
    ("Truth was born into slavery in Swartekill, New York.", "Truth", "conformity"),      # a person's verb
])
def test_what_the_sentence_says_the_name_is(sentence, said, kind):
    page = _page(sentence, description="Theme of American folklore")   # no work: the sentence alone decides
    assert named_otherwise(sentence, said, kind, page)


def test_a_work_s_maker_is_no_country():
    """"one of Jordan's best-known songs" on a song "by Louis Jordan and his Tympany Five": the singer."""
    song = _page("A mid-tempo twelve-bar blues, the song became one of Jordan's best-known songs.",
                 description='"Let the Good Times Roll" is a jump blues song recorded in 1946 by Louis Jordan and his '
                             'Tympany Five.')
    sentence = song.lead
    assert is_work(song) and named_otherwise(sentence, "Jordan", "country", song)
    # the same sentence on a page that is no work, nor the maker's: nothing says Jordan is a person
    other = _page(sentence, description="Blues standard of the 1940s in Jordan")
    assert not named_otherwise(sentence, "Jordan", "country", other)


def test_a_name_of_a_story_is_a_character_until_the_sentence_places_it():
    """On a lead-only work's page, "the story of Santiago" is a character's, "in Santiago" the city; on a
    page with links (a full article) the links decide what it links, and an unlinked name is not doubted
    for the page's kind alone."""
    story = "The story follows Santiago through one long summer."
    assert named_otherwise(story, "Santiago", "city", _page(story))
    assert not named_otherwise(story, "Santiago", "city", _page(story, description="Theme of Cuban fiction"))
    linked = _page(story)
    linked.links = [Link(title="Havana", in_snapshot=True, anchors=["Havana"])]
    assert not named_otherwise(story, "Santiago", "city", linked)
    for placed in ("The story is set in 15th-century Santiago.", "It was first performed at Santiago in 1953.",
                   "The story moves from Havana, Cuba to Santiago, Chile.", "It is set in the city of Santiago."):
        assert not named_otherwise(placed, "Santiago", "city", _page(placed)), placed


def test_a_person_s_kind_is_never_doubted():
    """Asked for a person ("the novelist"), the person's own appositive is no reason to doubt."""
    sentence = "It was praised by Chinghiz Aitmatov, a Kyrgyz novelist, in 1960."
    assert not named_otherwise(sentence, "Chinghiz Aitmatov", "novelist", _page(sentence))


@pytest.mark.parametrize("word, reading", [("fisherman", "person"), ("novelist", "person"), ("goddess", "person"),
                                           ("dog", "animal"), ("steamer", "vessel"), ("novella", "work"),
                                           ("city", None), ("capital", None), ("german", None), ("region", None)])
def test_reading_of_a_noun(word, reading):
    assert reading_of(word) == reading


@settings(max_examples=60, deadline=None)
@given(modifiers=st.lists(st.sampled_from(["old", "ancient", "15th-century", "colonial", "the"]), max_size=2),
       locative=st.sampled_from(["in", "at", "near", "from", "to", "across"]))
def test_a_locative_word_always_places_the_name(modifiers, locative):
    """Property: "<locative> [up to two modifiers] Santiago" is the place on every page, a story's too."""
    sentence = f"The second part of the story happens {locative} {' '.join(modifiers + ['Santiago'])} in winter."
    assert not named_otherwise(sentence, "Santiago", "city", _page(sentence))
