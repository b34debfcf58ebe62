"""Algebra problem families: ten knowledge points, five difficulty levels each.

Levels: 1 small positive integers; 2 negatives and larger numbers; 3 fractions or an extra
algebraic step; 4 a word problem (modeling); 5 a word problem with an extra step.
Each family computes its answer three ways: the worked solution, sympy directly, and a
second method (substitution, Vieta, brute-force summation, test points).
"""
from __future__ import annotations

from functools import lru_cache

import sympy as sp

from pipeline.tasks.math.core import C, D, F, Family, K, M, R, S, Solution, T, V, const, nonzero, term, x, y

CALC = ("calculation_error", "sign_error")


# ---- 1. linear equation --------------------------------------------------------------------
def _lin_draw(rng, level):
    sol = rng.randint(1, 12) if level in (1, 4) else nonzero(rng, -12, 12)
    if level == 3:
        den = rng.choice([2, 3, 4, 5])
        sol = R(f"{rng.choice([v for v in range(-9, 10) if v % den])}/{den}")    # never a whole number
    a = rng.randint(2, 9) if level in (1, 4) else nonzero(rng, -9, 9)
    c = 0 if level in (1, 4) else rng.choice([v for v in range(-9, 10) if v not in (0, a)])
    b = rng.randint(1, 30) if level in (1, 4) else nonzero(rng, -20, 20)
    d = a * sol + b - c * sol
    if level == 3:              # the fractions level: a fractional constant, and a fractional solution
        for _ in range(100):
            b = R(f"{rng.choice([v for v in range(-40, 41) if v % sol.q])}/{sol.q}")
            d = a * sol + b - c * sol
            if not d.is_Integer:
                break
    p = {"a": a, "b": str(b) if level == 3 else b, "c": c, "d": str(d), "sol": str(sol)}
    if level == 4:
        p["story"] = rng.choice(["taxi", "gym", "phone"])
    if level == 5:
        a, c = rng.sample(range(2, 15), 2)
        if a < c:
            a, c = c, a
        sol = rng.randint(2, 20)
        b = rng.randint(5, 40)
        p = {"a": a, "b": b, "c": c, "d": str(a * sol + b - c * sol), "sol": str(sol), "story": "plans"}
    return p


def _lin_prompt(p):
    a, b, c, d = p["a"], R(p["b"]), p["c"], R(p["d"])
    story = p.get("story")
    if story == "taxi":
        return (f"A taxi charges a flat fee of ${b} plus ${a} per kilometre. A ride cost ${d}. "
                "How many kilometres long was the ride?")
    if story == "gym":
        return (f"A gym charges a joining fee of ${b} plus ${a} per visit. Sam paid ${d} in total. "
                "How many visits did Sam make?")
    if story == "phone":
        return (f"A phone plan costs ${b} a month plus ${a} per gigabyte of data. One month's bill was ${d}. "
                "How many gigabytes were used?")
    if story == "plans":
        return (f"Plan A costs ${b} plus ${a} per hour; plan B costs ${d} plus ${c} per hour. "
                "After how many hours do both plans cost the same?")
    left = f"{term(a, first=True)} {const(b)}"
    right = f"{term(c, first=True)} {const(d)}" if c else const(d, first=True)
    return f"Solve for x: {left} = {right}"


def _lin_solve(p, s: Solution):
    a, b, c, d = p["a"], R(p["b"]), p["c"], R(p["d"])
    story = p.get("story")
    if story:
        if story == "plans":
            eq = s.step(M, "model both costs as expressions in the number of hours x and set them equal",
                        "Let x be the hours: {v}.", sp.Eq(a * x + b, c * x + d, evaluate=False))
        else:
            eq = s.step(M, "model the total cost as an equation in the unknown quantity x",
                        "Let x be the unknown quantity: {v}.", sp.Eq(a * x + b, d, evaluate=False))
        (a, b), (c, d) = _linear_parts(eq.lhs), _linear_parts(eq.rhs)
    else:
        a, b, c, d = s.step(S, "read the coefficients and constants on each side",
                            "Coefficients and constants (left x, left const, right x, right const): {v}.",
                            (sp.Integer(a), b, sp.Integer(c), d), errors=("transcription_error",))
    if not (b.is_Integer and d.is_Integer):
        q = sp.ilcm(sp.denom(b), sp.denom(d))
        a, b, c, d = s.step(K, "clear the fractions by multiplying every term by the common denominator",
                            f"times {q}: (left x, left const, right x, right const) = {{v}}",
                            (a * q, b * q, c * q, d * q), errors=("calculation_error",),
                            calc=f"(({a})*{q}, ({b})*{q}, ({c})*{q}, ({d})*{q})")
    s.step(C, "recall how to isolate x in a linear equation",
           "Collect x terms on one side and constants on the other, then divide by the x coefficient.",
           search=("solve linear equation one variable isolate", "alg.linear-equation"))
    if c == 0:
        k = s.step(D, "note that only the left side has an x term", "The x coefficient stays {v}.", a,
                   errors=("transcription_error", "sign_error"))
    else:
        k = s.step(K, "collect the x terms", f"x coefficient: {a} - ({c}) = {{v}}", a - c, errors=CALC,
                   calc=f"({a}) - ({c})")
    m = s.step(K, "collect the constants", f"constant: {d} - ({b}) = {{v}}", d - b, errors=CALC,
               calc=f"({d}) - ({b})")
    sol = s.step(K, "divide to isolate x", f"x = {m}/({k}) = {{v}}", m / k if k else sp.nan,
                 errors=CALC, wrong=k / m if m else None, calc=f"({m})/({k})")
    s.step(V, "check by substituting x back into the equation",
           f"Check: left side {a*sol + b}, right side {c*sol + d}.")
    return sol


def _linear_parts(expr):
    expr = sp.expand(expr)
    return sp.Integer(expr.coeff(x, 1)), expr.coeff(x, 0)


def _lin_direct(p):
    return sp.solve(sp.Eq(p["a"] * x + R(p["b"]), p["c"] * x + R(p["d"])), x)[0]


def _lin_second(p, ans):
    return sp.simplify(p["a"] * ans + R(p["b"]) - (p["c"] * ans + R(p["d"]))) == 0 and ans == R(p["sol"])


# ---- 2. system of two linear equations -----------------------------------------------------
def _sys_draw(rng, level):
    if level >= 4:
        n_a, n_c = rng.randint(3, 40), rng.randint(3, 40)
        pa, pc = rng.sample(range(4, 25), 2)
        p = {"a1": 1, "b1": 1, "c1": n_a + n_c, "a2": pa, "b2": pc, "c2": pa * n_a + pc * n_c,
             "x0": n_a, "y0": n_c, "story": "tickets" if level == 4 else "coins"}
        return p
    span = {1: 5, 2: 9, 3: 12}[level]
    while True:
        a1, b1, a2, b2 = (nonzero(rng, -span, span) for _ in range(4))
        if level == 1:
            a1, b1 = 1, rng.choice([1, -1])
        if a1 * b2 - a2 * b1 != 0:
            break
    x0, y0 = nonzero(rng, -10, 10), nonzero(rng, -10, 10)
    return {"a1": a1, "b1": b1, "c1": a1 * x0 + b1 * y0, "a2": a2, "b2": b2, "c2": a2 * x0 + b2 * y0,
            "x0": x0, "y0": y0}


def _sys_prompt(p):
    if p.get("story") == "tickets":
        return (f"A theatre sold {p['c1']} tickets: adult tickets at ${p['a2']} and child tickets at ${p['b2']}. "
                f"Takings were ${p['c2']}. How many adult and how many child tickets were sold? "
                "Answer as (adults, children).")
    if p.get("story") == "coins":
        return (f"A jar holds {p['c1']} coins, some worth {p['a2']} cents and the rest worth {p['b2']} cents, "
                f"{p['c2']} cents in all. How many coins of each kind are there? "
                f"Answer as ({p['a2']}-cent coins, {p['b2']}-cent coins).")
    e1 = f"{term(p['a1'], first=True)} {term(p['b1'], 'y')} = {p['c1']}"
    e2 = f"{term(p['a2'], first=True)} {term(p['b2'], 'y')} = {p['c2']}"
    return f"Solve the system: {e1} and {e2}. Answer as (x, y)."


def _sys_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "name the two unknown counts and write one equation for the count and one for the value",
               f"x + y = {p['c1']} and {p['a2']}x + {p['b2']}y = {p['c2']}.")
    a1, b1, c1, a2, b2, c2 = s.step(
        S, "read the coefficients of both equations", "Coefficients (a1, b1, c1, a2, b2, c2): {v}.",
        tuple(sp.Integer(p[k]) for k in ("a1", "b1", "c1", "a2", "b2", "c2")), errors=("transcription_error",))
    if a1 == 1:
        return _sys_substitute(s, a1, b1, c1, a2, b2, c2)
    s.step(T, "recall Cramer's rule / elimination for a 2x2 system",
           "Use elimination in determinant form: x = (c1*b2 - c2*b1)/D, y = (a1*c2 - a2*c1)/D.",
           search=("system two linear equations determinant elimination", "alg.cramers-rule"))
    det = s.step(K, "compute the determinant D", f"D = {a1}*{b2} - {a2}*{b1} = {{v}}", a1 * b2 - a2 * b1,
                 errors=CALC, calc=f"({a1})*({b2}) - ({a2})*({b1})")
    s.step(D, "conclude that the system has exactly one solution", f"D = {det} is not 0, so there is one solution.")
    xv = s.step(K, "eliminate y to find x", f"x = ({c1}*{b2} - {c2}*{b1})/{det} = {{v}}",
                (c1 * b2 - c2 * b1) / det, errors=CALC, calc=f"(({c1})*({b2}) - ({c2})*({b1}))/({det})")
    yv = s.step(K, "substitute back to find y", f"y = ({c1} - {a1}*{xv})/{b1} = {{v}}",
                (c1 - a1 * xv) / b1, errors=CALC, calc=f"(({c1}) - ({a1})*({xv}))/({b1})")
    s.step(V, "check both equations with the solution",
           f"Check: {a1*xv + b1*yv} vs {c1} and {a2*xv + b2*yv} vs {c2}.")
    return (xv, yv)


def _sys_substitute(s: Solution, a1, b1, c1, a2, b2, c2):
    """x has coefficient 1 in the first equation: solve it for x and substitute into the second."""
    s.step(T, "recall the substitution method: solve one equation for a variable and substitute",
           f"x = {c1} - ({b1})y from the first equation.",
           search=("substitution method solve one equation substitute", "alg.substitution-method"))
    coef = s.step(K, "substitute and collect the y terms", f"{b2} - ({a2})*({b1}) = {{v}}", b2 - a2 * b1,
                  errors=CALC, calc=f"({b2}) - ({a2})*({b1})")
    yv = s.step(K, "solve for y", f"y = ({c2} - ({a2})*({c1}))/({coef}) = {{v}}", (c2 - a2 * c1) / coef,
                errors=CALC, calc=f"(({c2}) - ({a2})*({c1}))/({coef})")
    xv = s.step(K, "substitute back to find x", f"x = {c1} - ({b1})*({yv}) = {{v}}", c1 - b1 * yv, errors=CALC,
                calc=f"({c1}) - ({b1})*({yv})")
    s.step(V, "check both equations with the solution",
           f"Check: {a1*xv + b1*yv} vs {c1} and {a2*xv + b2*yv} vs {c2}.")
    return (xv, yv)


def _sys_direct(p):
    sol = sp.solve([sp.Eq(p["a1"] * x + p["b1"] * y, p["c1"]), sp.Eq(p["a2"] * x + p["b2"] * y, p["c2"])], [x, y])
    return (sol[x], sol[y])


def _sys_second(p, ans):
    xv, yv = ans
    return (p["a1"] * xv + p["b1"] * yv == p["c1"] and p["a2"] * xv + p["b2"] * yv == p["c2"]
            and (xv, yv) == (p["x0"], p["y0"]))


# ---- 3. quadratic equation -----------------------------------------------------------------
def _quad_draw(rng, level):
    if level == 1:
        r, t = rng.sample(range(1, 61), 2)
        return {"a": 1, "b": -(r + t), "c": r * t}
    if level == 2:
        r, t = rng.sample([v for v in range(-40, 41) if v], 2)
        return {"a": 1, "b": -(r + t), "c": r * t}
    if level == 3:
        while True:
            p1, q1, p2, q2 = rng.randint(1, 5), nonzero(rng, -7, 7), rng.randint(1, 4), nonzero(rng, -7, 7)
            poly = sp.expand((p1 * x - q1) * (p2 * x - q2))
            a, b, c = (int(poly.coeff(x, k)) for k in (2, 1, 0))
            if a > 1 and sp.gcd_list([a, b, c]) == 1 and q1 * p2 != q2 * p1:
                return {"a": a, "b": b, "c": c}
    if level == 4:
        while True:
            a, b, c = rng.randint(1, 5), nonzero(rng, -15, 15), nonzero(rng, -25, 25)
            disc = b * b - 4 * a * c
            if disc > 0 and not sp.sqrt(disc).is_Integer:
                return {"a": a, "b": b, "c": c}
    w, extra = rng.randint(3, 60), rng.randint(1, 40)
    return {"a": 1, "b": extra, "c": -w * (w + extra), "story": "rectangle"}


def _quad_prompt(p):
    if p.get("story") == "rectangle":
        return (f"A rectangle is {p['b']} m longer than it is wide and its area is {-p['c']} square metres. "
                "How wide is it (in metres)?")
    return f"Solve for x: {term(p['a'], 'x^2', first=True)} {term(p['b'])} {const(p['c'])} = 0. Give all real roots."


def _quad_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "let the width be x and write the area as an equation",
               f"x*(x + {p['b']}) = {-p['c']}, i.e. x^2 + {p['b']}x - {-p['c']} = 0.")
    a, b, c = s.step(S, "read the coefficients a, b, c of the quadratic", "a, b, c = {v}.",
                     (sp.Integer(p["a"]), sp.Integer(p["b"]), sp.Integer(p["c"])), errors=("transcription_error",))
    s.step(T, "recall the quadratic formula", "x = (-b +- sqrt(b^2 - 4ac))/(2a).",
           search=("quadratic formula roots of quadratic equation", "alg.quadratic-formula"))
    disc = s.step(K, "compute the discriminant", f"D = ({b})^2 - 4*{a}*({c}) = {{v}}", b * b - 4 * a * c,
                  errors=("calculation_error",), wrong=b * b + 4 * a * c, calc=f"({b})**2 - 4*({a})*({c})")
    s.step(D, "decide how many real roots there are from the sign of D", f"D = {disc} > 0: two real roots.")
    root = s.step(K, "take the square root of the discriminant", f"sqrt({disc}) = {{v}}", sp.sqrt(disc),
                  errors=("calculation_error",), calc=f"sqrt({disc})")
    if a == 1 and root.is_Integer and not p.get("story"):
        return _quad_factor(s, b, c)
    r1 = s.step(K, "compute the smaller root", f"x1 = (-({b}) - {root})/(2*{a}) = {{v}}",
                sp.radsimp((-b - root) / (2 * a)), errors=CALC, calc=f"(-({b}) - {root})/(2*({a}))")
    r2 = s.step(K, "compute the larger root", f"x2 = (-({b}) + {root})/(2*{a}) = {{v}}",
                sp.radsimp((-b + root) / (2 * a)), errors=CALC, calc=f"(-({b}) + {root})/(2*({a}))")
    roots = [r1, r2]
    if p.get("story"):
        roots = s.step(D, "reject the negative root because a width is positive",
                       "A width must be positive, so the width is {v} m.", [r for r in roots if r > 0] or [r2])
        s.step(V, "check the area with the width found", f"Check: {roots[0]}*({roots[0]} + {p['b']}) = "
               f"{sp.expand(roots[0] * (roots[0] + p['b']))}.")
        return roots[0]
    s.step(V, "check the roots with Vieta's formulas",
           f"Check: sum {sp.simplify(r1 + r2)} vs -b/a = {sp.Rational(-b, a)}, "
           f"product {sp.simplify(r1 * r2)} vs c/a = {sp.Rational(c, a)}.")
    return sp.simplify(r1) if r1 == r2 else sorted([r1, r2], key=sp.default_sort_key)


def _quad_factor(s: Solution, b, c):
    """A monic quadratic with a perfect-square discriminant has integer roots: factor it instead."""
    s.step(T, "the discriminant is a perfect square: factor with two integers of product c and sum b",
           "x^2 + bx + c = (x - r)(x - s) with r + s = -b and r*s = c.",
           search=("factoring quadratic trinomial two numbers product sum", "alg.factoring-quadratics"))
    factored = s.step(F, "write the quadratic as a product of two linear factors", "{v} = 0",
                      sp.factor(x**2 + b * x + c), calc=f"factor(x**2 + ({b})*x + ({c}))")
    roots = s.step(D, "set each factor equal to zero", "x = {v}", sorted(sp.solve(factored, x), key=sp.default_sort_key),
                   errors=("sign_error", "omission"))
    if len(roots) != 2:
        raise ValueError("the factors do not give two roots")
    s.step(V, "check the roots with Vieta's formulas", f"Check: sum {roots[0] + roots[1]} vs -b = {-b}, "
           f"product {roots[0] * roots[1]} vs c = {c}.")
    return roots


def _quad_direct(p):
    roots = sp.solve(p["a"] * x**2 + p["b"] * x + p["c"], x)
    if p.get("story"):
        return next(r for r in roots if r > 0)
    return sorted(roots, key=sp.default_sort_key)


def _quad_second(p, ans):
    a, b, c = p["a"], p["b"], p["c"]
    if p.get("story"):
        return ans > 0 and sp.expand(ans * (ans + b)) == -c
    r1, r2 = ans
    return (sp.simplify(r1 + r2 + sp.Rational(b, a)) == 0 and sp.simplify(r1 * r2 - sp.Rational(c, a)) == 0
            and all(sp.simplify(a * r**2 + b * r + c) == 0 for r in ans))


# ---- 4. linear inequality ------------------------------------------------------------------
_RELS = {"<": sp.Lt, "<=": sp.Le, ">": sp.Gt, ">=": sp.Ge}


def _ineq_draw(rng, level):
    if level >= 4:
        rate, fee = rng.randint(2, 15), rng.randint(5, 50)
        budget = fee + rate * rng.randint(3, 30) + rng.randint(0, rate - 1)
        p = {"a": rate, "b": fee, "c": budget, "rel": "<=", "story": "budget"}
        if level == 5:
            p.update(story="savings", rel=">=")
        return p
    a = rng.randint(2, 9) if level == 1 else rng.randint(-9, -1) if level == 2 else nonzero(rng, -9, 9)
    b = nonzero(rng, -20, 20)
    k = nonzero(rng, -10, 10)
    c = a * k + b + (rng.randint(1, abs(a) - 1) if level == 3 and abs(a) > 1 else 0)
    return {"a": a, "b": b, "c": c, "rel": rng.choice(list(_RELS))}


def _ineq_prompt(p):
    if p.get("story") == "budget":
        return (f"A bike rental costs ${p['b']} plus ${p['a']} per hour. With ${p['c']} to spend, for how many hours "
                "x can you rent the bike? Answer as an inequality in x.")
    if p.get("story") == "savings":
        return (f"Mia has ${p['b']} saved and adds ${p['a']} each week. She wants at least ${p['c']}. "
                "For which numbers of weeks x is that true? Answer as an inequality in x.")
    return f"Solve for x: {term(p['a'], first=True)} {const(p['b'])} {p['rel']} {p['c']}. Answer as an inequality."


def _ineq_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "write the condition as a linear inequality in x",
               f"{p['a']}x + {p['b']} {p['rel']} {p['c']}.")
    a, b, c = s.step(S, "read the coefficient, the constant and the bound", "a, b, c = {v}.",
                     (sp.Integer(p["a"]), sp.Integer(p["b"]), sp.Integer(p["c"])), errors=("transcription_error",))
    if a < 0:
        s.step(C, "recall that dividing by a negative number reverses an inequality",
               "Dividing both sides by a negative number reverses the direction of the inequality.",
               search=("reverse inequality multiply divide negative number", "alg.inequality-sign-flip"))
    else:
        s.step(C, "recall how to solve a linear inequality",
               "Solve like an equation; the direction stays when dividing by a positive number.",
               search=("linear inequality dividing negative number reverses sign", "alg.linear-inequality"))
    rhs = s.step(K, "subtract the constant from both sides", f"{a}x {p['rel']} {c} - ({b}) = {{v}}", c - b,
                 errors=CALC, calc=f"({c}) - ({b})")
    bound = s.step(K, "divide both sides by the coefficient of x", f"bound = {rhs}/({a}) = {{v}}",
                   rhs / a, errors=CALC,
                   calc=f"({rhs})/({a})")
    rel = _RELS[p["rel"]](x, bound)
    if a < 0:
        rel = rel.reversed.func(x, bound)
    result = s.step(D, "decide the direction of the inequality from the sign of the coefficient",
                    f"The coefficient {a} is {'negative, so the sign flips' if a < 0 else 'positive, so the sign stays'}:"
                    " {v}.", rel, errors=("sign_error",))
    probe = result.rhs + (1 if result.func in (sp.Gt, sp.Ge) else -1)
    s.step(V, "check a test value inside the solution set",
           f"Check x = {probe}: {a}*{probe} + {b} = {a*probe + b}, compare with {c}.")
    return result


def _ineq_set(p):
    return _solution_set(p["a"], p["b"], p["c"], p["rel"])


@lru_cache(maxsize=256)
def _solution_set(a: int, b: int, c: int, rel: str):
    """sympy's solution set of a*x + b REL c (slow; the direct answer and the second way both need it)."""
    return sp.solve_univariate_inequality(_RELS[rel](a * x + b, c), x, relational=False)


def _ineq_direct(p):
    """The solution set as a condition 'x < k' (sympy gives it as an interval)."""
    interval = _ineq_set(p)
    if interval.left == -sp.oo:
        return (sp.Le if interval.right in interval else sp.Lt)(x, interval.right)
    return (sp.Ge if interval.left in interval else sp.Gt)(x, interval.left)


def _ineq_second(p, ans):
    """Test points on both sides of the bound and the bound itself against the original inequality."""
    original = _RELS[p["rel"]](p["a"] * x + p["b"], p["c"])
    bound = ans.rhs
    for t in (bound - 1, bound - sp.Rational(1, 7), bound, bound + sp.Rational(1, 7), bound + 1):
        if bool(original.subs(x, t)) != bool(ans.subs(x, t)):
            return False
    return ans.as_set() == _ineq_set(p)


# ---- 5. factoring polynomials --------------------------------------------------------------
def _fact_draw(rng, level):
    if level == 1:
        r, t = rng.sample(range(-30, 31), 2)
        return {"factors": [[1, -r], [1, -t]], "gcf": 1}
    if level == 2:
        r, t = rng.sample([v for v in range(-15, 16) if v], 2)
        return {"factors": [[1, -r], [1, -t]], "gcf": rng.randint(2, 9) * rng.choice([1, -1])}
    if level == 3:
        while True:
            f1 = [rng.randint(2, 5), nonzero(rng, -7, 7)]
            f2 = [rng.randint(1, 4), nonzero(rng, -7, 7)]
            if sp.gcd(*f1) == 1 and sp.gcd(*f2) == 1 and f1[1] * f2[0] != f2[1] * f1[0]:
                return {"factors": [f1, f2], "gcf": 1}
    if level == 4:
        while True:
            a, b = rng.randint(1, 15), rng.randint(1, 30)
            if sp.gcd(a, b) == 1:
                return {"factors": [[a, -b], [a, b]], "gcf": rng.randint(1, 8), "story": "area"}
    roots = rng.sample([v for v in range(-12, 13) if v], 3)
    return {"factors": [[1, -r] for r in roots], "gcf": 1}


def _fact_poly(p):
    return sp.expand(p["gcf"] * sp.Mul(*[a * x + b for a, b in p["factors"]]))


def _fact_prompt(p):
    poly = sp.sstr(_fact_poly(p)).replace("**", "^")
    if p.get("story") == "area":
        return (f"The area of a rectangle is {poly}. Factor this expression completely to find possible "
                "expressions for its side lengths. Give the complete factorization.")
    return f"Factor completely: {poly}"


def _fact_solve(p, s: Solution):
    poly = _fact_poly(p)
    if p.get("story"):
        s.step(M, "recognise that side lengths are factors of the area expression",
               "Side lengths multiply to the area, so factor the area polynomial.")
    coeffs = s.step(S, "read the coefficients of the polynomial", "Coefficients from the highest power: {v}.",
                    [sp.Integer(c) for c in sp.Poly(poly, x).all_coeffs()], errors=("transcription_error",))
    s.step(C, "recall the factoring strategy: common factor first, then special products and trinomials",
           "Take out the greatest common factor, then factor what is left.",
           search=("factoring polynomials greatest common factor trinomial", "alg.factoring-polynomials"))
    g = s.step(K, "find the greatest common factor of the coefficients", "GCF = {v}",
               sp.gcd_list(coeffs) * (1 if coeffs[0] > 0 else -1), errors=("calculation_error",),
               calc=f"gcd([{', '.join(map(str, coeffs))}])*({1 if coeffs[0] > 0 else -1})")
    rest = sp.Add(*[c * x**k for k, c in enumerate(reversed(coeffs))]) / g
    rest = sp.expand(rest)
    lead, const = rest.coeff(x, 2), rest.coeff(x, 0)
    if (sp.degree(rest, x) == 2 and rest.coeff(x, 1) == 0 and lead > 0 and const < 0
            and sp.sqrt(lead).is_Integer and sp.sqrt(-const).is_Integer):
        return _fact_squares(s, poly, g, lead, -const)
    if sp.degree(rest, x) == 3:
        roots = _cubic_roots(s, rest)
    else:
        roots = s.step(K, "find the roots of the remaining polynomial", f"Roots of {rest}: {{v}}",
                       sorted(sp.solve(rest, x), key=sp.default_sort_key), errors=("sign_error", "omission"),
                       calc=f"solve({rest}, x)")
    lead = sp.Poly(rest, x).LC()
    pieces = []
    for r in roots:
        num, den = sp.fraction(sp.Rational(r))
        pieces.append(den * x - num)
    leftover = sp.simplify(lead / sp.Mul(*[sp.Poly(q, x).LC() for q in pieces])) * g
    factored = s.step(F, "write the polynomial as a product of its factors", "Factored form: {v}",
                      sp.Mul(leftover, *pieces, evaluate=False) if leftover != 1 else sp.Mul(*pieces),
                      calc=f"factor({sp.sstr(poly)})")
    s.step(V, "check by expanding the product", f"Check: expanding gives {sp.expand(factored)}.")
    return factored


def _cubic_roots(s: Solution, rest):
    """A cubic: find one integer root among the divisors of the constant (rational root theorem),
    divide it out, and solve the quadratic that is left."""
    s.step(T, "recall the rational root theorem to find a first root",
           "An integer root of a monic polynomial divides its constant term.",
           search=("rational root theorem candidates divisors of constant term", "alg.rational-root-theorem"))
    coeffs = sp.Poly(rest, x).all_coeffs()
    const = coeffs[-1]
    candidates = sorted({d * sign for d in sp.divisors(abs(const)) for sign in (1, -1)}, key=lambda v: (abs(v), v))
    root = next((r for r in candidates if rest.subs(x, r) == 0), None)
    if root is None:
        raise ValueError("no integer root")
    value_at = " + ".join(f"({c})*({root})**{3 - i}" for i, c in enumerate(coeffs))
    s.step(K, "check the smallest candidate that is a root", f"p({root}) = {{v}}", rest.subs(x, root), calc=value_at)
    quotient = s.step(K, "divide out the factor of that root", f"({rest})/(x - ({root})) = {{v}}",
                      sp.cancel(rest / (x - root)), errors=("sign_error",), calc=f"cancel(({rest})/(x - ({root})))")
    others = s.step(K, "find the roots of the quadratic that is left", f"Roots of {quotient}: {{v}}",
                    sorted(sp.solve(quotient, x), key=sp.default_sort_key), errors=("sign_error", "omission"),
                    calc=f"solve({quotient}, x)")
    return sorted([root, *others], key=sp.default_sort_key)


def _fact_squares(s: Solution, poly, g, lead, const):
    """(p*x)^2 - q^2 = (p*x - q)*(p*x + q): read off the two square roots instead of solving."""
    s.step(D, "recognise a difference of two squares", f"{lead}x^2 - {const} has no x term and both parts are squares.")
    s.step(T, "recall the difference of squares", "a^2 - b^2 = (a - b)(a + b).",
           search=("difference of squares factor", "alg.difference-of-squares"))
    pp, q = s.step(K, "take the square roots of both parts", f"sqrt({lead}), sqrt({const}) = {{v}}",
                   (sp.sqrt(lead), sp.sqrt(const)), errors=("calculation_error",), calc=f"(sqrt({lead}), sqrt({const}))")
    pieces = [pp * x - q, pp * x + q]
    factored = s.step(F, "write the polynomial as a product of its factors", "Factored form: {v}",
                      sp.Mul(g, *pieces, evaluate=False) if g != 1 else sp.Mul(*pieces), calc=f"factor({sp.sstr(poly)})")
    s.step(V, "check by expanding the product", f"Check: expanding gives {sp.expand(factored)}.")
    return factored


def _fact_direct(p):
    return sp.factor(_fact_poly(p))


def _fact_second(p, ans):
    return sp.expand(ans - _fact_poly(p)) == 0 and len(sp.Mul.make_args(ans)) >= 2


# ---- 6. arithmetic sequence ----------------------------------------------------------------
def _arith_draw(rng, level):
    a1 = rng.randint(1, 20) if level == 1 else nonzero(rng, -30, 30)
    d = rng.randint(1, 9) if level == 1 else nonzero(rng, -9, 9)
    n = rng.randint(5, 15 if level < 3 else 40)
    p = {"a1": a1, "d": d, "n": n, "ask": "term" if level == 1 else "sum"}
    if level == 3:
        p["given"] = sorted(rng.sample(range(2, 9), 2))
    if level == 4:
        p.update(a1=rng.randint(10, 30), d=rng.randint(1, 4), story="seats")
    if level == 5:
        p.update(a1=rng.randint(50, 200), d=rng.randint(5, 25) * 5, story="savings")
    return p


def _arith_terms(p):
    return [p["a1"] + k * p["d"] for k in range(p["n"])]


def _arith_prompt(p):
    a1, d, n = p["a1"], p["d"], p["n"]
    if p.get("story") == "seats":
        return (f"A theatre has {n} rows. The first row has {a1} seats and each row has {d} more seats than the "
                "row in front. How many seats are there in total?")
    if p.get("story") == "savings":
        return (f"Leo saves ${a1} in the first month and each month saves ${d} more than the month before. "
                f"How much has he saved in total after {n} months?")
    if "given" in p:
        i, j = p["given"]
        return (f"In an arithmetic sequence the {_ord(i)} term is {a1 + (i - 1) * d} and the {_ord(j)} term is "
                f"{a1 + (j - 1) * d}. Find the sum of the first {n} terms.")
    shown = ", ".join(str(v) for v in _arith_terms(p)[:4])
    if p["ask"] == "term":
        return f"Find the {_ord(n)} term of the arithmetic sequence {shown}, ..."
    return f"Find the sum of the first {n} terms of the arithmetic sequence {shown}, ..."


def _ord(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _arith_solve(p, s: Solution):
    n = sp.Integer(p["n"])
    if p.get("story"):
        s.step(M, "recognise the amounts as an arithmetic sequence and the question as its sum",
               f"The amounts form an arithmetic sequence with a1 = {p['a1']}, d = {p['d']}; we need S_{n}.")
    if "given" in p:
        i, j = p["given"]
        ti, tj = s.step(S, "read the two given terms and their positions",
                        f"term {i} and term {j} are {{v}}.",
                        (sp.Integer(p["a1"] + (i - 1) * p["d"]), sp.Integer(p["a1"] + (j - 1) * p["d"])),
                        errors=("transcription_error",))
        d = s.step(K, "compute the common difference from the two terms", f"d = ({tj} - ({ti}))/({j} - {i}) = {{v}}",
                   sp.Rational(tj - ti, j - i), errors=CALC, calc=f"(({tj}) - ({ti}))/({j} - {i})")
        a1 = s.step(K, "compute the first term", f"a1 = {ti} - ({i} - 1)*({d}) = {{v}}", ti - (i - 1) * d,
                    errors=CALC, calc=f"({ti}) - ({i} - 1)*({d})")
    else:
        a1, d = s.step(S, "read the first term and the common difference", "a1, d = {v}.",
                       (sp.Integer(p["a1"]), sp.Integer(p["d"])), errors=("transcription_error",))
    if p["ask"] == "term":
        s.step(T, "recall the nth-term formula", "a_n = a1 + (n - 1)*d.",
               search=("arithmetic sequence nth term common difference", "alg.arithmetic-sequence"))
        value = s.step(K, "evaluate the nth term", f"a_{n} = {a1} + ({n} - 1)*({d}) = {{v}}", a1 + (n - 1) * d,
                       errors=CALC, wrong=a1 + n * d, calc=f"({a1}) + ({n} - 1)*({d})")
        s.step(V, "check by counting on from the listed terms", f"Check: {a1} + {n - 1} steps of {d} gives {value}.")
        return value
    s.step(T, "recall the sum formula of an arithmetic sequence", "S_n = n*(2*a1 + (n - 1)*d)/2.",
           search=("sum of arithmetic sequence first n terms", "alg.arithmetic-sequence-sum"))
    last = s.step(K, "compute the last term", f"a_{n} = {a1} + ({n} - 1)*({d}) = {{v}}", a1 + (n - 1) * d,
                  errors=CALC, calc=f"({a1}) + ({n} - 1)*({d})")
    total = s.step(K, "compute the sum from the first and last terms", f"S = {n}*({a1} + ({last}))/2 = {{v}}",
                   n * (a1 + last) / 2, errors=CALC, wrong=n * (a1 + last), calc=f"({n})*(({a1}) + ({last}))/2")
    s.step(V, "check with the other form of the sum formula",
           f"Check: {n}*(2*{a1} + {n - 1}*{d})/2 = {n * (2 * a1 + (n - 1) * d) / 2}.")
    return total


def _arith_direct(p):
    terms = _arith_terms(p)
    return sp.Integer(terms[-1]) if p["ask"] == "term" else sp.Integer(sum(terms))


def _arith_second(p, ans):
    k = sp.Symbol("k", integer=True)
    general = p["a1"] + (k - 1) * p["d"]
    closed = general.subs(k, p["n"]) if p["ask"] == "term" else sp.summation(general, (k, 1, p["n"]))
    return sp.simplify(closed - ans) == 0


# ---- 7. geometric sequence -----------------------------------------------------------------
def _geo_draw(rng, level):
    if level == 1:
        return {"a1": rng.randint(1, 40), "r": str(rng.randint(2, 6)), "n": rng.randint(4, 10), "ask": "term"}
    if level == 2:
        return {"a1": nonzero(rng, -30, 30), "r": str(rng.randint(2, 6)), "n": rng.randint(4, 10), "ask": "sum"}
    if level == 3:
        r = rng.choice(["-2", "-3", "1/2", "-1/2", "1/3", "-1/3", "2/3", "-2/3", "3/2"])
        return {"a1": nonzero(rng, -20, 20) * R(r).q**3, "r": r, "n": rng.randint(4, 8), "ask": "sum"}
    if level == 4:
        return {"a1": rng.randint(20, 5000), "r": rng.choice(["2", "3"]), "n": rng.randint(5, 14), "ask": "sum",
                "story": "views"}
    return {"a1": rng.randint(20, 999), "r": rng.choice(["1/2", "2/3", "3/4", "3/5", "1/3", "2/5", "4/5", "5/6"]),
            "ask": "infinite", "story": "ball"}


def _geo_prompt(p):
    a1, r = p["a1"], R(p["r"])
    if p.get("story") == "views":
        grew = "doubled" if r == 2 else "tripled"
        return (f"A video got {a1} views on its first day and the number of views {grew} every day. "
                f"How many views did it get in total over the first {p['n']} days?")
    if p.get("story") == "ball":
        return (f"A ball is dropped from {a1} cm. Each bounce reaches {r} of the previous height. "
                "What total distance does the ball travel, up and down, before it comes to rest?")
    shown = ", ".join(sp.sstr(a1 * r**k) for k in range(4))
    if p["ask"] == "term":
        return f"Find the {_ord(p['n'])} term of the geometric sequence {shown}, ..."
    return f"Find the sum of the first {p['n']} terms of the geometric sequence {shown}, ..."


def _geo_solve(p, s: Solution):
    if p.get("story") == "views":
        s.step(M, "recognise daily views as a geometric sequence and the total as its sum",
               f"Views form a geometric sequence with a1 = {p['a1']} and ratio {p['r']}; the total is S_{p['n']}.")
    if p.get("story") == "ball":
        s.step(M, "recognise the fall heights as an infinite geometric series",
               f"Falls are {p['a1']}, {p['a1']}*{p['r']}, ...: a geometric series with ratio {p['r']}.")
    a1, r = s.step(S, "read the first term and the common ratio", "a1, r = {v}.",
                   (sp.Integer(p["a1"]), R(p["r"])), errors=("transcription_error",))
    if p["ask"] == "term":
        n = p["n"]
        s.step(T, "recall the nth-term formula of a geometric sequence", "a_n = a1*r^(n - 1).",
               search=("geometric sequence nth term common ratio", "alg.geometric-sequence"))
        power = s.step(K, "compute the power of the ratio", f"r^({n} - 1) = {{v}}", r ** (n - 1),
                       errors=("calculation_error",), wrong=r**n, calc=f"({r})**({n} - 1)")
        value = s.step(K, "multiply by the first term", f"a_{n} = {a1}*{power} = {{v}}", a1 * power,
                       errors=CALC, calc=f"({a1})*({power})")
        s.step(V, "check by multiplying on from the listed terms", f"Check: {a1}*{r}^{n - 1} = {a1 * r**(n - 1)}.")
        return value
    if p["ask"] == "infinite":
        s.step(T, "recall the sum of an infinite geometric series with |r| < 1", "S = a1/(1 - r).",
               search=("infinite geometric series sum ratio less than one", "alg.infinite-geometric-series"))
        s.step(D, "confirm that the series converges", f"|r| = {abs(r)} < 1, so the series converges.")
        falls = s.step(K, "add up all the falls", f"S = {a1}/(1 - {r}) = {{v}}", a1 / (1 - r), errors=CALC,
                       wrong=a1 / (1 + r), calc=f"({a1})/(1 - ({r}))")
        rises = s.step(K, "add up all the rises: every fall but the first follows a rise of the same height",
                       f"{falls} - {a1} = {{v}}", falls - a1, errors=CALC, wrong=falls, calc=f"({falls}) - {a1}")
        total = s.step(K, "add the falls and the rises", f"{falls} + {rises} = {{v}}", falls + rises, errors=CALC,
                       calc=f"({falls}) + ({rises})")
        s.step(V, "check with a long partial sum", f"Check: 30 bounces give about "
               f"{sp.N(a1 * (1 - r**30) / (1 - r) + a1 * r * (1 - r**29) / (1 - r), 8)}.")
        return total
    n = p["n"]
    s.step(T, "recall the sum formula of a geometric sequence", "S_n = a1*(r^n - 1)/(r - 1).",
           search=("sum of geometric sequence first n terms ratio", "alg.geometric-sequence-sum"))
    power = s.step(K, "compute r^n", f"({r})^{n} = {{v}}", r**n, errors=("calculation_error", "sign_error"),
                   calc=f"({r})**{n}")
    total = s.step(K, "evaluate the sum formula", f"S = {a1}*({power} - 1)/({r} - 1) = {{v}}",
                   a1 * (power - 1) / (r - 1), errors=CALC, calc=f"({a1})*(({power}) - 1)/(({r}) - 1)")
    s.step(V, "check by adding the terms one by one", f"Check: the terms add to {sum(a1 * r**k for k in range(n))}.")
    return total


def _geo_direct(p):
    a1, r = p["a1"], R(p["r"])
    if p["ask"] == "term":
        return a1 * r ** (p["n"] - 1)
    if p["ask"] == "infinite":
        return a1 * (1 + r) / (1 - r)
    return sp.nsimplify(sum(a1 * r**k for k in range(p["n"])))


def _geo_second(p, ans):
    a1, r = p["a1"], R(p["r"])
    k = sp.Symbol("k", integer=True, nonnegative=True)
    if p["ask"] == "term":
        return sp.simplify(ans - a1 * r ** (p["n"] - 1)) == 0
    if p["ask"] == "infinite":       # the falls from the top, and the rises (from the first bounce on)
        total = sp.summation(a1 * r**k, (k, 0, sp.oo)) + sp.summation(a1 * r**k, (k, 1, sp.oo))
        return sp.simplify(total - ans) == 0
    return sp.simplify(sp.summation(a1 * r**k, (k, 0, p["n"] - 1)) - ans) == 0


# ---- 8. line through two points ------------------------------------------------------------
def _line_draw(rng, level):
    if level == 4:
        units, extra = rng.randint(5, 30), rng.randint(5, 40)
        rate, fixed = rng.randint(2, 12), rng.randint(20, 200)
        return {"p1": [units, fixed + rate * units], "p2": [units + extra, fixed + rate * (units + extra)],
                "story": "cost"}
    if level == 5:
        c0, rate = rng.randint(0, 30), rng.choice([2, 3, 4, 5])
        t1, t2 = sorted(rng.sample(range(1, 12), 2))
        return {"p1": [t1, c0 + rate * t1], "p2": [t2, c0 + rate * t2], "story": "temperature"}
    while True:
        x1, x2 = rng.sample(range(-9, 10), 2)
        if level == 1:          # the easiest lines: one point is the y-intercept
            x1, x2 = 0, nonzero(rng, -9, 9)
        m = {1: sp.Integer(rng.randint(1, 5)), 2: sp.Integer(nonzero(rng, -6, 6)),
             3: R(f"{nonzero(rng, -7, 7)}/{rng.choice([2, 3, 4])}")}[level]
        b = nonzero(rng, -10, 10)
        y1, y2 = m * x1 + b, m * x2 + b
        if y1.is_Integer and y2.is_Integer:
            return {"p1": [x1, int(y1)], "p2": [x2, int(y2)]}


def _line_prompt(p):
    (x1, y1), (x2, y2) = p["p1"], p["p2"]
    if p.get("story") == "cost":
        return (f"A printer's cost for an order is linear in the number of posters: {x1} posters cost ${y1} and "
                f"{x2} posters cost ${y2}. Give the cost y as an equation in the number of posters x.")
    if p.get("story") == "temperature":
        return (f"Water is heated at a steady rate: after {x1} minutes it is at {y1} degrees C and after {x2} minutes "
                f"at {y2} degrees C. Give the temperature y as an equation in the time x (minutes).")
    return f"Find the equation of the line through ({x1}, {y1}) and ({x2}, {y2}) in the form y = mx + b."


def _line_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "model the situation as a straight line through two data points",
               f"The data are the points {tuple(p['p1'])} and {tuple(p['p2'])} of a line y = mx + b.")
    x1, y1, x2, y2 = s.step(S, "read the coordinates of the two points", "x1, y1, x2, y2 = {v}.",
                            tuple(sp.Integer(v) for v in (*p["p1"], *p["p2"])), errors=("transcription_error",))
    s.step(T, "recall the slope formula and the point-slope form",
           "m = (y2 - y1)/(x2 - x1); then b = y1 - m*x1.",
           search=("equation of line through two points slope intercept", "alg.line-through-two-points"))
    m = s.step(K, "compute the slope", f"m = ({y2} - ({y1}))/({x2} - ({x1})) = {{v}}", (y2 - y1) / (x2 - x1),
               errors=CALC, wrong=(x2 - x1) / (y2 - y1) if y2 != y1 else None,
               calc=f"(({y2}) - ({y1}))/(({x2}) - ({x1}))")
    if x1 == 0:
        b = s.step(D, "read the y-intercept: the first point lies on the y-axis", f"b = {y1}", y1,
                   errors=("transcription_error", "sign_error"))
    else:
        b = s.step(K, "compute the y-intercept", f"b = {y1} - ({m})*({x1}) = {{v}}", y1 - m * x1, errors=CALC,
                   calc=f"({y1}) - ({m})*({x1})")
    line = s.step(F, "write the equation of the line", "y = mx + b: {v}", sp.Eq(y, m * x + b))
    s.step(V, "check that the second point lies on the line", f"Check: at x = {x2}, y = {m * x2 + b} (expected {y2}).")
    return line


def _line_direct(p):
    line = sp.Line(sp.Point(*p["p1"]), sp.Point(*p["p2"]))
    return sp.Eq(y, sp.solve(line.equation(x, y), y)[0])


def _line_second(p, ans):
    return all(sp.simplify(ans.rhs.subs(x, px) - py) == 0 for px, py in (p["p1"], p["p2"]))


# ---- 9. exponential equation ---------------------------------------------------------------
def _max_power(base: int, limit: int = 10**9) -> int:
    k = 1
    while base ** (k + 1) <= limit:
        k += 1
    return k


def _exp_draw(rng, level):
    base = rng.randint(2, 12)
    if level == 1:
        base = rng.randint(2, 150)
        return {"base": base, "p": 1, "q": 0, "k": rng.choice([-3, -2, -1, *range(2, _max_power(base, 10**12) + 1)])}
    if level == 2:
        return {"base": base, "p": 1, "q": nonzero(rng, -12, 12), "k": rng.randint(1, _max_power(base, 10**8))}
    if level == 3:
        return {"base": base, "p": rng.randint(2, 6), "q": nonzero(rng, -9, 9), "k": rng.randint(-3, 6)}
    if level == 4:
        base = rng.choice([2, 3, 5])
        m, n = rng.sample([1, 2, 3, 4], 2)   # (b^m)^(x + q1) = (b^n)^(x + q2)
        return {"base": base, "m": m, "n": n, "q1": nonzero(rng, -9, 9), "q2": nonzero(rng, -9, 9)}
    return {"base": 2, "period": rng.randint(1, 12), "start": rng.randint(1, 99) * 10,
            "k": rng.randint(2, 10), "story": "bacteria"}


def _exp_equation(p):
    b = p["base"]
    if "m" in p:
        return sp.Eq(sp.Pow(b**p["m"], x + p["q1"], evaluate=False), sp.Pow(b**p["n"], x + p["q2"], evaluate=False))
    if p.get("story"):
        return sp.Eq(p["start"] * sp.Integer(2) ** (x / p["period"]), p["start"] * 2 ** p["k"])
    return sp.Eq(sp.Pow(b, p["p"] * x + p["q"], evaluate=False), sp.Integer(b) ** p["k"])


def _exp_prompt(p):
    if p.get("story"):
        return (f"A culture of {p['start']} bacteria doubles every {p['period']} hours. After how many hours "
                f"will there be {p['start'] * 2 ** p['k']} bacteria?")
    eq = _exp_equation(p)
    lhs = f"{eq.lhs.base}^({sp.sstr(eq.lhs.exp)})"
    rhs = f"{eq.rhs.base}^({sp.sstr(eq.rhs.exp)})" if "m" in p else sp.sstr(eq.rhs)
    return f"Solve for x: {lhs} = {rhs}"


def _exp_solve(p, s: Solution):
    b = sp.Integer(p["base"])
    if p.get("story"):
        s.step(M, "model the population as start*2^(t/period) and set it equal to the target",
               f"{p['start']}*2^(x/{p['period']}) = {p['start'] * 2 ** p['k']}.")
        ratio = s.step(K, "divide by the starting population", f"2^(x/{p['period']}) = {{v}}",
                       sp.Integer(2 ** p["k"]), errors=("calculation_error",), calc=f"{p['start'] * 2 ** p['k']}/{p['start']}")
        s.step(T, "use equal bases: equal powers of 2 have equal exponents",
               "If b^u = b^v then u = v.", search=("exponential equation same base equal exponents", "alg.exponential-equation"))
        k = s.step(K, "write the right side as a power of 2", f"{ratio} = 2^{{v}}", sp.log(ratio, 2),
                   errors=("calculation_error",), calc=f"log({ratio}, 2)")
        t = s.step(K, "solve for the time", f"x/{p['period']} = {k}, so x = {{v}}", k * p["period"], errors=CALC,
                   wrong=k / p["period"], calc=f"({k})*{p['period']}")
        s.step(V, "check the population at that time", f"Check: {p['start']}*2^({t}/{p['period']}) = "
               f"{p['start'] * sp.Integer(2) ** (t / p['period'])}.")
        return t
    if "m" in p:
        m, n = s.step(S, "recognise both bases as powers of a common base",
                      f"{b**p['m']} = {b}^m and {b**p['n']} = {b}^n with m, n = {{v}}",
                      (sp.Integer(p["m"]), sp.Integer(p["n"])), errors=("transcription_error",))
        s.step(T, "use equal bases: equal powers have equal exponents", "If b^u = b^v then u = v.",
               search=("exponential equation same base equal exponents", "alg.exponential-equation"))
        lhs = s.step(F, "rewrite the equation with the common base and equate the exponents",
                     f"{m}*(x + ({p['q1']})) = {n}*(x + ({p['q2']})), i.e. {{v}} = 0",
                     sp.expand(m * (x + p["q1"]) - n * (x + p["q2"])))
        sol = s.step(K, "solve the linear equation in the exponents", "x = {v}", sp.solve(lhs, x)[0], errors=CALC,
                     calc=f"solve({sp.sstr(lhs)}, x)")
        s.step(V, "check by substituting into both sides",
               f"Check: exponents {m * (sol + p['q1'])} and {n * (sol + p['q2'])}.")
        return sol
    k = s.step(S, "write the right side as a power of the base", f"{b**p['k']} = {b}^{{v}}", sp.Integer(p["k"]),
               errors=("transcription_error", "calculation_error"), calc=f"log({b**p['k']}, {b})")
    s.step(T, "use equal bases: equal powers have equal exponents", "If b^u = b^v then u = v.",
           search=("exponential equation same base equal exponents", "alg.exponential-equation"))
    shifted = s.step(K, "move the constant in the exponent", f"{p['p']}x = {k} - ({p['q']}) = {{v}}", k - p["q"],
                     errors=CALC, calc=f"({k}) - ({p['q']})")
    sol = s.step(K, "divide by the coefficient of x", f"x = {shifted}/{p['p']} = {{v}}", shifted / p["p"], errors=CALC,
                 calc=f"({shifted})/({p['p']})")
    s.step(V, "check by substituting into the exponent", f"Check: {p['p']}*{sol} + ({p['q']}) = {p['p'] * sol + p['q']}.")
    return sol


def _exp_direct(p):
    """sympy on the logarithms of both sides: a linear equation in x (sympy's exponential solver is
    slow for composite bases)."""
    xr = sp.Symbol("x", real=True)
    eq = _exp_equation(p).subs(x, xr)
    logs = sp.expand_log(sp.log(eq.lhs) - sp.log(eq.rhs), force=True)
    sols = sp.solve(logs, xr)
    return sp.nsimplify(sp.simplify(sols[0]))


def _exp_second(p, ans):
    eq = _exp_equation(p)
    return sp.simplify(eq.lhs.subs(x, ans) - eq.rhs.subs(x, ans)) == 0


# ---- 10. absolute value equation -----------------------------------------------------------
def _abs_draw(rng, level):
    if level == 5:
        pct, tol = rng.choice([1, 2, 4, 5, 10, 20, 25]), rng.randint(1, 40)
        return {"a": 1, "b": -tol * (100 // pct), "c": tol, "e": 0, "pct": pct, "story": "tolerance"}
    a = 1 if level == 1 else rng.randint(2, 6)
    b = nonzero(rng, -60, 60) if level == 1 else nonzero(rng, -12, 12)
    c = rng.randint(1, 60) if level == 1 else rng.randint(1, 15)
    if level == 2:
        c = a * rng.randint(1, 25)
        b = a * nonzero(rng, -25, 25)
    p = {"a": a, "b": b, "c": c, "e": 0}
    if level == 4:
        p["e"] = nonzero(rng, -10, 10)
    return p


def _abs_prompt(p):
    if p.get("story"):
        return (f"A machined rod must be {-p['b']} mm long, within {p['pct']}% either way. Find the shortest and "
                "longest acceptable lengths x, the solutions of |x - target| = tolerance.")
    inner = f"{term(p['a'], first=True)} {const(p['b'])}"
    if p["e"]:
        return f"Solve for x: |{inner}| {const(p['e'])} = {p['c'] + p['e']}"
    return f"Solve for x: |{inner}| = {p['c']}"


def _abs_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "model the extreme lengths as the solutions of an absolute value equation",
               f"The deviation from {-p['b']} equals the tolerance t: |x - {-p['b']}| = t, t = {p['pct']}% of "
               f"{-p['b']}.")
    a, b = s.step(S, "read the expression inside the absolute value", "inside: {v}",
                  (sp.Integer(p["a"]), sp.Integer(p["b"])), errors=("transcription_error",))
    c = sp.Integer(p["c"])
    if p.get("pct"):
        c = s.step(K, "convert the percentage tolerance into millimetres", f"{p['pct']}% of {-b} = {{v}}",
                   sp.Rational(p["pct"], 100) * -b, errors=CALC, calc=f"{p['pct']}*({-b})/100")
    if p["e"]:
        c = s.step(K, "isolate the absolute value", f"|{a}x + ({b})| = {p['c'] + p['e']} - ({p['e']}) = {{v}}",
                   sp.Integer(p["c"]), errors=CALC, calc=f"({p['c'] + p['e']}) - ({p['e']})")
    s.step(C, "recall that |u| = c splits into u = c or u = -c",
           "|u| = c with c > 0 means u = c or u = -c.",
           search=("absolute value equation two cases", "alg.absolute-value-equation"))
    s.step(D, "check that the right side is positive so two cases exist", f"{c} > 0, so there are two cases.")
    x1 = s.step(K, "solve the positive case", f"{a}x + ({b}) = {c}: x = {{v}}", (c - b) / a, errors=CALC,
                calc=f"(({c}) - ({b}))/({a})")
    x2 = s.step(K, "solve the negative case", f"{a}x + ({b}) = -{c}: x = {{v}}", (-c - b) / a, errors=CALC,
                calc=f"(-({c}) - ({b}))/({a})")
    roots = s.step(D, "collect both solutions", "x = {v}", sorted([x1, x2], key=sp.default_sort_key),
                   errors=("omission",))
    s.step(V, "check both solutions in the original equation",
           "Check: " + ", ".join(f"|{a}*{r} + ({b})| = {abs(a * r + b)}" for r in roots) + ".")
    return roots


def _abs_direct(p):
    xr = sp.Symbol("x", real=True)
    return sorted(sp.solve(sp.Abs(p["a"] * xr + p["b"]) + p["e"] - (p["c"] + p["e"]), xr), key=sp.default_sort_key)


def _abs_second(p, ans):
    return len(ans) == 2 and all(abs(p["a"] * r + p["b"]) == p["c"] for r in ans)


FAMILIES = [
    Family("linear_equation", "algebra", "alg.linear-equation", "number",
           _lin_draw, _lin_prompt, _lin_solve, _lin_direct, _lin_second, "substitution"),
    Family("linear_system", "algebra", "alg.linear-system", "tuple",
           _sys_draw, _sys_prompt, _sys_solve, _sys_direct, _sys_second, "substitution into both equations"),
    Family("quadratic_equation", "algebra", "alg.quadratic-formula", "set",
           _quad_draw, _quad_prompt, _quad_solve, _quad_direct, _quad_second, "Vieta's formulas and substitution",
           kind_by_level={5: "number"}),
    Family("linear_inequality", "algebra", "alg.linear-inequality", "inequality",
           _ineq_draw, _ineq_prompt, _ineq_solve, _ineq_direct, _ineq_second, "test points"),
    Family("polynomial_factoring", "algebra", "alg.factoring-polynomials", "factored",
           _fact_draw, _fact_prompt, _fact_solve, _fact_direct, _fact_second, "expansion"),
    Family("arithmetic_sequence", "algebra", "alg.arithmetic-sequence-sum", "number",
           _arith_draw, _arith_prompt, _arith_solve, _arith_direct, _arith_second, "symbolic summation"),
    Family("geometric_sequence", "algebra", "alg.geometric-sequence-sum", "number",
           _geo_draw, _geo_prompt, _geo_solve, _geo_direct, _geo_second, "symbolic summation"),
    Family("line_through_points", "algebra", "alg.line-through-two-points", "equation",
           _line_draw, _line_prompt, _line_solve, _line_direct, _line_second, "both points on the line"),
    Family("exponential_equation", "algebra", "alg.exponential-equation", "number",
           _exp_draw, _exp_prompt, _exp_solve, _exp_direct, _exp_second, "substitution"),
    Family("absolute_value_equation", "algebra", "alg.absolute-value-equation", "set",
           _abs_draw, _abs_prompt, _abs_solve, _abs_direct, _abs_second, "substitution"),
]
