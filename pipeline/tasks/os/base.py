"""What every OS task generator shares: the task record, the AgentBench dict, names and file helpers."""
from __future__ import annotations

import random
import shlex
from dataclasses import dataclass, field

from pipeline.tasks.os.measure import Measure, level, measure

WORDS = ["alpha", "birch", "cedar", "delta", "ember", "fjord", "glade", "harbor", "indigo", "juniper",
         "kestrel", "lumen", "maple", "nectar", "onyx", "pylon", "quartz", "raven", "sierra", "tundra",
         "umber", "vertex", "willow", "xenon", "yarrow", "zephyr"]
EXTS = ["log", "txt", "csv", "json", "md", "conf"]
EOF_MARK = "LEGWORK_EOF"


@dataclass
class OsTask:
    """One generated task.

    ``expected``: answer tasks, the answer computed here in Python from the parameters (the sandbox
    run of the golden solution must print it). ``wrong``: a plausible wrong solution (a script an
    agent could well write: an off-by-one, a missed header, hidden files forgotten...) that must
    fail: for answer tasks it must print ``wrong_expected`` (computed here too, and different from
    ``expected``); for check tasks the check must fail after it."""
    kind: str
    domain: str
    task: dict                        # the AgentBench JSON object
    expected: str | None = None
    params: dict = field(default_factory=dict)
    wrong: str | None = None
    wrong_expected: str | None = None

    @property
    def measure(self) -> Measure:
        return measure(self.task["evaluation"]["example"]["code"])

    @property
    def difficulty(self) -> int:
        """The level (1-5) of the golden solution's command count (``measure.level``)."""
        return level(self.measure.commands)


def agentbench(description: str, init: str, labels: list[str], example: str, *, match: str | None = None,
               check: str | None = None, start: str | None = None) -> dict:
    task: dict = {"description": description, "create": {"local": "default", "init": {"code": init}}}
    if start:
        task["start"] = start
    evaluation: dict = {"match": match} if match is not None else {"check": {"code": check}}
    evaluation["example"] = {"code": example}
    task["evaluation"] = evaluation
    task["labels"] = labels
    return task


def name(rng: random.Random, taken: set[str] | None = None) -> str:
    while True:
        n = f"{rng.choice(WORDS)}{rng.randint(10, 99)}"
        if taken is None or n not in taken:
            if taken is not None:
                taken.add(n)
            return n


def write_file(path: str, lines: list[str], mode: str | None = None) -> str:
    """Bash that writes ``lines`` to ``path`` (a quoted here-document: no expansion)."""
    body = "\n".join(lines)
    if EOF_MARK in body:
        raise ValueError("file body holds the here-document delimiter")
    out = f"cat > {shlex.quote(path)} <<'{EOF_MARK}'\n{body}\n{EOF_MARK}"
    if mode:
        out += f"\nchmod {mode} {shlex.quote(path)}"
    return out


def mkdirs(paths: list[str]) -> str:
    dirs = sorted({p.rsplit("/", 1)[0] for p in paths})
    return f"mkdir -p {' '.join(dirs)}"


def fill_bytes(path: str, size: int, char: str = "x") -> str:
    return f"head -c {size} /dev/zero | tr '\\0' '{char}' > {path}"


def pick(rng: random.Random, options: dict):
    """One (key, value) of a dict, in its insertion order (deterministic per rng)."""
    key = rng.choice(list(options))
    return key, options[key]
