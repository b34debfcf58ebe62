"""Attribution of agent modules (planner, memory, tools, ...) from a characteristic function.

``v`` gives the score of every subset S of the n modules (a mapping frozenset -> value, or a
callable). Exact Shapley values weight each marginal contribution v(S+i) - v(S) by
|S|! (n-|S|-1)! / n!; for large n a seeded Monte-Carlo estimate over random permutations
gives the mean and a normal confidence interval. Banzhaf weights every S equally (1/2^(n-1)).
"""
from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

Value = Callable[[frozenset], float] | Mapping[frozenset, float]


def _as_function(v: Value) -> Callable[[frozenset], float]:
    if callable(v):
        return v
    table = {frozenset(k): float(x) for k, x in v.items()}

    def lookup(s: frozenset) -> float:
        try:
            return table[frozenset(s)]
        except KeyError:
            raise KeyError(f"v(S) missing for S = {sorted(s, key=str)}") from None

    return lookup


def shapley_values(players: Sequence[Hashable], v: Value) -> dict[Hashable, float]:
    """Exact Shapley values (2^n evaluations of v)."""
    f = _as_function(v)
    n = len(players)
    cache: dict[frozenset, float] = {}

    def val(s: frozenset) -> float:
        if s not in cache:
            cache[s] = f(s)
        return cache[s]

    out = {}
    for i in players:
        others = [p for p in players if p != i]
        total = 0.0
        for k in range(n):
            w = math.factorial(k) * math.factorial(n - k - 1) / math.factorial(n)
            for combo in itertools.combinations(others, k):
                s = frozenset(combo)
                total += w * (val(s | {i}) - val(s))
        out[i] = total
    return out


def banzhaf_values(players: Sequence[Hashable], v: Value) -> dict[Hashable, float]:
    """Banzhaf values: the plain average of i's marginal contributions over all S not holding i."""
    f = _as_function(v)
    out = {}
    for i in players:
        others = [p for p in players if p != i]
        contributions = [f(frozenset(c) | {i}) - f(frozenset(c))
                         for k in range(len(others) + 1) for c in itertools.combinations(others, k)]
        out[i] = sum(contributions) / len(contributions)
    return out


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float
    stderr: float
    samples: int


def shapley_monte_carlo(players: Sequence[Hashable], v: Value, permutations: int = 1000, seed: int = 0,
                        confidence: float = 0.95) -> dict[Hashable, Estimate]:
    """Permutation-sampling estimate with a normal-approximation confidence interval (seeded)."""
    f = _as_function(v)
    rng = random.Random(seed)
    samples: dict[Hashable, list[float]] = {p: [] for p in players}
    order = list(players)
    cache: dict[frozenset, float] = {}

    def val(s: frozenset) -> float:
        if s not in cache:
            cache[s] = f(s)
        return cache[s]

    for _ in range(permutations):
        rng.shuffle(order)
        prefix: frozenset = frozenset()
        before = val(prefix)
        for p in order:
            prefix = prefix | {p}
            after = val(prefix)
            samples[p].append(after - before)
            before = after
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    out = {}
    for p, xs in samples.items():
        m = sum(xs) / len(xs)
        var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1) if len(xs) > 1 else 0.0
        se = math.sqrt(var / len(xs))
        out[p] = Estimate(m, m - z * se, m + z * se, se, len(xs))
    return out


def best_combination(players: Sequence[Hashable], v: Value) -> tuple[frozenset, float]:
    """The subset with the highest v (ties: the smaller subset, then sorted names)."""
    f = _as_function(v)
    subsets = [frozenset(c) for k in range(len(players) + 1) for c in itertools.combinations(players, k)]
    return max(((s, f(s)) for s in subsets), key=lambda sv: (sv[1], -len(sv[0]), [str(x) for x in sorted(sv[0], key=str)]))


def predicted_best_combination(players: Sequence[Hashable], v: Value) -> tuple[frozenset, float]:
    """What the Shapley values predict without searching: the modules with positive value,
    scored by v(empty) + sum of their Shapley values (additive prediction)."""
    phi = shapley_values(players, v)
    chosen = frozenset(p for p in players if phi[p] > 0)
    return chosen, _as_function(v)(frozenset()) + sum(phi[p] for p in chosen)


def pairwise_consistency(scores_a: Mapping[Hashable, float], scores_b: Mapping[Hashable, float]) -> float | None:
    """Share of pairs of models ranked the same way under two settings (e.g. two default
    module sets or two judge models). A tie agrees only with a tie."""
    keys = sorted(set(scores_a) & set(scores_b), key=str)
    pairs = list(itertools.combinations(keys, 2))
    if not pairs:
        return None

    def sign(x: float) -> int:
        return (x > 0) - (x < 0)

    agree = sum(sign(scores_a[x] - scores_a[y]) == sign(scores_b[x] - scores_b[y]) for x, y in pairs)
    return agree / len(pairs)


def subsets_table(players: Iterable[Hashable], v: Callable[[frozenset], float]) -> dict[frozenset, float]:
    players = list(players)
    return {frozenset(c): v(frozenset(c)) for k in range(len(players) + 1) for c in itertools.combinations(players, k)}
