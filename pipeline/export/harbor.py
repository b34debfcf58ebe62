"""Export legs as Harbor tasks (the task format of Harbor 0.25: task.toml schema 1.4, ATIF 1.6).

Layout of ``OUT/``:

  environment/                 ONE build context for every task of the export (built once):
    Dockerfile                 python:3.11-slim + the package from its wheel + the tool data
    legwork-*.whl              the project as a wheel (``pip wheel --no-deps``, built once)
    data/                      snapshot/, world/, templates/, prompts/ and legwork.toml, copied once
    image.json                 the image tag and the digests it is made of
  build-image.sh               ``docker build -t <image> environment/`` (run once before harbor run)
  <task_id>/                   one per leg, a few kilobytes, no copy of the project or the snapshot:
    instruction.md             seed URL, riddle, the tools (MCP server ``legwork`` or the shell command)
    task.toml                  schema_version, [task] name = "legwork/<variant>-<level>-<leg_id>", the
                               shared image (``docker_image``), ``network_mode = "no-network"`` and the
                               tools as an MCP server of the task (stdio, in the task's image:
                               ``python -m pipeline.tools serve``)
    environment/Dockerfile     ``FROM <image>``: the shared image, for providers that build per task
    solution/solve.sh          the oracle: replays the golden trace through the tool executor, writes y*
    solution/trajectory.json   the golden trajectory in ATIF (``pipeline.export.trajectories``)
    tests/test.sh              runs tests/verify.py, which scores the answer and the tool logs with
                               ``pipeline.scoring`` and writes /logs/verifier/reward.txt (FA, the
                               reward) and reward.json {reward, fa, pvr, rcr, intermediate, eta}
    tests/verify.py, tests/leg.json
The leg (with its passcode) lives only under tests/ and solution/, which Harbor copies into the
container after the agent has run (tests) or only for the oracle (solution). Paths inside the
container can be moved with LEGWORK_ANSWER_FILE, LEGWORK_TOOL_LOG, LEGWORK_MCP_LOG_DIR,
LEGWORK_REWARD_DIR and LEGWORK_LEG_FILE (the tests run both scripts on this machine that way).
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from string import Template

from pipeline.agents.environments import oracle_calls, worked_solution
from pipeline.cache import canonical_json, file_sha256
from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.export.harbor_schema import (
    ATIF_SCHEMA_VERSION,
    HARBOR_TASK_SCHEMA_VERSION,
    task_problems,
    trajectory_problems,
)
from pipeline.export.naming import task_id
from pipeline.export.trajectories import Origin, atif_trajectory, leg_trajectory
from pipeline.model import Leg
from pipeline.tools.registry import Toolbox
from pipeline.tools.spec import TOOLS

APP_DIR = "/app"
ANSWER_FILE = "/app/answer.txt"
TOOL_LOG = "/logs/agent/tool_log.jsonl"
AGENT_TRAJECTORY = "/logs/agent/trajectory.json"   # the agent's ATIF trajectory (Harbor writes it for its agents)
MCP_LOG_DIR = "/logs/agent/mcp"
REWARD_DIR = "/logs/verifier"
OPT = "/opt/legwork"
SHARED = "environment"              # the shared build context under OUT/
IMAGE_NAME = "legwork-harbor-env"
MCP_SERVER = "legwork"
# What of the checkout goes into the wheel's build (the wheel holds only the packages and their data).
WHEEL_SOURCES = ("pyproject.toml", "README.md", "pipeline", "flows")


def harbor_name(leg: Leg) -> str:
    """The ``[task] name``: ``legwork/<variant>-<level>-<leg_id>`` (Harbor's org/name pattern)."""
    return "legwork/" + task_id(leg).removeprefix("legwork-")


# ---- the shared environment ---------------------------------------------------------------------
@dataclass(frozen=True)
class SharedEnvironment:
    """The one image every task of an export runs in."""
    image: str          # docker image reference, e.g. legwork-harbor-env:3f2a9c1d0b7e
    context: Path       # OUT/environment
    wheel: str          # file name of the wheel in the context
    snapshot: str       # snapshot hash served by the tools


def build_wheel(dest: Path, project_root: Path = PROJECT_ROOT) -> Path:
    """``pip wheel --no-deps`` of the project, built from a copy of its sources (the checkout stays
    clean); file times are pinned (SOURCE_DATE_EPOCH) so the same sources give the same wheel."""
    dest = Path(dest)
    if not (Path(project_root) / "pyproject.toml").is_file():
        raise RuntimeError(f"no project checkout at {project_root} to build a wheel from; pass a wheel (--wheel)")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="legwork-wheel-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
        for name in WHEEL_SOURCES:
            p = project_root / name
            if p.is_dir():
                shutil.copytree(p, src / name, ignore=ignore)
            elif p.is_file():
                shutil.copy2(p, src / name)
        out = Path(tmp) / "wheel"
        env = {**os.environ, "SOURCE_DATE_EPOCH": "315532800", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
        r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-q", "-w", str(out),
                            str(src)], capture_output=True, text=True, env=env, check=False)
        wheels = sorted(out.glob("legwork-*.whl")) if out.is_dir() else []
        if r.returncode != 0 or len(wheels) != 1:
            raise RuntimeError(f"pip wheel failed (exit {r.returncode}): {(r.stderr or r.stdout)[-2000:]}")
        target = dest / wheels[0].name
        shutil.copy2(wheels[0], target)
    return target


def wheel_digest(wheel: Path) -> str:
    """Content digest of a wheel: its RECORD (a hash of every file in it), not the zip's bytes."""
    with zipfile.ZipFile(wheel) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        return hashlib.sha256(z.read(record)).hexdigest()


def _tree_digest(root: Path) -> str:
    lines = [f"{f.relative_to(root).as_posix()} {file_sha256(f)}" for f in sorted(root.rglob("*")) if f.is_file()]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _copy_tree(src: Path, dst: Path) -> None:
    for f in sorted(Path(src).rglob("*")):
        if f.is_dir() or "__pycache__" in f.parts or f.name.startswith(".") or f.suffix == ".pyc":
            continue
        target = dst / f.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(f, target)


def dockerfile(wheel: str) -> str:
    return f"""FROM python:3.11-slim
# Shared by every task of this export: the Legwork package (tool executor and MCP server, offline
# backends, scoring) from its wheel, and the data its tools answer from, so tools run with no network.
# bubblewrap isolates python_execute_code where the runtime allows it; elsewhere the container is
# the sandbox (LEGWORK_SANDBOX_ALLOW_NONE).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*
COPY {wheel} /tmp/wheels/{wheel}
RUN pip install --no-cache-dir /tmp/wheels/{wheel} && rm -rf /tmp/wheels
COPY data/ {OPT}/
ENV LEGWORK_CONFIG={OPT}/legwork.toml \\
    LEGWORK_BACKEND=offline \\
    LEGWORK_TOOL_LOG={TOOL_LOG} \\
    LEGWORK_SANDBOX_ALLOW_NONE=1
RUN mkdir -p {APP_DIR} /logs/agent /logs/verifier && python -m pipeline.tools list > /dev/null
WORKDIR {APP_DIR}
"""


SETTINGS_TOML = f"""# Settings of the Legwork tools inside the task image (LEGWORK_CONFIG points here).
snapshot_dir = "{OPT}/snapshot"
world_dir = "{OPT}/world"
templates_dir = "{OPT}/templates"
prompts_dir = "{OPT}/prompts"
cache_path = "/tmp/legwork-cache/cache.sqlite"
default_backend = "offline"
"""


def write_shared_environment(out_dir: Path, *, snapshot_dir: Path, world_dir: Path, wheel: Path | None = None,
                             image_name: str = IMAGE_NAME, project_root: Path = PROJECT_ROOT) -> SharedEnvironment:
    """``OUT/environment``: the wheel (built here unless given), one copy of the snapshot and the tool
    data, the Dockerfile and ``image.json``; and ``OUT/build-image.sh``. The image tag is a digest of
    what the image is made of, so exports of the same code and data share one image."""
    ctx = Path(out_dir) / SHARED
    if ctx.exists():
        shutil.rmtree(ctx)
    data = ctx / "data"
    data.mkdir(parents=True)
    wheel_path = build_wheel(ctx, project_root) if wheel is None else Path(shutil.copy2(wheel, ctx / Path(wheel).name))
    _copy_tree(Path(snapshot_dir), data / "snapshot")
    _copy_tree(Path(world_dir), data / "world")
    for name in ("templates", "prompts"):
        if (project_root / name).is_dir():
            _copy_tree(project_root / name, data / name)
    (data / "legwork.toml").write_text(SETTINGS_TOML, encoding="utf-8")
    (ctx / "Dockerfile").write_text(dockerfile(wheel_path.name), encoding="utf-8")
    manifest = Path(snapshot_dir) / "manifest.json"
    snapshot = json.loads(manifest.read_text())["hash"] if manifest.is_file() else "no-snapshot"
    parts = {"wheel": wheel_digest(wheel_path), "data": _tree_digest(data),
             "dockerfile": hashlib.sha256((ctx / "Dockerfile").read_bytes()).hexdigest()}
    tag = hashlib.sha256(canonical_json(parts).encode()).hexdigest()[:12]
    image = f"{image_name}:{tag}"
    (ctx / "image.json").write_text(json.dumps({"image": image, "wheel": wheel_path.name, "snapshot": snapshot,
                                                "digests": parts}, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    script = Path(out_dir) / "build-image.sh"
    script.write_text("#!/bin/bash\n# Build the one image every task of this export runs in (once, before harbor run).\n"
                      f'set -eu\ndocker build -t {shlex.quote(image)} "$(dirname "$0")/{SHARED}"\n', encoding="utf-8")
    os.chmod(script, 0o755)
    return SharedEnvironment(image, ctx, wheel_path.name, snapshot)


# ---- one task ----------------------------------------------------------------------------------
def _tool_lines() -> str:
    out = []
    for name, spec in TOOLS.items():
        props = spec["parameters"].get("properties", {})
        req = spec["parameters"].get("required", [])
        args = ", ".join(f"{k}{'' if k in req else '?'}" for k in props)
        out.append(f"- **{name}**({args}): {spec['description']}")
    return "\n".join(out)


def instruction_md(leg: Leg) -> str:
    return f"""# Legwork race leg `{leg.leg_id}` ({leg.variant}, {leg.level})

Solve a multi-step puzzle: start at the seed page, follow the numbered clues in order, use the
tools to read pages and look things up, and combine the values as the last clue says. The final
answer is a **single digit (0-9)**.

## Seed URL

{leg.seed_url}

## Riddle

{leg.riddle}

## Tools

The tools are the MCP server `{MCP_SERVER}` of this task (stdio; your harness starts it). Without
MCP, call the same tools from the shell:

```bash
python -m pipeline.tools call <tool_name> '<json arguments>'
python -m pipeline.tools list        # every tool with its JSON schema
```

Every call is logged (the log is part of the score). There is no internet access: the tools answer
from the data in this environment.

{_tool_lines()}

You have a budget of {leg.step_budget} tool calls.

## Answer

Write only the digit to `{ANSWER_FILE}`:

```bash
echo -n "7" > {ANSWER_FILE}
```

(or call the MCP tool `legwork_submit_answer` with `{{"answer": "7"}}`).
"""


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def mcp_args(leg: Leg) -> list[str]:
    return ["-m", "pipeline.tools", "serve", "--log-dir", MCP_LOG_DIR, "--trial-id", task_id(leg),
            "--leg-id", leg.leg_id, "--agent", "harbor", "--answer-tool"]


def task_toml(leg: Leg, env: SharedEnvironment, agent_hosts: tuple[str, ...] = ()) -> str:
    """The task config. The environment has no network; ``agent_hosts`` opens those hosts (an agent
    running inside the container needs its model's API) during the agent phase only."""
    agent_network = (f'network_mode = "allowlist"\nallowed_hosts = {json.dumps(list(agent_hosts))}\n'
                     if agent_hosts else "")
    keywords = ["legwork", leg.variant, leg.level, "multi-step", "tool-use", "web-navigation", "mcp"]
    return f"""schema_version = "{HARBOR_TASK_SCHEMA_VERSION}"

[task]
name = {_toml_str(harbor_name(leg))}
description = {_toml_str(f"Legwork race leg {leg.leg_id} ({leg.variant}, {leg.level}): {len(leg.stops)} stops "
                         f"from {leg.seed_title}, answer one digit")}
authors = [{{ name = "Legwork" }}]
keywords = {json.dumps(keywords)}

[metadata]
leg_id = {_toml_str(leg.leg_id)}
variant = {_toml_str(leg.variant)}
difficulty = {_toml_str(leg.level)}
category = "tool-use"
tags = {json.dumps(keywords)}
step_budget = {leg.step_budget}
snapshot = {_toml_str(env.snapshot)}
image = {_toml_str(env.image)}

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = {600.0 + 60.0 * len(leg.stops)}
{agent_network}
[environment]
docker_image = {_toml_str(env.image)}
network_mode = "no-network"
build_timeout_sec = 900.0
cpus = 1
memory_mb = 4096
storage_mb = 10240
workdir = "{APP_DIR}"

[[environment.mcp_servers]]
name = "{MCP_SERVER}"
transport = "stdio"
command = "python"
args = {json.dumps(mcp_args(leg))}
"""


def oracle_trajectory(leg: Leg) -> dict:
    """The oracle's closing message as an ATIF trajectory: its working (every stop's value) and y*,
    which the verifier reads as the agent's messages (intermediate accuracy)."""
    return {"schema_version": ATIF_SCHEMA_VERSION, "session_id": f"oracle/{leg.leg_id}",
            "agent": {"name": "legwork-oracle", "version": "1"},
            "steps": [{"step_id": 1, "source": "agent", "message": worked_solution(leg, str(leg.passcode))}]}


def solve_sh(leg: Leg, calls: list[tuple[str, dict]] | None = None) -> str:
    lines = ["#!/bin/bash", ("# Oracle: replay the golden trace through the tool executor, write its working "
             "(every stop's value) as the agent's trajectory, then write y*."), "set -u",
             f'LOG="${{LEGWORK_TOOL_LOG:-{TOOL_LOG}}}"', 'mkdir -p "$(dirname "$LOG")"']
    if calls is None:
        calls = oracle_calls(leg, None if leg.trace else Toolbox(load_settings()))
    for tool, args in calls:
        lines.append(f'python -m pipeline.tools --log "$LOG" call {shlex.quote(tool)} '
                     f'{shlex.quote(canonical_json(args))} > /dev/null || true')
    lines.append(f'TRAJECTORY="${{LEGWORK_AGENT_TRAJECTORY:-{AGENT_TRAJECTORY}}}"')
    lines.append('mkdir -p "$(dirname "$TRAJECTORY")"')
    lines.append(f"cat > \"$TRAJECTORY\" <<'LEGWORK_ORACLE_EOF'\n"
                 f"{json.dumps(oracle_trajectory(leg), ensure_ascii=False, indent=1)}\nLEGWORK_ORACLE_EOF")
    lines.append(f'ANSWER="${{LEGWORK_ANSWER_FILE:-{ANSWER_FILE}}}"')
    lines.append('mkdir -p "$(dirname "$ANSWER")"')
    lines.append(f'echo -n "{leg.passcode}" > "$ANSWER"')
    return "\n".join(lines) + "\n"


TEST_SH = f"""#!/bin/bash
# Harbor verifier: score the answer and the tool logs; verify.py writes reward.txt (FA, the reward)
# and reward.json. A verifier that cannot score still leaves a reward: 0.
REWARD_DIR="${{LEGWORK_REWARD_DIR:-{REWARD_DIR}}}"
mkdir -p "$REWARD_DIR"
if ! python3 "$(dirname "$0")/verify.py"; then
  echo "verify.py failed: reward 0" >&2
  echo 0 > "$REWARD_DIR/reward.txt"
  echo '{{"reward": 0.0, "fa": 0.0}}' > "$REWARD_DIR/reward.json"
fi
"""

VERIFY_PY = Template('''"""Harbor verifier for one Legwork leg: FA (the reward), PVR, RCR, intermediate accuracy, tool efficiency.

The tool log is every call the agent made: the shell executor's log and the MCP server's trial logs,
in time order. The answer is the answer file, else the one given to the MCP tool legwork_submit_answer.
The agent's messages (values it states: intermediate accuracy) come from its ATIF trajectory, where
it left one (/logs/agent/trajectory.json).
"""
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    from pipeline.model import Leg
    from pipeline.scoring import golden_view, score_trial
    from pipeline.scoring.trials import Trial, TrialFormatError, read_tool_log, trial_from_atif

    leg = Leg.from_json(Path(os.environ.get("LEGWORK_LEG_FILE", HERE / "leg.json")).read_text(encoding="utf-8"))
    answer_file = Path(os.environ.get("LEGWORK_ANSWER_FILE", "$answer"))
    logs = [Path(os.environ.get("LEGWORK_TOOL_LOG", "$log"))]
    mcp_dir = Path(os.environ.get("LEGWORK_MCP_LOG_DIR", "$mcp"))
    logs += sorted(mcp_dir.glob("*/tool_log.jsonl")) if mcp_dir.is_dir() else []
    reward_dir = Path(os.environ.get("LEGWORK_REWARD_DIR", "$reward"))
    answer = (answer_file.read_text(encoding="utf-8").strip() or None) if answer_file.is_file() else None
    if answer is None and mcp_dir.is_dir():
        for record in sorted(mcp_dir.glob("*/trial.json")):
            given = json.loads(record.read_text(encoding="utf-8")).get("answer")
            answer = answer if given is None else str(given).strip()
    trial = Trial(trial_id="harbor", leg_id=leg.leg_id, answer=answer)
    for log in logs:
        if log.is_file():
            try:
                trial.calls += read_tool_log(log)
            except TrialFormatError as exc:
                trial.error = str(exc)
    trial.calls.sort(key=lambda c: float(c.ts) if isinstance(c.ts, (int, float)) else 0.0)
    # the agent's messages (its working: intermediate accuracy) from its ATIF trajectory, where it has one
    trajectory = Path(os.environ.get("LEGWORK_AGENT_TRAJECTORY", "$trajectory"))
    if trajectory.is_file():
        try:
            trial.messages += trial_from_atif(json.loads(trajectory.read_text(encoding="utf-8")), "harbor",
                                              "trajectory").messages
        except ValueError:
            pass                # an unreadable trajectory shows no messages; the calls still count
    s = score_trial(golden_view(leg), trial)
    fa = float(s.fa)
    reward = {"reward": fa, "fa": fa, "pvr": float(s.pvr or 0.0), "rcr": float(1.0 if s.rcr is None else s.rcr),
              "intermediate": float(s.intermediate or 0.0), "eta": float(s.eta or 0.0)}
    reward_dir.mkdir(parents=True, exist_ok=True)
    (reward_dir / "reward.json").write_text(json.dumps(reward) + "\\n", encoding="utf-8")
    (reward_dir / "reward.txt").write_text(f"{fa:g}\\n", encoding="utf-8")
    print(json.dumps(reward))
    return 0


if __name__ == "__main__":
    sys.exit(main())
''').substitute(answer=ANSWER_FILE, log=TOOL_LOG, mcp=MCP_LOG_DIR, reward=REWARD_DIR, trajectory=AGENT_TRAJECTORY)


def task_dockerfile(env: SharedEnvironment) -> str:
    return f"# The shared image of this export (../../{SHARED}, built by ../../build-image.sh)\nFROM {env.image}\n"


def write_task(leg: Leg, out_dir: Path, env: SharedEnvironment, origin: Origin | None = None,
               agent_hosts: tuple[str, ...] = (), calls: list[tuple[str, dict]] | None = None) -> Path:
    d = Path(out_dir) / task_id(leg)
    for sub in ("environment", "solution", "tests"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    files = [("instruction.md", instruction_md(leg), 0o644), ("task.toml", task_toml(leg, env, agent_hosts), 0o644),
             ("environment/Dockerfile", task_dockerfile(env), 0o644),
             ("solution/solve.sh", solve_sh(leg, calls), 0o755), ("tests/test.sh", TEST_SH, 0o755),
             ("tests/verify.py", VERIFY_PY, 0o644), ("tests/leg.json", leg.to_json() + "\n", 0o644)]
    if leg.trace and leg.passcode is not None:
        origin = origin or Origin()
        golden = atif_trajectory(leg_trajectory(leg, Origin(origin.source, origin.snapshot or env.snapshot)))
        files.append(("solution/trajectory.json", json.dumps(golden, ensure_ascii=False, indent=1) + "\n", 0o644))
    for rel, text, mode in files:
        (d / rel).write_text(text, encoding="utf-8")
        os.chmod(d / rel, mode)
    # what Harbor would refuse is a bug of this exporter, never a task to ship
    problems = task_problems(d) + (trajectory_problems(d / "solution" / "trajectory.json")
                                   if (d / "solution" / "trajectory.json").is_file() else [])
    if problems:
        raise RuntimeError(f"{d.name}: the exported task does not load in Harbor's models: {'; '.join(problems)}")
    return d


def export_harbor(legs: Iterable[Leg], out_dir: str | Path, *, snapshot_dir: str | Path | None = None,
                  world_dir: str | Path | None = None, wheel: str | Path | None = None,
                  image_name: str = IMAGE_NAME, origin: Origin | None = None,
                  agent_allowed_hosts: Iterable[str] = ()) -> list[Path]:
    """One task directory per leg under ``out_dir`` and the one shared environment they all use
    (``origin``: the run the legs come from, named in each golden trajectory; ``agent_allowed_hosts``:
    hosts the agent phase may reach, e.g. its model's API, where the provider supports allowlists)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    settings = load_settings()
    legs = list(legs)
    seen: set[str] = set()
    for leg in legs:
        tid = task_id(leg)
        if tid in seen:
            raise ValueError(f"two legs export to the same Harbor task id {tid!r}")
        if tid == SHARED:
            raise ValueError(f"a leg's task id {tid!r} collides with the shared environment folder")
        seen.add(tid)
    env = write_shared_environment(out, snapshot_dir=Path(snapshot_dir or settings.snapshot_dir),
                                   world_dir=Path(world_dir or settings.world_dir),
                                   wheel=Path(wheel) if wheel else None, image_name=image_name)
    hosts = tuple(agent_allowed_hosts)
    toolbox = None
    if any(not leg.trace for leg in legs):    # imported legs: the oracle's calls are made here once
        toolbox = Toolbox(settings.with_overrides(snapshot_dir=Path(snapshot_dir or settings.snapshot_dir),
                                                  world_dir=Path(world_dir or settings.world_dir)))
    return [write_task(leg, out, env, origin, hosts, oracle_calls(leg, toolbox)) for leg in legs]
