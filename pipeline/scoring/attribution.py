"""Module attribution from per-task outcomes of module configurations (CapaBench).

A *configuration* S is the set of modules the test model drives (the default model drives the rest).
``outcomes(S)`` gives one number per task, in the same task order for every S (1/0 for success). Then
v(S) = the mean over tasks, and each module's Shapley value is its marginal contribution
v(S + i) - v(S) averaged over all orders (``pipeline.scoring.shapley``).

Exact (up to ``EXACT_MAX`` modules, or ``exact=True``): every one of the 2^n configurations is run.
Shapley and Banzhaf values are linear in the table of v, so with W the weights of that map (computed
by the library functions on unit tables) a bootstrap over tasks is cheap: draw tasks with replacement
(seeded), recompute v(S) for every S from the same draw, map through W; the interval is the
percentile interval of the ``resamples`` values.

Sampled (more modules): ``shapley_monte_carlo`` draws ``permutations`` random orders (seeded) and asks
for v only along them; ``outcomes`` is called once per distinct configuration it needs, and
``configurations_run`` says how many that was. Its estimate is linear in v too, so the same
bootstrap over tasks gives intervals; the permutation sampler's own normal interval is reported as
``sampling`` beside them. Banzhaf values need every configuration and are left out.

Best measured combination: the configuration run with the highest v (ties: fewer test modules).
Predicted combination: the test model on the modules with a positive Shapley value; its predicted
success is v(empty) + the sum of their Shapley values (additive), its measured success v of that
configuration (run if the sampler had not).
"""
from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipeline.scoring.shapley import (
    banzhaf_values,
    pairwise_consistency,
    shapley_monte_carlo,
    shapley_values,
)

EXACT_MAX = 4


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}


@dataclass
class Attribution:
    modules: list[str]
    method: str                                   # "exact" | "sampled"
    n_tasks: int
    configurations_run: int
    table: dict[frozenset, float]                 # v(S) of every configuration run
    shapley: dict[str, Interval]
    banzhaf: dict[str, Interval] | None
    best: tuple[frozenset, float]
    predicted: tuple[frozenset, float, float]     # (modules, predicted v, measured v)
    sampling: dict[str, Interval] | None = None   # sampled: the permutation sampler's own interval
    permutations: int | None = None
    outcomes: dict[frozenset, list[float]] = field(default_factory=dict)

    def to_dict(self, name=str) -> dict[str, Any]:
        def names(s: frozenset) -> list[str]:
            return [name(m) for m in self.modules if m in s]
        return {
            "method": self.method, "n_tasks": self.n_tasks, "configurations_run": self.configurations_run,
            "permutations": self.permutations,
            "table": [{"test_modules": names(s), "v": v} for s, v in sorted(
                self.table.items(), key=lambda kv: (len(kv[0]), sorted(map(self.modules.index, kv[0]))))],
            "shapley": {name(m): iv.to_dict() for m, iv in self.shapley.items()},
            "banzhaf": None if self.banzhaf is None else {name(m): iv.to_dict() for m, iv in self.banzhaf.items()},
            "sampling": None if self.sampling is None else {name(m): iv.to_dict() for m, iv in self.sampling.items()},
            "best": {"test_modules": names(self.best[0]), "v": self.best[1]},
            "predicted": {"test_modules": names(self.predicted[0]), "predicted": self.predicted[1],
                          "measured": self.predicted[2]},
            "efficiency": {"sum_shapley": sum(iv.value for iv in self.shapley.values()),
                           "v_all_minus_v_none": (self.table[frozenset(self.modules)] - self.table[frozenset()])
                           if frozenset(self.modules) in self.table and frozenset() in self.table else None},
        }


def all_subsets(modules: Sequence) -> list[frozenset]:
    return [frozenset(c) for k in range(len(modules) + 1) for c in itertools.combinations(modules, k)]


def linear_weights(modules: Sequence, configs: list[frozenset], value_of) -> np.ndarray:
    """W with phi = v @ W for a value map linear in v (``value_of(modules, table) -> {module: value}``):
    column k of W^T is the map applied to the unit table of configuration k."""
    w = np.zeros((len(configs), len(modules)))
    for k, s in enumerate(configs):
        unit = {c: float(c == s) for c in configs}
        phi = value_of(modules, unit)
        w[k] = [phi[m] for m in modules]
    return w


def _orders(modules: Sequence, permutations: int, seed: int) -> list[list]:
    """The orders ``shapley_monte_carlo`` draws for (modules, permutations, seed): the same RNG calls."""
    rng = random.Random(seed)
    order, out = list(modules), []
    for _ in range(permutations):
        rng.shuffle(order)
        out.append(list(order))
    return out


def _sampled_weights(modules: Sequence, orders: list[list], configs: list[frozenset]) -> np.ndarray:
    index = {s: k for k, s in enumerate(configs)}
    w = np.zeros((len(configs), len(modules)))
    for order in orders:
        prefix: frozenset = frozenset()
        for m in order:
            j = modules.index(m)
            w[index[prefix], j] -= 1
            prefix = prefix | {m}
            w[index[prefix], j] += 1
    return w / len(orders)


def bootstrap(x: np.ndarray, w: np.ndarray, *, resamples: int, confidence: float, seed: int) -> tuple[np.ndarray, ...]:
    """Percentile interval of ``mean(x[draw]) @ w`` over ``resamples`` draws of the rows (tasks) of
    ``x`` (tasks x configurations) with replacement; returns (low, high) per column of ``w``."""
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    draws = rng.integers(0, n, size=(resamples, n))
    values = x[draws].mean(axis=1) @ w                      # resamples x modules
    alpha = (1 - confidence) / 2
    return np.quantile(values, alpha, axis=0), np.quantile(values, 1 - alpha, axis=0)


def _clean(x) -> float:
    """A quantile without its float noise (-1e-17 is 0)."""
    return round(float(x), 12) + 0.0


def attribute(modules: Sequence[str], outcomes: Callable[[frozenset], Sequence[float]] | Mapping, *,
              exact: bool | None = None, permutations: int = 200, resamples: int = 1000, confidence: float = 0.95,
              seed: int = 0) -> Attribution:
    """Shapley (and, exact, Banzhaf) values of ``modules`` with bootstrap intervals over tasks; see the
    module docstring. ``outcomes``: S -> per-task outcomes (a callable run on demand, or a mapping)."""
    modules = list(modules)
    get = outcomes.__getitem__ if isinstance(outcomes, Mapping) else outcomes
    seen: dict[frozenset, list[float]] = {}

    def run(s: frozenset) -> list[float]:
        s = frozenset(s)
        if s not in seen:
            seen[s] = [float(x) for x in get(s)]
            if len(seen) > 1 and len(seen[s]) != len(next(iter(seen.values()))):
                raise ValueError(f"configuration {sorted(s)} has {len(seen[s])} outcomes, others "
                                 f"{len(next(iter(seen.values())))}: every configuration runs the same tasks")
        return seen[s]

    def v(s: frozenset) -> float:
        xs = run(s)
        return sum(xs) / len(xs) if xs else 0.0

    exact = len(modules) <= EXACT_MAX if exact is None else exact
    sampling = None
    if exact:
        configs = all_subsets(modules)
        for s in configs:
            run(s)
        table = {s: v(s) for s in configs}
        point = shapley_values(modules, table)
        w = linear_weights(modules, configs, shapley_values)
        wb = linear_weights(modules, configs, banzhaf_values)
        bz_point = banzhaf_values(modules, table)
    else:
        estimates = shapley_monte_carlo(modules, v, permutations=permutations, seed=seed, confidence=confidence)
        configs = list(seen)
        table = {s: v(s) for s in configs}
        w = _sampled_weights(modules, _orders(modules, permutations, seed), configs)
        point = {m: estimates[m].value for m in modules}
        sampling = {m: Interval(e.value, e.low, e.high) for m, e in estimates.items()}
        wb = bz_point = None
    x = np.array([seen[s] for s in configs]).T              # tasks x configurations
    n_tasks = x.shape[0]
    if n_tasks:
        low, high = bootstrap(x, w, resamples=resamples, confidence=confidence, seed=seed)
    else:
        low = high = np.zeros(len(modules))
    shapley = {m: Interval(point[m], _clean(low[j]), _clean(high[j])) for j, m in enumerate(modules)}
    banzhaf = None
    if wb is not None:
        blow, bhigh = bootstrap(x, wb, resamples=resamples, confidence=confidence, seed=seed) if n_tasks else (low, high)
        banzhaf = {m: Interval(bz_point[m], _clean(blow[j]), _clean(bhigh[j])) for j, m in enumerate(modules)}
    best = max(table.items(), key=lambda kv: (kv[1], -len(kv[0]), [-i for i in sorted(map(modules.index, kv[0]))]))
    chosen = frozenset(m for m in modules if point[m] > 0)
    predicted = (chosen, v(frozenset()) + sum(point[m] for m in chosen), v(chosen))
    table = {s: v(s) for s in seen}
    return Attribution(modules, "exact" if exact else "sampled", n_tasks, len(seen), table, shapley, banzhaf,
                       best, predicted, sampling, None if exact else permutations, dict(seen))


def ranking_consistency(phi_by_default: Mapping[Any, Mapping[Any, Mapping[str, float]]],
                        modules: Sequence[str]) -> dict[str, float | None]:
    """CapaBench's ranking consistency, per module, between two default models.

    ``phi_by_default[D][T][m]`` is module m's Shapley value for test model T under default model D (two
    defaults D1, D2). For module m, the test models are ranked by phi_m under D1 and under D2; the rate
    is the share of unordered pairs {T1, T2} of test models (those measured under both defaults) that the
    two rankings order the same way: sign(phi_m^D1(T1) - phi_m^D1(T2)) = sign(phi_m^D2(T1) - phi_m^D2(T2)),
    a tie agreeing only with a tie (``shapley.pairwise_consistency``). None with fewer than two test models.
    """
    defaults = list(phi_by_default)
    if len(defaults) != 2:
        raise ValueError(f"ranking consistency compares two default models, got {len(defaults)}")
    a, b = (phi_by_default[d] for d in defaults)
    return {m: pairwise_consistency({t: phi[m] for t, phi in a.items()}, {t: phi[m] for t, phi in b.items()})
            for m in modules}


__all__ = ["EXACT_MAX", "Attribution", "Interval", "all_subsets", "attribute", "bootstrap", "linear_weights",
           "ranking_consistency"]
