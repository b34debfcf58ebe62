"""A real model end to end: llama.cpp's OpenAI-compatible server with Gemma 3 270M (scripts/local-llm.sh)
racing easy legs and math tasks through ``--agent llm``. Prints scores, tokens and tokens per second;
never fails on a time or a score (it is a weak 270M base model: the point is the real protocol path).

    scripts/local-llm.sh install && python benchmarks/local_llm.py [--legs 3] [--tasks 5] [--max-tokens 256]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


ENV = dict(os.environ)   # the record/replay cache goes to a fresh file: every request really reaches the model


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=check,
                          env=ENV)


def summarize(name: str, runs: Path, wall: float) -> None:
    trials = [json.loads(p.read_text()) for p in sorted(runs.glob("*/trial.json"))]
    tokens = sum(t.get("tokens") or 0 for t in trials)
    print(f"{name}: {len(trials)} trials in {wall:.0f} s; stop reasons {dict(Counter(t['stop_reason'] for t in trials))}; "
          f"tokens {tokens} (prompt and completion; {tokens / wall:.1f} tokens/s over the wall time)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--legs", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--port", default="8088")
    a = ap.parse_args()
    subprocess.run([str(ROOT / "scripts" / "local-llm.sh"), "start", a.port], check=True)
    url = f"http://127.0.0.1:{a.port}/v1"
    out = Path(tempfile.mkdtemp(prefix="legwork-local-llm-"))
    ENV["LEGWORK_CACHE"] = str(out / "cache.sqlite")
    llm = ["--agent", "llm", "--llm-base-url", url, "--llm-model", "gemma3-270m", "--max-tokens", str(a.max_tokens),
           "--trial-tokens", "20000", "--timeout-s", "600"]
    try:
        cli("pipeline.generate", "--difficulty", "easy", "--variant", "linear", "--count", str(a.legs), "--seed", "3",
            "--task-runner", "local", "--quiet", "--out", str(out / "legs"))
        t0 = time.perf_counter()
        cli("pipeline.race", "--legs", str(out / "legs"), *llm, "--out", str(out / "leg-runs"))
        summarize("easy legs", out / "leg-runs", time.perf_counter() - t0)
        cli("pipeline.score", "--legs", str(out / "legs"), "--runs", str(out / "leg-runs"),
            "--out", str(out / "leg-report.json"))
        print("easy legs scored:", json.dumps(json.loads((out / "leg-report.json").read_text())["overall"])[:400])
        cli("pipeline.tasks", "build", "--family", "math", "--count", str(a.tasks), "--seed", "1",
            "--out", str(out / "math"))
        t0 = time.perf_counter()
        done = cli("pipeline.race", "--tasks", str(out / "math"), *llm, "--limit", str(a.tasks),
                   "--out", str(out / "math-runs"), check=False)
        if done.returncode == 0:
            summarize("math tasks", out / "math-runs", time.perf_counter() - t0)
            cli("pipeline.score", "--tasks", str(out / "math"), "--runs", str(out / "math-runs"),
                "--out", str(out / "math-report.json"))
            print((out / "math-report.json").read_text()[:600])
        else:
            print(f"math race failed: {done.stderr[-500:]}")
    finally:
        subprocess.run([str(ROOT / "scripts" / "local-llm.sh"), "stop"], check=False)
    print(f"runs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
