"""Shapley helpers on cases small enough to work out by hand: the Monte-Carlo interval's exact
figures, defaults, ties, null players, names of mixed types (the cases benchmarks/mutation.py
found no test for)."""
from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest

from pipeline.scoring.shapley import (
    best_combination,
    pairwise_consistency,
    predicted_best_combination,
    shapley_monte_carlo,
    shapley_values,
)

TABLE = {frozenset(): 0.0, frozenset("a"): 1.0, frozenset("b"): 2.0, frozenset("ab"): 5.0}


def test_monte_carlo_interval_by_hand():
    # two players: each permutation gives a either 1 (a first) or 3 (b first)
    for n, seed in itertools.product((2, 3, 10), range(4)):
        est = shapley_monte_carlo(("a", "b"), TABLE, permutations=n, seed=seed)["a"]
        k = round((3 * n - n * est.value) / 2)               # permutations with a first
        xs = [1.0] * k + [3.0] * (n - k)
        m = sum(xs) / n
        se = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1) / n)
        z = NormalDist().inv_cdf(0.975)
        assert est.samples == n and est.value == pytest.approx(m)
        assert est.stderr == pytest.approx(se) and est.low == pytest.approx(m - z * se)
        assert est.high == pytest.approx(m + z * se)
    one = shapley_monte_carlo(("a", "b"), TABLE, permutations=1)["a"]
    assert one.stderr == 0.0 and one.low == one.value == one.high and one.samples == 1
    wide = shapley_monte_carlo(("a", "b"), TABLE, permutations=10, confidence=0.5)["a"]
    assert wide.high - wide.value == pytest.approx(NormalDist().inv_cdf(0.75) * wide.stderr)


def test_monte_carlo_defaults():
    assert shapley_monte_carlo(("a", "b"), TABLE) == shapley_monte_carlo(("a", "b"), TABLE, permutations=1000, seed=0)
    assert shapley_monte_carlo(("a", "b"), TABLE)["a"].samples == 1000


def test_a_missing_subset_of_mixed_names_is_named():
    with pytest.raises(KeyError, match=r"v\(S\) missing for S = \[1, 'b'\]"):
        shapley_values((1, "b"), {frozenset(): 0, frozenset([1]): 1, frozenset(["b"]): 1})


def test_best_combination_ties():
    flat = {frozenset(s): 1.0 for k in range(3) for s in itertools.combinations((1, "a"), k)}
    assert best_combination((1, "a"), flat) == (frozenset(), 1.0)          # the smallest of equals
    pair = {frozenset(): 0.0, frozenset("a"): 1.0, frozenset("b"): 1.0, frozenset("ab"): 0.5}
    assert best_combination(("a", "b"), pair) == (frozenset("b"), 1.0)     # then the last name
    assert best_combination(("b", "a"), pair) == (frozenset("b"), 1.0)


def test_a_null_player_is_not_predicted():
    v = {frozenset(): 1.0, frozenset("a"): 3.0, frozenset("n"): 1.0, frozenset("an"): 3.0}
    assert predicted_best_combination(("a", "n"), v) == (frozenset("a"), 3.0)


def test_pairwise_consistency_by_hand():
    a = {"x": 1.0, "y": 1.0, "z": 1.5, "w": 0.2, 7: 0.6}
    b = {"x": 1.0, "y": 1.4, "z": 1.2, "w": 0.1, 7: 0.6, "only_b": 9.0}
    keys = [k for k in a if k in b]
    pairs = list(itertools.combinations(keys, 2))
    expected = sum(np.sign(a[x] - a[y]) == np.sign(b[x] - b[y]) for x, y in pairs) / len(pairs)
    assert pairwise_consistency(a, b) == pytest.approx(expected)
    assert pairwise_consistency({"x": 1.0, "y": 1.0}, {"x": 1.0, "y": 1.5}) == 0.0     # a tie is not an order
    assert pairwise_consistency({"x": 1.0, "y": 1.0}, {"x": 1.5, "y": 1.0}) == 0.0
    assert pairwise_consistency({"x": 1.0, "y": 0.5}, {"x": 3.0, "y": 0.0}) == 1.0     # small and large gaps
    assert pairwise_consistency({"x": 1.0, "y": 1.0}, {"x": 2.0, "y": 2.0}) == 1.0     # two ties agree
    assert pairwise_consistency({"x": 0.5, "y": 1.0}, {"x": 0.0, "y": 1.0}) == 1.0
    assert pairwise_consistency({"x": 1.0, "y": 0.5}, {"x": 1.0, "y": 0.0}) == 1.0
