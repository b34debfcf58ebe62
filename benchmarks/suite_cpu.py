"""Where the default test run's CPU goes, over every process it starts (the 5-minute budget).

    python benchmarks/suite_cpu.py [--rate 25] [--out DIR] [-- PYTEST ARGS]

Runs the default suite (``-n auto --dist loadfile``, as ``scripts/test.sh``) under py-spy
(``pip install py-spy``; sampling every process the run starts, without pausing them) and prints: CPU
seconds by process kind (the xdist workers, each CLI the tests start), the share of the CLIs' time spent
importing, the test modules that take most of the workers' CPU, and the project functions that take
most of all. CPU, not wall: the suite is CPU-bound on 2 cores, so what it needs is CPU taken out.
Reports; never fails. A run under py-spy takes about a quarter longer than one without.
"""
from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = re.compile(r"(.*?\)) (\d+)\n", re.DOTALL)     # a stack's frames, then its count (cmdlines may hold newlines)
FRAME = re.compile(r"^(.*) \((.*):\d+\)$")
WORKER = " -u -c import sys"   # how execnet starts an xdist worker (the rest of its command follows a ";")


def samples(path: Path):
    """(process command line, [(function, file)], count) of each sampled stack in py-spy's raw output."""
    for m in SAMPLE.finditer(path.read_bytes().decode("utf-8", "replace")):
        parts = m.group(1).replace("\n", " ").split(";")
        procs = [p for p in parts if p.startswith("process ")]
        frames = [(f.group(1), f.group(2)) for p in parts if (f := FRAME.match(p))]
        yield (procs[-1] if procs else "?"), frames, int(m.group(2))


def kind_of(process: str) -> str:
    if WORKER in process:
        return "xdist worker (and what it forks)"
    m = re.search(r"-m (\S+)(?: (\w+))?", process)
    if m:
        return m.group(1) + (f" {m.group(2)}" if m.group(2) and m.group(1) in ("pipeline.tools", "pipeline.tasks",
                                                                               "pipeline.export", "pipeline.snapshot")
                             else "")
    return "other: " + process.split(":", 1)[-1][:50]


def report(path: Path, rate: int) -> None:
    by_kind, procs = collections.Counter(), collections.defaultdict(set)
    importing, child = 0, 0
    modules, functions = collections.Counter(), collections.Counter()
    for process, frames, n in samples(path):
        kind = kind_of(process)
        by_kind[kind] += n
        procs[kind].add(process.split(":", 1)[0])
        names = [f for f, _ in frames]
        if not kind.startswith("xdist worker"):
            child += n
            importing += n * ("_find_and_load" in names)
        else:
            module = next((Path(file).name for _, file in frames if Path(file).name.startswith("test_")), "(collection, fixtures of conftest)")
            modules[module] += n
        for function, file in {(f, file) for f, file in frames if file.startswith(("pipeline/", "flows/"))}:
            functions[f"{function} ({file})"] += n
    total = sum(by_kind.values())
    print(f"{total / rate:.0f} CPU-seconds sampled at {rate} Hz")
    print("\nby process kind: CPU s, processes, s a process")
    for kind, n in by_kind.most_common(20):
        print(f"  {n / rate:7.1f} {len(procs[kind]):4d} {n / rate / len(procs[kind]):6.1f}  {kind}")
    if child:
        print(f"\nthe processes the tests start: {child / rate:.0f} CPU-seconds, {importing / child:.0%} of it importing")
    print("\ntest modules, by the workers' CPU s")
    for module, n in modules.most_common(15):
        print(f"  {n / rate:7.1f}  {module}")
    print("\nproject functions, by CPU s in every process (cumulative)")
    for function, n in functions.most_common(25):
        print(f"  {n / rate:7.1f}  {function}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=25, help="samples a second per process (default 25)")
    parser.add_argument("--out", type=Path, help="keep py-spy's raw samples in this folder")
    parser.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments")
    args = parser.parse_args(argv)
    spy = shutil.which("py-spy")
    if spy is None:
        print("py-spy is not installed: pip install py-spy", file=sys.stderr)
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="legwork-suite-cpu-"))
    out.mkdir(parents=True, exist_ok=True)
    raw = out / "samples.txt"
    subprocess.run([spy, "record", "--nonblocking", "--subprocesses", "-r", str(args.rate), "--format", "raw",
                    "-o", str(raw), "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "auto",
                    "--dist", "loadfile", *args.pytest_args], cwd=ROOT, check=False)
    report(raw, args.rate)
    print(f"\nraw samples: {raw}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
