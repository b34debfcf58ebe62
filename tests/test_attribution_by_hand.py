"""Module attribution (``pipeline.scoring.attribution``) on games small enough to work out by hand.

Shapley value of i: its marginal contribution v(S+i) - v(S) averaged over all orders; Banzhaf: the
plain average over the 2^(n-1) sets S without i. For the unanimity game on {a, b, c} (1 with all
three, else 0) that is 1/3 each (Shapley: i is last in a third of the orders) and 1/4 each
(Banzhaf: one S of four); an additive term x[i in S] adds x to i's value in both. The bootstrap
resamples tasks: with every task alike, each resample gives the point value; with two tasks each
resample of two draws is (t1, t1), (t1, t2) or (t2, t2), the extremes a quarter of the time each,
so the 95 % interval runs from the one task's value to the other's.
"""
from __future__ import annotations

from collections.abc import Mapping
from statistics import NormalDist

import numpy as np
import pytest

from pipeline.scoring.attribution import (
    EXACT_MAX,
    Attribution,
    Interval,
    _clean,
    _orders,
    _sampled_weights,
    all_subsets,
    attribute,
    bootstrap,
    linear_weights,
    ranking_consistency,
)
from pipeline.scoring.shapley import banzhaf_values, shapley_values

ABC = ("a", "b", "c")


def per_task(*games):
    """S -> one outcome per task, task t scoring ``games[t](S)``."""
    return lambda s: [g(s) for g in games]


def unanimity_plus_a(bonus: float):
    return lambda s: float(set(ABC) <= s) + bonus * ("a" in s)


def test_exact_values_and_intervals_by_hand():
    # task 1: unanimity + 1 for a; task 2: unanimity alone; v = unanimity + 0.5 [a in S]
    attr = attribute(ABC, per_task(unanimity_plus_a(1.0), unanimity_plus_a(0.0)), seed=3)
    assert attr.method == "exact" and attr.n_tasks == 2 and attr.configurations_run == 8
    assert attr.permutations is None and attr.sampling is None
    assert {m: iv.value for m, iv in attr.shapley.items()} == pytest.approx({"a": 1 / 3 + 0.5, "b": 1 / 3,
                                                                             "c": 1 / 3})
    assert {m: iv.value for m, iv in attr.banzhaf.items()} == pytest.approx({"a": 1 / 4 + 0.5, "b": 1 / 4,
                                                                             "c": 1 / 4})
    # per task: Shapley a = 4/3 (task 1) or 1/3 (task 2); b and c 1/3 in both; Banzhaf a 5/4 or 1/4
    assert (attr.shapley["a"].low, attr.shapley["a"].high) == pytest.approx((1 / 3, 4 / 3))
    assert (attr.shapley["b"].low, attr.shapley["b"].high) == pytest.approx((1 / 3, 1 / 3))
    assert (attr.banzhaf["a"].low, attr.banzhaf["a"].high) == pytest.approx((1 / 4, 5 / 4))
    assert (attr.banzhaf["c"].low, attr.banzhaf["c"].high) == pytest.approx((1 / 4, 1 / 4))
    assert attr.table[frozenset()] == 0.0 and attr.table[frozenset("a")] == 0.5
    assert attr.table[frozenset(ABC)] == 1.5 and attr.table[frozenset("bc")] == 0.0
    assert attr.outcomes[frozenset("ab")] == [1.0, 0.0]
    assert attr.best == (frozenset(ABC), 1.5)
    # every module positive: the prediction is v(none) + all values = v(all) (efficiency), as measured
    assert attr.predicted[0] == frozenset(ABC) and attr.predicted[1:] == pytest.approx((1.5, 1.5))
    # at confidence 0 both ends are the median of the resamples: 1/3, 5/6 or 4/3 a quarter, half, a quarter
    # of the time, so 5/6
    half = attribute(ABC, per_task(unanimity_plus_a(1.0), unanimity_plus_a(0.0)), confidence=0.0)
    assert (half.shapley["a"].low, half.shapley["a"].high) == pytest.approx((5 / 6, 5 / 6))


def test_best_and_predicted_combination_by_hand():
    # v = 1/4 + 1/2 [p] - 1/4 [r] + 1/8 [p and r]; q is a null player
    def v(s):
        return 0.25 + 0.5 * ("p" in s) - 0.25 * ("r" in s) + 0.125 * ("p" in s and "r" in s)
    attr = attribute(("p", "q", "r"), per_task(v))
    phi = {m: iv.value for m, iv in attr.shapley.items()}
    assert phi == pytest.approx({"p": 0.5 + 0.0625, "q": 0.0, "r": -0.25 + 0.0625})
    assert phi["q"] == 0.0
    assert attr.shapley["p"].low == attr.shapley["p"].high == pytest.approx(0.5625)   # one task
    # v: {} .25, p .75, q .25, r 0, pq .75, pr .625, qr 0, pqr .625: best .75, the smaller set {p}
    assert attr.best == (frozenset("p"), 0.75)
    # predicted: the positive ones ({p}; q's 0 is not positive), v({}) + 0.5625; measured v({p}) = 0.75
    assert attr.predicted[0] == frozenset("p") and attr.predicted[1:] == pytest.approx((0.8125, 0.75))


def test_best_ties_go_to_fewer_then_earlier_modules():
    flat = {s: [1.0] for s in all_subsets(("x", "y"))}
    assert attribute(("x", "y"), flat).best == (frozenset(), 1.0)
    two = {frozenset(): [0.0], frozenset("x"): [1.0], frozenset("y"): [1.0], frozenset("xy"): [1.0]}
    assert attribute(("x", "y"), two).best == (frozenset("x"), 1.0)
    assert attribute(("y", "x"), two).best == (frozenset("y"), 1.0)
    three = {s: [float(len(s) == 2)] for s in all_subsets(("x", "y", "z"))}
    assert attribute(("x", "y", "z"), three).best == (frozenset("xy"), 1.0)
    assert attribute(("z", "y", "x"), three).best == (frozenset("yz"), 1.0)
    assert attribute(("y", "z", "x"), three).best == (frozenset("yz"), 1.0)


def test_outcomes_as_a_mapping_or_a_callable():
    table = {frozenset(): [0, 0], frozenset("a"): [1, 0], frozenset("b"): [0, 0], frozenset("ab"): [1, 1]}

    class Table(Mapping):          # a mapping that is callable too: read as a mapping
        def __getitem__(self, s):
            return table[s]

        def __iter__(self):
            return iter(table)

        def __len__(self):
            return len(table)

        def __call__(self, s):
            raise AssertionError("a mapping is read, not called")

    # v: {} 0, a 1/2, b 0, ab 1 -> a: (1/2 + 1)/2 = 3/4, b: (0 + 1/2)/2 = 1/4
    for outcomes in (table, Table(), table.__getitem__):
        attr = attribute(("a", "b"), outcomes)
        assert attr.shapley["a"].value == pytest.approx(0.75) and attr.shapley["b"].value == pytest.approx(0.25)
        assert attr.outcomes[frozenset("a")] == [1.0, 0.0] and isinstance(attr.outcomes[frozenset("a")][0], float)


def test_each_configuration_runs_once_and_the_same_tasks():
    asked = []

    def outcomes(s):
        asked.append(s)
        return [1.0] * (3 if s == frozenset("b") else 2)
    with pytest.raises(ValueError, match=r"^configuration \['b'\] has 3 outcomes, others 2: every configuration "
                                         r"runs the same tasks$"):
        attribute(("a", "b"), outcomes)
    # the odd one second (compared with the first), then the rest agreeing with the first
    odd = {frozenset(): [1.0], frozenset("a"): [1.0, 1.0], frozenset("b"): [1.0], frozenset("ab"): [1.0]}
    with pytest.raises(ValueError, match=r"^configuration \['a'\] has 2 outcomes, others 1: every"):
        attribute(("a", "b"), odd)
    asked.clear()
    attr = attribute(("a", "b"), lambda s: asked.append(s) or [1.0, 0.0])
    assert sorted(map(sorted, asked)) == [[], ["a"], ["a", "b"], ["b"]]       # 4 configurations, once each
    assert attr.configurations_run == 4


def test_no_tasks():
    attr = attribute(("a", "b"), lambda s: [])
    assert attr.n_tasks == 0 and attr.table == {s: 0.0 for s in all_subsets(("a", "b"))}
    for values in (attr.shapley, attr.banzhaf):
        assert {m: (iv.value, iv.low, iv.high) for m, iv in values.items()} == {"a": (0, 0, 0), "b": (0, 0, 0)}


def varied(s):
    """Twenty tasks whose outcomes differ from task to task and configuration to configuration (all
    distinct, so that no two resamples tie)."""
    code = sum(1 << "abcde".index(m) for m in s)
    return [(0.6180339887 * (t + 1) * (code + 3) + 0.4142135624 * code * code) % 1 for t in range(20)]


def test_defaults_and_seeds():
    """Defaults: 1000 resamples, seed 0, 95 %; 200 permutations when sampled. The same seed gives the same
    intervals (the draws are seeded), in the Shapley and the Banzhaf values alike."""
    def figures(attr):
        return {m: (iv.low, iv.high) for m, iv in attr.shapley.items()}, \
            {m: (iv.low, iv.high) for m, iv in (attr.banzhaf or {}).items()}
    default = attribute(ABC, varied)
    assert figures(default) == figures(attribute(ABC, varied, resamples=1000, seed=0, confidence=0.95))
    assert figures(attribute(ABC, varied, seed=4)) == figures(attribute(ABC, varied, seed=4))
    assert default.shapley["a"].low < default.shapley["a"].value < default.shapley["a"].high
    five = attribute("abcde", varied, resamples=50)
    assert five.method == "sampled" and five.permutations == 200
    assert figures(five) == figures(attribute("abcde", varied, resamples=50, permutations=200, seed=0))
    # the sampler's own interval: value -+ z stderr, z = 0.674 at 50 %, 1.960 at 95 % (same draws, same stderr)
    half = attribute("abcde", varied, resamples=10, permutations=30, confidence=0.5)
    full = attribute("abcde", varied, resamples=10, permutations=30)
    for m in "abcde":
        assert half.sampling[m].value == full.sampling[m].value and half.sampling[m].high > half.sampling[m].value
        assert (half.sampling[m].high - half.sampling[m].value) / (full.sampling[m].high - full.sampling[m].value) \
            == pytest.approx(NormalDist().inv_cdf(0.75) / NormalDist().inv_cdf(0.975))


def test_exact_up_to_four_modules_then_sampled():
    assert EXACT_MAX == 4
    four = attribute("abcd", lambda s: [float(len(s))], resamples=10)
    assert four.method == "exact" and four.configurations_run == 16 and four.banzhaf is not None
    assert {m: iv.value for m, iv in four.shapley.items()} == pytest.approx(dict.fromkeys("abcd", 1.0))
    five = attribute("abcde", lambda s: [float(len(s))], permutations=3, resamples=10)
    assert five.method == "sampled" and five.permutations == 3 and five.banzhaf is None
    # additive: every order gives each module 1 exactly, so the sampler's interval has no width
    assert {m: (iv.value, iv.low, iv.high) for m, iv in five.sampling.items()} == dict.fromkeys("abcde", (1, 1, 1))
    # an order visits 6 configurations, the empty and the full set among them: three visit 6 to 2 + 3 * 4
    assert 6 <= five.configurations_run <= 14 and {frozenset(), frozenset("abcde")} <= set(five.table)
    forced = attribute("ab", lambda s: [float(len(s))], exact=False, permutations=2, resamples=10)
    assert forced.method == "sampled"
    assert attribute("abcde", lambda s: [1.0], exact=True, resamples=10).configurations_run == 32


def test_sampled_bootstrap_is_the_samplers_own_map():
    # the unanimity game on {a, b}: in every order the second module gets 1, so a + b = 1 exactly; with
    # all tasks alike the bootstrap's every resample is the sampler's estimate itself
    game = per_task(*[lambda s: float({"a", "b"} <= s)] * 3)
    attr = attribute(("a", "b"), game, exact=False, permutations=7, seed=5)
    a, b = attr.shapley["a"], attr.shapley["b"]
    assert a.value + b.value == pytest.approx(1.0) and round(a.value * 7) == pytest.approx(a.value * 7)
    for m in "ab":
        iv = attr.shapley[m]
        assert iv.low == pytest.approx(iv.value) and iv.high == pytest.approx(iv.value)
        assert attr.sampling[m].value == iv.value
    # two tasks that differ (additive: task 1 gives a 1, task 2 gives b 1): every order finds those
    # values, so each module's interval spans its two tasks' values, 0 and 1
    attr = attribute(("a", "b"), per_task(lambda s: float("a" in s), lambda s: float("b" in s)),
                     exact=False, permutations=4)
    assert {m: (iv.value, iv.low, iv.high) for m, iv in attr.shapley.items()} == {"a": (0.5, 0, 1),
                                                                                   "b": (0.5, 0, 1)}


def test_sampled_prediction_runs_the_predicted_configuration():
    # additive, a +1 and b -1: predicted {a}; one order only, so {a} was run by the sampler (a first: 3
    # configurations) or is run for the prediction (b first: 4); either way it is in the table and counted
    runs = set()
    for seed in range(8):
        attr = attribute(("a", "b"), lambda s: [float("a" in s) - float("b" in s)], exact=False, permutations=1,
                         seed=seed)
        assert attr.predicted == (frozenset("a"), 1.0, 1.0)
        assert attr.configurations_run == len(attr.table) == len(attr.outcomes)
        assert frozenset("a") in attr.table and attr.table[frozenset("a")] == 1.0
        runs.add(attr.configurations_run)
    assert runs == {3, 4}                         # both orders came up among the eight seeds


def test_linear_weights_by_hand():
    configs = all_subsets(("a", "b"))
    assert configs == [frozenset(), frozenset("a"), frozenset("b"), frozenset("ab")]
    # phi_a = (v(a) - v()) / 2 + (v(ab) - v(b)) / 2, phi_b likewise
    w = linear_weights(("a", "b"), configs, shapley_values)
    assert w.tolist() == [[-0.5, -0.5], [0.5, -0.5], [-0.5, 0.5], [0.5, 0.5]]
    assert linear_weights(("a", "b"), configs, banzhaf_values).tolist() == w.tolist()
    three = all_subsets(ABC)
    assert [sorted(s) for s in three] == [[], ["a"], ["b"], ["c"], ["a", "b"], ["a", "c"], ["b", "c"],
                                          ["a", "b", "c"]]
    wb = linear_weights(ABC, three, banzhaf_values)
    assert wb[:, 0].tolist() == [-0.25, 0.25, -0.25, -0.25, 0.25, 0.25, -0.25, 0.25]


def test_sampled_weights_and_orders_by_hand():
    configs = all_subsets(("a", "b"))
    w = _sampled_weights(["a", "b"], [["a", "b"]], configs)
    assert w.tolist() == [[-1, 0], [1, -1], [0, 0], [0, 1]]
    w = _sampled_weights(["a", "b"], [["a", "b"], ["b", "a"]], configs)
    assert w.tolist() == [[-0.5, -0.5], [0.5, -0.5], [-0.5, 0.5], [0.5, 0.5]]
    orders = _orders(["a", "b", "c"], 5, 2)
    assert len(orders) == 5 and all(sorted(o) == ["a", "b", "c"] for o in orders)
    assert orders == _orders(["a", "b", "c"], 5, 2) and orders[:3] == _orders(["a", "b", "c"], 3, 2)
    assert _orders(["a", "b", "c"], 0, 2) == []
    assert orders[0] is not orders[1]


def test_bootstrap_by_hand():
    x = np.array([[0.0], [1.0]])                  # two tasks, one configuration, w the identity
    w = np.array([[1.0]])
    low, high = bootstrap(x, w, resamples=400, confidence=0.95, seed=0)
    assert (low.tolist(), high.tolist()) == ([0.0], [1.0])
    low, high = bootstrap(x, w, resamples=400, confidence=0.0, seed=0)
    assert (low.tolist(), high.tolist()) == ([0.5], [0.5])
    # at 40 % the ends are the 30 % and 70 % quantiles, both inside the half of the resamples at 0.5
    low, high = bootstrap(x, w, resamples=4000, confidence=0.4, seed=0)
    assert (low.tolist(), high.tolist()) == ([0.5], [0.5])
    # seeded: the same draws again
    many = np.array([[t % 7 / 7, t % 3 / 3] for t in range(30)])
    first = bootstrap(many, np.array([[1.0], [-1.0]]), resamples=200, confidence=0.9, seed=11)
    again = bootstrap(many, np.array([[1.0], [-1.0]]), resamples=200, confidence=0.9, seed=11)
    assert [a.tolist() for a in first] == [a.tolist() for a in again] and first[0][0] < first[1][0]
    same = np.array([[0.25, 1.0]] * 3)
    low, high = bootstrap(same, np.array([[1.0], [2.0]]), resamples=5, confidence=0.9, seed=1)
    assert (low.tolist(), high.tolist()) == ([2.25], [2.25])


def test_clean_and_interval():
    assert str(_clean(-1e-17)) == "0.0" and _clean(0.1234567890123456) == 0.123456789012
    assert _clean(np.float64(2.5)) == 2.5 and type(_clean(np.float64(2.5))) is float
    assert Interval(0.5, 0.25, 0.75).to_dict() == {"value": 0.5, "low": 0.25, "high": 0.75}


def test_to_dict_by_hand():
    attr = attribute(("b", "a"), {frozenset(): [0.0], frozenset("a"): [1.0], frozenset("b"): [0.0],
                                  frozenset("ab"): [1.0]})
    d = attr.to_dict(str.upper)
    assert d["method"] == "exact" and d["n_tasks"] == 1 and d["configurations_run"] == 4
    assert d["permutations"] is None and d["sampling"] is None
    # sorted by size, then by the modules' order (b before a); names in the modules' order
    assert d["table"] == [{"test_modules": [], "v": 0.0}, {"test_modules": ["B"], "v": 0.0},
                          {"test_modules": ["A"], "v": 1.0}, {"test_modules": ["B", "A"], "v": 1.0}]
    assert d["shapley"] == {"B": {"value": 0.0, "low": 0.0, "high": 0.0}, "A": {"value": 1.0, "low": 1.0, "high": 1.0}}
    assert d["banzhaf"] == d["shapley"]
    assert d["best"] == {"test_modules": ["A"], "v": 1.0}
    assert d["predicted"] == {"test_modules": ["A"], "predicted": 1.0, "measured": 1.0}
    assert d["efficiency"] == {"sum_shapley": 1.0, "v_all_minus_v_none": 1.0}
    # the table in the modules' order whatever order it was filled in
    shuffled = Attribution(["b", "a"], "exact", 1, 4, {frozenset("ab"): 1.0, frozenset("a"): 1.0, frozenset(): 0.0,
                                                       frozenset("b"): 0.0}, {}, None, attr.best, attr.predicted)
    assert shuffled.to_dict()["table"] == attr.to_dict()["table"]
    # predicted and measured apart; v(none) not 0: v(pqr) - v() = 0.625 - 0.25
    def v(s):
        return 0.25 + 0.5 * ("p" in s) - 0.25 * ("r" in s) + 0.125 * ("p" in s and "r" in s)
    pqr = attribute(("p", "q", "r"), per_task(v)).to_dict()
    assert pqr["predicted"] == {"test_modules": ["p"], "predicted": pytest.approx(0.8125), "measured": 0.75}
    assert pqr["efficiency"] == {"sum_shapley": pytest.approx(0.375), "v_all_minus_v_none": 0.375}
    assert attr.to_dict()["best"]["test_modules"] == ["a"]                        # names as they are
    sampled = attribute(("a", "b"), lambda s: [float("a" in s)], exact=False, permutations=2)
    ds = sampled.to_dict()
    assert ds["banzhaf"] is None and ds["permutations"] == 2
    assert ds["sampling"] == {"a": {"value": 1.0, "low": 1.0, "high": 1.0}, "b": {"value": 0.0, "low": 0.0, "high": 0.0}}
    partial = Attribution(["a", "b"], "sampled", 1, 2, {frozenset(): 0.0, frozenset("a"): 1.0}, {}, None,
                          (frozenset("a"), 1.0), (frozenset("a"), 1.0, 1.0))
    assert partial.to_dict()["efficiency"] == {"sum_shapley": 0, "v_all_minus_v_none": None}
    no_empty = Attribution(["a"], "exact", 1, 1, {frozenset("a"): 1.0}, {}, None, (frozenset("a"), 1.0),
                           (frozenset("a"), 1.0, 1.0))
    assert no_empty.to_dict()["efficiency"]["v_all_minus_v_none"] is None
    assert partial.outcomes == {} and partial.sampling is None and partial.permutations is None


def test_ranking_consistency_by_hand():
    # module m: under D1 the test models rank T1 > T2 > T3, under D2 T1 > T3 > T2: pairs (T1,T2), (T1,T3)
    # agree, (T2,T3) does not -> 2/3
    phi = {"D1": {"T1": {"m": 3.0, "n": 1.0}, "T2": {"m": 2.0, "n": 1.0}, "T3": {"m": 1.0, "n": 5.0}},
           "D2": {"T1": {"m": 9.0, "n": 1.0}, "T2": {"m": 0.0, "n": 2.0}, "T3": {"m": 4.0, "n": 5.0}}}
    # n: (T1,T2) tie vs order: no; (T1,T3) 1<5 and 1<5: yes; (T2,T3) 1<5, 2<5: yes -> 2/3
    assert ranking_consistency(phi, ["m", "n"]) == pytest.approx({"m": 2 / 3, "n": 2 / 3})
    phi["D2"]["T2"]["n"] = 1.0
    assert ranking_consistency(phi, ["n"]) == {"n": 1.0}
    assert ranking_consistency({"D1": {"T1": {"m": 1.0}}, "D2": {"T1": {"m": 2.0}}}, ["m"]) == {"m": None}
    for defaults in ({"D1": {}}, {"D1": {}, "D2": {}, "D3": {}}):
        with pytest.raises(ValueError, match=f"^ranking consistency compares two default models, got {len(defaults)}$"):
            ranking_consistency(defaults, ["m"])
