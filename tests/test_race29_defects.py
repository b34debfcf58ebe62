"""Defects blind races 29 to 32 found on solved legs, each fixed at its cause."""
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


def test_a_number_joined_to_a_word_names_it():
    """Race 30, R23: *Algae*'s "Fish oil contains the omega-3 fatty acids" was asked as "gives a number of
    fatty acids: how many?"; 3 is part of the acids' name (the racer answered 3 and doubted it)."""
    sentence = ("Fish oil contains the omega-3 fatty acids, but the original source is algae (microalgae in "
                "particular), which are eaten by marine life such as copepods and are passed up the food chain.")
    assert [k.cls for _, k in number_kinds(sentence)] == ["number"]
    assert [k.cls for _, k in number_kinds("The F-16 fighters and 40 tanks arrived.")] == ["number", "count"]


def test_a_name_listed_with_states_stands_for_a_state_not_a_place():
    """Race 30, R13: the *Crimean War*'s "an alliance of the Ottoman Empire, France, the United Kingdom, and
    Sardinia" was a hop to Sardinia, the island; the name there is the Kingdom of Sardinia's. A name listed
    beside a country or a polity leads to no hop to a place that is not a country."""
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext
    from pipeline.stages.hops import hops_from, listed_with_states
    sentence = ("The Crimean War was fought between Russia and an alliance of the Ottoman Empire, France, the "
                "United Kingdom, and Sardinia from October 1853 to February 1856.")
    assert listed_with_states(sentence, "Sardinia")
    assert not listed_with_states("It lies between Sardinia and Corsica.", "Sardinia")
    assert not listed_with_states("It stretches from Yunnan in the southwest to Xinjiang in the northwest "
                                  "and Heilongjiang in the northeast.", "Xinjiang")
    from pipeline.stages.hops import stands_for_a_state
    assert stands_for_a_state("Charles I was King of England, Scotland, and Ireland from 1625.", "Ireland", "island")
    # a continent or a sea beside countries is itself; a list the sentence calls cities is of cities
    assert not stands_for_a_state("Alpacas are popular in North America, Europe, and Australia.", "Europe", "continent")
    assert not stands_for_a_state("It is bordered by Iran to the east, the Persian Gulf and Kuwait.", "Persian Gulf", "gulf")
    assert not stands_for_a_state("It contested against the cities of Lima, Peru and Bogota, Colombia.", "Lima", "city")
    ctx = StageContext.create(load_settings())
    assert not [h for h in hops_from("Crimean War", ctx) if h.target == "Sardinia" and h.relation.sentence == sentence]


def test_two_demonyms_before_one_noun_leave_the_noun_as_the_kind():
    """Race 31, R17: Franz Kafka's "Austrian and Czech writer" made the clue "go to the page of the austrian
    that its short description names"; the kind is the writer."""
    from pipeline.clues.kinds import kind_of
    assert kind_of("Austrian and Czech writer (1883–1924)") == "writer"
    assert kind_of("French and Swiss painter") == "painter"


def test_a_described_name_with_a_number_is_a_longer_name():
    """Race 31, R31: The Blue Marble's "Photograph of Earth taken by Apollo 17 crew" was a hop to Apollo,
    the god; the description names the mission (the named hops' rule of race 19, now for descriptions)."""
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext
    from pipeline.stages.hops import described_hops
    ctx = StageContext.create(load_settings())
    assert "Apollo" not in [h.target for h in described_hops(ctx.page("The Blue Marble"), ctx)]


def test_a_commonwealth_of_a_state_is_taken_for_a_country():
    """Race 31, R14: "War between Russia and Poland-Lithuania Commonwealth" asked for "the country its short
    description names"; the Commonwealth was a state, so the description names no one country. The
    Commonwealth of Nations is an association, not a country."""
    from pipeline.execute import countries_named, country_known
    assert countries_named("War between Russia and Poland-Lithuania Commonwealth", country_known) is None
    assert countries_named("It is a member of the Commonwealth of Nations, and borders France and Spain.",
                           country_known) == ["France", "Spain"]


def test_a_name_the_sentence_calls_a_state_is_no_hop_to_a_region():
    """Race 32, R19: Chandigarh's "a shared capital for the states of Punjab and Haryana" was a hop to
    "the region" Punjab; the sentence names the Indian state, whose page this world lacks."""
    from pipeline.config import load_settings
    from pipeline.stages.base import StageContext
    from pipeline.stages.hops import named_hops
    ctx = StageContext.create(load_settings())
    assert "Punjab" not in [h.target for h in named_hops(ctx.page("Chandigarh"), ctx)
                            if h.relation.sentence.startswith("Chandigarh is a city")]


def test_a_state_of_another_age_beside_countries_makes_the_count_doubtful():
    """Races 31 (R02) and 32 (R29): "Germany, Italy, and Burgundy" was asked as naming two countries; both
    racers asked whether Burgundy, a state of its age, counts. Such a sentence asks for no countries."""
    from pipeline.execute import countries_named, country_known
    assert countries_named("He ruled Germany, Italy, and Burgundy.", country_known) is None
