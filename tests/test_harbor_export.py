"""Harbor export: the Harbor 0.25 task format, one shared environment, and the oracle scored by the verifier.

``harbor`` itself does not install on this Python (it needs a newer one), so every exported task is
loaded with a mirror of its task and ATIF models (``pipeline.export.harbor_schema``, commits named
there). The task image cannot be built here (no container runtime), so the oracle is run the way
Harbor runs it, on this machine, on the package installed from the export's wheel into a fresh venv
(no checkout on the path) and the tool data of the export's shared environment: once with container
paths mapped to a temp dir by the scripts' environment variables, and once in a bubblewrap sandbox
that puts everything at the container's paths with the image's ENV and no network. Where docker and
harbor are present, ``harbor run -a oracle`` is run for real.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import site
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest
from in_process import run_module

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.export import load_legs
from pipeline.export.harbor import IMAGE_NAME, MCP_LOG_DIR, SHARED, build_wheel, export_harbor, harbor_name, task_id
from pipeline.export.harbor_schema import (
    ORG_NAME_PATTERN,
    TaskConfig,
    reward_problems,
    task_problems,
    trajectory_problems,
)
from pipeline.invariants import MACHINE_FIELDS
from pipeline.stages.base import StageContext
from tests.test_race import small_leg

SNAPSHOT = load_settings().snapshot_dir


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project's wheel, built once for the module (``pip wheel --no-deps``)."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A small generated run: 2 easy linear legs (seed 3), its own cache."""
    root = tmp_path_factory.mktemp("run")
    ctx = StageContext.create(load_settings(cache_path=root / "cache.sqlite"))
    out = root / "easy-linear"
    run_generation(GenerationParams(level="easy", variant="linear", count=2, seed=3), out, ctx.settings,
                   local_map_stage(ctx))
    return out


@pytest.fixture(scope="module")
def exported(run, wheel, tmp_path_factory) -> tuple[Path, list[Path]]:
    out = tmp_path_factory.mktemp("harbor") / "tasks"
    r = run_module("pipeline.export", "harbor", str(run), str(out), "--wheel", str(wheel), cwd=PROJECT_ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"2 harbor tasks written to {out}, sharing {SHARED}/ (image {IMAGE_NAME}:" in r.stdout
    return out, sorted(p for p in out.iterdir() if p.is_dir() and p.name != SHARED)


def running_site_packages() -> list[str]:
    """The running interpreter's own site-packages where it runs in a venv: a venv made from it is made
    from the base interpreter (``--system-site-packages`` shows the base's packages, not these)."""
    if sys.prefix == sys.base_prefix:
        return []
    return [p for p in site.getsitepackages() if Path(p).is_dir()]


@pytest.fixture(scope="module")
def venv(exported, tmp_path_factory) -> Path:
    """A venv that sees the running interpreter's dependencies (the system's, or the venv's the suite
    runs in) but takes ``pipeline`` from the export's wheel only."""
    out, _ = exported
    d = tmp_path_factory.mktemp("venv") / "v"
    # no pip of its own (ensurepip is 3 s): the pip of the packages it sees installs the wheel into it
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(d)], check=True,
                   timeout=120)
    # the running venv's packages after the new venv's own (plain paths: its .pth files, such as an
    # editable install of this checkout, are not run)
    [own] = (d / "lib").glob("python3*/site-packages")
    (own / "_legwork_running_env.pth").write_text("".join(f"{p}\n" for p in running_site_packages()))
    [whl] = (out / SHARED).glob("legwork-*.whl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    if subprocess.run([str(d / "bin" / "python"), "-c", "import pip"], env=env, cwd=d, check=False,
                      capture_output=True).returncode != 0:      # no pip among the packages it sees
        subprocess.run([str(d / "bin" / "python"), "-m", "ensurepip"], env=env, cwd=d, check=True, timeout=300,
                       capture_output=True)
    # --ignore-installed: the system's own (editable) legwork must not count as installed
    subprocess.run([str(d / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--ignore-installed", str(whl)], env=env, cwd=d, check=True, timeout=300, capture_output=True)
    where = subprocess.run([str(d / "bin" / "python"), "-c", "import pipeline; print(pipeline.__file__)"], env=env,
                           cwd=d, check=True, capture_output=True, text=True).stdout.strip()
    assert where.startswith(str(d)), where          # the wheel's copy, not a checkout
    return d


def container_env(out: Path, venv: Path, root: Path) -> dict[str, str]:
    """What the task image sets, with /opt/legwork, /app and /logs mapped under ``root``."""
    data = out / SHARED / "data"
    settings = (data / "legwork.toml").read_text().replace("/opt/legwork", str(data)) \
        .replace("/tmp/legwork-cache", str(root / "cache"))
    (root / "legwork.toml").write_text(settings)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LEGWORK_", "PYTHON"))}
    return {**env, "PATH": f"{venv / 'bin'}:{env['PATH']}", "LEGWORK_CONFIG": str(root / "legwork.toml"),
            "LEGWORK_BACKEND": "offline", "LEGWORK_SANDBOX_ALLOW_NONE": "1",
            "LEGWORK_TOOL_LOG": str(root / "logs/agent/tool_log.jsonl"),
            "LEGWORK_MCP_LOG_DIR": str(root / "logs/agent/mcp"),
            "LEGWORK_ANSWER_FILE": str(root / "app/answer.txt"), "LEGWORK_REWARD_DIR": str(root / "logs/verifier"),
            "LEGWORK_AGENT_TRAJECTORY": str(root / "logs/agent/trajectory.json")}


def reward(root: Path) -> dict:
    assert reward_problems(root / "logs/verifier") == []
    data = json.loads((root / "logs/verifier/reward.json").read_text())
    assert float((root / "logs/verifier/reward.txt").read_text()) == data["reward"] == data["fa"]
    return data


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


# ---- format ------------------------------------------------------------------------------------
def test_task_files(tmp_path, wheel):
    leg = small_leg()
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "manifest.json").write_text('{"hash": "abc"}')
    [d] = export_harbor([leg], tmp_path / "tasks", snapshot_dir=snap, wheel=wheel)
    assert d.name == task_id(leg) == "legwork-linear-easy-race-1"
    instr = (d / "instruction.md").read_text()
    assert leg.seed_url in instr and leg.riddle in instr and "maps_elevation" in instr and "/app/answer.txt" in instr
    assert "MCP server `legwork`" in instr and "python -m pipeline.tools call" in instr
    raw = tomllib.loads((d / "task.toml").read_text())
    assert "version" not in raw and "allow_internet" not in raw["environment"]
    cfg = TaskConfig.model_validate(raw)
    assert cfg.schema_version == "1.4" and cfg.task.name == "legwork/linear-easy-race-1" == harbor_name(leg)
    assert cfg.environment.network_mode.value == "no-network" and cfg.metadata["leg_id"] == "race-1"
    [mcp] = cfg.environment.mcp_servers
    assert (mcp.name, mcp.transport, mcp.command) == ("legwork", "stdio", "python")
    assert mcp.args[:3] == ["-m", "pipeline.tools", "serve"] and MCP_LOG_DIR in mcp.args
    image = json.loads((tmp_path / "tasks" / SHARED / "image.json").read_text())["image"]
    assert cfg.environment.docker_image == image and image.startswith(IMAGE_NAME + ":")
    assert (d / "environment" / "Dockerfile").read_text().splitlines()[-1] == f"FROM {image}"
    # the shared context has the wheel, the snapshot and the tool data once; the task has none of them
    shared = (tmp_path / "tasks" / SHARED / "Dockerfile").read_text()
    assert "pip install --no-cache-dir /tmp/wheels/legwork-" in shared and "COPY data/ /opt/legwork/" in shared
    assert (tmp_path / "tasks" / SHARED / "data" / "snapshot" / "manifest.json").is_file()
    assert (tmp_path / "tasks" / SHARED / "data" / "world" / "countries.json").is_file()
    assert [p.name for p in d.rglob("*.py")] == ["verify.py"]     # no copy of the project in a task
    solve = (d / "solution" / "solve.sh").read_text()
    assert solve.count("python -m pipeline.tools --log \"$LOG\" call") == 2 and 'echo -n "2"' in solve
    assert os.access(d / "tests" / "test.sh", os.X_OK) and os.access(d / "solution" / "solve.sh", os.X_OK)
    assert json.loads((d / "tests" / "leg.json").read_text())["passcode"] == 2
    assert trajectory_problems(d / "solution" / "trajectory.json") == []
    assert task_problems(d) == []


def test_agent_phase_may_be_given_its_model_host(tmp_path, wheel):
    """No network by default; an agent running inside the container can be let reach its API only."""
    leg = small_leg()
    [d] = export_harbor([leg], tmp_path / "tasks", snapshot_dir=SNAPSHOT, wheel=wheel,
                        agent_allowed_hosts=["api.openai.com"])
    cfg = TaskConfig.model_validate_toml((d / "task.toml").read_text())
    assert cfg.environment.network_mode.value == "no-network" and cfg.verifier.network_mode is None
    assert cfg.agent.network_mode.value == "allowlist" and cfg.agent.allowed_hosts == ["api.openai.com"]
    assert task_problems(d) == []


def test_ids_differ_across_variants():
    a, b = small_leg(), small_leg()
    b.variant = "dag"
    assert task_id(a) != task_id(b) and harbor_name(a) != harbor_name(b)
    assert ORG_NAME_PATTERN.match(harbor_name(a))


def test_every_exported_task_loads_with_harbors_models(exported, run):
    _, tasks = exported
    legs = {leg.leg_id: leg for leg in load_legs(run)}
    assert len(tasks) == len(legs) == 2
    for d in tasks:
        assert task_problems(d) == [], d.name
        cfg = TaskConfig.model_validate_toml((d / "task.toml").read_text())
        leg = legs[cfg.metadata["leg_id"]]
        assert cfg.task.name == harbor_name(leg) and ORG_NAME_PATTERN.match(cfg.task.name)
        assert cfg.environment.network_mode.value == "no-network" and cfg.environment.allow_internet is None
        assert cfg.metadata["snapshot"] == json.loads((run / "run.json").read_text())["snapshot"]
        traj = json.loads((d / "solution" / "trajectory.json").read_text())
        assert trajectory_problems(traj) == [], d.name
        calls = [c for s in traj["steps"] for c in s.get("tool_calls") or []]
        assert [(c["function_name"], c["arguments"]) for c in calls] == [(t.tool, t.args) for t in leg.trace]
        results = [r["content"] for s in traj["steps"] for r in (s.get("observation") or {}).get("results", [])]
        assert results == [t.response for t in leg.trace]
        assert traj["steps"][-1]["message"].endswith(f"ANSWER: {leg.passcode}")
    # the validator mirrors Harbor's: it refuses what Harbor refuses
    traj = json.loads((tasks[0] / "solution" / "trajectory.json").read_text())
    bad = json.loads(json.dumps(traj))
    bad["steps"][1]["step_id"] = 7
    assert any("sequential" in p for p in trajectory_problems(bad))
    bad = json.loads(json.dumps(traj))
    next(s for s in bad["steps"] if s.get("observation"))["observation"]["results"][0]["source_call_id"] = "nope"
    assert any("nope" in p for p in trajectory_problems(bad))
    bad = json.loads(json.dumps(traj))
    bad["steps"][0]["tool_calls"] = []
    assert any("only for agent steps" in p for p in trajectory_problems(bad))
    text = (tasks[0] / "task.toml").read_text()
    assert task_problems(tasks[0]) == []
    (tasks[0] / "task.toml").write_text(text.replace('name = "legwork/', 'name = "legwork:'))
    try:
        assert any("org/name" in p for p in task_problems(tasks[0]))
    finally:
        (tasks[0] / "task.toml").write_text(text)


def test_export_size_does_not_grow_with_a_copy_per_task(tmp_path, wheel):
    """One copy of the snapshot, the tool data and the wheel per export; a task adds kilobytes."""
    base = small_leg()
    legs = [replace(base, leg_id=f"race-{n}") for n in range(8)]
    one = export_harbor(legs[:1], tmp_path / "one", snapshot_dir=SNAPSHOT, wheel=wheel)
    eight = export_harbor(legs, tmp_path / "eight", snapshot_dir=SNAPSHOT, wheel=wheel)
    snapshot_bytes = tree_bytes(SNAPSHOT)
    assert snapshot_bytes > 5_000_000
    for root in (tmp_path / "one", tmp_path / "eight"):
        assert len(list(root.rglob("pages.sqlite"))) == 1
        assert len(list(root.rglob("*.whl"))) == 1
        assert len(list(root.rglob("countries.json"))) == 1
        assert not list(root.rglob("registry.py"))          # no copy of the project's source
    per_task = [tree_bytes(d) for d in eight]
    assert max(per_task) < 50_000 and max(per_task) < snapshot_bytes / 100
    shared = tree_bytes(tmp_path / "eight" / SHARED)
    assert shared == tree_bytes(tmp_path / "one" / SHARED) and shared > snapshot_bytes
    growth = tree_bytes(tmp_path / "eight") - tree_bytes(tmp_path / "one")
    assert growth == sum(per_task) - tree_bytes(one[0])
    assert growth < 7 * 50_000
    print(f"\nshared environment {shared:,} bytes; a task {per_task[0]:,} bytes; 8 tasks add {growth:,} bytes over 1")


# ---- running the oracle ---------------------------------------------------------------------------
def test_oracle_scores_one_and_a_wrong_answer_zero_with_the_wheel_alone(exported, run, venv, tmp_path):
    """solve.sh then test.sh, as Harbor's oracle agent and verifier run them, on the package installed
    from the export's wheel (no checkout on the path) and the data of the shared environment."""
    out, tasks = exported
    legs = {leg.leg_id: leg for leg in load_legs(run)}
    for d in tasks[:1]:   # one task: the shared environment is the same for both
        leg = legs[json.loads((d / "tests" / "leg.json").read_text())["leg_id"]]
        root = tmp_path / d.name
        root.mkdir()
        env = container_env(out, venv, root)
        cwd = root / "app"
        cwd.mkdir()
        r = subprocess.run(["bash", str(d / "solution" / "solve.sh")], env=env, cwd=cwd, capture_output=True,
                           text=True, timeout=300, check=False)
        assert r.returncode == 0, r.stderr
        assert (root / "app/answer.txt").read_text() == str(leg.passcode)
        log = [json.loads(line) for line in (root / "logs/agent/tool_log.jsonl").read_text().splitlines()]
        assert [(e["tool"], e["args"]) for e in log] == [(t.tool, t.args) for t in leg.trace]
        for entry, t in zip(log, leg.trace):    # the shipped data answers as the generator's did
            if t.tool in MACHINE_FIELDS:
                got, want = json.loads(entry["result_preview"]), json.loads(t.response)
                for k in MACHINE_FIELDS[t.tool]:
                    got.pop(k, None), want.pop(k, None)
                assert got == want
            else:
                assert entry["result_preview"] == t.response[:len(entry["result_preview"])]
                assert entry["result_len"] == len(t.response)
        r = subprocess.run(["bash", str(d / "tests" / "test.sh")], env=env, cwd=cwd, capture_output=True, text=True,
                           timeout=300, check=False)
        assert r.returncode == 0, r.stderr
        got = reward(root)      # the golden solution earns 1 on every figure it is the reference for
        assert got == dict.fromkeys(("reward", "fa", "pvr", "rcr", "intermediate", "eta"), 1.0), got
        # a wrong answer scores 0; no answer at all scores 0
        (root / "app/answer.txt").write_text(str((leg.passcode + 1) % 10))
        subprocess.run(["bash", str(d / "tests" / "test.sh")], env=env, cwd=cwd, check=True, capture_output=True)
        assert reward(root)["reward"] == 0.0
        (root / "app/answer.txt").unlink()
        subprocess.run(["bash", str(d / "tests" / "test.sh")], env=env, cwd=cwd, check=True, capture_output=True)
        assert reward(root)["reward"] == 0.0
    # a verifier that cannot score still writes a reward Harbor reads: 0
    root = tmp_path / "broken"
    root.mkdir()
    env = {**container_env(out, venv, root), "LEGWORK_LEG_FILE": str(root / "missing.json")}
    r = subprocess.run(["bash", str(tasks[0] / "tests" / "test.sh")], env=env, capture_output=True, text=True,
                       check=False)
    assert r.returncode == 0 and "reward 0" in r.stderr
    assert reward(root)["reward"] == 0.0


AAR = PROJECT_ROOT.parent / "shared" / "anchors" / "aar" / "data"


# slow: 11 s of 13 tool-call processes; in the default run test_inspect_tasks.py::
# test_scripted_oracle_earns_one_on_an_imported_aar_leg keeps this leg's oracle calls (oracle_calls, which solve.sh
# replays) earning 1 on every figure, test_oracle_scores_one_and_a_wrong_answer_zero_with_the_wheel_alone solve.sh
@pytest.mark.slow
@pytest.mark.skipif(not AAR.is_dir(), reason="the AAR anchors are absent")
def test_the_oracle_earns_one_on_every_figure_of_imported_aar_legs(wheel, venv, tmp_path):
    """Imported legs have no golden trace: solve.sh replays the calls the oracle's executor makes here
    (chains the offline world cannot answer stop at their failed step, as the golden run does), and
    writes its working; the verifier gives 1 on every figure (aar-linear-hard-sample_000 had RCR 0.5)."""
    legs = [leg for leg in load_legs(AAR) if leg.leg_id == "aar-linear-hard-sample_000"]
    assert len(legs) == 1 and not any(leg.trace for leg in legs)
    out = tmp_path / "tasks"
    for d in export_harbor(legs, out, wheel=wheel):
        root = tmp_path / d.name
        (root / "app").mkdir(parents=True)
        env = container_env(out, venv, root)
        for script in ("solution/solve.sh", "tests/test.sh"):
            r = subprocess.run(["bash", str(d / script)], env=env, cwd=root / "app", capture_output=True, text=True,
                               timeout=300, check=False)
            assert r.returncode == 0, r.stderr
        got = reward(root)
        assert got == dict.fromkeys(("reward", "fa", "pvr", "rcr", "intermediate", "eta"), 1.0), (d.name, got)


def image_env(out: Path) -> dict[str, str]:
    """The ENV instruction of the shared Dockerfile, as the task image sets it."""
    text = (out / SHARED / "Dockerfile").read_text().replace("\\\n", " ")
    [line] = [ln for ln in text.splitlines() if ln.startswith("ENV ")]
    return dict(pair.split("=", 1) for pair in line[4:].split())


def bwrap_usable() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed"
    r = subprocess.run(["bwrap", "--unshare-net", "--ro-bind", "/", "/", "true"], capture_output=True, text=True,
                       check=False, timeout=60)
    return None if r.returncode == 0 else f"bwrap cannot run here: {r.stderr.strip()[:200]}"


BWRAP_MISSING = bwrap_usable()


def container_argv(out: Path, venv: Path, task: Path, host: Path) -> list[str]:
    """A bwrap prefix that runs a command the way the task image runs it, short of docker: a fresh root
    holding only the OS, the interpreter, the venv with the export's wheel and the shared data at
    /opt/legwork; /app, /logs, /tests and /solution at their container paths (the first two kept under
    ``host``); no network; no checkout; the image's ENV only."""
    (host / "logs").mkdir(parents=True, exist_ok=True)
    (host / "app").mkdir(exist_ok=True)
    python_home = Path(os.path.realpath(venv / "bin" / "python")).parents[1]
    argv = ["bwrap", "--unshare-net", "--unshare-pid", "--die-with-parent", "--ro-bind", "/usr", "/usr"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if Path("/" + link).is_symlink():
            argv += ["--symlink", os.readlink("/" + link), "/" + link]
        elif Path("/" + link).is_dir():
            argv += ["--ro-bind", "/" + link, "/" + link]
    argv += ["--ro-bind", "/etc", "/etc", "--ro-bind", str(python_home), str(python_home), "--dev", "/dev",
             "--proc", "/proc", "--tmpfs", "/tmp", "--ro-bind", str(venv), str(venv),
             *[x for p in running_site_packages() for x in ("--ro-bind", p, p)],
             "--ro-bind", str(out / SHARED / "data"), "/opt/legwork", "--bind", str(host / "logs"), "/logs",
             "--bind", str(host / "app"), "/app", "--ro-bind", str(task / "solution"), "/solution",
             "--ro-bind", str(task / "tests"), "/tests", "--chdir", "/app", "--clearenv",
             "--setenv", "PATH", f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/tmp"]
    for k, v in image_env(out).items():
        argv += ["--setenv", k, v]
    return argv


def in_container(out: Path, venv: Path, task: Path, host: Path, command: str) -> subprocess.CompletedProcess:
    return subprocess.run(container_argv(out, venv, task, host) + ["bash", "-c", "mkdir -p /logs/agent "
                                                                   "/logs/verifier && " + command],
                          capture_output=True, text=True, check=False, timeout=600)


@pytest.mark.skipif(BWRAP_MISSING is not None, reason=str(BWRAP_MISSING))
def test_oracle_in_a_container_like_sandbox_without_network_at_the_container_paths(exported, run, venv, tmp_path):
    """Harbor's oracle then verifier, with the scripts' default paths (nothing mapped), the image's ENV,
    no network and no checkout visible: reward 1; a wrong answer 0."""
    out, tasks = exported
    legs = {leg.leg_id: leg for leg in load_legs(run)}
    for d in tasks[:1]:   # one task: the shared environment is the same for both
        leg = legs[json.loads((d / "tests" / "leg.json").read_text())["leg_id"]]
        host = tmp_path / d.name
        r = in_container(out, venv, d, host, 'python -c "import pipeline; print(pipeline.__file__)"; '
                                             "test ! -e /work && bash /solution/solve.sh && bash /tests/test.sh")
        assert r.returncode == 0, r.stdout + r.stderr
        assert r.stdout.splitlines()[0].startswith(str(venv))          # the wheel's package
        assert (host / "app/answer.txt").read_text() == str(leg.passcode)
        assert len((host / "logs/agent/tool_log.jsonl").read_text().splitlines()) == len(leg.trace)
        got = reward(host)
        assert got == dict.fromkeys(("reward", "fa", "pvr", "rcr", "intermediate", "eta"), 1.0), got
        (host / "app/answer.txt").write_text(str((leg.passcode + 1) % 10))
        r = in_container(out, venv, d, host, "bash /tests/test.sh")
        assert r.returncode == 0, r.stderr
        assert reward(host)["reward"] == 0.0
    r = in_container(out, venv, tasks[0], tmp_path / "net", 'python -c "import socket; '
                     'socket.create_connection((\'1.1.1.1\', 80), timeout=3)"')
    assert r.returncode != 0 and "unreachable" in r.stderr.lower()
    # agent code runs too (python_execute_code: bubblewrap where the runtime allows it, else the container)
    r = in_container(out, venv, tasks[0], tmp_path / "code",
                     """python -m pipeline.tools call python_execute_code '{"code": "print(6 * 7)"}'""")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert (result["exit_code"], result["stdout"]) == (0, "42\n") and result["isolation"] in ("bwrap", "unshare", "none")


def test_mcp_server_of_the_task_serves_the_tools_and_the_verifier_scores_its_log(exported, run, venv, tmp_path):
    """The task's [[environment.mcp_servers]] entry, started as a harness inside the task's container
    would start it (stdio; in the container-like sandbox where bwrap works, else with paths mapped),
    on the wheel-only venv: the golden calls made through it and the answer given to its answer tool
    score 1."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    out, tasks = exported
    d = tasks[0]
    leg = {leg.leg_id: leg for leg in load_legs(run)}[json.loads((d / "tests" / "leg.json").read_text())["leg_id"]]
    [server] = TaskConfig.model_validate_toml((d / "task.toml").read_text()).environment.mcp_servers
    root = tmp_path / "mcp"
    root.mkdir()
    env = container_env(out, venv, root)
    if BWRAP_MISSING is None:     # the container's paths, exactly as task.toml names them
        prefix = container_argv(out, venv, d, root)
        (root / "logs/agent").mkdir(parents=True)
        params = StdioServerParameters(command=prefix[0], args=[*prefix[1:], server.command, *server.args])
    else:
        args = [a.replace(MCP_LOG_DIR, env["LEGWORK_MCP_LOG_DIR"]) for a in server.args]
        params = StdioServerParameters(command=shutil.which(server.command, path=env["PATH"]), args=args, env=env,
                                       cwd=str(root))

    async def race() -> list[str]:
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            for t in leg.trace:
                result = await client.call_tool(t.tool, t.args)
                assert not result.is_error
            await client.call_tool("legwork_submit_answer", {"answer": str(leg.passcode)})
            return names

    names = asyncio.run(asyncio.wait_for(race(), 240))
    assert {t.tool for t in leg.trace} <= set(names) and "legwork_submit_answer" in names
    logs = list((root / "logs/agent/mcp").glob("*/tool_log.jsonl"))
    assert len(logs) == 1 and logs[0].parent.name == task_id(leg)
    if BWRAP_MISSING is None:
        r = in_container(out, venv, d, root, "bash /tests/test.sh")
        assert r.returncode == 0, r.stderr
    else:
        subprocess.run(["bash", str(d / "tests" / "test.sh")], env=env, check=True, capture_output=True, timeout=300)
    got = reward(root)
    assert (got["reward"], got["pvr"], got["rcr"]) == (1.0, 1.0, 1.0), got


def _docker_and_harbor() -> str | None:
    """Why ``harbor run`` cannot run here (None when it can)."""
    missing = []
    if shutil.which("docker") is None:
        missing.append("no docker CLI")
    else:
        r = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False, timeout=60)
        if r.returncode != 0:
            missing.append("no container runtime (docker info: "
                           + (r.stderr.strip().splitlines() or ["failed"])[-1] + ")")
    if shutil.which("harbor") is None:
        missing.append(f"no harbor CLI (harbor 0.25 needs Python >= 3.12; this is {sys.version_info[0]}."
                       f"{sys.version_info[1]})")
    return "; ".join(missing) or None


HARBOR_RUN_MISSING = _docker_and_harbor()


@pytest.mark.skipif(HARBOR_RUN_MISSING is not None, reason=str(HARBOR_RUN_MISSING))
def test_harbor_run_oracle_scores_one(exported, tmp_path):
    out, tasks = exported
    subprocess.run(["bash", str(out / "build-image.sh")], check=True, timeout=1800)
    r = subprocess.run(["harbor", "run", "-p", str(out), "-a", "oracle", "-o", str(tmp_path / "jobs")],
                       capture_output=True, text=True, timeout=3600, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    rewards = [json.loads(p.read_text()) for p in (tmp_path / "jobs").rglob("reward.json")]
    assert len(rewards) == len(tasks) and all(x["reward"] == 1.0 for x in rewards)
