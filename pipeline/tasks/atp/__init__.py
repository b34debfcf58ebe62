"""Automated theorem proving tasks: one abstract statement per theorem, rendered to Coq, Lean 4 and
Isabelle (one task row per language), each with a golden proof and a step-wise trace.

Topics (``families.py``): parity (case analysis on even/odd), divisibility (recurrences, strong
induction), primality, lists (accumulators, counting, lemmas about snoc), trees, inductive
predicates, functions (accumulators, closed forms, piecewise definitions). Every template is
parameterised and needs more than one generic tactic in Coq: a case analysis, a generalised
induction hypothesis or an auxiliary lemma proved inside the proof (``generic.py`` measures it).

Cells: the 7 topics x the 3 languages, 21 cells. ``--count N`` is the number of task rows, spread
evenly over the cells (default 120: 40 theorems in every language). The cells of one topic share
its theorems: theorem i of a topic is the i-th distinct statement of the topic's seeded stream
(distinct up to renaming bound variables, ``statements.statement_key``), so a cell with n tasks
renders the topic's first n theorems in its language. Primality is small (75 statements up to
renaming); its cells give the rest of their share to the others, and a count above what the topics
hold is refused before anything is checked.

``difficulty`` is the number of tactic sentences of the theorem's machine-checked Coq proof (the
same figure on the theorem's three rows; ``metadata.tactic_steps`` too, and ``metadata.level`` the
generator's 1-3 grade). Coq rows are verified with coqc (goals after every tactic recorded); Lean 4
and Isabelle rows get structural checks (``verify.structural_check``: tactics and names must be on
the prover's list), and the real prover when ``lake`` / ``isabelle`` is on PATH; without it they
stay ``verified: false`` and are left out of a published release unless ``--include-unverified``.
"""
from __future__ import annotations

import json
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pipeline.cache import canonical_json
from pipeline.tasks.atp.statements import LANGUAGES, MAX_DRAWS, TOPICS, Theorem, render, theorem_pool
from pipeline.tasks.atp.verify import (
    ProofCheck,
    check_proof,
    coq_tactic_sentences,
    coq_trace,
    structural_check,
    tactic_of,
    text_problem,
)
from pipeline.tasks.common import Failure, GoldenTrace, Report, fill_or_refuse, write_task_table

DEFAULT_COUNT = 120         # task rows: 40 theorems x 3 languages
# cell k is topic k % 7 in language (k // 7 + k % 7) % 3: a small count reaches every topic and language
CELLS = [(TOPICS[k % len(TOPICS)], LANGUAGES[(k // len(TOPICS) + k % len(TOPICS)) % len(LANGUAGES)])
         for k in range(len(TOPICS) * len(LANGUAGES))]
WORKERS = 2
OUTPUT_FILE = "atp.parquet"
LANGUAGE_NAMES = {"coq": "Coq", "lean4": "Lean 4", "isabelle": "Isabelle"}
FORMATS = {"coq": "coq-vernacular", "lean4": "minif2f-lean4", "isabelle": "minif2f-isabelle"}


def _prompt(language: str, statement: str, closing: str) -> str:
    end = f" and end it with `{closing.strip()}`" if closing.strip() else ""
    return (f"Prove the following theorem in {LANGUAGE_NAMES[language]}. Keep the text below unchanged, "
            f"write the proof after it{end}. Proofs that admit goals or add axioms are rejected.\n\n{statement}\n")


def _row_for(thm: Theorem, language: str, seed: int) -> tuple[dict | None, Failure | None]:
    """One language's task row of a theorem, or the failure of its check."""
    r = thm.renderings[language]
    task_id = f"atp-s{seed}-{thm.name}-{language}"
    if language == "coq":
        # the step-wise run compiles exactly the golden file (plus ``Show`` commands) and prints its
        # assumptions: with the text checks it is the whole check, one coqc run (validate runs another)
        check, plan = coq_trace(r.statement, r.steps, r.closing, thm.name)
        problem = text_problem(language, r.statement, r.full_text)
        if problem:
            check = ProofCheck(False, False, problem)
    else:
        plan = [{"step": 0, "tactic": None, "goals": None}] + [
            {"step": i, "tactic": tactic_of(s), "goals": None} for i, s in enumerate(r.steps, 1)]
        check = check_proof(language, r.statement, r.full_text, thm.name)
        if check.ok and not check.verified:
            check = ProofCheck(True, False, f"{check.detail}; goals not recorded (no prover)")
    if not check.ok:
        return None, Failure(task_id, check.detail)
    labels = ["atp", language, thm.topic, thm.abstract.get("kind", thm.topic)]
    steps = coq_tactic_sentences(thm.renderings["coq"].steps)
    return {
        "task_id": task_id, "family": "atp", "domain": language, "topic": thm.topic,
        "difficulty": steps, "seed": seed, "prompt": _prompt(language, r.statement, r.closing),
        "answer_json": canonical_json({"language": language, "proof": r.full_text}),
        "trace_json": GoldenTrace(plan=plan, steps=[], final_answer=r.full_text).to_json(),
        "metadata_json": canonical_json({
            "theorem": thm.name, "informal": thm.informal, "abstract": thm.abstract,
            "format": FORMATS[language], "statement": r.statement, "closing": r.closing,
            "labels": labels, "verified": check.verified, "verification": check.detail,
            "tactic_steps": steps, "level": thm.difficulty,
        }),
    }, None


def _summary(title: str, rows: list[dict], checks: dict[str, ProofCheck], seconds: float,
             failures: list[Failure]) -> Report:
    per_lang: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in rows:
        c = checks[row["task_id"]]
        per_lang[row["domain"]][0 if c.verified else 1 if c.ok else 2] += 1
    for f in failures:
        lang = f.task_id.rsplit("-", 1)[-1]
        if not any(f.task_id == r["task_id"] for r in rows):
            per_lang[lang][2] += 1
    table = [[lang, sum(v), v[0], v[1], v[2]] for lang, v in sorted(per_lang.items())]
    table.append(["all", sum(sum(v) for v in per_lang.values()), *[sum(v[i] for v in per_lang.values()) for i in range(3)]])
    return Report(title=f"{title} ({seconds:.1f} s)",
                  columns=["language", "tasks", "prover-verified", "structural only", "failed"],
                  rows=table, failures=failures)


def build(count: int | None, seed: int, out_dir: Path, toolbox=None) -> Report:
    """Check and write ``count`` task rows (default ``DEFAULT_COUNT``) to ``out_dir/atp.parquet``."""
    start = time.perf_counter()
    count = count or DEFAULT_COUNT
    theorems: dict[tuple[str, int], Theorem] = {}
    failures: list[Failure] = []

    def check(batch):
        jobs = []
        for (topic, language), index, draw in batch:
            if (topic, index) not in theorems:
                theorems[(topic, index)] = render(topic, draw, f"{topic}_{index:03d}")
            jobs.append((theorems[(topic, index)], language))
        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(lambda job: _row_for(job[0], job[1], seed), jobs))
        failures.extend(f for _, f in results if f is not None)
        return [((TOPICS.index(thm.topic), thm.name, LANGUAGES.index(lang)), row) if row else None
                for (thm, lang), (row, _) in zip(jobs, results)]

    made = fill_or_refuse("atp", count, CELLS, theorem_pool(seed, source_of=lambda cell: cell[0]), check,
                          f"theorems distinct up to renaming among the first {MAX_DRAWS} draws of each of its "
                          f"{len(TOPICS)} topics, in {len(LANGUAGES)} languages")
    rows = [row for _, row in sorted((r for rs in made.values() for r in rs), key=lambda r: r[0])]
    write_task_table(rows, Path(out_dir) / OUTPUT_FILE)
    checks = {r["task_id"]: ProofCheck(True, json.loads(r["metadata_json"])["verified"], "") for r in rows}
    n_theorems = len({json.loads(r["metadata_json"])["theorem"] for r in rows})
    return _summary(f"atp: built {len(rows)} tasks from {n_theorems} theorems", rows, checks,
                    time.perf_counter() - start, failures)


def verify_row(row: dict) -> ProofCheck:
    """Re-check one stored task: trace and answer agree, then the proof is checked again."""
    meta = json.loads(row["metadata_json"])
    answer = json.loads(row["answer_json"])
    trace = GoldenTrace.from_json(row["trace_json"])
    language, proof = row["domain"], answer["proof"]
    steps = [p["tactic"] for p in trace.plan if p["tactic"] is not None]
    rebuilt = f"{meta['statement']}\n" + "\n".join(f"  {s}" for s in steps) + f"\n{meta['closing']}\n"
    if rebuilt != proof or trace.final_answer != proof:
        return ProofCheck(False, False, "the golden trace does not reproduce the golden proof")
    if meta["statement"] not in row["prompt"]:
        return ProofCheck(False, False, "the prompt does not show the statement")
    if language == "coq" and meta["verified"]:
        if any(p["goals"] is None for p in trace.plan):
            return ProofCheck(False, False, "a Coq trace step has no recorded goals")
        if trace.plan[-1]["goals"] != "No more goals.":
            return ProofCheck(False, False, "the Coq trace does not end with no goals")
    return check_proof(language, meta["statement"], proof, meta["theorem"])


def validate(rows: list[dict], toolbox=None) -> Report:
    start = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as pool:
        checks = dict(zip([r["task_id"] for r in rows], pool.map(verify_row, rows)))
    failures = [Failure(tid, c.detail) for tid, c in sorted(checks.items()) if not c.ok]
    return _summary(f"atp: validated {len(rows)} tasks", rows, checks, time.perf_counter() - start, failures)


__all__ = ["DEFAULT_COUNT", "build", "structural_check", "validate", "verify_row"]
