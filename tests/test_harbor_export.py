"""Harbor export: files of a task, unique ids, and the verifier scoring the oracle's run."""
import json
import os
import subprocess
import sys
import tomllib

from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.export.harbor import export_harbor, task_id
from pipeline.race import run_trial
from pipeline.tools.registry import Toolbox
from tests.test_race import small_leg


def test_task_files(tmp_path):
    leg = small_leg()
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "manifest.json").write_text('{"hash": "abc"}')
    [d] = export_harbor([leg], tmp_path / "tasks", snapshot_dir=snap)
    assert d.name == task_id(leg) == "legwork-linear-easy-race-1"
    instr = (d / "instruction.md").read_text()
    assert leg.seed_url in instr and leg.riddle in instr and "maps_elevation" in instr and "/app/answer.txt" in instr
    toml = tomllib.loads((d / "task.toml").read_text())
    assert toml["metadata"]["leg_id"] == "race-1" and toml["environment"]["allow_internet"] is False
    docker = (d / "environment" / "Dockerfile").read_text()
    assert "pip install" in docker and "COPY snapshot/" in docker
    assert (d / "environment" / "snapshot" / "manifest.json").is_file()
    assert (d / "environment" / "legwork" / "pipeline" / "scoring" / "metrics.py").is_file()
    solve = (d / "solution" / "solve.sh").read_text()
    assert solve.count("python -m pipeline.tools --log \"$LOG\" call") == 2 and 'echo -n "2"' in solve
    assert os.access(d / "tests" / "test.sh", os.X_OK)
    assert json.loads((d / "tests" / "leg.json").read_text())["passcode"] == 2


def test_ids_differ_across_variants():
    a, b = small_leg(), small_leg()
    b.variant = "dag"
    assert task_id(a) != task_id(b)


def test_verifier_rewards_oracle(tmp_path):
    leg = small_leg()
    [d] = export_harbor([leg], tmp_path / "tasks", snapshot_dir=tmp_path / "none", include_source=False)
    trial = run_trial(leg, "oracle", tmp_path / "runs", toolbox=Toolbox(load_settings(cache_path=tmp_path / "c.sqlite")))
    answer = tmp_path / "answer.txt"
    answer.write_text(json.loads((trial / "trial.json").read_text())["answer"])
    env = {**os.environ, "LEGWORK_ANSWER_FILE": str(answer), "LEGWORK_TOOL_LOG": str(trial / "tool_log.jsonl"),
           "LEGWORK_REWARD_DIR": str(tmp_path / "verifier"), "PYTHONPATH": str(PROJECT_ROOT)}
    subprocess.run(["bash", str(d / "tests" / "test.sh")], env=env, check=True, capture_output=True)
    reward = json.loads((tmp_path / "verifier" / "reward.json").read_text())
    assert reward == {"fa": 1.0, "pvr": 1.0, "rcr": 1.0, "intermediate": reward["intermediate"], "eta": 1.0}
    assert (tmp_path / "verifier" / "reward.txt").read_text().strip() == "1.0"
    # a wrong answer and no log: fa = 0
    answer.write_text("7")
    env["LEGWORK_TOOL_LOG"] = str(tmp_path / "missing.jsonl")
    subprocess.run([sys.executable, str(d / "tests" / "verify.py")], env=env, check=True, capture_output=True)
    assert json.loads((tmp_path / "verifier" / "reward.json").read_text())["fa"] == 0.0


def test_solve_sh_replays_through_tool_executor(tmp_path):
    leg = small_leg()
    [d] = export_harbor([leg], tmp_path / "tasks", snapshot_dir=tmp_path / "none", include_source=False)
    log, answer = tmp_path / "agent" / "tool_log.jsonl", tmp_path / "app" / "answer.txt"
    env = {**os.environ, "LEGWORK_TOOL_LOG": str(log), "LEGWORK_ANSWER_FILE": str(answer),
           "LEGWORK_CACHE": str(tmp_path / "c.sqlite"), "LEGWORK_REWARD_DIR": str(tmp_path / "verifier"),
           "PYTHONPATH": str(PROJECT_ROOT)}
    subprocess.run(["bash", str(d / "solution" / "solve.sh")], env=env, check=True, capture_output=True,
                   cwd=PROJECT_ROOT)
    assert answer.read_text() == "2"
    tools = [json.loads(l)["tool"] for l in log.read_text().splitlines()]
    assert tools == ["fetch_webpage", "python_execute_code"]
    subprocess.run(["bash", str(d / "tests" / "test.sh")], env=env, check=True, capture_output=True)
    reward = json.loads((tmp_path / "verifier" / "reward.json").read_text())
    assert (reward["fa"], reward["pvr"], reward["rcr"]) == (1.0, 1.0, 1.0)
