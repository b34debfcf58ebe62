"""The multi-command OS task kinds (questions over generated data, commands the agent writes, process
discovery): golden passes, doing nothing fails, the plausible wrong solution fails, in the sandbox;
the generator's model of each wrong command agrees with bash; the measured difficulty; distinct
prompts across seeds; the oracle and random agents of the task races on every new kind."""
from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.agents.tasks import run_task_trial
from pipeline.tasks import os as os_tasks
from pipeline.tasks.common import cell_rng
from pipeline.tasks.os import agentbench, check_task, discover, questions, scripts
from pipeline.tasks.os.generate import GENERATOR_BY_KIND, kinds
from pipeline.tasks.os.measure import level, measure, plan_shape
from pipeline.tasks.os.sandbox import run_session, sandbox_available

needs_sandbox = pytest.mark.skipif(not sandbox_available(), reason="needs root, unshare and overlayfs")
NEW_KINDS = [g.__name__ for mod in (questions, scripts, discover) for g in vars(mod).values()
             if callable(g) and getattr(g, "__module__", "") == mod.__name__ and g.__name__ in GENERATOR_BY_KIND]
SANDBOX = settings(max_examples=6, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
PURE = settings(max_examples=40, deadline=None, database=None)


def draw(kind: str, seed: int):
    return GENERATOR_BY_KIND[kind](cell_rng(seed, "os", kind))


def test_the_new_kinds_are_registered_in_every_domain():
    assert len(NEW_KINDS) == 19 and set(NEW_KINDS) <= set(kinds())
    domains = {draw(k, 1).domain for k in NEW_KINDS}
    assert domains == {"filesystem", "users", "processes"}
    # the first cells are still the one-command kinds (small counts and the task races keep their tasks)
    assert kinds()[:4] == ["count_extension", "create_user", "count_processes", "largest_file"]


@PURE
@given(seed=st.integers(0, 10 ** 9), kind=st.sampled_from(sorted(NEW_KINDS)))
def test_every_new_task_has_a_distinct_wrong_answer_and_a_measured_difficulty(seed, kind):
    t = draw(kind, seed)
    assert t.wrong and t.wrong != agentbench.example_script(t.task)
    runnable, why = agentbench.is_runnable(t.task)
    assert runnable, why
    if agentbench.match_value(t.task) is not None:
        assert t.expected == agentbench.match_value(t.task) and t.expected.strip()
        assert t.wrong_expected is not None and t.wrong_expected != t.expected
    else:
        assert t.expected is None and agentbench.check_script(t.task)
    m = measure(agentbench.example_script(t.task))
    assert m.commands >= 1 and 1 <= m.stages <= m.commands and t.difficulty == level(m.commands)


def test_measure_counts_simple_commands_and_pipeline_stages():
    cases = {
        "find /x -type f -name '*.log' | wc -l": (2, 2),
        "pkill -x a; for i in $(seq 50); do pgrep -x a > /dev/null || break; sleep 0.05; done": (4, 1),
        "x=$(cat a) && echo \"$x\" 2>&1 | wc -l": (3, 2),
        "tr '\\0' '\\n' < /proc/$(pgrep -xo t)/environ | grep '^V=' | cut -d= -f2-": (4, 3),
        "if [ -f x ]; then echo y; fi": (2, 1),
        "cat > /usr/local/bin/f <<'EOF'\n#!/bin/bash\ntail -n +2 \"$1\" | awk -F, '{s += $2} END {print s}'\nEOF\n"
        "chmod +x /usr/local/bin/f": (4, 2),
        "cat > /tmp/p.py <<'EOF'\nimport os\nprint(1)\nEOF": (1, 1),   # a Python body is not shell
        "a=$((1 + 2)); echo $a": (1, 1),
    }
    for script, want in cases.items():
        got = measure(script)
        assert (got.commands, got.stages) == want, (script, got)
    assert [level(n) for n in (1, 2, 3, 4, 5, 7, 8, 20)] == [1, 2, 3, 3, 4, 4, 5, 5]
    assert plan_shape("find /a -type f -size +12c | wc -l") == plan_shape("find /b/c -type f -size +7c | wc -l")
    assert plan_shape("find /a -type f | wc -l") != plan_shape("find /a -type f | sort | wc -l")


def test_two_seeds_share_few_prompts():
    prompts = {}
    for seed in (1, 2):
        prompts[seed] = set()
        for k in NEW_KINDS:
            rng = cell_rng(seed, "os", k)
            prompts[seed] |= {GENERATOR_BY_KIND[k](rng).task["description"] for _ in range(25)}
    shared = prompts[1] & prompts[2]
    assert len(prompts[1]) > 0.95 * 25 * len(NEW_KINDS)
    assert len(shared) <= 0.02 * len(prompts[1]), sorted(shared)[:5]


def _check(t):
    return check_task(t.task, t.expected, t.wrong, t.wrong_expected)


@pytest.fixture(scope="module")
def one_of_each():
    """One verified task per new kind (seed 11), checked in parallel."""
    tasks = [draw(k, 11) for k in NEW_KINDS]
    with ThreadPoolExecutor(4) as pool:
        checks = list(pool.map(_check, tasks))
    return list(zip(tasks, checks))


@needs_sandbox
def test_every_new_kind_golden_passes_nothing_fails_and_wrong_fails(one_of_each):
    for t, c in one_of_each:
        assert c.ok and c.verified, (t.kind, c.detail)
        assert "wrong" in c.detail, (t.kind, c.detail)


@needs_sandbox
@SANDBOX
@given(seed=st.integers(0, 10 ** 6), kind=st.sampled_from(sorted(NEW_KINDS)))
def test_property_golden_passes_nothing_fails_wrong_fails(seed, kind):
    t = draw(kind, seed)
    c = _check(t)
    assert c.ok and c.verified, (kind, seed, c.detail)


@needs_sandbox
def test_a_wrong_solution_that_is_right_is_caught(one_of_each):
    """The wrong-solution gate can fail: handing it the golden solution as the 'wrong' one is rejected."""
    by_kind = {t.kind: t for t, _ in one_of_each}
    answer_task, check_kind = by_kind["csv_aggregate"], by_kind["write_text_command"]
    golden = agentbench.example_script(answer_task.task)
    c = check_task(answer_task.task, answer_task.expected, golden, None)
    assert not c.ok and "prints the right answer" in c.detail
    c = check_task(check_kind.task, None, agentbench.example_script(check_kind.task), None)
    assert not c.ok and "check passes after the plausible wrong solution" in c.detail
    # a wrong solution whose output the generator mispredicted is caught too
    c = check_task(answer_task.task, answer_task.expected, answer_task.wrong, answer_task.wrong_expected + "0")
    assert not c.ok and "predicted" in c.detail


def _script_ops(rng: random.Random):
    d = rng.choice(list(scripts.DELIMS))
    k, j = rng.sample(range(1, 6), 2)
    yield from (("csv", d, n, op) for n, op in scripts.csv_ops(d, k, j).items())
    yield from (("text", None, n, op) for n, op in scripts.text_ops().items())
    yield from (("dir", None, n, op) for n, op in scripts.dir_ops().items())


@needs_sandbox
def test_the_wrong_commands_do_what_the_generator_models():
    """For every command op, a check built from the *wrong* outputs the generator predicts passes after the
    wrong script is installed, and fails after the golden one: the model of each slip is exact, and the
    hidden inputs tell the two apart."""
    rng = random.Random(5)
    jobs = []
    for family, d, op_name, op in _script_ops(rng):
        cases = op.cases(rng)
        wrong_outs = [op.wrong_ref(c) for c in cases]
        right_outs = [op.ref(c) for c in cases]
        command = f"/usr/local/bin/t-{op_name}"
        check = scripts.check_script(command, cases, wrong_outs, d)
        jobs.append((f"{family}:{op_name}", right_outs != wrong_outs, check,
                     scripts._install(command, op.wrong), scripts._install(command, op.golden)))

    def run(job):
        label, differ, check, wrong, golden = job
        after_wrong = run_session([("wrong", wrong), ("check", check)])[-1].exit_code
        after_golden = run_session([("golden", golden), ("check", check)])[-1].exit_code
        return label, differ, after_wrong, after_golden

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, jobs))
    assert len(results) == 7 + 7 + 5
    for label, differ, after_wrong, after_golden in results:
        assert after_wrong == 0, label
        assert (after_golden != 0) == differ, label


@needs_sandbox
def test_difficulty_and_wrong_solution_are_checked_on_validation(one_of_each):
    t, c = next((t, c) for t, c in one_of_each if t.kind == "access_log_window")
    row = os_tasks._row(t, 0, 11, c)
    meta = json.loads(row["metadata_json"])
    assert meta["measure"] == measure(agentbench.example_script(t.task)).as_dict()
    assert row["difficulty"] == level(meta["measure"]["commands"])
    assert meta["wrong"] == {"script": t.wrong, "output": t.wrong_expected}
    assert os_tasks.verify_row(row).verified
    assert not os_tasks.verify_row(dict(row, difficulty=row["difficulty"] % 5 + 1)).ok
    meta["wrong"]["script"] = agentbench.example_script(t.task)          # the 'wrong' one now answers right
    assert not os_tasks.verify_row(dict(row, metadata_json=json.dumps(meta))).ok


# slow: 5-6 s of 38 sandboxed trials; test_every_new_kind_golden_passes_nothing_fails_and_wrong_fails keeps the golden
# solution (the oracle's actions) passing and doing nothing failing on every new kind, and tests/test_task_races.py's
# oracle and random tests[os] keep the race runner on OS tasks, in the default run
@pytest.mark.slow
@needs_sandbox
def test_oracle_solves_and_random_fails_every_new_kind(one_of_each, tmp_path):
    rows = [os_tasks._row(t, i, 11, c) for i, (t, c) in enumerate(one_of_each)]

    def race(row):
        out = []
        for agent in ("oracle", "random"):
            d = run_task_trial(row, agent, tmp_path, seed=3)
            out.append(json.loads((d / "trial.json").read_text()))
        return row["topic"], out

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(race, rows))
    for kind, (oracle, rand) in results:
        assert oracle["judged"] and oracle["success"] is True, (kind, oracle.get("judge_note"))
        assert rand["judged"] and rand["success"] is False, kind
