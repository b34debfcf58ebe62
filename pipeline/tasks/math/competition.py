"""Multi-step competition-style problem families: sequences, counting, number theory, functions and
chained word problems.

Unlike the one-formula drills of ``algebra`` and ``geometry``, each family here chains several
concepts, and its worked solution is built from the problem's own parameters: a recurrence is
unrolled once per term asked for (or solved in closed form when that is shorter), the Euclidean
algorithm takes one step per division, a committee count adds one case per admissible size, a
piecewise function is applied once per iteration with the branch its argument selects. So the
plan (its length, its branches, its knowledge points) differs between problems of one cell, and
the five levels add concepts: the level order is checked on the measured size of the golden
solution (worked steps, calculator calls, knowledge points; ``tests/test_math_competition.py``).

Each family computes its answer three ways: the worked solution (every calculation a calculator
call of the golden trace), sympy directly (``rsolve``, ``summation``, ``binomial`` sums,
``divisor_count``, ``crt``, ``solve``), and a second, independent method that does not use the
formula: brute-force enumeration (committees, multiples, residues, unit cubes), iteration of the
recurrence, or exact substitution.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import sympy as sp
from sympy.ntheory.modular import crt as sympy_crt

from pipeline.tasks.math.core import C, D, F, Family, K, M, P, S, Solution, T, V, nonzero, x

CALC = ("calculation_error", "sign_error")
ARITH = ("calculation_error",)
NAMES = ("Ava", "Ben", "Chloe", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jonas", "Kemal", "Lena",
         "Mateo", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wen", "Yusuf")
Z = sp.Integer


def _ord(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _signed(v) -> str:
    """'+ 3' or '- 3' for writing a term after another."""
    v = sp.Rational(v)
    return f"- {abs(v)}" if v < 0 else f"+ {v}"


# ==== 1. sequences: arithmetic, geometric and recursive ===========================================
# L1 arithmetic term or sum; L2 arithmetic sequence from two of its terms; L3 first-order linear
# recurrence (unrolled for a near term, closed form for a far one); L4 geometric sequence from two
# terms, the ratio's sign decided when the gap is even; L5 second-order recurrence, sum of n terms.
def _seq_draw(rng, level):
    if level == 1:
        return {"kind": "arith", "a1": nonzero(rng, -60, 60), "d": nonzero(rng, -15, 15), "n": rng.randint(6, 90),
                "ask": rng.choice(["term", "sum"])}
    if level == 2:
        i = rng.randint(1, 9)
        j = i + rng.randint(2, 12)
        return {"kind": "arith2", "a1": nonzero(rng, -60, 60), "d": nonzero(rng, -15, 15), "i": i, "j": j,
                "n": rng.randint(j + 1, 80), "ask": rng.choice(["term", "sum"])}
    if level == 3:
        return {"kind": "linrec", "a1": nonzero(rng, -12, 12), "r": rng.choice([-3, -2, 2, 3, 4]),
                "c": nonzero(rng, -15, 15), "n": rng.randint(5, 12)}
    if level == 4:
        gap = rng.choice([1, 2, 2, 3])
        i = rng.randint(1, 4)
        return {"kind": "geo2", "a1": nonzero(rng, -15, 15), "r": rng.choice([-5, -4, -3, -2, 2, 3, 4, 5]),
                "i": i, "j": i + gap, "n": rng.randint(4, 10)}
    while True:
        r1, r2 = rng.sample([-3, -2, -1, 1, 2, 3, 4], 2)
        a1, a2 = rng.randint(-9, 9), rng.randint(-9, 9)
        if (a1, a2) != (0, 0) and r1 + r2 != 0:
            return {"kind": "rec2", "p": r1 + r2, "q": -r1 * r2, "a1": a1, "a2": a2, "n": rng.randint(7, 11)}


def _geo_term(p, k):
    return Z(p["a1"]) * Z(p["r"]) ** (k - 1)


def _seq_prompt(p):
    kind = p["kind"]
    if kind == "arith":
        what = f"its {_ord(p['n'])} term" if p["ask"] == "term" else f"the sum of its first {p['n']} terms"
        return (f"An arithmetic sequence has first term {p['a1']} and common difference {p['d']}. Find {what}.")
    if kind == "arith2":
        ti, tj = p["a1"] + (p["i"] - 1) * p["d"], p["a1"] + (p["j"] - 1) * p["d"]
        what = f"its {_ord(p['n'])} term" if p["ask"] == "term" else f"the sum of its first {p['n']} terms"
        return (f"The {_ord(p['i'])} term of an arithmetic sequence is {ti} and its {_ord(p['j'])} term is {tj}. "
                f"Find {what}.")
    if kind == "linrec":
        return (f"A sequence has a(1) = {p['a1']} and a(k+1) = {p['r']}*a(k) {_signed(p['c'])} for k >= 1. "
                f"Find a({p['n']}).")
    if kind == "geo2":
        ti, tj = _geo_term(p, p["i"]), _geo_term(p, p["j"])
        hint = ""
        if (p["j"] - p["i"]) % 2 == 0:
            hint = f" and its common ratio is {'negative' if p['r'] < 0 else 'positive'}"
        return (f"The {_ord(p['i'])} term of a geometric sequence is {ti}, its {_ord(p['j'])} term is {tj}{hint}. "
                f"Find the sum of its first {p['n']} terms.")
    q = p["q"]
    rule = f"a(k+2) = {p['p']}*a(k+1) {'+' if q >= 0 else '-'} {abs(q)}*a(k)"
    return (f"A sequence has a(1) = {p['a1']}, a(2) = {p['a2']} and {rule} for k >= 1. "
            f"Find a(1) + a(2) + ... + a({p['n']}).")


def _arith_tail(s: Solution, a1, d, n: int, ask: str):
    """The nth term, and the sum when asked, from a1 and d."""
    if ask == "term":
        s.step(T, "recall the nth-term formula of an arithmetic sequence", "a(n) = a(1) + (n - 1)*d.",
               search=("arithmetic sequence nth term common difference", "alg.arithmetic-sequence"))
        return s.step(K, "evaluate the nth term", f"a({n}) = {a1} + ({n} - 1)*({d}) = {{v}}", a1 + (n - 1) * d,
                      errors=CALC, wrong=a1 + n * d, calc=f"({a1}) + ({n} - 1)*({d})")
    s.step(T, "recall the sum formula of an arithmetic sequence", "S(n) = n*(a(1) + a(n))/2.",
           search=("sum of arithmetic sequence first n terms", "alg.arithmetic-sequence-sum"))
    last = s.step(K, "compute the last term of the sum", f"a({n}) = {a1} + ({n} - 1)*({d}) = {{v}}", a1 + (n - 1) * d,
                  errors=CALC, calc=f"({a1}) + ({n} - 1)*({d})")
    return s.step(K, "add the terms with the first-plus-last formula", f"S = {n}*({a1} + ({last}))/2 = {{v}}",
                  n * (a1 + last) / 2, errors=CALC, wrong=n * (a1 + last), calc=f"{n}*(({a1}) + ({last}))/2")


def _seq_solve(p, s: Solution):
    kind = p["kind"]
    if kind == "arith":
        a1, d = s.step(S, "read the first term and the common difference", "a(1), d = {v}", (Z(p["a1"]), Z(p["d"])),
                       errors=("transcription_error", "sign_error"))
        value = _arith_tail(s, a1, d, p["n"], p["ask"])
        s.step(V, "check against the first terms written out", f"a(1), a(2), a(3) = {a1}, {a1 + d}, {a1 + 2 * d}.")
        return value
    if kind == "arith2":
        i, j = p["i"], p["j"]
        ti, tj = s.step(S, "read the two given terms and their positions", f"a({i}), a({j}) = {{v}}",
                        (Z(p["a1"] + (i - 1) * p["d"]), Z(p["a1"] + (j - 1) * p["d"])),
                        errors=("transcription_error", "sign_error"))
        d = s.step(K, "compute the common difference from the two terms",
                   f"d = ({tj} - ({ti}))/({j} - {i}) = {{v}}", (tj - ti) / (j - i), errors=CALC,
                   wrong=(tj - ti) / (j - i + 1), calc=f"(({tj}) - ({ti}))/({j} - {i})")
        if i == 1:
            a1 = s.step(D, "note that the first given term is already the first term", "a(1) = {v}", ti)
        else:
            a1 = s.step(K, "step back from the given term to the first term", f"a(1) = {ti} - ({i} - 1)*({d}) = {{v}}",
                        ti - (i - 1) * d, errors=CALC, wrong=ti - i * d, calc=f"({ti}) - ({i} - 1)*({d})")
        value = _arith_tail(s, a1, d, p["n"], p["ask"])
        s.step(V, "check that the sequence found passes through both given terms",
               f"a({i}) = {a1 + (i - 1) * d}, a({j}) = {a1 + (j - 1) * d}.")
        return value
    if kind == "linrec":
        return _linrec_solve(p, s)
    if kind == "geo2":
        return _geo2_solve(p, s)
    return _rec2_solve(p, s)


def _linrec_solve(p, s: Solution):
    n = p["n"]
    a1, r, c = s.step(S, "read the first term, the multiplier and the constant of the rule", "a(1), r, c = {v}",
                      (Z(p["a1"]), Z(p["r"]), Z(p["c"])), errors=("transcription_error", "sign_error"))
    if n <= 8:
        s.step(C, "decide to unroll the recurrence term by term (few terms are needed)",
               f"Only {n - 1} applications of the rule are needed, so compute the terms one by one.",
               search=("recursive sequence initial term rule", "alg.recursive-sequence"))
        term = a1
        for k in range(2, n + 1):
            term = s.step(K, "apply the rule to get the next term", f"a({k}) = {r}*({term}) + ({c}) = {{v}}", r * term + c,
                          errors=CALC, calc=f"({r})*({term}) + ({c})")
        s.step(V, "check one step backwards", f"(a({n}) - ({c}))/{r} = {(term - c) / r}.")
        return term
    s.step(T, "use the closed form of a first-order linear recurrence (many terms are needed)",
           "With the fixed point L = c/(1 - r): a(n) = L + (a(1) - L)*r^(n - 1).",
           search=("first order linear recurrence fixed point closed form", "alg.linear-recurrence"))
    fixed = s.step(K, "compute the fixed point", f"L = {c}/(1 - ({r})) = {{v}}", c / (1 - r), errors=CALC,
                   wrong=c / (1 + r), calc=f"({c})/(1 - ({r}))")
    gap = s.step(K, "compute the distance of the first term from the fixed point", f"a(1) - L = {a1} - ({fixed}) = {{v}}",
                 a1 - fixed, errors=CALC, calc=f"({a1}) - ({fixed})")
    power = s.step(K, "raise the multiplier to the power n - 1", f"({r})^{n - 1} = {{v}}", r ** (n - 1), errors=CALC,
                   wrong=r ** n, calc=f"({r})**{n - 1}")
    term = s.step(K, "combine into the nth term", f"a({n}) = {fixed} + ({gap})*({power}) = {{v}}", fixed + gap * power,
                  errors=CALC, calc=f"({fixed}) + ({gap})*({power})")
    s.step(V, "check the closed form at n = 2", f"L + (a(1) - L)*r = {fixed + gap * r}, rule gives {r * a1 + c}.")
    return term


def _geo2_solve(p, s: Solution):
    i, j, n = p["i"], p["j"], p["n"]
    gap = j - i
    ti, tj = s.step(S, "read the two given terms and their positions", f"a({i}), a({j}) = {{v}}",
                    (_geo_term(p, i), _geo_term(p, j)), errors=("transcription_error", "sign_error"))
    s.step(T, "recall the nth-term formula of a geometric sequence", "a(n) = a(1)*r^(n - 1), so a(j)/a(i) = r^(j - i).",
           search=("geometric sequence nth term common ratio", "alg.geometric-sequence"))
    ratio_power = s.step(K, "divide the later term by the earlier one", f"r^{gap} = {tj}/({ti}) = {{v}}", tj / ti,
                         errors=CALC, calc=f"({tj})/({ti})")
    if gap == 1:
        r = ratio_power
    else:
        negative = p["r"] < 0 if gap % 2 == 0 else bool(ratio_power < 0)
        if gap % 2 == 0:
            s.step(D, "choose the real root with the sign the problem states",
                   f"r^{gap} = {ratio_power} has two real roots; the ratio is {'negative' if negative else 'positive'}.")
        r = s.step(K, "take the real root of that order", "r = {v}",
                   (-1 if negative else 1) * sp.root(abs(ratio_power), gap), errors=("sign_error",),
                   calc=f"{'-' if negative else ''}root({abs(ratio_power)}, {gap})")
    if i == 1:
        a1 = s.step(D, "note that the first given term is the first term", "a(1) = {v}", ti)
    else:
        a1 = s.step(K, "divide back to the first term", f"a(1) = {ti}/({r})^{i - 1} = {{v}}", ti / r ** (i - 1),
                    errors=CALC, wrong=ti / r**i, calc=f"({ti})/({r})**{i - 1}")
    s.step(T, "recall the sum formula of a geometric sequence", "S(n) = a(1)*(r^n - 1)/(r - 1).",
           search=("sum of geometric sequence first n terms ratio", "alg.geometric-sequence-sum"))
    power = s.step(K, "compute r^n", f"({r})^{n} = {{v}}", r**n, errors=CALC, calc=f"({r})**{n}")
    total = s.step(K, "evaluate the sum formula", f"S = {a1}*({power} - 1)/({r} - 1) = {{v}}",
                   a1 * (power - 1) / (r - 1), errors=CALC, wrong=a1 * (power - 1) / (r + 1),
                   calc=f"({a1})*(({power}) - 1)/(({r}) - 1)")
    s.step(V, "check that the ratio reproduces the later given term", f"{a1}*({r})^{j - 1} = {a1 * r ** (j - 1)}.")
    return total


def _rec2_solve(p, s: Solution):
    n = p["n"]
    a1, a2, pp, q = s.step(S, "read the first two terms and the coefficients of the rule", "a(1), a(2), p, q = {v}",
                           (Z(p["a1"]), Z(p["a2"]), Z(p["p"]), Z(p["q"])), errors=("transcription_error", "sign_error"))
    s.step(C, "recall that each term follows from the two before it",
           "A second-order recurrence is fixed by its first two terms; compute the terms in order.",
           search=("second order linear recurrence two previous terms", "alg.second-order-recurrence"))
    terms = [a1, a2]
    for k in range(3, n + 1):
        terms.append(s.step(K, "compute the next term from the two before it",
                            f"a({k}) = {pp}*({terms[-1]}) + ({q})*({terms[-2]}) = {{v}}",
                            pp * terms[-1] + q * terms[-2], errors=CALC,
                            calc=f"({pp})*({terms[-1]}) + ({q})*({terms[-2]})"))
    total = s.step(K, "add the terms", f"{' + '.join(f'({t})' for t in terms)} = {{v}}", sp.Add(*terms),
                   errors=CALC, calc=" + ".join(f"({t})" for t in terms))
    s.step(V, "check the last term against the rule once more",
           f"{pp}*({terms[-2]}) + ({q})*({terms[-3]}) = {pp * terms[-2] + q * terms[-3]}.")
    return total


def _seq_direct(p):
    k = sp.Symbol("k", integer=True, positive=True)
    a = sp.Function("a")
    kind = p["kind"]
    if kind in ("arith", "arith2"):
        general = p["a1"] + (k - 1) * p["d"]
        return general.subs(k, p["n"]) if p["ask"] == "term" else sp.summation(general, (k, 1, p["n"]))
    if kind == "geo2":
        return sp.summation(p["a1"] * sp.Integer(p["r"]) ** (k - 1), (k, 1, p["n"]))
    if kind == "linrec":
        closed = sp.rsolve(a(k + 1) - p["r"] * a(k) - p["c"], a(k), {a(1): p["a1"]})
        return sp.nsimplify(sp.expand(closed.subs(k, p["n"])))
    closed = sp.rsolve(a(k + 2) - p["p"] * a(k + 1) - p["q"] * a(k), a(k), {a(1): p["a1"], a(2): p["a2"]})
    return sp.nsimplify(sp.expand(sum(closed.subs(k, i) for i in range(1, p["n"] + 1))))


def _seq_second(p, ans):
    """Iterate the definition with exact fractions; no formula."""
    kind, n = p["kind"], p["n"]
    if kind in ("arith", "arith2"):
        terms = [Fraction(p["a1"])]
        while len(terms) < n:
            terms.append(terms[-1] + p["d"])
        value = terms[-1] if p["ask"] == "term" else sum(terms)
    elif kind == "geo2":
        terms = [Fraction(p["a1"])]
        while len(terms) < n:
            terms.append(terms[-1] * p["r"])
        value = sum(terms)
    elif kind == "linrec":
        value = Fraction(p["a1"])
        for _ in range(n - 1):
            value = p["r"] * value + p["c"]
    else:
        terms = [Fraction(p["a1"]), Fraction(p["a2"])]
        while len(terms) < n:
            terms.append(p["p"] * terms[-1] + p["q"] * terms[-2])
        value = sum(terms)
    return sp.Rational(value.numerator, value.denominator) == ans


# ==== 2. counting committees =====================================================================
# L1 exactly j members of group A; L2 at least j (cases, or the complement when it has fewer cases);
# L3 exactly j and two people who refuse to serve together; L4 at least j with that pair; L5 as L4,
# then a chair from group A and a secretary chosen from the committee.
_GROUPS = (("club", "women", "men", "woman", "man"), ("school board", "teachers", "parents", "teacher", "parent"),
           ("hospital", "nurses", "doctors", "nurse", "doctor"), ("lab", "chemists", "physicists", "chemist", "physicist"),
           ("orchestra", "violinists", "cellists", "violinist", "cellist"),
           ("start-up", "engineers", "designers", "engineer", "designer"),
           ("debating society", "juniors", "seniors", "junior", "senior"),
           ("newsroom", "reporters", "editors", "reporter", "editor"))


def _com_draw(rng, level):
    while True:
        m, w = rng.randint(3, 10), rng.randint(3, 10)
        k = rng.randint(3, 6)
        j = rng.randint(1, k - 1)
        if m + w > 16 or j > m:
            continue
        p = {"m": m, "w": w, "k": k, "j": j, "ctx": rng.randrange(len(_GROUPS)), "names": rng.sample(range(len(NAMES)), 2),
             "mode": "exactly" if level in (1, 3) else "at_least"}
        if level >= 3:
            p["pair"] = rng.choice(["AA", "AB"])
        if level == 5:
            p["roles"] = True
        cases = _com_cases(p)
        if not cases or (level in (2, 4, 5) and len(cases) < 2):
            continue
        if level >= 3 and all(_both_in(p, i) == 0 for i in cases):
            continue
        return p


def _com_cases(p) -> list[int]:
    """Numbers i of group-A members the committee may have."""
    hi = p["k"] if p["mode"] == "at_least" else p["j"]
    return [i for i in range(p["j"], hi + 1) if i <= p["m"] and p["k"] - i <= p["w"]]


def _com_prompt(p):
    place, a_pl, b_pl, a_one, _b_one = _GROUPS[p["ctx"]]
    n1, n2 = (NAMES[i] for i in p["names"])
    amount = f"exactly {p['j']}" if p["mode"] == "exactly" else f"at least {p['j']}"
    text = (f"A {place} has {p['m']} {a_pl} and {p['w']} {b_pl}. A committee of {p['k']} is chosen with {amount} "
            f"{a_one if p['j'] == 1 else a_pl}")
    if p.get("pair") == "AA":
        text += f", and two of the {a_pl}, {n1} and {n2}, refuse to serve together"
    elif p.get("pair") == "AB":
        text += f", and {n1} (one of the {a_pl}) and {n2} (one of the {b_pl}) refuse to serve together"
    text += "."
    if p.get("roles"):
        article = "an" if a_one[0] in "aeiou" else "a"
        text += (f" The committee then names a chair, who must be {article} {a_one}, and a secretary, any other member. "
                 "In how many ways can the committee and the two roles be chosen?")
    else:
        text += " How many different committees are possible?"
    return text


def _both_in(p, i):
    """Committees with i members of A that contain both members of the pair."""
    m, w, k = p["m"], p["w"], p["k"]
    if p["pair"] == "AA":
        return sp.binomial(m - 2, i - 2) * sp.binomial(w, k - i) if i >= 2 else Z(0)
    return sp.binomial(m - 1, i - 1) * sp.binomial(w - 1, k - i - 1) if i >= 1 and k - i >= 1 else Z(0)


def _both_in_text(p, i) -> str:
    m, w, k = p["m"], p["w"], p["k"]
    if p["pair"] == "AA":
        return f"binomial({m - 2}, {i - 2})*binomial({w}, {k - i})"
    return f"binomial({m - 1}, {i - 1})*binomial({w - 1}, {k - i - 1})"


def _com_solve(p, s: Solution):
    m, w, k, j = (Z(p[key]) for key in ("m", "w", "k", "j"))
    cases = _com_cases(p)
    pair = p.get("pair")
    s.step(M, "model a committee as a choice of i members of group A and k - i of group B",
           f"Group A has {m}, group B has {w}; a committee takes i from A and {k} - i from B.")
    s.step(T, "recall how to count selections from two groups",
           "Exactly i from A: C(a, i)*C(b, k - i); the cases for different i add up.",
           search=("committee choose members from two groups combinations", "cmb.committee-selection"))
    if p["mode"] == "exactly" and not pair:
        ca = _choose(s, m, j, "count the ways to choose the members from group A")
        cb = _choose(s, w, k - j, "count the ways to choose the members from group B")
        total = s.step(K, "multiply the two counts", f"{ca}*{cb} = {{v}}", ca * cb, errors=ARITH, calc=f"{ca}*{cb}")
        s.step(V, "check the size of the count against all committees", f"{total} <= C({m + w}, {k}) = "
               f"{sp.binomial(m + w, k)}.")
        return total
    if p["mode"] == "exactly":
        ca = _choose(s, m, j, "count the ways to choose the members from group A")
        cb = _choose(s, w, k - j, "count the ways to choose the members from group B")
        every = s.step(K, "multiply the two counts", f"{ca}*{cb} = {{v}}", ca * cb, errors=ARITH, calc=f"{ca}*{cb}")
        s.step(T, "count the forbidden committees and subtract them (complement)",
               "Committees where the two serve together are removed from the count.",
               search=("complement counting subtract unwanted forbidden pair", "cmb.complement-counting"))
        both = s.step(K, "count the committees that contain both of the pair", f"{_both_in_text(p, int(j))} = {{v}}",
                      _both_in(p, int(j)), errors=ARITH, calc=_both_in_text(p, int(j)))
        total = s.step(K, "subtract the forbidden committees", f"{every} - {both} = {{v}}", every - both, errors=CALC,
                       wrong=every + both, calc=f"{every} - {both}")
        s.step(V, "check that the result is positive and below the unrestricted count", f"0 < {total} <= {every}.")
        return total
    if not pair:
        return _com_at_least(p, s, cases)
    s.step(D, "list the admissible numbers of group-A members", f"i = {', '.join(map(str, cases))}.")
    s.step(T, "remove the committees in which the pair serves together, case by case",
           "In each case subtract the committees that contain both of the pair.",
           search=("complement counting subtract unwanted forbidden pair", "cmb.complement-counting"))
    if p.get("roles"):
        s.step(T, "count the ordered choice of chair and secretary",
               "Chair: one of the i members from A; secretary: one of the other k - 1 members.",
               search=("permutations ordered selection chair secretary", "cmb.permutations"))
    parts = []
    for i in cases:
        every = s.step(K, "count the committees of this case", f"C({m}, {i})*C({w}, {k - i}) = {{v}}",
                       sp.binomial(m, i) * sp.binomial(w, k - i), errors=ARITH,
                       calc=f"binomial({m}, {i})*binomial({w}, {k - i})")
        allowed = s.step(K, "remove the committees of this case that contain both of the pair",
                         f"{every} - {_both_in_text(p, i)} = {{v}}", every - _both_in(p, i), errors=CALC,
                         calc=f"{every} - {_both_in_text(p, i)}")
        if p.get("roles"):
            allowed = s.step(K, "multiply by the chair and secretary choices of this case",
                             f"{allowed}*{i}*({k} - 1) = {{v}}", allowed * i * (k - 1), errors=ARITH,
                             wrong=allowed * k * (k - 1), calc=f"{allowed}*{i}*({k} - 1)")
        parts.append(allowed)
    total = s.step(K, "add the cases", f"{' + '.join(map(str, parts))} = {{v}}", sp.Add(*parts), errors=ARITH,
                   calc=" + ".join(map(str, parts)))
    s.step(V, "check that no case was double counted", "The cases differ in the number of group-A members.")
    return total


def _com_at_least(p, s: Solution, cases):
    m, w, k = Z(p["m"]), Z(p["w"]), Z(p["k"])
    below = [i for i in range(p["j"]) if i <= p["m"] and p["k"] - i <= p["w"]]
    if not below:
        s.step(D, "notice that every committee meets the bound", f"Group B has only {w} members, so every committee "
               "has enough members from group A.")
        total = s.step(K, "count all committees", f"C({m + w}, {k}) = {{v}}", sp.binomial(m + w, k), errors=ARITH,
                       calc=f"binomial({m + w}, {k})")
    elif len(below) < len(cases):
        s.step(D, "count the complement: fewer cases lie below the bound than above it",
               f"Cases below: i = {', '.join(map(str, below))}; cases wanted: {len(cases)}.")
        s.step(T, "recall counting by the complement", "wanted = all committees - unwanted ones.",
               search=("complement counting subtract unwanted at least", "cmb.complement-counting"))
        every = s.step(K, "count all committees", f"C({m + w}, {k}) = {{v}}", sp.binomial(m + w, k), errors=ARITH,
                       calc=f"binomial({m + w}, {k})")
        parts = []
        for i in below:
            parts.append(s.step(K, "count the unwanted committees of this case",
                                f"C({m}, {i})*C({w}, {k - i}) = {{v}}", sp.binomial(m, i) * sp.binomial(w, k - i),
                                errors=ARITH, calc=f"binomial({m}, {i})*binomial({w}, {k - i})"))
        total = s.step(K, "subtract the unwanted committees", f"{every} - ({' + '.join(map(str, parts))}) = {{v}}",
                       every - sp.Add(*parts), errors=CALC, calc=f"{every} - ({' + '.join(map(str, parts))})")
    else:
        s.step(D, "add the cases directly: they are no more than the complement's",
               f"Cases wanted: i = {', '.join(map(str, cases))}.")
        parts = []
        for i in cases:
            parts.append(s.step(K, "count the committees of this case",
                                f"C({m}, {i})*C({w}, {k - i}) = {{v}}", sp.binomial(m, i) * sp.binomial(w, k - i),
                                errors=ARITH, calc=f"binomial({m}, {i})*binomial({w}, {k - i})"))
        total = s.step(K, "add the cases", f"{' + '.join(map(str, parts))} = {{v}}", sp.Add(*parts), errors=ARITH,
                       calc=" + ".join(map(str, parts)))
    s.step(V, "check the count is at most the number of all committees", f"{total} <= {sp.binomial(m + w, k)}.")
    return total


def _com_direct(p):
    i = sp.Symbol("i", integer=True)
    m, w, k = p["m"], p["w"], p["k"]
    term = sp.binomial(m, i) * sp.binomial(w, k - i)
    if p.get("pair") == "AA":
        term -= sp.binomial(m - 2, i - 2) * sp.binomial(w, k - i)
    elif p.get("pair") == "AB":
        term -= sp.binomial(m - 1, i - 1) * sp.binomial(w - 1, k - i - 1)
    if p.get("roles"):
        term *= i * (k - 1)
    lo, hi = p["j"], (p["k"] if p["mode"] == "at_least" else p["j"])
    return sp.Integer(sum(term.subs(i, v) for v in range(lo, hi + 1) if v <= m and k - v <= w and v >= 0))


def _com_brute(p) -> int:
    """Enumerate every committee of labelled people (A0.., B0..) and count the admissible ones."""
    m, w, k = p["m"], p["w"], p["k"]
    people = [("A", n) for n in range(m)] + [("B", n) for n in range(w)]
    pair = {"AA": {("A", 0), ("A", 1)}, "AB": {("A", 0), ("B", 0)}}.get(p.get("pair"), set())
    count = 0
    for committee in itertools.combinations(people, k):
        a_count = sum(1 for g, _ in committee if g == "A")
        if (a_count < p["j"]) if p["mode"] == "at_least" else (a_count != p["j"]):
            continue
        if pair and pair <= set(committee):
            continue
        if p.get("roles"):
            count += sum(1 for chair, sec in itertools.permutations(committee, 2) if chair[0] == "A")
        else:
            count += 1
    return count


def _com_second(p, ans):
    return _com_brute(p) == ans


# ==== 3. counting multiples: inclusion-exclusion ===================================================
# L1 multiples of one number (up to N or in a range); L2 divisible by a or b (or neither) up to N,
# with the lcm (or the shortcut when b is a multiple of a); L3 two divisors in a range [A, B];
# L4 three divisors; L5 the sum (not the count) of the integers up to N divisible by three divisors.
_LETTERS = ("a", "b", "c")


def _div_draw(rng, level):
    n_divs = {1: 1, 2: 2, 3: 2, 4: 3, 5: 3}[level]
    while True:
        divs = sorted(rng.sample(range(2, 31), n_divs))
        hi = rng.randint(200, 5000) if level < 5 else rng.randint(100, 3000)
        lo = 1 if level in (2, 5) or (level in (1, 4) and rng.random() < 0.4) else rng.randint(10, hi // 2)
        if level == 2 and rng.random() < 0.15:
            divs[1] = divs[0] * rng.randint(2, 5)
        if len(set(divs)) == n_divs:
            ask = "count" if level == 1 else rng.choice(["any", "none"])
            p = {"divs": divs, "lo": lo, "hi": hi, "ask": ask, "story": rng.randrange(4)}
            if level == 5:
                p["sum"] = True
            return p


_DIV_STORY = ("Among the integers from {lo} to {hi}", "Among the lockers numbered {lo} to {hi}",
              "Among the ticket numbers {lo} to {hi}", "Among the house numbers from {lo} to {hi}")


def _div_prompt(p):
    divs = p["divs"]
    listed = ", ".join(map(str, divs[:-1])) + f" and {divs[-1]}"
    if p.get("sum"):
        which = "at least one" if p["ask"] == "any" else "none"
        return (f"What is the sum of all the integers from 1 to {p['hi']} that are divisible by {which} of "
                f"{listed}?")
    start = _DIV_STORY[p["story"]].format(lo=p["lo"], hi=p["hi"])
    if p["ask"] == "count":
        return f"{start}, how many are divisible by {divs[0]}?"
    if p["ask"] == "any":
        return f"{start}, how many are divisible by at least one of {listed}?"
    if len(divs) == 2:
        return f"{start}, how many are divisible by neither {divs[0]} nor {divs[1]}?"
    return f"{start}, how many are divisible by none of {listed}?"


def _count_step(s: Solution, lo, hi, d, label: str):
    """Multiples of d in [lo, hi]: one calculator call."""
    if lo == 1:
        return s.step(K, f"count the multiples of {label}", f"floor({hi}/{d}) = {{v}}", sp.floor(sp.Rational(hi, d)),
                      errors=ARITH, wrong=sp.ceiling(sp.Rational(hi, d)) + (1 if hi % d == 0 else 0),
                      calc=f"floor({hi}/{d})")
    return s.step(K, f"count the multiples of {label} in the range", f"floor({hi}/{d}) - floor({lo - 1}/{d}) = {{v}}",
                  sp.floor(sp.Rational(hi, d)) - sp.floor(sp.Rational(lo - 1, d)), errors=ARITH,
                  wrong=sp.floor(sp.Rational(hi, d)) - sp.floor(sp.Rational(lo, d)) + 1,
                  calc=f"floor({hi}/{d}) - floor({lo - 1}/{d})")


def _sum_step(s: Solution, hi, d, label: str):
    """Sum of the multiples of d up to hi: d*(1 + 2 + ... + q) with q = floor(hi/d), one calculator call."""
    q = sp.floor(sp.Rational(hi, d))
    return s.step(K, f"add up the multiples of {label}", f"{d}*q*(q + 1)/2 with q = floor({hi}/{d}) = {q}: {{v}}",
                  d * q * (q + 1) / 2, errors=ARITH, wrong=d * q * (q - 1) / 2,
                  calc=f"{d}*floor({hi}/{d})*(floor({hi}/{d}) + 1)/2")


def _div_solve(p, s: Solution):
    lo, hi, divs = p["lo"], p["hi"], p["divs"]
    if p["story"] and not p.get("sum"):
        s.step(M, "model the numbered objects as the integers of a range", f"The numbers {lo}, ..., {hi}; a number "
               "is counted by which divisors divide it.")
    lo_, hi_ = s.step(S, "read the range", "from {v}", (Z(lo), Z(hi)), errors=("transcription_error",))
    lo, hi = int(lo_), int(hi_)
    s.step(T, "recall how to count the multiples of a number in a range",
           "Multiples of d up to N: floor(N/d); in A..B: floor(B/d) - floor((A - 1)/d).",
           search=("count multiples of a number in a range floor", "nt.multiples-in-range"))
    measure = _count_step
    if p.get("sum"):
        s.step(T, "recall the sum of the first q positive integers, to add up the multiples of d",
               "d + 2d + ... + qd = d*q*(q + 1)/2.",
               search=("sum of first n positive integers formula", "alg.sum-of-first-n-integers"))

        def measure(s, lo, hi, d, label):
            return _sum_step(s, hi, d, label)
    if len(divs) == 1:
        count = _count_step(s, lo, hi, divs[0], "a")
        s.step(V, "check with the first and last multiples in the range",
               f"first {-(-lo // divs[0]) * divs[0]}, last {hi // divs[0] * divs[0]}.")
        return count
    a, b = divs[0], divs[1]
    if len(divs) == 2 and b % a == 0:
        s.step(D, "notice that every multiple of the larger divisor is a multiple of the smaller",
               f"{b} is a multiple of {a}, so 'divisible by {a} or {b}' means 'divisible by {a}'.")
        union = measure(s, lo, hi, a, "a")
    else:
        s.step(T, "recall the inclusion-exclusion principle",
               "|A u B| = |A| + |B| - |A n B|, and so on for three sets; intersections are multiples of the lcm.",
               search=("inclusion exclusion principle union of sets", "cmb.inclusion-exclusion"))
        singles = [measure(s, lo, hi, d, name) for d, name in zip(divs, _LETTERS)]
        if len(divs) == 2:
            ell = s.step(K, "compute the least common multiple of the two divisors", f"lcm({a}, {b}) = {{v}}",
                         sp.ilcm(a, b), errors=ARITH, wrong=Z(a * b) if math.gcd(a, b) > 1 else Z(a * b + 1),
                         calc=f"lcm({a}, {b})")
            both = measure(s, lo, hi, ell, "lcm(a, b)")
            union = s.step(K, "apply inclusion-exclusion", f"{singles[0]} + {singles[1]} - {both} = {{v}}",
                           singles[0] + singles[1] - both, errors=CALC, wrong=singles[0] + singles[1] + both,
                           calc=f"{singles[0]} + {singles[1]} - {both}")
        else:
            pairs = [measure(s, lo, hi, sp.ilcm(divs[i], divs[j]), f"lcm({_LETTERS[i]}, {_LETTERS[j]})")
                     for i, j in itertools.combinations(range(3), 2)]
            triple = measure(s, lo, hi, sp.ilcm(*divs), "lcm(a, b, c)")
            union = s.step(K, "apply inclusion-exclusion for three sets",
                           f"{' + '.join(map(str, singles))} - ({' + '.join(map(str, pairs))}) + {triple} = {{v}}",
                           sp.Add(*singles) - sp.Add(*pairs) + triple, errors=CALC,
                           wrong=sp.Add(*singles) - sp.Add(*pairs) - triple,
                           calc=f"{' + '.join(map(str, singles))} - ({' + '.join(map(str, pairs))}) + {triple}")
    if p["ask"] == "none":
        if p.get("sum"):
            union = s.step(K, "subtract from the sum of all the integers 1 to N", f"{hi}*{hi + 1}/2 - {union} = {{v}}",
                           Z(hi * (hi + 1) // 2) - union, errors=CALC, calc=f"{hi}*{hi + 1}/2 - {union}")
        else:
            size = hi - lo + 1
            union = s.step(K, "subtract from the number of integers in the range", f"{size} - {union} = {{v}}",
                           size - union, errors=CALC, calc=f"{size} - {union}")
    s.step(V, "check the result is between 0 and the total for the whole range", f"0 <= {union}.")
    return union


def _div_direct(p):
    lo, hi = p["lo"], p["hi"]
    k = sp.Symbol("k", integer=True, positive=True)
    union = Z(0)
    for size in range(1, len(p["divs"]) + 1):
        for subset in itertools.combinations(p["divs"], size):
            ell = sp.ilcm(*subset) if size > 1 else subset[0]
            if p.get("sum"):
                part = sp.summation(ell * k, (k, 1, sp.floor(sp.Rational(hi, ell))))
            else:
                part = sp.floor(sp.Rational(hi, ell)) - sp.floor(sp.Rational(lo - 1, ell))
            union += (-1) ** (size + 1) * part
    if p["ask"] == "none":
        return (sp.summation(k, (k, 1, hi)) if p.get("sum") else hi - lo + 1) - union
    return union


def _div_second(p, ans):
    """Scan the range one integer at a time."""
    chosen = [n for n in range(p["lo"], p["hi"] + 1) if any(n % d == 0 for d in p["divs"]) == (p["ask"] != "none")]
    return (sum(chosen) if p.get("sum") else len(chosen)) == ans


# ==== 4. divisors, gcd and lcm ====================================================================
# L1 number of divisors (one division per prime); L2 lcm by the Euclidean algorithm (one step per
# division); L3 number of common divisors (gcd, then its factorization); L4 three signals that flash
# together: lcm of three periods, then a count in a time window; L5 number of divisors of an lcm.
_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31)


def _factored(rng, n_primes: int, limit: int) -> dict[int, int]:
    while True:
        primes = sorted(rng.sample(_PRIMES, n_primes))
        exps = {q: rng.randint(1, 4 if q <= 3 else 3 if q <= 7 else 2) for q in primes}
        if math.prod(q**e for q, e in exps.items()) <= limit:
            return exps


def _gcd_draw(rng, level):
    if level == 1:
        exps = _factored(rng, rng.choice([2, 3, 3, 4]), 10**6)
        return {"ask": "divisors", "n": math.prod(q**e for q, e in exps.items())}
    if level == 2:
        while True:
            a, b = rng.randint(20, 2000), rng.randint(20, 2000)
            if a != b and math.gcd(a, b) > 1:
                return {"ask": "lcm", "nums": [a, b]}
    if level == 3:
        while True:
            g = math.prod(q**e for q, e in _factored(rng, rng.choice([2, 3]), 400).items())
            u, v = rng.randint(2, 60), rng.randint(2, 60)
            if u != v and math.gcd(u, v) == 1:
                return {"ask": "common_divisors", "nums": [g * u, g * v]}
    if level == 5:
        while True:
            first, second = _factored(rng, rng.choice([2, 3]), 6000), _factored(rng, rng.choice([2, 3]), 6000)
            nums = [math.prod(q**e for q, e in f.items()) for f in (first, second)]
            if nums[0] != nums[1] and math.gcd(*nums) > 1 and nums[0] % nums[1] and nums[1] % nums[0]:
                return {"ask": "lcm_divisors", "nums": nums}
    while True:
        nums = rng.sample(range(4, 90), 3)
        window = rng.randint(10, 240)
        period = math.lcm(*nums)
        if period <= window * 60 // 2 and all(math.gcd(u, v) > 1 for u, v in itertools.combinations(nums, 2)):
            return {"ask": "signals", "nums": nums, "minutes": window, "thing": rng.choice(["lights", "bells", "beacons"])}


def _gcd_prompt(p):
    ask = p["ask"]
    if ask == "divisors":
        return f"How many positive divisors does {p['n']} have?"
    nums = p["nums"]
    if ask == "lcm":
        return f"Find the least common multiple of {nums[0]} and {nums[1]}."
    if ask == "common_divisors":
        return f"How many positive integers divide both {nums[0]} and {nums[1]}?"
    if ask == "lcm_divisors":
        return f"How many positive divisors does the least common multiple of {nums[0]} and {nums[1]} have?"
    verb = {"lights": "flash", "bells": "ring", "beacons": "blink"}[p["thing"]]
    return (f"Three {p['thing']} {verb} every {nums[0]}, {nums[1]} and {nums[2]} seconds. They {verb} together at "
            f"the start. How many times in the first {p['minutes']} minutes, counting the start, do all three "
            f"{verb} together?")


def _euclid(s: Solution, a, b):
    """gcd(a, b) with one calculator call per division; returns the last nonzero remainder."""
    first, second = a, b
    for _ in range(60):
        if b == 0:
            break
        r = s.step(K, "divide and keep the remainder (one step of the Euclidean algorithm)", f"{a} mod {b} = {{v}}", sp.Mod(a, b), errors=ARITH,
                   calc=f"{a} % {b}")
        a, b = b, r
    else:
        raise ValueError("the Euclidean algorithm did not stop")
    return s.step(D, "take the last nonzero remainder as the gcd", f"gcd({first}, {second}) = {{v}}", abs(a))


def _lcm_pair(s: Solution, a, b, recall: bool):
    if recall:
        s.step(T, "recall the Euclidean algorithm", "gcd(a, b) = gcd(b, a mod b) until the remainder is 0.",
               search=("euclidean algorithm greatest common divisor remainder", "nt.euclidean-algorithm"))
    g = _euclid(s, a, b)
    if recall:
        s.step(T, "recall the link between lcm and gcd", "lcm(a, b) = a*b/gcd(a, b).",
               search=("least common multiple gcd product", "nt.lcm"))
    return s.step(K, "compute the lcm from the product and the gcd", f"{a}*{b}/{g} = {{v}}", a * b / g, errors=ARITH, wrong=a * b,
                  calc=f"{a}*{b}/{g}")


def _divisor_count(s: Solution, n, recall: bool = True):
    if recall:
        s.step(T, "recall the divisor-count formula", "n = p1^e1*...*pk^ek has (e1 + 1)*...*(ek + 1) divisors.",
               search=("number of divisors prime factorization exponents", "nt.divisor-count"))
    rest, exps = n, []
    for q in _PRIMES:
        if rest == 1:
            break
        e = 0
        while rest % q**(e + 1) == 0:
            e += 1
        if e == 0:
            continue
        e = s.step(D, "find the exponent of the next prime factor", f"{q} divides {rest} exactly {{v}} times", Z(e),
                   errors=("calculation_error",))
        rest = s.step(K, "divide out that prime power", f"{rest}/{q}^{e} = {{v}}", rest / q**e, errors=ARITH,
                      calc=f"{rest}/{q}**{e}")
        exps.append(e)
    if rest != 1:
        raise ValueError(f"{n} has a prime factor above {_PRIMES[-1]}")
    return s.step(K, "multiply the exponents plus one", f"{'*'.join(f'({e} + 1)' for e in exps)} = {{v}}",
                  sp.Mul(*[e + 1 for e in exps]), errors=ARITH, wrong=sp.Mul(*exps),
                  calc="*".join(f"({e} + 1)" for e in exps))


def _gcd_solve(p, s: Solution):
    ask = p["ask"]
    if ask == "divisors":
        n = s.step(S, "read the number", "n = {v}", Z(p["n"]), errors=("transcription_error",))
        count = _divisor_count(s, n)
        s.step(V, "check with the smallest divisors", f"1, 2, ... all divide {n} only as the factorization allows.")
        return count
    nums = s.step(S, "read the numbers", "numbers: {v}", tuple(Z(v) for v in p["nums"]), errors=("transcription_error",))
    if ask == "lcm":
        value = _lcm_pair(s, nums[0], nums[1], recall=True)
        s.step(V, "check that both numbers divide the lcm", f"{value}/{nums[0]} = {value / nums[0]}, "
               f"{value}/{nums[1]} = {value / nums[1]}.")
        return value
    if ask == "common_divisors":
        s.step(C, "see that the common divisors are exactly the divisors of the gcd",
               "d divides a and b exactly when d divides gcd(a, b).",
               search=("euclidean algorithm greatest common divisor remainder", "nt.euclidean-algorithm"))
        g = _euclid(s, nums[0], nums[1])
        count = _divisor_count(s, g)
        s.step(V, "check that the gcd divides both numbers", f"{nums[0]}/{g} = {nums[0] / g}, {nums[1]}/{g} = {nums[1] / g}.")
        return count
    if ask == "lcm_divisors":
        value = _lcm_pair(s, nums[0], nums[1], recall=True)
        count = _divisor_count(s, value)
        s.step(V, "check that both numbers divide the lcm", f"{value}/{nums[0]} = {value / nums[0]}, "
               f"{value}/{nums[1]} = {value / nums[1]}.")
        return count
    first = _lcm_pair(s, nums[0], nums[1], recall=True)
    value = s.step(D, "extend to the third number: lcm(a, b, c) = lcm(lcm(a, b), c)",
                   "lcm of the first two: {v}", first)
    value = _lcm_pair(s, value, nums[2], recall=False)
    seconds = s.step(K, "convert the time window to seconds", f"{p['minutes']}*60 = {{v}}", Z(p["minutes"]) * 60,
                     errors=ARITH, calc=f"{p['minutes']}*60")
    s.step(M, "model the joint signals as the multiples of the lcm, starting at time 0",
           f"All three signal together at 0, {value}, {2 * value}, ... seconds.")
    times = s.step(K, "count the multiples of the lcm in the window, plus the start",
                   f"floor({seconds}/{value}) + 1 = {{v}}", sp.floor(seconds / value) + 1, errors=ARITH,
                   wrong=sp.floor(seconds / value), calc=f"floor({seconds}/{value}) + 1")
    s.step(V, "check the last joint signal lies inside the window", f"{(times - 1) * value} <= {seconds}.")
    return times


def _gcd_direct(p):
    ask = p["ask"]
    if ask == "divisors":
        return sp.divisor_count(p["n"])
    nums = p["nums"]
    if ask == "lcm":
        return sp.ilcm(*nums)
    if ask == "common_divisors":
        return sp.divisor_count(sp.igcd(*nums))
    if ask == "lcm_divisors":
        return sp.divisor_count(sp.ilcm(*nums))
    return sp.floor(sp.Rational(p["minutes"] * 60, sp.ilcm(*nums))) + 1


def _gcd_second(p, ans):
    """Trial division and scanning multiples, without gcd or lcm formulas."""
    ask = p["ask"]
    if ask == "divisors":
        n = p["n"]
        return sum(2 - (d * d == n) for d in range(1, math.isqrt(n) + 1) if n % d == 0) == ans
    nums = p["nums"]
    if ask == "common_divisors":
        return sum(1 for d in range(1, min(nums) + 1) if nums[0] % d == 0 and nums[1] % d == 0) == ans
    top = max(nums)
    multiple = top
    while any(multiple % v for v in nums):
        multiple += top
    if ask == "lcm":
        return multiple == ans
    if ask == "lcm_divisors":
        return sum(2 - (d * d == multiple) for d in range(1, math.isqrt(multiple) + 1) if multiple % d == 0) == ans
    return sum(1 for t in range(0, p["minutes"] * 60 + 1, multiple)) == ans


# ==== 5. modular arithmetic =======================================================================
# L1 remainder of a product-plus-sum; L2 a linear congruence by the extended Euclidean algorithm;
# L3 a power's remainder from the cycle of powers; L4 a plain and a linear congruence together (the
# linear one solved first, then the Chinese remainder theorem); L5 three congruences from a story.
def _mod_draw(rng, level):
    if level == 1:
        n_ops = rng.choice([2, 3])
        return {"ask": "expr", "m": rng.randint(3, 19), "factors": [rng.randint(100, 99999) for _ in range(n_ops)],
                "addend": rng.randint(100, 99999)}
    if level == 2:
        while True:
            m = rng.randint(11, 199)
            a = rng.randint(2, m - 1)
            if math.gcd(a, m) == 1:
                return {"ask": "congruence", "a": a, "b": rng.randint(1, m - 1), "m": m}
    if level == 3:
        while True:
            m = rng.choice([7, 9, 10, 11, 13, 14, 17, 18, 19, 100])
            a = rng.randint(2, 250)
            if math.gcd(a, m) == 1 and 3 <= sp.n_order(a, m) <= 9:
                return {"ask": "power", "a": a, "k": rng.randint(50, 5000), "m": m}
    if level == 4:
        while True:
            m1, m2 = rng.sample(range(5, 40), 2)
            a = rng.randint(2, m2 - 1)
            if math.gcd(m1, m2) == 1 and math.gcd(a, m2) == 1:
                r2 = rng.randrange(m2)
                return {"ask": "crt_lin", "mods": [m1, m2], "rems": [rng.randrange(m1), r2], "a": a,
                        "b": a * r2 % m2}
    while True:
        mods = sorted(rng.sample(range(3, 30), 3))
        if all(math.gcd(u, v) == 1 for u, v in itertools.combinations(mods, 2)):
            return {"ask": "crt3", "mods": mods, "rems": [rng.randrange(1, v) for v in mods],
                    "thing": rng.choice(["eggs", "marbles", "soldiers", "coins"])}


def _mod_prompt(p):
    ask = p["ask"]
    if ask == "expr":
        prod = " * ".join(map(str, p["factors"]))
        return f"What is the remainder when {prod} + {p['addend']} is divided by {p['m']}?"
    if ask == "congruence":
        return f"Find the smallest positive integer x with {p['a']}x = {p['b']} (mod {p['m']})."
    if ask == "power":
        if p["m"] == 10:
            return f"What is the last digit of {p['a']}^{p['k']}?"
        if p["m"] == 100:
            return f"What are the last two digits of {p['a']}^{p['k']}? Answer as a number from 0 to 99."
        return f"What is the remainder when {p['a']}^{p['k']} is divided by {p['m']}?"
    if ask == "crt_lin":
        (m1, m2), r1 = p["mods"], p["rems"][0]
        return (f"Find the smallest nonnegative integer x with x = {r1} (mod {m1}) and {p['a']}x = {p['b']} "
                f"(mod {m2}).")
    parts = [f"in groups of {m} leaves {r} over" for m, r in zip(p["mods"], p["rems"])]
    return (f"Counting a pile of {p['thing']} {parts[0]}, {parts[1]} and {parts[2]}. What is the smallest possible "
            f"number of {p['thing']}?")


def _inverse(s: Solution, a, m):
    """The inverse of a mod m by the extended Euclidean algorithm, one calculator call per division."""
    r0, r1, s0, s1 = m, a, Z(0), Z(1)
    for _ in range(60):
        if r1 == 0 or r1 == 1:
            break
        q = sp.floor(r0 / r1)
        r2, s2 = s.step(K, "divide and update the remainder and its coefficient (extended Euclidean step)",
                        f"({r0} - {q}*{r1}, {s0} - {q}*({s1})) = {{v}}", (r0 - q * r1, s0 - q * s1), errors=ARITH,
                        calc=f"({r0} - {q}*{r1}, {s0} - {q}*({s1}))")
        r0, r1, s0, s1 = r1, r2, s1, s2
    else:
        raise ValueError("the extended Euclidean algorithm did not stop")
    if r1 != 1:
        raise ValueError(f"{a} has no inverse mod {m}")
    return s.step(K, "reduce the coefficient next to remainder 1", f"{s1} mod {m} = {{v}}", sp.Mod(s1, m),
                  errors=ARITH, calc=f"({s1}) % {m}")


def _merge(s: Solution, r1, m1, r2, m2):
    """x = r1 (mod m1) and x = r2 (mod m2): x = r1 + m1*t with m1*t = r2 - r1 (mod m2)."""
    target = s.step(K, "write x through the first congruence and reduce the second condition",
                    f"{m1}t = {r2} - {r1} = {{v}} (mod {m2})", sp.Mod(r2 - r1, m2), errors=CALC,
                    calc=f"({r2} - {r1}) % {m2}")
    inv = _inverse(s, sp.Mod(m1, m2), m2)
    t = s.step(K, "solve for t", f"t = {target}*{inv} mod {m2} = {{v}}", sp.Mod(target * inv, m2), errors=ARITH,
               calc=f"({target}*{inv}) % {m2}")
    return s.step(K, "substitute t back", f"x = {r1} + {m1}*{t} = {{v}}", r1 + m1 * t, errors=ARITH,
                  calc=f"{r1} + {m1}*{t}")


def _mod_solve(p, s: Solution):
    ask = p["ask"]
    if ask == "expr":
        m = Z(p["m"])
        nums = s.step(S, "read the factors, the added number and the modulus", "numbers: {v}",
                      tuple(Z(v) for v in [*p["factors"], p["addend"], p["m"]]), errors=("transcription_error",))
        s.step(T, "recall that remainders can be taken before multiplying and adding",
               "(a*b + c) mod m = ((a mod m)*(b mod m) + (c mod m)) mod m.",
               search=("modular arithmetic remainder of product and sum", "nt.modular-arithmetic"))
        rems = [s.step(K, "reduce the next number mod m", f"{v} mod {m} = {{v}}", sp.Mod(v, m), errors=ARITH, calc=f"{v} % {m}")
                for v in nums[:-1]]
        expr = f"({'*'.join(map(str, rems[:-1]))} + {rems[-1]}) % {m}"
        value = s.step(K, "combine the remainders and reduce again", f"{expr} = {{v}}",
                       sp.Mod(sp.Mul(*rems[:-1]) + rems[-1], m), errors=ARITH, calc=expr)
        s.step(V, "check that the remainder lies between 0 and m - 1", f"0 <= {value} < {m}.")
        return value
    if ask == "congruence":
        a, b, m = s.step(S, "read a, b and the modulus", "a, b, m = {v}", (Z(p["a"]), Z(p["b"]), Z(p["m"])),
                         errors=("transcription_error",))
        s.step(T, "recall how to solve a linear congruence", "a*x = b (mod m) with gcd(a, m) = 1: x = b*a^(-1) mod m.",
               search=("linear congruence solve modular inverse", "nt.linear-congruence"))
        s.step(T, "recall the extended Euclidean algorithm for the inverse",
               "Carry coefficients with the remainders; the one beside remainder 1 is the inverse.",
               search=("modular inverse extended euclidean algorithm", "nt.modular-inverse"))
        inv = _inverse(s, a, m)
        value = s.step(K, "multiply b by the inverse and reduce", f"x = {b}*{inv} mod {m} = {{v}}", sp.Mod(b * inv, m),
                       errors=ARITH, calc=f"({b}*{inv}) % {m}")
        if value == 0:
            value = s.step(D, "take m itself, since 0 is not positive", "x = {v}", m)
        s.step(V, "check the congruence", f"{a}*{value} = {a * value}, which is {sp.Mod(a * value, m)} mod {m}.")
        return value
    if ask == "power":
        a, k, m = s.step(S, "read the base, the exponent and the modulus", "a, k, m = {v}",
                         (Z(p["a"]), Z(p["k"]), Z(p["m"])), errors=("transcription_error",))
        s.step(T, "recall that the remainders of powers repeat in a cycle",
               "a^L = 1 (mod m) gives a^k = a^(k mod L) (mod m).",
               search=("remainders of powers repeat cycle last digit", "nt.power-cycle"))
        base = a
        if a >= m:
            base = s.step(K, "reduce the base first", f"{a} mod {m} = {{v}}", sp.Mod(a, m), errors=ARITH, calc=f"{a} % {m}")
        power, length = base, 1
        for _ in range(40):
            if power == 1:
                break
            length += 1
            power = s.step(K, "compute the remainder of the next power", f"{base}^{length} mod {m} = {{v}}",
                           sp.Mod(power * base, m), errors=ARITH, calc=f"({power}*{base}) % {m}")
        else:
            raise ValueError("no cycle found")
        period = s.step(D, "read off the period of the cycle", "period L = {v}", Z(length), errors=("calculation_error",))
        rest = s.step(K, "reduce the exponent mod the period", f"{k} mod {period} = {{v}}", sp.Mod(k, period),
                      errors=ARITH, calc=f"{k} % {period}")
        value = s.step(K, "look up the remainder at that place in the cycle", f"{base}^{rest} mod {m} = {{v}}",
                       sp.Mod(base**rest, m), errors=ARITH, calc=f"{base}**{rest} % {m}")
        s.step(V, "check the cycle closes", f"{base}^{period} mod {m} = {sp.Mod(base ** period, m)}.")
        return value
    if ask == "crt_lin":
        return _crt_lin_solve(p, s)
    mods, rems = p["mods"], p["rems"]
    if ask == "crt3":
        s.step(M, "turn each grouping into a congruence", "; ".join(f"x = {r} (mod {m})" for m, r in zip(mods, rems)) + ".")
    read = s.step(S, "read the remainders and the moduli", "(r, m) pairs: {v}",
                  tuple(Z(v) for pair in zip(rems, mods) for v in pair), errors=("transcription_error",))
    s.step(T, "recall the Chinese remainder theorem", "Coprime moduli: one solution mod their product; "
           "write x = r1 + m1*t and solve for t.",
           search=("chinese remainder theorem simultaneous congruences coprime moduli", "nt.chinese-remainder-theorem"))
    value, modulus = read[0], read[1]
    for r, m in zip(read[2::2], read[3::2]):
        value = _merge(s, value, modulus, r, m)
        modulus = modulus * m
    if ask == "crt3" and value == 0:
        value = s.step(D, "take the product of the moduli, since a pile is not empty", "x = {v}", modulus)
    s.step(V, "check every congruence", ", ".join(f"{value} mod {m} = {sp.Mod(value, m)}" for m in mods) + ".")
    return value


def _crt_lin_solve(p, s: Solution):
    (m1, m2), r1 = p["mods"], p["rems"][0]
    r1, m1, a, b, m2 = s.step(S, "read both congruences", "r1, m1, a, b, m2 = {v}",
                              (Z(r1), Z(m1), Z(p["a"]), Z(p["b"]), Z(m2)), errors=("transcription_error",))
    s.step(T, "recall how to solve a linear congruence", "a*x = b (mod m) with gcd(a, m) = 1: x = b*a^(-1) mod m.",
           search=("linear congruence solve modular inverse", "nt.linear-congruence"))
    inv = _inverse(s, a, m2)
    r2 = s.step(K, "turn the linear congruence into x = r2 (mod m2)", f"r2 = {b}*{inv} mod {m2} = {{v}}",
                sp.Mod(b * inv, m2), errors=ARITH, calc=f"({b}*{inv}) % {m2}")
    s.step(T, "recall the Chinese remainder theorem", "Coprime moduli: one solution mod their product; "
           "write x = r1 + m1*t and solve for t.",
           search=("chinese remainder theorem simultaneous congruences coprime moduli", "nt.chinese-remainder-theorem"))
    value = _merge(s, r1, m1, r2, m2)
    s.step(V, "check both congruences", f"{value} mod {m1} = {sp.Mod(value, m1)}, "
           f"{a}*{value} mod {m2} = {sp.Mod(a * value, m2)}.")
    return value


def _mod_direct(p):
    ask = p["ask"]
    if ask == "expr":
        return sp.Mod(sp.Mul(*p["factors"]) + p["addend"], p["m"])
    if ask == "congruence":
        value = sp.Mod(p["b"] * sp.mod_inverse(p["a"], p["m"]), p["m"])
        return value if value else sp.Integer(p["m"])
    if ask == "power":
        return sp.Integer(pow(p["a"], p["k"], p["m"]))
    rems = p["rems"]
    if ask == "crt_lin":
        rems = [rems[0], sp.Mod(p["b"] * sp.mod_inverse(p["a"], p["mods"][1]), p["mods"][1])]
    value, modulus = sympy_crt(p["mods"], rems)
    if ask == "crt3" and value == 0:
        return sp.Integer(modulus)
    return sp.Integer(value)


def _mod_second(p, ans):
    """Search the residues one by one (or multiply step by step), no theorem used."""
    ask = p["ask"]
    if ask == "expr":
        value = 1
        for f in p["factors"]:
            value = value * f
        return (value + p["addend"]) - ((value + p["addend"]) // p["m"]) * p["m"] == ans
    if ask == "congruence":
        return next(v for v in range(1, p["m"] + 1) if (p["a"] * v - p["b"]) % p["m"] == 0) == ans
    if ask == "power":
        value = 1
        for _ in range(p["k"]):
            value = value * p["a"] % p["m"]
        return value == ans
    start = 1 if ask == "crt3" else 0
    if ask == "crt_lin":
        (m1, m2), r1 = p["mods"], p["rems"][0]
        return next(v for v in itertools.count(0) if v % m1 == r1 and (p["a"] * v - p["b"]) % m2 == 0) == ans
    return next(v for v in itertools.count(start) if all(v % m == r for m, r in zip(p["mods"], p["rems"]))) == ans


# ==== 6. functions: evaluation, composition, inverse, iteration ===================================
# L1 f(g(v)) or g(f(v)); L2 a triple composition or f(g(v)) + g(f(v)); L3 the inverse of a (fractional)
# linear function at g(v); L4 iterate a piecewise (parity) function, one branch decision per step;
# L5 f(g(x)) = g(f(x)), a quadratic: its larger or smaller solution by the quadratic formula, or the
# sum of the squares of its solutions by Vieta's formulas.
def _fun_draw(rng, level):
    f = [nonzero(rng, -9, 9), rng.randint(-20, 20)]
    if level == 1:
        return {"ask": rng.choice(["fg", "gf"]), "f": f, "g": [nonzero(rng, -5, 5), rng.randint(-9, 9), rng.randint(-20, 20)],
                "v": rng.randint(-12, 12)}
    if level == 2:
        return {"ask": rng.choice(["fgh", "fg+gf"]), "f": f, "g": [nonzero(rng, -4, 4), rng.randint(-9, 9),
                                                                   rng.randint(-20, 20)],
                "h": [nonzero(rng, -6, 6), rng.randint(-15, 15)], "v": rng.randint(-9, 9)}
    if level == 3:
        while True:
            a, b, d = nonzero(rng, -9, 9), rng.randint(-12, 12), nonzero(rng, -12, 12)
            c = 0 if rng.random() < 0.3 else nonzero(rng, -6, 6)
            g = [nonzero(rng, -6, 6), rng.randint(-15, 15)]
            v = rng.randint(-9, 9)
            w = g[0] * v + g[1]
            if a * d - b * c != 0 and a - c * w != 0:
                return {"ask": "inverse", "f": [a, b, c, d], "g": g, "v": v}
    if level == 4:
        return {"ask": "iterate", "odd": [rng.choice([3, 5, 7]), rng.choice([-3, -1, 1, 3, 5])], "v": rng.randint(2, 999),
                "times": rng.randint(3, 7)}
    while True:
        a = rng.choice([-3, -2, 2, 3])
        r1, r2 = rng.sample(range(-8, 9), 2)
        c = rng.randint(-9, 9)
        b = Fraction((1 - a) * (r1 + r2), 2)
        d = -a * r1 * r2 + (b * b + b * c - b) / (a - 1)
        if b.denominator == 1 and d.denominator == 1:
            return {"ask": "equal", "f": [a, int(b)], "g": [1, c, int(d)],
                    "want": rng.choice(["larger", "smaller", "sum_squares"])}


def _lin_text(coef, var: str = "x") -> str:
    a, b = coef
    head = var if a == 1 else f"-{var}" if a == -1 else f"{a}{var}"
    return head if b == 0 else f"{head} {_signed(b)}"


def _quad_text(coef) -> str:
    a, b, c = coef
    out = "x^2" if a == 1 else "-x^2" if a == -1 else f"{a}x^2"
    if b:
        out += f" {'+' if b > 0 else '-'} {'' if abs(b) == 1 else abs(b)}x"
    if c:
        out += f" {_signed(c)}"
    return out


def _lin(coef, v):
    return coef[0] * v + coef[1]


def _quad(coef, v):
    return coef[0] * v * v + coef[1] * v + coef[2]


def _fun_prompt(p):
    ask = p["ask"]
    if ask in ("fg", "gf"):
        call = f"f(g({p['v']}))" if ask == "fg" else f"g(f({p['v']}))"
        return f"Let f(x) = {_lin_text(p['f'])} and g(x) = {_quad_text(p['g'])}. Find {call}."
    if ask in ("fgh", "fg+gf"):
        base = f"Let f(x) = {_lin_text(p['f'])}, g(x) = {_quad_text(p['g'])} and h(x) = {_lin_text(p['h'])}."
        if ask == "fgh":
            return f"{base} Find f(g(h({p['v']})))."
        return f"{base} Find f(g({p['v']})) + g(f({p['v']}))."
    if ask == "inverse":
        a, b, c, d = p["f"]
        rule = f"({_lin_text([a, b])})/{d}" if c == 0 else f"({_lin_text([a, b])})/({_lin_text([c, d])})"
        return (f"Let f(x) = {rule} and g(x) = {_lin_text(p['g'])}. "
                f"Find the value of the inverse function f^(-1) at g({p['v']}).")
    if ask == "iterate":
        return (f"Let f(n) = n/2 when n is even and f(n) = {_lin_text(p['odd'], 'n')} when n is odd. "
                f"Starting from {p['v']}, apply f {p['times']} times. What number do you get?")
    want = {"larger": "the larger of the two real numbers x", "smaller": "the smaller of the two real numbers x",
            "sum_squares": "the sum of the squares of the two real numbers x"}[p["want"]]
    return f"Let f(x) = {_lin_text(p['f'])} and g(x) = {_quad_text(p['g'])}. Find {want} with f(g(x)) = g(f(x))."


def _eval_f(s: Solution, f, v, goal: str):
    return s.step(K, goal, f"f({v}) = {f[0]}*({v}) + ({f[1]}) = {{v}}", _lin(f, v), errors=CALC,
                  calc=f"{f[0]}*({v}) + ({f[1]})")


def _eval_g(s: Solution, g, v, goal: str):
    return s.step(K, goal, f"g({v}) = {_quad_text(g).replace('x', f'({v})')} = {{v}}", _quad(g, v), errors=CALC,
                  calc=f"{g[0]}*({v})**2 + ({g[1]})*({v}) + ({g[2]})")


def _fun_solve(p, s: Solution):
    ask = p["ask"]
    if ask == "iterate":
        return _iterate_solve(p, s)
    if ask == "equal":
        return _equal_solve(p, s)
    v = s.step(S, "read the input value", "x = {v}", Z(p["v"]), errors=("transcription_error", "sign_error"))
    s.step(T, "recall that a composition is evaluated from the inside out", "(f o g)(x) = f(g(x)): g first, then f.",
           search=("composition of functions f of g of x", "alg.function-composition"))
    f, g = p["f"], p["g"]
    if ask == "inverse":
        return _inverse_solve(p, s, v)
    if ask == "gf":
        inner = _eval_f(s, f, v, "evaluate the inner function f")
        outer = _eval_g(s, g, inner, "evaluate the outer function g at that value")
        s.step(V, "check by composing the formulas first", f"g(f(x)) = {sp.expand(_quad(g, _lin(f, x)))}.")
        return outer
    if ask == "fgh":
        h = p["h"]
        v = s.step(K, "evaluate the innermost function h", f"h({v}) = {h[0]}*({v}) + ({h[1]}) = {{v}}", _lin(h, v),
                   errors=CALC, calc=f"{h[0]}*({v}) + ({h[1]})")
    inner = _eval_g(s, g, v, "evaluate the inner function g")
    outer = _eval_f(s, f, inner, "evaluate the outer function f at that value")
    if ask != "fg+gf":
        s.step(V, "check by composing the formulas first", f"f(g(x)) = {sp.expand(_lin(f, _quad(g, x)))}.")
        return outer
    inner2 = _eval_f(s, f, v, "evaluate f first for the other order")
    outer2 = _eval_g(s, g, inner2, "evaluate g at that value")
    total = s.step(K, "add the two compositions", f"{outer} + ({outer2}) = {{v}}", outer + outer2, errors=CALC,
                   calc=f"({outer}) + ({outer2})")
    s.step(V, "check that the two orders really differ", f"f(g({v})) = {outer}, g(f({v})) = {outer2}.")
    return total


def _inverse_solve(p, s: Solution, v):
    a, b, c, d = (Z(t) for t in p["f"])
    g = p["g"]
    w = s.step(K, "evaluate g at the given point", f"g({v}) = {g[0]}*({v}) + ({g[1]}) = {{v}}", _lin(g, v),
               errors=CALC, calc=f"{g[0]}*({v}) + ({g[1]})")
    s.step(T, "recall that f^(-1)(w) is the x with f(x) = w", "Solve f(x) = w for x.",
           search=("inverse function swap x and y solve", "alg.inverse-function"))
    if c == 0:
        s.step(F, "undo the operations of f in reverse order", f"({a}x + ({b}))/{d} = {w}: multiply by {d}, "
               f"subtract {b}, divide by {a}.")
        scaled = s.step(K, "multiply by the denominator", f"{w}*{d} = {{v}}", w * d, errors=CALC, calc=f"({w})*({d})")
        shifted = s.step(K, "subtract the constant", f"{scaled} - ({b}) = {{v}}", scaled - b, errors=CALC,
                         calc=f"({scaled}) - ({b})")
        value = s.step(K, "divide by the coefficient of x", f"x = {shifted}/({a}) = {{v}}", shifted / a, errors=CALC,
                       wrong=shifted * a, calc=f"({shifted})/({a})")
        s.step(V, "check that f maps the answer back", f"f({value}) = {(a * value + b) / d}.")
        return value
    s.step(F, "clear the denominator and collect the x terms",
           f"({a}x + ({b})) = {w}*({c}x + ({d})), so x*({a} - {c}*{w}) = {d}*{w} - ({b}).")
    coef = s.step(K, "compute the coefficient of x", f"{a} - ({c})*({w}) = {{v}}", a - c * w, errors=CALC,
                  calc=f"{a} - ({c})*({w})")
    rhs = s.step(K, "compute the right side", f"{d}*({w}) - ({b}) = {{v}}", d * w - b, errors=CALC,
                 calc=f"{d}*({w}) - ({b})")
    value = s.step(K, "divide to find x", f"x = {rhs}/({coef}) = {{v}}", rhs / coef, errors=CALC,
                   wrong=coef / rhs if rhs else None, calc=f"({rhs})/({coef})")
    s.step(V, "check that f maps the answer back", f"f({value}) = {(a * value + b) / (c * value + d)}.")
    return value


def _iterate_solve(p, s: Solution):
    pp, q = p["odd"]
    n = s.step(S, "read the starting number and the number of applications", "n = {v}", Z(p["v"]),
               errors=("transcription_error",))
    s.step(C, "recall that iterating means feeding each output back in, the branch chosen by parity each time",
           "f^(k)(n) = f(f(...f(n)...)).", search=("iterating a function piecewise rule", "alg.function-iteration"))
    for k in range(1, p["times"] + 1):
        if n % 2 == 0:
            s.step(D, "the number is even: take the halving branch", f"step {k}: {n} is even.")
            n = s.step(K, "halve the number", f"{n}/2 = {{v}}", n / 2, errors=ARITH, calc=f"{n}/2")
        else:
            s.step(D, "the number is odd: take the odd branch", f"step {k}: {n} is odd.")
            n = s.step(K, "apply the odd rule", f"{pp}*{n} + ({q}) = {{v}}", pp * n + q, errors=ARITH,
                       calc=f"{pp}*{n} + ({q})")
        if not n.is_Integer:
            raise ValueError("the iteration left the integers")
    s.step(V, "check the number of applications", f"{p['times']} applications done.")
    return n


def _equal_solve(p, s: Solution):
    f, g = p["f"], p["g"]
    s.step(T, "recall that a composition is evaluated from the inside out", "(f o g)(x) = f(g(x)).",
           search=("composition of functions f of g of x", "alg.function-composition"))
    fg = s.step(F, "expand f(g(x))", f"f(g(x)) = {f[0]}*({_quad_text(g)}) + ({f[1]}) = {{v}}",
                sp.expand(_lin(f, _quad(g, x))), calc=f"expand({f[0]}*(x**2 + ({g[1]})*x + ({g[2]})) + ({f[1]}))")
    gf = s.step(F, "expand g(f(x))", "g(f(x)) = {v}", sp.expand(_quad(g, _lin(f, x))),
                calc=f"expand(({f[0]}*x + ({f[1]}))**2 + ({g[1]})*({f[0]}*x + ({f[1]})) + ({g[2]}))")
    diff = s.step(K, "move everything to one side", f"({fg}) - ({gf}) = {{v}}", sp.expand(fg - gf),
                  errors=("sign_error",), calc=f"expand(({fg}) - ({gf}))")
    common = sp.gcd_list([diff.coeff(x, k) for k in (2, 1, 0)])
    if common not in (0, 1):
        diff = s.step(K, "divide the equation by the common factor of its coefficients",
                      f"({diff})/{common} = {{v}}", sp.expand(diff / common), errors=ARITH,
                      wrong=sp.expand(diff / common) + 1, calc=f"expand(({diff})/{common})")
    qa, qb, qc = (sp.expand(diff).coeff(x, k) for k in (2, 1, 0))
    if p["want"] == "sum_squares":
        s.step(T, "use Vieta's formulas instead of finding the roots", "x1 + x2 = -b/a, x1*x2 = c/a, "
               "x1^2 + x2^2 = (x1 + x2)^2 - 2*x1*x2.", search=("vieta formulas sum product of roots", "alg.vieta-formulas"))
        total = s.step(K, "compute the sum of the roots", f"-({qb})/({qa}) = {{v}}", -qb / qa, errors=CALC,
                       calc=f"-({qb})/({qa})")
        prod = s.step(K, "compute the product of the roots", f"({qc})/({qa}) = {{v}}", qc / qa, errors=CALC,
                      calc=f"({qc})/({qa})")
        value = s.step(K, "combine into the sum of the squares", f"({total})^2 - 2*({prod}) = {{v}}",
                       total**2 - 2 * prod, errors=CALC, wrong=total**2 + 2 * prod, calc=f"({total})**2 - 2*({prod})")
        s.step(V, "check that the roots are real", f"discriminant {qb ** 2 - 4 * qa * qc} >= 0.")
        return value
    s.step(T, "recall the quadratic formula", "x = (-b +- sqrt(b^2 - 4ac))/(2a).",
           search=("quadratic formula roots of quadratic equation", "alg.quadratic-formula"))
    disc = s.step(K, "compute the discriminant", f"({qb})^2 - 4*({qa})*({qc}) = {{v}}", qb * qb - 4 * qa * qc,
                  errors=ARITH, calc=f"({qb})**2 - 4*({qa})*({qc})")
    root = s.step(K, "take its square root", f"sqrt({disc}) = {{v}}", sp.sqrt(disc), errors=ARITH, calc=f"sqrt({disc})")
    r1 = s.step(K, "compute the root with the minus sign", f"(-({qb}) - {root})/(2*({qa})) = {{v}}",
                (-qb - root) / (2 * qa), errors=CALC, calc=f"(-({qb}) - ({root}))/(2*({qa}))")
    r2 = s.step(K, "compute the root with the plus sign", f"(-({qb}) + {root})/(2*({qa})) = {{v}}",
                (-qb + root) / (2 * qa), errors=CALC, calc=f"(-({qb}) + ({root}))/(2*({qa}))")
    larger = p["want"] == "larger"
    value = s.step(D, f"pick the {'larger' if larger else 'smaller'} root", "x = {v}",
                   (sp.Max if larger else sp.Min)(r1, r2), errors=("sign_error",))
    s.step(V, "check the root in the original equation", f"f(g(x)) - g(f(x)) at {value}: {sp.expand(diff.subs(x, value))}.")
    return value


def _fun_direct(p):
    ask = p["ask"]
    if ask == "iterate":
        rule = sp.Piecewise((x / 2, sp.Eq(sp.Mod(x, 2), 0)), (p["odd"][0] * x + p["odd"][1], True))
        value = sp.Integer(p["v"])
        for _ in range(p["times"]):
            value = rule.subs(x, value)
        return value
    if ask == "inverse":
        a, b, c, d = p["f"]
        return sp.solve(sp.Eq((a * x + b) / (c * x + d), _lin(p["g"], p["v"])), x)[0]
    fx, gx = _lin(p["f"], x), _quad(p["g"], x)
    if ask == "equal":
        roots = sp.solve(sp.Eq(fx.subs(x, gx), gx.subs(x, fx)), x)
        return {"larger": max(roots), "smaller": min(roots), "sum_squares": sum(r**2 for r in roots)}[p["want"]]
    v = p["v"]
    if ask == "fg":
        return fx.subs(x, gx.subs(x, v))
    if ask == "gf":
        return gx.subs(x, fx.subs(x, v))
    if ask == "fgh":
        return fx.subs(x, gx.subs(x, _lin(p["h"], v)))
    return fx.subs(x, gx.subs(x, v)) + gx.subs(x, fx.subs(x, v))


def _fun_second(p, ans):
    """Exact substitution with fractions (and a search of the integers for the equation)."""
    ask = p["ask"]

    def f(t):
        return p["f"][0] * t + p["f"][1]

    def g(t):
        return p["g"][0] * t * t + p["g"][1] * t + p["g"][2] if len(p["g"]) == 3 else p["g"][0] * t + p["g"][1]

    if ask == "fg":
        return f(g(p["v"])) == ans
    if ask == "gf":
        return g(f(p["v"])) == ans
    if ask == "fgh":
        return f(g(p["h"][0] * p["v"] + p["h"][1])) == ans
    if ask == "fg+gf":
        return f(g(p["v"])) + g(f(p["v"])) == ans
    if ask == "inverse":
        a, b, c, d = p["f"]
        t = Fraction(int(sp.numer(ans)), int(sp.denom(ans)))
        return c * t + d != 0 and Fraction(a * t + b) / (c * t + d) == g(p["v"])
    if ask == "iterate":
        n = p["v"]
        for _ in range(p["times"]):
            n = n >> 1 if n & 1 == 0 else p["odd"][0] * n + p["odd"][1]
        return n == ans
    found = [t for t in range(-60, 61) if f(g(t)) == g(f(t))]      # the roots are integers by construction
    if len(found) != 2:
        return False
    return {"larger": max(found), "smaller": min(found), "sum_squares": sum(t * t for t in found)}[p["want"]] == ans


# ==== 7. chained word problems: a system from a story, then a quantity from its solution ============
# L1 rectangle from its perimeter and a relation, then its area; L2 the same, then its diagonal;
# L3 two kinds of things from a count and a total, then a selection (and maybe a line-up) count;
# L4 a box from its pairwise edge sums, then painted unit cubes, then a choice of two of them;
# L5 a right triangle's legs from their sum and difference, then its two circles: the distance
# between their centres (Euler) or the area between them.
_ANIMALS = (("chickens", "rabbits", 2, 4), ("bicycles", "tricycles", 2, 3), ("spiders", "beetles", 8, 6),
            ("ducks", "cows", 2, 4), ("cars", "motorbikes", 4, 2))
_TICKETS = (("adult", "child"), ("standing", "seated"), ("member", "guest"))
_TRIPLES = tuple(sorted((m * m - n * n, 2 * m * n, m * m + n * n) for m in range(2, 13) for n in range(1, m)
                       if (m - n) % 2 and math.gcd(m, n) == 1))       # primitive Pythagorean triples (Euclid)


def _word_draw(rng, level):
    if level in (1, 2):
        w = rng.randint(2, 80)
        if rng.random() < 0.5:
            rel = {"kind": "more", "d": rng.randint(1, 60)}
            length = w + rel["d"]
        else:
            rel = {"kind": "times", "k": rng.randint(2, 6)}
            length = rel["k"] * w
        return {"shape": "rectangle", "w": w, "l": length, "rel": rel, "ask": "area" if level == 1 else "diagonal",
                "thing": rng.choice(["garden", "field", "poster", "room", "pool"])}
    if level == 3:
        if rng.random() < 0.5:
            one, two, u, v = rng.choice(_ANIMALS)
            story = {"kind": "legs", "one": one, "two": two, "u": u, "v": v}
        else:
            one, two = rng.choice(_TICKETS)
            u, v = sorted(rng.sample(range(3, 30), 2))
            story = {"kind": "tickets", "one": one, "two": two, "u": u, "v": v}
        return {"shape": "groups", "n1": rng.randint(4, 40), "n2": rng.randint(4, 40), "story": story,
                "pick": [rng.randint(1, 3), rng.randint(1, 3)], "ask": rng.choice(["choose", "line_up"])}
    if level == 4:
        while True:
            dims = sorted(rng.randint(3, 24) for _ in range(3))
            faces = rng.choice([0, 1, 2])
            if _painted(dims, faces) >= 2:
                return {"shape": "box", "dims": dims, "faces": faces}
    a, b, _c = rng.choice(_TRIPLES)
    k = rng.randint(1, 15)
    return {"shape": "right_triangle", "a": a * k, "b": b * k, "ask": rng.choice(["center_distance", "circle_gap"]),
            "thing": rng.choice(["ramp", "sail", "roof truss", "garden bed", "tile"])}


def _painted(dims, faces: int) -> int:
    a, b, c = (v - 2 for v in dims)
    return {0: a * b * c, 1: 2 * (a * b + b * c + a * c), 2: 4 * (a + b + c)}[faces]


def _word_prompt(p):
    shape = p["shape"]
    if shape == "rectangle":
        per = 2 * (p["l"] + p["w"])
        rel = (f"its length is {p['rel']['d']} m more than its width" if p["rel"]["kind"] == "more"
               else f"its length is {p['rel']['k']} times its width")
        what = "its area in square metres" if p["ask"] == "area" else "the exact length of its diagonal in metres"
        return f"A rectangular {p['thing']} has a perimeter of {per} m, and {rel}. Find {what}."
    if shape == "groups":
        st = p["story"]
        total = p["n1"] + p["n2"]
        value = st["u"] * p["n1"] + st["v"] * p["n2"]
        k1, k2 = p["pick"]
        if st["kind"] == "legs":
            unit = "wheels" if st["one"] in ("cars", "bicycles") else "legs"
            head = "vehicles" if st["one"] in ("cars", "bicycles") else "animals"
            start = (f"A yard holds {st['one']} ({st['u']} {unit} each) and {st['two']} ({st['v']} {unit} each): "
                     f"{total} {head} and {value} {unit} in all.")
            one, two = st["one"], st["two"]
        else:
            start = (f"A show sold {total} tickets, {st['one']} tickets at ${st['u']} and {st['two']} tickets at "
                     f"${st['v']}, for ${value} in all.")
            one, two = f"{st['one']} ticket holders", f"{st['two']} ticket holders"
        if p["ask"] == "choose":
            return (f"{start} A photographer picks {k1} of the {one} and {k2} of the {two}. "
                    "How many different choices are possible?")
        return (f"{start} A photographer picks {k1} of the {one} and {k2} of the {two} and lines them up in a row. "
                "How many different line-ups are possible?")
    if shape == "box":
        l_, w, h = p["dims"]
        what = {0: "no painted face", 1: "exactly one painted face", 2: "exactly two painted faces"}[p["faces"]]
        return (f"A wooden box has whole-number edges: length plus width is {l_ + w} cm, width plus height is {w + h} cm "
                f"and length plus height is {l_ + h} cm. Its outside is painted and it is cut into 1 cm cubes. Two of "
                f"the cubes with {what} are chosen. In how many ways can this be done?")
    what = {"center_distance": "the exact distance between the centres of its inscribed and circumscribed circles, in cm",
            "circle_gap": "the exact area inside its circumscribed circle but outside its inscribed circle, in square "
                          "cm"}[p["ask"]]
    return (f"A {p['thing']} has the shape of a right triangle whose legs add up to {p['a'] + p['b']} cm and differ "
            f"by {abs(p['b'] - p['a'])} cm. Find {what}.")


def _choose(s: Solution, n, k, goal: str):
    """C(n, k): read off when k is 1 or n, otherwise one calculator call."""
    if k == 1:
        return s.step(D, "choosing one of n things can be done in n ways", f"C({n}, 1) = {{v}}", n,
                      errors=("calculation_error",))
    if k == n:
        return s.step(D, "choosing all n things can be done in one way", f"C({n}, {n}) = {{v}}", Z(1))
    return s.step(K, goal, f"C({n}, {k}) = {{v}}", sp.binomial(n, k), errors=ARITH, calc=f"binomial({n}, {k})")


def _word_solve(p, s: Solution):
    shape = p["shape"]
    if shape == "rectangle":
        return _rect_solve(p, s)
    if shape == "groups":
        return _groups_solve(p, s)
    if shape == "box":
        return _box_solve(p, s)
    return _triangle_solve(p, s)


def _rect_solve(p, s: Solution):
    per = Z(2 * (p["l"] + p["w"]))
    rel = p["rel"]
    second = f"l = w + {rel['d']}" if rel["kind"] == "more" else f"l = {rel['k']}w"
    s.step(M, "write the two conditions as equations in the length l and width w", f"2(l + w) = {per} and {second}.")
    s.step(T, "recall the perimeter and area of a rectangle", "P = 2(l + w), A = l*w.",
           search=("rectangle area perimeter length width", "geo.rectangle-area-perimeter"))
    half = s.step(K, "halve the perimeter", f"l + w = {per}/2 = {{v}}", per / 2, errors=ARITH, wrong=per,
                  calc=f"{per}/2")
    if rel["kind"] == "more":
        w = s.step(K, "substitute l = w + d and solve for w", f"w = ({half} - {rel['d']})/2 = {{v}}", (half - rel["d"]) / 2,
                   errors=CALC, wrong=(half + rel["d"]) / 2, calc=f"({half} - {rel['d']})/2")
        l_ = s.step(K, "add the difference to get the length", f"l = {w} + {rel['d']} = {{v}}", w + rel["d"],
                    errors=CALC, calc=f"{w} + {rel['d']}")
    else:
        w = s.step(K, "substitute l = kw and solve for w", f"w = {half}/({rel['k']} + 1) = {{v}}", half / (rel["k"] + 1),
                   errors=ARITH, wrong=half / rel["k"], calc=f"{half}/({rel['k']} + 1)")
        l_ = s.step(K, "multiply to get the length", f"l = {rel['k']}*{w} = {{v}}", rel["k"] * w, errors=ARITH,
                    calc=f"{rel['k']}*{w}")
    if p["ask"] == "area":
        area = s.step(K, "multiply length and width", f"A = {l_}*{w} = {{v}}", l_ * w, errors=ARITH, calc=f"{l_}*{w}")
        s.step(V, "check the perimeter with the sides found", f"2*({l_} + {w}) = {2 * (l_ + w)}.")
        return area
    s.step(T, "recall that the diagonal splits the rectangle into two right triangles", "d = sqrt(l^2 + w^2).",
           search=("diagonal of a rectangle pythagorean", "geo.rectangle-diagonal"))
    sq = s.step(K, "add the squares of the sides", f"{l_}^2 + {w}^2 = {{v}}", l_**2 + w**2, errors=ARITH,
                wrong=(l_ + w) ** 2, calc=f"{l_}**2 + {w}**2")
    diag = s.step(K, "take the square root", f"d = sqrt({sq}) = {{v}}", sp.sqrt(sq), errors=ARITH, calc=f"sqrt({sq})")
    s.step(V, "check the diagonal is longer than each side and shorter than their sum",
           f"{max(l_, w)} < {sp.N(diag, 6)} < {l_ + w}.")
    return diag


def _groups_solve(p, s: Solution):
    st = p["story"]
    total, value = Z(p["n1"] + p["n2"]), Z(st["u"] * p["n1"] + st["v"] * p["n2"])
    u, v = Z(st["u"]), Z(st["v"])
    k1, k2 = p["pick"]
    s.step(M, "name the two unknown numbers and write one equation for the count and one for the total",
           f"x + y = {total} and {u}x + {v}y = {value}.")
    s.step(T, "recall elimination for a 2x2 linear system", "Subtract a multiple of one equation to remove x.",
           search=("elimination method add equations eliminate variable", "alg.elimination-method"))
    y = s.step(K, "eliminate x and solve for y", f"y = ({value} - {u}*{total})/({v} - {u}) = {{v}}",
               (value - u * total) / (v - u), errors=CALC, wrong=(value - v * total) / (u - v),
               calc=f"({value} - {u}*{total})/({v} - {u})")
    xv = s.step(K, "substitute back for x", f"x = {total} - {y} = {{v}}", total - y, errors=CALC, calc=f"{total} - {y}")
    s.step(T, "recall the number of ways to choose k of n", "C(n, k) = n!/(k!(n - k)!); independent choices multiply.",
           search=("combinations choose k of n binomial coefficient", "cmb.combinations"))
    c1 = _choose(s, xv, k1, "count the choices from the first kind")
    c2 = _choose(s, y, k2, "count the choices from the second kind")
    ways = s.step(K, "multiply the independent choices", f"{c1}*{c2} = {{v}}", c1 * c2, errors=ARITH, wrong=c1 + c2,
                  calc=f"{c1}*{c2}")
    if p["ask"] == "line_up":
        s.step(T, "recall that n people can stand in a row in n! orders", "n distinct objects have n! arrangements.",
               search=("permutations arrangements in a row factorial", "cmb.permutations"))
        orders = s.step(K, "count the orders of the chosen people in a row", f"({k1} + {k2})! = {{v}}",
                        sp.factorial(k1 + k2), errors=ARITH, calc=f"factorial({k1 + k2})")
        ways = s.step(K, "multiply the choices by the orders", f"{ways}*{orders} = {{v}}", ways * orders, errors=ARITH,
                      wrong=ways + orders, calc=f"{ways}*{orders}")
    s.step(V, "check the two numbers in both equations", f"{xv} + {y} = {xv + y}, {u}*{xv} + {v}*{y} = {u * xv + v * y}.")
    return ways


def _box_solve(p, s: Solution):
    l0, w0, h0 = p["dims"]
    s1, s2, s3 = Z(l0 + w0), Z(w0 + h0), Z(l0 + h0)
    s.step(M, "write the three edge sums as a linear system", f"l + w = {s1}, w + h = {s2}, l + h = {s3}.")
    s.step(T, "recall how to solve a system in three variables", "Add all three equations, then subtract each one.",
           search=("linear system three variables elimination", "alg.system-three-variables"))
    half = s.step(K, "add the equations and halve", f"l + w + h = ({s1} + {s2} + {s3})/2 = {{v}}", (s1 + s2 + s3) / 2,
                  errors=ARITH, wrong=s1 + s2 + s3, calc=f"({s1} + {s2} + {s3})/2")
    h = s.step(K, "subtract l + w to get the height", f"h = {half} - {s1} = {{v}}", half - s1, errors=CALC,
               calc=f"{half} - {s1}")
    l_ = s.step(K, "subtract w + h to get the length", f"l = {half} - {s2} = {{v}}", half - s2, errors=CALC,
                calc=f"{half} - {s2}")
    w = s.step(K, "subtract l + h to get the width", f"w = {half} - {s3} = {{v}}", half - s3, errors=CALC,
               calc=f"{half} - {s3}")
    faces = p["faces"]
    s.step(P, "classify the unit cubes by position: corners, edges, faces, inside",
           "Corners have 3 painted faces, edge cubes 2, face cubes 1, interior cubes 0.")
    s.step(T, "recall the painted-cube counts", "inner lengths l - 2, w - 2, h - 2 count each kind.",
           search=("painted cube unit cubes faces painted count", "cmb.painted-cube"))
    if faces == 0:
        count = s.step(K, "count the interior cubes", f"({l_} - 2)*({w} - 2)*({h} - 2) = {{v}}",
                       (l_ - 2) * (w - 2) * (h - 2), errors=ARITH, wrong=l_ * w * h,
                       calc=f"({l_} - 2)*({w} - 2)*({h} - 2)")
    elif faces == 1:
        count = s.step(K, "count the cubes in the middle of the faces",
                       f"2*(({l_} - 2)*({w} - 2) + ({w} - 2)*({h} - 2) + ({l_} - 2)*({h} - 2)) = {{v}}",
                       2 * ((l_ - 2) * (w - 2) + (w - 2) * (h - 2) + (l_ - 2) * (h - 2)), errors=ARITH,
                       wrong=(l_ - 2) * (w - 2) + (w - 2) * (h - 2) + (l_ - 2) * (h - 2),
                       calc=f"2*(({l_} - 2)*({w} - 2) + ({w} - 2)*({h} - 2) + ({l_} - 2)*({h} - 2))")
    else:
        count = s.step(K, "count the cubes along the edges, without the corners",
                       f"4*(({l_} - 2) + ({w} - 2) + ({h} - 2)) = {{v}}", 4 * ((l_ - 2) + (w - 2) + (h - 2)),
                       errors=ARITH, wrong=4 * (l_ + w + h), calc=f"4*(({l_} - 2) + ({w} - 2) + ({h} - 2))")
    s.step(T, "recall the number of ways to choose 2 of n", "C(n, 2) = n(n - 1)/2.",
           search=("combinations choose k of n binomial coefficient", "cmb.combinations"))
    ways = s.step(K, "choose two of those cubes", f"C({count}, 2) = {count}*({count} - 1)/2 = {{v}}",
                  sp.binomial(count, 2), errors=ARITH, wrong=count * (count - 1), calc=f"{count}*({count} - 1)/2")
    s.step(V, "check the edge sums with the dimensions found", f"{l_} + {w} = {l_ + w}, {w} + {h} = {w + h}, "
           f"{l_} + {h} = {l_ + h}.")
    return ways


def _triangle_solve(p, s: Solution):
    total, gap = Z(p["a"] + p["b"]), Z(abs(p["b"] - p["a"]))
    s.step(M, "write the legs as a system (longer leg b, shorter leg a)", f"a + b = {total} and b - a = {gap}.")
    s.step(T, "recall elimination for a 2x2 linear system", "Add and subtract the equations.",
           search=("elimination method add equations eliminate variable", "alg.elimination-method"))
    b = s.step(K, "add the equations to find the longer leg", f"b = ({total} + {gap})/2 = {{v}}", (total + gap) / 2,
               errors=CALC, calc=f"({total} + {gap})/2")
    a = s.step(K, "subtract to find the shorter leg", f"a = {total} - {b} = {{v}}", total - b, errors=CALC,
               calc=f"{total} - {b}")
    s.step(T, "recall the Pythagorean theorem", "c^2 = a^2 + b^2.",
           search=("pythagorean theorem hypotenuse right triangle", "geo.pythagorean-theorem"))
    sq = s.step(K, "add the squares of the legs", f"{a}^2 + {b}^2 = {{v}}", a * a + b * b, errors=ARITH,
                calc=f"{a}**2 + {b}**2")
    c = s.step(K, "take the square root for the hypotenuse", f"c = sqrt({sq}) = {{v}}", sp.sqrt(sq), errors=ARITH,
               calc=f"sqrt({sq})")
    s.step(T, "recall the radii of the two circles of a triangle", "r = A/s; in a right triangle R = c/2 (Thales).",
           search=("circumcenter incenter inradius circumradius triangle", "geo.circumcenter-incenter"))
    big = s.step(K, "halve the hypotenuse for the circumradius", f"R = {c}/2 = {{v}}", c / 2, errors=ARITH, wrong=c,
                 calc=f"({c})/2")
    area = s.step(K, "compute the area from the legs", f"A = {a}*{b}/2 = {{v}}", a * b / 2, errors=ARITH, wrong=a * b,
                  calc=f"{a}*{b}/2")
    semi = s.step(K, "compute the semiperimeter", f"s = ({a} + {b} + {c})/2 = {{v}}", (a + b + c) / 2, errors=ARITH,
                  wrong=a + b + c, calc=f"({a} + {b} + ({c}))/2")
    small = s.step(K, "divide the area by the semiperimeter for the inradius", f"r = {area}/{semi} = {{v}}",
                   area / semi, errors=ARITH, calc=f"({area})/({semi})")
    if p["ask"] == "center_distance":
        s.step(T, "recall Euler's formula for the distance between the centres", "d^2 = R(R - 2r).",
               search=("distance between incenter and circumcenter euler formula", "geo.euler-centers-distance"))
        d2 = s.step(K, "evaluate R(R - 2r)", f"d^2 = {big}*({big} - 2*{small}) = {{v}}", big * (big - 2 * small),
                    errors=CALC, wrong=big * (big + 2 * small), calc=f"({big})*(({big}) - 2*({small}))")
        value = s.step(K, "take the square root", f"d = sqrt({d2}) = {{v}}", sp.sqrt(d2), errors=ARITH,
                       calc=f"sqrt({d2})")
    else:
        s.step(T, "recall the area of a circle", "A = pi*r^2.", search=("area of a circle radius pi", "geo.circle-area"))
        value = s.step(K, "subtract the inner circle's area from the outer one's",
                       f"pi*({big})^2 - pi*({small})^2 = {{v}}", sp.pi * (big**2 - small**2), errors=ARITH,
                       wrong=sp.pi * (big - small) ** 2, calc=f"pi*(({big})**2 - ({small})**2)")
    s.step(V, "check that the incircle fits inside the circumcircle", f"r = {small} < R = {big}.")
    return value


def _word_direct(p):
    shape = p["shape"]
    if shape == "rectangle":
        ell, wid = sp.symbols("ell wid", positive=True)
        rel = p["rel"]
        per = 2 * (p["l"] + p["w"])
        second = sp.Eq(ell, wid + rel["d"]) if rel["kind"] == "more" else sp.Eq(ell, rel["k"] * wid)
        sol = sp.solve([sp.Eq(2 * (ell + wid), per), second], [ell, wid], dict=True)[0]
        if p["ask"] == "area":
            rect = sp.Polygon(sp.Point(0, 0), sp.Point(sol[ell], 0), sp.Point(sol[ell], sol[wid]), sp.Point(0, sol[wid]))
            return abs(rect.area)
        return sp.Point(0, 0).distance(sp.Point(sol[ell], sol[wid]))
    if shape == "groups":
        st = p["story"]
        u1, u2 = sp.symbols("u1 u2")
        sol = sp.solve([sp.Eq(u1 + u2, p["n1"] + p["n2"]), sp.Eq(st["u"] * u1 + st["v"] * u2,
                                                                 st["u"] * p["n1"] + st["v"] * p["n2"])], [u1, u2])
        ways = sp.binomial(sol[u1], p["pick"][0]) * sp.binomial(sol[u2], p["pick"][1])
        return ways * sp.factorial(sum(p["pick"])) if p["ask"] == "line_up" else ways
    if shape == "box":
        e1, e2, e3 = sp.symbols("e1 e2 e3")
        l0, w0, h0 = p["dims"]
        sol = sp.solve([sp.Eq(e1 + e2, l0 + w0), sp.Eq(e2 + e3, w0 + h0), sp.Eq(e1 + e3, l0 + h0)], [e1, e2, e3])
        return sp.binomial(_painted([sol[e1], sol[e2], sol[e3]], p["faces"]), 2)
    la, lb = sp.symbols("la lb", positive=True)
    sol = sp.solve([sp.Eq(la + lb, p["a"] + p["b"]), sp.Eq(lb - la, abs(p["b"] - p["a"]))], [la, lb])
    tri = sp.Triangle(sp.Point(0, 0), sp.Point(sol[la], 0), sp.Point(0, sol[lb]))
    if p["ask"] == "center_distance":
        return tri.incenter.distance(tri.circumcenter)
    return sp.pi * (tri.circumradius**2 - tri.inradius**2)


def _word_second(p, ans):
    """Search the integer solutions of the system by brute force, then measure, count or place directly."""
    shape = p["shape"]
    if shape == "rectangle":
        per = 2 * (p["l"] + p["w"])
        rel = p["rel"]
        found = [(per // 2 - wi, wi) for wi in range(1, per // 2)
                 if (per // 2 - wi == wi + rel["d"] if rel["kind"] == "more" else per // 2 - wi == rel["k"] * wi)]
        if len(found) != 1:
            return False
        le, wi = found[0]
        return (le * wi == ans) if p["ask"] == "area" else sp.sqrt(le * le + wi * wi) == ans
    if shape == "groups":
        st = p["story"]
        total, value = p["n1"] + p["n2"], st["u"] * p["n1"] + st["v"] * p["n2"]
        found = [(a, total - a) for a in range(total + 1) if st["u"] * a + st["v"] * (total - a) == value]
        if len(found) != 1:
            return False
        a, b = found[0]
        k1, k2 = p["pick"]
        ways = sum(1 for _ in itertools.combinations(range(a), k1)) * sum(1 for _ in itertools.combinations(range(b), k2))
        if p["ask"] == "line_up":
            ways *= sum(1 for _ in itertools.permutations(range(k1 + k2)))
        return ways == ans
    if shape == "box":
        l0, w0, h0 = p["dims"]
        found = [(le, wi, he) for le in range(1, 40) for wi in range(1, 40) for he in [w0 + h0 - wi]
                 if le + wi == l0 + w0 and le + he == l0 + h0]
        if len(found) != 1:
            return False
        le, wi, he = found[0]
        count = sum(((i in (0, le - 1)) + (j in (0, wi - 1)) + (k in (0, he - 1))) == p["faces"]
                    for i in range(le) for j in range(wi) for k in range(he))
        return count * (count - 1) // 2 == ans
    total, gap = p["a"] + p["b"], abs(p["b"] - p["a"])
    found = [(a, total - a) for a in range(1, total) if (total - a) - a == gap]
    if len(found) != 1:
        return False
    a, b = found[0]
    c = math.hypot(a, b)
    r = a * b / (a + b + c)                      # incentre (r, r) with the legs on the axes
    value = (math.dist((r, r), (a / 2, b / 2)) if p["ask"] == "center_distance"
             else math.pi * ((c / 2) ** 2 - r * r))    # circumcentre: the hypotenuse's midpoint
    return abs(float(ans) - value) <= 1e-9 * max(1.0, value)


FAMILIES = [
    Family("sequences_recurrences", "sequences", "alg.recursive-sequence", "number",
           _seq_draw, _seq_prompt, _seq_solve, _seq_direct, _seq_second, "iterating the definition"),
    Family("committee_counting", "counting", "cmb.committee-selection", "number",
           _com_draw, _com_prompt, _com_solve, _com_direct, _com_second, "brute-force enumeration of committees"),
    Family("inclusion_exclusion", "counting", "cmb.inclusion-exclusion", "number",
           _div_draw, _div_prompt, _div_solve, _div_direct, _div_second, "brute-force scan of the range"),
    Family("divisors_gcd_lcm", "number_theory", "nt.euclidean-algorithm", "number",
           _gcd_draw, _gcd_prompt, _gcd_solve, _gcd_direct, _gcd_second, "trial division and scanning multiples"),
    Family("modular_arithmetic", "number_theory", "nt.modular-arithmetic", "number",
           _mod_draw, _mod_prompt, _mod_solve, _mod_direct, _mod_second, "brute-force search of residues"),
    Family("function_composition", "functions", "alg.function-composition", "number",
           _fun_draw, _fun_prompt, _fun_solve, _fun_direct, _fun_second, "exact substitution"),
    Family("chained_word_problem", "word_problems", "alg.word-problem-translation", "number",
           _word_draw, _word_prompt, _word_solve, _word_direct, _word_second, "integer search of the system"),
]
