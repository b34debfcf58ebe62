"""The solver that sees only the riddle: it solves generated legs through the tools, reports a clue
with two readings as ambiguous, and fails (never guesses) when the riddle does not lead anywhere."""
from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.agents.solver import AMBIGUOUS, FAILED, RiddleView, solve
from pipeline.config import load_settings
from pipeline.execute import clean_text_value
from pipeline.snapshot.page import infobox_kind, title_to_url
from pipeline.tools.registry import Toolbox


@hsettings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(level=st.sampled_from(["easy", "medium", "hard", "extreme"]), variant=st.sampled_from(["linear", "dag"]),
       seed=st.integers(0, 10_000))
def test_accepted_legs_are_solved_from_the_riddle_alone(ctx, tmp_path_factory, level, variant, seed):
    result = run_generation(GenerationParams(level=level, variant=variant, count=1, seed=seed),
                            tmp_path_factory.mktemp("run"), ctx.settings, local_map_stage(ctx))
    for leg in result.accepted:
        # a fresh toolbox on its own cache: the solver's answer does not lean on the generator's records
        fresh = Toolbox(load_settings(cache_path=tmp_path_factory.mktemp("solver") / "cache.sqlite"))
        solution = solve(RiddleView(riddle=leg.riddle, seed_url=leg.seed_url), fresh)
        assert solution.solved, solution.reason
        assert solution.answer == leg.passcode
        # every page it read for a page clue is the page the leg sent it to
        for stop in leg.stops_of("route_info"):
            assert solution.pages[stop.index + 1] == stop.page_url


def _two_fitting_links(store_toolbox: Toolbox) -> tuple[str, str, str, str, list[str]]:
    """A page, an infobox kind and a label such that two linked pages of that kind carry the label
    with a full date (found by reading the snapshot, not by the solver)."""
    for title in ("What'd I Say", "Modern Sounds in Country and Western Music", "Ray Charles", "Aretha Franklin", "Quincy Jones", "Atlantic Records", "Nat King Cole",
                  "Frank Sinatra", "Johnny Cash", "Willie Nelson", "Elvis Presley", "Stevie Wonder"):
        page = store_toolbox.call("fetch_webpage", {"url": title_to_url(title)})
        own = [f["label"] for f in page.data["infobox"] if f["date"] and len(f["date"]) == 10] if page.ok else []
        if not own:
            continue
        by_kind_label: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
        for link in page.data["links"]:
            linked = store_toolbox.call("fetch_webpage", {"url": title_to_url(link)})
            if not linked.ok or not linked.data.get("infobox_type"):
                continue
            kind = infobox_kind(linked.data["infobox_type"])
            for item in linked.data["infobox"]:
                if item["date"] and len(item["date"]) == 10 and re.fullmatch(r"[a-z][a-z ]{2,40}", kind):
                    by_kind_label[(kind, item["label"])].setdefault(linked.data["url"], item["date"])
        for (kind, label), pages in sorted(by_kind_label.items()):
            if len(pages) >= 2:
                return page.data["url"], own[0], kind, label, sorted(pages)
    pytest.skip("no page in the snapshot links to two pages of one kind carrying one dated label")


def test_two_linked_pages_that_fit_make_the_clue_ambiguous(ctx):
    seed_url, seed_label, kind, label, fitting = _two_fitting_links(ctx.toolbox)
    riddle = (f"1. Start on the page you are given. What date does its infobox give for \"{seed_label}\"?\n\n"
              f"2. From the page of clue 1, follow a link to a page about a subject whose infobox is of the "
              f"'{kind}' kind. What date does its infobox give for \"{label}\"?\n\n"
              "3. Finally, add up the result of clue 2 and keep only the last digit of the total. "
              "That single digit is the passcode.")
    solution = solve(RiddleView(riddle=riddle, seed_url=seed_url), ctx.toolbox)
    assert solution.status == AMBIGUOUS and solution.answer is None
    assert set(fitting) <= set(solution.candidates[2])


SENTENCE_POSITION = re.compile(r"(In its (?:opening text|section \".*?\"|\w+ section), the )(\w+)( sentence gives)")


def _first_sentence_clue(ctx, leg):
    for clue in leg.clues:
        if SENTENCE_POSITION.search(clue.text):
            return clue
    return None


def test_a_riddle_that_leads_nowhere_fails_instead_of_guessing(ctx, tmp_path):
    result = run_generation(GenerationParams(level="medium", variant="linear", count=2, seed=31), tmp_path / "run",
                            ctx.settings, local_map_stage(ctx))
    tried = 0
    for leg in result.accepted:
        clue = _first_sentence_clue(ctx, leg)
        if clue is None:
            continue
        # the page has no such sentence: no reading, so no answer
        broken = leg.riddle.replace(clue.text, SENTENCE_POSITION.sub(r"\g<1>999th\g<3>", clue.text))
        solution = solve(RiddleView(riddle=broken, seed_url=leg.seed_url), ctx.toolbox)
        assert solution.status == FAILED and solution.answer is None
        assert f"clue {clue.number}" in solution.reason
        tried += 1
    # a wrong seed: the first clue reads another page, and the solver does not pretend otherwise
    # (it reads clue 1 on the page it was given, or fails there; the leg's own seed is never used)
    leg = result.accepted[0]
    right = solve(RiddleView(riddle=leg.riddle, seed_url=leg.seed_url), ctx.toolbox)
    assert right.solved and right.answer == leg.passcode and right.pages[1] == leg.seed_url
    other = Toolbox(load_settings()).call("fetch_webpage", {"url": title_to_url("Andorra")}).data
    assert other["url"] != leg.seed_url
    solution = solve(RiddleView(riddle=leg.riddle, seed_url=other["url"]), ctx.toolbox)
    assert leg.seed_url not in solution.pages.values()
    if 1 in solution.pages:
        assert solution.pages[1] == other["url"]
    else:
        assert solution.status == FAILED and solution.answer is None and solution.reason.startswith("clue 1:")
    assert tried, "no accepted leg has a clue naming a sentence by position: the 999th-sentence check never ran"


def test_infobox_answers_are_read_as_an_agent_would_copy_them(ctx):
    page = ctx.toolbox.call("fetch_webpage", {"url": title_to_url("Ray Charles")}).data
    born = next(f for f in page["infobox"] if f["label"] == "Born")
    riddle = ("1. Start on the page you are given. What date does its infobox give for \"Born\"?\n\n"
              "2. Finally, add up the result of clue 1 and keep only the last digit of the total. "
              "That single digit is the passcode.")
    solution = solve(RiddleView(riddle=riddle, seed_url=page["url"]), ctx.toolbox)
    # a date cannot be summed: the finish line fails, but clue 1 was read from the infobox as written
    assert solution.values.get(1) == born["date"] == "1930-09-23"
    assert solution.status == FAILED
    assert clean_text_value(born["text"]).startswith("September 23, 1930")


def test_the_solver_sees_only_the_riddle_and_the_seed_url():
    fields = set(RiddleView.__dataclass_fields__)
    assert fields == {"riddle", "seed_url"}
    assert not (Path(__file__).resolve().parent.parent / "pipeline" / "agents" / "solver.py").read_text().count(
        "leg.stops")
