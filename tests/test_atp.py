"""ATP task family: Coq verification (accepts golden proofs, rejects wrong ones, admits, axioms and
altered statements), the step-wise trace, structural checks and the external prover adapters."""
from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from in_process import run_module

from pipeline.tasks import atp
from pipeline.tasks.atp.statements import LANGUAGES, TOPICS, generate_theorems
from pipeline.tasks.atp.verify import check_coq, check_external, coq_trace, structural_check
from pipeline.tasks.common import read_task_rows

needs_coq = pytest.mark.skipif(shutil.which("coqc") is None, reason="coqc not installed (Debian package coq)")


@pytest.fixture(scope="module")
def theorems():
    return generate_theorems(len(TOPICS), seed=11)


def test_generation_is_deterministic_and_covers_every_topic(theorems):
    again = generate_theorems(len(TOPICS), seed=11)
    assert [t.renderings["coq"].full_text for t in theorems] == [t.renderings["coq"].full_text for t in again]
    assert sorted(t.topic for t in theorems) == sorted(TOPICS)
    for t in theorems:
        assert set(t.renderings) == set(LANGUAGES)
        assert f"theorem {t.name}" in t.renderings["lean4"].statement
        assert t.renderings["lean4"].statement.endswith(":= by")
        assert t.renderings["isabelle"].statement.startswith(f"theory {t.name}\n  imports ")


def test_statements_match_their_informal_facts():
    # the numbers in the statements are true facts, computed independently here
    for t in generate_theorems(60, seed=5):
        a = t.abstract
        if a["kind"] == "prime":
            assert all(a["n"] % d for d in range(2, a["n"]))
        elif a["kind"] == "composite":
            assert a["n"] % a["factor"] == 0 and 1 < a["factor"] < a["n"]
        elif a["kind"] == "recurrence":
            assert a["c"] % a["d"] == 0 == a["b"] % a["d"]
        elif a["kind"] == "coins":
            assert a["t"] >= (a["a"] - 1) * (a["b"] - 1)
        assert str(a.get("n", "")) in t.informal


@needs_coq
@pytest.mark.coq
def test_coq_accepts_every_golden_proof(theorems):
    for t in theorems:
        r = t.renderings["coq"]
        result = check_coq(r.statement, r.full_text, t.name)
        assert result.ok and result.verified, (t.name, result.detail)


@needs_coq
@pytest.mark.coq
def test_coq_rejects_a_wrong_proof_an_admit_and_an_altered_statement():
    statement = "Require Import Arith.\n\nTheorem even_42 : Nat.Even 42.\nProof."
    good = statement + "\n  exists 21.\n  reflexivity.\nQed.\n"
    assert check_coq(statement, good, "even_42").verified
    wrong = check_coq(statement, statement + "\n  exists 20.\n  reflexivity.\nQed.\n", "even_42")
    assert not wrong.ok and "coqc rejected" in wrong.detail
    admitted = check_coq(statement, statement + "\nAdmitted.\n", "even_42")
    assert not admitted.ok and "Admitted" in admitted.detail
    admit = check_coq(statement, statement + "\n  admit.\nQed.\n", "even_42")
    assert not admit.ok
    altered_text = good.replace("Nat.Even 42", "Nat.Even 40").replace("exists 21", "exists 20")
    altered = check_coq(statement, altered_text, "even_42")
    assert not altered.ok and "statement" in altered.detail


@needs_coq
@pytest.mark.coq
def test_coq_rejects_a_proof_resting_on_an_axiom():
    statement = "Require Import Classical.\n\nTheorem excluded : forall P : Prop, P \\/ ~ P.\nProof."
    result = check_coq(statement, statement + "\n  intros P. apply classic.\nQed.\n", "excluded")
    assert not result.ok and "axioms" in result.detail and "classic" in result.detail


@needs_coq
@pytest.mark.coq
def test_coq_trace_records_the_goals_after_each_tactic():
    statement = "Require Import List.\nImport ListNotations.\n\nTheorem app_nil : forall l : list nat, l ++ [] = l.\nProof."
    steps = ["  intros l.", "  induction l as [| x xs IH].", "  - reflexivity.", "  - simpl. rewrite IH. reflexivity."]
    check, trace = coq_trace(statement, steps, "Qed.", "app_nil")
    assert check.ok and check.verified
    assert [s["tactic"] for s in trace] == [None, "intros l.", "induction l as [| x xs IH].", "- reflexivity.",
                                           "- simpl. rewrite IH. reflexivity."]
    assert "forall l : list nat, l ++ [] = l" in trace[0]["goals"]
    assert "l : list nat" in trace[1]["goals"] and "l ++ [] = l" in trace[1]["goals"]
    assert trace[2]["goals"].startswith("2 goals")
    assert trace[-1]["goals"] == "No more goals."


def test_structural_checker_accepts_golden_lean_and_isabelle_and_rejects_cheats(theorems):
    for t in theorems:
        for lang in ("lean4", "isabelle"):
            r = t.renderings[lang]
            result = structural_check(lang, r.statement, r.full_text, t.name)
            assert result.ok and not result.verified, (t.name, lang, result.detail)
    lean = theorems[0].renderings["lean4"]
    assert "sorry" in structural_check("lean4", lean.statement, lean.statement + "\n  sorry\n", theorems[0].name).detail
    assert not structural_check("lean4", lean.statement, lean.statement + "\n  exact (foo\n", theorems[0].name).ok
    assert not structural_check("lean4", lean.statement, lean.full_text.replace("theorem ", "lemma "), theorems[0].name).ok
    isa = theorems[0].renderings["isabelle"]
    assert "oops" in structural_check("isabelle", isa.statement, isa.statement + "\n  oops\nend\n", theorems[0].name).detail
    assert not structural_check("isabelle", isa.statement, isa.statement + "\n  by simp\n", theorems[0].name).ok  # no `end`
    # a comment mentioning sorry is harmless
    assert structural_check("lean4", lean.statement, lean.full_text + "-- no sorry here\n", theorems[0].name).ok


def _stand_in(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_external_adapters_run_lake_and_isabelle_when_present(tmp_path, monkeypatch, theorems):
    log = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # stand-ins: record the command line, check the file they were given, accept unless it says `bad_marker`
    _stand_in(bin_dir, "lake", f'echo "lake $*" >> {log}\n[ "$1 $2 $3" = "env lean $4" ] || true\n'
                               'grep -q "#print axioms" "$3" || exit 3\ngrep -q bad_marker "$3" && exit 1\nexit 0\n')
    _stand_in(bin_dir, "isabelle", f'echo "isabelle $*" >> {log}\n[ "$1 $2" = "build -D" ] || exit 2\n'
                                   '[ -f "$3/ROOT" ] || exit 4\ngrep -q bad_marker "$3"/*.thy && exit 1\nexit 0\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    t = theorems[0]
    lean, isa = t.renderings["lean4"], t.renderings["isabelle"]
    ok_lean = check_external("lean4", lean.statement, lean.full_text, t.name)
    ok_isa = check_external("isabelle", isa.statement, isa.full_text, t.name)
    assert ok_lean.verified and ok_isa.verified, (ok_lean, ok_isa)
    calls = log.read_text().splitlines()
    assert calls[0].startswith("lake env lean ") and calls[0].endswith(f"{t.name}.lean")
    assert calls[1].startswith("isabelle build -D ")
    bad = check_external("lean4", lean.statement, lean.full_text + "-- bad_marker\n", t.name)
    assert not bad.ok and "rejected" in bad.detail
    bad_isa = check_external("isabelle", isa.statement, isa.full_text.replace("end", "(* bad_marker *)\nend"), t.name)
    assert not bad_isa.ok


def test_without_toolchain_lean_and_isabelle_are_marked_unverified(monkeypatch, theorems, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    t = theorems[1]
    r = t.renderings["lean4"]
    result = check_external("lean4", r.statement, r.full_text, t.name)
    assert result.ok and not result.verified and "no Lean 4 toolchain" in result.detail


@needs_coq
@pytest.mark.coq
def test_build_is_byte_identical_and_validate_catches_tampering(tmp_path):
    atp.build(6, 3, tmp_path / "a")        # 6 task rows: the first 6 topic x language cells
    atp.build(6, 3, tmp_path / "b")
    a, b = (tmp_path / d / atp.OUTPUT_FILE for d in ("a", "b"))
    assert a.read_bytes() == b.read_bytes()
    rows = read_task_rows(tmp_path / "a")
    assert len(rows) == 6 and {r["domain"] for r in rows} == set(LANGUAGES)
    report = atp.validate(rows)
    assert report.failures == []
    coq_rows = [r for r in rows if r["domain"] == "coq"]
    assert all(json.loads(r["metadata_json"])["verified"] for r in coq_rows)
    assert not any(json.loads(r["metadata_json"])["verified"] for r in rows if r["domain"] != "coq")
    # tamper: weaken the proof of one Coq row consistently in answer and trace -> coqc must reject it
    row = dict(coq_rows[0])
    answer = json.loads(row["answer_json"])
    answer["proof"] = json.loads(row["metadata_json"])["statement"] + "\nAdmitted.\n"
    row["answer_json"] = json.dumps(answer)
    assert atp.verify_row(row).ok is False
    table = pq.read_table(a)
    assert table.num_rows == 6


# ---- distinct statements, difficulty, tactic lists, release gate ------------------------------
def test_statements_are_distinct_up_to_renaming_bound_variables():
    from pipeline.tasks.atp.statements import statement_key, theorem_pool

    a = "Theorem a : forall P Q : Prop, ~ (Q \\/ P) -> ~ Q /\\ ~ P.\nProof."
    b = "Theorem b : forall R   T : Prop, ~ (R \\/ T) -> ~ R /\\ ~ T.\nProof."
    assert statement_key(a, "coq", "a") == statement_key(b, "coq", "b")
    assert statement_key(a, "coq", "a") != statement_key(b.replace("~ R /\\ ~ T", "~ T /\\ ~ R"), "coq", "b")
    lean = "theorem x (P Q : Prop) :\n    ¬ (P ∨ Q) → ¬ P ∧ ¬ Q := by"
    renamed = lean.replace("(P Q", "(U W").replace("(P ∨ Q)", "(W ∨ U)").replace("¬ P ∧ ¬ Q", "¬ W ∧ ¬ U")
    assert statement_key(lean, "lean4", "x") == statement_key(renamed, "lean4", "x")
    # renaming is scoped to a command: the theorem's bound l and a definition's parameter l are apart
    header = "Fixpoint wsum (l : list nat) : nat :=\n  match l with\n  | [] => 0\n  | x :: t => x + wsum t\n  end.\n\n"
    one = header + "Theorem c : forall l : list nat, wsum (rev l) = wsum l.\nProof."
    two = header + "Theorem c : forall m : list nat, wsum (rev m) = wsum m.\nProof."
    other = header + "Theorem c : forall m : list nat, wsum (rev m) = wsum m + 0.\nProof."
    assert statement_key(one, "coq", "c") == statement_key(two, "coq", "c") != statement_key(other, "coq", "c")
    # a topic's stream is distinct up to renaming
    pool = theorem_pool(seed=4)
    n = pool.ensure("inductive", 60)
    keys = [statement_key(render_topic(pool, "inductive", i).renderings["coq"].statement, "coq", "same") for i in range(n)]
    assert n == 60 and len(set(keys)) == n


def render_topic(pool, topic, i):
    from pipeline.tasks.atp.statements import render
    return render(topic, pool.get(topic, i), "same")


def test_difficulty_counts_the_tactic_sentences_of_the_coq_proof():
    from pipeline.tasks.atp.verify import coq_tactic_sentences

    assert coq_tactic_sentences(["  intros l.", "  induction l as [| x xs IH].", "  - reflexivity.",
                                 "  - simpl. rewrite IH. reflexivity."]) == 6
    assert coq_tactic_sentences(["  repeat destruct Hc as [-> | Hc]; try reflexivity.",
                                 "  apply (Nat.max_comm 1 2)."]) == 2


def test_structural_check_rejects_tactics_and_names_the_prover_does_not_have(theorems):
    for t in generate_theorems(140, seed=2):           # every generated proof uses listed words only
        for lang in ("lean4", "isabelle"):
            r = t.renderings[lang]
            assert structural_check(lang, r.statement, r.full_text, t.name).ok, (t.name, lang)
    t = theorems[0]
    lean, isa = t.renderings["lean4"], t.renderings["isabelle"]
    bad_lean = structural_check("lean4", lean.statement, lean.statement + "\n  exact rfl_nonsense 42\n", t.name)
    assert not bad_lean.ok and "rfl_nonsense" in bad_lean.detail
    bad_isa = structural_check("isabelle", isa.statement, isa.statement + "\n  by simp_nonsense\n\nend\n", t.name)
    assert not bad_isa.ok and "simp_nonsense" in bad_isa.detail
    # names the proof binds itself are fine; a tactic it misspells is not
    assert structural_check("lean4", lean.statement, lean.statement + "\n  intro h\n  exact h\n", t.name).ok
    assert not structural_check("lean4", lean.statement, lean.statement + "\n  norm_numm\n", t.name).ok


@needs_coq
@pytest.mark.coq
def test_publish_leaves_unverified_atp_rows_out_unless_asked(tmp_path):

    from pipeline.config import PROJECT_ROOT

    atp.build(7, 1, tmp_path / "atp")
    rows = read_task_rows(tmp_path / "atp")
    verified = [r for r in rows if json.loads(r["metadata_json"])["verified"]]
    assert 0 < len(verified) < len(rows) == 7
    assert all(r["difficulty"] == json.loads(r["metadata_json"])["tactic_steps"] > 0 for r in rows)

    def publish(out, *extra):
        done = run_module("pipeline.publish", "--repo-id", "legwork/atp-test", "--dry-run", "--out", str(out),
                          "--tasks", str(tmp_path / "atp"), *extra, cwd=PROJECT_ROOT)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout, pq.read_table(next((out / "atp").glob("*.parquet"))).to_pylist()

    said, published = publish(tmp_path / "release")
    assert sorted(r["task_id"] for r in published) == sorted(r["task_id"] for r in verified)
    assert f"left out {len(rows) - len(verified)} unverified rows" in said
    # the same rows validated once above (coqc on every row): what --include-unverified keeps needs no second pass
    _, everything = publish(tmp_path / "release-all", "--include-unverified", "--skip-validate")
    assert len(everything) == len(rows)
