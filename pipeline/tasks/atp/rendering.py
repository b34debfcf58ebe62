"""The text of a theorem in the three provers: a statement (everything up to the proof) and a golden
proof written as a list of steps, one tactic line each, so a step-wise trace can be taken.

Formats follow miniF2F: Lean 4 files open with ``import Mathlib`` and state ``theorem name ... := by``;
Isabelle files are ``theory name imports ... begin theorem name: ... end``. Coq files import the
standard library only (Debian ``coq`` 8.16), so every Coq proof is machine-checked here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

LEAN_HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Nat\n\n"


@dataclass
class Rendering:
    """One language's text: ``statement`` is everything up to the proof (imports, definitions,
    the theorem line); ``steps`` are the golden proof's tactic lines; ``closing`` ends the proof."""
    language: str
    statement: str
    steps: list[str]
    closing: str

    @property
    def proof_text(self) -> str:
        return "\n".join(self.steps)

    @property
    def full_text(self) -> str:
        return f"{self.statement}\n{self.proof_text}\n{self.closing}\n"


@dataclass
class Theorem:
    name: str
    topic: str
    difficulty: int               # the generator's grade: 1 case analysis, 2 induction, 3 lemma or strong induction
    informal: str                 # the abstract statement in words
    abstract: dict                # the parameters the renderings were made from ("kind": the template)
    renderings: dict[str, Rendering] = field(default_factory=dict)


def coq(header: str, name: str, prop: str, steps: list[str]) -> Rendering:
    head = f"{header}\n\n" if header else ""
    return Rendering("coq", f"{head}Theorem {name} : {prop}.\nProof.", [f"  {s}" for s in steps], "Qed.")


def lean(defs: str, name: str, binders: str, prop: str, steps: list[str]) -> Rendering:
    extra = f"{defs}\n\n" if defs else ""
    b = f" {binders}" if binders else ""
    return Rendering("lean4", f"{LEAN_HEADER}{extra}theorem {name}{b} :\n    {prop} := by",
                     [f"  {s}" for s in steps], "")


def isabelle(name: str, imports: str, defs: str, prop: str, steps: list[str]) -> Rendering:
    extra = f"{defs}\n\n" if defs else ""
    return Rendering("isabelle", f"theory {name}\n  imports {imports}\nbegin\n\n{extra}theorem {name}:\n  \"{prop}\"",
                     [f"  {s}" for s in steps], "\nend")


def make(name: str, topic: str, difficulty: int, informal: str, abstract: dict,
         coq_r: Rendering, lean_r: Rendering, isa_r: Rendering) -> Theorem:
    return Theorem(name, topic, difficulty, informal, abstract, {"coq": coq_r, "lean4": lean_r, "isabelle": isa_r})
