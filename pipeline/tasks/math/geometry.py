"""Geometry problem families: ten knowledge points, five difficulty levels each.

The worked solution uses the textbook formula; the second way places the figure on
coordinates (sympy.geometry) or integrates (disc method, polar area) and must agree.
"""
from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp

from pipeline.tasks.math.core import C, D, F, Family, K, M, P, R, S, Solution, T, V, nonzero, x, y

CALC = ("calculation_error",)
z = sp.Symbol("z")


@lru_cache(maxsize=1)
def pythagorean_triples(limit: int = 300) -> tuple[tuple[int, int, int], ...]:
    """Primitive Pythagorean triples (a < b < c, c <= limit) by Euclid's formula."""
    out = []
    for m in range(2, math.isqrt(limit) + 1):
        for n in range(1, m):
            if (m - n) % 2 and math.gcd(m, n) == 1 and m * m + n * n <= limit:
                a, b = sorted((m * m - n * n, 2 * m * n))
                out.append((a, b, m * m + n * n))
    return tuple(sorted(out))


@lru_cache(maxsize=1)
def heronian_triangles(limit: int = 90) -> tuple[tuple[int, int, int], ...]:
    """Triangles with integer sides a <= b <= c <= limit and integer area."""
    out = []
    for c in range(2, limit + 1):
        for b in range(1, c + 1):
            for a in range(max(1, c - b + 1), b + 1):
                sq16 = (a + b + c) * (-a + b + c) * (a - b + c) * (a + b - c)   # 16*area^2
                if sq16 % 16 == 0 and math.isqrt(sq16 // 16) ** 2 == sq16 // 16:
                    out.append((a, b, c))
    return tuple(out)


@lru_cache(maxsize=2)
def eisenstein_triangles(angle: int, limit: int = 150) -> tuple[tuple[int, int, int], ...]:
    """Integer triangles (a, b, c) whose angle opposite c is 60 or 120 degrees (a, b <= limit, a != b)."""
    sign = -1 if angle == 60 else 1
    out = []
    for a in range(1, limit + 1):
        for b in range(1, limit + 1):
            c2 = a * a + b * b + sign * a * b
            if a != b and math.isqrt(c2) ** 2 == c2:
                out.append((a, b, math.isqrt(c2)))
    return tuple(out)
rho, phi = sp.symbols("rho phi", nonnegative=True)


def _dist(p, q):
    return sp.Point(*p).distance(sp.Point(*q))


# ---- 1. Pythagorean theorem ----------------------------------------------------------------
def _pyth_draw(rng, level):
    a, b, c = rng.choice(pythagorean_triples())
    k = rng.randint(1, 20)
    if rng.random() < 0.5:
        a, b = b, a
    if level == 1:
        return {"ask": "hyp", "a": a * k, "b": b * k}
    if level == 2:
        return {"ask": "leg", "a": a * k, "c": c * k}
    if level == 3:
        while True:
            a, b = rng.randint(2, 60), rng.randint(2, 60)
            if not sp.sqrt(a * a + b * b).is_Integer:
                return {"ask": "hyp", "a": a, "b": b}
    if level == 4:
        return {"ask": "leg", "a": a * k, "c": c * k, "story": "ladder"}
    return {"ask": "box", "a": rng.randint(2, 30), "b": rng.randint(2, 30), "h": rng.randint(2, 30)}


def _pyth_prompt(p):
    if p["ask"] == "box":
        return (f"A box is {p['a']} cm long, {p['b']} cm wide and {p['h']} cm high. How long is the longest straight "
                "rod that fits inside (the space diagonal)?")
    if p.get("story") == "ladder":
        return (f"A {p['c']} m ladder leans against a vertical wall with its foot {p['a']} m from the wall on level "
                "ground. How high up the wall does it reach?")
    if p["ask"] == "hyp":
        return f"A right triangle has legs {p['a']} and {p['b']}. Find the length of the hypotenuse."
    return f"A right triangle has hypotenuse {p['c']} and one leg {p['a']}. Find the other leg."


def _pyth_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "model the wall, ground and ladder as a right triangle",
               "Wall and ground meet at a right angle; the ladder is the hypotenuse.")
    if p["ask"] == "box":
        s.step(P, "see the space diagonal as the hypotenuse of a right triangle over the base diagonal",
               "The space diagonal, a vertical edge and the base diagonal form a right triangle.")
        a, b, h = s.step(S, "read the three dimensions", "l, w, h = {v}",
                         (sp.Integer(p["a"]), sp.Integer(p["b"]), sp.Integer(p["h"])), errors=("transcription_error",))
        s.step(T, "recall the space diagonal of a box (the Pythagorean theorem twice)", "D = sqrt(l^2 + w^2 + h^2).",
               search=("space diagonal of a box three dimensions", "geo.space-diagonal"))
        base2 = s.step(K, "compute the square of the base diagonal", f"d^2 = {a}^2 + {b}^2 = {{v}}", a * a + b * b,
                       errors=CALC, calc=f"{a}**2 + {b}**2")
        diag = s.step(K, "compute the space diagonal", f"D = sqrt({base2} + {h}^2) = {{v}}", sp.sqrt(base2 + h * h),
                      errors=CALC, calc=f"sqrt({base2} + {h}**2)")
        s.step(V, "check that the diagonal is longer than every edge", f"{diag} is about {sp.N(diag, 6)} > {max(a, b, h)}.")
        return diag
    s.step(P, "identify which side is the hypotenuse (opposite the right angle)",
           "The hypotenuse is the side opposite the right angle, the longest side.")
    s.step(T, "recall the Pythagorean theorem", "a^2 + b^2 = c^2.",
           search=("pythagorean theorem hypotenuse right triangle", "geo.pythagorean-theorem"))
    if p["ask"] == "hyp":
        a, b = s.step(S, "read the two legs", "legs: {v}", (sp.Integer(p["a"]), sp.Integer(p["b"])),
                      errors=("transcription_error",))
        sq = s.step(K, "add the squares of the legs", f"{a}^2 + {b}^2 = {{v}}", a * a + b * b, errors=CALC,
                    wrong=(a + b) ** 2, calc=f"{a}**2 + {b}**2")
        c = s.step(K, "take the square root", f"c = sqrt({sq}) = {{v}}", sp.sqrt(sq), errors=CALC, calc=f"sqrt({sq})")
        s.step(V, "check that the hypotenuse is the longest side", f"{c} > {max(a, b)}.")
        return c
    a, c = s.step(S, "read the known leg and the hypotenuse", "leg, hypotenuse: {v}", (sp.Integer(p["a"]), sp.Integer(p["c"])),
                  errors=("transcription_error",))
    sq = s.step(K, "subtract the square of the known leg from the square of the hypotenuse",
                f"{c}^2 - {a}^2 = {{v}}", c * c - a * a, errors=CALC, wrong=c * c + a * a, calc=f"{c}**2 - {a}**2")
    b = s.step(K, "take the square root", f"b = sqrt({sq}) = {{v}}", sp.sqrt(sq), errors=CALC, calc=f"sqrt({sq})")
    s.step(V, "check with the theorem", f"{a}^2 + {b}^2 = {a * a + b * b} vs {c}^2 = {c * c}.")
    return b


def _pyth_direct(p):
    if p["ask"] == "box":
        return sp.sqrt(p["a"] ** 2 + p["b"] ** 2 + p["h"] ** 2)
    if p["ask"] == "hyp":
        return sp.sqrt(p["a"] ** 2 + p["b"] ** 2)
    return sp.sqrt(p["c"] ** 2 - p["a"] ** 2)


def _pyth_second(p, ans):
    """Coordinates: corners on the axes, lengths by the distance between points."""
    if p["ask"] == "box":
        return sp.Point3D(0, 0, 0).distance(sp.Point3D(p["a"], p["b"], p["h"])) == ans
    if p["ask"] == "hyp":
        return _dist((p["a"], 0), (0, p["b"])) == ans
    return _dist((p["a"], 0), (0, ans)) == p["c"]


# ---- 2. Heron's formula --------------------------------------------------------------------
def _heron_draw(rng, level):
    sides = list(rng.choice(heronian_triangles()))
    rng.shuffle(sides)
    if level in (2, 4, 5):
        scale = rng.randint(2, 6)
        sides = [v * scale for v in sides]
    if level == 3:
        while True:
            sides = sorted(rng.randint(3, 40) for _ in range(3))
            area2 = _heron_sq(sides)
            if sides[0] + sides[1] > sides[2] and not sp.sqrt(area2).is_Integer:
                break
    p = {"sides": [int(v) for v in sides]}
    if level == 4:
        p["story"] = "field"
    if level == 5:
        p["ask"] = "height"
    return p


def _heron_sq(sides):
    a, b, c = (sp.Integer(v) for v in sides)
    s = (a + b + c) / 2
    return s * (s - a) * (s - b) * (s - c)


def _heron_prompt(p):
    a, b, c = p["sides"]
    if p.get("story"):
        return f"A triangular field has sides of {a} m, {b} m and {c} m. What is its area in square metres?"
    if p.get("ask") == "height":
        return f"A triangle has sides {a}, {b} and {c}. Find the height to its longest side."
    return f"Find the area of a triangle with sides {a}, {b} and {c}."


def _heron_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "recognise that the area follows from the three side lengths alone",
               "Only the sides are known, so use Heron's formula.")
    a, b, c = s.step(S, "read the three side lengths", "a, b, c = {v}", tuple(sp.Integer(v) for v in p["sides"]),
                     errors=("transcription_error",))
    s.step(T, "recall Heron's formula", "A = sqrt(s(s - a)(s - b)(s - c)), s = (a + b + c)/2.",
           search=("heron formula area triangle three sides semiperimeter", "geo.herons-formula"))
    semi = s.step(K, "compute the semiperimeter", f"s = ({a} + {b} + {c})/2 = {{v}}", (a + b + c) / 2, errors=CALC,
                  wrong=a + b + c, calc=f"({a} + {b} + {c})/2")
    prod = s.step(K, "compute the product under the root",
                  f"{semi}*({semi} - {a})*({semi} - {b})*({semi} - {c}) = {{v}}",
                  semi * (semi - a) * (semi - b) * (semi - c), errors=CALC,
                  calc=f"({semi})*({semi} - {a})*({semi} - {b})*({semi} - {c})")
    area = s.step(K, "take the square root", f"A = sqrt({prod}) = {{v}}", sp.sqrt(prod), errors=CALC,
                  calc=f"sqrt({prod})")
    if p.get("ask") == "height":
        longest = max(a, b, c)
        s.step(P, "take the longest side as the base", f"Base = {longest}.")
        h = s.step(K, "solve A = base*height/2 for the height", f"h = 2*{area}/{longest} = {{v}}", 2 * area / longest,
                   errors=CALC, wrong=area / longest, calc=f"2*({area})/{longest}")
        s.step(V, "check that the height is shorter than the other sides", f"{h} is about {sp.N(h, 6)}.")
        return h
    s.step(V, "check the triangle inequality and that the area is positive", f"{a} + {b} > {c} etc.; A = {area} > 0.")
    return area


def _heron_direct(p):
    area = sp.sqrt(_heron_sq(p["sides"]))
    return 2 * area / max(p["sides"]) if p.get("ask") == "height" else area


def _heron_place(sides):
    """Put side c on the x-axis and find the third vertex from the other two sides."""
    a, b, c = (sp.Integer(v) for v in sides)
    px = (b * b + c * c - a * a) / (2 * c)
    return sp.Point(0, 0), sp.Point(c, 0), sp.Point(px, sp.sqrt(b * b - px * px))


def _heron_second(p, ans):
    if p.get("ask") == "height":
        sides = sorted(p["sides"])            # longest on the x-axis: the height is the third vertex's y
        return sp.simplify(_heron_place(sides)[2].y - ans) == 0
    return sp.simplify(abs(sp.Triangle(*_heron_place(p["sides"])).area) - ans) == 0


# ---- 3. circle area and circumference ------------------------------------------------------
def _circle_draw(rng, level):
    r = rng.randint(1, 5000)
    return {1: {"ask": "area", "r": r}, 2: {"ask": "circumference", "d": rng.randint(1, 2000)},
            3: {"ask": "area_from_c", "c": rng.randint(1, 2000)},
            4: {"ask": "circumference", "d": rng.randint(2, 500), "story": rng.choice(["pond", "fountain", "roundabout",
                                                                                      "flower bed"])},
            5: {"ask": "outside_square", "r": r}}[level]


def _circle_prompt(p):
    ask = p["ask"]
    if ask == "area":
        return f"Find the exact area of a circle with radius {p['r']}."
    if p.get("story"):
        return (f"A circular {p['story']} is {p['d']} m across. How long must a fence around its edge be? "
                "Give the exact length.")
    if ask == "circumference":
        return f"Find the exact circumference of a circle with diameter {p['d']}."
    if ask == "area_from_c":
        return f"A circle has circumference {p['c']}*pi. Find its exact area."
    return (f"A square is inscribed in a circle of radius {p['r']}. Find the exact area inside the circle "
            "but outside the square.")


def _circle_solve(p, s: Solution):
    ask = p["ask"]
    if p.get("story"):
        s.step(M, "model the fence as the circumference of a circle whose diameter is the width across",
               f"Fence length = circumference of a circle with diameter {p['d']}.")
    if ask in ("area", "outside_square"):
        r = s.step(S, "read the radius", "r = {v}", sp.Integer(p["r"]), errors=("transcription_error",))
    elif ask == "area_from_c":
        circ = s.step(S, "read the circumference", "C = {v}", p["c"] * sp.pi, errors=("transcription_error",))
        s.step(T, "recall the circumference formula", "C = 2*pi*r.",
               search=("circumference circle radius diameter pi", "geo.circle-circumference"))
        r = s.step(K, "solve the circumference formula for the radius", f"r = {circ}/(2*pi) = {{v}}", circ / (2 * sp.pi),
                   errors=CALC, wrong=circ / sp.pi, calc=f"{sp.sstr(circ)}/(2*pi)")
    else:
        d = s.step(S, "read the diameter", "d = {v}", sp.Integer(p["d"]), errors=("transcription_error",))
        s.step(T, "recall the circumference formula", "C = pi*d.",
               search=("circumference circle radius diameter pi", "geo.circle-circumference"))
        circ = s.step(K, "multiply the diameter by pi", f"C = pi*{d} = {{v}}", sp.pi * d, errors=CALC,
                      wrong=2 * sp.pi * d, calc=f"pi*{d}")
        s.step(V, "check against 3 times the diameter", f"{circ} is about {sp.N(circ, 6)}, a bit more than {3 * d}.")
        return circ
    s.step(T, "recall the area formula of a circle", "A = pi*r^2.",
           search=("area of a circle radius pi", "geo.circle-area"))
    area = s.step(K, "compute the area of the circle", f"A = pi*{r}^2 = {{v}}", sp.pi * r**2, errors=CALC,
                  wrong=2 * sp.pi * r, calc=f"pi*({r})**2")
    if ask == "outside_square":
        s.step(P, "see that the square's diagonal is a diameter of the circle", f"Diagonal = 2r = {2 * r}.")
        sq = s.step(K, "compute the area of the square from its diagonal", f"square = (2*{r})^2/2 = {{v}}",
                    (2 * r) ** 2 / 2, errors=CALC, wrong=(2 * r) ** 2, calc=f"(2*{r})**2/2")
        rest = s.step(K, "subtract the square from the circle", f"{area} - {sq} = {{v}}", area - sq, errors=CALC,
                      calc=f"{sp.sstr(area)} - {sq}")
        s.step(V, "check that the result is positive and smaller than the circle", f"{rest} is about {sp.N(rest, 6)}.")
        return rest
    s.step(V, "check the size against the enclosing square", f"{area} is about {sp.N(area, 6)} < (2r)^2 = {4 * r * r}.")
    return area


def _circle_direct(p):
    ask = p["ask"]
    if ask == "area":
        return sp.pi * p["r"] ** 2
    if ask == "circumference":
        return sp.pi * p["d"]
    if ask == "area_from_c":
        return sp.pi * (sp.Integer(p["c"]) / 2) ** 2
    return sp.pi * p["r"] ** 2 - 2 * p["r"] ** 2


def _circle_second(p, ans):
    """Polar integration for areas and lengths; the square from its vertex coordinates."""
    ask = p["ask"]
    if ask == "circumference":
        return sp.integrate(sp.Integer(p["d"]) / 2, (phi, 0, 2 * sp.pi)) == ans
    r = sp.Integer(p["c"]) / 2 if ask == "area_from_c" else sp.Integer(p["r"])
    disc = sp.integrate(sp.integrate(rho, (rho, 0, r)), (phi, 0, 2 * sp.pi))
    if ask == "outside_square":
        square = abs(sp.Polygon(sp.Point(r, 0), sp.Point(0, r), sp.Point(-r, 0), sp.Point(0, -r)).area)
        return sp.simplify(disc - square - ans) == 0
    return sp.simplify(disc - ans) == 0


# ---- 4. distance and midpoint --------------------------------------------------------------
def _dist_draw(rng, level):
    x1, y1 = nonzero(rng, -9, 9), nonzero(rng, -9, 9)
    if level in (1, 4):
        a, b, _ = rng.choice(pythagorean_triples(30))
        sx, sy = rng.choice([1, -1]), rng.choice([1, -1])
        p = {"ask": "distance", "pts": [[x1, y1], [x1 + sx * a, y1 + sy * b]]}
        if level == 4:
            p["story"] = "towns"
        return p
    if level in (2, 3):
        while True:             # two distinct points: a segment, not a point
            other = [nonzero(rng, -9, 9), nonzero(rng, -9, 9)]
            if other != [x1, y1]:
                return {"ask": "distance" if level == 2 else "midpoint", "pts": [[x1, y1], other]}
    while True:
        pts = [[rng.randint(-6, 6), rng.randint(-6, 6)] for _ in range(3)]
        if sp.Point.is_collinear(*[sp.Point(*q) for q in pts]) is False and len({tuple(q) for q in pts}) == 3:
            return {"ask": "perimeter", "pts": pts}


def _dist_prompt(p):
    pts = [tuple(q) for q in p["pts"]]
    if p.get("story"):
        return (f"On a map grid measured in km, town A is at {pts[0]} and town B at {pts[1]}. "
                "How far apart are they in a straight line?")
    if p["ask"] == "distance":
        return f"Find the distance between the points {pts[0]} and {pts[1]}."
    if p["ask"] == "midpoint":
        return f"Find the midpoint of the segment from {pts[0]} to {pts[1]}. Answer as (x, y)."
    return f"Find the perimeter of the triangle with vertices {pts[0]}, {pts[1]} and {pts[2]}."


def _distance_steps(s: Solution, p1, p2, label: str):
    dx = s.step(K, f"compute the horizontal difference for {label}", f"dx = {p2[0]} - ({p1[0]}) = {{v}}", p2[0] - p1[0],
                errors=("calculation_error", "sign_error"), calc=f"{p2[0]} - ({p1[0]})")
    dy = s.step(K, f"compute the vertical difference for {label}", f"dy = {p2[1]} - ({p1[1]}) = {{v}}", p2[1] - p1[1],
                errors=("calculation_error", "sign_error"), calc=f"{p2[1]} - ({p1[1]})")
    return s.step(K, f"compute the length of {label}", f"sqrt(({dx})^2 + ({dy})^2) = {{v}}", sp.sqrt(dx**2 + dy**2),
                  errors=CALC, wrong=abs(dx) + abs(dy), calc=f"sqrt(({dx})**2 + ({dy})**2)")


def _dist_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "treat the towns as points of the coordinate plane", "The straight-line distance is the distance between two points.")
    pts = s.step(S, "read the coordinates of the points", "points: {v}",
                 [tuple(sp.Integer(c) for c in q) for q in p["pts"]], errors=())
    pts = [tuple(q) for q in pts]
    if p["ask"] == "midpoint":
        s.step(T, "recall the midpoint formula", "M = ((x1 + x2)/2, (y1 + y2)/2).",
               search=("midpoint formula segment endpoints average", "geo.midpoint-formula"))
        mx = s.step(K, "average the x-coordinates", f"({pts[0][0]} + ({pts[1][0]}))/2 = {{v}}", (pts[0][0] + pts[1][0]) / 2,
                    errors=("calculation_error", "sign_error"), wrong=pts[1][0] - pts[0][0],
                    calc=f"({pts[0][0]} + ({pts[1][0]}))/2")
        my = s.step(K, "average the y-coordinates", f"({pts[0][1]} + ({pts[1][1]}))/2 = {{v}}", (pts[0][1] + pts[1][1]) / 2,
                    errors=("calculation_error", "sign_error"), calc=f"({pts[0][1]} + ({pts[1][1]}))/2")
        s.step(V, "check that the midpoint is equally far from both ends",
               f"Distances {_dist((mx, my), pts[0])} and {_dist((mx, my), pts[1])}.")
        return (mx, my)
    s.step(T, "recall the distance formula", "d = sqrt((x2 - x1)^2 + (y2 - y1)^2).",
           search=("distance formula between two points coordinates", "geo.distance-formula"))
    if p["ask"] == "distance":
        d = _distance_steps(s, pts[0], pts[1], "AB")
        s.step(V, "check that the distance is at least each coordinate difference", f"{d} is about {sp.N(d, 6)}.")
        return d
    s.step(P, "see the perimeter as the sum of the three side lengths", "Perimeter = AB + BC + CA.")
    sides = [_distance_steps(s, pts[i], pts[(i + 1) % 3], name) for i, name in enumerate(("AB", "BC", "CA"))]
    total = s.step(K, "add the three sides", f"{' + '.join(map(str, sides))} = {{v}}", sp.Add(*sides), errors=CALC,
                   calc=" + ".join(f"({sp.sstr(v)})" for v in sides))
    s.step(V, "check the triangle inequality for the sides", "Each side is less than the sum of the other two.")
    return total


def _dist_direct(p):
    a, b = sp.Point(*p["pts"][0]), sp.Point(*p["pts"][1])
    if p["ask"] == "distance":
        return a.distance(b)
    if p["ask"] == "midpoint":
        m = a.midpoint(b)       # Segment(a, a) would collapse to a Point, whose .midpoint is a method
        return (m.x, m.y)
    return sp.Triangle(*[sp.Point(*q) for q in p["pts"]]).perimeter


def _dist_second(p, ans):
    (x1, y1), (x2, y2) = p["pts"][:2]
    if p["ask"] == "distance":
        return sp.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2) == ans
    if p["ask"] == "midpoint":
        m = sp.Point(*ans)
        return m.distance(sp.Point(x1, y1)) == m.distance(sp.Point(x2, y2)) and sp.Point.is_collinear(
            m, sp.Point(x1, y1), sp.Point(x2, y2))
    pts = p["pts"]
    total = sum(sp.sqrt((pts[i][0] - pts[(i + 1) % 3][0]) ** 2 + (pts[i][1] - pts[(i + 1) % 3][1]) ** 2) for i in range(3))
    return sp.simplify(total - ans) == 0


# ---- 5. polygon angles ---------------------------------------------------------------------
def _poly_draw(rng, level):
    if level == 1:
        return {"ask": "sum", "n": rng.randint(5, 12)}
    if level == 2:
        return {"ask": "each", "n": rng.randint(5, 400)}
    if level == 3:
        return {"ask": "sides", "n": rng.choice([n for n in range(5, 37) if 360 % n == 0])}
    if level == 4:
        n = rng.randint(5, 8)
        total = (n - 2) * 180
        while True:
            known = [rng.randint(95, 170) for _ in range(n - 1)]
            missing = total - sum(known)
            if 60 <= missing <= 179:
                return {"ask": "missing", "n": n, "known": known}
    return {"ask": "ratio", "k": rng.randint(1, 8)}


def _poly_prompt(p):
    ask = p["ask"]
    if ask == "sum":
        return f"What is the sum of the interior angles of a convex polygon with {p['n']} sides, in degrees?"
    if ask == "each":
        return f"What is the measure of each interior angle of a regular polygon with {p['n']} sides, in degrees?"
    if ask == "sides":
        return f"Each interior angle of a regular polygon measures {180 - 360 // p['n']} degrees. How many sides does it have?"
    if ask == "missing":
        return (f"A convex polygon has {p['n']} sides. {p['n'] - 1} of its interior angles measure "
                f"{', '.join(map(str, p['known']))} degrees. Find the remaining angle in degrees.")
    return (f"Each interior angle of a regular polygon is {p['k']} times as large as each exterior angle. "
            "How many sides does the polygon have?")


def _poly_solve(p, s: Solution):
    ask = p["ask"]
    if ask == "ratio":
        s.step(M, "express the interior and exterior angles in terms of the number of sides n",
               f"interior = 180 - 360/n, exterior = 360/n, and interior = {p['k']}*exterior.")
        s.step(T, "recall that the exterior angles of a polygon add to 360 degrees", "Each exterior angle = 360/n.",
               search=("exterior angles polygon sum 360 degrees regular", "geo.polygon-exterior-angles"))
        ext = s.step(K, "find the exterior angle from interior + exterior = 180",
                     f"exterior*(1 + {p['k']}) = 180, exterior = {{v}}", sp.Rational(180, 1 + p["k"]), errors=CALC,
                     wrong=sp.Rational(180, p["k"]), calc=f"180/(1 + {p['k']})")
        n = s.step(K, "divide 360 by the exterior angle", f"n = 360/{ext} = {{v}}", 360 / ext, errors=CALC,
                   calc=f"360/({ext})")
        s.step(V, "check the ratio of the angles", f"interior {180 - 360 / n}, exterior {360 / n}.")
        return n
    if ask == "sides":
        angle = s.step(S, "read the interior angle", "interior angle = {v}", sp.Integer(180 - 360 // p["n"]),
                       errors=("transcription_error",))
        s.step(T, "recall that the exterior angles of a polygon add to 360 degrees", "Each exterior angle = 360/n.",
               search=("exterior angles polygon sum 360 degrees regular", "geo.polygon-exterior-angles"))
        ext = s.step(K, "compute the exterior angle", f"180 - {angle} = {{v}}", 180 - angle, errors=CALC,
                     calc=f"180 - {angle}")
        n = s.step(K, "divide 360 by the exterior angle", f"n = 360/{ext} = {{v}}", 360 / ext, errors=CALC,
                   calc=f"360/{ext}")
        s.step(V, "check the interior angle of the polygon found", f"(n - 2)*180/n = {(n - 2) * 180 / n}.")
        return n
    n = s.step(S, "read the number of sides", "n = {v}", sp.Integer(p["n"]), errors=("transcription_error",))
    s.step(P, "split the polygon into triangles from one vertex", f"Diagonals from one vertex make n - 2 = {n - 2} triangles.")
    s.step(T, "recall the interior angle sum formula", "sum = (n - 2)*180 degrees.",
           search=("sum of interior angles of a polygon", "geo.polygon-interior-angles"))
    total = s.step(K, "compute the interior angle sum", f"({n} - 2)*180 = {{v}}", (n - 2) * 180, errors=CALC,
                   wrong=n * 180, calc=f"({n} - 2)*180")
    if ask == "sum":
        s.step(V, "check with exterior angles", f"n*180 - 360 = {n * 180 - 360}.")
        return total
    if ask == "each":
        each = s.step(K, "divide the sum equally among the n angles", f"{total}/{n} = {{v}}", total / n, errors=CALC,
                      calc=f"{total}/{n}")
        s.step(V, "check with the exterior angle", f"180 - 360/{n} = {180 - sp.Rational(360, n)}.")
        return each
    known = s.step(K, "add the known angles", f"{' + '.join(map(str, p['known']))} = {{v}}", sp.Integer(sum(p["known"])),
                   errors=CALC, calc=" + ".join(map(str, p["known"])))
    missing = s.step(K, "subtract from the angle sum", f"{total} - {known} = {{v}}", total - known, errors=CALC,
                     calc=f"{total} - {known}")
    s.step(D, "confirm the angle is valid for a convex polygon", f"0 < {missing} < 180.")
    s.step(V, "check that all the angles add up to the angle sum", f"{known} + {missing} = {known + missing}.")
    return missing


def _poly_direct(p):
    ask = p["ask"]
    if ask == "sum":
        return sp.Integer((p["n"] - 2) * 180)
    if ask == "each":
        return sp.Rational((p["n"] - 2) * 180, p["n"])
    if ask == "sides":
        return sp.Integer(p["n"])
    if ask == "missing":
        return sp.Integer((p["n"] - 2) * 180 - sum(p["known"]))
    return sp.Integer(2 * (p["k"] + 1))


def _poly_second(p, ans):
    """sympy's RegularPolygon angles (radians), or the exterior-angle sum of 360 degrees."""
    ask = p["ask"]
    if ask in ("sum", "missing"):
        n = p["n"]
        interior = sp.RegularPolygon(sp.Point(0, 0), 1, n).interior_angle * 180 / sp.pi
        total = n * interior
        return total == (ans if ask == "sum" else ans + sum(p["known"]))
    if ask == "each":
        return sp.RegularPolygon(sp.Point(0, 0), 1, p["n"]).interior_angle * 180 / sp.pi == ans
    poly = sp.RegularPolygon(sp.Point(0, 0), 1, int(ans))
    if ask == "sides":
        return poly.interior_angle * 180 / sp.pi == 180 - 360 // p["n"]
    return sp.simplify(poly.interior_angle - p["k"] * poly.exterior_angle) == 0


# ---- 6. similar triangles ------------------------------------------------------------------
def _sim_draw(rng, level):
    sides = list(rng.choice(heronian_triangles()))
    rng.shuffle(sides)
    if level == 1:
        return {"ask": "side", "sides": sides, "k": str(rng.randint(2, 9))}
    if level == 2:
        return {"ask": "side", "sides": sides, "k": rng.choice(["3/2", "5/2", "2/3", "4/3", "5/4", "7/5", "3/4", "5/3"])}
    if level == 3:
        return {"ask": "area", "sides": sides, "k": str(rng.randint(2, 6))}
    if level == 4:
        return {"ask": "shadow", "post": rng.randint(1, 5), "post_shadow": rng.randint(2, 12),
                "tree_shadow": rng.randint(6, 80)}
    return {"ask": "perimeter", "sides": sides, "k": rng.choice(["2", "3", "4", "3/2", "5/2", "4/3"])}


def _sim_prompt(p):
    if p["ask"] == "shadow":
        return (f"A {p['post']} m post casts a {p['post_shadow']} m shadow. At the same time a tree casts a "
                f"{p['tree_shadow']} m shadow. How tall is the tree in metres?")
    a, b, c = p["sides"]
    big_a = R(p["k"]) * a
    if p["ask"] == "side":
        return (f"Triangle ABC has sides AB = {a}, BC = {b}, CA = {c}. Triangle DEF is similar to ABC with DE "
                f"corresponding to AB and DE = {big_a}. Find EF.")
    if p["ask"] == "area":
        return (f"Triangle ABC has sides {a}, {b}, {c} and area {sp.sqrt(_heron_sq(p['sides']))}. A similar triangle has "
                f"its shortest side equal to {R(p['k']) * min(a, b, c)}. Find its area.")
    return (f"Triangle ABC has sides AB = {a}, BC = {b}, CA = {c}. A similar triangle DEF has DE = {big_a} "
            "corresponding to AB. Find the perimeter of DEF.")


def _sim_solve(p, s: Solution):
    if p["ask"] == "shadow":
        s.step(M, "model the post and the tree with their shadows as two similar right triangles",
               "Sun rays are parallel, so the two right triangles have equal angles.")
        h, ps, ts = s.step(S, "read the post height and the two shadow lengths", "post, post shadow, tree shadow = {v}",
                           (sp.Integer(p["post"]), sp.Integer(p["post_shadow"]), sp.Integer(p["tree_shadow"])),
                           errors=("transcription_error",))
        s.step(T, "recall that corresponding sides of similar triangles are proportional", "height/shadow is the same.",
               search=("similar triangles corresponding sides proportional scale factor", "geo.similar-triangles"))
        k = s.step(K, "compute the scale factor between the shadows", f"k = {ts}/{ps} = {{v}}", ts / ps, errors=CALC,
                   wrong=ps / ts, calc=f"{ts}/{ps}")
        tree = s.step(K, "scale the post height", f"tree = {h}*{k} = {{v}}", h * k, errors=CALC, calc=f"{h}*({k})")
        s.step(V, "check the ratios", f"{tree}/{ts} = {tree / ts} and {h}/{ps} = {h / ps}.")
        return tree
    a, b, c = s.step(S, "read the sides of the first triangle", "AB, BC, CA = {v}", tuple(sp.Integer(v) for v in p["sides"]),
                     errors=("transcription_error",))
    s.step(P, "match corresponding sides of the two triangles",
           "Corresponding sides are opposite equal angles; the given sides correspond.")
    s.step(T, "recall that corresponding sides of similar triangles are proportional", "k = new side / old side.",
           search=("similar triangles corresponding sides proportional scale factor", "geo.similar-triangles"))
    known_old = min(a, b, c) if p["ask"] == "area" else a
    k = s.step(K, "compute the scale factor", f"k = {R(p['k']) * known_old}/{known_old} = {{v}}", R(p["k"]), errors=CALC,
               wrong=1 / R(p["k"]), calc=f"({R(p['k']) * known_old})/{known_old}")
    if p["ask"] == "side":
        ef = s.step(K, "scale the corresponding side", f"EF = {k}*{b} = {{v}}", k * b, errors=CALC, calc=f"({k})*{b}")
        s.step(V, "check the ratio of another pair", f"EF/BC = {ef / b}, DE/AB = {k}.")
        return ef
    if p["ask"] == "perimeter":
        per = s.step(K, "compute the perimeter of ABC", f"{a} + {b} + {c} = {{v}}", a + b + c, errors=CALC,
                     calc=f"{a} + {b} + {c}")
        big = s.step(K, "scale the perimeter by k", f"{k}*{per} = {{v}}", k * per, errors=CALC, calc=f"({k})*{per}")
        s.step(V, "check by scaling each side", f"{k * a} + {k * b} + {k * c} = {k * (a + b + c)}.")
        return big
    s.step(T, "recall that areas of similar figures scale by k^2", "A' = k^2*A.",
           search=("areas similar figures scale factor squared", "geo.similar-area-ratio"))
    area = sp.sqrt(_heron_sq((a, b, c)))
    big = s.step(K, "scale the area by k^2", f"{area}*{k}^2 = {{v}}", area * k**2, errors=CALC, wrong=area * k,
                 calc=f"{area}*({k})**2")
    s.step(V, "check with Heron's formula on the scaled sides", f"sides {k * a}, {k * b}, {k * c}.")
    return big


def _sim_direct(p):
    if p["ask"] == "shadow":
        return sp.Integer(p["post"]) * p["tree_shadow"] / p["post_shadow"]
    k, (a, b, c) = R(p["k"]), p["sides"]
    return {"side": k * b, "perimeter": k * (a + b + c), "area": k**2 * sp.sqrt(_heron_sq(p["sides"]))}[p["ask"]]


def _sim_second(p, ans):
    """Scale the triangle's coordinates by k and measure the image (or intersect the sun ray)."""
    if p["ask"] == "shadow":
        ray = sp.Line(sp.Point(p["post_shadow"], 0), sp.Point(0, p["post"]))   # sun ray through the post top
        top = sp.Line(sp.Point(p["tree_shadow"], 0), slope=ray.slope).intersection(sp.Line(sp.Point(0, 0), sp.Point(0, 1)))[0]
        return top.y == ans
    k = R(p["k"])
    a, b, c = p["sides"]
    A, B, Cc = _heron_place((b, c, a))          # AB = a on the x-axis, BC = b, CA = c
    D, E, Fp = (q.scale(k, k) for q in (A, B, Cc))
    if p["ask"] == "side":
        return sp.simplify(E.distance(Fp) - ans) == 0
    if p["ask"] == "perimeter":
        return sp.simplify(sp.Triangle(D, E, Fp).perimeter - ans) == 0
    return sp.simplify(abs(sp.Triangle(D, E, Fp).area) - ans) == 0


# ---- 7. volumes of solids ------------------------------------------------------------------
_SOLID = {1: "prism", 2: "cylinder", 3: "cone", 4: "sphere", 5: "silo"}
_SOLID_KP = {"prism": "geo.volume-rectangular-prism", "cylinder": "geo.volume-cylinder", "cone": "geo.volume-cone",
             "sphere": "geo.volume-sphere", "silo": "geo.hemisphere"}
_SOLID_QUERY = {"prism": "volume rectangular prism box length width height", "cylinder": "volume of a cylinder",
                "cone": "volume of a cone", "sphere": "volume of a sphere", "silo": "hemisphere volume"}


def _vol_draw(rng, level):
    solid = _SOLID[level]
    if solid == "prism":
        return {"solid": solid, "l": rng.randint(2, 15), "w": rng.randint(2, 15), "h": rng.randint(2, 15)}
    if solid == "sphere":
        return {"solid": solid, "d": rng.randint(2, 400), "story": rng.choice(["ball", "globe", "balloon", "marble"])}
    return {"solid": solid, "r": rng.randint(1, 40), "h": rng.randint(2, 60)}


def _vol_prompt(p):
    solid = p["solid"]
    if solid == "prism":
        return f"Find the volume of a rectangular box {p['l']} by {p['w']} by {p['h']}."
    if solid == "sphere":
        return f"A {p['story']} has a diameter of {p['d']} cm. What is its exact volume in cubic centimetres?"
    if solid == "silo":
        return (f"A grain silo is a cylinder of radius {p['r']} m and height {p['h']} m topped by a hemisphere of the "
                "same radius. Find its exact volume.")
    return f"Find the exact volume of a {solid} with radius {p['r']} and height {p['h']}."


def _vol_solve(p, s: Solution):
    solid = p["solid"]
    if solid == "sphere":
        s.step(M, "model the object as a sphere and get its radius from the diameter", f"radius = {p['d']}/2.")
        r = s.step(K, "halve the diameter", f"r = {p['d']}/2 = {{v}}", sp.Integer(p["d"]) / 2, errors=CALC,
                   wrong=sp.Integer(p["d"]), calc=f"{p['d']}/2")
        s.step(T, "recall the volume of a sphere", "V = (4/3)*pi*r^3.", search=(_SOLID_QUERY[solid], _SOLID_KP[solid]))
        cube = s.step(K, "cube the radius", f"{r}^3 = {{v}}", r**3, errors=CALC, wrong=r**2, calc=f"({r})**3")
        v = s.step(K, "multiply by 4/3*pi", f"V = 4/3*pi*{cube} = {{v}}", sp.Rational(4, 3) * sp.pi * cube, errors=CALC,
                   calc=f"4*pi*({cube})/3")
        s.step(V, "check against the enclosing cube", f"{v} is about {sp.N(v, 6)} < {(2 * r) ** 3}.")
        return v
    if solid == "prism":
        l, w, h = s.step(S, "read the three dimensions", "l, w, h = {v}",
                         (sp.Integer(p["l"]), sp.Integer(p["w"]), sp.Integer(p["h"])), errors=("transcription_error",))
        s.step(T, "recall the volume of a box", "V = l*w*h.", search=(_SOLID_QUERY[solid], _SOLID_KP[solid]))
        base = s.step(K, "compute the base area", f"{l}*{w} = {{v}}", l * w, errors=CALC, calc=f"{l}*{w}")
        v = s.step(K, "multiply by the height", f"{base}*{h} = {{v}}", base * h, errors=CALC, calc=f"{base}*{h}")
        s.step(V, "check by another order of multiplication", f"{w}*{h}*{l} = {w * h * l}.")
        return v
    r, h = s.step(S, "read the radius and the height", "r, h = {v}", (sp.Integer(p["r"]), sp.Integer(p["h"])),
                  errors=("transcription_error",))
    if solid == "silo":
        s.step(P, "split the silo into a cylinder and a hemisphere", "V = cylinder + hemisphere.")
    s.step(T, f"recall the volume of a {'cylinder' if solid == 'silo' else solid}",
           "V = (1/3)*pi*r^2*h." if solid == "cone" else "V = pi*r^2*h.",
           search=(_SOLID_QUERY["cylinder" if solid == "silo" else solid], _SOLID_KP["cylinder" if solid == "silo" else solid]))
    base = s.step(K, "compute the base area", f"pi*{r}^2 = {{v}}", sp.pi * r**2, errors=CALC, wrong=2 * sp.pi * r,
                  calc=f"pi*{r}**2")
    if solid == "cone":
        v = s.step(K, "multiply by the height and divide by 3", f"{base}*{h}/3 = {{v}}", base * h / 3, errors=CALC,
                   wrong=base * h, calc=f"{sp.sstr(base)}*{h}/3")
        s.step(V, "check that the cone is a third of the cylinder", f"cylinder {base * h}, cone {v}.")
        return v
    cyl = s.step(K, "multiply the base area by the height", f"{base}*{h} = {{v}}", base * h, errors=CALC,
                 calc=f"{sp.sstr(base)}*{h}")
    if solid == "cylinder":
        s.step(V, "check the units and size", f"{cyl} is about {sp.N(cyl, 6)}.")
        return cyl
    s.step(T, "recall the volume of a hemisphere", "V = (2/3)*pi*r^3.", search=(_SOLID_QUERY[solid], _SOLID_KP[solid]))
    hemi = s.step(K, "compute the hemisphere volume", f"2/3*pi*{r}^3 = {{v}}", sp.Rational(2, 3) * sp.pi * r**3,
                  errors=CALC, wrong=sp.Rational(4, 3) * sp.pi * r**3, calc=f"2*pi*{r}**3/3")
    total = s.step(K, "add the two parts", f"{cyl} + {hemi} = {{v}}", cyl + hemi, errors=CALC,
                   calc=f"{sp.sstr(cyl)} + {sp.sstr(hemi)}")
    s.step(V, "check that the silo holds more than the cylinder alone", f"{sp.N(total, 6)} > {sp.N(cyl, 6)}.")
    return total


def _vol_direct(p):
    solid = p["solid"]
    if solid == "prism":
        return sp.Integer(p["l"] * p["w"] * p["h"])
    if solid == "sphere":
        return sp.Rational(4, 3) * sp.pi * (sp.Integer(p["d"]) / 2) ** 3
    r, h = p["r"], p["h"]
    return {"cylinder": sp.pi * r**2 * h, "cone": sp.pi * r**2 * h / 3,
            "silo": sp.pi * r**2 * h + sp.Rational(2, 3) * sp.pi * r**3}[solid]


def _vol_second(p, ans):
    """Disc method: integrate cross-section areas along the axis."""
    solid = p["solid"]
    if solid == "prism":
        v = sp.integrate(p["l"] * p["w"], (z, 0, p["h"]))
    elif solid == "sphere":
        r = sp.Integer(p["d"]) / 2
        v = sp.integrate(sp.pi * (r**2 - z**2), (z, -r, r))
    else:
        r, h = sp.Integer(p["r"]), sp.Integer(p["h"])
        if solid == "cone":
            v = sp.integrate(sp.pi * (r * z / h) ** 2, (z, 0, h))
        else:
            v = sp.integrate(sp.pi * r**2, (z, 0, h))
            if solid == "silo":
                v += sp.integrate(sp.pi * (r**2 - z**2), (z, 0, r))
    return sp.simplify(v - ans) == 0


# ---- 8. law of cosines ---------------------------------------------------------------------
def _cos_draw(rng, level):
    a, b = rng.randint(2, 60), rng.randint(2, 60)
    if level == 1:
        return {"ask": "side", "a": a, "b": b, "C": 60}
    if level == 2:
        return {"ask": "side", "a": a, "b": b, "C": 120}
    if level == 3:
        return {"ask": "side", "a": a, "b": b, "C": rng.choice([30, 45, 135, 150])}
    if level == 4:
        return {"ask": "side", "a": rng.randint(5, 90), "b": rng.randint(5, 90), "C": rng.choice([60, 120]), "story": "ships"}
    angle = rng.choice([60, 120])
    a, b, c = rng.choice(eisenstein_triangles(angle))
    k = rng.randint(1, 4)
    return {"ask": "angle", "a": a * k, "b": b * k, "c": c * k}


def _cos_prompt(p):
    if p["ask"] == "angle":
        return (f"A triangle has sides a = {p['a']}, b = {p['b']} and c = {p['c']}. Find the angle C opposite side c, "
                "in degrees.")
    if p.get("story"):
        return (f"Two ships leave a port at the same time on straight courses {p['C']} degrees apart. After one hour one "
                f"has sailed {p['a']} km and the other {p['b']} km. How far apart are they (exact value, km)?")
    return (f"In triangle ABC, a = {p['a']}, b = {p['b']} and the included angle C = {p['C']} degrees. "
            "Find the exact length of side c.")


def _cos_solve(p, s: Solution):
    if p.get("story"):
        s.step(M, "model the port and the two ships as a triangle with a known included angle",
               f"The courses form a triangle with sides {p['a']}, {p['b']} and angle {p['C']} degrees between them.")
    if p["ask"] == "angle":
        a, b, c = s.step(S, "read the three sides", "a, b, c = {v}", (sp.Integer(p["a"]), sp.Integer(p["b"]), sp.Integer(p["c"])),
                         errors=("transcription_error",))
        s.step(T, "recall the law of cosines solved for the angle", "cos(C) = (a^2 + b^2 - c^2)/(2ab).",
               search=("law of cosines angle side triangle", "geo.law-of-cosines"))
        cosc = s.step(K, "compute cos(C)", f"cos(C) = ({a}^2 + {b}^2 - {c}^2)/(2*{a}*{b}) = {{v}}",
                      (a * a + b * b - c * c) / (2 * a * b), errors=("calculation_error", "sign_error"),
                      calc=f"({a}**2 + {b}**2 - {c}**2)/(2*{a}*{b})")
        angle = s.step(K, "take the inverse cosine and convert to degrees", "C = {v} degrees",
                       sp.acos(cosc) * 180 / sp.pi, errors=("calculation_error",), calc=f"deg(acos({cosc}))")
        s.step(D, "decide whether the angle is acute or obtuse from the sign of cos(C)",
               f"cos(C) = {cosc}: the angle is {'obtuse' if cosc < 0 else 'acute'}.")
        s.step(V, "check that the largest angle is opposite the largest side", f"c = {c} is the longest side.")
        return angle
    a, b, angle = s.step(S, "read the two sides and the included angle", "a, b, C = {v}",
                         (sp.Integer(p["a"]), sp.Integer(p["b"]), sp.Integer(p["C"])), errors=("transcription_error",))
    s.step(T, "recall the law of cosines", "c^2 = a^2 + b^2 - 2ab*cos(C).",
           search=("law of cosines third side included angle", "geo.law-of-cosines"))
    cosc = s.step(C, "recall the exact cosine of the angle", f"cos({angle} degrees) = {{v}}", sp.cos(angle * sp.pi / 180),
                  errors=("sign_error",), calc=f"cosd({angle})")
    c2 = s.step(K, "compute c^2", f"c^2 = {a}^2 + {b}^2 - 2*{a}*{b}*({cosc}) = {{v}}",
                sp.expand(a * a + b * b - 2 * a * b * cosc), errors=CALC, calc=f"{a}**2 + {b}**2 - 2*{a}*{b}*({cosc})")
    c = s.step(K, "take the square root", f"c = sqrt({c2}) = {{v}}", sp.sqrt(c2), errors=CALC, calc=f"sqrt({c2})")
    s.step(V, "check the triangle inequality", f"|{a} - {b}| < {sp.N(c, 6)} < {a + b}.")
    return c


def _cos_direct(p):
    if p["ask"] == "angle":
        a, b, c = p["a"], p["b"], p["c"]
        return sp.acos(sp.Rational(a * a + b * b - c * c, 2 * a * b)) * 180 / sp.pi
    return sp.sqrt(p["a"] ** 2 + p["b"] ** 2 - 2 * p["a"] * p["b"] * sp.cos(sp.Integer(p["C"]) * sp.pi / 180))


def _cos_second(p, ans):
    """Coordinates: C at the origin, B on the x-axis, A at angle C; measure AB (or the angle at C)."""
    if p["ask"] == "angle":
        C0 = sp.Point(0, 0)
        Bp = sp.Point(p["a"], 0)
        px = (p["a"] ** 2 + p["b"] ** 2 - p["c"] ** 2) / sp.Integer(2 * p["a"])
        Ap = sp.Point(px, sp.sqrt(p["b"] ** 2 - px**2))
        if C0.distance(Ap) != p["b"] or Bp.distance(Ap) != p["c"]:
            return False
        return sp.simplify(sp.Triangle(C0, Bp, Ap).angles[C0] * 180 / sp.pi - ans) == 0
    theta = sp.Integer(p["C"]) * sp.pi / 180
    A = sp.Point(p["b"] * sp.cos(theta), p["b"] * sp.sin(theta))
    return sp.simplify(A.distance(sp.Point(p["a"], 0)) - ans) == 0


# ---- 9. arc length and sector area ---------------------------------------------------------
_ANGLES = list(range(5, 360, 5))


def _arc_draw(rng, level):
    r, theta = rng.randint(2, 60), rng.choice(_ANGLES)
    return {1: {"ask": "arc", "r": r, "theta": theta}, 2: {"ask": "sector", "r": r, "theta": theta},
            3: {"ask": "angle", "r": r, "theta": theta},
            4: {"ask": "slice", "d": 2 * rng.randint(5, 150), "n": rng.randint(3, 16)},
            5: {"ask": "perimeter", "r": r, "theta": theta}}[level]


def _arc_prompt(p):
    ask = p["ask"]
    if ask == "slice":
        return (f"A round pizza {p['d']} cm across is cut into {p['n']} equal slices. What is the exact area of one "
                "slice in square centimetres?")
    if ask == "angle":
        arc = sp.Integer(p["theta"]) / 180 * p["r"] * sp.pi
        return f"An arc of a circle of radius {p['r']} has length {sp.sstr(arc)}. Find its central angle in degrees."
    what = {"arc": "the exact length of the arc", "sector": "the exact area of the sector",
            "perimeter": "the exact perimeter of the sector (two radii and the arc)"}[ask]
    return f"A sector of a circle of radius {p['r']} has a central angle of {p['theta']} degrees. Find {what}."


def _arc_solve(p, s: Solution):
    ask = p["ask"]
    if ask == "slice":
        s.step(M, "model one slice as a sector with central angle 360/n degrees", f"angle = 360/{p['n']} degrees.")
        r = s.step(K, "halve the diameter to get the radius", f"r = {p['d']}/2 = {{v}}", sp.Integer(p["d"]) / 2,
                   errors=CALC, wrong=sp.Integer(p["d"]), calc=f"{p['d']}/2")
        s.step(T, "recall the sector area formula", "A = (theta/360)*pi*r^2.",
               search=("area of a sector central angle", "geo.sector-area"))
        disc = s.step(K, "compute the area of the whole pizza", f"pi*{r}^2 = {{v}}", sp.pi * r**2, errors=CALC,
                      calc=f"pi*({r})**2")
        piece = s.step(K, "divide by the number of slices", f"{disc}/{p['n']} = {{v}}", disc / p["n"], errors=CALC,
                       calc=f"{sp.sstr(disc)}/{p['n']}")
        s.step(V, "check that the slices add up to the whole pizza", f"{p['n']}*{piece} = {p['n'] * piece}.")
        return piece
    r = s.step(S, "read the radius", "r = {v}", sp.Integer(p["r"]), errors=("transcription_error",))
    if ask == "angle":
        arc = s.step(S, "read the arc length", "s = {v}", sp.Integer(p["theta"]) / 180 * p["r"] * sp.pi)
        s.step(T, "recall the arc length formula", "s = (theta/360)*2*pi*r.",
               search=("arc length central angle radius", "geo.arc-length"))
        frac = s.step(K, "divide the arc by the circumference", f"{arc}/(2*pi*{r}) = {{v}}", arc / (2 * sp.pi * r),
                      errors=CALC, wrong=arc / (sp.pi * r), calc=f"({sp.sstr(arc)})/(2*pi*{r})")
        theta = s.step(K, "multiply the fraction of the circle by 360", f"{frac}*360 = {{v}}", frac * 360, errors=CALC,
                       calc=f"({frac})*360")
        s.step(V, "check by recomputing the arc", f"({theta}/360)*2*pi*{r} = {theta / 360 * 2 * sp.pi * r}.")
        return theta
    theta = s.step(S, "read the central angle", "theta = {v} degrees", sp.Integer(p["theta"]), errors=("transcription_error",))
    frac = s.step(C, "express the sector as a fraction of the full circle", f"{theta}/360 = {{v}}", theta / 360,
                  errors=("calculation_error",), wrong=theta / 180, calc=f"{theta}/360")
    if ask == "sector":
        s.step(T, "recall the sector area formula", "A = (theta/360)*pi*r^2.",
               search=("area of a sector central angle", "geo.sector-area"))
        area = s.step(K, "multiply the fraction by the area of the circle", f"{frac}*pi*{r}^2 = {{v}}", frac * sp.pi * r**2,
                      errors=CALC, wrong=frac * 2 * sp.pi * r, calc=f"({frac})*pi*{r}**2")
        s.step(V, "check that the sector is smaller than the whole circle", f"{sp.N(area, 6)} < {sp.N(sp.pi * r**2, 6)}.")
        return area
    s.step(T, "recall the arc length formula", "s = (theta/360)*2*pi*r.",
           search=("arc length central angle radius", "geo.arc-length"))
    arc = s.step(K, "multiply the fraction by the circumference", f"{frac}*2*pi*{r} = {{v}}", frac * 2 * sp.pi * r,
                 errors=CALC, wrong=frac * sp.pi * r**2, calc=f"({frac})*2*pi*{r}")
    if ask == "arc":
        s.step(V, "check that the arc is shorter than the circumference", f"{sp.N(arc, 6)} < {sp.N(2 * sp.pi * r, 6)}.")
        return arc
    s.step(P, "see the sector's boundary as two radii and the arc", f"perimeter = 2*{r} + arc.")
    per = s.step(K, "add the two radii", f"2*{r} + {arc} = {{v}}", 2 * r + arc, errors=CALC, wrong=r + arc,
                 calc=f"2*{r} + {sp.sstr(arc)}")
    s.step(V, "check the size", f"{per} is about {sp.N(per, 6)}.")
    return per


def _arc_direct(p):
    ask = p["ask"]
    if ask == "slice":
        return sp.pi * (sp.Integer(p["d"]) / 2) ** 2 / p["n"]
    if ask == "angle":
        return sp.Integer(p["theta"])
    r, th = sp.Integer(p["r"]), sp.Integer(p["theta"])
    arc = th / 360 * 2 * sp.pi * r
    return {"arc": arc, "sector": th / 360 * sp.pi * r**2, "perimeter": 2 * r + arc}[ask]


def _arc_second(p, ans):
    """Integrate in polar coordinates: arc = integral of r dphi, area = double integral of rho."""
    ask = p["ask"]
    if ask == "slice":
        r = sp.Integer(p["d"]) / 2
        return sp.simplify(sp.integrate(sp.integrate(rho, (rho, 0, r)), (phi, 0, 2 * sp.pi / p["n"])) - ans) == 0
    r = sp.Integer(p["r"])
    if ask == "angle":
        arc = sp.Integer(p["theta"]) / 180 * r * sp.pi
        t = sp.Symbol("t", positive=True)
        sol = sp.solve(sp.integrate(r, (phi, 0, t)) - arc, t)
        return sp.simplify(sol[0] * 180 / sp.pi - ans) == 0
    top = sp.Integer(p["theta"]) * sp.pi / 180
    if ask == "sector":
        return sp.simplify(sp.integrate(sp.integrate(rho, (rho, 0, r)), (phi, 0, top)) - ans) == 0
    arc = sp.integrate(r, (phi, 0, top))
    return sp.simplify(arc + (2 * r if ask == "perimeter" else 0) - ans) == 0


# ---- 10. circle from its equation ----------------------------------------------------------
def _ceq_draw(rng, level):
    h, k = nonzero(rng, -9, 9), nonzero(rng, -9, 9)
    if level == 4:
        px, py = h + nonzero(rng, -6, 6), k + nonzero(rng, -6, 6)
        return {"form": "diameter", "p1": [px, py], "p2": [2 * h - px, 2 * k - py]}
    if level == 5:
        while True:
            r2 = rng.randint(2, 60)
            if not sp.sqrt(r2).is_Integer:
                return {"form": "general", "h": h, "k": k, "r2": r2, "m": 1}
    r = rng.randint(1, 12)
    return {"form": "standard" if level == 1 else "general", "h": h, "k": k, "r2": r * r,
            "m": rng.randint(2, 4) if level == 3 else 1}


def _ceq_expr(p):
    """Left side of '... = 0' for the general form (times m)."""
    return sp.expand(p["m"] * ((x - p["h"]) ** 2 + (y - p["k"]) ** 2 - p["r2"]))


def _ceq_prompt(p):
    if p["form"] == "diameter":
        return (f"The points {tuple(p['p1'])} and {tuple(p['p2'])} are the ends of a diameter of a circle. "
                "Find its center and radius, answered as (h, k, r).")
    if p["form"] == "standard":
        return (f"Find the center and radius of the circle (x {'-' if p['h'] > 0 else '+'} {abs(p['h'])})^2 + "
                f"(y {'-' if p['k'] > 0 else '+'} {abs(p['k'])})^2 = {p['r2']}, answered as (h, k, r).")
    eq = sp.sstr(_ceq_expr(p), order="grevlex").replace("**", "^")
    return f"Find the center and radius of the circle {eq} = 0, answered as (h, k, r)."


def _ceq_solve(p, s: Solution):
    if p["form"] == "diameter":
        (x1, y1), (x2, y2) = p["p1"], p["p2"]
        s.step(P, "see that the center is the midpoint of the diameter and the radius half its length",
               "center = midpoint, r = half the diameter.")
        s.step(T, "recall the midpoint formula", "M = ((x1 + x2)/2, (y1 + y2)/2).",
               search=("midpoint formula segment endpoints average", "geo.midpoint-formula"))
        h = s.step(K, "average the x-coordinates", f"h = ({x1} + ({x2}))/2 = {{v}}", sp.Integer(x1 + x2) / 2,
                   errors=("calculation_error", "sign_error"), calc=f"({x1} + ({x2}))/2")
        k = s.step(K, "average the y-coordinates", f"k = ({y1} + ({y2}))/2 = {{v}}", sp.Integer(y1 + y2) / 2,
                   errors=("calculation_error", "sign_error"), calc=f"({y1} + ({y2}))/2")
        r = s.step(K, "compute the radius as the distance from the center to an endpoint",
                   f"r = sqrt(({x1} - ({h}))^2 + ({y1} - ({k}))^2) = {{v}}", sp.sqrt((x1 - h) ** 2 + (y1 - k) ** 2),
                   errors=CALC, wrong=sp.sqrt((x1 - x2) ** 2 + (y1 - y2) ** 2), calc=f"sqrt(({x1} - ({h}))**2 + ({y1} - ({k}))**2)")
        s.step(V, "check that the other endpoint is at the same distance", f"{_dist((x2, y2), (h, k))}.")
        return (h, k, r)
    if p["form"] == "standard":
        h, k, r2 = s.step(S, "read h, k and r^2 from the standard form, minding the signs", "h, k, r^2 = {v}",
                          (sp.Integer(p["h"]), sp.Integer(p["k"]), sp.Integer(p["r2"])), errors=("sign_error", "transcription_error"))
        s.step(C, "recall the standard form of a circle", "(x - h)^2 + (y - k)^2 = r^2.",
               search=("equation of circle standard form center radius", "geo.circle-equation"))
        r = s.step(K, "take the square root of r^2", f"r = sqrt({r2}) = {{v}}", sp.sqrt(r2), errors=CALC,
                   wrong=r2, calc=f"sqrt({r2})")
        s.step(V, "check a point of the circle", f"({h} + {r}, {k}) satisfies the equation.")
        return (h, k, r)
    expr = _ceq_expr(p)
    m = sp.Integer(p["m"])
    if m != 1:
        expr = s.step(F, "divide the equation by the leading coefficient", f"divide by {m}: {{v}} = 0", sp.expand(expr / m),
                      errors=("calculation_error",), wrong=sp.expand(expr / m) + 1)
    d_coef, e_coef, f_coef = s.step(S, "read the coefficients D, E, F of x, y and the constant", "D, E, F = {v}",
                                    (expr.coeff(x, 1), expr.coeff(y, 1), expr.subs({x: 0, y: 0})),
                                    errors=("transcription_error", "sign_error"))
    s.step(T, "recall completing the square for a circle", "center (-D/2, -E/2), r^2 = D^2/4 + E^2/4 - F.",
           search=("equation of circle general form completing the square center radius", "geo.circle-equation-general-form"))
    h = s.step(K, "compute the x-coordinate of the center", f"h = -({d_coef})/2 = {{v}}", -d_coef / 2,
               errors=("calculation_error", "sign_error"), calc=f"-({d_coef})/2")
    k = s.step(K, "compute the y-coordinate of the center", f"k = -({e_coef})/2 = {{v}}", -e_coef / 2,
               errors=("calculation_error", "sign_error"), calc=f"-({e_coef})/2")
    r2 = s.step(K, "compute r^2", f"r^2 = ({h})^2 + ({k})^2 - ({f_coef}) = {{v}}", h * h + k * k - f_coef,
                errors=CALC, wrong=h * h + k * k + f_coef, calc=f"({h})**2 + ({k})**2 - ({f_coef})")
    s.step(D, "confirm that r^2 is positive so the equation is a real circle", f"{r2} > 0.")
    r = s.step(K, "take the square root", f"r = sqrt({r2}) = {{v}}", sp.sqrt(r2), errors=CALC, calc=f"sqrt({r2})")
    s.step(V, "check a point of the circle in the original equation", f"({h} + {r}, {k}) gives 0.")
    return (h, k, r)


def _ceq_direct(p):
    if p["form"] == "diameter":
        mid = sp.Segment(sp.Point(*p["p1"]), sp.Point(*p["p2"])).midpoint
        return (mid.x, mid.y, mid.distance(sp.Point(*p["p1"])))
    circle = sp.Circle(_ceq_expr(p) / p["m"], x=x, y=y)
    return (circle.center.x, circle.center.y, circle.radius)


def _ceq_second(p, ans):
    """Points at the four compass positions of the claimed circle satisfy the given equation."""
    h, k, r = ans
    if p["form"] == "diameter":
        a, b = sp.Point(*p["p1"]), sp.Point(*p["p2"])
        center = sp.Point(h, k)
        return center.distance(a) == r and center.distance(b) == r and sp.Point.is_collinear(a, b, center)
    expr = _ceq_expr(p)
    return all(sp.simplify(expr.subs({x: px, y: py})) == 0 for px, py in ((h + r, k), (h - r, k), (h, k + r), (h, k - r)))


FAMILIES = [
    Family("pythagorean_theorem", "geometry", "geo.pythagorean-theorem", "number",
           _pyth_draw, _pyth_prompt, _pyth_solve, _pyth_direct, _pyth_second, "coordinate distance"),
    Family("herons_formula", "geometry", "geo.herons-formula", "number",
           _heron_draw, _heron_prompt, _heron_solve, _heron_direct, _heron_second, "coordinate placement"),
    Family("circle_measure", "geometry", "geo.circle-area", "number",
           _circle_draw, _circle_prompt, _circle_solve, _circle_direct, _circle_second, "polar integration"),
    Family("distance_midpoint", "geometry", "geo.distance-formula", "number",
           _dist_draw, _dist_prompt, _dist_solve, _dist_direct, _dist_second, "sympy geometry",
           kind_by_level={3: "tuple"}),
    Family("polygon_angles", "geometry", "geo.polygon-interior-angles", "number",
           _poly_draw, _poly_prompt, _poly_solve, _poly_direct, _poly_second, "sympy RegularPolygon angles"),
    Family("similar_triangles", "geometry", "geo.similar-triangles", "number",
           _sim_draw, _sim_prompt, _sim_solve, _sim_direct, _sim_second, "scaled coordinates"),
    Family("solid_volume", "geometry", "geo.volume-cylinder", "number",
           _vol_draw, _vol_prompt, _vol_solve, _vol_direct, _vol_second, "disc-method integration"),
    Family("law_of_cosines", "geometry", "geo.law-of-cosines", "number",
           _cos_draw, _cos_prompt, _cos_solve, _cos_direct, _cos_second, "coordinate placement"),
    Family("arc_sector", "geometry", "geo.arc-length", "number",
           _arc_draw, _arc_prompt, _arc_solve, _arc_direct, _arc_second, "polar integration"),
    Family("circle_equation", "geometry", "geo.circle-equation-general-form", "tuple",
           _ceq_draw, _ceq_prompt, _ceq_solve, _ceq_direct, _ceq_second, "points on the circle"),
]
