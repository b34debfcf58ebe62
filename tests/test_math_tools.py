"""The calculator and knowledge-search tools, called through the registry (offline backend)."""
import time

import pytest

from pipeline.config import load_settings
from pipeline.mathtools.safe_eval import CalcError, calculate, run_bounded
from pipeline.mathtools.search import load_corpus, search
from pipeline.tools.errors import ToolArgumentError
from pipeline.tools.registry import Toolbox


@pytest.fixture(scope="module")
def toolbox(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache") / "cache.sqlite"
    return Toolbox(load_settings(cache_path=cache, env={}))


@pytest.mark.parametrize("expression, result, numeric", [
    ("2 + 3*4", "14", 14.0),
    ("sqrt(72)", "6*sqrt(2)", 72 ** 0.5),
    ("0.1 + 0.2", "3/10", 0.3),
    ("solve(x**2 - 5*x + 6, x)", "[2, 3]", [2.0, 3.0]),
    ("pi*3**2", "9*pi", 28.274333882308138),
    ("cosd(60)", "1/2", 0.5),
    ("2^10", "1024", 1024.0),
])
def test_calculator_values(toolbox, expression, result, numeric):
    data = toolbox.call("calculator", {"expression": expression}).data
    assert data["result"] == result
    assert data["numeric"] == pytest.approx(numeric)
    assert data["exact"] is True
    assert data["provenance"] == "offline-data" and data["source"].startswith("sympy ")


@pytest.mark.parametrize("expression", [
    "__import__('os').system('true')",
    "().__class__",
    "(1).__class__.__mro__",
    "x.real",
    "9**9**9",
    "(10**100)**1000",
    "factorial(100000)",
    "lambda: 1",
    "[i for i in (1, 2)]",
    "open('/etc/passwd')",
    "eval('1')",
    "solve(x, x, dict=True)",
    "'text'",
    "a[0]",
    "__builtins__",
    "1716 - ()",              # arithmetic on a tuple is refused, not a crash
    "(1, 2)*10**8",           # ... and cannot fill memory
    "binary(7)*10**8",        # ... nor can text a function returns
    "sqrt('x')",              # text reaches only the text functions (sympy would parse it)
    "Max(roman(4), 1)",
    "scrabble('" + "a" * 300 + "')",
    "factorint(10**40)",      # factorising is bounded
    "nextprime(2.5)",
    "weekday('2024-13-01')",
])
def test_calculator_refuses_unsafe_input(toolbox, expression):
    result = toolbox.call("calculator", {"expression": expression})
    assert not result.ok
    assert result.error.startswith("calculator:")


def test_calculator_refuses_long_input(toolbox):
    with pytest.raises(ToolArgumentError):              # the tool schema caps the length
        toolbox.call("calculator", {"expression": "1+" * 400 + "1"})
    with pytest.raises(CalcError, match="longer than"):  # and so does the evaluator itself
        calculate("1+" * 400 + "1")


def test_time_bound_stops_slow_work():
    started = time.monotonic()
    with pytest.raises(CalcError, match="longer than"):
        run_bounded(lambda: time.sleep(5), 0.2)
    assert time.monotonic() - started < 2


def test_corpus_has_enough_complete_points():
    corpus = load_corpus()
    assert len(corpus) >= 200
    assert len({p.id for p in corpus}) == len(corpus)
    assert {p.domain for p in corpus} == {"algebra", "geometry", "number_theory", "combinatorics"}
    assert all(p.title and p.definition and p.formula and p.example for p in corpus)


@pytest.mark.parametrize("query, expected", [
    ("quadratic formula roots", "alg.quadratic-formula"),
    ("hypotenuse of a right triangle from the legs", "geo.pythagorean-theorem"),
    ("volume of a cone", "geo.volume-cone"),
    ("sum of first n terms of a geometric sequence", "alg.geometric-sequence-sum"),
    ("area of triangle given three sides", "geo.herons-formula"),
    ("difference of squares factor", "alg.difference-of-squares"),
    ("change of base logarithm", "alg.change-of-base"),
    ("law of cosines", "geo.law-of-cosines"),
    ("euclidean algorithm gcd remainder", "nt.euclidean-algorithm"),
    ("chinese remainder theorem", "nt.chinese-remainder-theorem"),
    ("inclusion exclusion principle", "cmb.inclusion-exclusion"),
    ("choose a committee from two groups", "cmb.committee-selection"),
    ("number of divisors from the prime factorization", "nt.divisor-count"),
])
def test_search_returns_relevant_points(toolbox, query, expected):
    data = toolbox.call("math_knowledge_search", {"query": query}).data
    ids = [r["id"] for r in data["results"]]
    assert len(ids) == 3 and expected in ids
    assert data["provenance"] == "offline-data" and data["source"] == "legwork knowledge corpus v2"
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)


def test_search_is_deterministic_and_respects_k():
    first = search("area of a circle", 5)
    assert len(first) == 5 and first == search("area of a circle", 5)
    assert search("the of and", 3) == []       # only stopwords: nothing to rank


def test_replay_gives_identical_bytes(tmp_path):
    cache = tmp_path / "cache.sqlite"
    live = Toolbox(load_settings(cache_path=cache, env={}))
    recorded = live.call("calculator", {"expression": "solve(2*x + 1 - 7, x)"})
    replay = Toolbox(load_settings(cache_path=cache, env={}, default_backend="replay"))
    again = replay.call("calculator", {"expression": "solve(2*x + 1 - 7, x)"})
    assert again.response_json == recorded.response_json and again.served_from == "replay"


def test_the_time_limit_hands_an_outer_timer_back_what_remains():
    """pytest-timeout (or any caller) may hold SIGALRM: many fast evaluations must not eat its time."""
    import signal
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(1))
    signal.setitimer(signal.ITIMER_REAL, 100.0)
    try:
        for _ in range(200):
            assert run_bounded(lambda: 1, seconds=2.0) == 1
        left = signal.getitimer(signal.ITIMER_REAL)[0]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not fired and 95.0 < left <= 100.0


# One expression per detour (pipeline/transforms.py): the calculator does every operation a detour asks.
DETOUR_EXPRESSIONS = {
    "next_prime": "nextprime({v})",
    "num_divisors": "divisor_count({v})",
    "sum_prime_factors": "sum_prime_factors({v})",
    "largest_prime_factor": "largest_prime_factor({v})",
    "roman_numeral_letter_count": "roman_letters({v})",
    "binary_1bit_count": "bit_count({v})",
    "digit_reversal": "reverse_digits({v})",
    "digital_root": "digital_root({v})",
    "digit_sum": "digit_sum({v})",
    "day_of_week": "weekday({v!r})",
    "leap_years_to_2000": "leap_years({v}, 2000)",
    "scrabble_score": "scrabble({v!r})",
    "vowel_count": "vowels({v!r})",
    "alpha_position_first_letter": "alpha_position({v!r})",
}
DETOUR_SAMPLES = {
    "number": [2, 4, 12, 97, 360, 1066, 1600, 1900, 1994, 2024, 3999, 65_536, 999_983, 1_234_567, 9_999_991, 10_000_000,
               123_456_789_012, 10 ** 12],
    "date": ["1969-07-20", "2000-02-29", "2012-12-31", "1900-03-01"],
    "text": ["Ulaanbaatar", "Québec", "Zürich Airport", "JFK", "Mount Kilimanjaro", "Reykjavík"],
}


def test_calculator_does_every_detour(toolbox):
    """For each detour of DETOURS, the calculator gives apply_detour's value on sample inputs."""
    from pipeline.transforms import DETOURS, DetourError, apply_detour

    assert set(DETOUR_EXPRESSIONS) == set(DETOURS), "a new detour needs its calculator expression here"
    checked = {name: 0 for name in DETOURS}
    for name, detour in sorted(DETOURS.items()):
        for value in DETOUR_SAMPLES[detour.takes]:
            try:
                expected = apply_detour(name, value)
            except (DetourError, ValueError):
                continue
            expression = DETOUR_EXPRESSIONS[name].format(v=value)
            data = toolbox.call("calculator", {"expression": expression}).data
            assert data.get("result") == str(expected), (name, expression, data)
            checked[name] += 1
    assert all(n >= 3 for n in checked.values()), checked
