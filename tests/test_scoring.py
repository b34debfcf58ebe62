"""Race metrics on small hand-built legs and trials (expected values worked out by hand)."""
import json

import pytest

from pipeline.llm import LLMJunk
from pipeline.model import Leg, Stop, ToolStep, TraceEntry
from pipeline.scoring import (
    aggregate,
    final_answer_correct,
    golden_view,
    load_trials,
    page_key,
    score_trial,
    tool_utility,
)
from pipeline.scoring.judges import GoldenTraceJudge, parse_judgment
from pipeline.scoring.matching import args_match, haversine_km, value_in_text, values_match
from pipeline.scoring.trials import ToolCall, Trial

W = "https://en.wikipedia.org/wiki/"


def make_leg() -> Leg:
    stops = [
        Stop(0, "route_info", "founding year", page_url=W + "S%C3%A3o_Paulo", value=1554, value_type="number"),
        Stop(1, "route_info", "river", page_url=W + "Tiet%C3%AA_River", value="Paraná River", value_type="text"),
        Stop(2, "roadblock", "elevation", depends_on=[1],
             tool_chain=[ToolStep("maps_geocode", {"address": {"$stop": 1}}, "coords", ""),
                         ToolStep("maps_elevation", {"locations": {"$step": 0, "path": ""}}, "elevation_m", "elevation_m")],
             value=760, value_type="number"),
        Stop(3, "roadblock", "population", tool_chain=[ToolStep("countries_population", {"country": "Brazil"},
                                                                "population", "population")],
             value=203080756, value_type="number"),
        Stop(4, "finish_line", "final", depends_on=[0, 2], expression="(s0 + s2) % 10", value=4, value_type="number"),
    ]
    trace = [
        TraceEntry(0, 0, "fetch_webpage", {"url": W + "S%C3%A3o_Paulo"}, "{}", "snapshot", "computed", 1554),
        TraceEntry(1, 0, "fetch_webpage", {"url": W + "Tiet%C3%AA_River"}, "{}", "snapshot", "computed", "Paraná River"),
        TraceEntry(2, 0, "maps_geocode", {"address": "Paraná River"}, "{}", "offline-data", "computed",
                   {"lat": -23.55, "lng": -46.63}),
        TraceEntry(2, 1, "maps_elevation", {"locations": {"lat": -23.55, "lng": -46.63}}, "{}", "offline-data",
                   "computed", 760),
        TraceEntry(3, 0, "countries_population", {"country": "Brazil"}, "{}", "offline-data", "computed", 203080756),
    ]
    return Leg("leg-1", "easy", "linear", 7, "São Paulo", W + "S%C3%A3o_Paulo", stops, passcode=4, trace=trace)


def call(tool, args, preview="", success=True):
    return ToolCall(tool, args, success, preview, len(preview))


def test_url_normalisation():
    key = page_key(W + "S%C3%A3o_Paulo")
    assert key == page_key("http://en.m.wikipedia.org/wiki/são Paulo#History")
    assert key == page_key("https://pt.wikipedia.org/wiki/S%C3%A3o_Paulo?action=view")
    assert key == page_key("https://en.wikipedia.org/w/index.php?title=S%C3%A3o_Paulo&oldid=5")
    assert key != page_key(W + "Sao_Paulo")
    # redirects through a resolver (a snapshot's redirect table)
    redirects = {"Sao Paulo": "São Paulo"}
    assert page_key(W + "Sao_Paulo", redirects.get) == key


def test_tolerances():
    assert values_match(100.0, 100.99) and not values_match(100.0, 101.5)       # 1 % relative
    assert values_match("Paraná  River", "parana river")                        # accents, case, spaces
    d = haversine_km((-23.55, -46.63), (-23.555, -46.63))                       # 0.005 deg lat = 0.556 km
    assert 0.55 < d < 0.56
    assert values_match({"lat": -23.55, "lng": -46.63}, {"lat": -23.555, "lng": -46.63})
    assert not values_match({"lat": -23.55, "lng": -46.63}, {"lat": -23.56, "lng": -46.63})  # 1.1 km
    assert args_match({"origin": "A", "mode": "driving"}, {"origin": "a"}, {"mode": "driving"})  # default
    assert value_in_text(1554, "founded on 25 January 1,554") and value_in_text(1554, "in 1569")  # 1 %: 15.5
    assert not value_in_text(1554, "in 1570")


def test_final_answer():
    assert final_answer_correct("4", 4) and final_answer_correct(" 4\n", 4)
    assert not final_answer_correct("44", 4) and not final_answer_correct("The answer is 4", 4)
    assert not final_answer_correct(None, 4)


def test_full_trial_scores():
    leg = make_leg()
    g = golden_view(leg)
    calls = [
        call("fetch_webpage", {"url": "https://en.m.wikipedia.org/wiki/São_Paulo"}, "São Paulo was founded in 1554"),
        call("fetch_webpage", {"url": W + "Tietê_River"}, "The Tietê flows to the Paraná River"),
        call("maps_geocode", {"address": "parana river"}, '{"lat": -23.551, "lng": -46.632}'),
        call("maps_elevation", {"locations": [{"lat": -23.5505, "lng": -46.6333}]}, '{"elevation_m": 761}'),
        call("countries_population", {"country": "Brazil"}, '{"population": 203080756}'),
        call("countries_population", {"country": "Brazil"}, '{"population": 203080756}'),  # repeat: not useful
    ]
    s = score_trial(g, Trial("t1", "leg-1", "4", calls))
    assert (s.fa, s.pvr, s.rcr) == (1, 1.0, 1.0)
    assert s.intermediate == 1.0                 # 1554, Paraná River, 760 (761 within 1 %), 203080756
    assert s.n_calls == 6 and s.useful_calls == 5 and s.eta == pytest.approx(5 / 6)
    assert s.error_class is None and not s.shortcut
    assert s.budget == 10 and not s.step_limit_hit


def test_the_answer_digit_is_no_intermediate_value():
    leg = make_leg()
    leg.stops[0].value = 7                       # a one-digit stop value ...
    s = score_trial(golden_view(leg), Trial("t2", "leg-1", "7", []))
    assert s.intermediate == 0.0                 # ... equal to a guessed answer is not obtained
    s = score_trial(golden_view(leg), Trial("t3", "leg-1", "7", [], messages=["clue 1 gives 7"]))
    assert s.intermediate == 0.25                # stated in the agent's working, it is


def test_rcr_needs_matching_arguments_and_whole_chain():
    g = golden_view(make_leg())
    # geocoded the wrong place (> 1 km) and skipped the elevation: chain 2 incomplete; chain 3 done
    calls = [call("maps_geocode", {"address": "Rio"}), call("countries_population", {"country": "BRAZIL "})]
    s = score_trial(g, Trial("t", "leg-1", "3", calls))
    assert s.rcr == 0.5 and s.pvr == 0.0
    assert s.error_class == "navigation"


def test_error_decomposition_and_flags():
    g = golden_view(make_leg())
    pages = [call("fetch_webpage", {"url": W + "São_Paulo"}), call("fetch_webpage", {"url": W + "Tietê_River"})]
    tool_err = score_trial(g, Trial("a", "leg-1", "1", pages))
    assert (tool_err.pvr, tool_err.rcr, tool_err.error_class) == (1.0, 0.0, "tool_use")
    full = pages + [call("maps_geocode", {"address": "Paraná River"}),
                    call("maps_elevation", {"locations": {"lat": -23.55, "lng": -46.63}}),
                    call("countries_population", {"country": "Brazil"}, "1554 Paraná River 760 203080756")]
    comp = score_trial(g, Trial("b", "leg-1", "9", full))
    assert comp.error_class == "computation" and comp.near_miss
    shortcut = score_trial(g, Trial("c", "leg-1", "4", []))
    assert shortcut.fa == 1 and shortcut.shortcut and shortcut.error_class is None and shortcut.eta is None


def test_malformed_logs_are_per_trial_failures(tmp_path):
    good = tmp_path / "good"
    good.mkdir()
    (good / "trial.json").write_text(json.dumps({"leg_id": "leg-1", "answer": "4", "tool_log": "tool_log.jsonl"}))
    (good / "tool_log.jsonl").write_text(json.dumps({"tool": "countries_population", "args": {"country": "Brazil"},
                                                     "success": True, "result_preview": "", "result_len": 0,
                                                     "ts": 1.0}) + "\n")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "trial.json").write_text(json.dumps({"leg_id": "leg-1", "answer": "4", "tool_log": "tool_log.jsonl"}))
    (bad / "tool_log.jsonl").write_text('{"tool": "fetch_webpage", "args": {"url": "x"}}\n{"tool": "maps_geo')
    (tmp_path / "records.jsonl").write_text(
        json.dumps({"leg_id": "leg-1", "answer": "4", "tool_log": [{"tool": "x", "args": "{not json"}]}) + "\n"
        + "{truncated\n")
    trials = {t.trial_id: t for t in load_trials(tmp_path)}
    assert "line 2" in trials["bad"].error and trials["good"].error is None
    assert "not JSON" in trials["records:1"].error and "not valid JSON" in trials["records:2"].error
    scores = {s.trial_id: s for s in (score_trial(golden_view(make_leg()), t) for t in trials.values())}
    assert scores["good"].fa == 1 and scores["good"].rcr == 0.5
    assert scores["bad"].fa == 0 and scores["bad"].error_class == "invalid" and "truncated" in scores["bad"].invalid_reason
    report = aggregate(list(scores.values()))
    assert report["overall"]["n"] == 4 and report["overall"]["invalid"] == 3


def test_atif_trajectory(tmp_path):
    traj = {"schema_version": "ATIF-v1.4", "session_id": "x", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "go"},
                      {"step_id": 2, "source": "agent", "message": "",
                       "tool_calls": [{"tool_call_id": "c1", "function_name": "countries_population",
                                       "arguments": {"country": "Brazil"}}],
                       "observation": {"results": [{"source_call_id": "c1", "content": '{"population": 203080756}'}]},
                       "metrics": {"prompt_tokens": 100, "completion_tokens": 5}},
                      {"step_id": 3, "source": "agent", "message": "ANSWER: 4"}]}
    trial_dir = tmp_path / "harbor-trial-1"
    (trial_dir / "agent").mkdir(parents=True)
    (trial_dir / "agent" / "trajectory.json").write_text(json.dumps(traj))
    (trial_dir / "result.json").write_text(json.dumps({"task_name": "legwork-linear-easy-leg-1"}))
    (trial_dir / "answer.txt").write_text("4\n")
    [t] = load_trials(tmp_path)
    assert t.tokens == 105 and t.steps == 2 and t.answer == "4" and len(t.calls) == 1
    from pipeline.scoring import score_trials
    [s] = score_trials([make_leg()], [t])
    assert s.leg_id == "legwork-linear-easy-leg-1" and s.fa == 1 and s.rcr == 0.5


def test_tool_utility_sums_signs():
    g = golden_view(make_leg())
    calls = [call("countries_population", {"country": "Brazil"}), call("countries_population", {"country": "Brazil"}),
             call("web_search", {"query": "x"})]
    s = score_trial(g, Trial("t", "leg-1", "0", calls), GoldenTraceJudge())
    assert [j["label"] for j in s.judgments] == ["positive", "non_positive", "non_positive"]
    assert tool_utility([s]) == {"countries_population": 0, "web_search": -1}


def test_llm_judgment_parsing():
    assert parse_judgment('{"label": "positive", "confidence": 0.9, "rationale": "new page"}') == \
        ("positive", 0.9, "new page")
    with pytest.raises(LLMJunk):
        parse_judgment("positive")
    with pytest.raises(ValueError):
        parse_judgment('{"label": "maybe"}')
