"""Time scoring of 7,000 synthetic trials (golden judge) and print the figure.

Usage: python benchmarks/score.py [--trials 7000]
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.model import Leg, Stop, ToolStep, TraceEntry
from pipeline.scoring import aggregate, score_trials
from pipeline.scoring.trials import ToolCall, Trial

W = "https://en.wikipedia.org/wiki/"


def synthetic_leg(i: int, rng: random.Random) -> Leg:
    stops, trace = [], []
    n_pages = rng.randint(3, 12)
    for k in range(n_pages):
        stops.append(Stop(len(stops), "route_info", "fact", page_url=f"{W}Page_{i}_{k}", value=rng.randint(1, 99999),
                          value_type="number"))
        trace.append(TraceEntry(len(stops) - 1, 0, "fetch_webpage", {"url": stops[-1].page_url}, "{}", "snapshot",
                                "computed", stops[-1].value))
        if rng.random() < 0.4:
            idx = len(stops)
            stops.append(Stop(idx, "roadblock", "elevation", depends_on=[idx - 1],
                              tool_chain=[ToolStep("maps_geocode", {"address": f"Place {i} {k}"}, "coords", ""),
                                          ToolStep("maps_elevation", {"locations": {"$step": 0, "path": ""}},
                                                   "elevation_m", "elevation_m")],
                              value=rng.randint(0, 3000), value_type="number"))
            lat, lng = rng.uniform(-60, 60), rng.uniform(-170, 170)
            trace.append(TraceEntry(idx, 0, "maps_geocode", {"address": f"Place {i} {k}"}, "{}", "offline-data",
                                    "computed", {"lat": lat, "lng": lng}))
            trace.append(TraceEntry(idx, 1, "maps_elevation", {"locations": {"lat": lat, "lng": lng}}, "{}",
                                    "offline-data", "computed", stops[-1].value))
    stops.append(Stop(len(stops), "finish_line", "final", expression="s0 % 10", value=stops[0].value % 10))
    return Leg(f"bench-{i}", rng.choice(["easy", "medium", "hard", "extreme"]), rng.choice(["linear", "dag"]), i,
               "x", stops[0].page_url, stops, passcode=stops[-1].value, trace=trace)


def synthetic_trial(leg: Leg, j: int, rng: random.Random) -> Trial:
    calls = []
    for t in leg.trace:
        if rng.random() < 0.8:
            preview = f"... value {t.value} ..." if not isinstance(t.value, dict) else str(t.value)
            calls.append(ToolCall(t.tool, t.args, True, preview * 20, 200, None, t.args.get("url")))
        if rng.random() < 0.3:
            calls.append(ToolCall("web_search", {"query": f"noise {j}"}, True, "lorem ipsum 12 345 " * 30, 500))
    answer = str(leg.passcode if rng.random() < 0.4 else rng.randrange(10))
    return Trial(f"t{j}", leg.leg_id, answer, calls, agent=rng.choice(["a", "b"]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=7000)
    ap.add_argument("--legs", type=int, default=700)
    a = ap.parse_args()
    rng = random.Random(0)
    legs = [synthetic_leg(i, rng) for i in range(a.legs)]
    trials = [synthetic_trial(legs[j % len(legs)], j, rng) for j in range(a.trials)]
    n_calls = sum(len(t.calls) for t in trials)
    start = time.perf_counter()
    scores = score_trials(legs, trials)
    report = aggregate(scores)
    elapsed = time.perf_counter() - start
    print(f"scored {len(trials)} trials ({n_calls} tool calls, {len(legs)} legs) in {elapsed:.2f} s "
          f"({1000 * elapsed / len(trials):.2f} ms/trial); FA={report['overall']['fa']:.3f} "
          f"PVR={report['overall']['pvr']:.3f} RCR={report['overall']['rcr']:.3f}")


if __name__ == "__main__":
    main()
