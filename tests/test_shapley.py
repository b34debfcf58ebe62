"""Shapley / Banzhaf attribution: axioms and a hand-checked 4-module example."""

import pytest

from pipeline.scoring.shapley import (
    banzhaf_values,
    best_combination,
    pairwise_consistency,
    predicted_best_combination,
    shapley_monte_carlo,
    shapley_values,
    subsets_table,
)

MODULES = ("planner", "memory", "search", "verifier")


def v4(s: frozenset) -> float:
    """Additive parts 0.1 (planner), 0.2 (memory), 0.0 (search alone), plus a 0.3 synergy when
    search and verifier are both present; verifier alone adds nothing. v(empty) = 0.1 (base)."""
    value = 0.1 + 0.1 * ("planner" in s) + 0.2 * ("memory" in s)
    if "search" in s and "verifier" in s:
        value += 0.3
    return value


def test_hand_checked_four_modules():
    phi = shapley_values(MODULES, v4)
    # planner and memory are additive: phi = their own contribution (0.1, 0.2).
    # the 0.3 synergy is split equally between the two symmetric players search and verifier:
    # for search, the marginal contribution is 0.3 exactly when verifier is in S. Over |S| = k
    # (S from the 3 others), the weights k!(3-k)!/4! are 1/4, 1/12, 1/12, 1/4 per subset; subsets
    # holding verifier: k=1: 1 subset (1/12), k=2: 2 subsets (2 * 1/12), k=3: 1 subset (1/4)
    # -> 0.3 * (1/12 + 2/12 + 3/12) = 0.3 * 0.5 = 0.15.
    assert phi["planner"] == pytest.approx(0.1)
    assert phi["memory"] == pytest.approx(0.2)
    assert phi["search"] == pytest.approx(0.15)
    assert phi["verifier"] == pytest.approx(0.15)
    # Banzhaf: search's contribution is 0.3 in 4 of the 8 subsets of the others -> 0.15
    bz = banzhaf_values(MODULES, v4)
    assert bz == pytest.approx({"planner": 0.1, "memory": 0.2, "search": 0.15, "verifier": 0.15})
    best, value = best_combination(MODULES, v4)
    assert best == frozenset(MODULES) and value == pytest.approx(0.7)
    predicted, pv = predicted_best_combination(MODULES, v4)
    assert predicted == frozenset(MODULES) and pv == pytest.approx(0.7)


def test_efficiency_symmetry_null_player():
    players = ("a", "b", "c", "n")

    def v(s):
        base = {frozenset(): 0, frozenset("a"): 1, frozenset("b"): 1, frozenset("c"): 2}
        core = frozenset(x for x in s if x != "n")   # n is a null player
        if core in base:
            return base[core]
        return len(core) ** 2 + (3 if {"a", "b"} <= core else 0)

    table = subsets_table(players, v)
    phi = shapley_values(players, table)
    assert sum(phi.values()) == pytest.approx(v(frozenset(players)) - v(frozenset()))   # efficiency
    assert phi["a"] == pytest.approx(phi["b"])                                          # symmetry
    assert phi["n"] == pytest.approx(0.0)                                               # null player
    assert banzhaf_values(players, table)["n"] == pytest.approx(0.0)


def test_missing_subset_is_named():
    with pytest.raises(KeyError, match="missing"):
        shapley_values(("a", "b"), {frozenset(): 0, frozenset("a"): 1})


def test_monte_carlo_estimate_covers_exact_and_is_seeded():
    players = tuple(f"m{i}" for i in range(9))
    weights = {p: (i + 1) / 10 for i, p in enumerate(players)}

    def v(s):
        return sum(weights[p] for p in s) + (0.5 if {"m0", "m8"} <= s else 0)

    exact = shapley_values(players, v)
    est = shapley_monte_carlo(players, v, permutations=400, seed=3)
    again = shapley_monte_carlo(players, v, permutations=400, seed=3)
    assert est == again
    for p in players:
        assert est[p].low - 1e-12 <= exact[p] <= est[p].high + 1e-12
    assert est["m3"].high - est["m3"].low == pytest.approx(0.0)    # purely additive player: no variance


def test_pairwise_consistency():
    a = {"m1": 0.9, "m2": 0.5, "m3": 0.1}
    b = {"m1": 0.8, "m2": 0.2, "m3": 0.3}      # m2/m3 flipped: 2 of 3 pairs agree
    assert pairwise_consistency(a, b) == pytest.approx(2 / 3)
    assert pairwise_consistency(a, a) == 1.0
    assert pairwise_consistency({"x": 1}, {"x": 2}) is None
