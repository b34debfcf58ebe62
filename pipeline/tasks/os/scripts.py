"""Write a small command: the agent writes an executable under /usr/local/bin that the check script runs
on hidden test inputs (CSV files, text files, directory trees) that it creates itself.

The test inputs and their expected outputs are drawn and computed here in Python; the check script
holds them (the agent never sees it), runs the command on each and compares the output line by
line (leading and trailing blanks ignored). The golden solution is a correct script; the plausible
wrong one makes a classic slip (the header line counted, a lexicographic sort for a numeric one,
a substring match for a field match, ties broken the other way, hidden files or subdirectories
forgotten...). Inputs are redrawn until the wrong script's output differs on at least one of them.
"""
from __future__ import annotations

import random
import re
import shlex
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from pipeline.tasks.os.base import EOF_MARK, WORDS, OsTask, agentbench, name

DELIMS = {",": "comma", ";": "semicolon", ":": "colon", "\t": "tab"}
HEADERS = ["id", "price", "qty", "score", "weight", "age", "count", "total", "stock", "rank"]
LABELS = ["red", "redwood", "blue", "green", "greenhouse", "amber", "teal", "gold", "golden", "plum"]
TEXT_WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda", "theta", "zeta"]


@dataclass
class Case:
    """One hidden test: an input (file lines, or a directory layout) and the command's arguments."""
    data: object
    args: list[str]


@dataclass
class Op:
    spec: str                                        # what the command must print (format fields below)
    golden: str                                      # the body of a correct script
    wrong: str                                       # the body of a plausible wrong script
    ref: Callable[[Case], list[str]]                 # the right output lines
    wrong_ref: Callable[[Case], list[str]]           # what the wrong script prints
    cases: Callable[[random.Random], list[Case]]
    usage: str = "FILE"


def _awk_f(d: str) -> str:
    return "-F'\\t'" if d == "\t" else f"-F'{d}'"


def _cut_d(d: str) -> str:
    return "" if d == "\t" else f"-d'{d}'"


def _sort_t(d: str) -> str:
    return "-t\"$(printf '\\t')\"" if d == "\t" else f"-t'{d}'"


# ---------------------------------------------------------------- CSV commands

def _csv_table(rng: random.Random, d: str, k: int, j: int, ncols: int, rows: int, *, positive: bool = True,
               labels: list[str] | None = None, unique_max: bool = False) -> list[list[str]]:
    header = rng.sample(HEADERS, ncols)
    header[j - 1] = "label"
    out = [header]
    used: set[int] = set()
    for _ in range(rows):
        row = [str(rng.randint(1 if positive else -50, rng.choice([9, 99, 999, 5000]))) for _ in range(ncols)]
        row[j - 1] = rng.choice(labels or LABELS)
        if unique_max:
            while int(row[k - 1]) in used:
                row[k - 1] = str(int(row[k - 1]) + 1)
            used.add(int(row[k - 1]))
        out.append(row)
    return out


def csv_ops(d: str, k: int, j: int) -> dict[str, Op]:
    """The CSV commands for delimiter ``d``, numeric column ``k``, label column ``j`` (1-based)."""
    F, C, T = _awk_f(d), _cut_d(d), _sort_t(d)

    def vals(case: Case) -> list[int]:
        return [int(r[k - 1]) for r in case.data[1:]]

    def table_cases(rng, **kw):
        def make():
            ncols = max(k, j) + rng.randint(0, 2)
            return [Case(_csv_table(rng, d, k, j, ncols, rng.randint(1, 9), **kw), [])
                    for _ in range(rng.randint(3, 4))]
        return make

    def rows_ref(c):
        return [str(len(c.data) - 1)]

    def mean_ref(c, skip=True):
        v = vals(c) if skip else vals(c) + [0]
        return [f"{sum(v) / len(v):.2f}"]

    def where_ref(c, sub=False):
        v = c.args[0]
        rows = c.data[1:]
        pick_rows = [r for r in rows if v in d.join(r)] if sub else [r for r in rows if r[j - 1] == v]
        return [str(sum(int(r[k - 1]) for r in pick_rows))]

    def rows_cases(rng):
        return [Case(t.data[:1], []) if i == 0 else t for i, t in enumerate(table_cases(rng)())]

    def where_cases(rng):
        out = []
        for c in table_cases(rng)():
            out.append(Case(c.data, [rng.choice(["red", "green", "gold", "blue"])]))
        return out

    def top_ref(c, lexi=False):
        rows = c.data[1:]
        best = max(rows, key=(lambda r: r[k - 1]) if lexi else (lambda r: int(r[k - 1])))
        return [best[j - 1]]

    return {
        "rows": Op(
            spec="prints the number of data rows (the header line is not a data row)",
            golden="awk 'NR > 1' \"$1\" | wc -l",
            wrong="wc -l < \"$1\"",
            ref=rows_ref, wrong_ref=lambda c: [str(len(c.data))], cases=rows_cases),
        "mean": Op(
            spec=f"prints the mean of column {k} over the data rows, with exactly two decimals (e.g. 12.50)",
            golden=f"awk {F} 'NR > 1 {{s += ${k}; n++}} END {{printf \"%.2f\\n\", s / n}}' \"$1\"",
            wrong=f"awk {F} '{{s += ${k}; n++}} END {{printf \"%.2f\\n\", s / n}}' \"$1\"",
            ref=mean_ref, wrong_ref=lambda c: mean_ref(c, skip=False), cases=lambda rng: table_cases(rng)()),
        "min": Op(
            spec=f"prints the smallest value of column {k} among the data rows",
            golden=f"awk {F} 'NR == 2 || (NR > 2 && ${k} < m) {{m = ${k}}} END {{print m}}' \"$1\"",
            wrong=f"cut {C} -f{k} \"$1\" | sort -n | head -1",
            ref=lambda c: [str(min(vals(c)))], wrong_ref=lambda c: [c.data[0][k - 1]],
            cases=lambda rng: table_cases(rng)()),
        "max": Op(
            spec=f"prints the largest value of column {k} among the data rows (the values are integers)",
            golden=f"awk {F} 'NR == 2 || (NR > 2 && ${k} > m) {{m = ${k}}} END {{print m}}' \"$1\"",
            wrong=f"tail -n +2 \"$1\" | cut {C} -f{k} | sort | tail -1",
            ref=lambda c: [str(max(vals(c)))], wrong_ref=lambda c: [max(r[k - 1] for r in c.data[1:])],
            cases=lambda rng: table_cases(rng)()),
        "distinct": Op(
            spec=f"prints how many distinct values column {j} holds among the data rows",
            golden=f"tail -n +2 \"$1\" | cut {C} -f{j} | sort -u | wc -l",
            wrong=f"cut {C} -f{j} \"$1\" | sort -u | wc -l",
            ref=lambda c: [str(len({r[j - 1] for r in c.data[1:]}))],
            wrong_ref=lambda c: [str(len({r[j - 1] for r in c.data}))],
            cases=lambda rng: table_cases(rng)()),
        "sum_where": Op(
            spec=f"takes a label as its second argument and prints the sum of column {k} over the data rows whose "
                 f"column {j} is exactly that label (0 if there is none)",
            golden=f"awk {F} -v want=\"$2\" 'NR > 1 && ${j} == want {{s += ${k}}} END {{print s + 0}}' \"$1\"",
            wrong=f"grep -- \"$2\" \"$1\" | awk {F} '{{s += ${k}}} END {{print s + 0}}'",
            ref=where_ref, wrong_ref=lambda c: where_ref(c, sub=True), cases=where_cases, usage="FILE LABEL"),
        "top": Op(
            spec=f"prints column {j} of the data row with the largest (integer) value in column {k}",
            golden=f"awk {F} 'NR > 1 && (NR == 2 || ${k} > m) {{m = ${k}; v = ${j}}} END {{print v}}' \"$1\"",
            wrong=f"tail -n +2 \"$1\" | sort {T} -k{k},{k}r | head -1 | cut {C} -f{j}",
            ref=top_ref, wrong_ref=lambda c: top_ref(c, lexi=True),
            cases=lambda rng: [Case(_csv_table(rng, d, k, j, max(k, j) + rng.randint(0, 2), rng.randint(2, 9),
                                               unique_max=True), []) for _ in range(rng.randint(3, 4))]),
    }


# ---------------------------------------------------------------- text commands

def _text(rng: random.Random, n: int, *, blanks: bool = False, case_mix: bool = False, dupes: bool = False
          ) -> list[str]:
    lines = []
    for _ in range(n):
        if blanks and rng.random() < 0.25:
            lines.append(rng.choice(["", "   ", "\t"]))
            continue
        if dupes and lines and rng.random() < 0.35:
            lines.append(rng.choice([x for x in lines]))
            continue
        words = [rng.choice(TEXT_WORDS) for _ in range(rng.randint(1, 6))]
        if case_mix:
            words = [w.upper() if rng.random() < 0.3 else w.capitalize() if rng.random() < 0.3 else w for w in words]
        lines.append(" ".join(words))
    return lines


def _words(lines: list[str], lower: bool) -> Counter:
    c: Counter = Counter()
    for line in lines:
        for w in re.findall(r"[A-Za-z]+", line):
            c[w.lower() if lower else w] += 1
    return c


def _top_word(c: Counter) -> str:
    return min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0]


def text_ops() -> dict[str, Op]:
    def longest(c, last=False):
        best, m = "", -1
        for line in c.data:
            if len(line) > m or (last and len(line) == m):
                best, m = line, len(line)
        return [best]

    def dedupe(lines):
        seen, out = set(), []
        for line in lines:
            if line not in seen:
                seen.add(line)
                out.append(line)
        return out

    def count_ci(c, sensitive=False):
        w = c.args[0]
        return [str(sum(1 for line in c.data if (w in line if sensitive else w.lower() in line.lower())))]

    def nth_cases(rng):
        out = []
        for _ in range(rng.randint(3, 4)):
            lines = [f"{rng.choice(TEXT_WORDS)} {i}" for i in range(rng.randint(3, 9))]
            out.append(Case(lines, [str(rng.randint(1, len(lines)))]))
        return out

    return {
        "nonblank": Op(
            spec="prints the number of lines that hold at least one non-blank character",
            golden="grep -c '[^[:space:]]' \"$1\"", wrong="wc -l < \"$1\"",
            ref=lambda c: [str(sum(1 for line in c.data if line.strip()))],
            wrong_ref=lambda c: [str(len(c.data))],
            cases=lambda rng: [Case(_text(rng, rng.randint(2, 10), blanks=True), []) for _ in range(rng.randint(3, 4))]),
        "longest": Op(
            spec="prints the longest line (the first one if several are equally long)",
            golden="awk 'length($0) > m {m = length($0); l = $0} END {print l}' \"$1\"",
            wrong="awk 'length($0) >= m {m = length($0); l = $0} END {print l}' \"$1\"",
            ref=longest, wrong_ref=lambda c: longest(c, last=True),
            cases=lambda rng: [Case(_text(rng, rng.randint(2, 9)), []) for _ in range(rng.randint(3, 4))]),
        "count_word": Op(
            spec="takes a word as its second argument and prints how many lines contain it, ignoring letter case",
            golden="grep -ci -- \"$2\" \"$1\"", wrong="grep -c -- \"$2\" \"$1\"",
            ref=count_ci, wrong_ref=lambda c: count_ci(c, sensitive=True), usage="FILE WORD",
            cases=lambda rng: [Case(_text(rng, rng.randint(2, 9), case_mix=True), [rng.choice(TEXT_WORDS)])
                               for _ in range(rng.randint(3, 4))]),
        "nth_from_end": Op(
            spec="takes a number N as its second argument and prints the N-th line counted from the end "
                 "(1 is the last line)",
            golden="tail -n \"$2\" \"$1\" | head -n 1", wrong="head -n \"$2\" \"$1\" | tail -n 1",
            ref=lambda c: [c.data[-int(c.args[0])]], wrong_ref=lambda c: [c.data[int(c.args[0]) - 1]],
            cases=nth_cases, usage="FILE N"),
        "dedupe": Op(
            spec="prints each distinct line once, in the order of its first appearance",
            golden="awk '!seen[$0]++' \"$1\"", wrong="sort -u \"$1\"",
            ref=lambda c: dedupe(c.data), wrong_ref=lambda c: sorted(set(c.data)),
            cases=lambda rng: [Case(_text(rng, rng.randint(3, 10), dupes=True), []) for _ in range(rng.randint(3, 4))]),
        "top_word": Op(
            spec="prints the most frequent word, counting words (runs of letters) without regard to letter case and "
                 "printing it in lower case; on a tie, the alphabetically first",
            golden="tr -cs 'A-Za-z' '\\n' < \"$1\" | tr 'A-Z' 'a-z' | grep -v '^$' | sort | uniq -c | "
                   "sort -k1,1nr -k2,2 | head -1 | awk '{print $2}'",
            wrong="tr -cs 'A-Za-z' '\\n' < \"$1\" | grep -v '^$' | sort | uniq -c | sort -k1,1nr -k2,2 | head -1 | "
                  "awk '{print $2}'",
            ref=lambda c: [_top_word(_words(c.data, True))],
            wrong_ref=lambda c: [_top_word(_words(c.data, False))],
            cases=lambda rng: [Case(_text(rng, rng.randint(2, 8), case_mix=True), []) for _ in range(rng.randint(3, 4))]),
        "reverse_words": Op(
            spec="prints every line with its words (separated by single spaces) in reverse order",
            golden="awk '{for (i = NF; i > 0; i--) printf \"%s%s\", $i, (i > 1 ? \" \" : \"\"); print \"\"}' \"$1\"",
            wrong="rev \"$1\"",
            ref=lambda c: [" ".join(reversed(line.split())) for line in c.data],
            wrong_ref=lambda c: [line[::-1] for line in c.data],
            cases=lambda rng: [Case(_text(rng, rng.randint(2, 8)), []) for _ in range(rng.randint(3, 4))]),
    }


# ---------------------------------------------------------------- directory commands

def _tree(rng: random.Random, ext_pool: list[str]) -> dict:
    """A directory layout: files (relative path -> (size, mtime)), empty directories."""
    files: dict[str, tuple[int, datetime]] = {}
    start = datetime(2023, 1, 1) + timedelta(days=rng.randrange(600))
    for _ in range(rng.randint(3, 9)):
        sub = rng.choice(["", "", "a", "a/b", "c"])
        base = ("." if rng.random() < 0.2 else "") + rng.choice(WORDS) + str(rng.randint(1, 99)) + "." + \
            rng.choice(ext_pool)
        files[f"{sub}/{base}".lstrip("/")] = (rng.randint(1, 3000), start + timedelta(seconds=rng.randrange(10 ** 7)))
    empty = sorted({rng.choice(["e", "a/e", "a/b/e", "c/x", "y"]) for _ in range(rng.randint(0, 3))})
    empty = [e for e in empty if not any(f.startswith(e + "/") for f in files)]
    return {"files": files, "empty": [e for e in empty if not any(o != e and o.startswith(e + "/") for o in empty)]}


def _dirs_of(tree: dict) -> set[str]:
    out = set()
    for p in list(tree["files"]) + [e + "/_" for e in tree["empty"]]:
        parts = p.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return out


def dir_ops() -> dict[str, Op]:
    def cases(rng, exts=("txt", "log", "md"), unique_size=False, unique_time=False):
        out = []
        while len(out) < rng.randint(3, 4):
            t = _tree(rng, list(exts))
            sizes = [s for s, _ in t["files"].values()]
            times = [m for _, m in t["files"].values()]
            if unique_size and len(set(sizes)) != len(sizes):
                continue
            if unique_time and len(set(times)) != len(times):
                continue
            out.append(Case(t, []))
        return out

    def ext_cases(rng):
        return [Case(c.data, [rng.choice(["txt", "log", "md"])]) for c in cases(rng)]

    def top_level(c):
        return {p: v for p, v in c.data["files"].items() if "/" not in p}

    def ext_total(c, top=False):
        files = top_level(c) if top else c.data["files"]
        return [str(sum(s for p, (s, _) in files.items() if p.endswith("." + c.args[0])
                        and not (top and p.startswith("."))))]

    def largest(c, top=False):
        files = top_level(c) if top else c.data["files"]
        if not files:
            return [""]
        return [max(files, key=lambda p: files[p][0]).rsplit("/", 1)[-1]]

    def newest(c, ls=False):
        files = c.data["files"]
        if ls:      # ls -t: non-hidden top-level entries; directories were dated before every file
            top = {p: m for p, (_, m) in files.items() if "/" not in p and not p.startswith(".")}
            if top:
                return [max(top, key=top.get)]
            dirs = sorted({p.split("/")[0] for p in list(files) + c.data["empty"] if "/" in p}
                          | {e for e in c.data["empty"] if "/" not in e})
            return [dirs[0]] if dirs else [""]
        return [max(files, key=lambda p: files[p][1]).rsplit("/", 1)[-1]]

    def empty_count(c, top=False):
        return [str(sum(1 for e in c.data["empty"] if not top or "/" not in e))]

    return {
        "count_files": Op(
            spec="takes a directory and prints how many regular files it holds, in all its subdirectories and "
                 "hidden files included",
            golden="find \"$1\" -type f | wc -l", wrong="find \"$1\" -type f -not -name '.*' | wc -l",
            ref=lambda c: [str(len(c.data["files"]))],
            wrong_ref=lambda c: [str(sum(1 for p in c.data["files"] if not p.rsplit("/", 1)[-1].startswith(".")))],
            cases=cases, usage="DIR"),
        "ext_bytes": Op(
            spec="takes a directory and an extension (without the dot) and prints the total size in bytes of the "
                 "regular files ending in that extension, in all its subdirectories and hidden files included",
            golden="find \"$1\" -type f -name \"*.$2\" -printf '%s\\n' | awk '{s += $1} END {print s + 0}'",
            wrong="cat \"$1\"/*.\"$2\" 2>/dev/null | wc -c",
            ref=ext_total, wrong_ref=lambda c: ext_total(c, top=True), cases=ext_cases, usage="DIR EXT"),
        "largest": Op(
            spec="takes a directory and prints the name (without its directory) of the largest regular file in it "
                 "or any of its subdirectories",
            golden="find \"$1\" -type f -printf '%s %f\\n' | sort -k1,1nr | head -1 | cut -d' ' -f2",
            wrong="find \"$1\" -maxdepth 1 -type f -printf '%s %f\\n' | sort -k1,1nr | head -1 | cut -d' ' -f2",
            ref=largest, wrong_ref=lambda c: largest(c, top=True),
            cases=lambda rng: cases(rng, unique_size=True), usage="DIR"),
        "newest": Op(
            spec="takes a directory and prints the name (without its directory) of the most recently modified "
                 "regular file in it or any of its subdirectories",
            golden="find \"$1\" -type f -printf '%T@ %f\\n' | sort -n | tail -1 | cut -d' ' -f2",
            wrong="ls -t \"$1\" | head -1",
            ref=newest, wrong_ref=lambda c: newest(c, ls=True),
            cases=lambda rng: cases(rng, unique_time=True), usage="DIR"),
        "empty_dirs": Op(
            spec="takes a directory and prints how many empty directories there are below it, at any depth (the "
                 "directory itself not counted)",
            golden="find \"$1\" -mindepth 1 -type d -empty | wc -l",
            wrong="find \"$1\" -mindepth 1 -maxdepth 1 -type d -empty | wc -l",
            ref=empty_count, wrong_ref=lambda c: empty_count(c, top=True), cases=cases, usage="DIR"),
    }


# ---------------------------------------------------------------- the check script

_NORM = "norm() { awk '{sub(/^[ \\t]+/, \"\"); sub(/[ \\t\\r]+$/, \"\"); print}'; }"


def _heredoc(path: str, lines: list[str]) -> str:
    body = "\n".join(lines)
    if EOF_MARK in body:
        raise ValueError("test input holds the here-document delimiter")
    return f"cat > {path} <<'{EOF_MARK}'\n{body}{chr(10) if lines else ''}{EOF_MARK}" if lines else f": > {path}"


def _make_input(i: int, case: Case, d: str | None) -> tuple[str, str]:
    """Bash creating test input ``i`` under $T; the path to pass to the command."""
    if isinstance(case.data, dict):
        root = f"\"$T/d{i}\""
        lines = [f"mkdir -p \"$T/d{i}\""]
        stamp = "%Y-%m-%d %H:%M:%S"
        for e in case.data["empty"]:
            lines.append(f"mkdir -p \"$T/d{i}/{e}\"")
        for p, (size, mtime) in case.data["files"].items():
            sub = p.rsplit("/", 1)[0] if "/" in p else ""
            if sub:
                lines.append(f"mkdir -p \"$T/d{i}/{sub}\"")
            lines.append(f"head -c {size} /dev/zero | tr '\\0' 'x' > \"$T/d{i}/{p}\" && "
                         f"touch -d '{mtime.strftime(stamp)}' \"$T/d{i}/{p}\"")
        oldest = min((m for _, m in case.data["files"].values()), default=datetime(2023, 1, 1))
        lines.append(f"find \"$T/d{i}\" -type d -exec touch -d '{(oldest - timedelta(days=1)).strftime(stamp)}' {{}} +")
        return "\n".join(lines), root
    rows = case.data
    text = [d.join(r) for r in rows] if rows and isinstance(rows[0], list) else list(rows)
    return _heredoc(f"\"$T/in{i}\"", text), f"\"$T/in{i}\""


def check_script(command: str, cases: list[Case], outputs: list[list[str]], d: str | None) -> str:
    lines = [f"B={command}", "[ -x \"$B\" ] || exit 1", "T=$(mktemp -d)", _NORM]
    for i, (case, out) in enumerate(zip(cases, outputs)):
        make, path = _make_input(i, case, d)
        lines.append(make)
        lines.append(_heredoc(f"\"$T/exp{i}\"", out))
        args = "".join(f" {shlex.quote(a)}" for a in case.args)
        lines.append(f"[ \"$(cd / && \"$B\" {path}{args} 2>/dev/null | norm)\" = \"$(norm < \"$T/exp{i}\")\" ] || exit 1")
    return "\n".join(lines)


def _install(command: str, body: str) -> str:
    return f"cat > {command} <<'{EOF_MARK}'\n#!/bin/bash\n{body}\n{EOF_MARK}\nchmod +x {command}"


def _command_task(kind: str, rng: random.Random, ops: dict[str, Op], op_name: str, intro: str,
                  d: str | None, params: dict) -> OsTask:
    op = ops[op_name]
    while True:
        cases = op.cases(rng)
        outs = [op.ref(c) for c in cases]
        if any(op.wrong_ref(c) != o for c, o in zip(cases, outs)) and all(o != [""] for o in outs):
            break
    tool = f"{op_name.replace('_', '')}-{name(rng)}"
    command = f"/usr/local/bin/{tool}"
    desc = (f"Write an executable command {command} (usage: {tool} {op.usage}) that {intro}{op.spec}. "
            f"It is tested on files it has not seen.")
    init = "mkdir -p /usr/local/bin"
    check = check_script(command, cases, outs, d)
    return OsTask(kind, "filesystem", agentbench(desc, init, ["command", "file"], _install(command, op.golden),
                                                 check=check),
                  None, dict(params, op=op_name, command=command), _install(command, op.wrong))


def write_csv_command(rng: random.Random) -> OsTask:
    d = rng.choice(list(DELIMS))
    k, j = rng.sample(range(1, 6), 2)
    ops = csv_ops(d, k, j)
    op_name = rng.choice(list(ops))
    intro = (f"reads the {DELIMS[d]}-separated file given as its first argument (its first line is a header) and ")
    return _command_task("write_csv_command", rng, ops, op_name, intro, d, {"delimiter": d, "k": k, "j": j})


def write_text_command(rng: random.Random) -> OsTask:
    ops = text_ops()
    op_name = rng.choice(list(ops))
    intro = "reads the text file given as its first argument and "
    return _command_task("write_text_command", rng, ops, op_name, intro, None, {})


def write_dir_command(rng: random.Random) -> OsTask:
    ops = dir_ops()
    op_name = rng.choice(list(ops))
    return _command_task("write_dir_command", rng, ops, op_name, "", None, {})
