"""Theorem families (templates), seven topics. Every template is parameterised (constants,
coefficients, thresholds, function definitions) and is built so one generic tactic does not close
it in Coq: the proof needs a case analysis the prover does not find alone (even/odd, a comparison
inside a user-defined function), an induction whose hypothesis must be generalised first (functions
with an accumulator, a pair of consecutive values, strong induction), or an auxiliary lemma proved
inside the proof (``assert``) before the main induction. ``generic.py`` measures that claim.

Each generator takes a seeded ``random.Random`` and the theorem's name and returns a ``Theorem``
rendered in Coq (checked with coqc), Lean 4 and Isabelle (structural checks unless a toolchain is
installed). ``abstract["kind"]`` names the template.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable

from pipeline.tasks.atp.rendering import Theorem, coq, isabelle, lean, make

TOPICS = ("parity", "divisibility", "primality", "lists", "trees", "inductive", "functions")


def lin(a: int, x: str, b: int = 0) -> str:
    """``a * x + b`` without the unit and zero terms."""
    term = x if a == 1 else f"{a} * {x}"
    return term if b == 0 else f"{term} + {b}"


def plus(*terms: str | int) -> str:
    """A sum of terms, zero terms left out."""
    kept = [str(t) for t in terms if t not in (0, "0", "")]
    return " + ".join(kept) if kept else "0"


# ---------------------------------------------------------------- parity: case analysis on even / odd

def parity(rng: random.Random, name: str) -> Theorem:
    kind = rng.choice(["even_product", "quadratic"])
    if kind == "even_product":
        a = rng.randint(0, 30)
        b = rng.randint(a + 1, 41)
        b += (a + b) % 2 == 0                     # a + b odd: one factor is always even
        even_c, odd_c = (a, b) if a % 2 == 0 else (b, a)
        factor = lambda c: "n" if c == 0 else f"(n + {c})"
        expr = f"{factor(a)} * {factor(b)}"
        # n = 2m: the factor with the even constant is 2 (m + e/2); n = 2m + 1: the one with the odd constant
        w_even = f"{'m' if even_c == 0 else f'(m + {even_c // 2})'} * ({plus('2 * m', odd_c)})"
        w_odd = f"(m + {(odd_c + 1) // 2}) * ({plus('2 * m', 1, even_c)})"
        coq_steps = ["intros n.", "destruct (Nat.Even_or_Odd n) as [[m Hm] | [m Hm]]; subst n.",
                     f"- exists ({w_even}). ring.", f"- exists ({w_odd}). ring."]
        lean_steps = ["obtain ⟨m, hm | hm⟩ := Nat.even_or_odd' n", "· subst hm", f"  exact ⟨{w_even}, by ring⟩",
                      "· subst hm", f"  exact ⟨{w_odd}, by ring⟩"]
        return make(name, "parity", 2, f"For every natural n, {expr.replace(' * ', '·')} is even.",
                    {"kind": kind, "a": a, "b": b},
                    coq("Require Import Arith.", name, f"forall n : nat, Nat.Even ({expr})", coq_steps),
                    lean("", name, "(n : ℕ)", f"Even ({expr})", lean_steps),
                    isabelle(name, "Main", "", f"even ({expr.replace(f'(n + {b})', f'(n + ({b}::nat))')})",
                             ['by (cases "even n") auto']))
    c = 2 * rng.randint(0, 19) + 1                # n^2 + c n is even for odd c
    d = rng.randint(0, 60)
    odd = d % 2 == 1
    expr = plus("n * n", lin(c, "n"), d)
    # n = 2m: 4m^2 + 2cm + d;  n = 2m + 1: 4m^2 + 4m + 2cm + (1 + c + d)
    w_even = plus("2 * m * m", lin(c, "m"), d // 2)
    w_odd = plus("2 * m * m", "2 * m", lin(c, "m"), (1 + c + d) // 2)
    word, coqp, leanp = ("odd", "Nat.Odd", "Odd") if odd else ("even", "Nat.Even", "Even")
    coq_steps = ["intros n.", "destruct (Nat.Even_or_Odd n) as [[m Hm] | [m Hm]]; subst n.",
                 f"- exists ({w_even}). ring.", f"- exists ({w_odd}). ring."]
    lean_steps = ["obtain ⟨m, hm | hm⟩ := Nat.even_or_odd' n", "· subst hm", f"  exact ⟨{w_even}, by ring⟩",
                  "· subst hm", f"  exact ⟨{w_odd}, by ring⟩"]
    return make(name, "parity", 1, f"For every natural n, {expr} is {word}.", {"kind": kind, "c": c, "d": d},
                coq("Require Import Arith.", name, f"forall n : nat, {coqp} ({expr})", coq_steps),
                lean("", name, "(n : ℕ)", f"{leanp} ({expr})", lean_steps),
                isabelle(name, "Main", "", f"{word} ({plus('n * n', lin(c, 'n'), f'({d}::nat)')})",
                         ['by (cases "even n") auto']))


# ---------------------------------------------------------------- divisibility: recurrences, strong induction

def _rec1(rng: random.Random, name: str) -> Theorem:
    d, a = rng.randint(2, 12), rng.randint(2, 9)
    i, j = rng.randint(1, 9), rng.randint(1, 9)
    c, b = d * i, d * j
    header = (f"Require Import Arith Lia.\n\nFixpoint f (n : nat) : nat :=\n  match n with\n  | 0 => {c}\n"
              f"  | S m => {a} * f m + {b}\n  end.")
    steps = ["intros n.", "induction n as [| m [k Hk]].", f"- exists {i}. reflexivity.",
             f"- exists ({a} * k + {j}). simpl. rewrite Hk. lia."]
    lean_defs = f"def f : ℕ → ℕ\n  | 0 => {c}\n  | n + 1 => {a} * f n + {b}"
    lean_steps = ["induction n with", f"| zero => exact ⟨{i}, by simp [f]⟩", "| succ m ih =>",
                  "  obtain ⟨k, hk⟩ := ih", f"  exact ⟨{a} * k + {j}, by rw [f, hk]; ring⟩"]
    isa_defs = (f'fun f :: "nat \\<Rightarrow> nat" where\n  "f 0 = {c}"\n'
                f'| "f (Suc n) = {a} * f n + {b}"')
    return make(name, "divisibility", 2, f"With f(0) = {c} and f(n+1) = {a}f(n) + {b}, {d} divides every f(n).",
                {"kind": "recurrence", "d": d, "a": a, "b": b, "c": c},
                coq(header, name, f"forall n : nat, Nat.divide {d} (f n)", steps),
                lean(lean_defs, name, "(n : ℕ)", f"{d} ∣ f n", lean_steps),
                isabelle(name, "Main", isa_defs, f"({d}::nat) dvd f n", ["by (induct n) (auto intro: dvd_add)"]))


def _rec2(rng: random.Random, name: str) -> Theorem:
    d, a, b = rng.randint(2, 9), rng.randint(1, 9), rng.randint(1, 9)
    i0, i1 = rng.randint(0, 9), rng.randint(1, 9)
    c0, c1 = d * i0, d * i1
    step = f"{lin(a, 'g m')} + {lin(b, 'g k')}"
    header = (f"Require Import Arith Lia.\n\nFixpoint g (n : nat) : nat :=\n  match n with\n  | 0 => {c0}\n"
              f"  | S m => match m with\n           | 0 => {c1}\n           | S k => {step}\n           end\n  end.")
    unfolded = f"{lin(a, 'g (S m)')} + {lin(b, 'g m')}"
    steps = ["intros n.", f"assert (H : forall m, Nat.divide {d} (g m) /\\ Nat.divide {d} (g (S m))).",
             "- induction m as [| m [[x Hx] [y Hy]]].",
             f"  + split; [exists {i0} | exists {i1}]; reflexivity.",
             "  + split; [exists y; exact Hy |].",
             (f"    exists ({lin(a, 'y')} + {lin(b, 'x')}). change (g (S (S m))) with ({unfolded}). "
             "rewrite Hx, Hy. lia."),
             "- exact (proj1 (H n))."]
    lean_defs = (f"def g : ℕ → ℕ\n  | 0 => {c0}\n  | 1 => {c1}\n"
                 f"  | n + 2 => {lin(a, 'g (n + 1)')} + {lin(b, 'g n')}")
    lean_steps = ["induction n using Nat.strong_induction_on with", "| _ n ih =>", "  rcases n with _ | _ | n",
                  f"  · exact ⟨{i0}, by simp [g]⟩", f"  · exact ⟨{i1}, by simp [g]⟩",
                  "  · obtain ⟨x, hx⟩ := ih (n + 1) (by omega)", "    obtain ⟨y, hy⟩ := ih n (by omega)",
                  f"    exact ⟨{lin(a, 'x')} + {lin(b, 'y')}, by rw [g, hx, hy]; ring⟩"]
    isa_defs = (f'fun g :: "nat \\<Rightarrow> nat" where\n  "g 0 = {c0}"\n| "g (Suc 0) = {c1}"\n'
                f'| "g (Suc (Suc n)) = {lin(a, "g (Suc n)")} + {lin(b, "g n")}"')
    return make(name, "divisibility", 3,
                f"With g(0) = {c0}, g(1) = {c1} and g(n+2) = {a}g(n+1) + {b}g(n), {d} divides every g(n).",
                {"kind": "recurrence2", "d": d, "a": a, "b": b, "c0": c0, "c1": c1},
                coq(header, name, f"forall n : nat, Nat.divide {d} (g n)", steps),
                lean(lean_defs, name, "(n : ℕ)", f"{d} ∣ g n", lean_steps),
                isabelle(name, "Main", isa_defs, f"({d}::nat) dvd g n",
                         ["by (induct n rule: g.induct) (auto intro: dvd_add)"]))


def _coins(rng: random.Random, name: str) -> Theorem:
    pairs = [(a, b) for a in range(2, 7) for b in range(a + 1, 16) if math.gcd(a, b) == 1]
    a, b = rng.choice(pairs)
    t = (a - 1) * (b - 1) + rng.randint(0, 15)       # every n >= (a-1)(b-1) is a x + b y (Sylvester)
    witness = {}
    for n in range(t, t + a):
        y = next(y for y in range(a) if (n - b * y) >= 0 and (n - b * y) % a == 0)
        witness[n] = ((n - b * y) // a, y)
    cases = " \\/ ".join(f"n = {n}" for n in range(t, t + a)) + f" \\/ n >= {t + a}"
    pattern = "[-> | " * a + "Hc" + "]" * a
    steps = ["intros n.", "induction n as [n IH] using lt_wf_ind.", "intros Hn.",
             f"assert (Hc : {cases}) by lia.", f"destruct Hc as {pattern}."]
    steps += [f"- exists {x}, {y}. reflexivity." for x, y in witness.values()]
    steps += [f"- destruct (IH (n - {a})) as [x [y Hxy]]; [lia | lia |].", "  exists (S x), y. lia."]
    lean_steps = ["intro n", "induction n using Nat.strong_induction_on with", "| _ n ih =>", "  intro hn",
                  f"  by_cases hs : n < {t + a}", "  · interval_cases n"]
    lean_steps += [f"    · exact ⟨{x}, {y}, by norm_num⟩" for x, y in witness.values()]
    lean_steps += [f"  · obtain ⟨x, y, hxy⟩ := ih (n - {a}) (by omega) (by omega)",
                   "    exact ⟨x + 1, y, by omega⟩"]
    isa_steps = ["proof (induct n rule: less_induct)", "  case (less n)", "  show ?case",
                 f'  proof (cases "n < {t + a}")', "    case True", "    then show ?thesis using less.prems by presburger",
                 "  next", "    case False", ('    then obtain x y where "n - ' f'{a} = {a} * x + {b} * y"'),
                 f'      using less.IH[of "n - {a}"] by auto',
                 f'    then have "n = {a} * (x + 1) + {b} * y" using False by simp', "    then show ?thesis by blast",
                 "  qed", "qed"]
    return make(name, "divisibility", 3, f"Every natural n >= {t} is a sum of {a}s and {b}s.",
                {"kind": "coins", "a": a, "b": b, "t": t},
                coq("Require Import Arith Lia.", name,
                    f"forall n : nat, n >= {t} -> exists x y : nat, n = {a} * x + {b} * y", steps),
                lean("", name, "", f"∀ n : ℕ, {t} ≤ n → ∃ x y : ℕ, n = {a} * x + {b} * y", lean_steps),
                isabelle(name, "Main", "", f"n \\<ge> {t} \\<Longrightarrow> \\<exists>x y. n = {a} * x + {b} * (y::nat)",
                         isa_steps))


def divisibility(rng: random.Random, name: str) -> Theorem:
    return rng.choice([_rec1, _rec2, _coins])(rng, name)


# ---------------------------------------------------------------- primality: concrete facts by case enumeration

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
        return make(name, "primality", 3, f"{p} is prime.", {"kind": "prime", "n": p},
                    coq("Require Import ZArith Znumtheory Lia.\nOpen Scope Z_scope.", name, f"prime {p}", coq_steps),
                    lean("", name, "", f"Nat.Prime {p}", ["norm_num"]),
                    isabelle(name, '"HOL-Computational_Algebra.Primes"', "", f"prime ({p}::nat)", ["by eval"]))
    n = rng.choice([n for n in range(15, 220) if _smallest_factor(n) not in (n, 2)])
    d = _smallest_factor(n)
    coq_steps = ["intro H.", f"assert (Hd : ({d} | {n})) by (exists {n // d}; reflexivity).",
                 f"apply (prime_divisors {n} H) in Hd.", "lia."]
    return make(name, "primality", 2, f"{n} is not prime.", {"kind": "composite", "n": n, "factor": d},
                coq("Require Import ZArith Znumtheory Lia.\nOpen Scope Z_scope.", name, f"~ prime {n}", coq_steps),
                lean("", name, "", f"¬ Nat.Prime {n}", ["norm_num"]),
                isabelle(name, '"HOL-Computational_Algebra.Primes"', "", f"\\<not> prime ({n}::nat)", ["by eval"]))


# ---------------------------------------------------------------- lists: accumulators, counting, auxiliary lemmas

_COQ_LIST = "Require Import Arith List Lia.\nImport ListNotations."


def _wsum_defs(a: int, b: int) -> tuple[str, str, str]:
    """The weighted sum of a list, sum of (a x + b), in Coq, Lean 4 and Isabelle."""
    w = lin(a, "x", b)
    return ((f"Fixpoint wsum (l : list nat) : nat :=\n  match l with\n  | [] => 0\n"
             f"  | x :: t => {w} + wsum t\n  end."),
            f"def wsum : List ℕ → ℕ\n  | [] => 0\n  | x :: t => {w} + wsum t",
            (f'primrec wsum :: "nat list \\<Rightarrow> nat" where\n  "wsum [] = 0"\n'
             f'| "wsum (x # t) = {w} + wsum t"'))


_SNOC = ("Fixpoint snoc (l : list nat) (x : nat) : list nat :=\n  match l with\n  | [] => [x]\n"
         "  | y :: t => y :: snoc t x\n  end.\n\nFixpoint myrev (l : list nat) : list nat :=\n  match l with\n"
         "  | [] => []\n  | x :: t => snoc (myrev t) x\n  end.")
_LEAN_SNOC = ("def snoc : List ℕ → ℕ → List ℕ\n  | [], x => [x]\n  | y :: t, x => y :: snoc t x\n\n"
              "def myrev : List ℕ → List ℕ\n  | [] => []\n  | x :: t => snoc (myrev t) x")
_ISA_SNOC = ('primrec snoc :: "nat list \\<Rightarrow> nat \\<Rightarrow> nat list" where\n  "snoc [] x = [x]"\n'
             '| "snoc (y # t) x = y # snoc t x"\n\nprimrec myrev :: "nat list \\<Rightarrow> nat list" where\n'
             '  "myrev [] = []"\n| "myrev (x # t) = snoc (myrev t) x"')


def _count_defs(op: str, k: int, elem: str = "x") -> dict[str, str]:
    """The comparison a count keeps and the one its complement keeps, per language, with the Coq
    ``BoolSpec`` lemmas that split on them."""
    if op == "le":
        return {"keep": f"Nat.leb {elem} {k}", "rest": f"Nat.ltb {k} {elem}",
                "split": f"(Nat.leb_spec {elem} {k}), (Nat.ltb_spec {k} {elem})",
                "lean_keep": f"{elem} ≤ {k}", "lean_rest": f"{k} < {elem}",
                "isa_keep": f"{elem} \\<le> {k}", "isa_rest": f"{k} < {elem}", "words": ("at most", "more than")}
    return {"keep": f"Nat.ltb {elem} {k}", "rest": f"Nat.leb {k} {elem}",
            "split": f"(Nat.ltb_spec {elem} {k}), (Nat.leb_spec {k} {elem})",
            "lean_keep": f"{elem} < {k}", "lean_rest": f"{k} ≤ {elem}",
            "isa_keep": f"{elem} < {k}", "isa_rest": f"{k} \\<le> {elem}", "words": ("below", "at least")}


def lists(rng: random.Random, name: str) -> Theorem:
    kind = rng.choice(["acc_sum", "fold_sum", "count_split", "count_app", "rev_sum", "rev_map", "rev_rev",
                       "rev_length"])
    a, b, c = rng.randint(1, 9), rng.randint(0, 9), rng.randint(1, 30)
    w = lin(a, "x", b)
    if kind in ("acc_sum", "fold_sum"):
        coq_w, lean_w, isa_w = _wsum_defs(a, b)
        if kind == "acc_sum":
            defs = (f"{coq_w}\n\nFixpoint wsum_acc (l : list nat) (acc : nat) : nat :=\n  match l with\n"
                    f"  | [] => acc\n  | x :: t => wsum_acc t (acc + ({w}))\n  end.")
            coq_lhs, coq_gen = f"wsum_acc l {c}", "wsum_acc l acc"
            lean_defs = (f"{lean_w}\n\ndef wsumAcc : List ℕ → ℕ → ℕ\n  | [], acc => acc\n"
                         f"  | x :: t, acc => wsumAcc t (acc + ({w}))")
            lean_lhs, lean_gen, unfold = f"wsumAcc l {c}", "wsumAcc l acc", "wsumAcc"
            isa_defs = (f'{isa_w}\n\nprimrec wsum_acc :: "nat list \\<Rightarrow> nat \\<Rightarrow> nat" where\n'
                        f'  "wsum_acc [] acc = acc"\n| "wsum_acc (x # t) acc = wsum_acc t (acc + ({w}))"')
            isa_lhs, isa_gen = f"wsum_acc l {c}", "wsum_acc l acc"
            informal = f"The accumulator version of the sum of {w} over a list, started at {c}, is that sum plus {c}."
        else:
            defs = coq_w
            fn = f"(fun acc x => acc + ({w}))"
            coq_lhs, coq_gen = f"fold_left {fn} l {c}", f"fold_left {fn} l acc"
            lean_defs, unfold = lean_w, "List.foldl"
            lean_lhs, lean_gen = f"List.foldl {fn} {c} l", f"List.foldl {fn} acc l"
            isa_defs = isa_w
            isa_fn = f"(\\<lambda>x acc. acc + ({w}))"
            isa_lhs, isa_gen = f"fold {isa_fn} l {c}", f"fold {isa_fn} l acc"
            informal = f"Folding acc + ({w}) over a list from {c} gives the sum of {w} plus {c}."
        steps = [f"assert (G : forall l acc, {coq_gen} = wsum l + acc).",
                 "- induction l as [| x t IH]; intros acc.", "  + reflexivity.", "  + simpl. rewrite IH. lia.",
                 "- intros l. apply G."]
        lean_steps = [f"have key : ∀ (l : List ℕ) (acc : ℕ), {lean_gen} = wsum l + acc := by", "  intro l",
                      "  induction l with", f"  | nil => intro acc; simp [{unfold}, wsum]",
                      f"  | cons x t ih => intro acc; simp only [{unfold}, wsum, ih]; ring", f"exact key l {c}"]
        isa_steps = ["proof -", f'  have "\\<And>acc. {isa_gen} = wsum l + acc"', "    by (induct l) auto",
                     "  then show ?thesis by simp", "qed"]
        return make(name, "lists", 2, informal, {"kind": kind, "a": a, "b": b, "c": c},
                    coq(f"{_COQ_LIST}\n\n{defs}", name, f"forall l : list nat, {coq_lhs} = wsum l + {c}", steps),
                    lean(lean_defs, name, "(l : List ℕ)", f"{lean_lhs} = wsum l + {c}", lean_steps),
                    isabelle(name, "Main", isa_defs, f"{isa_lhs} = wsum l + {c}", isa_steps))
    if kind in ("count_split", "count_app"):
        k, op = rng.randint(0, 40), rng.choice(["le", "lt"])
        s = _count_defs(op, k)
        cnt = f"count_{op}"
        defs = (f"Fixpoint {cnt} (l : list nat) : nat :=\n  match l with\n  | [] => 0\n"
                f"  | x :: t => if {s['keep']} then S ({cnt} t) else {cnt} t\n  end.")
        lean_defs = (f"def {cnt} : List ℕ → ℕ\n  | [] => 0\n"
                     f"  | x :: t => if {s['lean_keep']} then {cnt} t + 1 else {cnt} t")
        isa_defs = (f'primrec {cnt} :: "nat list \\<Rightarrow> nat" where\n  "{cnt} [] = 0"\n'
                    f'| "{cnt} (x # t) = (if {s["isa_keep"]} then Suc ({cnt} t) else {cnt} t)"')
        if kind == "count_split":
            prop = f"forall l : list nat, {cnt} l + length (filter (fun x => {s['rest']}) l) = length l"
            steps = ["intros l.", "induction l as [| x t IH].", "- reflexivity.",
                     f"- cbn [{cnt} filter length]. destruct {s['split']}; cbn [{cnt} filter length]; lia."]
            lean_prop = f"{cnt} l + (l.filter (fun x => {s['lean_rest']})).length = l.length"
            lean_steps = ["induction l with", "| nil => rfl", "| cons x t ih =>",
                          f"  by_cases h : {s['lean_keep']}", f"  · simp [{cnt}, List.filter, h]; omega",
                          f"  · simp [{cnt}, List.filter, h]; omega"]
            isa_prop = f"{cnt} l + length (filter (\\<lambda>x. {s['isa_rest']}) l) = length l"
            informal = (f"The elements {s['words'][0]} {k} counted by a recursive function, plus the length of "
                        f"the filter keeping those {s['words'][1]} {k}, is the length of the list.")
            binders = "(l : List ℕ)"
        else:
            prop = f"forall l1 l2 : list nat, {cnt} (l1 ++ l2) = {cnt} l1 + {cnt} l2"
            steps = ["intros l1 l2.", "induction l1 as [| x t IH].", "- reflexivity.",
                     f"- simpl. destruct ({s['keep']}); rewrite IH; reflexivity."]
            lean_prop = f"{cnt} (l1 ++ l2) = {cnt} l1 + {cnt} l2"
            lean_steps = ["induction l1 with", f"| nil => simp [{cnt}]", "| cons x t ih =>",
                          f"  by_cases h : {s['lean_keep']}", f"  · simp [{cnt}, h, ih]; omega",
                          f"  · simp [{cnt}, h, ih]"]
            isa_prop = f"{cnt} (l1 @ l2) = {cnt} l1 + {cnt} l2"
            informal = f"Counting the elements {s['words'][0]} {k} is additive over list append."
            binders = "(l1 l2 : List ℕ)"
        return make(name, "lists", 2, informal, {"kind": kind, "k": k, "op": op},
                    coq(f"{_COQ_LIST}\n\n{defs}", name, prop, steps),
                    lean(lean_defs, name, binders, lean_prop, lean_steps),
                    isabelle(name, "Main", isa_defs, isa_prop, [f"by (induct l{'1' if '@' in isa_prop else ''}) auto"]))
    # reversal by snoc: the induction needs a lemma about snoc first
    coq_w, lean_w, isa_w = _wsum_defs(a, b)
    table = {  # defs (coq, lean, isabelle), lemma (coq, lean, isabelle), statement (coq, lean, isabelle), closer
        "rev_sum": ((f"{coq_w}\n\n{_SNOC}", f"{lean_w}\n\n{_LEAN_SNOC}", f"{isa_w}\n\n{_ISA_SNOC}"),
                    (f"wsum (snoc l x) = wsum l + ({w})", f"wsum (snoc l x) = wsum l + ({w})",
                     f"wsum (snoc t x) = wsum t + ({w})"),
                    ("wsum (myrev l) = wsum l",) * 3, "lia"),
        "rev_map": ((f"Definition w (x : nat) : nat := {w}.\n\n{_SNOC}", f"def w (x : ℕ) : ℕ := {w}\n\n{_LEAN_SNOC}",
                     f'definition w :: "nat \\<Rightarrow> nat" where\n  "w x = {w}"\n\n{_ISA_SNOC}'),
                    ("map w (snoc l x) = snoc (map w l) (w x)", "(snoc l x).map w = snoc (l.map w) (w x)",
                     "map w (snoc t x) = snoc (map w t) (w x)"),
                    ("myrev (map w l) = map w (myrev l)", "myrev (l.map w) = (myrev l).map w",
                     "myrev (map w l) = map w (myrev l)"), "reflexivity"),
        "rev_rev": ((_SNOC, _LEAN_SNOC, _ISA_SNOC),
                    ("myrev (snoc l x) = x :: myrev l", "myrev (snoc l x) = x :: myrev l",
                     "myrev (snoc t x) = x # myrev t"),
                    ("myrev (myrev l) = l",) * 3, "reflexivity"),
        "rev_length": ((_SNOC, _LEAN_SNOC, _ISA_SNOC),
                       ("length (snoc l x) = S (length l)", "(snoc l x).length = l.length + 1",
                        "length (snoc t x) = Suc (length t)"),
                       ("length (myrev l) = length l", "(myrev l).length = l.length", "length (myrev l) = length l"),
                       "reflexivity"),
    }
    (defs, lean_defs, isa_defs), (lemma, lean_lemma, isa_lemma), (prop, lean_prop, isa_prop), finish = table[kind]
    hyp = {"rev_sum": "Hs", "rev_map": "Hm", "rev_rev": "Hr", "rev_length": "Hl"}[kind]
    informal = {"rev_sum": f"Reversing a list (by snoc) keeps the sum of {w} over it.",
                "rev_map": f"Reversing a list (by snoc) commutes with mapping x to {w}.",
                "rev_rev": "Reversing a list (by snoc) twice gives it back.",
                "rev_length": "Reversing a list (by snoc) keeps its length."}[kind]
    abstract = {"kind": kind, "a": a, "b": b} if kind in ("rev_sum", "rev_map") else {"kind": kind}
    steps = [f"assert ({hyp} : forall l x, {lemma}).", "- induction l as [| y t IH]; intros x; simpl.",
             f"  + {'lia' if kind == 'rev_sum' else 'reflexivity'}.", f"  + rewrite IH. {finish}.",
             "- intros l. induction l as [| x t IH].", "  + reflexivity.", f"  + simpl. rewrite {hyp}, IH. {finish}."]
    extra = {"rev_sum": ", wsum", "rev_map": ", w"}.get(kind, "")
    ring = "; ring" if kind == "rev_sum" else ""
    lean_steps = [f"have aux : ∀ (l : List ℕ) (x : ℕ), {lean_lemma} := by", "  intro l x", "  induction l with",
                  f"  | nil => simp [snoc, myrev{extra}]", f"  | cons y t ih => simp [snoc, myrev{extra}, ih]{ring}",
                  "induction l with", "| nil => rfl", f"| cons x t ih => simp [myrev{extra}, aux, ih]{ring}"]
    isa_steps = ["proof -", f'  have aux: "\\<And>x. {isa_lemma}" for t', "    by (induct t) auto",
                 "  show ?thesis by (induct l) (auto simp: aux)", "qed"]
    return make(name, "lists", 3, informal, abstract,
                coq(f"{_COQ_LIST}\n\n{defs}", name, f"forall l : list nat, {prop}", steps),
                lean(lean_defs, name, "(l : List ℕ)", lean_prop, lean_steps),
                isabelle(name, "Main", isa_defs, isa_prop, isa_steps))


# ---------------------------------------------------------------- trees

_COQ_TREE = """Require Import Arith List Lia.
Import ListNotations.

Inductive tree : Type :=
  | Leaf : tree
  | Node : tree -> nat -> tree -> tree.

Fixpoint size (t : tree) : nat :=
  match t with
  | Leaf => 0
  | Node l _ r => size l + 1 + size r
  end."""
_COQ_MIRROR = """Fixpoint mirror (t : tree) : tree :=
  match t with
  | Leaf => Leaf
  | Node l v r => Node (mirror r) v (mirror l)
  end."""
_COQ_FLATTEN = """Fixpoint flatten (t : tree) : list nat :=
  match t with
  | Leaf => []
  | Node l v r => flatten l ++ v :: flatten r
  end."""

_LEAN_TREE = """inductive BTree where
  | leaf : BTree
  | node : BTree → ℕ → BTree → BTree

def BTree.size : BTree → ℕ
  | .leaf => 0
  | .node l _ r => l.size + 1 + r.size"""
_LEAN_MIRROR = """def BTree.mirror : BTree → BTree
  | .leaf => .leaf
  | .node l v r => .node r.mirror v l.mirror"""
_LEAN_FLATTEN = """def BTree.flatten : BTree → List ℕ
  | .leaf => []
  | .node l v r => l.flatten ++ v :: r.flatten"""

_ISA_TREE = """datatype tree = Leaf | Node tree nat tree

fun size_t :: "tree \\<Rightarrow> nat" where
  "size_t Leaf = 0"
| "size_t (Node l v r) = size_t l + 1 + size_t r\""""
_ISA_MIRROR = """fun mirror :: "tree \\<Rightarrow> tree" where
  "mirror Leaf = Leaf"
| "mirror (Node l v r) = Node (mirror r) v (mirror l)\""""
_ISA_FLATTEN = """fun flatten :: "tree \\<Rightarrow> nat list" where
  "flatten Leaf = []"
| "flatten (Node l v r) = flatten l @ v # flatten r\""""

_TREE_INDUCTION = "induction t as [| l IHl v r IHr]"


def trees(rng: random.Random, name: str) -> Theorem:
    kind = rng.choice(["acc_sum", "count_bound", "count_split", "flat_acc_map", "flatten_mirror", "flatten_length"])
    a, b, c = rng.randint(1, 9), rng.randint(0, 9), rng.randint(1, 30)
    wv = lin(a, "v", b)
    lean_ind = ["induction t with", "| leaf => rfl", "| node l v r ihl ihr =>"]
    if kind == "acc_sum":
        defs = (f"Fixpoint wsum (t : tree) : nat :=\n  match t with\n  | Leaf => 0\n"
                f"  | Node l v r => wsum l + ({wv}) + wsum r\n  end.\n\n"
                f"Fixpoint wsum_acc (t : tree) (acc : nat) : nat :=\n  match t with\n  | Leaf => acc\n"
                f"  | Node l v r => wsum_acc l (wsum_acc r (acc + ({wv})))\n  end.")
        lean_defs = (f"def BTree.wsum : BTree → ℕ\n  | .leaf => 0\n  | .node l v r => l.wsum + ({wv}) + r.wsum\n\n"
                     f"def BTree.wsumAcc : BTree → ℕ → ℕ\n  | .leaf, acc => acc\n"
                     f"  | .node l v r, acc => l.wsumAcc (r.wsumAcc (acc + ({wv})))")
        isa_defs = (f'fun wsum :: "tree \\<Rightarrow> nat" where\n  "wsum Leaf = 0"\n'
                    f'| "wsum (Node l v r) = wsum l + ({wv}) + wsum r"\n\n'
                    f'fun wsum_acc :: "tree \\<Rightarrow> nat \\<Rightarrow> nat" where\n  "wsum_acc Leaf acc = acc"\n'
                    f'| "wsum_acc (Node l v r) acc = wsum_acc l (wsum_acc r (acc + ({wv})))"')
        prop, lean_prop = f"wsum_acc t {c} = wsum t + {c}", f"t.wsumAcc {c} = t.wsum + {c}"
        steps = ["assert (G : forall t acc, wsum_acc t acc = wsum t + acc).", f"- {_TREE_INDUCTION}; intros acc.",
                 "  + reflexivity.", "  + simpl. rewrite IHl, IHr. lia.", "- intros t. apply G."]
        lean_steps = ["have key : ∀ (t : BTree) (acc : ℕ), t.wsumAcc acc = t.wsum + acc := by", "  intro t",
                      "  induction t with", "  | leaf => intro acc; simp [BTree.wsumAcc, BTree.wsum]",
                      "  | node l v r ihl ihr => intro acc; simp only [BTree.wsumAcc, BTree.wsum, ihl, ihr]; ring",
                      f"exact key t {c}"]
        isa_steps = ["proof -", '  have "\\<And>acc. wsum_acc t acc = wsum t + acc"',
                     "    by (induct t) auto", "  then show ?thesis by simp", "qed"]
        return make(name, "trees", 2, f"The accumulator sum of {wv} over a tree's labels, started at {c}, is that "
                    f"sum plus {c}.", {"kind": kind, "a": a, "b": b, "c": c},
                    coq(f"{_COQ_TREE}\n\n{defs}", name, f"forall t : tree, {prop}", steps),
                    lean(f"{_LEAN_TREE}\n\n{lean_defs}", name, "(t : BTree)", lean_prop, lean_steps),
                    isabelle(name, "Main", f"{_ISA_TREE}\n\n{isa_defs}", prop, isa_steps))
    if kind in ("count_bound", "count_split"):
        k, op = rng.randint(0, 40), rng.choice(["le", "lt"])
        s = _count_defs(op, k, "v")
        defs = (f"Fixpoint count_in (t : tree) : nat :=\n  match t with\n  | Leaf => 0\n"
                f"  | Node l v r => count_in l + (if {s['keep']} then 1 else 0) + count_in r\n  end.")
        lean_defs = (f"def BTree.countIn : BTree → ℕ\n  | .leaf => 0\n"
                     f"  | .node l v r => l.countIn + (if {s['lean_keep']} then 1 else 0) + r.countIn")
        isa_defs = (f'fun count_in :: "tree \\<Rightarrow> nat" where\n  "count_in Leaf = 0"\n'
                    f'| "count_in (Node l v r) = count_in l + (if {s["isa_keep"]} then 1 else 0) + count_in r"')
        if kind == "count_bound":
            prop, lean_prop, isa_prop = "count_in t <= size t", "t.countIn ≤ t.size", "count_in t \\<le> size_t t"
            steps = ["intros t.", f"{_TREE_INDUCTION}.", "- reflexivity.", f"- simpl. destruct ({s['keep']}); lia."]
            lean_steps = lean_ind + [f"  by_cases h : {s['lean_keep']}",
                                     "  · simp [BTree.countIn, BTree.size, h]; omega",
                                     "  · simp [BTree.countIn, BTree.size, h]; omega"]
            informal = f"A tree has at most as many labels {s['words'][0]} {k} as nodes."
        else:
            defs += (f"\n\nFixpoint count_out (t : tree) : nat :=\n  match t with\n  | Leaf => 0\n"
                     f"  | Node l v r => count_out l + (if {s['rest']} then 1 else 0) + count_out r\n  end.")
            lean_defs += (f"\n\ndef BTree.countOut : BTree → ℕ\n  | .leaf => 0\n"
                          f"  | .node l v r => l.countOut + (if {s['lean_rest']} then 1 else 0) + r.countOut")
            isa_defs += (f'\n\nfun count_out :: "tree \\<Rightarrow> nat" where\n  "count_out Leaf = 0"\n'
                         f'| "count_out (Node l v r) = count_out l + (if {s["isa_rest"]} then 1 else 0) + count_out r"')
            prop, lean_prop = "count_in t + count_out t = size t", "t.countIn + t.countOut = t.size"
            isa_prop = "count_in t + count_out t = size_t t"
            steps = ["intros t.", f"{_TREE_INDUCTION}.", "- reflexivity.",
                     f"- cbn [count_in count_out size]. destruct {s['split']}; lia."]
            lean_steps = lean_ind + [f"  by_cases h : {s['lean_keep']}",
                                     "  · simp [BTree.countIn, BTree.countOut, BTree.size, h]; omega",
                                     "  · simp [BTree.countIn, BTree.countOut, BTree.size, h]; omega"]
            informal = (f"In a tree, the labels {s['words'][0]} {k} and those {s['words'][1]} {k} together "
                        "number the nodes.")
        return make(name, "trees", 2, informal, {"kind": kind, "k": k, "op": op},
                    coq(f"{_COQ_TREE}\n\n{defs}", name, f"forall t : tree, {prop}", steps),
                    lean(f"{_LEAN_TREE}\n\n{lean_defs}", name, "(t : BTree)", lean_prop, lean_steps),
                    isabelle(name, "Main", f"{_ISA_TREE}\n\n{isa_defs}", isa_prop, ["by (induct t) auto"]))
    if kind == "flat_acc_map":
        defs = (f"Definition w (v : nat) : nat := {wv}.\n\n{_COQ_FLATTEN}\n\n"
                "Fixpoint flat_acc (t : tree) (acc : list nat) : list nat :=\n  match t with\n  | Leaf => acc\n"
                "  | Node l v r => flat_acc l (w v :: flat_acc r acc)\n  end.")
        lean_defs = (f"def w (v : ℕ) : ℕ := {wv}\n\n{_LEAN_FLATTEN}\n\n"
                     "def BTree.flatAcc : BTree → List ℕ → List ℕ\n  | .leaf, acc => acc\n"
                     "  | .node l v r, acc => l.flatAcc (w v :: r.flatAcc acc)")
        isa_defs = (f'definition w :: "nat \\<Rightarrow> nat" where\n  "w v = {wv}"\n\n{_ISA_FLATTEN}\n\n'
                    'fun flat_acc :: "tree \\<Rightarrow> nat list \\<Rightarrow> nat list" where\n'
                    '  "flat_acc Leaf acc = acc"\n| "flat_acc (Node l v r) acc = flat_acc l (w v # flat_acc r acc)"')
        steps = ["assert (G : forall t acc, flat_acc t acc = map w (flatten t) ++ acc).",
                 f"- {_TREE_INDUCTION}; intros acc.", "  + reflexivity.",
                 "  + simpl. rewrite IHl, IHr, map_app, <- app_assoc. reflexivity.",
                 "- intros t. rewrite G. apply app_nil_r."]
        lean_steps = ["have key : ∀ (t : BTree) (acc : List ℕ), t.flatAcc acc = t.flatten.map w ++ acc := by",
                      "  intro t", "  induction t with", "  | leaf => intro acc; rfl",
                      "  | node l v r ihl ihr => intro acc; simp [BTree.flatAcc, BTree.flatten, ihl, ihr]",
                      "simpa using key t []"]
        isa_steps = ["proof -", '  have "\\<And>acc. flat_acc t acc = map w (flatten t) @ acc"',
                     "    by (induct t) auto", "  then show ?thesis by simp", "qed"]
        return make(name, "trees", 3, f"Flattening a tree with an accumulator while mapping labels to {wv} equals "
                    "mapping its in-order flattening.", {"kind": kind, "a": a, "b": b},
                    coq(f"{_COQ_TREE}\n\n{defs}", name, "forall t : tree, flat_acc t [] = map w (flatten t)", steps),
                    lean(f"{_LEAN_TREE}\n\n{lean_defs}", name, "(t : BTree)", "t.flatAcc [] = t.flatten.map w",
                         lean_steps),
                    isabelle(name, "Main", f"{_ISA_TREE}\n\n{isa_defs}", "flat_acc t [] = map w (flatten t)",
                             isa_steps))
    if kind == "flatten_mirror":
        steps = ["intros t.", f"{_TREE_INDUCTION}.", "- reflexivity.",
                 "- simpl. rewrite IHl, IHr, rev_app_distr. simpl. rewrite <- app_assoc. reflexivity."]
        return make(name, "trees", 2, "Flattening a mirrored tree gives the reversed flattening.", {"kind": kind},
                    coq(f"{_COQ_TREE}\n\n{_COQ_MIRROR}\n\n{_COQ_FLATTEN}", name,
                        "forall t : tree, flatten (mirror t) = rev (flatten t)", steps),
                    lean(f"{_LEAN_TREE}\n\n{_LEAN_MIRROR}\n\n{_LEAN_FLATTEN}", name, "(t : BTree)",
                         "t.mirror.flatten = t.flatten.reverse",
                         lean_ind + ["  simp [BTree.mirror, BTree.flatten, ihl, ihr, List.reverse_append]"]),
                    isabelle(name, "Main", f"{_ISA_TREE}\n\n{_ISA_MIRROR}\n\n{_ISA_FLATTEN}",
                             "flatten (mirror t) = rev (flatten t)", ["by (induct t) auto"]))
    steps = ["intros t.", f"{_TREE_INDUCTION}.", "- reflexivity.", "- simpl. rewrite app_length. simpl. lia."]
    return make(name, "trees", 2, "A tree's in-order flattening has as many elements as the tree has nodes.",
                {"kind": kind},
                coq(f"{_COQ_TREE}\n\n{_COQ_FLATTEN}", name, "forall t : tree, length (flatten t) = size t", steps),
                lean(f"{_LEAN_TREE}\n\n{_LEAN_FLATTEN}", name, "(t : BTree)", "t.flatten.length = t.size",
                     lean_ind + ["  simp [BTree.flatten, BTree.size, ihl, ihr]", "  omega"]),
                isabelle(name, "Main", f"{_ISA_TREE}\n\n{_ISA_FLATTEN}", "length (flatten t) = size_t t",
                         ["by (induct t) auto"]))


# ---------------------------------------------------------------- inductive predicates

def _semigroup(c: int, steps: tuple[int, ...], limit: int) -> set[int]:
    """The numbers up to ``limit`` that ``c`` plus sums of ``steps`` reach."""
    seen, todo = set(), [c]
    while todo:
        n = todo.pop()
        if n <= limit and n not in seen:
            seen.add(n)
            todo += [n + s for s in steps]
    return seen


def inductive(rng: random.Random, name: str) -> Theorem:
    """``reach`` holds of c and is closed under adding a (and b): what it holds of, proved by induction
    on the derivation, on the numbers, or through a lemma about every derivation."""
    kind = rng.choice(["form", "all", "gap", "jump"])
    two = rng.random() < 0.5 and kind != "jump"
    c = rng.randint(1, 30)
    if two:
        a = rng.randint(2, 9)
        b = rng.choice([x for x in range(a + 1, 13) if x % a])
        steps_ = (a, b)
    else:
        a, b = rng.randint(2, 9), None
        steps_ = (a,)
    ctors = [f"  | reach_base : reach {c}"] + [
        f"  | reach_{tag} : forall n, reach n -> reach (n + {s})" for tag, s in zip(("a", "b") if two else ("step",), steps_)]
    header = "Require Import Arith Lia.\n\nInductive reach : nat -> Prop :=\n" + "\n".join(ctors) + "."
    lean_ctors = [f"  | base : Reach {c}"] + [f"  | {tag} (n : ℕ) : Reach n → Reach (n + {s})"
                                                for tag, s in zip(("a", "b") if two else ("step",), steps_)]
    lean_defs = "inductive Reach : ℕ → Prop\n" + "\n".join(lean_ctors)
    isa_ctors = [f'  base: "reach {c}"'] + [f'| {tag}: "reach n \\<Longrightarrow> reach (n + {s})"'
                                            for tag, s in zip(("a", "b") if two else ("step",), steps_)]
    isa_defs = 'inductive reach :: "nat \\<Rightarrow> bool" where\n' + "\n".join(isa_ctors)
    form = f"{c} + {a} * x + {b} * y" if two else f"{c} + {a} * k"
    exists = "exists x y : nat" if two else "exists k : nat"
    ways = f"{a}s and {b}s" if two else f"{a}s"
    abstract = {"kind": kind, "c": c, "steps": list(steps_)}
    if kind == "form":
        if two:
            proof = ["intros n H.", "induction H as [| n H IH | n H IH].", "- exists 0, 0. lia.",
                     "- destruct IH as [x [y Hxy]]. exists (S x), y. lia.",
                     "- destruct IH as [x [y Hxy]]. exists x, (S y). lia."]
            lean_steps = ["intro n h", "induction h with", "| base => exact ⟨0, 0, by omega⟩",
                          "| a n _ ih =>", "  obtain ⟨x, y, hxy⟩ := ih", "  exact ⟨x + 1, y, by omega⟩",
                          "| b n _ ih =>", "  obtain ⟨x, y, hxy⟩ := ih", "  exact ⟨x, y + 1, by omega⟩"]
            lean_ex, isa_ex = "∃ x y : ℕ", "\\<exists>x y"
        else:
            proof = ["intros n H.", "induction H as [| n H IH].", "- exists 0. lia.",
                     "- destruct IH as [k Hk]. exists (S k). lia."]
            lean_steps = ["intro n h", "induction h with", "| base => exact ⟨0, by omega⟩", "| step n _ ih =>",
                          "  obtain ⟨k, hk⟩ := ih", "  exact ⟨k + 1, by omega⟩"]
            lean_ex, isa_ex = "∃ k : ℕ", "\\<exists>k"
        return make(name, "inductive", 2, f"Whatever reach holds of is {c} plus a sum of {ways}.", abstract,
                    coq(header, name, f"forall n : nat, reach n -> {exists}, n = {form}", proof),
                    lean(lean_defs, name, "", f"∀ n : ℕ, Reach n → {lean_ex}, n = {form}", lean_steps),
                    isabelle(name, "Main", isa_defs, f"reach n \\<Longrightarrow> {isa_ex}. n = {form}",
                             ["by (induct rule: reach.induct) presburger+"]))
    if kind == "all":
        if two:
            proof = ["intros x y.", "induction y as [| y IHy].", "- induction x as [| x IHx].",
                     f"  + replace ({c} + {a} * 0 + {b} * 0) with {c} by lia. apply reach_base.",
                     (f"  + replace ({c} + {a} * S x + {b} * 0) with ({c} + {a} * x + {b} * 0 + {a}) by lia. "
                     "apply reach_a. exact IHx."),
                     (f"- replace ({c} + {a} * x + {b} * S y) with ({c} + {a} * x + {b} * y + {b}) by lia. "
                     "apply reach_b. exact IHy.")]
            prop, lean_prop = f"forall x y : nat, reach ({form})", f"∀ x y : ℕ, Reach ({form})"
            lean_steps = ["intro x y", "induction y with", "| zero =>", "  induction x with",
                          "  | zero => exact Reach.base", "  | succ x ih =>",
                          f"    have e : {c} + {a} * (x + 1) + {b} * 0 = ({c} + {a} * x + {b} * 0) + {a} := by ring",
                          "    rw [e]", "    exact Reach.a _ ih", "| succ y ih =>",
                          f"  have e : {c} + {a} * x + {b} * (y + 1) = ({c} + {a} * x + {b} * y) + {b} := by ring",
                          "  rw [e]", "  exact Reach.b _ ih"]
            isa_prop = f"reach ({form})"
            isa_steps = ["proof (induct y)", "  case 0", "  show ?case", "  proof (induct x)", "    case 0",
                         "    then show ?case using base by simp", "  next", "    case (Suc x)",
                         ("    then show ?case using a[of \"" f"{c} + {a} * x\"] by (simp add: algebra_simps)"),
                         "  qed", "next", "  case (Suc y)",
                         ("  then show ?case using b[of \"" f"{c} + {a} * x + {b} * y\"] by (simp add: algebra_simps)"),
                         "qed"]
        else:
            proof = ["intros k.", "induction k as [| k IH].",
                     f"- replace ({c} + {a} * 0) with {c} by lia. apply reach_base.",
                     f"- replace ({c} + {a} * S k) with ({c} + {a} * k + {a}) by lia. apply reach_step. exact IH."]
            prop, lean_prop = f"forall k : nat, reach ({form})", f"∀ k : ℕ, Reach ({form})"
            lean_steps = ["intro k", "induction k with", "| zero => exact Reach.base", "| succ k ih =>",
                          f"  have e : {c} + {a} * (k + 1) = ({c} + {a} * k) + {a} := by ring", "  rw [e]",
                          "  exact Reach.step _ ih"]
            isa_prop = f"reach ({form})"
            isa_steps = ["proof (induct k)", "  case 0", "  then show ?case using base by simp", "next",
                         "  case (Suc k)", ("  then show ?case using step[of \"" f"{c} + {a} * k\"] by simp"), "qed"]
        return make(name, "inductive", 2, f"reach holds of {c} plus every sum of {ways}.", abstract,
                    coq(header, name, prop, proof), lean(lean_defs, name, "", lean_prop, lean_steps),
                    isabelle(name, "Main", isa_defs, isa_prop, isa_steps))
    if kind == "gap":
        reachable = _semigroup(c, steps_, c + 80)
        m = rng.choice([n for n in range(c + 1, c + 61) if n not in reachable])
        abstract["m"] = m
        if two:
            lemma = [f"assert (G : forall n, reach n -> exists x y, n = {form}).",
                     "- intros n Hn. induction Hn as [| n Hn IH | n Hn IH].", "  + exists 0, 0. lia.",
                     "  + destruct IH as [x [y Hxy]]. exists (S x), y. lia.",
                     "  + destruct IH as [x [y Hxy]]. exists x, (S y). lia.",
                     f"- destruct (G {m} H) as [x [y Hxy]]. lia."]
            lean_have = [f"have key : ∀ n, Reach n → ∃ x y : ℕ, n = {form} := by", "  intro n hn",
                         "  induction hn with", "  | base => exact ⟨0, 0, by omega⟩",
                         "  | a n _ ih => obtain ⟨x, y, e⟩ := ih; exact ⟨x + 1, y, by omega⟩",
                         "  | b n _ ih => obtain ⟨x, y, e⟩ := ih; exact ⟨x, y + 1, by omega⟩",
                         f"obtain ⟨x, y, e⟩ := key {m} h", "omega"]
            isa_have = f"\\<exists>x y. n = {form}"
        else:
            lemma = [f"assert (G : forall n, reach n -> exists k, n = {form}).",
                     "- intros n Hn. induction Hn as [| n Hn IH].", "  + exists 0. lia.",
                     "  + destruct IH as [k Hk]. exists (S k). lia.", f"- destruct (G {m} H) as [k Hk]. lia."]
            lean_have = [f"have key : ∀ n, Reach n → ∃ k : ℕ, n = {form} := by", "  intro n hn",
                         "  induction hn with", "  | base => exact ⟨0, by omega⟩",
                         "  | step n _ ih => obtain ⟨k, e⟩ := ih; exact ⟨k + 1, by omega⟩",
                         f"obtain ⟨k, e⟩ := key {m} h", "omega"]
            isa_have = f"\\<exists>k. n = {form}"
        isa_steps = ["proof", f'  assume "reach {m}"', f'  moreover have "reach n \\<Longrightarrow> {isa_have}" for n',
                     "    by (induct rule: reach.induct) presburger+", "  ultimately show False by presburger", "qed"]
        return make(name, "inductive", 3, f"reach, which holds of {c} and is closed under adding "
                    f"{' and '.join(map(str, steps_))}, does not hold of {m}.", abstract,
                    coq(header, name, f"~ reach {m}", ["intros H."] + lemma),
                    lean(lean_defs, name, "", f"¬ Reach {m}", ["intro h"] + lean_have),
                    isabelle(name, "Main", isa_defs, f"\\<not> reach {m}", isa_steps))
    j = rng.randint(2, 5)
    abstract["j"] = j
    target = " + ".join(["n"] + [str(a)] * j)
    proof = ["intros n H.", f"replace (n + {j * a}) with ({target}) by lia."] + \
            ["apply reach_step." for _ in range(j)] + ["exact H."]
    lean_steps = ["intro n h", f"have e : n + {j * a} = {target} := by ring", "rw [e]"] + \
                 ["apply Reach.step" for _ in range(j)] + ["exact h"]
    return make(name, "inductive", 1, f"If reach holds of n it holds of n + {j * a}.", abstract,
                coq(header, name, f"forall n : nat, reach n -> reach (n + {j * a})", proof),
                lean(lean_defs, name, "", f"∀ n : ℕ, Reach n → Reach (n + {j * a})", lean_steps),
                isabelle(name, "Main", isa_defs, f"reach n \\<Longrightarrow> reach (n + {j * a})",
                         ["proof -", '  assume h: "reach n"', f'  have "reach ({target})" by (intro step) (rule h)',
                          "  then show ?thesis by (simp add: add.assoc)", "qed"]))


# ---------------------------------------------------------------- functions: accumulators, closed forms, cases

def functions(rng: random.Random, name: str) -> Theorem:
    kind = rng.choice(["acc_spec", "acc_closed", "pow_acc", "piecewise"])
    if kind in ("acc_spec", "acc_closed"):
        a, b, c = rng.randint(1, 9), rng.randint(0, 9), rng.randint(1, 30)
        if kind == "acc_spec":
            term = lin(a, "m", b)
            spec = (f"Fixpoint spec (n : nat) : nat :=\n  match n with\n  | 0 => 0\n"
                    f"  | S m => spec m + ({term})\n  end.\n\n")
            lean_spec = f"def spec : ℕ → ℕ\n  | 0 => 0\n  | m + 1 => spec m + ({term})\n\n"
            isa_spec = (f'fun spec :: "nat \\<Rightarrow> nat" where\n  "spec 0 = 0"\n'
                        f'| "spec (Suc m) = spec m + ({term})"\n\n')
            rhs, rhs_gen = f"spec n + {c}", "spec n + acc"
            informal = f"go n {c}, which adds {term} for m = n-1 down to 0 onto an accumulator, is spec n + {c}."
        else:
            term = plus(lin(a, "(2 * m + 1)"), b)
            spec = lean_spec = isa_spec = ""
            closed = plus(f"{a} * n * n" if a > 1 else "n * n", lin(b, "n") if b else 0)
            rhs, rhs_gen = f"{closed} + {c}", f"{closed} + acc"
            informal = f"go n {c}, which adds {term} for m = n-1 down to 0 onto an accumulator, is {closed} + {c}."
        defs = (f"{spec}Fixpoint go (n acc : nat) : nat :=\n  match n with\n  | 0 => acc\n"
                f"  | S m => go m (acc + ({term}))\n  end.")
        lean_defs = f"{lean_spec}def go : ℕ → ℕ → ℕ\n  | 0, acc => acc\n  | m + 1, acc => go m (acc + ({term}))"
        isa_defs = (f'{isa_spec}fun go :: "nat \\<Rightarrow> nat \\<Rightarrow> nat" where\n  "go 0 acc = acc"\n'
                    f'| "go (Suc m) acc = go m (acc + ({term}))"')
        steps = [f"assert (G : forall n acc, go n acc = {rhs_gen}).", "- induction n as [| m IH]; intros acc.",
                 "  + reflexivity.", "  + simpl. rewrite IH. lia.", "- intros n. apply G."]
        unfold = "go, spec" if kind == "acc_spec" else "go"
        lean_steps = [f"have key : ∀ n acc : ℕ, go n acc = {rhs_gen} := by", "  intro n", "  induction n with",
                      f"  | zero => intro acc; simp [{unfold}]",
                      f"  | succ m ih => intro acc; simp only [{unfold}, ih]; ring", f"exact key n {c}"]
        isa_steps = ["proof -", f'  have "\\<And>acc. go n acc = {rhs_gen}"',
                     "    by (induct n) (auto simp: algebra_simps)", "  then show ?thesis by simp", "qed"]
        return make(name, "functions", 2, informal, {"kind": kind, "a": a, "b": b, "c": c},
                    coq(f"Require Import Arith Lia.\n\n{defs}", name, f"forall n : nat, go n {c} = {rhs}", steps),
                    lean(lean_defs, name, "(n : ℕ)", f"go n {c} = {rhs}", lean_steps),
                    isabelle(name, "Main", isa_defs, f"go n {c} = {rhs}", isa_steps))
    if kind == "pow_acc":
        a, c = rng.randint(2, 9), rng.randint(1, 30)
        defs = (f"Fixpoint pow_acc (n acc : nat) : nat :=\n  match n with\n  | 0 => acc\n"
                f"  | S m => pow_acc m ({a} * acc)\n  end.")
        steps = [f"assert (G : forall n acc, pow_acc n acc = acc * {a} ^ n).",
                 "- induction n as [| m IH]; intros acc.", "  + simpl. lia.", "  + simpl. rewrite IH. ring.",
                 "- intros n. apply G."]
        lean_defs = f"def powAcc : ℕ → ℕ → ℕ\n  | 0, acc => acc\n  | m + 1, acc => powAcc m ({a} * acc)"
        lean_steps = [f"have key : ∀ n acc : ℕ, powAcc n acc = acc * {a} ^ n := by", "  intro n", "  induction n with",
                      "  | zero => intro acc; simp [powAcc]",
                      "  | succ m ih => intro acc; simp only [powAcc, ih, pow_succ]; ring", f"exact key n {c}"]
        isa_defs = (f'fun pow_acc :: "nat \\<Rightarrow> nat \\<Rightarrow> nat" where\n  "pow_acc 0 acc = acc"\n'
                    f'| "pow_acc (Suc m) acc = pow_acc m ({a} * acc)"')
        isa_steps = ["proof -", f'  have "\\<And>acc. pow_acc n acc = acc * {a} ^ n"',
                     "    by (induct n) (auto simp: algebra_simps)", "  then show ?thesis by simp", "qed"]
        return make(name, "functions", 2, f"pow_acc n {c}, which multiplies an accumulator by {a} n times, is "
                    f"{c} * {a}^n.", {"kind": kind, "a": a, "c": c},
                    coq(f"Require Import Arith Lia.\n\n{defs}", name, f"forall n : nat, pow_acc n {c} = {c} * {a} ^ n",
                        steps),
                    lean(lean_defs, name, "(n : ℕ)", f"powAcc n {c} = {c} * {a} ^ n", lean_steps),
                    isabelle(name, "Main", isa_defs, f"pow_acc n {c} = {c} * {a} ^ n", isa_steps))
    # piecewise linear: monotone (or strictly increasing) needs both arguments split at the breakpoint
    k, a1, a2 = rng.randint(2, 20), rng.randint(1, 5), rng.randint(1, 6)
    b1 = rng.randint(0, 20)
    strict = rng.random() < 0.5
    low = a1 * k + b1 - a2 * (k + 1) + (1 if strict else 0)  # f(k) <= f(k+1) (strict: <)
    b2 = rng.randint(max(0, low), max(0, low) + 20)
    body_c = f"if Nat.leb n {k} then {lin(a1, 'n', b1)} else {lin(a2, 'n', b2)}"
    rel, lean_rel, isa_rel = ("<", "<", "<") if strict else ("<=", "≤", "\\<le>")
    steps = ["intros x y H.", "unfold f.", f"destruct (Nat.leb_spec x {k}), (Nat.leb_spec y {k}); lia."]
    word = "strictly increasing" if strict else "monotone"
    return make(name, "functions", 1, f"f(n) = {lin(a1, 'n', b1)} for n <= {k}, else {lin(a2, 'n', b2)}, is {word}.",
                {"kind": kind, "k": k, "a1": a1, "b1": b1, "a2": a2, "b2": b2, "strict": strict},
                coq(f"Require Import Arith Lia.\n\nDefinition f (n : nat) : nat :=\n  {body_c}.", name,
                    f"forall x y : nat, x {rel} y -> f x {rel} f y", steps),
                lean(f"def f (n : ℕ) : ℕ := if n ≤ {k} then {lin(a1, 'n', b1)} else {lin(a2, 'n', b2)}", name, "",
                     f"∀ x y : ℕ, x {lean_rel} y → f x {lean_rel} f y",
                     ["intro x y h", "unfold f", "split_ifs <;> omega"]),
                isabelle(name, "Main", f'definition f :: "nat \\<Rightarrow> nat" where\n  "f n = (if n \\<le> {k} '
                         f'then {lin(a1, "n", b1)} else {lin(a2, "n", b2)})"',
                         f"x {isa_rel} y \\<Longrightarrow> f x {isa_rel} f y", ["by (auto simp: f_def)"]))


GENERATORS: dict[str, Callable[[random.Random, str], Theorem]] = {
    "parity": parity, "divisibility": divisibility, "primality": primality, "lists": lists,
    "trees": trees, "inductive": inductive, "functions": functions,
}


def template_of(thm: Theorem) -> str:
    """The template a theorem was made from: topic, kind, and for inductive predicates how many
    step constructors ``reach`` has (one and two give different proofs)."""
    kind = thm.abstract["kind"]
    steps = thm.abstract.get("steps")
    return f"{thm.topic}/{kind}" + (f"/{len(steps)}-step" if steps else "")
