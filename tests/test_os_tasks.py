"""OS (shell) task family: sandbox isolation, golden-passes / nothing-fails, rejection of tasks that
pass with no action, AgentBench JSON round trip, byte-identical builds."""
from __future__ import annotations

import json
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pipeline.tasks import os as os_tasks
from pipeline.tasks.common import read_task_rows
from pipeline.tasks.os import agentbench, check_task
from pipeline.tasks.os.generate import GENERATORS, generate
from pipeline.tasks.os.sandbox import run_session, sandbox_available
from tests.test_os_kinds import NEW_KINDS

ANCHORS = Path(__file__).resolve().parents[2] / "shared" / "anchors" / "agentbench-os"
needs_sandbox = pytest.mark.skipif(not sandbox_available(), reason="needs root, unshare and overlayfs")


@pytest.fixture()
def host_dir():
    """A folder on the host's root file system (not /tmp, which the sandbox replaces anyway)."""
    path = Path(tempfile.mkdtemp(prefix="legwork-canary-", dir="/var/tmp"))
    yield path
    for child in path.iterdir():
        child.unlink()
    path.rmdir()


@needs_sandbox
def test_sandbox_cannot_touch_host_files_users_or_processes(host_dir):
    canary, victim = host_dir / "canary.txt", host_dir / "victim.txt"
    canary.write_text("original\n")
    victim.write_text("keep me\n")
    passwd_before = Path("/etc/passwd").read_bytes()
    results = run_session([
        ("read", f"cat {canary}"),
        ("write", f"echo pwned > {canary} && rm {victim} && useradd legwork_intruder && cat {canary}"),
        ("procs", "cat /proc/1/comm; ls /proc | grep -c '^[0-9]'"),
        ("after", f"cat {canary}; ls {host_dir}; id -u legwork_intruder"),
    ])
    by = {r.name: r for r in results}
    assert by["read"].stdout == "original\n"            # the host's files are visible ...
    assert by["write"].exit_code == 0 and by["write"].stdout == "pwned\n"
    assert by["after"].stdout.splitlines()[:2] == ["pwned", "canary.txt"]   # ... changes persist within a session
    assert canary.read_text() == "original\n"           # ... but never reach the host
    assert victim.read_text() == "keep me\n"
    assert Path("/etc/passwd").read_bytes() == passwd_before
    assert "legwork_intruder" not in Path("/etc/passwd").read_text()
    comm, count = by["procs"].stdout.split()
    assert comm == "bash" and int(count) < 10            # own PID namespace: only the session's processes
    # a second session starts from the pristine host view again
    again = run_session([("read", f"cat {canary}; id -u legwork_intruder")])
    assert again[0].stdout == "original\n" and again[0].exit_code != 0


@needs_sandbox
def test_every_generator_golden_passes_and_nothing_fails():
    rng_tasks = {}
    for t in generate(60, seed=4):
        rng_tasks.setdefault(t.kind, t)
    assert set(rng_tasks) == {g.__name__ for gens in GENERATORS.values() for g in gens}
    # the multi-command kinds: one of each passes the same check in tests/test_os_kinds.py::
    # test_every_new_kind_golden_passes_nothing_fails_and_wrong_fails (4 s less here)
    items = sorted((kind, t) for kind, t in rng_tasks.items() if kind not in NEW_KINDS)
    assert len(items) == len(rng_tasks) - len(NEW_KINDS) > 0
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda kt: check_task(kt[1].task, kt[1].expected, kt[1].wrong, kt[1].wrong_expected),
                                items))
    for (kind, t), result in zip(items, results):
        assert result.ok and result.verified, (kind, result.detail)
        assert ("wrong" in result.detail) == (t.wrong is not None), (kind, result.detail)


@needs_sandbox
def test_tasks_that_pass_without_action_are_rejected():
    lazy_check = {"description": "Do anything.", "create": {"local": "default", "init": {"code": "mkdir -p /srv/x"}},
                  "evaluation": {"check": {"code": "[ -d /srv/x ]"}, "example": {"code": "true"}}, "labels": ["file"]}
    result = check_task(lazy_check)
    assert not result.ok and "no action" in result.detail
    setup_free = {"description": "What is 2+1?", "create": {"local": "default", "init": {"code": "true"}},
                  "evaluation": {"match": "3", "example": {"code": "echo 3"}}, "labels": ["misc"]}
    result = check_task(setup_free)
    assert not result.ok and "does not depend" in result.detail
    wrong = {"description": "Count.", "create": {"local": "default", "init": {"code": "mkdir -p /q && touch /q/a /q/b"}},
             "evaluation": {"match": "3", "example": {"code": "ls /q | wc -l"}}, "labels": ["file"]}
    result = check_task(wrong)
    assert not result.ok and "'2'" in result.detail


def test_expected_answers_are_computed_independently():
    for t in generate(60, seed=9):
        if t.kind == "count_extension":
            init = t.task["create"]["init"]["code"]
            created = [line.rsplit("> ", 1)[1] for line in init.splitlines() if line.startswith("head -c")]
            assert t.expected == str(sum(1 for p in created if p.endswith("." + t.params["ext"])))
        if t.kind == "uid_of":
            init = t.task["create"]["init"]["code"]
            uid = next(line.split()[2] for line in init.splitlines() if line.endswith(" " + t.params["user"]))
            assert t.expected == uid


@pytest.mark.skipif(not ANCHORS.is_dir(), reason="shared anchors not present")
def test_agentbench_anchor_files_round_trip_and_report_external_scripts():
    for path in sorted(ANCHORS.glob("*.json")):
        original = agentbench.load(path)
        rows = agentbench.import_tasks(original, source=path.name)
        assert agentbench.export_tasks(rows) == original, path.name
        assert len({r["task_id"] for r in rows}) == len({json.dumps(t, sort_keys=True) for t in original})
    stock = agentbench.import_tasks(agentbench.load(ANCHORS / "data_1_stock.json"), "stock")
    meta = json.loads(stock[0]["metadata_json"])
    assert meta["runnable"] is False and "init/stock-log.sh" in meta["verification"]
    assert os_tasks.verify_row(stock[0]).ok and not os_tasks.verify_row(stock[0]).verified
    n41 = agentbench.import_tasks(agentbench.load(ANCHORS / "data_4_N41.json"), "N41")
    assert json.loads(n41[0]["answer_json"]) == {"match": "no"}


@needs_sandbox
def test_build_is_byte_identical_validates_and_round_trips_through_agentbench_json(tmp_path):
    os_tasks.build(6, 7, tmp_path / "a")
    os_tasks.build(6, 7, tmp_path / "b")
    a, b = (tmp_path / d / os_tasks.OUTPUT_FILE for d in ("a", "b"))
    assert a.read_bytes() == b.read_bytes()
    rows = read_task_rows(tmp_path / "a")
    assert len(rows) == 6 and {r["domain"] for r in rows} == {"filesystem", "users", "processes"}
    assert os_tasks.validate(rows).failures == []
    exported = agentbench.dump(rows, tmp_path / "os.json")
    reloaded = agentbench.load(exported)
    assert reloaded == [json.loads(r["metadata_json"])["agentbench"] for r in rows]
    reimported = agentbench.import_tasks(reloaded, "os.json")
    assert agentbench.export_tasks(reimported) == reloaded
    assert all(json.loads(r["metadata_json"])["runnable"] for r in reimported)
    # a task whose stored answer was tampered with fails validation
    bad = next(r for r in rows if json.loads(r["answer_json"]).get("match") is not None)
    meta = json.loads(bad["metadata_json"])
    meta["agentbench"]["evaluation"]["match"] = "999999"
    tampered = dict(bad, metadata_json=json.dumps(meta))
    assert not os_tasks.verify_row(tampered).ok
