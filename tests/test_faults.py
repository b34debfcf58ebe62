"""Injected tool faults: seeded and deterministic, above the cache, surfacing as ToolErrors;
generation under 10 % faults completes, records every reason, and resumes without faults."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.cache import canonical_json
from pipeline.config import ConfigError, load_settings
from pipeline.tools.errors import MalformedResponse, ServiceFailure, ToolError, ToolTimeout
from pipeline.tools.faults import FaultInjector, fault_scope, parse_faults
from pipeline.tools.registry import Toolbox, check_response, noting_failures

GEOCODE = "maps_geocode"
WIKI = "https://en.wikipedia.org/wiki/"


def _toolbox(tmp_path: Path, faults: str | None, cache: str = "cache.sqlite") -> Toolbox:
    return Toolbox(load_settings(env={}, cache_path=tmp_path / cache, faults=faults))


def _args_that_fault(injector: FaultInjector, kind: str | None, addresses=None) -> dict:
    """A geocode call the injector faults with ``kind`` (None: does not fault)."""
    for address in addresses or (f"{n} Main Street" for n in range(10_000)):
        args = {"address": address}
        if injector.decide(GEOCODE, args)[0] == kind:
            return args
    raise AssertionError(f"no {kind} fault in the calls tried")


PLACES = ["Ulm", "Paris", "Berlin", "London", "Madrid", "Rome", "Vienna", "Prague", "Lisbon", "Oslo"]


# ---- the spec ---------------------------------------------------------------------------------
def test_spec_parses_and_bad_specs_are_config_errors():
    spec = parse_faults("rate=0.25,seed=7,kinds=error+timeout,timeout_ms=1,retries=2,tools=maps_geocode")
    assert (spec.rate, spec.seed, spec.kinds, spec.timeout_ms, spec.retries, spec.tools) == \
        (0.25, 7, ("error", "timeout"), 1.0, 2, ("maps_geocode",))
    assert parse_faults("off") is None and parse_faults(None) is None
    assert load_settings(env={"LEGWORK_FAULTS": "rate=0.1,seed=3"}).faults == "rate=0.1,seed=3"
    for bad in ("rate=2", "seed=1", "rate=0.1,kinds=boom", "rate=0.1,speed=3", "rate=x", "rate=0.1,tools=nope"):
        with pytest.raises(ConfigError, match="faults"):
            load_settings(env={}, faults=bad)


# ---- deterministic decisions ------------------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.sampled_from(["address", "q", "x"]), st.text(max_size=8) | st.integers()),
       st.integers(0, 3))
def test_decision_is_a_function_of_seed_tool_args_attempt_and_scope(args, attempt):
    a, b = FaultInjector(parse_faults("rate=0.5,seed=7")), FaultInjector(parse_faults("rate=0.5,seed=7"))
    assert a.decide(GEOCODE, args, attempt) == b.decide(GEOCODE, args, attempt)
    # key order of the arguments does not matter (canonical JSON)
    assert a.decide(GEOCODE, dict(reversed(list(args.items()))), attempt) == a.decide(GEOCODE, args, attempt)


def test_rate_kinds_seed_and_scope():
    injector = FaultInjector(parse_faults("rate=0.1,seed=7"))
    calls = [{"address": f"{n} Main Street"} for n in range(20_000)]
    kinds = Counter(injector.decide(GEOCODE, c)[0] for c in calls)
    assert abs((20_000 - kinds[None]) / 20_000 - 0.1) < 0.01          # the rate holds
    assert all(abs(kinds[k] / 2000 - 0.25) < 0.05 for k in ("error", "timeout", "malformed", "latency"))
    other_seed = FaultInjector(parse_faults("rate=0.1,seed=8"))
    assert [injector.decide(GEOCODE, c) for c in calls[:500]] != [other_seed.decide(GEOCODE, c) for c in calls[:500]]
    with fault_scope("trial-2"):
        scoped = [injector.decide(GEOCODE, c) for c in calls[:500]]
    assert scoped != [injector.decide(GEOCODE, c) for c in calls[:500]]
    only = FaultInjector(parse_faults("rate=1,seed=7,tools=web_search"))
    assert only.decide(GEOCODE, calls[0]) == (None, 0)


# ---- faults through the toolbox ---------------------------------------------------------------
@pytest.mark.parametrize("kind, error", [("error", ServiceFailure), ("timeout", ToolTimeout),
                                         ("malformed", MalformedResponse)])
def test_faults_raise_tool_errors_and_are_never_recorded(tmp_path, kind, error):
    spec = "rate=0.3,seed=11,timeout_ms=1,retries=0"   # a client that does not retry: the fault reaches the caller
    faulty = _toolbox(tmp_path, spec)
    args = _args_that_fault(faulty.faults, kind)
    with pytest.raises(error) as caught:
        faulty.call(GEOCODE, args)
    assert isinstance(caught.value, ToolError)
    assert faulty.faults.counts[kind] == 1
    assert faulty.call(GEOCODE, _args_that_fault(faulty.faults, None, PLACES)).ok  # the others answer
    clean = _toolbox(tmp_path, None)
    answer = clean.call(GEOCODE, args)
    assert "injected fault" not in answer.response_json
    # a malformed response is corrupted above the cache: the clean one was recorded
    assert answer.served_from == ("cache" if kind == "malformed" else "computed")
    records = clean.cache._connect().execute("SELECT response FROM records").fetchall()
    assert records and all("injected fault" not in r[0] for r in records)
    for (response,) in records:
        check_response(GEOCODE, response)


def test_latency_answers_and_retries_ride_out_faults(tmp_path):
    slow = _toolbox(tmp_path, "rate=0.5,seed=11,latency_ms=1,kinds=latency")
    args = _args_that_fault(slow.faults, "latency", PLACES)
    assert slow.call(GEOCODE, args).ok and slow.faults.counts["latency"] == 1
    retrying = _toolbox(tmp_path, "rate=0.5,seed=11,timeout_ms=1,kinds=error+timeout,retries=5")
    flaky = next({"address": p} for p in PLACES if retrying.faults.decide(GEOCODE, {"address": p})[0]
                 and not retrying.faults.decide(GEOCODE, {"address": p}, 1)[0])
    assert retrying.call(GEOCODE, flaky).ok                       # attempt 0 faults, attempt 1 answers
    assert sum(retrying.faults.counts.values()) == 1
    once = _toolbox(tmp_path, "rate=0.5,seed=11,timeout_ms=1,kinds=error+timeout,retries=0")
    with pytest.raises((ServiceFailure, ToolTimeout)):            # without retries the same call fails
        once.call(GEOCODE, flaky)
    client = _toolbox(tmp_path, "rate=0.5,seed=11,timeout_ms=1,kinds=error+timeout")
    assert client.call(GEOCODE, flaky).ok                         # the client's own retries (tool_retries) by default


def test_the_client_retries_transient_failures_with_backoff(tmp_path, monkeypatch):
    """A transient failure (the kinds named in errors.TRANSIENT_FAILURES) is retried tool_retries
    times with exponential backoff before it reaches the caller; injected faults back off by the
    spec's backoff_ms (0: no real sleep); every failed try is noted with its outcome."""
    from pipeline.tools import registry

    waits: list[float] = []
    monkeypatch.setattr(registry.time, "sleep", waits.append)
    tries = Counter()

    def flaky(args, ctx):      # a service that fails twice, then answers
        tries[args["address"]] += 1
        if tries[args["address"]] <= 2:
            raise ServiceFailure("maps_geocode: HTTP 503")
        return {"lat": 1.0, "lon": 2.0, "provenance": "offline-data", "source": "test"}
    registry._load_backends()
    monkeypatch.setitem(registry._IMPLEMENTATIONS, (GEOCODE, "offline"), flaky)
    box = Toolbox(load_settings(env={}, cache_path=tmp_path / "c.sqlite", tool_backoff_s=0.25))
    with registry.noting_failures() as noted:
        assert box.call(GEOCODE, {"address": "Nowhere"}).ok
    assert waits == [0.25, 0.5] and [n["outcome"] for n in noted] == ["retried", "retried"]
    waits.clear()
    stingy = Toolbox(load_settings(env={}, cache_path=tmp_path / "c.sqlite", tool_retries=1, tool_backoff_s=0.25))
    with registry.noting_failures() as noted, pytest.raises(ServiceFailure):
        stingy.call(GEOCODE, {"address": "Elsewhere"})
    assert waits == [0.25] and [n["outcome"] for n in noted] == ["retried", "gave up"]
    # injected faults: no sleep by default, backoff_ms when asked for
    monkeypatch.setitem(registry._IMPLEMENTATIONS, (GEOCODE, "offline"),
                        lambda args, ctx: {"lat": 1.0, "provenance": "offline-data", "source": "test"})
    for spec, expected in (("rate=1,seed=1,kinds=error,retries=2", []),
                           ("rate=1,seed=1,kinds=error,retries=2,backoff_ms=2", [0.002, 0.004])):
        waits.clear()
        with pytest.raises(ServiceFailure):
            _toolbox(tmp_path, spec).call(GEOCODE, {"address": "Ulm"})
        assert waits == expected, spec


@pytest.mark.parametrize("kind", ["error", "timeout", "malformed"])
def test_a_failed_probe_makes_the_fact_unusable_not_the_leg(tmp_path, kind):
    """Plan probes every candidate fact with a tool call; the service failing one of them drops that
    fact (the leg plans from the others) instead of rejecting the leg."""
    from flows.generate import GenerationParams, apply_stage, new_leg
    from pipeline.stages.base import StageContext
    from pipeline.stages.build import resolved
    from pipeline.stages.facts import page_facts

    spec = f"rate=1,seed=3,kinds={kind},timeout_ms=1,tools=maps_geocode"
    faulty = StageContext.create(load_settings(env={}, cache_path=tmp_path / "f.sqlite", faults=spec))
    clean = StageContext.create(load_settings(env={}, cache_path=tmp_path / "c.sqlite"))
    places = next(facts for facts in (
        [f for f in page_facts(clean.page(t), ("infobox",)) if f.role == "place"]
        for t in clean.store.titles()[:400] if clean.page(t) is not None) if any(resolved(f, clean) for f in facts))
    assert all(resolved(f, faulty) is None for f in places)
    assert faulty.toolbox.faults.counts[kind] >= len(places)
    with noting_failures() as noted:
        assert resolved(places[0], faulty) is None
    assert noted and "unusable for this attempt" in noted[-1]["outcome"] and noted[-1]["tool"] in spec
    if kind != "error":
        return   # the plan below depends only on the probes returning None, checked above for every kind
    params = GenerationParams(level="medium", variant="linear", count=30, seed=2)
    legs = [leg for leg, why in apply_stage("crawl", [new_leg(params, slot, 0) for slot in range(30)], faulty)
            if why is None]
    results = apply_stage("plan", legs, faulty)
    assert not any(why and "injected fault" in why.reason for _, why in results)   # no fault rejects a leg
    planned = [leg for leg, why in results if why is None]
    assert planned, "no leg planned while every geocode failed"
    # each planned leg records the facts its failed probes cost it
    lost = [f for leg in planned for f in leg.metadata.get("tool_failures", []) if "unusable" in f["outcome"]]
    assert lost and all(f["stage"] == "plan" and "injected fault" in f["error"] for f in lost)


@pytest.mark.parametrize("text, why", [("{\"lat\": 1", "not JSON"), ("[1, 2]", "not an object"),
                                       ("<html>502</html>", "not JSON"), ('{"lat": 1}', "provenance"),
                                       ('{"error": 3, "provenance": "snapshot"}', "message")])
def test_response_check_catches_malformed_text(text, why):
    with pytest.raises(MalformedResponse, match=why):
        check_response(GEOCODE, text)
    assert check_response(GEOCODE, canonical_json({"lat": 1, "provenance": "offline-data"}))["lat"] == 1


# ---- generation under faults ----------------------------------------------------------------------
def _generate(out: Path, cache: Path, faults: str | None, count: int = 100) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "LEGWORK_FAULTS"}
    cmd = [sys.executable, "-m", "pipeline.generate", "--level", "easy", "--variant", "linear", "--count", str(count),
           "--seed", "3", "--task-runner", "local", "--out", str(out), "--cache", str(cache), "--quiet"]
    if faults:
        cmd += ["--faults", faults]
    return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600, env=env)


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


# slow: 8-11 s of two CLI generations computing every value anew (faults keep nothing); the default run keeps the
# parts: test_a_failed_probe_makes_the_fact_unusable_not_the_leg, test_faults_raise_tool_errors_and_are_never_recorded,
# test_faults_give_the_same_artifacts_with_one_or_two_threads and test_legs.py's resume test
@pytest.mark.parametrize("count", [pytest.param(20, marks=pytest.mark.slow), pytest.param(100, marks=pytest.mark.slow)])
def test_legs_under_10_percent_faults_then_resumed_without(tmp_path, count):
    """20 legs (about 10 s; at least 2 of them meet a fault) and the 100 the issue asks for (about 45 s),
    both with -m slow."""
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    done = _generate(out, cache, "rate=0.1,seed=7,latency_ms=1,timeout_ms=1", count)
    assert done.returncode == 0 or "generation incomplete" in done.stderr, done.stderr[-2000:]
    for path in out.rglob("*.parquet"):                          # every artifact reads back
        pq.read_table(path)
    rejected = _rows(out / "rejected.parquet")
    assert rejected and all(r["reason"] and r["status"] == "rejected" for r in rejected)
    # the client retries what faults, and a fault that outlasts the retries costs a fact or a stop:
    # either way every leg that met one keeps it in its record, accepted or rejected
    met = [r for r in _rows(out / "legs.parquet") + rejected if json.loads(r["leg_json"])["metadata"].get("tool_failures")]
    assert len(met) >= count // 10, Counter(r["reason"][:60] for r in rejected)
    with sqlite3.connect(cache) as db:                             # no fault was recorded
        assert not any("injected fault" in r for (r,) in db.execute("SELECT response FROM records"))
    # a crash after round 0's pre-validation: drop everything later, resume with faults off
    round0 = out / "artifacts" / "round-00"
    later = [p for p in round0.glob("*.parquet") if int(p.name.split("-")[0]) > 4]
    for path in later + [out / "legs.parquet", out / "rejected.parquet"]:
        path.unlink()
    for folder in (out / "artifacts").glob("round-*"):
        if folder != round0:
            shutil.rmtree(folder)
    kept = (round0 / "4-prevalidate.parquet").read_bytes()
    resumed = _generate(out, cache, None, count)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert (round0 / "4-prevalidate.parquet").read_bytes() == kept  # resumed, not redone
    legs = _rows(out / "legs.parquet")
    assert len(legs) == count and len({r["leg_id"] for r in legs}) == count
    assert json.loads((out / "run.json").read_text())["params"]["count"] == count


@pytest.mark.slow
def test_hard_dag_under_20_percent_faults_costs_facts_not_legs(tmp_path):
    """Issue 23.5: `--difficulty hard --variant dag --count 4 --faults rate=0.2,seed=3` made 0 legs in
    200 attempts (every probe, dry run and solver call a fault could hit rejected the attempt). The
    client now retries transient failures and a fault that outlasts them costs a fact, not the leg:
    the 4 legs come well within the budget (8 attempts when measured), and every injected fault
    (but latency, which answers) is in the record of the leg that met it. 13-24 s here (slow); the quick
    checks of the same parts: test_the_client_retries_transient_failures_with_backoff and
    test_a_failed_probe_makes_the_fact_unusable_not_the_leg."""
    from flows.generate import GenerationParams, local_map_stage, run_generation
    from pipeline.stages.base import STAGES, StageContext

    ctx = StageContext.create(load_settings(env={}, cache_path=tmp_path / "c.sqlite", faults="rate=0.2,seed=3"))
    result = run_generation(GenerationParams(level="hard", variant="dag", count=4, seed=0), tmp_path / "run",
                            ctx.settings, local_map_stage(ctx))
    assert len(result.accepted) == 4 and result.attempts <= 40, result.attempts
    counts = ctx.toolbox.faults.counts
    recorded = [f for leg in result.accepted for f in leg.metadata.get("tool_failures", [])]
    recorded += [f for r in result.rejected for f in json.loads(r["leg_json"])["metadata"].get("tool_failures", [])]
    assert len(recorded) == sum(n for kind, n in counts.items() if kind != "latency") > 0
    assert {f["stage"] for f in recorded} <= set(STAGES) and all(f["outcome"] for f in recorded)


def test_faults_give_the_same_artifacts_with_one_or_two_threads(tmp_path):
    from flows.generate import GenerationParams, local_map_stage, run_generation
    from pipeline.stages.base import StageContext

    params = GenerationParams(level="easy", variant="linear", count=12, seed=5, batch_size=2)
    outs = []
    for workers in (1, 2):
        ctx = StageContext.create(load_settings(env={}, cache_path=tmp_path / f"c{workers}.sqlite",
                                                faults="rate=0.15,seed=7,latency_ms=1,timeout_ms=1"))
        run_generation(params, tmp_path / f"w{workers}", ctx.settings, local_map_stage(ctx, workers))
        assert sum(ctx.toolbox.faults.counts.values()) > 0
        outs.append(tmp_path / f"w{workers}")
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*.parquet"))
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*.parquet"))
    for rel in files:
        assert _rows(outs[0] / rel) == _rows(outs[1] / rel), rel


def test_race_oracle_meets_faults_per_trial(tmp_path, monkeypatch):
    """--faults reaches the race: the oracle's tool log shows the injected failures; without it, none."""
    from pipeline.export.aar import write_aar_dir
    from pipeline.model import Leg, Stop, ToolStep
    from pipeline.race import main as race_main

    def small_leg() -> Leg:
        code = {"code": "print(1181 * 2)"}
        stops = [Stop(0, "route_info", "a year", page_url=WIKI + "Ulm", value=1181, value_type="number"),
                 Stop(1, "roadblock", "a computation", depends_on=[0], value=2362, value_type="number",
                      tool_chain=[ToolStep("python_execute_code", code, "stdout", "stdout")]),
                 Stop(2, "finish_line", "final", depends_on=[1], expression="s1 % 10", value=2, value_type="number")]
        return Leg("race-1", "easy", "linear", 1, "Ulm", WIKI + "Ulm", stops, passcode=2)

    monkeypatch.delenv("LEGWORK_FAULTS", raising=False)
    monkeypatch.setenv("LEGWORK_CACHE", str(tmp_path / "cache.sqlite"))
    write_aar_dir([small_leg()], tmp_path / "legs")
    logs = {}
    for name, extra in (("faulty", ["--faults", "rate=1,seed=1,kinds=error"]), ("clean", [])):
        assert race_main(["--legs", str(tmp_path / "legs"), "--agent", "oracle", "--out", str(tmp_path / name),
                          *extra]) == 0
        [log] = (tmp_path / name).glob("*/tool_log.jsonl")
        logs[name] = [json.loads(line) for line in log.read_text().splitlines()]
    assert logs["faulty"] and all(not e["success"] and "ServiceFailure" in e["result_preview"]
                                  for e in logs["faulty"])
    assert [e["tool"] for e in logs["clean"]] == [e["tool"] for e in logs["faulty"]]
    assert not any("injected fault" in e["result_preview"] for e in logs["clean"])
    assert logs["clean"][-1]["success"] and "2362" in logs["clean"][-1]["result_preview"]
