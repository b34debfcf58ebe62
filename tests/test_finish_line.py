"""The finish line reduces the values nothing else consumes to one digit, and every one of them
counts: no reduction whose digit one value fixes whatever the others are (a blind racer read passcode
0 off "2240 x ..." without the rest of the leg)."""
from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from pipeline.expressions import REDUCTIONS, choose_reduction, evaluate, reduction_expression


def test_a_product_with_a_factor_ending_in_zero_is_never_the_finish():
    values = {0: 2240, 1: 7, 2: 3}
    for seed in range(40):   # whatever order the kinds are tried in
        kind, expr, y = choose_reduction(random.Random(seed), [0, 1, 2], values)
        assert kind != "product_mod_10", (seed, expr)
        assert 0 <= y <= 9


def test_the_product_is_taken_when_every_factor_counts():
    kinds = {choose_reduction(random.Random(seed), [0, 1], {0: 7, 1: 3})[0] for seed in range(40)}
    assert "product_mod_10" in kinds   # 7 x 3 = 21: 1, and 8 x 3 or 7 x 4 would not be


@given(st.lists(st.integers(0, 10**6), min_size=2, max_size=4), st.integers(0, 10**6))
def test_every_value_changes_the_digit_when_some_reduction_lets_it(numbers, seed):
    stops = list(range(len(numbers)))
    values = dict(enumerate(numbers))
    kind, expr, _ = choose_reduction(random.Random(seed), stops, values)

    def sensitive(e):
        y0 = evaluate(e, values)
        return 0 <= y0 <= 9 and all(evaluate(e, {**values, s: values[s] + 1}) != y0 for s in stops)
    if any(sensitive(reduction_expression(k, stops)) for k in REDUCTIONS if not (len(stops) > 3 and k == "product_mod_10")):
        assert sensitive(expr), (kind, expr, values)
