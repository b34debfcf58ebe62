"""The headline command's wall time with and without Prefect, and where Prefect's time goes.

    python benchmarks/headline.py [--runs 3] [--count 3] [--difficulty extreme]

Times ``python -m pipeline.generate --difficulty extreme --count 3`` (warm cache, median of
--runs) with each task runner: ``local`` (no Prefect), ``thread`` (a Prefect flow on a temporary
server: the default before), ``auto`` (the default now: a Prefect flow only where a Prefect API
is configured), and ``thread`` against an already running server (what a configured API costs).
Then the parts of Prefect's cost: importing it, and starting its temporary server. Prints;
never fails on a time.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--count", type=int, default=3)
    p.add_argument("--difficulty", default="extreme")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="legwork-headline-"))
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(LEGWORK_CACHE=str(tmp / "cache.sqlite"), PREFECT_HOME=str(tmp / "prefect"))

    def generate(runner: str, n: int, env=env) -> float:
        return timed([sys.executable, "-m", "pipeline.generate", "--difficulty", args.difficulty, "--count",
                      str(args.count), "--task-runner", runner, "--out", str(tmp / f"{runner}-{n}"), "--quiet"], env)

    generate("local", -1)   # warm the tool cache and the Prefect database (first migrations)
    generate("thread", -1)
    medians = {}
    for runner in ("local", "thread", "auto"):
        medians[runner] = statistics.median(generate(runner, n) for n in range(args.runs))

    from flows.prefect_api import prefect_environment, temporary_server
    prefect_environment(tmp / "prefect")
    t0 = time.perf_counter()
    with temporary_server() as url:
        server_start = time.perf_counter() - t0
        configured = dict(env, PREFECT_API_URL=url)
        medians["thread, configured API"] = statistics.median(
            generate("thread", 10 + n, configured) for n in range(args.runs))
    import_prefect = statistics.median(
        timed([sys.executable, "-c", "import prefect, prefect.flows"], env) for _ in range(args.runs))
    import_python = statistics.median(timed([sys.executable, "-c", "pass"], env) for _ in range(args.runs))

    base = medians["local"]
    print(f"{args.difficulty} x {args.count}, warm cache, median of {args.runs} (wall seconds; ratio to no Prefect)")
    labels = {"local": "local (no Prefect)", "thread": "thread, temporary server (the default before)",
              "auto": "auto (the default now; no API configured)"}
    for runner, seconds in medians.items():
        print(f"  {labels.get(runner, runner):48} {seconds:6.2f} s  x{seconds / base:.2f}")
    print("where Prefect's time goes:")
    print(f"  importing prefect                                {import_prefect - import_python:6.2f} s")
    print(f"  starting its temporary server (until healthy)    {server_start:6.2f} s")


if __name__ == "__main__":
    main()
