"""Mutation testing as a benchmark (issue 23, item 8): how many small faults planted in the checking
code (a flipped comparison, a dropped ``not``, a changed constant) the tests catch.

    python benchmarks/mutation.py [--modules invariants,acceptance,scoring,refs,sandbox]
                                  [--budget SECONDS] [--children N] [--work DIR] [--show-survivors]

Runs mutmut 3 (``pip install -e .[bench]``) once per module in a scratch copy of the project (the
working tree's files that git knows of, under ``--work``), mutating only that module and running only
its relevant test files (``TARGETS``), then prints per module: mutants, killed, survived (mutants no
test covers count as survived), not run (the budget ran out), % surviving of those run. The goal is
at most 10% surviving; each survivor is killed by a test or listed as equivalent in
``benchmarks/mutation_equivalents.md``. A figure, never a pass/fail: it exits 0 whatever the numbers.

A line whose mutants would harm the machine instead of failing a test is never mutated
(``Target.never_mutate``: the sandbox's choice of processes to kill, see ``NEVER_MUTATE_SANDBOX``).

``--budget`` bounds each module's mutmut run (its mutants are then partly "not run" and the figures
say so). The invariant tests read their legs from one run generated here before any mutant runs
(``LEGWORK_BROKEN_LEGS_RUN``), so a mutant does not pay for a generation run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Target:
    mutate: list[str]                 # mutmut only_mutate globs (project-relative)
    tests: list[str]                  # pytest node ids / files run against the mutants
    needs_legs: bool = False          # the invariant tests: give them a finished run's legs
    env: dict[str, str] = field(default_factory=dict)
    conftest: str = ""                # added to the scratch copy's tests/conftest.py
    never_mutate: list[str] = field(default_factory=list)  # mutmut do_not_mutate_patterns (regexes on lines)
    markers: str | None = None        # pytest -m for the tests (None: the project's default, slow tests left out)


# Lines no mutant may touch because the mutant would harm the machine rather than fail a test. The
# sandbox's time-limit kill (``_kill``) SIGKILLs the processes ``_children(pid)`` names; with its parent
# test flipped (``!=``) that is every process on the machine but the run's own, and the benchmark runs
# as root: it killed the mutmut run, the shell that started it and every other user's processes.
NEVER_MUTATE_SANDBOX = [r"if int\(fields\[1\]\) == pid:"]

# mutmut forks each mutant's worker from the process that ran the tests once to map them: a probe
# cached there (sandbox._works, urls._page_key_cached) would never run again and its mutants would
# survive untested: the scratch copy's tests clear those caches before each test
FRESH_PROBES = """
import pytest


@pytest.fixture(autouse=True)
def _fresh_sandbox_probes():
    from pipeline.tools import sandbox
    sandbox._works.cache_clear()
    yield
"""

FRESH_SCORING_CACHES = """
import pytest


@pytest.fixture(autouse=True)
def _fresh_scoring_caches():
    from pipeline.scoring import matching, urls
    urls._page_key_cached.cache_clear()
    for name in dir(matching):
        cached = getattr(matching, name)
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()
    yield
"""

TARGETS = {
    "invariants": Target(["pipeline/invariants.py"], ["tests/test_invariants_broken.py"], needs_legs=True),
    "acceptance": Target(["pipeline/acceptance.py"],
                         ["tests/test_invariants_broken.py", "tests/test_acceptance_gate.py",
                          "tests/test_acceptance.py::test_solver_acceptance_counts_by_hand"], needs_legs=True),
    "scoring": Target(["pipeline/scoring/*"], ["tests/test_scoring.py", "tests/test_shapley.py", "tests/test_refs.py",
                                              "tests/test_race.py", "tests/test_shapley_by_hand.py",
                                              "tests/test_urls_by_hand.py", "tests/test_scoring_by_hand.py",
                                              "tests/test_matching_by_hand.py", "tests/test_trials_by_hand.py",
                                              "tests/test_attribution_by_hand.py",
                                              "tests/test_task_scores_by_hand.py"], conftest=FRESH_SCORING_CACHES),
    "refs": Target(["pipeline/refs.py"], ["tests/test_refs.py", "tests/test_refs_by_hand.py"]),
    "sandbox": Target(["pipeline/tools/sandbox.py"],
                      ["tests/test_sandbox.py", "tests/test_sandbox_config.py", "tests/test_sandbox_python_tools.py",
                       "tests/test_sandbox_by_hand.py"],
                      conftest=FRESH_PROBES, never_mutate=NEVER_MUTATE_SANDBOX,
                      # the probe's 20 s time limit is only tested by a slow test (it runs for _probe's mutants)
                      markers="slow or not slow"),
}
# what the tests read besides the package (snapshot, templates, flows, the CLIs' data)
ALSO_COPY = ["flows", "snapshots", "templates", "prompts", "tests"]
KILLED = {"killed", "timeout", "caught by type check", "segfault", "suspicious"}


def scratch_copy(dest: Path) -> None:
    """The project as git knows it (working-tree contents), without data/ or .git."""
    if dest.exists():
        shutil.rmtree(dest)
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, names):
        src = ROOT / name
        if name.startswith("data/") or not src.is_file():
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name)


def mutmut_config(target: Target) -> str:
    def toml_list(items: list[str]) -> str:
        return "[" + ", ".join(json.dumps(i) for i in items) + "]"
    return ("\n[tool.mutmut]\n"
            'source_paths = ["pipeline"]\n'
            f"only_mutate = {toml_list(target.mutate)}\n"
            f"do_not_mutate_patterns = {toml_list(target.never_mutate)}\n"
            f"also_copy = {toml_list(ALSO_COPY)}\n"
            f"pytest_add_cli_args_test_selection = {toml_list(target.tests)}\n"
            'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0", "-q"'
            + ("" if target.markers is None else f', "-m", {json.dumps(target.markers)}') + "]\n"
            "use_git_change_detection = false\n")


def generate_legs(out: Path) -> Path:
    """The invariant tests' run (same parameters as their fixture), made once by unmutated code."""
    sys.path.insert(0, str(ROOT))
    from tests.test_invariants_broken import RUN  # the tests say which run they break
    if not (out / "legs.parquet").is_file():
        subprocess.run([sys.executable, "-m", "pipeline.generate", "--difficulty", RUN.level, "--variant", RUN.variant,
                        "--count", str(RUN.count), "--seed", str(RUN.seed), "--task-runner", "local", "--quiet",
                        "--out", str(out), "--cache", str(out.parent / "legs-cache.sqlite")],
                       cwd=ROOT, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL)
    return out


def statuses(project: Path) -> dict[str, dict[str, str]]:
    """Mutated file -> mutant name -> status, from mutmut's .meta files."""
    from mutmut.stats import status_by_exit_code
    out = {}
    for meta in sorted((project / "mutants").rglob("*.py.meta")):
        data = json.loads(meta.read_text())
        source = str(meta.relative_to(project / "mutants"))[:-len(".meta")]
        out[source] = {name: status_by_exit_code[code] for name, code in data.get("exit_code_by_key", {}).items()}
    return out


def run_module(name: str, target: Target, work: Path, budget: float, children: int, legs: Path | None) -> dict:
    project = work / name
    scratch_copy(project)
    with open(project / "pyproject.toml", "a") as fh:
        fh.write(mutmut_config(target))
    if target.conftest:
        with open(project / "tests" / "conftest.py", "a") as fh:
            fh.write(target.conftest)
    # mutmut puts mutants/ first on sys.path itself; a PYTHONPATH naming it before it exists would be
    # cached by the import system as "no such directory" and the tests would import the unmutated code
    env = {k: v for k, v in {**os.environ, **target.env}.items() if k != "PYTHONPATH"}
    if legs is not None:
        env["LEGWORK_BROKEN_LEGS_RUN"] = str(legs)
    started = time.perf_counter()
    finished = True
    with open(project / "mutmut.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "mutmut", "run", "--max-children", str(children)], cwd=project,
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:   # the budget ran out: stop mutmut and its workers, keep what it wrote
            finished = False
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return {"module": name, "seconds": round(time.perf_counter() - started, 1), "finished": finished,
            "returncode": proc.returncode, "files": statuses(project), "log": str(project / "mutmut.log")}


def figures(result: dict) -> dict:
    return counts([s for per_file in result["files"].values() for s in per_file.values()])


def counts(every: list[str]) -> dict:
    killed = sum(s in KILLED for s in every)
    survived = sum(s in ("survived", "no tests") for s in every)
    run = killed + survived
    return {"mutants": len(every), "killed": killed, "survived": survived, "not run": len(every) - run,
            "% surviving": round(100 * survived / run, 1) if run else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modules", default=",".join(TARGETS), help="comma-separated, of: " + ", ".join(TARGETS))
    ap.add_argument("--budget", type=float, default=1800, help="seconds per module (default 1800)")
    ap.add_argument("--children", type=int, default=1, help="mutmut --max-children (default 1)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/legwork-mutation"))
    ap.add_argument("--show-survivors", action="store_true", help="list each surviving mutant (mutmut show NAME)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    names = [n.strip() for n in args.modules.split(",") if n.strip()]
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        ap.error(f"unknown modules {unknown}; choose from {list(TARGETS)}")
    args.work.mkdir(parents=True, exist_ok=True)
    legs = generate_legs(args.work / "legs-run") if any(TARGETS[n].needs_legs for n in names) else None
    rows = []
    for name in names:
        target = TARGETS[name]
        result = run_module(name, target, args.work, args.budget, args.children, legs if target.needs_legs else None)
        row = {"module": name, **figures(result), "seconds": result["seconds"], "finished": result["finished"]}
        rows.append(row)
        print(f"{name:<11} mutants {row['mutants']:>4}  killed {row['killed']:>4}  survived {row['survived']:>4}  "
              f"not run {row['not run']:>4}  surviving {row['% surviving']}%  ({row['seconds']} s"
              f"{'' if result['finished'] else ', budget ran out'}; log {result['log']})", flush=True)
        if len(result["files"]) > 1:   # a package: each file's share
            for source, per in result["files"].items():
                part = counts(list(per.values()))
                print(f"  {source:<38} mutants {part['mutants']:>4}  killed {part['killed']:>4}  "
                      f"survived {part['survived']:>4}  not run {part['not run']:>4}  surviving {part['% surviving']}%")
        if args.show_survivors:
            for per in result["files"].values():
                for mutant, status in sorted(per.items()):
                    if status in ("survived", "no tests"):
                        print(f"    {status:<9} {mutant}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
