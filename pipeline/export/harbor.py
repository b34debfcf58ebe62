"""Export legs as Harbor tasks (one task directory per leg).

Layout of ``OUT/<task_id>/``:
  instruction.md        seed URL, riddle, the tools and how to call them, where the answer goes
  task.toml             Harbor task config (metadata names leg, variant, level)
  environment/          Dockerfile + the project source + the snapshot, so the tool executor
                        (``python -m pipeline.tools call``) answers offline inside the container
  solution/solve.sh     replays the golden trace through the tool executor and writes y*
  tests/test.sh         runs tests/verify.py, which scores the answer and the tool log with
                        ``pipeline.scoring`` and writes /logs/verifier/reward.json {fa, pvr, rcr,
                        intermediate, eta} and reward.txt (FA). Paths are overridable by env:
                        LEGWORK_ANSWER_FILE, LEGWORK_TOOL_LOG, LEGWORK_REWARD_DIR, LEGWORK_LEG_FILE.
The leg (with its passcode) lives only under tests/, which the agent does not see.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path
from string import Template

from pipeline.cache import canonical_json
from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.model import Leg
from pipeline.tools.spec import TOOLS

APP_DIR = "/app"
ANSWER_FILE = "/app/answer.txt"
TOOL_LOG = "/logs/agent/tool_log.jsonl"
REWARD_DIR = "/logs/verifier"


def task_id(leg: Leg) -> str:
    """Unique across variants and levels: the variant and level are always part of the id."""
    raw = f"legwork-{leg.variant}-{leg.level}-{leg.leg_id}"
    return re.sub(r"[^a-z0-9_.-]+", "-", raw.lower()).strip("-")


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

Call a tool from the shell; every call is logged (the log is part of the score):

```bash
python -m pipeline.tools call <tool_name> '<json arguments>'
```

{_tool_lines()}

You have a budget of {leg.step_budget} tool calls.

## Answer

Write only the digit to `{ANSWER_FILE}`:

```bash
echo -n "7" > {ANSWER_FILE}
```
"""


def task_toml(leg: Leg) -> str:
    tags = json.dumps(["legwork", leg.variant, leg.level, "multi-step", "tool-use", "web-navigation"])
    return f"""version = "1.0"

[metadata]
author_name = "Legwork"
leg_id = {json.dumps(leg.leg_id)}
variant = {json.dumps(leg.variant)}
difficulty = {json.dumps(leg.level)}
category = "tool-use"
tags = {tags}
step_budget = {leg.step_budget}

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = {600.0 + 60.0 * len(leg.stops)}

[environment]
build_timeout_sec = 900.0
cpus = 1
memory_mb = 4096
storage_mb = 10240
allow_internet = false
"""


DOCKERFILE = f"""FROM python:3.11-slim
# The project (tool executor, offline backends, scoring) and its snapshot: tools answer offline.
WORKDIR {APP_DIR}
COPY legwork/ /opt/legwork/
RUN pip install --no-cache-dir /opt/legwork
COPY snapshot/ /opt/legwork/snapshots/default/
ENV LEGWORK_SNAPSHOT=/opt/legwork/snapshots/default \\
    LEGWORK_BACKEND=offline \\
    LEGWORK_TOOL_LOG={TOOL_LOG} \\
    LEGWORK_CACHE=/opt/legwork/cache/cache.sqlite
RUN mkdir -p /logs/agent /logs/verifier
"""


def solve_sh(leg: Leg) -> str:
    lines = ["#!/bin/bash", "# Oracle: replay the golden trace through the tool executor, then write y*.", "set -u",
             f'LOG="${{LEGWORK_TOOL_LOG:-{TOOL_LOG}}}"', 'mkdir -p "$(dirname "$LOG")"']
    calls = [(t.tool, t.args) for t in leg.trace]
    if not calls:  # legs imported without a trace: page fetches only
        calls = [("fetch_webpage", {"url": s.page_url}) for s in leg.stops if s.kind == "route_info" and s.page_url]
    for tool, args in calls:
        lines.append(f'python -m pipeline.tools --log "$LOG" call {shlex.quote(tool)} '
                     f'{shlex.quote(canonical_json(args))} > /dev/null || true')
    lines.append(f'ANSWER="${{LEGWORK_ANSWER_FILE:-{ANSWER_FILE}}}"')
    lines.append('mkdir -p "$(dirname "$ANSWER")"')
    lines.append(f'echo -n "{leg.passcode}" > "$ANSWER"')
    return "\n".join(lines) + "\n"


TEST_SH = """#!/bin/bash
# Score the agent's answer and tool log; writes reward.json and reward.txt.
python3 "$(dirname "$0")/verify.py"
"""

VERIFY_PY = Template('''"""Harbor verifier for one Legwork leg: FA, PVR, RCR, intermediate accuracy, tool efficiency."""
import json
import os
import sys
from pathlib import Path
from string import Template

HERE = Path(__file__).resolve().parent


def main() -> int:
    from pipeline.model import Leg
    from pipeline.scoring import golden_view, score_trial
    from pipeline.scoring.trials import Trial, TrialFormatError, read_tool_log

    leg = Leg.from_json(Path(os.environ.get("LEGWORK_LEG_FILE", HERE / "leg.json")).read_text(encoding="utf-8"))
    answer_file = Path(os.environ.get("LEGWORK_ANSWER_FILE", "$answer"))
    log_file = Path(os.environ.get("LEGWORK_TOOL_LOG", "$log"))
    reward_dir = Path(os.environ.get("LEGWORK_REWARD_DIR", "$reward"))
    answer = answer_file.read_text(encoding="utf-8").strip() if answer_file.is_file() else None
    trial = Trial(trial_id="harbor", leg_id=leg.leg_id, answer=answer)
    if log_file.is_file():
        try:
            trial.calls = read_tool_log(log_file)
        except TrialFormatError as exc:
            trial.error = str(exc)
    s = score_trial(golden_view(leg), trial)
    reward = {"fa": float(s.fa), "pvr": float(s.pvr or 0.0), "rcr": float(1.0 if s.rcr is None else s.rcr),
              "intermediate": float(s.intermediate or 0.0), "eta": float(s.eta or 0.0)}
    reward_dir.mkdir(parents=True, exist_ok=True)
    (reward_dir / "reward.json").write_text(json.dumps(reward) + "\\n", encoding="utf-8")
    (reward_dir / "reward.txt").write_text(str(reward["fa"]) + "\\n", encoding="utf-8")
    print(json.dumps(reward))
    return 0


if __name__ == "__main__":
    sys.exit(main())
''').substitute(answer=ANSWER_FILE, log=TOOL_LOG, reward=REWARD_DIR)


def _copy_tree(src: Path, dst: Path) -> None:
    """Hard-link files where the filesystem allows (tasks share one snapshot), else copy."""
    for f in sorted(src.rglob("*")):
        if f.is_dir() or "__pycache__" in f.parts:
            continue
        target = dst / f.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            continue
        try:
            os.link(f, target)
        except OSError:
            shutil.copy2(f, target)


def write_task(leg: Leg, out_dir: Path, *, snapshot_dir: Path | None = None, include_source: bool = True) -> Path:
    d = Path(out_dir) / task_id(leg)
    (d / "environment").mkdir(parents=True, exist_ok=True)
    (d / "solution").mkdir(exist_ok=True)
    (d / "tests").mkdir(exist_ok=True)
    (d / "instruction.md").write_text(instruction_md(leg), encoding="utf-8")
    (d / "task.toml").write_text(task_toml(leg), encoding="utf-8")
    (d / "environment" / "Dockerfile").write_text(DOCKERFILE, encoding="utf-8")
    if include_source:
        src = d / "environment" / "legwork"
        _copy_tree(PROJECT_ROOT / "pipeline", src / "pipeline")
        for name in ("pyproject.toml", "README.md"):
            if (PROJECT_ROOT / name).is_file():
                (src / name).parent.mkdir(parents=True, exist_ok=True)
                if not (src / name).exists():
                    shutil.copy2(PROJECT_ROOT / name, src / name)
    snap = d / "environment" / "snapshot"
    snap.mkdir(exist_ok=True)
    if snapshot_dir is not None and Path(snapshot_dir).is_dir():
        _copy_tree(Path(snapshot_dir), snap)
    for rel, text, mode in (("solution/solve.sh", solve_sh(leg), 0o755), ("tests/test.sh", TEST_SH, 0o755),
                            ("tests/verify.py", VERIFY_PY, 0o644)):
        (d / rel).write_text(text, encoding="utf-8")
        os.chmod(d / rel, mode)
    (d / "tests" / "leg.json").write_text(leg.to_json() + "\n", encoding="utf-8")
    return d


def export_harbor(legs: Iterable[Leg], out_dir: str | Path, *, snapshot_dir: str | Path | None = None,
                  include_source: bool = True) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if snapshot_dir is None:
        snapshot_dir = load_settings().snapshot_dir
    paths, seen = [], set()
    for leg in legs:
        tid = task_id(leg)
        if tid in seen:
            raise ValueError(f"two legs export to the same Harbor task id {tid!r}")
        seen.add(tid)
        paths.append(write_task(leg, out, snapshot_dir=Path(snapshot_dir), include_source=include_source))
    return paths
