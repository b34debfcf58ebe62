"""Defects blind race 38 (benchmarks/blind_race/race-171717) found, each checked where it was fixed."""
from __future__ import annotations


def test_a_written_list_keeps_its_order():
    """R13: the calculator asked "[largest_prime_factor(n), digit_sum(n), bit_count(n), reverse_digits(n)]"
    for n = 632702 answered [13, 20, 1051, 207236], the figures sorted; the racer saw it and asked each
    alone. A list the expression writes keeps the writer's order; a function's unordered results (solve's
    roots, a set) are still sorted, so one input prints one text."""
    from pipeline.mathtools.safe_eval import calculate
    written = calculate("[largest_prime_factor(n), digit_sum(n), bit_count(n), reverse_digits(n)]", variables={"n": 632702})
    assert written["result"] == "[1051, 20, 13, 207236]"
    assert calculate("[3, 1, 2]")["numeric"] == [3.0, 1.0, 2.0]
    assert calculate("solve(x**2 - 4, x)")["result"] == "[-2, 2]"
    assert calculate("(5, 2)")["result"] == "(5, 2)"
