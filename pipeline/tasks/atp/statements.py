"""Theorem families: one abstract statement, rendered to Coq, Lean 4 and Isabelle, each with a
golden proof written as a list of steps (one tactic line each) so a step-wise trace can be taken.

Formats follow miniF2F: Lean 4 files open with ``import Mathlib`` and state ``theorem name ... := by``;
Isabelle files are ``theory name imports ... begin theorem name: ... end``. Coq files import the
standard library only (Debian ``coq`` 8.16), so every Coq proof is machine-checked here.

Each topic draws from its own seeded stream (``topic_draws``, at most ``MAX_DRAWS`` draws) and a
theorem is new only when its statement differs from every earlier one up to renaming of bound
variables (``statement_key``): the De Morgan lemma over P, Q and the one over R, T are one theorem.
"""
from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from pipeline.tasks.common import Candidates, cell_rng

LANGUAGES = ("coq", "lean4", "isabelle")
TOPICS = ("parity", "divisibility", "primality", "lists", "trees", "logic", "functions")
MAX_DRAWS = 3000            # draws per topic; their distinct statements are the topic's space

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
    difficulty: int               # 1 easy .. 3 hard (induction, several cases)
    informal: str                 # the abstract statement in words
    abstract: dict                # the parameters the renderings were made from
    renderings: dict[str, Rendering] = field(default_factory=dict)


def _coq(header: str, name: str, prop: str, steps: list[str]) -> Rendering:
    head = f"{header}\n\n" if header else ""
    return Rendering("coq", f"{head}Theorem {name} : {prop}.\nProof.", [f"  {s}" for s in steps], "Qed.")


def _lean(defs: str, name: str, binders: str, prop: str, steps: list[str]) -> Rendering:
    extra = f"{defs}\n\n" if defs else ""
    b = f" {binders}" if binders else ""
    return Rendering("lean4", f"{LEAN_HEADER}{extra}theorem {name}{b} :\n    {prop} := by",
                     [f"  {s}" for s in steps], "")


def _isa(name: str, imports: str, defs: str, prop: str, steps: list[str]) -> Rendering:
    extra = f"{defs}\n\n" if defs else ""
    return Rendering("isabelle", f"theory {name}\n  imports {imports}\nbegin\n\n{extra}theorem {name}:\n  \"{prop}\"",
                     [f"  {s}" for s in steps], "\nend")


def _make(name, topic, difficulty, informal, abstract, coq, lean, isa) -> Theorem:
    return Theorem(name, topic, difficulty, informal, abstract, {"coq": coq, "lean4": lean, "isabelle": isa})


# ---------------------------------------------------------------- natural-number facts

def parity(rng: random.Random, name: str) -> Theorem:
    kind = rng.choice(["even_const", "odd_const", "even_affine", "odd_affine"])
    if kind in ("even_const", "odd_const"):
        half = rng.randint(5, 400)
        n = 2 * half + (kind == "odd_const")
        word, coqp, leanp = ("even", "Nat.Even", "Even") if kind == "even_const" else ("odd", "Nat.Odd", "Odd")
        lean_wit = f"⟨{half}, by norm_num⟩"
        return _make(name, "parity", 1, f"{n} is {word}.", {"kind": kind, "n": n},
                     _coq("Require Import Arith.", name, f"{coqp} {n}", [f"exists {half}.", "reflexivity."]),
                     _lean("", name, "", f"{leanp} ({n} : ℕ)", [f"exact {lean_wit}"]),
                     _isa(name, "Main", "", f"{word} ({n}::nat)", ["by simp"]))
    c = rng.randint(1, 30)
    odd = kind == "odd_affine"
    const = 2 * c + odd
    word, coqp, leanp = ("odd", "Nat.Odd", "Odd") if odd else ("even", "Nat.Even", "Even")
    lean_body = f"⟨n + {c}, by ring⟩"
    return _make(name, "parity", 2, f"For every natural n, 2n + {const} is {word}.", {"kind": kind, "c": const},
                 _coq("Require Import Arith Lia.", name, f"forall n : nat, {coqp} (2 * n + {const})",
                      ["intros n.", f"exists (n + {c}).", "lia."]),
                 _lean("", name, "(n : ℕ)", f"{leanp} (2 * n + {const})", [f"exact {lean_body}"]),
                 _isa(name, "Main", "", f"{word} (2 * n + {const} :: nat)", ["by presburger"]))


def divisibility(rng: random.Random, name: str) -> Theorem:
    kind = rng.choice(["dvd_const", "not_dvd", "dvd_linear"])
    d = rng.randint(3, 19)
    if kind == "dvd_const":
        q = rng.randint(3, 60)
        n = d * q
        return _make(name, "divisibility", 1, f"{d} divides {n}.", {"kind": kind, "d": d, "n": n},
                     _coq("Require Import Arith.", name, f"Nat.divide {d} {n}", [f"exists {q}.", "reflexivity."]),
                     _lean("", name, "", f"({d} : ℕ) ∣ {n}", [f"exact ⟨{q}, by norm_num⟩"]),
                     _isa(name, "Main", "", f"({d}::nat) dvd {n}", ["by eval"]))
    if kind == "not_dvd":
        n = d * rng.randint(3, 60) + rng.randint(1, d - 1)
        return _make(name, "divisibility", 2, f"{d} does not divide {n}.", {"kind": kind, "d": d, "n": n},
                     _coq("Require Import Arith Lia.", name, f"~ Nat.divide {d} {n}", ["intros [z Hz].", "lia."]),
                     _lean("", name, "", f"¬ ({d} : ℕ) ∣ {n}", ["decide"]),
                     _isa(name, "Main", "", f"\\<not> ({d}::nat) dvd {n}", ["by eval"]))
    k = rng.randint(1, 20)
    return _make(name, "divisibility", 2, f"For every natural n, {d} divides {d}n + {d * k}.",
                 {"kind": kind, "d": d, "c": d * k},
                 _coq("Require Import Arith Lia.", name, f"forall n : nat, Nat.divide {d} ({d} * n + {d * k})",
                      ["intros n.", f"exists (n + {k}).", "lia."]),
                 _lean("", name, "(n : ℕ)", f"({d} : ℕ) ∣ {d} * n + {d * k}", [f"exact ⟨n + {k}, by ring⟩"]),
                 _isa(name, "Main", "", f"({d}::nat) dvd {d} * n + {d * k}",
                      [f'by (rule dvdI[of _ _ "n + {k}"]) (simp add: algebra_simps)']))


def _smallest_factor(n: int) -> int:
    return next(d for d in range(2, n + 1) if n % d == 0)


def primality(rng: random.Random, name: str) -> Theorem:
    if rng.random() < 0.5:
        p = rng.choice([p for p in range(5, 48) if _smallest_factor(p) == p])
        cases = " \\/ ".join(f"n = {i}" for i in range(1, p))
        coq_steps = ["apply prime_intro.", "- lia.", "- intros n Hn. apply Zgcd_1_rel_prime.",
                     f"  assert (Hc : {cases}) by lia.",
                     "  repeat destruct Hc as [-> | Hc]; try reflexivity.",
                     "  subst n. reflexivity."]
        return _make(name, "primality", 3, f"{p} is prime.", {"kind": "prime", "n": p},
                     _coq("Require Import ZArith Znumtheory Lia.\nOpen Scope Z_scope.", name, f"prime {p}", coq_steps),
                     _lean("", name, "", f"Nat.Prime {p}", ["norm_num"]),
                     _isa(name, '"HOL-Computational_Algebra.Primes"', "", f"prime ({p}::nat)", ["by eval"]))
    n = rng.choice([n for n in range(15, 220) if _smallest_factor(n) not in (n, 2)])
    d = _smallest_factor(n)
    coq_steps = ["intro H.", f"assert (Hd : ({d} | {n})) by (exists {n // d}; reflexivity).",
                 f"apply (prime_divisors {n} H) in Hd.", "lia."]
    return _make(name, "primality", 2, f"{n} is not prime.", {"kind": "composite", "n": n, "factor": d},
                 _coq("Require Import ZArith Znumtheory Lia.\nOpen Scope Z_scope.", name, f"~ prime {n}", coq_steps),
                 _lean("", name, "", f"¬ Nat.Prime {n}", ["norm_num"]),
                 _isa(name, '"HOL-Computational_Algebra.Primes"', "", f"\\<not> prime ({n}::nat)", ["by eval"]))


# ---------------------------------------------------------------- lists and trees

_COQ_LIST = "Require Import List Lia.\nImport ListNotations."
_LIST_LEMMAS = {
    # key: (informal, coq prop, coq steps, lean prop, lean steps, isabelle prop, difficulty)
    "app_length": ("length (l1 ++ l2) = length l1 + length l2",
                   "forall l1 l2 : list {T}, length (l1 ++ l2) = length l1 + length l2",
                   ["intros l1 l2.", "induction l1 as [| x xs IH].", "- reflexivity.", "- simpl. rewrite IH. reflexivity."],
                   "(l1 l2 : List {L}) : (l1 ++ l2).length = l1.length + l2.length",
                   ["simp [List.length_append]"],
                   "length (l1 @ l2) = length l1 + length (l2 :: {I} list)", 2),
    "app_nil_r": ("l ++ [] = l",
                  "forall l : list {T}, l ++ [] = l",
                  ["intros l.", "induction l as [| x xs IH].", "- reflexivity.", "- simpl. rewrite IH. reflexivity."],
                  "(l : List {L}) : l ++ [] = l",
                  ["induction l with", "| nil => rfl", "| cons x xs ih => simp"],
                  "l @ [] = (l :: {I} list)", 2),
    "app_assoc": ("(l1 ++ l2) ++ l3 = l1 ++ (l2 ++ l3)",
                  "forall l1 l2 l3 : list {T}, (l1 ++ l2) ++ l3 = l1 ++ (l2 ++ l3)",
                  ["intros l1 l2 l3.", "induction l1 as [| x xs IH].", "- reflexivity.", "- simpl. rewrite IH. reflexivity."],
                  "(l1 l2 l3 : List {L}) : (l1 ++ l2) ++ l3 = l1 ++ (l2 ++ l3)",
                  ["induction l1 with", "| nil => rfl", "| cons x xs ih => simp"],
                  "(l1 @ l2) @ l3 = l1 @ (l2 @ (l3 :: {I} list))", 2),
    "map_length": ("length (map f l) = length l",
                   "forall (f : {T} -> {T}) (l : list {T}), length (map f l) = length l",
                   ["intros f l.", "induction l as [| x xs IH].", "- reflexivity.", "- simpl. rewrite IH. reflexivity."],
                   "(f : {L} → {L}) (l : List {L}) : (l.map f).length = l.length",
                   ["induction l with", "| nil => rfl", "| cons x xs ih => simp"],
                   "length (map f l) = length (l :: {I} list)", 2),
    "map_app": ("map f (l1 ++ l2) = map f l1 ++ map f l2",
                "forall (f : {T} -> {T}) (l1 l2 : list {T}), map f (l1 ++ l2) = map f l1 ++ map f l2",
                ["intros f l1 l2.", "induction l1 as [| x xs IH].", "- reflexivity.", "- simpl. rewrite IH. reflexivity."],
                "(f : {L} → {L}) (l1 l2 : List {L}) : (l1 ++ l2).map f = l1.map f ++ l2.map f",
                ["induction l1 with", "| nil => rfl", "| cons x xs ih => simp"],
                "map f (l1 @ l2) = map f l1 @ map f (l2 :: {I} list)", 2),
    "rev_length": ("length (rev l) = length l",
                   "forall l : list {T}, length (rev l) = length l",
                   ["intros l.", "induction l as [| x xs IH].", "- reflexivity.",
                    "- simpl. rewrite app_length. simpl. rewrite IH. lia."],
                   "(l : List {L}) : l.reverse.length = l.length",
                   ["induction l with", "| nil => rfl", "| cons x xs ih => simp"],
                   "length (rev l) = length (l :: {I} list)", 3),
    "rev_involutive": ("rev (rev l) = l",
                       "forall l : list {T}, rev (rev l) = l",
                       ["intros l.", "induction l as [| x xs IH].", "- reflexivity.",
                        "- simpl. rewrite rev_app_distr. simpl. rewrite IH. reflexivity."],
                       "(l : List {L}) : l.reverse.reverse = l",
                       ["induction l with", "| nil => rfl", "| cons x xs ih => simp"],
                       "rev (rev l) = (l :: {I} list)", 3),
}
_ELEM_TYPES = {"nat": ("nat", "ℕ", "nat"), "bool": ("bool", "Bool", "bool")}


def lists(rng: random.Random, name: str) -> Theorem:
    if rng.random() < 0.6:
        key = rng.choice(sorted(_LIST_LEMMAS))
        elem = rng.choice(sorted(_ELEM_TYPES))
        T, L, I = _ELEM_TYPES[elem]
        informal, cprop, csteps, lprop, lsteps, iprop, diff = _LIST_LEMMAS[key]
        binders, lean_prop = lprop.format(L=L).rsplit(" : ", 1)
        return _make(name, "lists", diff, f"For all lists of {elem}: {informal}.", {"kind": key, "elem": elem},
                     _coq(_COQ_LIST, name, cprop.format(T=T), csteps),
                     _lean("", name, binders, lean_prop, lsteps),
                     _isa(name, "Main", "", iprop.format(I=I), ["by (induct l%s) auto" % ("1" if "l1" in iprop else "")]))
    # a concrete computation: length of an append, a reversal, or a map
    xs = [rng.randint(0, 20) for _ in range(rng.randint(2, 6))]
    ys = [rng.randint(0, 20) for _ in range(rng.randint(1, 4))]
    k = rng.randint(1, 9)
    op = rng.choice(["rev", "map", "length_app"])
    cl = lambda v: "[" + "; ".join(map(str, v)) + "]"
    ll = lambda v: "[" + ", ".join(map(str, v)) + "]"
    if op == "rev":
        cp, lp, ip = f"rev {cl(xs)} = {cl(xs[::-1])}", f"({ll(xs)} : List ℕ).reverse = {ll(xs[::-1])}", \
            f"rev {ll(xs)} = ({ll(xs[::-1])} :: nat list)"
        informal = f"Reversing {ll(xs)} gives {ll(xs[::-1])}."
    elif op == "map":
        out = [x + k for x in xs]
        cp = f"map (fun x => x + {k}) {cl(xs)} = {cl(out)}"
        lp = f"({ll(xs)} : List ℕ).map (fun x => x + {k}) = {ll(out)}"
        ip = f"map (\\<lambda>x. x + {k}) {ll(xs)} = ({ll(out)} :: nat list)"
        informal = f"Adding {k} to every element of {ll(xs)} gives {ll(out)}."
    else:
        n = len(xs) + len(ys)
        cp = f"length ({cl(xs)} ++ {cl(ys)}) = {n}"
        lp = f"(({ll(xs)} : List ℕ) ++ {ll(ys)}).length = {n}"
        ip = f"length ({ll(xs)} @ {ll(ys)} :: nat list) = {n}"
        informal = f"Appending {ll(xs)} and {ll(ys)} gives a list of length {n}."
    return _make(name, "lists", 1, informal, {"kind": op, "xs": xs, "ys": ys, "k": k},
                 _coq(_COQ_LIST, name, cp, ["simpl.", "reflexivity."]),
                 _lean("", name, "", lp, ["rfl"]),
                 _isa(name, "Main", "", ip, ["by simp"]))


_COQ_TREE = """Require Import Lia.

Inductive tree : Type :=
  | Leaf : tree
  | Node : tree -> nat -> tree -> tree.

Fixpoint mirror (t : tree) : tree :=
  match t with
  | Leaf => Leaf
  | Node l v r => Node (mirror r) v (mirror l)
  end.

Fixpoint size (t : tree) : nat :=
  match t with
  | Leaf => 0
  | Node l _ r => size l + 1 + size r
  end.

Fixpoint sum (t : tree) : nat :=
  match t with
  | Leaf => 0
  | Node l v r => sum l + v + sum r
  end.

Fixpoint height (t : tree) : nat :=
  match t with
  | Leaf => 0
  | Node l _ r => S (Nat.max (height l) (height r))
  end."""

_LEAN_TREE = """inductive BTree where
  | leaf : BTree
  | node : BTree → ℕ → BTree → BTree

def BTree.mirror : BTree → BTree
  | .leaf => .leaf
  | .node l v r => .node r.mirror v l.mirror

def BTree.size : BTree → ℕ
  | .leaf => 0
  | .node l _ r => l.size + 1 + r.size

def BTree.sum : BTree → ℕ
  | .leaf => 0
  | .node l v r => l.sum + v + r.sum

def BTree.height : BTree → ℕ
  | .leaf => 0
  | .node l _ r => max l.height r.height + 1"""

_ISA_TREE = """datatype tree = Leaf | Node tree nat tree

fun mirror :: "tree \\<Rightarrow> tree" where
  "mirror Leaf = Leaf"
| "mirror (Node l v r) = Node (mirror r) v (mirror l)"

fun size_t :: "tree \\<Rightarrow> nat" where
  "size_t Leaf = 0"
| "size_t (Node l v r) = size_t l + 1 + size_t r"

fun sum_t :: "tree \\<Rightarrow> nat" where
  "sum_t Leaf = 0"
| "sum_t (Node l v r) = sum_t l + v + sum_t r"

fun height :: "tree \\<Rightarrow> nat" where
  "height Leaf = 0"
| "height (Node l v r) = max (height l) (height r) + 1\""""

_TREE_LEMMAS = {
    # key: (informal, coq prop, coq inductive-case step, lean prop, isabelle prop)
    "size_mirror": ("mirroring a tree keeps its size", "forall t : tree, size (mirror t) = size t",
                    "- simpl. rewrite IHl, IHr. lia.", "t.mirror.size = t.size", "size_t (mirror t) = size_t t"),
    "sum_mirror": ("mirroring a tree keeps the sum of its labels", "forall t : tree, sum (mirror t) = sum t",
                   "- simpl. rewrite IHl, IHr. lia.", "t.mirror.sum = t.sum", "sum_t (mirror t) = sum_t t"),
    "height_mirror": ("mirroring a tree keeps its height", "forall t : tree, height (mirror t) = height t",
                      "- simpl. rewrite IHl, IHr. lia.", "t.mirror.height = t.height", "height (mirror t) = height t"),
    "mirror_involutive": ("mirroring twice gives the tree back", "forall t : tree, mirror (mirror t) = t",
                          "- simpl. rewrite IHl, IHr. reflexivity.", "t.mirror.mirror = t", "mirror (mirror t) = t"),
}


def _random_tree(rng: random.Random, nodes: int):
    """A random binary tree as nested tuples (left, value, right); None is a leaf."""
    if nodes == 0:
        return None
    left = rng.randint(0, nodes - 1)
    return (_random_tree(rng, left), rng.randint(0, 9), _random_tree(rng, nodes - 1 - left))


def _tree_measure(t, kind: str) -> int:
    if t is None:
        return 0
    l, v, r = t
    if kind == "size":
        return _tree_measure(l, kind) + 1 + _tree_measure(r, kind)
    if kind == "sum":
        return _tree_measure(l, kind) + v + _tree_measure(r, kind)
    return max(_tree_measure(l, kind), _tree_measure(r, kind)) + 1


def _tree_term(t, leaf: str, node: str, wrap: bool = False) -> str:
    if t is None:
        return leaf
    l, v, r = t
    text = f"{node} {_tree_term(l, leaf, node, True)} {v} {_tree_term(r, leaf, node, True)}"
    return f"({text})" if wrap else text


def trees(rng: random.Random, name: str) -> Theorem:
    if rng.random() < 0.5:
        key = rng.choice(sorted(_TREE_LEMMAS))
        informal, cprop, cstep, lprop, iprop = _TREE_LEMMAS[key]
        finish = {"size_mirror": ["omega"], "sum_mirror": ["omega"], "height_mirror": ["rw [Nat.max_comm]"],
                  "mirror_involutive": []}[key]
        lean_steps = ["induction t with", "| leaf => rfl",
                      "| node l v r ihl ihr =>",
                      "  simp only [BTree.mirror, BTree.size, BTree.sum, BTree.height, ihl, ihr]"] + \
                     [f"  {f}" for f in finish]
        return _make(name, "trees", 3, f"For every binary tree, {informal}.", {"kind": key},
                     _coq(_COQ_TREE, name, cprop, ["intros t.", "induction t as [| l IHl v r IHr].", "- reflexivity.", cstep]),
                     _lean(_LEAN_TREE, name, "(t : BTree)", lprop, lean_steps),
                     _isa(name, "Main", _ISA_TREE, iprop, ["by (induct t) auto"]))
    tree = _random_tree(rng, rng.randint(3, 7))
    measure = rng.choice(["size", "sum", "height"])
    value = _tree_measure(tree, measure)
    coq_t = _tree_term(tree, "Leaf", "Node")
    lean_t = _tree_term(tree, "BTree.leaf", "BTree.node")
    isa_fn = {"size": "size_t", "sum": "sum_t", "height": "height"}[measure]
    return _make(name, "trees", 1, f"The {measure} of the tree {coq_t} is {value}.",
                 {"kind": f"concrete_{measure}", "tree": coq_t, "value": value},
                 _coq(_COQ_TREE, name, f"{measure} ({coq_t}) = {value}", ["simpl.", "reflexivity."]),
                 _lean(_LEAN_TREE, name, "", f"({lean_t}).{measure} = {value}", ["rfl"]),
                 _isa(name, "Main", _ISA_TREE, f"{isa_fn} ({coq_t}) = {value}", ["by simp"]))


# ---------------------------------------------------------------- propositional logic

def logic(rng: random.Random, name: str) -> Theorem:
    kind = rng.choice(["chain", "and_reverse", "contrapositive", "de_morgan", "distribute", "curry"])
    letters = rng.sample("PQRSTUVW", 8)
    if kind == "chain":
        k = rng.randint(3, 6)
        ps = letters[:k]
        hyps = [f"({a} -> {b})" for a, b in itertools.pairwise(ps)]
        coq_prop = " -> ".join(hyps + [ps[0], ps[-1]])
        names = [f"H{i}" for i in range(1, k)]
        steps = [f"intros {' '.join(names)} Hp."] + [f"apply {h}." for h in reversed(names)] + ["exact Hp."]
        lean_prop = " → ".join(h.replace("->", "→") for h in hyps + [ps[0], ps[-1]])
        isa_imp = " \\<Longrightarrow> "
        isa_prop = isa_imp.join(h.replace("->", "\\<longrightarrow>") for h in hyps + [ps[0], ps[-1]])
        lean_steps = [f"intro {' '.join(n.lower() for n in names)} hp", f"exact {_lean_chain([n.lower() for n in names], 'hp')}"]
        informal, diff = f"Implication chains compose ({k} propositions).", 2
    elif kind == "and_reverse":
        k = rng.randint(2, 5)
        ps = letters[:k]
        coq_and, isa_and = " /\\ ", " \\<and> "
        coq_prop = f"{coq_and.join(ps)} -> {coq_and.join(reversed(ps))}"
        hs = [f"H{i}" for i in range(k)]
        pattern = "[" + " [".join(hs[:-1]) + " " + hs[-1] + "]" * (k - 1)
        steps = [f"intros {pattern}."] + (["repeat split."] if k > 1 else []) + ["all: assumption."]
        lean_prop = f"{' ∧ '.join(ps)} → {' ∧ '.join(reversed(ps))}"
        isa_prop = f"{isa_and.join(ps)} \\<Longrightarrow> {isa_and.join(reversed(ps))}"
        lean_steps = ["intro h", "simp_all"]
        informal, diff = f"A conjunction of {k} propositions implies its reversal.", 2
    elif kind == "contrapositive":
        p, q = letters[:2]
        coq_prop = f"({p} -> {q}) -> ~ {q} -> ~ {p}"
        steps = ["intros Hpq Hnq Hp.", "apply Hnq.", "apply Hpq.", "exact Hp."]
        lean_prop = f"({p} → {q}) → ¬ {q} → ¬ {p}"
        isa_prop = f"{p} \\<longrightarrow> {q} \\<Longrightarrow> \\<not> {q} \\<Longrightarrow> \\<not> {p}"
        lean_steps = ["intro hpq hnq hp", "exact hnq (hpq hp)"]
        informal, diff = "Contraposition.", 1
    elif kind == "de_morgan":
        p, q = letters[:2]
        coq_prop = f"~ ({p} \\/ {q}) -> ~ {p} /\\ ~ {q}"
        steps = ["intros H.", "split.", "- intros Hp. apply H. left. exact Hp.", "- intros Hq. apply H. right. exact Hq."]
        lean_prop = f"¬ ({p} ∨ {q}) → ¬ {p} ∧ ¬ {q}"
        isa_prop = f"\\<not> ({p} \\<or> {q}) \\<Longrightarrow> \\<not> {p} \\<and> \\<not> {q}"
        lean_steps = ["intro h", "exact ⟨fun hp => h (Or.inl hp), fun hq => h (Or.inr hq)⟩"]
        informal, diff = "De Morgan: not (P or Q) implies not P and not Q.", 2
    elif kind == "distribute":
        p, q, r = letters[:3]
        coq_prop = f"{p} /\\ ({q} \\/ {r}) -> ({p} /\\ {q}) \\/ ({p} /\\ {r})"
        steps = ["intros [Hp [Hq | Hr]].", "- left. split; assumption.", "- right. split; assumption."]
        lean_prop = f"{p} ∧ ({q} ∨ {r}) → ({p} ∧ {q}) ∨ ({p} ∧ {r})"
        isa_prop = f"{p} \\<and> ({q} \\<or> {r}) \\<Longrightarrow> ({p} \\<and> {q}) \\<or> ({p} \\<and> {r})"
        lean_steps = ["intro ⟨hp, hqr⟩", "cases hqr with", "| inl hq => exact Or.inl ⟨hp, hq⟩",
                      "| inr hr => exact Or.inr ⟨hp, hr⟩"]
        informal, diff = "Conjunction distributes over disjunction.", 2
    else:
        p, q, r = letters[:3]
        coq_prop = f"({p} /\\ {q} -> {r}) -> {p} -> {q} -> {r}"
        steps = ["intros H Hp Hq.", "apply H.", "split.", "- exact Hp.", "- exact Hq."]
        lean_prop = f"({p} ∧ {q} → {r}) → {p} → {q} → {r}"
        isa_prop = f"({p} \\<and> {q} \\<longrightarrow> {r}) \\<Longrightarrow> {p} \\<Longrightarrow> {q} \\<Longrightarrow> {r}"
        lean_steps = ["intro h hp hq", "exact h ⟨hp, hq⟩"]
        informal, diff = "Currying: from (P and Q implies R), P and Q give R.", 1
    used = sorted({c for c in coq_prop if c in "PQRSTUVW"})
    vars_ = " ".join(used)
    return _make(name, "logic", diff, informal, {"kind": kind, "props": used, "formula": coq_prop},
                 _coq("", name, f"forall {vars_} : Prop, {coq_prop}", [f"intros {vars_}."] + steps),
                 _lean("", name, f"({vars_} : Prop)", lean_prop, lean_steps),
                 _isa(name, "Main", "", isa_prop, ["by blast"]))


def _lean_chain(hyps: list[str], last: str) -> str:
    term = last
    for h in hyps:
        term = f"{h} ({term})" if " " in term else f"{h} {term}"
    return term


# ---------------------------------------------------------------- simple functions

def functions(rng: random.Random, name: str) -> Theorem:
    kind = rng.choice(["monotone", "strict_mono", "injective", "antitone"])
    a, b = rng.randint(1, 12), rng.randint(0, 40)
    if kind == "monotone":
        informal = f"f(x) = {a}x + {b} is monotone on the naturals."
        cp, lp = f"forall x y : nat, x <= y -> {a} * x + {b} <= {a} * y + {b}", f"∀ x y : ℕ, x ≤ y → {a} * x + {b} ≤ {a} * y + {b}"
        ip = f"\\<forall>x y::nat. x \\<le> y \\<longrightarrow> {a} * x + {b} \\<le> {a} * y + {b}"
        header = "Require Import Lia."
    elif kind == "strict_mono":
        informal = f"f(x) = {a}x + {b} is strictly increasing on the naturals."
        cp, lp = f"forall x y : nat, x < y -> {a} * x + {b} < {a} * y + {b}", f"∀ x y : ℕ, x < y → {a} * x + {b} < {a} * y + {b}"
        ip = f"\\<forall>x y::nat. x < y \\<longrightarrow> {a} * x + {b} < {a} * y + {b}"
        header = "Require Import Lia."
    elif kind == "injective":
        a = rng.choice([-1, 1]) * a
        informal = f"f(x) = {a}x + {b} is injective on the integers."
        cp = f"forall x y : Z, {a} * x + {b} = {a} * y + {b} -> x = y"
        lp = f"∀ x y : ℤ, {a} * x + {b} = {a} * y + {b} → x = y"
        ip = f"\\<forall>x y::int. {a} * x + {b} = {a} * y + {b} \\<longrightarrow> x = y"
        header = "Require Import ZArith Lia.\nOpen Scope Z_scope."
    else:
        informal = f"f(x) = -{a}x + {b} is antitone on the integers."
        cp = f"forall x y : Z, x <= y -> -{a} * x + {b} >= -{a} * y + {b}"
        lp = f"∀ x y : ℤ, x ≤ y → -{a} * x + {b} ≥ -{a} * y + {b}"
        ip = f"\\<forall>x y::int. x \\<le> y \\<longrightarrow> -{a} * x + {b} \\<ge> -{a} * y + {b}"
        header = "Require Import ZArith Lia.\nOpen Scope Z_scope."
    hyp = "H"
    return _make(name, "functions", 1 if kind != "injective" else 2, informal, {"kind": kind, "a": a, "b": b},
                 _coq(header, name, cp, [f"intros x y {hyp}.", "lia."]),
                 _lean("", name, "", lp, ["intro x y h", "omega"]),
                 _isa(name, "Main", "", ip, ["by auto"] if kind != "injective" else ["by simp"]))


GENERATORS: dict[str, Callable[[random.Random, str], Theorem]] = {
    "parity": parity, "divisibility": divisibility, "primality": primality, "lists": lists,
    "trees": trees, "logic": logic, "functions": functions,
}


# ---------------------------------------------------------------- distinct statements

_BINDER = {
    "coq": re.compile(r"\b(?:forall|exists|fun)\s+([^,=]+?)\s*(?:,|=>)"),
    "lean4": re.compile(r"(?:∀|∃|\bfun\b|λ)\s*([^,=]+?)\s*(?:,|=>)"),
}
_LEAN_SIGNATURE = re.compile(r"\btheorem\s+\S+\s+(\([^()]*\)(?:\s*\([^()]*\))*)\s*:")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_']*")


def _binder_groups(text: str) -> list[tuple[int, int, list[tuple[list[str], str]]]]:
    """Binder lists as spans: ``x y : T`` -> [(["x", "y"], "T")]; ``(f : A) (l : B)`` -> two parts."""
    parts = re.findall(r"\(([^()]*)\)", text) if text.strip().startswith("(") else [text]
    out = []
    for part in parts:
        names, _, typ = part.partition(":")
        out.append((names.split(), typ.strip()))
    return out


def statement_key(text: str, language: str, name: str) -> str:
    """``text`` with the theorem's name replaced, whitespace collapsed and every bound variable (and
    every universally quantified parameter of a Lean theorem) renamed v1, v2, ... in order of first
    appearance after the binders; names sharing one binder are then listed in order, so
    ``forall P Q : Prop, ~ (Q \\/ P) -> ...`` and ``forall R T : Prop, ~ (R \\/ T) -> ...`` give one key."""
    text = re.sub(rf"\b{re.escape(name)}\b", "NAME", text)
    spans = []                                   # (start, end, parts, closing) of each binder list
    for m in _BINDER.get(language, re.compile(r"(?!)")).finditer(text):
        spans.append((m.start(1), m.end(1), _binder_groups(m.group(1))))
    if language == "lean4":
        sig = _LEAN_SIGNATURE.search(text)
        if sig:
            spans.append((sig.start(1), sig.end(1), _binder_groups(sig.group(1))))
    spans.sort()
    bound = [n for _, _, parts in spans for names, _ in parts for n in names]
    if not bound:
        return " ".join(text.split())
    body = text
    for start, end, _ in reversed(spans):
        body = body[:start] + " " * (end - start) + body[end:]
    order = []
    for word in _IDENT.findall(body):
        if word in bound and word not in order:
            order.append(word)
    order += [n for n in bound if n not in order]
    new = {old: f"v{i}" for i, old in enumerate(order, 1)}
    rename = (lambda chunk: re.sub(r"[A-Za-z_][A-Za-z0-9_']*", lambda m: new.get(m.group(0), m.group(0)), chunk))
    pieces, last = [], 0
    for start, end, parts in spans:
        pieces.append(rename(text[last:start]))
        rebuilt = [(sorted(new[n] for n in names), typ) for names, typ in parts]
        if len(parts) > 1 or text[start:end].strip().startswith("("):
            pieces.append(" ".join(f"({' '.join(ns)} : {rename(t)})" for ns, t in rebuilt))
        else:
            ns, t = rebuilt[0]
            pieces.append(" ".join(ns) + (f" : {rename(t)}" if t else ""))
        last = end
    pieces.append(rename(text[last:]))
    return " ".join("".join(pieces).split())


def statement_keys(thm: Theorem) -> tuple[str, ...]:
    """What makes a theorem a duplicate: its Coq or its Lean statement up to renaming bound variables."""
    return tuple(f"{lang}:{statement_key(thm.renderings[lang].statement, lang, thm.name)}" for lang in ("coq", "lean4"))


def topic_draws(seed: int, topic: str, max_draws: int = MAX_DRAWS) -> Iterator[tuple[tuple[str, ...], tuple]]:
    """``(keys, draw)`` for each of the topic's draws; ``render(topic, draw, name)`` makes the theorem."""
    rng = cell_rng(seed, "atp", topic)
    for _ in range(max_draws):
        state = rng.getstate()
        yield statement_keys(GENERATORS[topic](rng, f"{topic}_draft")), state


def render(topic: str, draw: tuple, name: str) -> Theorem:
    """The theorem of one draw (``topic_draws``) under its final name."""
    rng = random.Random()
    rng.setstate(draw)
    return GENERATORS[topic](rng, name)


def theorem_pool(seed: int, source_of=None) -> Candidates:
    """Every topic's distinct theorems (as draws), drawn lazily; theorem i of a topic is ``{topic}_{i:03d}``."""
    return Candidates(lambda topic: topic_draws(seed, topic), source_of)


def generate_theorems(count: int, seed: int) -> list[Theorem]:
    """``count`` distinct theorems, topics taken in turn (a topic whose statements are used up is
    skipped); same (count, seed) gives the same list."""
    pool = theorem_pool(seed)
    out: list[Theorem] = []
    taken = dict.fromkeys(TOPICS, 0)
    turn = 0
    while len(out) < count:
        live = [t for t in TOPICS if pool.ensure(t, taken[t] + 1) > taken[t]]
        if not live:
            raise RuntimeError(f"only {len(out)} distinct theorems exist for these generators")
        topic = TOPICS[turn % len(TOPICS)]
        turn += 1
        if topic not in live:
            continue
        i = taken[topic]
        out.append(render(topic, pool.get(topic, i), f"{topic}_{i:03d}"))
        taken[topic] += 1
    return out
