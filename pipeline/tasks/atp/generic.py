"""Does one generic tactic close a theorem? The measure behind "ATP is one tactic" (issue 12).

For every Coq theorem, coqc tries a fixed list of generic one-line proofs (``GENERIC_TACTICS``; plus
induction, destruct and inversion lines over each variable the statement quantifies, closed by each
of ``FINISHERS``): one coqc run per theorem, each attempt a ``Goal`` of its own under ``timeout``,
the goals left after it written with ``Redirect`` so every attempt is read back independently. A
theorem counts as closed by a generic tactic when any attempt leaves no goal. Results are cached per
(theorem text, attempt, time limit) in a JSON file, so a re-run only checks what changed.

This is a measurement, not part of the task rows: a time limit makes it depend on the machine, and
rows must stay byte-identical for a seed.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pipeline.tasks.atp.rendering import Theorem
from pipeline.tasks.atp.verify import coqc_available

# one-liners that name nothing of the theorem
GENERIC_TACTICS = (
    "tauto", "auto", "eauto", "trivial", "easy", "intuition", "firstorder", "reflexivity", "simpl; reflexivity",
    "vm_compute; reflexivity", "lia", "intros; lia", "nia", "intros; nia", "intros; simpl; lia", "ring",
    "intros; ring", "intros; simpl; ring", "congruence", "intros; congruence", "intros; auto with arith",
    "intros; eauto with arith", "intros; simpl; auto", "intros; subst; auto", "intros; discriminate",
    "now intros", "intuition lia", "intros; firstorder lia", "repeat constructor", "intros; repeat constructor; auto",
    "intros; inversion 1", "induction 1; auto", "intros; split; lia",
)
# what closes an induction or case split in the one-liners below
FINISHERS = ("auto", "lia", "nia", "congruence", "reflexivity", "ring", "firstorder", "auto with arith",
             "auto; lia", "intuition")
# one-liners over a variable ``{v}`` the statement quantifies (``induction 1``: the first hypothesis)
PER_VARIABLE = ("induction {v}; simpl; {f}", "intros; induction {v}; simpl; {f}", "intros; destruct {v}; simpl; {f}")
ON_HYPOTHESIS = ("induction 1; simpl; {f}", "intros; inversion 1; {f}")
ATTEMPT_TIMEOUT_S = 3
CACHE_VERSION = 1

_THEOREM = re.compile(r"(?s)^(.*?)\bTheorem\s+(\S+)\s*:\s*(.*)\.\s*\nProof\.\s*$")
_LEADING_FORALL = re.compile(r"^\s*forall\s+([^,]+),")


def coq_goal(statement: str) -> tuple[str, str]:
    """(header, proposition) of a rendered Coq statement ``header Theorem name : prop. Proof.``."""
    m = _THEOREM.match(statement)
    if not m:
        raise ValueError("not a rendered Coq statement")
    return m.group(1).rstrip(), m.group(3).strip()


def quantified_variables(prop: str) -> list[str]:
    """The variables of the proposition's leading ``forall`` (``forall (f : A) (l : B),`` too)."""
    m = _LEADING_FORALL.match(prop)
    if not m:
        return []
    binders = m.group(1)
    groups = re.findall(r"\(([^()]*)\)", binders) if binders.strip().startswith("(") else [binders]
    return [name for g in groups for name in g.partition(":")[0].split()]


def attempts_for(prop: str) -> list[str]:
    """Every generic one-liner tried on ``prop``, in a fixed order."""
    out = list(GENERIC_TACTICS)
    for v in quantified_variables(prop):
        out += [form.format(v=v, f=f) for form in PER_VARIABLE for f in FINISHERS]
    if "->" in prop:
        out += [form.format(f=f) for form in ON_HYPOTHESIS for f in FINISHERS]
    return list(dict.fromkeys(out))


def _script(header: str, prop: str, attempts: list[str], timeout_s: int) -> str:
    parts = ["Require Import Arith Lia.", header, ""]      # every attempt's tactics exist in every file
    for i, tactic in enumerate(attempts):
        parts += [f"Goal {prop}.", f"try (timeout {timeout_s} (solve [ {tactic} ])).",
                  f'Redirect "attempt_{i:03d}" Show.', "Abort.", ""]
    return "\n".join(parts)


def run_attempts(header: str, prop: str, attempts: list[str], timeout_s: int = ATTEMPT_TIMEOUT_S) -> dict[str, bool]:
    """Run every attempt in one coqc file; ``{tactic: closed the goal}``."""
    if not attempts:
        return {}
    with tempfile.TemporaryDirectory(prefix="legwork-generic-") as tmp:
        path = Path(tmp) / "Generic.v"
        path.write_text(_script(header, prop, attempts, timeout_s), encoding="utf-8")
        done = subprocess.run(["coqc", "-q", path.name], cwd=tmp, capture_output=True, text=True, check=False,
                              timeout=60 + len(attempts) * (timeout_s + 2), stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"coqc failed on the generic attempts: {(done.stderr + done.stdout).strip()[:400]}")
        out = {}
        for i, tactic in enumerate(attempts):
            shown = Path(tmp) / f"attempt_{i:03d}.out"
            out[tactic] = shown.exists() and shown.read_text(encoding="utf-8").strip().startswith("No more goals")
    return out


class AttemptCache:
    """Attempt results by sha256 of (version, header, proposition, tactic, time limit), in one JSON file."""

    def __init__(self, path: Path | None):
        self.path = Path(path) if path else None
        self.lock = threading.Lock()
        self.data: dict[str, bool] = {}
        if self.path and self.path.exists():
            try:
                self.data = json.loads(self.path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                self.data = {}

    @staticmethod
    def key(header: str, prop: str, tactic: str, timeout_s: int) -> str:
        text = json.dumps([CACHE_VERSION, header, prop, tactic, timeout_s], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def save(self) -> None:
        if not self.path:
            return
        with self.lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.data, sort_keys=True), encoding="utf-8")
            tmp.replace(self.path)


def generic_closers(statements: dict[str, str], cache_path: Path | None = None,
                    timeout_s: int = ATTEMPT_TIMEOUT_S, workers: int = 2) -> dict[str, list[str]]:
    """``{theorem name: the generic one-liners that close it}`` for ``{theorem name: rendered Coq
    statement}`` (an empty list: none does)."""
    if not coqc_available():
        raise RuntimeError("coqc not installed (Debian package coq)")
    cache = AttemptCache(cache_path)

    def one(item: tuple[str, str]) -> tuple[str, list[str]]:
        name, statement = item
        header, prop = coq_goal(statement)
        attempts = attempts_for(prop)
        keys = {t: cache.key(header, prop, t, timeout_s) for t in attempts}
        with cache.lock:
            missing = [t for t in attempts if keys[t] not in cache.data]
        if missing:
            results = run_attempts(header, prop, missing, timeout_s)
            with cache.lock:
                cache.data.update({keys[t]: ok for t, ok in results.items()})
        with cache.lock:
            return name, [t for t in attempts if cache.data[keys[t]]]

    with ThreadPoolExecutor(workers) as pool:
        found = dict(pool.map(one, sorted(statements.items())))
    cache.save()
    return found


def coq_statements(theorems: list[Theorem]) -> dict[str, str]:
    """``{name: Coq statement}`` of theorems, the input of ``generic_closers``."""
    return {t.name: t.renderings["coq"].statement for t in theorems}


__all__ = [
    "ATTEMPT_TIMEOUT_S",
    "FINISHERS",
    "GENERIC_TACTICS",
    "attempts_for",
    "coq_goal",
    "coq_statements",
    "generic_closers",
    "quantified_variables",
    "run_attempts",
]
