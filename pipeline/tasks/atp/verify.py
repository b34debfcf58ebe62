"""Proof checking for the three provers.

Coq is checked for real with ``coqc`` (Debian ``coq``). A candidate file must begin with the exact
rendered statement (so the theorem cannot be weakened), must not use ``Admitted``/``admit`` or
declare axioms, must compile, and ``Print Assumptions`` must report the theorem closed under the
global context.

Lean 4 and Isabelle have no toolchain on these machines: a structural checker (balanced
delimiters, required keywords, no ``sorry``/``oops``, statement kept, and every word of the proof
a tactic, keyword or lemma name on the prover's list below or a name bound in the statement or by
the proof itself) runs always, and an adapter runs ``lake env lean FILE`` / ``isabelle build -D
DIR`` when those commands are on PATH. Without the prover such rows stay ``verified: false``.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

COQ_TIMEOUT_S = 60
EXTERNAL_TIMEOUT_S = 600

_FORBIDDEN = {
    "coq": re.compile(r"\b(Admitted|admit|give_up|Axiom|Axioms|Parameter|Parameters|Hypothesis|Hypotheses|"
                      r"Variable|Variables|Conjecture|Abort|Reset|Back|Undo|Unset\s+Guard\s+Checking)\b"),
    "lean4": re.compile(r"\b(sorry|admit|axiom|unsafe|implemented_by|extern)\b"),
    "isabelle": re.compile(r"\b(sorry|oops|axiomatization|quick_and_dirty|skip_proof)\b"),
}
_COMMENTS = {"coq": ("(*", "*)"), "lean4": ("/-", "-/"), "isabelle": ("(*", "*)")}
_BRACKETS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩"}


@dataclass(frozen=True)
class ProofCheck:
    ok: bool          # no defect found (False: the proof is rejected)
    verified: bool    # a prover accepted it (False with ok: only the structural checks ran)
    detail: str


def strip_comments(text: str, language: str) -> str:
    """Remove (nested) block comments, and Lean line comments, keeping string literals intact."""
    open_, close = _COMMENTS[language]
    out, depth, i, in_string = [], 0, 0, False
    while i < len(text):
        if depth == 0 and text[i] == '"':
            in_string = not in_string
        if not in_string and text.startswith(open_, i):
            depth, i = depth + 1, i + len(open_)
            continue
        if depth and text.startswith(close, i):
            depth, i = depth - 1, i + len(close)
            continue
        if depth == 0:
            out.append(text[i])
        i += 1
    result = "".join(out)
    if language == "lean4":
        result = re.sub(r"--[^\n]*", "", result)
    return result


def _balanced(text: str) -> str | None:
    """None if brackets and double quotes balance, else what is wrong."""
    stack: list[tuple[str, int]] = []
    in_string = False
    for pos, ch in enumerate(text):
        if ch == '"':
            in_string = not in_string
            continue
        if in_string:
            continue
        if ch in _BRACKETS:
            stack.append((ch, pos))
        elif ch in _BRACKETS.values():
            if not stack or _BRACKETS[stack[-1][0]] != ch:
                return f"unmatched {ch!r} at offset {pos}"
            stack.pop()
    if in_string:
        return "unterminated string"
    if stack:
        return f"unclosed {stack[-1][0]!r} at offset {stack[-1][1]}"
    return None


def text_problem(language: str, statement: str, candidate: str) -> str | None:
    """What is wrong with a candidate before any prover runs (statement altered, a forbidden keyword,
    no proof), or None."""
    return _common_checks(language, statement, candidate)


def _common_checks(language: str, statement: str, candidate: str) -> str | None:
    """Statement kept verbatim at the start, no forbidden keyword in the proof part."""
    if not candidate.startswith(statement):
        return "the file does not begin with the rendered statement (statement altered or missing)"
    proof_part = strip_comments(candidate[len(statement):], language)
    hit = _FORBIDDEN[language].search(proof_part)
    if hit:
        return f"forbidden keyword {hit.group(0)!r} in the proof"
    if not proof_part.strip():
        return "empty proof"
    return None


# ---------------------------------------------------------------- Coq

def coqc_available() -> bool:
    return shutil.which("coqc") is not None


def _run_coqc(text: str, workdir: Path, timeout_s: float) -> subprocess.CompletedProcess:
    path = workdir / "Candidate.v"
    path.write_text(text, encoding="utf-8")
    return subprocess.run(["coqc", "-q", path.name], cwd=workdir, check=False, capture_output=True, text=True,
                          timeout=timeout_s, stdin=subprocess.DEVNULL)


def check_coq(statement: str, candidate: str, theorem: str, timeout_s: float = COQ_TIMEOUT_S) -> ProofCheck:
    """Compile ``candidate`` with coqc; reject admits, axioms and altered statements."""
    problem = _common_checks("coq", statement, candidate)
    if problem:
        return ProofCheck(False, False, problem)
    if not coqc_available():
        return ProofCheck(True, False, "coqc not installed (Debian package coq); structural checks only")
    with tempfile.TemporaryDirectory(prefix="legwork-coq-") as tmp:
        try:
            done = _run_coqc(f"{candidate}\nPrint Assumptions {theorem}.\n", Path(tmp), timeout_s)
        except subprocess.TimeoutExpired:
            return ProofCheck(False, False, f"coqc timed out after {timeout_s:.0f} s")
    if done.returncode != 0:
        return ProofCheck(False, False, "coqc rejected the proof: " + _first_error(done.stderr + done.stdout))
    if "Closed under the global context" not in done.stdout:
        return ProofCheck(False, False, "the proof depends on axioms: " + done.stdout.strip()[-300:])
    return ProofCheck(True, True, "coqc accepted; Print Assumptions: closed under the global context")


def _first_error(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return " ".join(lines[:6])[:400] or "no output"


def coq_tactic_sentences(steps: list[str]) -> int:
    """Tactic sentences of a Coq proof: bullets (``-``, ``+``, ``*``) are not tactics; a sentence ends
    with a period followed by a blank (``Nat.max`` is a name, not two sentences); ``t1; t2`` is one."""
    total = 0
    for line in steps:
        body = re.sub(r"^\s*[-+*]+\s+", "", line)
        total += len([s for s in re.split(r"\.(?=\s|$)", body) if s.strip()])
    return total


def tactic_of(line: str) -> str:
    """A proof line without the two-space base indent (deeper indents, e.g. under a bullet, stay)."""
    return line.removeprefix("  ")


def coq_trace(statement: str, steps: list[str], closing: str, theorem: str,
              timeout_s: float = COQ_TIMEOUT_S) -> tuple[ProofCheck, list[dict]]:
    """Run the proof step by step (``Redirect ... Show.`` after each tactic line) and return the
    goals coqc printed: ``[{"step": 0, "tactic": None, "goals": <initial>}, {"step": 1, ...}]``."""
    if not coqc_available():
        return ProofCheck(True, False, "coqc not installed"), [{"step": 0, "tactic": None, "goals": None}] + [
            {"step": i, "tactic": tactic_of(s), "goals": None} for i, s in enumerate(steps, 1)]
    parts = [statement, 'Redirect "step_000" Show.']
    for i, step in enumerate(steps, 1):
        parts += [step, f'Redirect "step_{i:03d}" Show.']
    parts += [closing, f"Print Assumptions {theorem}.", ""]
    with tempfile.TemporaryDirectory(prefix="legwork-coqtrace-") as tmp:
        try:
            done = _run_coqc("\n".join(parts), Path(tmp), timeout_s)
        except subprocess.TimeoutExpired:
            return ProofCheck(False, False, f"coqc timed out after {timeout_s:.0f} s"), []
        trace = []
        for i in range(len(steps) + 1):
            out = Path(tmp) / f"step_{i:03d}.out"
            goals = out.read_text(encoding="utf-8").strip() if out.exists() else None
            trace.append({"step": i, "tactic": tactic_of(steps[i - 1]) if i else None, "goals": goals})
    if done.returncode != 0:
        return ProofCheck(False, False, "coqc rejected the traced proof: " + _first_error(done.stderr + done.stdout)), trace
    if "Closed under the global context" not in done.stdout:
        return ProofCheck(False, False, "the proof depends on axioms"), trace
    return ProofCheck(True, True, "coqc accepted the step-wise run; Print Assumptions: closed under the global "
                                  "context"), trace


# ---------------------------------------------------------------- Lean 4 and Isabelle

_REQUIRED = {
    "lean4": [r"\btheorem\s+{name}\b", r":=\s*by\b"],
    "isabelle": [r"\btheory\s+{name}\b", r"\bimports\b", r"\bbegin\b", r"\btheorem\s+{name}\s*:", r"\bend\s*$"],
}


def structural_check(language: str, statement: str, candidate: str, theorem: str) -> ProofCheck:
    """What can be checked without the prover: statement kept, keywords present, delimiters balanced."""
    problem = _common_checks(language, statement, candidate)
    if problem:
        return ProofCheck(False, False, problem)
    body = strip_comments(candidate, language)
    for pattern in _REQUIRED[language]:
        if not re.search(pattern.format(name=re.escape(theorem)), body.strip()):
            return ProofCheck(False, False, f"missing required syntax /{pattern.format(name=theorem)}/")
    scan = body if language == "lean4" else re.sub(r"\\<[^>]*>", " ", body)
    unbalanced = _balanced(scan)
    if unbalanced:
        return ProofCheck(False, False, f"unbalanced delimiters: {unbalanced}")
    unknown = unknown_words(language, statement, strip_comments(candidate[len(statement):], language))
    if unknown:
        prover = "Lean 4" if language == "lean4" else "Isabelle"
        return ProofCheck(False, False, f"unknown {prover} tactic or name {unknown[0]!r} (not on the checker's list, "
                                        "not bound in the statement or the proof)"
                                        + (f"; also {', '.join(map(repr, unknown[1:5]))}" if unknown[1:] else ""))
    return ProofCheck(True, False, "structural checks passed (statement kept, delimiters balanced, every tactic "
                                   "and name known)")


# ---- the words a proof may use (structural check) ----------------------------------------------
# Lean 4: the tactics the generated proofs use, then common Lean 4 / Mathlib tactics a hand-written
# proof of these statements may use; keywords; lemma and constructor names. A word on none of these
# lists and not bound in the statement or the proof (``intro h``, ``fun x =>``, ``| cons x xs ih =>``,
# ``obtain ⟨k, hk⟩ := ...``) is rejected: the prover would not know it.
LEAN_GENERATED_TACTICS = frozenset({"apply", "by_cases", "exact", "have", "induction", "interval_cases", "intro",
                                    "norm_num", "obtain", "omega", "rcases", "rfl", "ring", "rw", "simp", "simpa",
                                    "split_ifs", "subst", "unfold"})
LEAN_TACTICS = LEAN_GENERATED_TACTICS | frozenset({
    "abel", "aesop", "all_goals", "and_intros", "any_goals", "apply", "assumption", "by_cases", "by_contra",
    "calc", "cases'", "change", "clear", "congr", "constructor", "contradiction", "contrapose", "conv", "dsimp",
    "exacts", "exfalso", "ext", "field_simp", "first", "funext", "gcongr", "generalize", "have", "induction'",
    "infer_instance", "interval_cases", "intros", "left", "linarith", "nlinarith", "norm_cast", "exact_mod_cast",
    "obtain", "positivity", "push_cast", "push_neg", "rcases", "refine", "rename_i", "repeat", "revert", "right",
    "rintro", "ring_nf", "rwa", "show", "simp_arith", "simpa", "specialize", "split", "subst", "symm", "tauto",
    "trivial", "try", "unfold", "use", "next", "case", "exists", "nofun", "nomatch", "exact?", "let", "set",
    "cases", "decide", "simp_all", "split_ands", "zify", "rel", "bound", "ring1",
})
LEAN_KEYWORDS = frozenset({"by", "with", "fun", "at", "only", "using", "this", "from", "then", "else", "if", "do",
                           "in", "match", "generalizing", "says", "λ", "_"})
LEAN_NAMES = frozenset({
    "Or.inl", "Or.inr", "Or.elim", "And.intro", "And.left", "And.right", "Iff.intro", "absurd", "id", "trivial",
    "List.length_append", "List.length_map", "List.length_reverse", "List.reverse_reverse", "List.map_append",
    "List.append_assoc", "List.append_nil", "List.reverse_append", "Nat.max_comm", "Nat.add_comm", "Nat.mul_comm",
    "Nat.add_assoc", "Nat.mul_assoc", "Nat.add_mul", "Nat.mul_add", "Nat.succ_le_of_lt", "Nat.lt_irrefl",
    "Nat.le_refl", "Nat.Prime", "Dvd.intro", "max_comm", "add_comm", "mul_comm", "add_assoc", "mul_assoc",
    "nil", "cons", "leaf", "node", "inl", "inr", "zero", "succ", "intro", "true", "false", "True", "False",
    "Nat.even_or_odd", "Nat.even_or_odd'", "Nat.strong_induction_on", "Nat.le_induction", "Nat.succ_le_iff",
    "Nat.lt_or_ge", "Nat.even_add_one", "Nat.even_mul", "Nat.odd_iff", "Nat.even_iff", "Nat.pow_succ",
    "Nat.dvd_add", "Nat.dvd_mul_right", "Nat.dvd_mul_left", "Nat.le_antisymm", "Nat.lt_of_lt_of_le",
    "List.foldl", "List.foldr", "List.filter", "List.map", "List.length", "List.reverse", "List.length_cons",
    "List.filter_cons", "List.foldl_cons", "List.map_cons", "List.length_filter_le", "pow_succ", "pow_zero",
    "mul_one", "one_mul", "add_zero", "zero_add", "mul_add", "add_mul", "two_mul", "Even", "Odd", "dvd_add",
    "dvd_mul_right", "dvd_mul_left", "if_pos", "if_neg", "ite_true", "ite_false", "le_refl", "Nat.le_of_lt_succ",
})
# Isabelle: proof methods (the generated ones first), Isar keywords and method modifiers, lemma names.
ISABELLE_GENERATED_METHODS = frozenset({"auto", "blast", "cases", "eval", "induct", "intro", "presburger", "rule",
                                        "simp"})
ISABELLE_METHODS = ISABELLE_GENERATED_METHODS | frozenset({
    "algebra", "argo", "arith", "assumption", "cases", "clarsimp", "drule", "elim", "erule", "fact", "fastforce",
    "force", "frule", "induction", "intro", "linarith", "metis", "rule_tac", "simp_all", "standard", "subst",
    "unfold", "fastsimp", "iprover", "meson", "smt", "sos", "case_tac", "induct_tac", "insert", "safe",
})
ISABELLE_KEYWORDS = frozenset({
    "by", "apply", "done", "end", "using", "unfolding", "proof", "qed", "show", "have", "from", "then", "thus",
    "hence", "obtain", "where", "and", "fix", "assume", "next", "with", "also", "finally", "moreover",
    "ultimately", "case", "for", "is", "of", "OF", "THEN", "add", "del", "only", "split", "arbitrary", "simps",
    "dest", "iff", "cong", "thesis", "note", "let", "define", "that", "this", "taking", "consider", "_",
})
ISABELLE_NAMES = frozenset({
    "dvdI", "dvdE", "dvd_def", "algebra_simps", "field_simps", "ac_simps", "mult.commute", "add.commute",
    "add.assoc", "mult.assoc", "prime_def", "prime_nat_iff", "even_iff_two_dvd", "odd_iff", "list.induct",
    "length_append", "rev_rev_ident", "map_append", "append_assoc", "conjI", "conjE", "disjI1", "disjI2", "disjE",
    "impI", "notI", "notE", "allI", "exI", "Nil", "Cons", "Leaf", "Node", "True", "False", "Suc",
    "dvd_add", "dvd_mult", "dvd_mult2", "less_induct", "nat_less_induct", "nat.induct", "even_add", "even_mult_iff",
    "odd_pos", "fold_simps", "length_rev", "rev_append", "exE", "conjunct1",
    "conjunct2", "spec", "mp", "le_trans", "less_imp_le", "add_mono", "mult_le_mono",
})
_LEAN_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_'!?]*(?:\.[A-Za-z_][A-Za-z0-9_'!?]*)*")
_ISA_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_']*(?:\.[A-Za-z_][A-Za-z0-9_']*)*")
_LEAN_BINDERS = [re.compile(p) for p in (
    r"(?:\bfun\b|λ)([^\n]*?)=>",                                    # fun x y =>
    r"\b(?:intro|intros|rintro|rename_i)\b([^;\n]*)",                # intro h ⟨hp, hq⟩
    r"\bobtain\b([^\n]*?)(?::=|$)",                                  # obtain ⟨k, hk⟩ := h
    r"\b(?:rcases|cases|cases'|induction|induction')\b[^;\n]*?\bwith\b([^;\n]*)",
    r"\|\s*[A-Za-z_][\w.']*((?:\s+[A-Za-z_][\w']*)*)\s*=>",           # | cons x xs ih =>
    r"\b(?:have|let|set|by_contra|by_cases|next|case)\b\s+([^:=\n]*)",  # have h : ..., next a b =>
)]
_ISA_BINDERS = [re.compile(p) for p in (
    r"\b(?:fix|obtain)\b([^\n]*?)(?:\bwhere\b|$)",
    r"\b(?:have|show|assume|note|case|define)\s+([A-Za-z_][\w']*)\s*:",
    r"\bcase\s+\(\s*([^)]*)\)",
    r"\bfor\s+([A-Za-z_][\w' ]*)",                                 # have aux: "..." for t
)]


def _local_field(w: str, local: set[str], parts: set[str], known: frozenset[str]) -> bool:
    """``h.1``, ``l.length``, ``less.IH``, ``g.induct``: a field of a local variable; ``BTree.size``,
    ``Reach.step``: a name the statement defines inside its own namespace; ``f_def``: the defining
    equation of a local constant (Isabelle). ``Nat.nonsense`` is none of these: ``Nat`` is opened by
    the header, but ``nonsense`` is defined nowhere."""
    head, _, rest = w.partition(".")
    if rest:
        if head not in local:
            return False
        if head[0].islower():
            return True
        return all(p in parts or p in known for p in rest.split("."))
    return w.endswith("_def") and w[:-4] in local


def _drop_strings(text: str) -> str:
    return re.sub(r'"[^"]*"', " ", text)


def unknown_words(language: str, statement: str, proof: str) -> list[str]:
    """The words of ``proof`` (the text after the statement, comments already removed) that are no
    tactic, keyword or lemma name the checker knows for the prover and no name bound in the statement
    or by the proof, in order of appearance."""
    if language == "lean4":
        word, binders = _LEAN_WORD, _LEAN_BINDERS
        known = LEAN_TACTICS | LEAN_KEYWORDS | LEAN_NAMES
        proof_text = proof
    else:
        word, binders = _ISA_WORD, _ISA_BINDERS
        known = ISABELLE_METHODS | ISABELLE_KEYWORDS | ISABELLE_NAMES
        statement = re.sub(r"\\<[^>]*>", " ", statement)
        proof_text = _drop_strings(re.sub(r"\\<[^>]*>", " ", proof))    # quoted terms are the prover's business
    local = set(word.findall(statement))
    for pattern in binders:
        for m in pattern.finditer(proof_text):
            local.update(word.findall(m.group(1)))
    parts = {p for w in local for p in w.split(".")}         # ``def BTree.size``: ``size`` is defined too
    out = []
    for w in word.findall(proof_text):
        if w in known or w in local or _local_field(w, local, parts, known):
            continue
        if w not in out:
            out.append(w)
    return out


def lean_command(path: Path) -> list[str]:
    return ["lake", "env", "lean", str(path)]


def isabelle_command(directory: Path) -> list[str]:
    return ["isabelle", "build", "-D", str(directory)]


def _isabelle_root(theory: str, imports: str) -> str:
    parent = "HOL-Computational_Algebra" if "Computational_Algebra" in imports else "HOL"
    return f'session "Legwork_{theory}" = "{parent}" +\n  options [quick_and_dirty = false]\n  theories\n    {theory}\n'


def check_external(language: str, statement: str, candidate: str, theorem: str,
                   timeout_s: float = EXTERNAL_TIMEOUT_S) -> ProofCheck:
    """Structural checks, then the real prover when its command is on PATH."""
    structural = structural_check(language, statement, candidate, theorem)
    if not structural.ok:
        return structural
    tool = "lake" if language == "lean4" else "isabelle"
    if shutil.which(tool) is None:
        return ProofCheck(True, False, f"no {'Lean 4' if language == 'lean4' else 'Isabelle'} toolchain "
                                       f"(`{tool}` not on PATH); structural checks only")
    with tempfile.TemporaryDirectory(prefix=f"legwork-{language}-") as tmp:
        workdir = Path(tmp)
        if language == "lean4":
            path = workdir / f"{theorem}.lean"
            path.write_text(f"{candidate}\n#print axioms {theorem}\n", encoding="utf-8")
            cmd, cwd = lean_command(path), os.environ.get("LEGWORK_LEAN_PROJECT") or tmp
        else:
            (workdir / f"{theorem}.thy").write_text(candidate, encoding="utf-8")
            imports = re.search(r"\bimports\s+(.*)", candidate)
            (workdir / "ROOT").write_text(_isabelle_root(theorem, imports.group(1) if imports else ""), encoding="utf-8")
            cmd, cwd = isabelle_command(workdir), tmp
        try:
            done = subprocess.run(cmd, cwd=cwd, check=False, capture_output=True, text=True, timeout=timeout_s,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return ProofCheck(False, False, f"{' '.join(cmd[:2])} timed out after {timeout_s:.0f} s")
    output = done.stdout + done.stderr
    if done.returncode != 0:
        return ProofCheck(False, False, f"`{' '.join(cmd[:3])}` rejected the proof: {_first_error(output)}")
    if language == "lean4" and "sorryAx" in output:
        return ProofCheck(False, False, "the proof depends on sorryAx")
    return ProofCheck(True, True, f"`{' '.join(cmd[:3])}` accepted the proof")


def check_proof(language: str, statement: str, candidate: str, theorem: str) -> ProofCheck:
    if language == "coq":
        return check_coq(statement, candidate, theorem)
    return check_external(language, statement, candidate, theorem)
