"""Race scoring on hand-made legs and trials, every figure worked out by hand from the definitions
(``pipeline.scoring``, docs/SCORING.md):

FA   the answer is exactly one digit and equals the passcode;
PVR  share of the leg's page stops whose page the agent fetched (URLs compared by page key);
RCR  share of roadblocks whose whole chain the agent executed, in order, with matching arguments;
intermediate accuracy: share of golden stop values found in the agent's results, arguments or messages;
error class of a failed trial: navigation (PVR < 0.5), else tool use (RCR < 0.5), else computation;
tool efficiency eta: useful calls / calls, a call being useful when it reaches a new golden page,
golden step or golden value.
"""
from __future__ import annotations

import json

import pytest
from live_http import Answer, ScriptedServer, chat_completion

from pipeline.cache import CallCache
from pipeline.config import load_settings
from pipeline.model import FINISH_LINE, ROADBLOCK, ROUTE_INFO, Clue, Leg, Stop, ToolStep, TraceEntry
from pipeline.scoring.golden import GoldenStep, _defaults, _known_args, golden_view
from pipeline.scoring.judges import (
    NON_POSITIVE,
    POSITIVE,
    GoldenTraceJudge,
    Judgment,
    LLMJudge,
    _summary,
    call_text,
    make_judge,
    parse_judgment,
)
from pipeline.scoring.metrics import (
    COMP,
    NAV,
    TOOL,
    TrialScore,
    _at_least,
    _avg,
    aggregate,
    chain_executed,
    classify,
    final_answer_correct,
    find_leg,
    intermediate_accuracy,
    page_visit_rate,
    roadblock_completion_rate,
    score_trial,
    score_trials,
    summarize,
    tool_utility,
)
from pipeline.scoring.trials import ToolCall, Trial

W = "https://en.wikipedia.org/wiki/"


def make_leg(leg_id: str = "leg-1", level: str = "easy", variant: str = "linear") -> Leg:
    stops = [
        Stop(0, ROUTE_INFO, "year", page_url=W + "Alpha", value=1554),
        Stop(1, ROUTE_INFO, "river", page_url=W + "Beta", value="Paraná River"),
        Stop(2, ROADBLOCK, "elevation", depends_on=[1],
             tool_chain=[ToolStep("maps_geocode", {"address": {"$stop": 1}}, "coords", ""),
                         ToolStep("maps_elevation", {"locations": {"$step": 0}}, "elevation_m", "elevation_m")],
             value=760),
        Stop(3, ROADBLOCK, "population", tool_chain=[ToolStep("countries_population", {"country": "Brazil"},
                                                              "population", "population")], value=203080756),
        Stop(4, ROUTE_INFO, "no page", value=""),          # no page, no scalar value
        Stop(5, ROADBLOCK, "no chain", value=None),
        Stop(6, FINISH_LINE, "final", depends_on=[0, 2], expression="(s0 + s2) % 10", value=4),
    ]
    # stop 3 was traced (its arguments as sent, one of them unknown to the tool's schema)
    trace = [TraceEntry(3, 0, "countries_population", {"country": "Brazil", "extra": "x"}, '{"population": 1}',
                        "offline-data", "toolbox", 203080756)]
    clues = [Clue(1, 0, "Find the year."), Clue(2, 1, "Name the river.")]
    return Leg(leg_id, level, variant, 7, "Alpha", W + "Alpha", stops, passcode=4, clues=clues, trace=trace)


def pages_leg(n: int, leg_id: str = "pages") -> Leg:
    """n page stops with values 1000, 1100, ... (more than 1 % apart) and no roadblock."""
    stops = [Stop(i, ROUTE_INFO, f"p{i}", page_url=W + f"P{i}", value=1000 + 100 * i) for i in range(n)]
    return Leg(leg_id, "medium", "dag", 1, "P0", W + "P0", stops, passcode=0)


def call(tool, args, preview="", success=True):
    return ToolCall(tool, args, success, preview, len(preview))


def fetch(title, preview=""):
    return call("fetch_webpage", {"url": W + title}, preview)


# ---- the golden view ---------------------------------------------------------------------------

def test_golden_view_by_hand():
    leg = make_leg()
    g = golden_view(leg)
    assert g.leg is leg and g.budget == 10 == max(10, 3 * 7 // 2)
    assert g.pages == [(0, "wiki:Alpha"), (1, "wiki:Beta")]                # stop 4 has no page
    assert list(g.chains) == [2, 3]                                        # stop 5 has no chain
    geocode, elevation = g.chains[2]
    # untraced: references to stops resolved, to steps left as wildcards; the value on the last step only
    assert (geocode.stop, geocode.step, geocode.tool, geocode.args, geocode.value) == \
        (2, 0, "maps_geocode", {"address": "Paraná River"}, None)
    assert (geocode.response, geocode.provenance) == ("", None)
    assert (elevation.stop, elevation.step, elevation.tool, elevation.args, elevation.value) == \
        (2, 1, "maps_elevation", {"locations": {"$step": 0}}, 760)
    [population] = g.chains[3]
    # traced: the trace entry, its arguments cut to the tool's schema
    assert population == GoldenStep(3, 0, "countries_population", {"country": "Brazil"}, '{"population": 1}',
                                    "offline-data", "toolbox", 203080756)
    assert g.all_steps == [geocode, elevation, population]
    # scalar values of every stop but the finish line: not "" (stop 4), not None (stop 5)
    assert [(i, v.kind) for i, v in g.values] == [(0, "number"), (1, "text"), (2, "number"), (3, "number")]
    assert g.values[1][1].text == "parana river"
    assert (g.values[0][1].lo, g.values[0][1].hi) == pytest.approx((1554 - 15.54, 1554 + 15.54))


def test_golden_view_resolves_redirects_and_unknown_stops():
    leg = make_leg()
    leg.stops[0].page_url = W + "Old_name"
    leg.stops[3].tool_chain.append(ToolStep("countries_area", {"country": {"$stop": 5}, "unit": "km2"}, "area", "area"))
    g = golden_view(leg, {"Old name": "Alpha"}.get)
    assert g.pages[0] == (0, "wiki:Alpha")
    # stop 3: step 0 traced, step 1 not: a reference to stop 5 (no value) stays a wildcard, the argument the
    # tool does not know goes, the value is on the last step
    assert [(s.step, s.tool, s.args, s.value) for s in g.chains[3]] == [
        (0, "countries_population", {"country": "Brazil"}, 203080756),
        (1, "countries_area", {"country": {"$stop": 5}}, 203080756)]
    assert golden_view(leg).pages[0] == (0, "wiki:Old name")


def test_defaults_and_known_args():
    assert _defaults("web_search") == {"num_results": 5, "offset": 0, "mode": "words", "field": "all"}
    assert _defaults("maps_directions") == {"mode": "driving"}
    assert _defaults("fetch_webpage") == {} and _defaults("no_such_tool") == {}
    assert _known_args("web_search", {"query": "q", "bogus": 1}) == {"query": "q"}
    assert _known_args("no_such_tool", {"a": 1, "b": 2}) == {"a": 1, "b": 2}      # no schema: everything


def test_golden_step_matching():
    search = GoldenStep(0, 0, "web_search", {"query": "Blue River", "num_results": 5}, "", None)
    assert search.matches("web_search", {"query": "blue  river"})                  # num_results: the default
    assert search.matches("web_search", {"query": "blue river", "num_results": 5.02})
    assert not search.matches("web_search", {"query": "blue river", "num_results": 7})
    assert not search.matches("maps_geocode", {"query": "blue river", "num_results": 5})
    assert not search.matches("web_search", {"query": "red river"})
    ten = GoldenStep(0, 0, "web_search", {"query": "x", "num_results": 10}, "", None)
    assert not ten.matches("web_search", {"query": "x"})                           # 10 is not the default 5
    # free-form code: a run that prints the step's value, or the same code; any run when the value is unknown
    code = GoldenStep(0, 0, "python_execute_code", {"code": "print(6 * 7)"}, "", None, value=42)
    assert code.matches("python_execute_code", {"code": "print(42)"}, '{"stdout": "42\\n"}')
    assert code.matches("python_execute_code", {"code": "  PRINT(6 *  7) "}, "nothing")
    assert not code.matches("python_execute_code", {"code": "print(41)"}, '{"stdout": "41"}')
    assert not code.matches("python_execute_code", {}, "")
    assert not code.matches("web_search", {"code": "print(6 * 7)"}, "42")
    assert code.matches("python_execute_code", {"code": "print(6 * 7)"})
    # no result given: nothing is found in it (not even a value that reads like a placeholder)
    xxxx = GoldenStep(0, 0, "python_execute_code", {"code": "print('xxxx')"}, "", None, value="xxxx")
    assert not xxxx.matches("python_execute_code", {"code": "print('XX' * 2)"})
    assert xxxx.matches("python_execute_code", {"code": "print('XX' * 2)"}, "xxxx")
    unknown = GoldenStep(0, 0, "python_execute_code", {"code": "x"}, "", None)
    assert unknown.matches("python_execute_code", {"code": "anything"}) and unknown.matches("python_execute_code", {})
    blank = GoldenStep(0, 0, "python_execute_code", {}, "", None, value=42)
    assert blank.matches("python_execute_code", {}, "") and not blank.matches("python_execute_code", {"code": "x"}, "")


# ---- the metrics -------------------------------------------------------------------------------

def test_final_answer_correct():
    cases = [("4", 4, 1), (" 4\n", 4, 1), (4, 4, 1), ("0", 0, 1), ("44", 4, 0), ("4", 5, 0), ("The answer is 4", 4, 0),
             ("4.0", 4, 0), ("-4", 4, 0), ("", 4, 0), (None, 4, 0), ("4", None, 0), (None, None, 0)]
    for answer, passcode, fa in cases:
        got = final_answer_correct(answer, passcode)
        assert got == fa and type(got) is int, (answer, passcode)


def test_page_visit_rate():
    g = golden_view(make_leg())
    assert page_visit_rate(g, Trial("t", "leg-1", calls=[])) == 0.0
    calls = [fetch("alpha"), call("web_search", {"query": W + "Beta"}), fetch("Gamma"),
             call("fetch_webpage", {}), fetch("Alpha")]
    assert page_visit_rate(g, Trial("t", "leg-1", calls=calls)) == 0.5
    assert page_visit_rate(g, Trial("t", "leg-1", calls=calls), {"Gamma": "Beta"}.get) == 1.0
    assert page_visit_rate(golden_view(pages_leg(0)), Trial("t", "pages", calls=calls)) is None


def test_chain_executed_in_order():
    g = golden_view(make_leg())
    chain = g.chains[2]
    geo = call("maps_geocode", {"address": "parana river"})
    ele = call("maps_elevation", {"locations": [{"lat": 1, "lng": 2}]})
    other = call("web_search", {"query": "x"})
    assert chain_executed(chain, Trial("t", "l", calls=[geo, other, ele]))
    assert chain_executed(chain, Trial("t", "l", calls=[geo, ele, geo, ele, ele]))    # repeats after: still done
    assert not chain_executed(chain, Trial("t", "l", calls=[ele, geo]))                  # out of order
    assert not chain_executed(chain, Trial("t", "l", calls=[geo]))
    assert not chain_executed(chain, Trial("t", "l", calls=[call("maps_geocode", {"address": "Rio"}), ele]))
    assert chain_executed([], Trial("t", "l", calls=[]))
    code = [GoldenStep(0, 0, "python_execute_code", {"code": "print(1)"}, "", None, value=42)]
    assert chain_executed(code, Trial("t", "l", calls=[call("python_execute_code", {"code": "x"}, "42")]))
    assert not chain_executed(code, Trial("t", "l", calls=[ToolCall("python_execute_code", {"code": "x"}, True, None)]))
    text = [GoldenStep(0, 0, "python_execute_code", {"code": "print('xxxx')"}, "", None, value="xxxx")]
    assert not chain_executed(text, Trial("t", "l", calls=[call("python_execute_code", {"code": "y"}, "")]))
    assert chain_executed(text, Trial("t", "l", calls=[call("python_execute_code", {"code": "y"}, "XXXX")]))


def test_roadblock_completion_rate():
    g = golden_view(make_leg())
    pop = call("countries_population", {"country": "BRAZIL"})
    assert roadblock_completion_rate(g, Trial("t", "l", calls=[pop])) == 0.5
    assert roadblock_completion_rate(g, Trial("t", "l", calls=[])) == 0.0
    both = [call("maps_geocode", {"address": "Paraná River"}), call("maps_elevation", {"locations": []}), pop]
    assert roadblock_completion_rate(g, Trial("t", "l", calls=both)) == 1.0
    assert roadblock_completion_rate(golden_view(pages_leg(2)), Trial("t", "l", calls=both)) is None


def test_intermediate_accuracy():
    g = golden_view(make_leg())          # values: 1554, "Paraná River", 760, 203080756
    assert intermediate_accuracy(g, Trial("t", "l", calls=[])) == 0.0
    # a result, an argument (non-ASCII as written), a message: three of four
    calls = [fetch("Alpha", "founded in 1554"), call("maps_geocode", {"address": "Paraná River"}, "{}")]
    trial = Trial("t", "l", "4", calls, messages=["the elevation is 761 m"])
    assert intermediate_accuracy(g, trial) == 0.75
    # not the answer
    assert intermediate_accuracy(g, Trial("t", "l", "203080756", [])) == 0.0
    assert intermediate_accuracy(golden_view(Leg("x", "easy", "linear", 1, "", "", [])), trial) is None
    # arguments that are not JSON (a date object) are read as their text: 1554-01-25 holds 1554
    from datetime import date
    assert intermediate_accuracy(g, Trial("t", "l", calls=[call("calculator", {"when": date(1554, 1, 25)})])) == 0.25
    # the agent's texts are read as one text, a line break between two of them
    assert intermediate_accuracy(g, Trial("t", "l", messages=["it flows into the Paraná", "River, far south"])) \
        == 0.25
    # numbers of arguments and of results are looked up alike
    assert intermediate_accuracy(g, Trial("t", "l", calls=[call("calculator", {"expression": "203080756 + 0"})])) \
        == 0.25


def test_at_least_and_classify():
    assert _at_least(None, 0.5) and _at_least(0.5, 0.5) and not _at_least(0.49, 0.5)
    assert [classify(1, 0.0, 0.0), classify(True, None, None)] == [None, None]
    assert classify(0, 0.49, 1.0) == NAV == "navigation"
    assert classify(0, 0.5, 0.49) == TOOL == "tool_use"
    assert classify(0, 0.5, 0.5) == COMP == "computation"
    assert (classify(0, None, None), classify(0, None, 0.2), classify(0, 0.2, None)) == (COMP, TOOL, NAV)


# ---- a whole trial -----------------------------------------------------------------------------

FULL = [
    fetch("Alpha", "founded in 1554"),                                          # page 0, value 0
    fetch("alpha", "founded in 1554"),                                          # nothing new
    call("maps_geocode", {"address": "parana river"}, '{"lat": -23.5, "lng": -46.6}'),   # step 2.0
    call("maps_elevation", {"locations": [-23.5, -46.6]}, '{"elevation_m": 761}'),       # step 2.1, value 2
    call("web_search", {"query": "Beta"}, "Paraná River"),                      # value 1
    call("countries_population", {"country": "Brazil"}, '{"population": 203080756}'),    # step 3.0, value 3
]


def test_score_trial_by_hand():
    g = golden_view(make_leg())
    s = score_trial(g, Trial("t1", "leg-1", "4", FULL, tokens=900, wall_time_s=12.5, agent="a1"))
    assert (s.trial_id, s.leg_id, s.agent, s.variant, s.level, s.answer, s.passcode) == \
        ("t1", "leg-1", "a1", "linear", "easy", "4", 4)
    assert (s.fa, s.pvr, s.rcr, s.intermediate) == (1, 0.5, 1.0, 1.0)         # Beta was never fetched
    assert (s.steps, s.budget, s.step_limit_hit, s.n_calls, s.useful_calls) == (6, 10, False, 6, 5)
    assert s.eta == 5 / 6 and (s.tokens, s.wall_time_s) == (900, 12.5)
    assert (s.error_class, s.shortcut, s.near_miss, s.invalid_reason) == (None, False, False, None)
    assert [j["label"] for j in s.judgments] == [POSITIVE, NON_POSITIVE, POSITIVE, POSITIVE, POSITIVE, POSITIVE]
    assert s.judgments[0] == {"call": 0, "tool": "fetch_webpage", "label": "positive", "sign": 1, "confidence": 1.0,
                              "rationale": "reached golden page wiki:Alpha; value of stop 0"}
    assert s.judgments[1]["sign"] == -1 and s.judgments[1]["rationale"] == "nothing new on the golden trace"
    assert s.to_dict()["judgments"] == s.judgments and s.to_dict()["eta"] == 5 / 6
    assert set(s.to_dict()) == set(TrialScore.__dataclass_fields__)


def test_steps_budget_and_flags():
    g = golden_view(make_leg())
    assert score_trial(g, Trial("t", "leg-1", "4", FULL[:2], steps=0)).steps == 0        # stated steps, even 0
    assert score_trial(g, Trial("t", "leg-1", "4", FULL[:2])).steps == 2                 # else the calls
    assert score_trial(g, Trial("t", "leg-1", "4", [], steps=10)).step_limit_hit is True
    assert score_trial(g, Trial("t", "leg-1", "4", [], steps=9)).step_limit_hit is False
    # shortcut: right answer with PVR below 0.3 (not with no pages to visit)
    ten = golden_view(pages_leg(10))
    three = [fetch(f"P{i}") for i in range(3)]
    assert score_trial(ten, Trial("t", "pages", "0", three[:2])).shortcut is True            # 0.2
    assert score_trial(ten, Trial("t", "pages", "0", three)).shortcut is False               # 0.3
    assert score_trial(ten, Trial("t", "pages", "1", three[:2])).shortcut is False           # wrong answer
    assert score_trial(golden_view(pages_leg(0)), Trial("t", "pages", "0", [])).shortcut is False
    # near miss: wrong answer with intermediate accuracy at least 0.8 (not with no values to find)
    five = golden_view(pages_leg(5))
    values = [1000, 1100, 1200, 1300, 1400]
    s = score_trial(five, Trial("t", "pages", "7", [], messages=[str(v) for v in values[:4]]))
    assert (s.intermediate, s.near_miss, s.error_class) == (0.8, True, NAV)
    s = score_trial(five, Trial("t", "pages", "7", [], messages=[str(v) for v in values[:3]]))
    assert (s.intermediate, s.near_miss) == (0.6, False)
    assert score_trial(five, Trial("t", "pages", "0", [], messages=list(map(str, values)))).near_miss is False
    assert score_trial(golden_view(pages_leg(0)), Trial("t", "pages", "7", [])).near_miss is False
    assert score_trial(g, Trial("t", "leg-1", "4", [])).eta is None


def test_error_classes_of_failed_trials():
    g = golden_view(make_leg())
    both_pages = [fetch("Alpha"), fetch("Beta")]
    s = score_trial(g, Trial("t", "leg-1", "9", both_pages))
    assert (s.fa, s.pvr, s.rcr, s.error_class) == (0, 1.0, 0.0, TOOL)
    s = score_trial(g, Trial("t", "leg-1", "9", both_pages + FULL[2:]))
    assert (s.rcr, s.error_class) == (1.0, COMP)
    s = score_trial(g, Trial("t", "leg-1", "9", FULL[2:]))
    assert (s.pvr, s.error_class) == (0.0, NAV)


def test_unreadable_or_unknown_trials_are_invalid():
    g = golden_view(make_leg())
    s = score_trial(g, Trial("t", "leg-1", "4", FULL[:3], tokens=5, wall_time_s=1.0, agent="a", error="log truncated"))
    assert s == TrialScore("t", "leg-1", "a", "linear", "easy", "4", 4, 0, 0.0, 0.0, 0.0, 3, 10, False, 3, 0, None, 5,
                           1.0, "invalid", False, False, "log truncated")
    assert score_trial(g, Trial("t", "leg-1", "4", FULL[:3], steps=7, error="x")).steps == 7
    assert score_trial(g, Trial("t", "leg-1", "4", FULL[:3], steps=0, error="x")).steps == 3
    s = score_trial(None, Trial("t", "nope", "4", [], agent="a"))
    assert s == TrialScore("t", "nope", "a", None, None, "4", None, 0, 0.0, 0.0, 0.0, 0, None, False, 0, 0, None, None,
                           None, "invalid", False, False, "unknown leg 'nope'")
    assert score_trial(None, Trial("t", None, error="bad")).invalid_reason == "bad"


def test_the_judge_and_the_resolver_reach_the_score():
    g = golden_view(make_leg())
    calls = [fetch("Old_name")]
    resolve = {"Old name": "Alpha"}.get
    assert score_trial(g, Trial("t", "leg-1", "4", calls)).useful_calls == 0
    s = score_trial(g, Trial("t", "leg-1", "4", calls), resolve=resolve)
    assert (s.pvr, s.useful_calls, s.shortcut) == (0.5, 1, False)
    s = score_trial(g, Trial("t", "leg-1", "4", calls), GoldenTraceJudge(resolve))
    assert (s.pvr, s.useful_calls) == (0.0, 1)


# ---- several trials ----------------------------------------------------------------------------

def test_find_leg():
    legs = {leg.leg_id: leg for leg in (make_leg("leg-1"), make_leg("leg-12"), make_leg("Leg-A", "hard", "dag"),
                                        make_leg(""))}
    assert find_leg(legs, None) is None and find_leg(legs, "") is legs[""]
    assert find_leg(legs, "leg-1") is legs["leg-1"]
    assert find_leg(legs, "legwork-dag-hard-leg-a") is legs["Leg-A"]            # a Harbor task name
    assert find_leg(legs, "runs/legwork-linear-easy-leg-12-try2") is legs["leg-12"]   # the longest id inside
    assert find_leg(legs, "x-leg-1-y") is legs["leg-1"]
    assert find_leg(legs, "nothing here") is None
    assert find_leg({"": make_leg("")}, "anything") is None                    # an empty id is in every name


def test_score_trials_by_hand():
    leg1, leg2 = make_leg("leg-1"), make_leg("leg-2", "hard")
    leg2.stops[1].page_url = W + "Old_name"
    # leg 2's page stop and trial b's call both go through the resolver to Beta
    trials = [Trial("a", "leg-1", "4", [fetch("Alpha"), fetch("Beta")]), Trial("b", "legwork-linear-hard-leg-2", "4",
                                                                               [fetch("Alpha"), fetch("Older_name")]),
              Trial("c", "leg-9", "4", []), Trial("d", "leg-1", "2", [fetch("Alpha")])]
    scores = score_trials([leg1, leg2], trials, resolve={"Old name": "Beta", "Older name": "Beta"}.get)
    assert [(s.trial_id, s.level, s.fa, s.pvr, s.error_class) for s in scores] == [
        ("a", "easy", 1, 1.0, None), ("b", "hard", 1, 1.0, None), ("c", None, 0, 0.0, "invalid"),
        ("d", "easy", 0, 0.5, TOOL)]
    assert scores[2].invalid_reason == "unknown leg 'leg-9'"
    assert scores[1].useful_calls == 2                                  # the default judge resolves too
    assert score_trials(iter([leg2]), iter(trials[1:2]))[0].pvr == 0.5               # no resolver: Old name
    # the judge given judges (one that knows a redirect the scoring does not)
    redirected = [Trial("e", "leg-1", "4", [fetch("Alpha"), fetch("Alias")])]
    assert score_trials([leg1], redirected)[0].useful_calls == 1
    judged = score_trials([leg1], redirected, judge=GoldenTraceJudge({"Alias": "Beta"}.get))
    assert (judged[0].useful_calls, judged[0].pvr) == (2, 0.5)


def scored(agent, variant, level, fa, pvr, rcr, error_class, **kw) -> TrialScore:
    return TrialScore(**{"trial_id": "t", "leg_id": "l", "agent": agent, "variant": variant, "level": level,
                         "answer": "1", "passcode": 1, "fa": fa, "pvr": pvr, "rcr": rcr, "intermediate": None,
                         "steps": 4, "budget": 10, "step_limit_hit": False, "n_calls": 2, "useful_calls": 1, "eta": 0.5,
                         "tokens": None, "wall_time_s": None, "error_class": error_class, "shortcut": False,
                         "near_miss": False, "invalid_reason": None, **kw})


def test_summarize_by_hand():
    scores = [scored("a", "linear", "easy", 1, 1.0, None, None, tokens=100, shortcut=True, judgments=[
                  {"tool": "x", "sign": 1}, {"tool": "y", "sign": -1}]),
              scored("a", "linear", "easy", 0, 0.25, 1.0, NAV, steps=10, step_limit_hit=True, intermediate=0.5,
                     eta=None, tokens=300, wall_time_s=2.0),
              scored("a", "linear", "easy", 0, 1.0, 0.0, TOOL, intermediate=1.0, near_miss=True, steps=1, eta=0.0,
                     judgments=[{"tool": "x", "sign": 1}]),
              scored("a", "linear", "easy", 0, 0.0, 0.0, "invalid", steps=5, eta=None)]
    s = summarize(scores)
    assert s == {
        "n": 4, "invalid": 1, "fa": 0.25, "pvr": (1.0 + 0.25 + 1.0 + 0.0) / 4, "rcr": (1.0 + 0.0 + 0.0) / 3,
        "intermediate": 0.75, "eta": 0.25, "steps": 5.0, "step_limit_rate": 0.25, "tokens": 200.0, "wall_time_s": 2.0,
        "errors": {NAV: 0.25, TOOL: 0.25, COMP: 0.0, "invalid": 0.25}, "shortcut_rate": 0.25, "near_miss_rate": 0.25,
        "wide_recall": None, "wide_precision": None}
    assert summarize([]) == {"n": 0, "invalid": 0, "fa": None, "pvr": None, "rcr": None, "intermediate": None,
                             "eta": None, "steps": None, "step_limit_rate": None, "tokens": None, "wall_time_s": None,
                             "errors": {NAV: 0.0, TOOL: 0.0, COMP: 0.0, "invalid": 0.0}, "shortcut_rate": None,
                             "near_miss_rate": None, "wide_recall": None, "wide_precision": None}
    two = [scored("a", "v", "easy", 0, 0.0, 0.0, NAV), scored("a", "v", "easy", 0, 0.1, 0.0, NAV)]
    assert summarize(two)["errors"] == {NAV: 1.0, TOOL: 0.0, COMP: 0.0, "invalid": 0.0}
    # a passed trial's class never counts as an error, whatever it says
    assert summarize([scored("a", "v", "easy", 1, 1.0, 1.0, COMP)])["errors"][COMP] == 0.0
    assert tool_utility(scores) == {"x": 2, "y": -1} and list(tool_utility(scores)) == ["x", "y"]
    assert tool_utility([]) == {}
    assert _avg([None, 1, 2]) == 1.5 and _avg([None]) is None and _avg([]) is None and _avg([0, 0]) == 0


def test_aggregate_groups_in_level_order():
    levels = ["zeta", "hard", None, "easy", "extreme", "alpha", "medium"]
    scores = [scored("b", "linear", lv, 1, 1.0, 1.0, None) for lv in levels] + \
        [scored("a", "dag", "hard", 0, 0.0, 0.0, NAV), scored(None, None, "hard", 1, 1.0, 1.0, None),
         scored("a", "dag", "hard", 1, 1.0, 1.0, None, judgments=[{"tool": "t", "sign": -1}])]
    report = aggregate(scores)
    assert report["overall"] == summarize(scores)
    keys = [(g["agent"], g["variant"], g["level"], g["n"]) for g in report["groups"]]
    assert keys == [("-", "-", "hard", 1), ("a", "dag", "hard", 2), ("b", "linear", "easy", 1),
                    ("b", "linear", "medium", 1), ("b", "linear", "hard", 1), ("b", "linear", "extreme", 1),
                    ("b", "linear", "-", 1), ("b", "linear", "alpha", 1), ("b", "linear", "zeta", 1)]
    dag = report["groups"][1]
    assert dag["fa"] == 0.5 and dag["errors"][NAV] == 0.5
    assert report["tool_utility"] == {"t": -1}


# ---- the judges --------------------------------------------------------------------------------

def test_golden_trace_judge_by_hand():
    g = golden_view(make_leg())
    calls = FULL + [fetch("Gamma", "1554 and 760"), call("countries_population", {"country": "Brazil"}, "")]
    judgments = GoldenTraceJudge().judge(g, Trial("t", "leg-1", "4", calls))
    assert [(j.call, j.tool, j.label, j.confidence) for j in judgments] == [
        (0, "fetch_webpage", POSITIVE, 1.0), (1, "fetch_webpage", NON_POSITIVE, 1.0),
        (2, "maps_geocode", POSITIVE, 1.0), (3, "maps_elevation", POSITIVE, 1.0), (4, "web_search", POSITIVE, 1.0),
        (5, "countries_population", POSITIVE, 1.0), (6, "fetch_webpage", NON_POSITIVE, 1.0),
        (7, "countries_population", NON_POSITIVE, 1.0)]
    assert [j.rationale for j in judgments] == [
        "reached golden page wiki:Alpha; value of stop 0", "nothing new on the golden trace",
        "golden step 2.0 (maps_geocode)", "golden step 2.1 (maps_elevation); value of stop 2", "value of stop 1",
        "golden step 3.0 (countries_population); value of stop 3", "nothing new on the golden trace",
        "nothing new on the golden trace"]
    assert [j.sign for j in judgments] == [1, -1, 1, 1, 1, 1, -1, -1]


def test_one_call_serves_one_golden_step():
    # two roadblocks with the same step: the first call serves the first, the repeat the second
    stops = [Stop(i, ROADBLOCK, "pop", tool_chain=[ToolStep("countries_population", {"country": "Chile"}, "p", "p")],
                  value=19_000_000 + i) for i in range(2)]
    g = golden_view(Leg("two", "easy", "linear", 1, "", "", stops, passcode=1))
    same = call("countries_population", {"country": "chile"})
    judgments = GoldenTraceJudge().judge(g, Trial("t", "two", "1", [same, same, same]))
    assert [j.rationale for j in judgments] == ["golden step 0.0 (countries_population)",
                                                "golden step 1.0 (countries_population)",
                                                "nothing new on the golden trace"]
    # a page first reached through a redirect counts once
    g = golden_view(make_leg())
    judge = GoldenTraceJudge({"Old name": "Alpha"}.get)
    assert judge.resolve is not None
    assert [j.label for j in judge.judge(g, Trial("t", "leg-1", "4", [fetch("Old_name"), fetch("Alpha")]))] == \
        [POSITIVE, NON_POSITIVE]
    assert [j.label for j in GoldenTraceJudge().judge(g, Trial("t", "leg-1", "4", [fetch("Old_name")]))] == \
        [NON_POSITIVE]


def test_a_code_step_is_judged_by_what_it_printed():
    stop = Stop(0, ROADBLOCK, "sum", tool_chain=[ToolStep("python_execute_code", {"code": "print(6 * 7)"}, "out",
                                                          "stdout")], value=42)
    g = golden_view(Leg("code", "easy", "linear", 1, "", "", [stop], passcode=2))
    other_code = call("python_execute_code", {"code": "print(40 + 2)"}, '{"stdout": "42"}')
    [j] = GoldenTraceJudge().judge(g, Trial("t", "code", "2", [other_code]))
    assert j.rationale == "golden step 0.0 (python_execute_code); value of stop 0"


def test_judgment_sign_and_call_text():
    assert Judgment(0, "t", POSITIVE, 0.5, "").sign == 1 and Judgment(0, "t", NON_POSITIVE, 0.5, "").sign == -1
    assert Judgment(0, "t", "other", 0.5, "").sign == -1
    assert call_text(ToolCall("t", {}, True, "abc")) == "abc" and call_text(ToolCall("t", {}, True, None)) == ""


def test_summary_of_the_trajectory():
    assert _summary([]) == "(no calls yet)"
    calls = [ToolCall("t", {"i": i}, True, f"r{i}") for i in range(14)]
    lines = _summary(calls).split("\n")
    assert len(lines) == 12 and lines[0] == "- t({\"i\":2}) -> 'r2'" and lines[-1] == "- t({\"i\":13}) -> 'r13'"
    assert _summary(calls, limit=2) == "- t({\"i\":12}) -> 'r12'\n- t({\"i\":13}) -> 'r13'"
    long = ToolCall("t", {"k": "a" * 300}, True, "b" * 200)
    assert _summary([long]) == "- t(" + ('{"k":"' + "a" * 300)[:200] + ") -> " + repr("b" * 160)
    assert _summary([ToolCall("t", {}, True, None)]) == "- t({}) -> ''"


def test_parse_judgment():
    assert parse_judgment('{"label": "positive", "confidence": 0.9, "rationale": "new page"}') == \
        ("positive", 0.9, "new page")
    assert parse_judgment('```json\n{"label": "non_positive"}\n```') == ("non_positive", 0.0, "")
    assert parse_judgment('{"label": "positive", "confidence": 1.5, "rationale": 3}') == ("positive", 1.0, "3")
    assert parse_judgment('{"label": "positive", "confidence": -2}') == ("positive", 0.0, "")
    assert parse_judgment('{"label": "positive", "confidence": "0.25"}') == ("positive", 0.25, "")
    assert parse_judgment('{"label": "positive", "confidence": 1}') == ("positive", 1.0, "")
    with pytest.raises(ValueError, match=r"^judgment must be a JSON object$"):
        parse_judgment('["positive"]')
    for label in ("maybe", None, "POSITIVE"):
        with pytest.raises(ValueError, match=rf"^label must be positive\|non_positive, got {label!r}$"):
            parse_judgment(json.dumps({"label": label}))


def test_llm_judge_against_a_local_server(tmp_path):
    replies = iter(['{"label": "positive", "confidence": 0.75, "rationale": "new page"}', "no idea",
                    '{"label": "non_positive", "confidence": 0.5, "rationale": "repeat"}', ""])

    def answer(request):
        return Answer(200, chat_completion("judge-model", {"role": "assistant", "content": next(replies)}, "stop",
                                           (1, 1)))
    leg = make_leg()
    leg.clues = [Clue(1, 0, "R" * 3100)]
    calls = [ToolCall("fetch_webpage", {"url": "u" * 600}, True, "x" * 2000), fetch("Beta", "b"), fetch("Alpha")]
    with ScriptedServer({"/v1/chat/completions": answer}) as server:
        settings = load_settings(env={}, llm_base_url=f"{server.url}/v1", llm_model="judge-model",
                                 cache_path=tmp_path / "cache.sqlite")
        judge = make_judge("llm", settings=settings, cache=CallCache(settings.cache_path))
        assert isinstance(judge, LLMJudge) and judge.name == "llm"
        judgments = judge.judge(golden_view(leg), Trial("t", "leg-1", "4", calls))
        sent = [hit.json()["messages"] for hit in server.hits("/v1/chat/completions")]
        # the same calls again: answered from the cache, nothing sent
        again = make_judge("llm", settings=settings, cache=CallCache(settings.cache_path)).judge(
            golden_view(leg), Trial("t", "leg-1", "4", calls))
        assert len(server.hits("/v1/chat/completions")) == 3 and again == judgments
        # an empty reply is no judgment
        [empty] = judge.judge(golden_view(leg), Trial("t", "leg-1", "4", [fetch("Gamma")]))
    assert [(j.call, j.tool, j.label, j.confidence, j.rationale) for j in judgments[::2]] == [
        (0, "fetch_webpage", POSITIVE, 0.75, "new page"), (2, "fetch_webpage", NON_POSITIVE, 0.5, "repeat")]
    bad = judgments[1]
    assert (bad.label, bad.confidence) == (NON_POSITIVE, 0.0)
    assert bad.rationale.startswith("judge error: LLM reply is not JSON")
    assert len(sent) == 3 and all(len(m) == 1 and m[0]["role"] == "user" for m in sent)
    first = sent[0][0]["content"]
    assert first.startswith("You judge one tool call of an agent solving a multi-step puzzle (a race leg).\n"
                            "Puzzle: 1. " + "R" * 2997 + "\nTrajectory before the call:\n(no calls yet)\n")
    assert "\nThe call: fetch_webpage(" + ('{"url":"' + "u" * 600)[:500] + ")\n" in first
    assert "\nIts result (truncated): " + "x" * 1500 + "\nDid this call" in first
    assert first.endswith('Reply with strict JSON only: {"label": "positive" | "non_positive", "confidence": 0..1, '
                          '"rationale": "..."}')
    second = sent[1][0]["content"]
    assert "Trajectory before the call:\n- fetch_webpage(" in second and "\nThe call: fetch_webpage(" in second
    assert sent[2][0]["content"].count("\n- fetch_webpage(") == 2
    assert "\nIts result (truncated): \nDid this call" in sent[2][0]["content"]              # no result
    assert (empty.label, empty.confidence) == (NON_POSITIVE, 0.0)
    assert empty.rationale.startswith("judge error: LLM reply is not JSON") and empty.rationale.endswith(": ''")


def test_llm_judge_records_a_refused_request(tmp_path):
    with ScriptedServer({"/v1/chat/completions": Answer(400, {"error": {"message": "bad model"}})}) as server:
        settings = load_settings(env={}, llm_base_url=f"{server.url}/v1", llm_model="m",
                                 cache_path=tmp_path / "cache.sqlite")
        [j] = make_judge("llm", settings=settings).judge(golden_view(make_leg()),
                                                         Trial("t", "leg-1", "4", [fetch("Alpha")]))
    assert (j.call, j.tool, j.label, j.confidence) == (0, "fetch_webpage", NON_POSITIVE, 0.0)
    assert j.rationale.startswith("judge error: LLM server") and "HTTP 400" in j.rationale


def test_make_judge():
    resolve = {"a": "b"}.get
    judge = make_judge("golden", resolve=resolve)
    assert isinstance(judge, GoldenTraceJudge) and judge.resolve is resolve and judge.name == "golden"
    assert make_judge("golden").resolve is None
    with pytest.raises(ValueError, match=r"^unknown judge 'human': golden \| llm$"):
        make_judge("human")
