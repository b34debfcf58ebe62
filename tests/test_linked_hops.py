"""Issue 33, item 6: hops follow the page's own links. A sentence's link text ("Paris", "U.S.") leads to
the page its link names, though another page holds that title; a link whose text is no name of its page
("My World" to a discography) leads no hop. The pages are written here by hand, as a dump writes them."""
from __future__ import annotations

import pytest

from pipeline.clues import anchor_targets, linked_reading
from pipeline.config import load_settings
from pipeline.snapshot.build import build_snapshot
from pipeline.stages.base import StageContext
from pipeline.stages.hops import choice_hops, named_hops, sentence_mentions, solver_readings

PAGES = {
    "Varenholt": "{{Short description|Town in Freedonia}}\n'''Varenholt''' is a small town in the north of "
                 "[[Freedonia]]. It was founded by farmers in 1710 and grew slowly along the old road. "
                 "In 1990 its mayor moved to [[Paris, Texas|Paris]] with his family and two dogs. "
                 "The town's choir sang on the album [[Ray Charles discography|My World]] in 1993.\n",
    "Paris": "{{Short description|Capital of France}}\n'''Paris''' is the capital and largest city of France, "
             "on the Seine river in the north of the country.\n",
    "Paris, Texas": "{{Short description|City in Texas, United States}}\n'''Paris''' is a city in Lamar County, "
                    "in the northeast of the state of Texas, some distance from Dallas.\n",
    "Freedonia": "{{Short description|Country in Europe}}\n'''Freedonia''' is a small country in Europe with "
                 "a long coast and many old towns.\n",
    "Ray Charles discography": "{{Short description|Discography of an American singer}}\nThe "
                               "'''discography of Ray Charles''' lists his albums and singles over fifty years.\n",
    "Grand Duchy of Freedonia": "#REDIRECT [[Freedonia]]\n",
    "Tarnok": "{{Short description|Town in Freedonia}}\n'''Tarnok''' is a market town on a wide river plain. "
              "For two centuries its merchants traded with [[Georgia (country)|Georgia]], [[France]] and [[Japan]] "
              "by sea and by land.\n",
    "Georgia (country)": "{{Short description|Country in the Caucasus}}\n'''Georgia''' is a country in the "
                         "Caucasus, on the coast of the Black Sea.\n",
    "Georgia": "{{Short description|State of the United States of America}}\n'''Georgia''' is a state in the "
               "Southeastern region of the United States.\n",
    "Velmar": "{{Short description|Town in Freedonia}}\n'''Velmar''' is a port town on a rocky coast. "
              "Every summer its ships sailed to [[Japan]], [[France]] and the [[Netherlands]] with salt fish.\n",
    "Netherlands": "{{Short description|Country in Northwestern Europe}}\n'''Netherlands''' is a country in "
                   "Northwestern Europe.\n",
    "France": "{{Short description|Country in Western Europe}}\n'''France''' is a country in Western Europe.\n",
    "Japan": "{{Short description|Island country in East Asia}}\n'''Japan''' is an island country in East Asia.\n",
    "Osmira": "{{Short description|Town in Freedonia}}\n'''Osmira''' is a town on a lake in the west of "
              "[[Grand Duchy of Freedonia|Grand Duchy]], and later of [[Freedonia]] again after the war.\n",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("linked")
    pages = root / "pages"
    pages.mkdir()
    for title, text in PAGES.items():
        (pages / f"{title.replace(' ', '_')}.txt").write_text(text, encoding="utf-8")
    build_snapshot([pages], root / "snap", workers=1)
    settings = load_settings(cache_path=root / "cache.sqlite", snapshot_dir=root / "snap",
                             derived_dir=root / "derived")
    return StageContext.create(settings)


def test_the_importer_keeps_the_text_a_link_shows(world):
    page = world.store.get("Varenholt")
    shown = {link.title: link.anchors for link in page.links}
    assert shown["Paris, Texas"] == ["Paris"]
    assert shown["Ray Charles discography"] == ["My World"]
    assert shown["Freedonia"] == ["Freedonia"]


def test_two_links_that_reach_one_page_merge(world):
    page = world.store.get("Osmira")
    freedonia = [link for link in page.links if link.title == "Freedonia"]
    assert len(freedonia) == 1 and freedonia[0].anchors == ["Grand Duchy", "Freedonia"]


def test_a_linked_name_means_the_page_its_link_goes_to(world):
    page = world.store.get("Varenholt")
    sentence = "In 1990 its mayor moved to Paris with his family and two dogs."
    assert sentence_mentions(sentence, page, world) == {"Paris, Texas": "Paris"}
    hops = [h for h in named_hops(page, world) if h.relation.sentence == sentence]
    assert [(h.target, h.relation.noun) for h in hops] == [("Paris, Texas", "city")]
    # the solver's reading agrees: it follows the link, not the page titled "Paris"
    assert solver_readings(sentence, ["city"], "Varenholt", world) == ["Paris, Texas"]


def test_a_link_whose_words_are_no_name_of_its_page_leads_no_hop(world):
    page = world.store.get("Varenholt")
    targets = {h.target for h in named_hops(page, world)}
    assert "Ray Charles discography" not in targets
    assert "Freedonia" in targets   # (the first sentence's country, linked by its own title)


def test_anchor_targets_reads_a_fetched_page_as_well_as_the_record():
    links = [{"title": "United States", "anchors": ["U.S.", "United States"]},
             {"title": "Paris, Texas", "anchors": ["Paris"]}, {"title": "Paris", "anchors": ["Paris"]},
             {"title": "Mercury (planet)", "anchors": ["Mercury"]}, {"title": "Lyon", "anchors": ["Lugdunum"]},
             {"title": "Vienne", "anchors": ["Lugdunum"]},
             {"title": "City", "anchors": ["city"]}, "Bare title"]
    anchors = anchor_targets(links)
    # "Paris" is shown for Paris, Texas on a page that links Paris too; "Lugdunum" for two pages
    assert anchors == {"U.S.": "United States", "Mercury": "Mercury (planet)"}
    assert linked_reading("U.S", anchors) == "United States"     # a name read without its full stop
    assert linked_reading("Paris", anchors) == "Paris"           # not a link's one reading: looked up as a title
    # fetch_webpage's form (link_anchors: only texts that differ from the title; links: every title)
    shown = {"United States": ["U.S."], "Paris, Texas": ["Paris"], "Mercury (planet)": ["Mercury"],
             "Lyon": ["Lugdunum"], "Vienne": ["Lugdunum"]}
    titles = ["United States", "Paris, Texas", "Paris", "Mercury (planet)", "Lyon", "Vienne", "City"]
    assert anchor_targets(shown, titles) == anchors


def test_the_solver_reads_the_links_the_tool_shows_as_the_generator_reads_the_record(world):
    """The acceptance solver reads ``fetch_webpage``'s answer; the generator reads the page record: both
    give the same link readings for every page of the world."""
    for title in PAGES:
        page = world.store.get(title)
        if page is None:
            continue
        shown = world.toolbox.call("fetch_webpage", {"url": page.url}).data
        assert anchor_targets(shown.get("link_anchors") or shown.get("links"), shown.get("links") or ()) == \
            anchor_targets(page.links)


def test_a_choice_goes_to_the_page_the_chosen_name_links(world):
    """"Georgia" linked to Georgia (country), beside a page titled Georgia (the U.S. state): the choice of
    the smallest area lands on the country the link names, as a reader clicking it would."""
    hops = [h for h in choice_hops(world.store.get("Tarnok"), world)
            if h.relation.measure == "area" and h.relation.extreme == "smallest"]
    assert [h.target for h in hops] == ["Georgia (country)"]


def test_a_choice_among_a_list_ending_in_the_article_finds_the_country_page(world):
    """"Japan, France and the Netherlands": the list's last country is read with its article; its page
    is "Netherlands"."""
    hops = [h for h in choice_hops(world.store.get("Velmar"), world)
            if h.relation.measure == "area" and h.relation.extreme == "smallest"]
    assert [h.target for h in hops] == ["Netherlands"]
