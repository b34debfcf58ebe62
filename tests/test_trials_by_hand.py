"""Reading agent trials (``pipeline.scoring.trials``), layout by layout, field by field: every record
and log below is written here and what the reader must make of it follows from the module's
docstring (a call is ``{tool, args, success, result_preview, result_len, ts, url?}``; a record that
cannot be read becomes a trial with ``error`` set)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.model import TraceEntry
from pipeline.scoring.matching import TextIndex
from pipeline.scoring.trials import (
    ToolCall,
    Trial,
    TrialFormatError,
    _call_from,
    _opt_int,
    iter_calls,
    load_trials,
    read_tool_log,
    trial_from_atif,
    trial_from_record,
)


def jsonl(path: Path, *records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


# ---- one call ----------------------------------------------------------------------------------

def test_a_call_names_its_tool_under_any_of_four_keys():
    for key in ("tool", "tool_name", "name", "function_name"):
        assert _call_from({key: "calc", "args": {}}, "w").tool == "calc"
    assert _call_from({"tool": "", "name": "calc"}, "w").tool == "calc"          # the first non-empty one
    assert _call_from({"tool": "a", "tool_name": "b", "name": "c", "function_name": "d"}, "w").tool == "a"
    assert _call_from({"tool_name": "b", "name": "c", "function_name": "d"}, "w").tool == "b"
    assert _call_from({"name": "c", "function_name": "d"}, "w").tool == "c"
    for bad in ({}, {"tool": ""}, {"tool": 3}, {"tool": None, "name": ["x"]}):
        with pytest.raises(TrialFormatError, match=r"^here: tool call without a tool name$"):
            _call_from(bad, "here")
    for bad, kind in (([], "list"), ("calc", "str"), (None, "NoneType")):
        with pytest.raises(TrialFormatError, match=rf"^here: a tool call must be an object, got {kind}$"):
            _call_from(bad, "here")


def test_a_calls_arguments():
    assert _call_from({"tool": "t", "args": {"x": 1}}, "w").args == {"x": 1}
    assert _call_from({"tool": "t", "arguments": {"y": 2}}, "w").args == {"y": 2}
    assert _call_from({"tool": "t", "args": {"x": 1}, "arguments": {"y": 2}}, "w").args == {"x": 1}
    assert _call_from({"tool": "t"}, "w").args == {}
    assert _call_from({"tool": "t", "args": '{"x": [1, 2]}'}, "w").args == {"x": [1, 2]}   # JSON text
    assert _call_from({"tool": "t", "arguments": '{"y": 2}'}, "w").args == {"y": 2}
    with pytest.raises(TrialFormatError, match=r"^line 4: arguments are not JSON \(Expecting value\)$"):
        _call_from({"tool": "t", "args": "x"}, "line 4")
    with pytest.raises(TrialFormatError, match=r"^w: arguments are not JSON"):
        _call_from({"tool": "t", "args": "{x", "success": True}, "w")
    # a failed call keeps its broken arguments as written
    failed = _call_from({"tool": "t", "args": "{x", "success": False}, "w")
    assert failed.args == {"_unparsed_arguments": "{x"} and failed.success is False
    for bad in ('[1, 2]', "3", [1], 7):
        with pytest.raises(TrialFormatError, match=r"^w: arguments must be an object$"):
            _call_from({"tool": "t", "args": bad}, "w")


def test_a_calls_result_success_and_fields():
    c = _call_from({"tool": "t", "args": {}, "result_preview": "r", "result": "other", "result_len": 9, "ts": 1.5,
                    "url": "https://x.org/a", "success": True}, "w")
    assert c == ToolCall("t", {}, True, "r", 9, 1.5, "https://x.org/a")
    assert _call_from({"tool": "t", "result": "only"}, "w").result_preview == "only"
    assert _call_from({"tool": "t"}, "w").result_preview == ""
    bare = _call_from({"tool": "t"}, "w")
    assert (bare.result_len, bare.ts, bare.url, bare.success) == (None, None, None, True)
    # a result that is not text is kept as its JSON (non-ASCII as it is)
    assert _call_from({"tool": "t", "result": {"name": "São Paulo", "n": [1]}}, "w").result_preview == \
        '{"name": "São Paulo", "n": [1]}'
    assert _call_from({"tool": "t", "result_preview": 42}, "w").result_preview == "42"
    # success: as stated (made a bool), else false exactly when the call has an "error" key
    assert _call_from({"tool": "t", "error": "boom"}, "w").success is False
    assert _call_from({"tool": "t", "error": "boom", "success": 1}, "w").success is True
    assert _call_from({"tool": "t", "success": 0}, "w").success is False
    assert _call_from({"tool": "t", "result": "error"}, "w").success is True


def test_from_entry():
    entry = TraceEntry(0, 0, "fetch_webpage", {"url": "https://en.wikipedia.org/wiki/X"}, '{"text": "abcdef"}',
                       "snapshot")
    c = ToolCall.from_entry(entry)
    assert c == ToolCall("fetch_webpage", entry.args, True, '{"text": "abcdef"}', 18, None,
                         "https://en.wikipedia.org/wiki/X")
    cut = ToolCall.from_entry(entry, preview_chars=5)
    assert cut.result_preview == '{"tex' and cut.result_len == 18
    assert ToolCall.from_entry(entry, preview_chars=0).result_preview == ""
    # the url only for fetch_webpage, and only from a dict of arguments
    other = TraceEntry(0, 0, "web_search", {"url": "https://x.org"}, "[]", "snapshot")
    assert ToolCall.from_entry(other).url is None and ToolCall.from_entry(other).success is True
    # failed: an "error" in the response's JSON, or a response that is not JSON
    for response, ok in (('{"error": "no page"}', False), ('["error"]', False), ('"an error"', False),
                         ('{"errors": 0}', True), ("not json", False), ('{"value": 1}', True)):
        assert ToolCall.from_entry(TraceEntry(0, 0, "calc", {}, response, None)).success is ok, response


def test_page_url_and_index():
    assert ToolCall("fetch_webpage", {"url": "a"}).page_url == "a"
    assert ToolCall("fetch_webpage", {"url": "a"}, url="b").page_url == "b"          # the logged url first
    assert ToolCall("fetch_webpage", {}).page_url is None
    assert ToolCall("web_search", {"url": "a"}, url="b").page_url is None
    c = ToolCall("calc", {}, True, "x = 12.5 and 3")
    idx = c.index
    assert isinstance(idx, TextIndex) and idx.text == "x = 12.5 and 3" and idx.nums == [12.5, 3.0]
    assert c.index is idx                                                             # built once
    assert ToolCall("calc", {}, True, None).index.text == ""


def test_opt_int():
    assert [_opt_int(v) for v in (3, 3.9, -2.0, True, False, "3", None, [3])] == [3, 3, -2, None, None, None, None,
                                                                                   None]


# ---- a tool log --------------------------------------------------------------------------------

def test_read_tool_log(tmp_path):
    log = jsonl(tmp_path / "log.jsonl", {"tool": "a", "args": {}}, "", "   ", {"tool": "b", "args": {}})
    assert [c.tool for c in read_tool_log(log)] == ["a", "b"]
    assert [c.tool for c in read_tool_log(str(log))] == ["a", "b"]
    with pytest.raises(TrialFormatError, match=r"^tool log not found: .*missing\.jsonl$"):
        read_tool_log(tmp_path / "missing.jsonl")
    with pytest.raises(TrialFormatError, match=r"^tool log not found"):
        read_tool_log(tmp_path)                                                        # a folder is no log
    bad = jsonl(tmp_path / "bad.jsonl", {"tool": "a"}, "", '{"tool": "b", "ar')
    with pytest.raises(TrialFormatError, match=r"^bad\.jsonl line 3: not valid JSON \(Unterminated string "
                                               r"starting at\); log truncated or malformed$"):
        read_tool_log(bad)
    nameless = jsonl(tmp_path / "nameless.jsonl", {"tool": "a"}, {"args": {}})
    with pytest.raises(TrialFormatError, match=r"^nameless\.jsonl line 2: tool call without a tool name$"):
        read_tool_log(nameless)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"tool": "t", "result_preview": "caf\xe9"}\n')
    assert read_tool_log(latin)[0].result_preview == "caf\ufffd"                      # undecodable: replaced


# ---- a record ----------------------------------------------------------------------------------

def test_trial_from_record_fields(tmp_path):
    rec = {"trial_id": "own", "leg_id": "leg-1", "task_id": "task-1", "answer": 4, "steps": 5.0, "tokens": 120,
           "wall_time_s": 2.5, "agent": "oracle", "messages": ["done", 3, None, "ANSWER: 4"],
           "tool_log": [{"tool": "a"}, {"tool": "b", "args": {"x": 1}}]}
    t = trial_from_record(rec, tmp_path, "fallback")
    assert (t.trial_id, t.leg_id, t.answer, t.steps, t.tokens, t.wall_time_s, t.agent, t.source, t.error) == \
        ("own", "leg-1", "4", 5, 120, 2.5, "oracle", str(tmp_path), None)
    assert t.messages == ["done", "ANSWER: 4"] and [c.tool for c in t.calls] == ["a", "b"]
    t = trial_from_record({"task_id": "task-1", "answer": None, "steps": "5", "tokens": True, "wall_time_s": "2"},
                          tmp_path, "fallback")
    assert (t.trial_id, t.leg_id, t.answer, t.steps, t.tokens, t.wall_time_s, t.agent, t.messages, t.calls) == \
        ("fallback", "task-1", None, None, None, None, None, [], [])
    assert trial_from_record({"leg_id": "l", "answer": 0, "wall_time_s": 3}, tmp_path, "x").answer == "0"
    assert trial_from_record({"leg_id": "l", "wall_time_s": 3}, tmp_path, "x").wall_time_s == 3
    assert trial_from_record({"leg_id": "l", "tool_log": None}, tmp_path, "x").calls == []
    assert trial_from_record({"leg_id": "l", "tool_log": None}, tmp_path, "x").error is None


def test_trial_from_record_problems(tmp_path):
    t = trial_from_record(["leg-1"], tmp_path, "t1")
    assert (t.trial_id, t.leg_id, t.error, t.source) == ("t1", None, "record is not an object (list)", str(tmp_path))
    t = trial_from_record({"answer": "4", "tool_log": 5}, tmp_path, "t2")
    assert t.error == "record has no leg_id" and t.answer == "4"
    t = trial_from_record({"leg_id": "l", "tool_log": 5}, tmp_path, "t3")
    assert t.error == "tool_log must be a list of calls or a path" and t.leg_id == "l"
    t = trial_from_record({"leg_id": "l", "tool_log": [{"tool": "a"}, {"args": {}}]}, tmp_path, "t4")
    assert t.error == "tool_log[1]: tool call without a tool name" and t.calls == []


def test_trial_from_record_reads_its_log_by_path(tmp_path):
    jsonl(tmp_path / "logs" / "t.jsonl", {"tool": "rel"})
    jsonl(tmp_path / "abs.jsonl", {"tool": "abs"})
    t = trial_from_record({"leg_id": "l", "tool_log": "logs/t.jsonl"}, tmp_path, "x")
    assert [c.tool for c in t.calls] == ["rel"]
    t = trial_from_record({"leg_id": "l", "tool_log": str(tmp_path / "abs.jsonl")}, tmp_path / "logs", "x")
    assert [c.tool for c in t.calls] == ["abs"]
    t = trial_from_record({"leg_id": "l", "tool_log": "nope.jsonl"}, tmp_path, "x")
    assert t.error == f"tool log not found: {tmp_path / 'nope.jsonl'}"


# ---- an ATIF trajectory ------------------------------------------------------------------------

def atif_call(call_id, name="countries_population", arguments=None):
    return {"tool_call_id": call_id, "function_name": name, "arguments": arguments or {"country": "Brazil"}}


def test_trial_from_atif_by_hand():
    traj = {"steps": [
        {"source": "user", "message": "solve"},
        {"source": "agent", "message": "", "tool_calls": [atif_call("c1"), atif_call("c2", "fetch_webpage",
                                                                                     {"url": "u"})],
         "observation": {"results": [{"source_call_id": "c1", "content": '{"population": 1}'},
                                     {"source_call_id": "c2", "content": {"error": "gone", "é": 1}, "is_error": False},
                                     "not a result"]},
         "metrics": {"prompt_tokens": 100, "completion_tokens": 5}},
        {"source": "agent", "message": "thinking", "tool_calls": [atif_call("c3")],
         "observation": {"results": [{"source_call_id": "c3", "content": "fine", "is_error": True}]},
         "metrics": {"prompt_tokens": None}},
        {"source": "agent", "message": "ANSWER: 4", "tool_calls": [atif_call("c4")], "metrics": {}},
    ]}
    t = trial_from_atif(traj, "tid", "src", "leg-1", "4")
    assert (t.trial_id, t.leg_id, t.answer, t.source, t.error) == ("tid", "leg-1", "4", "src", None)
    assert t.messages == ["thinking", "ANSWER: 4"]          # agent messages, not empty ones, not the user's
    assert t.tokens == 105 and t.steps == 3                 # three agent steps, no final metrics
    c1, c2, c3, c4 = t.calls
    assert (c1.result_preview, c1.result_len, c1.success) == ('{"population": 1}', 17, True)
    assert (c2.tool, c2.args, c2.page_url) == ("fetch_webpage", {"url": "u"}, "u")
    assert c2.result_preview == '{"error": "gone", "é": 1}' and c2.result_len == 25 and c2.success is False
    assert (c3.result_preview, c3.success) == ("fine", False)                         # is_error
    assert (c4.result_preview, c4.result_len, c4.success) == ("", None, True)        # no result: as logged


def test_atif_error_in_a_result_counts_in_its_first_200_characters():
    def one(content):
        traj = {"steps": [{"source": "agent", "tool_calls": [atif_call("c")],
                           "observation": {"results": [{"source_call_id": "c", "content": content}]}}]}
        return trial_from_atif(traj, "t", "s").calls[0].success
    assert one("x" * 190 + '"error"') is False
    assert one("x" * 193 + '"error"') is False              # characters 194 to 200
    assert one("x" * 194 + '"error"') is True               # its closing quote is the 201st
    assert one("error without quotes") is True


def test_atif_final_metrics_win():
    steps = [{"source": "agent", "metrics": {"prompt_tokens": 3, "completion_tokens": 4}}]
    t = trial_from_atif({"steps": steps, "final_metrics": {"total_prompt_tokens": 10, "total_completion_tokens": 2,
                                                           "total_steps": 9}}, "t", "s")
    assert (t.tokens, t.steps) == (12, 9)
    t = trial_from_atif({"steps": steps, "final_metrics": {"total_prompt_tokens": 10}}, "t", "s")
    assert (t.tokens, t.steps) == (10, 1)
    t = trial_from_atif({"steps": steps, "final_metrics": {"total_completion_tokens": 2}}, "t", "s")
    assert t.tokens == 2
    t = trial_from_atif({"steps": [{"source": "user"}], "final_metrics": None}, "t", "s")
    assert (t.tokens, t.steps, t.calls, t.answer, t.leg_id) == (None, None, [], None, None)


def test_atif_problems():
    for traj in ([], {"steps": {}}, {"no": "steps"}):
        t = trial_from_atif(traj, "t", "s", "leg")
        assert t.error == "ATIF trajectory without a steps list" and t.leg_id == "leg"
    t = trial_from_atif({"steps": [{"source": "agent"}, "step"]}, "t", "s")
    assert t.error == "ATIF step 1 is not an object"
    t = trial_from_atif({"steps": [{"source": "agent", "tool_calls": [atif_call("a"), {"arguments": {}}]}]}, "t", "s")
    assert t.error == "ATIF step 0: tool call without a tool name" and len(t.calls) == 1


# ---- folders and files -------------------------------------------------------------------------

def test_a_harbor_trial_folder(tmp_path):
    d = tmp_path / "runs" / "trial-1"
    traj = {"steps": [{"source": "agent", "message": "m", "tool_calls": [atif_call("c1")],
                       "observation": {"results": [{"source_call_id": "c1", "content": "atif"}]}}]}
    (d / "agent").mkdir(parents=True)
    (d / "agent" / "trajectory.json").write_text(json.dumps(traj))
    (d / "result.json").write_text(json.dumps({"task_name": "legwork-leg-1", "task_id": "other"}))
    (d / "answer.txt").write_text("  7\n")
    [t] = load_trials(tmp_path / "runs")
    assert (t.trial_id, t.leg_id, t.answer, t.source, t.error) == ("trial-1", "legwork-leg-1", "7", str(d), None)
    assert [c.result_preview for c in t.calls] == ["atif"] and t.messages == ["m"]
    # our executor's tool log is richer than the ATIF view: it replaces the calls
    jsonl(d / "logs" / "tool_log.jsonl", {"tool": "from_log"})
    [t] = load_trials(tmp_path / "runs")
    assert [c.tool for c in t.calls] == ["from_log"] and t.messages == ["m"]
    (d / "result.json").write_text(json.dumps({"leg_id": "L", "task_name": "T", "task_id": "I"}))
    assert load_trials(tmp_path / "runs")[0].leg_id == "L"
    (d / "result.json").write_text(json.dumps({"task_id": "I"}))
    assert load_trials(tmp_path / "runs")[0].leg_id == "I"


def test_trial_folders_without_a_trajectory(tmp_path):
    runs = tmp_path / "runs"
    # a log and an answer, the leg from result.json
    a = runs / "a"
    jsonl(a / "tool_log.jsonl", {"tool": "x"})
    (a / "result.json").write_text(json.dumps({"leg_id": "leg-a"}))
    (a / "sub").mkdir()
    (a / "sub" / "answer.txt").write_text("2")
    (a / "answer.txt").write_text("1")
    # nothing to say which leg
    b = runs / "b"
    jsonl(b / "tool_log.jsonl", {"tool": "y"})
    # a result.json only, no answer, no log
    c = runs / "c"
    c.mkdir(parents=True)
    (c / "result.json").write_text(json.dumps({"task_name": "leg-c"}))
    # a broken trajectory keeps its own error
    d = runs / "d"
    d.mkdir()
    (d / "trajectory.json").write_text(json.dumps({"steps": "none"}))
    (d / "result.json").write_text(json.dumps({"leg_id": "leg-d"}))
    jsonl(d / "tool_log.jsonl", {"tool": "z"})
    trials = {t.trial_id: t for t in load_trials(runs)}
    assert list(trials) == ["a", "b", "c", "d"]
    ta, tb, tc, td = trials.values()
    assert (ta.leg_id, ta.answer, [x.tool for x in ta.calls], ta.error) == ("leg-a", "1", ["x"], None)
    assert tb.leg_id is None and tb.error == "no leg id (trial.json leg_id or result.json task_name)"
    assert [x.tool for x in tb.calls] == ["y"] and tb.source == str(b)
    assert (tc.leg_id, tc.answer, tc.calls, tc.error, tc.source) == ("leg-c", None, [], None, str(c))
    assert td.error == "ATIF trajectory without a steps list" and td.calls == [] and td.leg_id == "leg-d"


def test_a_folder_with_an_answer_and_no_calls(tmp_path):
    d = tmp_path / "runs" / "t"
    d.mkdir(parents=True)
    (d / "result.json").write_text(json.dumps({"task_name": "leg-1"}))
    (d / "answer.txt").write_text("3\n")
    [t] = load_trials(tmp_path / "runs")
    assert (t.trial_id, t.leg_id, t.answer, t.calls, t.source, t.error) == ("t", "leg-1", "3", [], str(d), None)



def test_trial_files_are_utf8_whatever_the_locale(tmp_path, ascii_locale):
    runs = tmp_path / "runs"
    harbor = runs / "h"
    jsonl(harbor / "tool_log.jsonl", json.dumps({"tool": "t", "result_preview": "São Paulo"}, ensure_ascii=False))
    (harbor / "result.json").write_text(json.dumps({"task_name": "légs"}, ensure_ascii=False), encoding="utf-8")
    (harbor / "answer.txt").write_text("é", encoding="utf-8")
    jsonl(runs / "r.jsonl", json.dumps({"leg_id": "l", "answer": "ü"}, ensure_ascii=False))
    by_id = {t.trial_id: t for t in load_trials(runs)}
    assert (by_id["h"].leg_id, by_id["h"].answer, by_id["h"].calls[0].result_preview) == ("légs", "é", "São Paulo")
    assert by_id["r:1"].answer == "ü"
    assert read_tool_log(harbor / "tool_log.jsonl")[0].result_preview == "São Paulo"


def test_undecodable_bytes_in_a_file_of_records_are_replaced(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b'{"leg_id": "l", "answer": "caf\xe9"}\n')
    [t] = load_trials(path)
    assert (t.answer, t.error) == ("caf\ufffd", None)


def test_unreadable_trial_folders(tmp_path):
    runs = tmp_path / "runs"
    jsonl(runs / "a" / "tool_log.jsonl", {"tool": "x"}, "{broken")
    (runs / "b").mkdir()
    (runs / "b" / "result.json").write_text("{not json")
    (runs / "c").mkdir()
    (runs / "c" / "result.json").write_text("[1]")                       # not an object: no .get
    (runs / "d").mkdir()
    (runs / "d" / "trial.json").write_text(json.dumps({"leg_id": "l", "tool_log": "tool_log.jsonl"}))
    (runs / "e" / "trajectory.json").mkdir(parents=True)                 # a folder where a file should be
    trials = {t.trial_id: t for t in load_trials(runs)}
    assert trials["a"].error == "tool_log.jsonl line 2: not valid JSON (Expecting property name enclosed in " \
                                "double quotes); log truncated or malformed"
    assert trials["a"].leg_id is None and trials["a"].source == str(runs / "a")
    assert trials["b"].error.startswith("unreadable trial: Expecting property name")
    assert trials["c"].error == "unreadable trial: 'list' object has no attribute 'get'"
    assert trials["d"].error == f"tool log not found: {runs / 'd' / 'tool_log.jsonl'}" and trials["d"].leg_id == "l"
    assert trials["e"].error.startswith("unreadable trial: [Errno 21] Is a directory")
    assert all(t.source == str(runs / t.trial_id) for t in trials.values())


def test_jsonl_files_of_records_and_trajectories(tmp_path):
    runs = tmp_path / "runs"
    traj = {"steps": [{"source": "agent", "message": "hi"}], "task_name": "leg-t"}
    jsonl(runs / "r.jsonl", {"leg_id": "leg-1", "answer": "3"}, "", traj, "{oops",
          {"leg_id": "leg-2", "steps": [1, 2], "tool_log": []}, ["not a record"])
    jsonl(runs / "tool_log.jsonl", {"tool": "not a trial"})
    (runs / "notes.txt").write_text("ignored")
    trials = load_trials(runs)
    assert [t.trial_id for t in trials] == ["r:1", "r:3", "r:4", "r:5", "r:6"]
    one, atif, broken, steps_and_leg, listed = trials
    assert (one.leg_id, one.answer, one.source) == ("leg-1", "3", str(runs))       # record: its folder
    assert (atif.leg_id, atif.messages, atif.steps, atif.source) == ("leg-t", ["hi"], 1, str(runs / "r.jsonl"))
    assert broken.error == "r.jsonl line 4: not valid JSON (Expecting property name enclosed in double quotes)"
    assert broken.source == str(runs / "r.jsonl") and broken.leg_id is None
    assert (steps_and_leg.leg_id, steps_and_leg.steps, steps_and_leg.error) == ("leg-2", None, None)
    assert listed.error == "record is not an object (list)"


def test_load_trials_from_a_file(tmp_path):
    (tmp_path / "one.json").write_text(json.dumps({"leg_id": "leg-1", "answer": "5", "tool_log": "log.jsonl"}))
    jsonl(tmp_path / "log.jsonl", {"tool": "x"})
    [t] = load_trials(tmp_path / "one.json")
    assert (t.trial_id, t.leg_id, t.answer, [c.tool for c in t.calls]) == ("one", "leg-1", "5", ["x"])
    (tmp_path / "traj.json").write_text(json.dumps({"steps": [], "task_name": "leg-9"}))
    [t] = load_trials(tmp_path / "traj.json")
    assert (t.trial_id, t.leg_id, t.source, t.error) == ("traj", "leg-9", str(tmp_path / "traj.json"), None)
    (tmp_path / "both.json").write_text(json.dumps({"steps": [], "leg_id": "leg-2", "task_name": "T"}))
    assert load_trials(tmp_path / "both.json")[0].leg_id == "leg-2"          # a record that has a steps list
    (tmp_path / "list.json").write_text("[]")
    assert load_trials(tmp_path / "list.json")[0].error == "record is not an object (list)"
    jsonl(tmp_path / "many.txt", {"leg_id": "a"}, {"leg_id": "b"})
    assert [t.trial_id for t in load_trials(tmp_path / "many.txt")] == ["many:1", "many:2"]
    with pytest.raises(FileNotFoundError, match=r"^no runs at .*nowhere$"):
        load_trials(tmp_path / "nowhere")


def test_load_trials_walks_folders_in_order(tmp_path):
    runs = tmp_path / "runs"
    jsonl(runs / "b.jsonl", {"leg_id": "1"})
    jsonl(runs / "a.jsonl", {"leg_id": "2"})
    (runs / "z-trial").mkdir()
    (runs / "z-trial" / "trial.json").write_text(json.dumps({"leg_id": "3"}))
    jsonl(runs / "m-trial" / "tool_log.jsonl", {"tool": "t"})
    jsonl(runs / "nested" / "deeper" / "c.jsonl", {"leg_id": "4"})
    (runs / "nested" / "deeper" / "w-trial").mkdir()
    (runs / "nested" / "deeper" / "w-trial" / "trial.json").write_text(json.dumps({"leg_id": "5"}))
    (runs / "h-trial" / "agent").mkdir(parents=True)
    (runs / "h-trial" / "agent" / "trajectory.json").write_text(json.dumps({"steps": []}))
    (runs / "empty").mkdir()
    assert [t.trial_id for t in load_trials(runs)] == ["a:1", "b:1", "h-trial", "m-trial", "c:1", "w-trial",
                                                       "z-trial"]


def test_trial_to_dict_and_iter_calls():
    calls = [ToolCall("a", {}), ToolCall("b", {"x": 1}, False, "r", 1, 2.0, "u")]
    t = Trial("t", "l", "4", calls[:1], 1, 2, 3.0, "ag", "src", None, ["m"])
    assert t.to_dict() == {"trial_id": "t", "leg_id": "l", "answer": "4", "steps": 1, "tokens": 2, "wall_time_s": 3.0,
                           "agent": "ag", "source": "src", "error": None, "messages": ["m"],
                           "calls": [{"tool": "a", "args": {}, "success": True, "result_preview": "", "result_len": None,
                                      "ts": None, "url": None}]}
    assert list(iter_calls([t, Trial("u", None, calls=calls[1:]), Trial("v", None)])) == calls
    assert Trial("x", None).calls == [] and Trial("x", None).messages == [] and Trial("y", None).calls is not \
        Trial("z", None).calls
