"""Task-set race scores (``pipeline.scoring.tasks``) on a hand-made task set and runs folder, every
figure worked out by hand from the module's definitions (no race is run: the trials are written
here as the task races write them, ``trial.json`` and ``tool_log.jsonl``).

Tool efficiency = useful calls / calls, a call being useful when it succeeded and the trial
succeeded; a group's success rate is over its judged trials, its efficiency pools the calls of its
judged trials, mean steps is over all its trials, tokens are summed over the trials reporting them.
"""
from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from pipeline.scoring import tasks as scoring_tasks
from pipeline.scoring.tasks import (
    aggregate_tasks,
    load_task_trials,
    score_task_runs,
    score_task_trial,
    summarize_group,
)
from pipeline.tasks.common import write_task_table

ROWS = [  # task_id, family, domain, topic, difficulty
    ("m1", "math", "algebra", "linear", 1),
    ("m2", "math", "algebra", "linear", 2),
    ("m3", "math", "geometry", "cercles (géométrie)", 2),
    ("g1", "git", "branching", "merge", 1),
]


def task_row(task_id, family, domain, topic, difficulty) -> dict:
    return {"task_id": task_id, "family": family, "domain": domain, "topic": topic, "difficulty": difficulty,
            "seed": 0, "prompt": "p", "answer_json": "null", "trace_json": "{}", "metadata_json": "{}"}


def call(success: bool, tool: str = "calculator") -> dict:
    return {"tool": tool, "args": {"expression": "1+1"}, "success": success, "result_preview": "2",
            "result_len": 1, "ts": 0.0}


def record(task_id, agent, success, judged, steps, tokens, stop_reason, **extra) -> dict:
    family = {r[0]: r[1] for r in ROWS}.get(task_id, "math")
    return {"task_id": task_id, "family": family, "domain": "d", "topic": "t", "difficulty": 1, "agent": agent,
            "seed": 3, "success": success, "judged": judged, "steps": steps, "tokens": tokens, "wall_time_s": 0.5,
            "stop_reason": stop_reason, "answer": "x", **extra}


def write_trial(runs: Path, name: str, rec, calls: list[dict] | None = None, log: str = "tool_log.jsonl") -> None:
    d = runs / name
    d.mkdir(parents=True)
    (d / "trial.json").write_text(rec if isinstance(rec, str) else json.dumps(rec))
    if calls is not None:
        (d / log).write_text("".join(json.dumps(c) + "\n" for c in calls))


@pytest.fixture
def task_set(tmp_path):
    tasks = tmp_path / "tasks"
    write_task_table([task_row(*r) for r in ROWS], tasks / "tasks.parquet")
    runs = tmp_path / "runs"
    runs.mkdir()
    # oracle: m1 succeeds with 2 of 3 calls ok, m2 fails with 2 ok calls, g1 unjudged (a crash, no calls)
    write_trial(runs, "a-oracle-m1", record("m1", "oracle", True, True, 3, 100, "answered", judge_note="exact"),
                [call(True), call(False), call(True)])
    write_trial(runs, "b-oracle-m2", record("m2", "oracle", False, True, 4, None, "step_limit"),
                [call(True), call(True)])
    write_trial(runs, "c-oracle-g1", record("g1", "oracle", None, False, 1, 50, "crash"), [])
    # rand: m1 succeeds with its one ok call (its log under another name), m3 fails with no calls
    write_trial(runs, "d-rand-m1", record("m1", "rand", True, True, 2, 7, "answered", tool_log="calls.jsonl"),
                [call(True)], log="calls.jsonl")
    write_trial(runs, "e-rand-m3", record("m3", "rand", False, True, 6, 9, "answered", trial_id="other"), [])
    # what is not scored
    write_trial(runs, "f-leg-trial", {"leg_id": "leg-1", "answer": "4"})                  # a leg trial: skipped
    write_trial(runs, "g-broken", "{not json")
    write_trial(runs, "h-list", "[1, 2]")
    rec = record("m1", "oracle", True, True, 1, 1, "answered")
    del rec["stop_reason"], rec["answer"]
    write_trial(runs, "i-missing", rec, [])
    write_trial(runs, "j-no-log", record("m1", "oracle", True, True, 1, 1, "answered"))
    write_trial(runs, "k-unknown-task", record("zz", "oracle", True, True, 1, 1, "answered"), [])
    (runs / "l-dir-trial" / "trial.json").mkdir(parents=True)                              # unreadable: a folder
    write_trial(runs, "m-leg-and-task", {**record("m2", "rand", False, True, 5, None, "crash"), "leg_id": "x"}, [])
    return tasks, runs


def test_score_task_trial_by_hand():
    row = dict(zip(("task_id", "family", "domain", "topic", "difficulty"), ROWS[0]))
    from pipeline.scoring.trials import ToolCall
    calls = [ToolCall("calculator", {}, True), ToolCall("calculator", {}, False), ToolCall("calculator", {}, True)]
    trial = {**record("ignored", "oracle", True, 1, 3, 100, "answered"), "trial_id": "t1", "calls": calls}
    assert score_task_trial(trial, row) == {
        "trial_id": "t1", "task_id": "m1", "agent": "oracle", "seed": 3, "family": "math", "domain": "algebra",
        "topic": "linear", "difficulty": 1, "success": True, "judged": True, "judge_note": "", "steps": 3,
        "tokens": 100, "wall_time_s": 0.5, "stop_reason": "answered", "n_calls": 3, "ok_calls": 2,
        "useful_calls": 2, "tool_efficiency": 2 / 3}
    failed = score_task_trial({**trial, "success": False, "judge_note": "wrong"}, row)
    assert (failed["ok_calls"], failed["useful_calls"], failed["tool_efficiency"], failed["judge_note"]) == \
        (2, 0, 0.0, "wrong")
    # only ``success is True`` makes calls useful (an unjudged trial's None, a truthy non-bool, do not)
    assert score_task_trial({**trial, "success": None, "judged": 0}, row)["useful_calls"] == 0
    assert score_task_trial({**trial, "success": 1}, row)["useful_calls"] == 0
    assert score_task_trial({**trial, "success": None, "judged": 0}, row)["judged"] is False
    assert score_task_trial({**trial, "calls": []}, row)["tool_efficiency"] is None


def test_load_task_trials(task_set):
    _, runs = task_set
    trials, invalid = load_task_trials(runs)
    assert [t["trial_id"] for t in trials] == ["a-oracle-m1", "b-oracle-m2", "c-oracle-g1", "d-rand-m1",
                                              "e-rand-m3", "k-unknown-task", "m-leg-and-task"]
    by_id = {t["trial_id"]: t for t in trials}
    assert [c.success for c in by_id["a-oracle-m1"].get("calls")] == [True, False, True]
    assert [c.success for c in by_id["d-rand-m1"]["calls"]] == [True]            # its own log file
    assert by_id["a-oracle-m1"]["judge_note"] == "exact" and by_id["e-rand-m3"]["calls"] == []
    reasons = {d["trial_id"]: d["reason"] for d in invalid}
    assert sorted(reasons) == ["g-broken", "h-list", "i-missing", "j-no-log", "l-dir-trial"]
    assert reasons["g-broken"].startswith("trial.json unreadable: Expecting property name")
    assert reasons["l-dir-trial"].startswith("trial.json unreadable: [Errno 21] Is a directory")
    assert reasons["h-list"] == "trial.json is not an object"
    assert reasons["i-missing"] == "trial.json lacks stop_reason, answer"
    assert reasons["j-no-log"] == f"tool log not found: {runs / 'j-no-log' / 'tool_log.jsonl'}"


def test_summarize_group_by_hand(task_set):
    tasks, runs = task_set
    _, scores = score_task_runs(tasks, runs)
    oracle = [s for s in scores if s["agent"] == "oracle"]
    assert summarize_group(oracle) == {
        "n": 3, "judged": 2, "unjudged": 1, "succeeded": 1, "success_rate": 0.5,
        "mean_steps": (3 + 4 + 1) / 3, "tokens": 150, "mean_tokens": 75.0, "tool_calls": 5,
        "tool_efficiency": (2 + 0) / (3 + 2),           # judged trials' calls only (g1 has none anyway)
        "crashes": 1, "stop_reasons": {"answered": 1, "crash": 1, "step_limit": 1}}
    unjudged = [s for s in oracle if not s["judged"]]
    assert summarize_group(unjudged) == {
        "n": 1, "judged": 0, "unjudged": 1, "succeeded": 0, "success_rate": None, "mean_steps": 1.0,
        "tokens": 50, "mean_tokens": 50.0, "tool_calls": 0, "tool_efficiency": None, "crashes": 1,
        "stop_reasons": {"crash": 1}}
    assert summarize_group([]) == {
        "n": 0, "judged": 0, "unjudged": 0, "succeeded": 0, "success_rate": None, "mean_steps": None,
        "tokens": None, "mean_tokens": None, "tool_calls": 0, "tool_efficiency": None, "crashes": 0,
        "stop_reasons": {}}
    # an unjudged trial's calls count as tool calls but not in the efficiency; tokens only when an int
    mixed = [{**oracle[0], "tokens": None}, {**oracle[2], "n_calls": 4, "useful_calls": 0, "tokens": 2.5}]
    group = summarize_group(mixed)
    assert (group["tool_calls"], group["tool_efficiency"], group["tokens"], group["mean_tokens"]) == \
        (7, 2 / 3, None, None)
    assert group["crashes"] == 1 and group["succeeded"] == 1


def test_score_task_runs_report_by_hand(task_set):
    tasks, runs = task_set
    report, scores = score_task_runs(tasks, runs)
    assert [s["trial_id"] for s in scores] == ["a-oracle-m1", "b-oracle-m2", "c-oracle-g1", "d-rand-m1",
                                              "e-rand-m3", "m-leg-and-task"]
    assert (report["tasks"], report["runs"]) == (str(tasks), str(runs))
    assert report["n_tasks"] == 4 and report["n_trials"] == 6
    assert report["tasks_per_family"] == {"git": 1, "math": 3}
    assert list(report["tasks_per_family"]) == ["git", "math"]
    assert report["invalid_trials"] == sorted(report["invalid_trials"], key=lambda d: d["trial_id"])
    assert [d["trial_id"] for d in report["invalid_trials"]] == ["g-broken", "h-list", "i-missing", "j-no-log",
                                                                 "k-unknown-task", "l-dir-trial"]
    assert report["invalid_trials"][4]["reason"] == f"task 'zz' is not in {tasks}"
    # family, topic and difficulty come from the task row, not from what the trial says
    e = scores[4]
    assert (e["family"], e["domain"], e["topic"], e["difficulty"]) == ("math", "geometry", "cercles (géométrie)", 2)
    assert (e["n_calls"], e["tool_efficiency"], e["success"]) == (0, None, False)
    overall = {g["agent"]: g for g in report["overall"]}
    assert list(overall) == ["oracle", "rand"]
    rand = overall["rand"]   # d (m1: 1 ok call, success), e (m3: fail, no call), m (m2: crash, fail, no call)
    assert (rand["n"], rand["judged"], rand["succeeded"], rand["success_rate"]) == (3, 3, 1, 1 / 3)
    assert rand["mean_steps"] == (2 + 6 + 5) / 3 and rand["tokens"] == 16 and rand["mean_tokens"] == 8.0
    assert rand["tool_calls"] == 1 and rand["tool_efficiency"] == 1.0 and rand["crashes"] == 1
    assert rand["stop_reasons"] == {"answered": 2, "crash": 1}
    fam = {(g["agent"], g["family"]): g for g in report["by_family"]}
    assert list(fam) == [("oracle", "git"), ("oracle", "math"), ("rand", "math")]
    assert fam[("oracle", "math")]["success_rate"] == 0.5 and fam[("oracle", "git")]["success_rate"] is None
    assert fam[("oracle", "math")]["tool_efficiency"] == 2 / 5
    topics = [(g["agent"], g["family"], g["topic"], g["n"]) for g in report["by_topic"]]
    assert topics == [("oracle", "git", "merge", 1), ("oracle", "math", "linear", 2),
                      ("rand", "math", "cercles (géométrie)", 1), ("rand", "math", "linear", 2)]
    diffs = [(g["agent"], g["family"], g["difficulty"], g["n"], g["succeeded"]) for g in report["by_difficulty"]]
    assert diffs == [("oracle", "git", 1, 1, 0), ("oracle", "math", 1, 1, 1), ("oracle", "math", 2, 1, 0),
                     ("rand", "math", 1, 1, 1), ("rand", "math", 2, 2, 0)]
    assert set(report) == {"tasks", "runs", "n_tasks", "tasks_per_family", "n_trials", "overall", "by_family",
                           "by_topic", "by_difficulty", "invalid_trials"}


def test_groups_sort_by_the_text_of_their_keys():
    base = {"judged": True, "success": True, "n_calls": 0, "useful_calls": 0, "steps": 1, "tokens": None,
            "stop_reason": "answered"}
    scores = [{**base, "agent": "a", "family": "math", "topic": "t", "difficulty": d} for d in (2, 10, 1)]
    # "1" < "10" < "2" as text
    assert [g["difficulty"] for g in aggregate_tasks(scores)["by_difficulty"]] == [1, 10, 2]
    assert [g["n"] for g in aggregate_tasks(scores)["by_family"]] == [3]


def table_rows(text: str, title: str) -> list[list[str]]:
    """The body rows (cells stripped) of the rich table under ``title`` in console output."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if title in line)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            rows.append([c.strip() for c in line.strip("│").split("│")])
    return rows


def test_main_writes_the_report_and_prints_the_tables(task_set, tmp_path, capsys):
    tasks, runs = task_set
    out = tmp_path / "new" / "dir" / "report.json"
    assert scoring_tasks.main(tasks, runs, out) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    text = out.read_text(encoding="utf-8")
    assert report["n_trials"] == 6 and text.endswith("}\n") and text.startswith('{\n  "tasks": ')
    assert '"topic": "cercles (géométrie)"' in text                          # written as UTF-8, not escaped
    lines = (out.parent / "report.trials.jsonl").read_text(encoding="utf-8").splitlines()
    assert '"topic": "cercles (géométrie)"' in lines[4]
    assert [json.loads(line)["trial_id"] for line in lines] == ["a-oracle-m1", "b-oracle-m2", "c-oracle-g1",
                                                                "d-rand-m1", "e-rand-m3", "m-leg-and-task"]
    printed = capsys.readouterr()
    assert printed.out.splitlines()[-1] == f"report: {out}; per trial: {out.parent / 'report.trials.jsonl'}"
    assert printed.err.splitlines() == [f"invalid trial {d['trial_id']}: {d['reason']}"
                                        for d in report["invalid_trials"]]
    family_title = "Legwork task-set race scores, by family (success and tool efficiency in %)"
    assert family_title in printed.out
    headers = [line for line in printed.out.splitlines() if line.startswith("┃")]
    header = headers[0]
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "agent", "family", "n", "judged", "success", "steps", "tokens", "tool calls", "tool eff", "crashes"]
    # oracle git: 1 trial, unjudged, crashed; oracle math: 2 judged, 1 success, steps 3.5, 100 tokens,
    # 5 calls of which 2 useful; then the per-agent totals as family "all"
    assert table_rows(printed.out, family_title) == [
        ["oracle", "git", "1", "0", "-", "1.00", "50", "0", "-", "1"],
        ["oracle", "math", "2", "2", "50.0", "3.50", "100", "5", "40.0", "0"],
        ["rand", "math", "3", "3", "33.3", "4.33", "16", "1", "100.0", "1"],
        ["oracle", "all", "3", "2", "50.0", "2.67", "150", "5", "40.0", "1"],
        ["rand", "all", "3", "3", "33.3", "4.33", "16", "1", "100.0", "1"],
    ]
    difficulty_title = "Legwork task-set race scores, by difficulty (success and tool efficiency in %)"
    assert table_rows(printed.out, difficulty_title) == [
        ["oracle", "git", "1", "1", "0", "-", "1.00", "50", "0", "-", "1"],
        ["oracle", "math", "1", "1", "1", "100.0", "3.00", "100", "3", "66.7", "0"],
        ["oracle", "math", "2", "1", "1", "0.0", "4.00", "-", "2", "0.0", "0"],
        ["rand", "math", "1", "1", "1", "100.0", "2.00", "7", "1", "100.0", "0"],
        ["rand", "math", "2", "2", "2", "0.0", "5.50", "9", "0", "-", "1"],
    ]
    header = headers[1]
    assert [c.strip() for c in header.strip("┃").split("┃")][:4] == ["agent", "family", "difficulty", "n"]


def test_main_writes_into_an_existing_folder(task_set, tmp_path, capsys):
    tasks, runs = task_set
    assert scoring_tasks.main(tasks, runs, tmp_path / "report.json") == 0
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["n_tasks"] == 4
    assert scoring_tasks.main(tasks, runs, tmp_path / "report.json") == 0            # and over a report



def test_files_are_utf8_whatever_the_locale(task_set, tmp_path, capsys, ascii_locale):
    tasks, runs = task_set
    rec = json.loads((runs / "a-oracle-m1" / "trial.json").read_text(encoding="utf-8"))
    (runs / "a-oracle-m1" / "trial.json").write_text(json.dumps({**rec, "judge_note": "réponse exacte"},
                                                                ensure_ascii=False), encoding="utf-8")
    trials, _ = load_task_trials(runs)
    assert trials[0]["judge_note"] == "réponse exacte"
    out = tmp_path / "out" / "report.json"
    assert scoring_tasks.main(tasks, runs, out) == 0
    assert "géométrie" in out.read_text(encoding="utf-8")
    assert "réponse exacte" in out.with_name("report.trials.jsonl").read_text(encoding="utf-8")


def test_table_columns_are_aligned(task_set, tmp_path, capsys):
    """Names left, figures right; each column as wide as its header or its widest cell."""
    tasks, runs = task_set
    scoring_tasks.main(tasks, runs, tmp_path / "report.json")
    lines = capsys.readouterr().out.splitlines()
    assert "│ rand   │ math   │ 3 │      3 │    33.3 │  4.33 │     16 │          1 │    100.0 │       1 │" in lines
    assert "│ oracle │ git    │ 1 │      0 │       - │  1.00 │     50 │          0 │        - │       1 │" in lines
    assert "│ rand   │ math   │          2 │ 2 │      2 │     0.0 │  5.50 │      9 │          0 │        - │       1 │" \
        in lines


def group(agent, **kw) -> dict:
    return {"agent": agent, "family": "math", "difficulty": 1, "n": 1, "judged": 1, "success_rate": 1.0,
            "mean_steps": 1.0, "tokens": 5, "tool_calls": 1, "tool_efficiency": 1.0, "crashes": 0, **kw}


def test_tables_are_150_wide_unless_on_a_terminal(monkeypatch, capsys):
    wide = "agent-" + "x" * 200                                # far wider than any console
    report = {"by_family": [group(wide)], "by_difficulty": [group(wide)], "overall": [group(wide)]}
    scoring_tasks.print_task_tables(report)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 10 and {len(line) for line in lines} == {150}

    class Terminal(io.StringIO):
        def isatty(self):
            return True
    terminal = Terminal()
    monkeypatch.setattr("sys.stdout", terminal)
    monkeypatch.setenv("COLUMNS", "70")
    scoring_tasks.print_task_tables({"by_family": [group("a")], "by_difficulty": [group("a")], "overall": []})
    lines = re.sub(r"\x1b\[[0-9;]*m", "", terminal.getvalue()).splitlines()      # without the colours
    assert len(lines) > 10 and max(len(line) for line in lines) == 70     # the terminal's width


def test_fmt():
    fmt = scoring_tasks._fmt
    assert (fmt(None), fmt(None, True), fmt(0.5, True), fmt(2 / 3, True), fmt(2.0), fmt(7), fmt("x")) == \
        ("-", "-", "50.0", "66.7", "2.00", "7", "x")
