"""Questions answered by several commands over generated data: web access logs, CSV trees, text trees,
file sizes and times, accounts and groups, owners and permission bits.

Every generator draws the data, computes the answer in Python from it, and writes a golden solution
(a pipeline: filter, aggregate, sort) and a plausible wrong one (distinct IPs counted as requests,
the rotated log forgotten, a substring grep instead of a field match, inclusive bounds read as
exclusive, ``-size +N`` in 512-byte blocks, ``-perm -`` for ``-perm /``...). The data is redrawn
until the wrong solution's answer differs from the right one, so the pitfall always shows.
"""
from __future__ import annotations

import math
import random
import re
from collections import Counter
from datetime import datetime, timedelta
from itertools import accumulate

from pipeline.tasks.os.base import EXTS, WORDS, OsTask, agentbench, fill_bytes, mkdirs, name, pick, write_file

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
PATHS = ["/", "/index.html", "/api/v1/items", "/api/v1/users", "/api/v2/orders", "/login", "/logout",
         "/static/app.js", "/static/site.css", "/health", "/search", "/cart", "/checkout", "/img/logo.png",
         "/docs", "/feed.xml", "/robots.txt", "/admin", "/upload", "/metrics"]
METHODS = ["GET"] * 6 + ["POST"] * 2 + ["PUT", "DELETE", "HEAD"]
AGENTS = ["curl/8.5.0", "Mozilla/5.0 (X11; Linux x86_64)", "python-requests/2.31", "Go-http-client/1.1",
          "Wget/1.21.3", "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_2)"]
STATUS_CLASSES = {"5xx": ("a 5xx (server error) status", "^5"), "4xx": ("a 4xx (client error) status", "^4"),
                  "404": ("status 404", "^404$"), "500": ("status 500", "^500$"), "503": ("status 503", "^503$"),
                  "2xx": ("a 2xx (success) status", "^2"), "403": ("status 403", "^403$")}
SHELLS = ["/bin/bash", "/bin/sh", "/usr/sbin/nologin", "/bin/false", "/bin/dash", "/bin/rbash"]


def _ip(rng: random.Random) -> str:
    first = rng.choice(["10", "192.168", "172.16", "172.31", "100.64"])
    rest = [str(rng.randint(0, 254)) for _ in range(4 - len(first.split(".")))]
    return ".".join([first, *rest])


def _log_lines(rng: random.Random, day: datetime, n: int, ips: list[str], weights: dict) -> list[dict]:
    """``n`` requests on ``day`` between a random start hour and a few hours later, in time order."""
    h0 = rng.randint(0, 18)
    span = rng.randint(3, 5) * 3600
    secs = sorted(rng.randrange(h0 * 3600, min(h0 * 3600 + span, 86400)) for _ in range(n))
    paths, statuses = list(weights["paths"]), list(weights["statuses"])
    cum = {key: list(accumulate(weights[key][x] for x in keys))
           for key, keys in (("paths", paths), ("statuses", statuses), ("ips", ips))}
    out = []
    for s in secs:
        t = day + timedelta(seconds=s)
        status = rng.choices(statuses, cum_weights=cum["statuses"])[0]
        size = "-" if status in (304, 204) or rng.random() < 0.05 else str(rng.randint(40, 60000))
        out.append({"ip": rng.choices(ips, cum_weights=cum["ips"])[0], "t": t, "method": rng.choice(METHODS),
                    "path": rng.choices(paths, cum_weights=cum["paths"])[0],
                    "status": status, "size": size, "agent": rng.choice(AGENTS)})
    return out


def _log_text(r: dict) -> str:
    t = r["t"]
    stamp = f"{t.day:02d}/{MONTHS[t.month - 1]}/{t.year}:{t.hour:02d}:{t.minute:02d}:{t.second:02d} +0000"
    return (f'{r["ip"]} - - [{stamp}] "{r["method"]} {r["path"]} HTTP/1.1" {r["status"]} {r["size"]} '
            f'"-" "{r["agent"]}"')


def _weights(rng: random.Random, ips: list[str]) -> dict:
    statuses = {200: 30, 201: 3, 301: 3, 302: 2, 304: 5, 400: 2, 401: 2, 403: 3, 404: 8, 500: 4, 502: 3,
                503: 3, 504: 2}
    return {"ips": {ip: rng.randint(1, 12) for ip in ips},
            "paths": {p: rng.randint(1, 15) for p in rng.sample(PATHS, rng.randint(6, 14))},
            "statuses": {s: w * rng.uniform(0.5, 2.0) for s, w in statuses.items()}}


def _day(rng: random.Random) -> datetime:
    return datetime(2023, 1, 1) + timedelta(days=rng.randrange(730))


def _status_ok(status: int, regex: str) -> bool:
    return re.search(regex, str(status)) is not None


def access_log_window(rng: random.Random) -> OsTask:
    """Requests or distinct client IPs with a status class inside an hour window of one day's log."""
    while True:
        site = name(rng)
        root = f"/var/log/{rng.choice(['nginx', 'httpd', 'web', 'proxy'])}/{site}"
        log = f"{root}/access.log"
        ips = sorted({_ip(rng) for _ in range(rng.randint(5, 16))})
        day = _day(rng)
        rows = _log_lines(rng, day, rng.randint(70, 220), ips, _weights(rng, ips))
        hours = sorted({r["t"].hour for r in rows})
        h1 = rng.choice(hours)
        h2 = h1 if rng.random() < 0.5 else min(23, h1 + rng.randint(1, 2))
        key, (phrase, regex) = pick(rng, STATUS_CLASSES)
        metric = rng.choice(["distinct", "requests"])
        hit = [r for r in rows if h1 <= r["t"].hour <= h2 and _status_ok(r["status"], regex)]
        answer = len({r["ip"] for r in hit}) if metric == "distinct" else len(hit)
        if metric == "distinct":
            wrong_answer = len(hit)                        # requests counted, not distinct addresses
        else:
            wrong_answer = sum(1 for r in rows if _status_ok(r["status"], regex))   # the window ignored
        if answer > 0 and wrong_answer != answer:
            break
    window = f"between {h1:02d}:00:00 and {h2:02d}:59:59"
    date = f"{day.day:02d}/{MONTHS[day.month - 1]}/{day.year}"
    what = "distinct client IP addresses received" if metric == "distinct" else "requests got"
    desc = (f"{log} is a web server access log (combined log format) for {date}. How many {what} {phrase} "
            f"{window} (server time)? Answer with the integer only.")
    cond = f"$9 ~ /{regex}/"
    window_awk = f"h = substr($4, 14, 2) + 0; if (h >= {h1} && h <= {h2} && {cond}) print $1"
    if metric == "distinct":
        example = f"awk '{{{window_awk}}}' {log} | sort -u | wc -l"
        wrong = f"awk '{{{window_awk}}}' {log} | wc -l"
    else:
        example = f"awk '{{{window_awk}}}' {log} | wc -l"
        wrong = f"awk '{cond}' {log} | wc -l"
    init = "\n".join([f"mkdir -p {root}", write_file(log, [_log_text(r) for r in rows]),
                      write_file(f"{root}/error.log", [f"[{date}] [error] upstream timed out ({rng.randint(1, 99)})"
                                                       for _ in range(rng.randint(1, 4))])])
    return OsTask("access_log_window", "filesystem", agentbench(desc, init, ["log", "file"], example,
                                                                match=str(answer)),
                  str(answer), {"log": log, "metric": metric, "status": key, "hours": [h1, h2]},
                  wrong, str(wrong_answer))


def _top(counter: Counter) -> str | None:
    """The unique most common key, or None on a tie."""
    top = counter.most_common(2)
    if not top or (len(top) > 1 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def access_log_top(rng: random.Random) -> OsTask:
    """The path or client with the most bytes or requests over a log and its rotated predecessor."""
    question = rng.choice(["path_bytes", "ip_requests", "path_status"])      # drawn once: the loop redraws the data, so every question keeps its share
    while True:
        root = f"/var/log/{rng.choice(['nginx', 'httpd', 'web', 'proxy'])}/{name(rng)}"
        ips = sorted({_ip(rng) for _ in range(rng.randint(4, 12))})
        day = _day(rng)
        weights = _weights(rng, ips)
        old = _log_lines(rng, day - timedelta(days=1), rng.randint(40, 160), ips, weights)
        weights2 = dict(weights, paths={p: max(1, w + rng.randint(-6, 6)) for p, w in weights["paths"].items()},
                        ips={i: max(1, w + rng.randint(-5, 5)) for i, w in weights["ips"].items()})
        new = _log_lines(rng, day, rng.randint(40, 160), ips, weights2)
        status = rng.choice([404, 500, 200, 403, 304, 502])

        def tally(rows, q=question, st=status):
            c: Counter = Counter()
            for r in rows:
                if q == "path_bytes":
                    c[r["path"]] += 0 if r["size"] == "-" else int(r["size"])
                elif q == "ip_requests":
                    c[r["ip"]] += 1
                elif r["status"] == st:
                    c[r["path"]] += 1
            return c
        answer = _top(tally(old + new))
        variant = rng.choice(["current_only", "by_count"]) if question == "path_bytes" else "current_only"
        if variant == "current_only":
            wrong_answer = _top(tally(new))
        else:
            wrong_answer = _top(Counter(r["path"] for r in old + new))
        if answer and wrong_answer and answer != wrong_answer:
            break
    log = f"{root}/access.log"
    both = f"{log} and the rotated {log}.1"
    if question == "path_bytes":
        desc = (f"Across {both} (combined log format), which request path transferred the most bytes in total? "
                f"The response size is the field after the status code; '-' counts as 0. Answer with the path only.")
        agg = "awk '{b[$7] += $10} END {for (p in b) print b[p], p}'"
        example = f"cat {log} {log}.1 | {agg} | sort -k1,1nr | head -1 | cut -d' ' -f2"
        wrong = (f"cat {log} | {agg} | sort -k1,1nr | head -1 | cut -d' ' -f2" if variant == "current_only" else
                 f"cat {log} {log}.1 | awk '{{print $7}}' | sort | uniq -c | sort -k1,1nr | head -1 | awk '{{print $2}}'")
    elif question == "ip_requests":
        desc = (f"Across {both} (combined log format), which client IP address made the most requests? "
                f"Answer with the IP address only.")
        example = f"cat {log} {log}.1 | awk '{{print $1}}' | sort | uniq -c | sort -k1,1nr | head -1 | awk '{{print $2}}'"
        wrong = f"awk '{{print $1}}' {log} | sort | uniq -c | sort -k1,1nr | head -1 | awk '{{print $2}}'"
    else:
        desc = (f"Across {both} (combined log format), which request path got the most responses with status "
                f"{status}? Answer with the path only.")
        example = (f"cat {log} {log}.1 | awk '$9 == {status} {{print $7}}' | sort | uniq -c | sort -k1,1nr | "
                   f"head -1 | awk '{{print $2}}'")
        wrong = (f"awk '$9 == {status} {{print $7}}' {log} | sort | uniq -c | sort -k1,1nr | head -1 | "
                 f"awk '{{print $2}}'")
    init = "\n".join([f"mkdir -p {root}", write_file(log, [_log_text(r) for r in new]),
                      write_file(f"{log}.1", [_log_text(r) for r in old])])
    return OsTask("access_log_top", "filesystem", agentbench(desc, init, ["log", "file"], example, match=answer),
                  answer, {"log": log, "question": question, "wrong": variant}, wrong, wrong_answer)


PRODUCTS = ["widget", "gadget", "sprocket", "gizmo", "bracket", "flange", "valve", "hinge", "gasket", "spindle"]
CHANNELS = ["web", "store", "phone", "partner"]
REGIONS = ["north", "south", "east", "west", "central", "coast", "highland"]


def csv_aggregate(rng: random.Random) -> OsTask:
    """Sum, maximum or row count of a column over a tree of CSV files, rows filtered by another column."""
    while True:
        root = f"/data/{name(rng)}/sales"
        columns = ["date", "region", "product", "channel", "units", "price"]
        rng.shuffle(columns)
        col = {c: i + 1 for i, c in enumerate(columns)}
        base = rng.sample(PRODUCTS, rng.randint(3, 5))
        products = base + [f"{p}-{rng.choice(['pro', 'mini', 'xl'])}" for p in base if rng.random() < 0.6]
        channels = CHANNELS + [f"{c}-{rng.choice(['reseller', 'outlet'])}" for c in CHANNELS if rng.random() < 0.5]
        regions = rng.sample(REGIONS, rng.randint(2, 4))
        files: dict[str, list[dict]] = {}
        for region in regions:
            for month in rng.sample(range(1, 13), rng.randint(1, 3)):
                path = f"{root}/{region}/2024-{month:02d}.csv"
                files[path] = [{"date": f"2024-{month:02d}-{rng.randint(1, 28):02d}", "region": region,
                                "product": rng.choice(products), "channel": rng.choice(channels),
                                "units": rng.randint(1, 60), "price": rng.randint(2, 250)}
                               for _ in range(rng.randint(3, 12))]
        field = rng.choice(["product", "channel"])
        value = rng.choice(base if field == "product" else CHANNELS)
        agg = rng.choice(["units", "revenue", "max_units", "rows"])
        rows = [r for rs in files.values() for r in rs]
        picked = [r for r in rows if r[field] == value]
        grepped = [r for r in rows if any(value in str(v) for v in r.values())]
        answer, wrong_answer = (_csv_agg(agg, picked), _csv_agg(agg, grepped))
        if picked and answer != wrong_answer:
            break
    phrase = {"units": "the total of the units column", "revenue": "the total revenue (units times price, summed "
              "over the rows)", "max_units": "the largest units value in a single row",
              "rows": "the number of data rows"}[agg]
    desc = (f"Sales records are kept as CSV files (comma-separated, one header line each) in the directories "
            f"under {root}. Over all the .csv files there, what is {phrase} for the rows whose {field} is exactly "
            f"{value}? Answer with the integer only.")
    body = {"units": f"{{s += ${col['units']}}} END {{print s + 0}}",
            "revenue": f"{{s += ${col['units']} * ${col['price']}}} END {{print s + 0}}",
            "max_units": f"{{if (${col['units']} > m) m = ${col['units']}}} END {{print m + 0}}",
            "rows": "{n++} END {print n + 0}"}[agg]
    example = f"find {root} -name '*.csv' -exec awk -F, 'FNR > 1 && ${col[field]} == \"{value}\" {body}' {{}} +"
    wrong = f"grep -rh --include='*.csv' '{value}' {root} | awk -F, '{body}'"
    header = ",".join(columns)
    init = [mkdirs(list(files))]
    for path, rs in files.items():
        init.append(write_file(path, [header] + [",".join(str(r[c]) for c in columns) for r in rs]))
    some = next(iter(files))
    init.append(write_file(some.rsplit("/", 1)[0] + "/old.csv.bak", [header, ",".join(
        str(files[some][0][c]) if c != field else value for c in columns)]))
    return OsTask("csv_aggregate", "filesystem", agentbench(desc, "\n".join(init), ["file", "csv"], example,
                                                            match=str(answer)),
                  str(answer), {"root": root, "field": field, "value": value, "agg": agg, "columns": columns},
                  wrong, str(wrong_answer))


def _csv_agg(agg: str, rows: list[dict]) -> int:
    if agg == "units":
        return sum(r["units"] for r in rows)
    if agg == "revenue":
        return sum(r["units"] * r["price"] for r in rows)
    if agg == "max_units":
        return max((r["units"] for r in rows), default=0)
    return len(rows)


FILLER = ["the", "service", "restarted", "after", "the", "update", "and", "the", "queue", "drained", "slowly", "while", "operators", "watched", "metrics", "cache", "warm", "request", "handler", "retry", "backoff", "config", "reload", "shard", "replica", "index"]


def grep_tree(rng: random.Random) -> OsTask:
    """Files or lines containing a token in a tree of text files, or the directory with most such files."""
    question = rng.choice(["files", "lines_word", "top_dir"])   # drawn once: every question keeps its share
    while True:
        root = f"/srv/{name(rng)}/docs"
        subs = rng.sample(["api", "ops", "guides", "notes", "infra", "billing", "design"], rng.randint(2, 4))
        words = ["deprecated", "timeout", "fallback", "rollback", "quota"]
        token = rng.choice(words) if question == "lines_word" else rng.choice(
            [f"ERR{rng.randint(100, 999)}", f"TICKET-{rng.randint(1000, 9999)}", rng.choice(words)])
        word_like = token.isalpha()
        files: dict[str, list[str]] = {}
        for _ in range(rng.randint(8, 18)):
            sub = rng.choice(subs + ([""] if question != "top_dir" else []))
            fname = ("." if rng.random() < 0.1 else "") + name(rng) + "." + rng.choice(["txt", "md", "log", "conf"])
            path = f"{root}/{sub}/{fname}".replace("//", "/")
            lines = []
            for _ in range(rng.randint(2, 9)):
                words = rng.sample(FILLER, rng.randint(4, 9))
                roll = rng.random()
                if roll < 0.25:
                    words.insert(rng.randrange(len(words) + 1), rng.choice([token, token.upper(), token.capitalize()])
                                 if word_like else token)
                elif roll < 0.35 and word_like:
                    words.insert(rng.randrange(len(words) + 1), rng.choice([token + "s", "un" + token, token + "_v2"]))
                lines.append(" ".join(words))
            files[path] = lines
        ext = rng.choice(["txt", "md", "log", "conf"])
        if question == "files":
            answer = sum(1 for ls in files.values() if any(token in line for line in ls))
            wrong_answer = sum(1 for ls in files.values() for line in ls if token in line)
        elif question == "lines_word":
            rx = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(token)}(?![A-Za-z0-9_])", re.IGNORECASE)
            mine = [ls for p, ls in files.items() if p.endswith("." + ext)]
            answer = sum(1 for ls in mine for line in ls if rx.search(line))
            wrong_answer = sum(1 for ls in mine for line in ls if token.lower() in line.lower())
        else:
            per_files = Counter(p[len(root) + 1:].split("/")[0] for p, ls in files.items()
                                if any(token in line for line in ls))
            per_lines = Counter(p[len(root) + 1:].split("/")[0] for p, ls in files.items() for line in ls
                                if token in line)
            answer, wrong_answer = _top(per_files), _top(per_lines)
            if answer is None or wrong_answer is None:
                continue
        if answer and answer != wrong_answer:
            break
    if question == "files":
        desc = (f"How many files under {root} (subdirectories and hidden files included) contain the string "
                f"{token}? Answer with the integer only.")
        example = f"grep -rl '{token}' {root} | wc -l"
        wrong = f"grep -r '{token}' {root} | wc -l"
    elif question == "lines_word":
        desc = (f"How many lines of the .{ext} files under {root} (recursively) contain the word {token} in any "
                f"letter case, as a whole word (not as part of a longer word)? Answer with the integer only.")
        example = f"grep -rwi --include='*.{ext}' '{token}' {root} | wc -l"
        wrong = f"grep -ri --include='*.{ext}' '{token}' {root} | wc -l"
    else:
        depth = root.count("/") + 2
        desc = (f"Which subdirectory of {root} holds the most files that contain the string {token} (counting "
                f"files, not lines)? Answer with the subdirectory's name only.")
        example = f"grep -rl '{token}' {root} | cut -d/ -f{depth} | sort | uniq -c | sort -k1,1nr | head -1 | awk '{{print $2}}'"
        wrong = (f"grep -r '{token}' {root} | cut -d: -f1 | cut -d/ -f{depth} | sort | uniq -c | sort -k1,1nr | "
                 f"head -1 | awk '{{print $2}}'")
    init = [mkdirs(list(files))] + [write_file(p, ls) for p, ls in files.items()]
    return OsTask("grep_tree", "filesystem", agentbench(desc, "\n".join(init), ["file", "grep"], example,
                                                        match=str(answer)),
                  str(answer), {"root": root, "token": token, "question": question}, wrong, str(wrong_answer))


def _sized_files(rng: random.Random, root: str, n: int, hidden: float = 0.15) -> list[tuple[str, int]]:
    taken: set[str] = set()
    out = []
    while len(out) < n:
        sub = rng.choice(["", "", "a", "b/c", "d"])
        base = ("." if rng.random() < hidden else "") + name(rng) + "." + rng.choice(EXTS)
        path = f"{root}/{sub}/{base}".replace("//", "/")
        if path not in taken:
            taken.add(path)
            out.append((path, rng.randint(1, 5000)))
    return out


def ext_sizes(rng: random.Random) -> OsTask:
    """The extension with the largest total size, or the total size of one extension, over a tree."""
    question = rng.choice(["top_ext", "ext_total"])      # drawn once: the loop redraws the data, so every question keeps its share
    while True:
        root = f"/data/{name(rng)}"
        files = _sized_files(rng, root, rng.randint(8, 20))
        if question == "top_ext":
            by_size: Counter = Counter()
            by_count: Counter = Counter()
            for p, s in files:
                by_size[p.rsplit(".", 1)[1]] += s
                by_count[p.rsplit(".", 1)[1]] += 1
            answer, wrong_answer = _top(by_size), _top(by_count)
            if answer and wrong_answer and answer != wrong_answer:
                break
        else:
            ext = rng.choice(sorted({p.rsplit(".", 1)[1] for p, _ in files}))
            answer = sum(s for p, s in files if p.endswith("." + ext))
            wrong_answer = sum(s for p, s in files if p.endswith("." + ext) and p.count("/") == root.count("/") + 1
                               and not p.rsplit("/", 1)[1].startswith("."))
            if wrong_answer and answer != wrong_answer:
                break
    if question == "top_ext":
        desc = (f"Under {root} (subdirectories and hidden files included), which file extension has the largest "
                f"total size in bytes, summed over its regular files? Answer with the extension only, without the dot.")
        agg = "awk '{n = split($2, a, \".\"); s[a[n]] += $1} END {for (e in s) print s[e], e}'"
        example = f"find {root} -type f -printf '%s %f\\n' | {agg} | sort -k1,1nr | head -1 | cut -d' ' -f2"
        wrong = (f"find {root} -type f -printf '%f\\n' | awk -F. '{{print $NF}}' | sort | uniq -c | sort -k1,1nr | "
                 f"head -1 | awk '{{print $2}}'")
        params = {"root": root, "question": question}
    else:
        desc = (f"What is the total size in bytes of all regular files ending in .{ext} under {root}, "
                f"subdirectories and hidden files included? Answer with the integer only.")
        example = f"find {root} -type f -name '*.{ext}' -printf '%s\\n' | awk '{{s += $1}} END {{print s}}'"
        wrong = f"cat {root}/*.{ext} | wc -c"
        params = {"root": root, "question": question, "ext": ext}
    init = "\n".join([mkdirs([p for p, _ in files])] + [fill_bytes(p, s) for p, s in files])
    return OsTask("ext_sizes", "filesystem", agentbench(desc, init, ["file"], example, match=str(answer)),
                  str(answer), params, wrong, str(wrong_answer))


def file_times(rng: random.Random) -> OsTask:
    """The most recently modified file of a tree, or how many files changed after a moment."""
    question = rng.choice(["newest", "count_after"])      # drawn once: the loop redraws the data, so every question keeps its share
    while True:
        root = f"/srv/{name(rng)}"
        files = [p for p, _ in _sized_files(rng, root, rng.randint(6, 16), hidden=0.0)]
        start = datetime(2023, 1, 1) + timedelta(seconds=rng.randrange(600 * 86400))
        times = {p: start + timedelta(seconds=rng.randrange(90 * 86400)) for p in files}
        if len(set(times.values())) != len(times):
            continue
        if question == "newest":
            answer = max(files, key=times.get)
            top = [p for p in files if p.count("/") == root.count("/") + 1]
            if not top:
                continue
            wrong_answer = max(top, key=times.get)
            if answer != wrong_answer:
                break
        else:
            cut = start + timedelta(seconds=rng.randrange(90 * 86400))
            if cut in times.values():
                continue
            answer = sum(1 for t in times.values() if t > cut)
            all_dirs = {root}
            for p in files:
                parts = p[len(root) + 1:].split("/")[:-1]
                for k in range(1, len(parts) + 1):
                    all_dirs.add(root + "/" + "/".join(parts[:k]))
            wrong_answer = answer + len(all_dirs)      # directories were just created: newer than the cut
            if answer:
                break
    stamp = "%Y-%m-%d %H:%M:%S"
    init = [mkdirs(files)] + [f"echo {name(rng)} > {p} && touch -d '{times[p].strftime(stamp)}' {p}" for p in files]
    if question == "newest":
        init.append(f"find {root} -type d -exec touch -d '{(start - timedelta(days=1)).strftime(stamp)}' {{}} +")
        desc = (f"Which regular file under {root}, subdirectories included, was modified most recently? Answer with "
                f"its full path.")
        example = f"find {root} -type f -printf '%T@ %p\\n' | sort -n | tail -1 | cut -d' ' -f2"
        wrong = f"echo {root}/$(ls -t {root} | head -1)"
        params = {"root": root, "question": question}
    else:
        desc = (f"How many regular files under {root} (subdirectories included) were last modified after "
                f"{cut.strftime(stamp)} (local time)? Answer with the integer only.")
        example = f"find {root} -type f -newermt '{cut.strftime(stamp)}' | wc -l"
        wrong = f"find {root} -newermt '{cut.strftime(stamp)}' | wc -l"
        params = {"root": root, "question": question, "after": cut.strftime(stamp)}
    return OsTask("file_times", "filesystem", agentbench(desc, "\n".join(init), ["file"], example, match=str(answer)),
                  str(answer), params, wrong, str(wrong_answer))


# ---------------------------------------------------------------- users, groups, owners, permissions

def _accounts(rng: random.Random, n: int, taken: set[str]) -> list[dict]:
    uids = rng.sample(range(1500, 60000), n)
    return [{"name": name(rng, taken), "uid": uid, "shell": rng.choice(SHELLS)} for uid in uids]


def _useradd(u: dict) -> str:
    extra = f" -g {u['group']}" if u.get("group") else ""
    extra += f" -G {','.join(u['groups'])}" if u.get("groups") else ""
    return f"useradd -M -d {u['home']} -s {u['shell']} -u {u['uid']}{extra} {u['name']}"


def passwd_query(rng: random.Random) -> OsTask:
    """Counts, lists and maxima over the account database (shell, UID range, home directory)."""
    question = rng.choice(["count_range", "home_list", "max_uid"])      # drawn once: the loop redraws the data, so every question keeps its share
    while True:
        taken: set[str] = set()
        team = name(rng, taken)
        users = _accounts(rng, rng.randint(6, 12), taken)
        for u in users:
            u["home"] = rng.choice([f"/srv/{team}/{u['name']}", f"/srv/{team}-archive/{u['name']}",
                                    f"/home/{u['name']}", f"/srv/{team}/staff/{u['name']}"])
        shell = rng.choice(SHELLS)
        if question == "count_range":
            with_shell = sorted(u["uid"] for u in users if u["shell"] == shell)
            if len(with_shell) < 2:
                continue
            lo = rng.choice(with_shell)
            hi = rng.choice([x for x in with_shell if x >= lo] + [min(59999, lo + rng.randint(500, 30000))])
            if hi <= lo:
                continue
            answer = str(sum(1 for x in with_shell if lo <= x <= hi))
            wrong_answer = str(sum(1 for x in with_shell if lo < x < hi))
            if answer != wrong_answer:
                break
        elif question == "home_list":
            mine = sorted(u["name"] for u in users if u["home"].startswith(f"/srv/{team}/"))
            grepped = sorted(u["name"] for u in users if f"/srv/{team}" in u["home"])
            answer, wrong_answer = ",".join(mine), ",".join(grepped)
            if mine and answer != wrong_answer:
                break
        else:
            mine = [u for u in users if u["shell"] == shell]
            if len(mine) < 2:
                continue
            answer = max(mine, key=lambda u: u["uid"])["name"]
            wrong_answer = max(mine, key=lambda u: str(u["uid"]))["name"]
            if answer != wrong_answer:
                break
    if question == "count_range":
        desc = (f"How many user accounts have the login shell {shell} and a UID from {lo} to {hi} (both included)? "
                f"Answer with the integer only.")
        example = f"getent passwd | awk -F: '$7 == \"{shell}\" && $3 >= {lo} && $3 <= {hi}' | wc -l"
        wrong = f"getent passwd | awk -F: '$7 == \"{shell}\" && $3 > {lo} && $3 < {hi}' | wc -l"
        params = {"question": question, "shell": shell, "range": [lo, hi]}
    elif question == "home_list":
        desc = (f"Which user accounts have their home directory inside /srv/{team} (at any depth)? Answer with the "
                f"user names sorted alphabetically, separated by commas, without spaces.")
        example = f"getent passwd | awk -F: '$6 ~ \"^/srv/{team}/\" {{print $1}}' | sort | paste -sd,"
        wrong = f"grep /srv/{team} /etc/passwd | cut -d: -f1 | sort | paste -sd,"
        params = {"question": question, "team": team}
    else:
        desc = (f"Among the user accounts whose UID is from 1500 to 59999 and whose login shell is {shell}, which one "
                f"has the highest UID? Answer with the user name only.")
        example = (f"getent passwd | awk -F: '$7 == \"{shell}\" && $3 >= 1500 && $3 <= 59999' | sort -t: -k3,3n | "
                   f"tail -1 | cut -d: -f1")
        wrong = (f"getent passwd | awk -F: '$7 == \"{shell}\" && $3 >= 1500 && $3 <= 59999' | sort -t: -k3,3 | "
                 f"tail -1 | cut -d: -f1")
        params = {"question": question, "shell": shell}
    init = "\n".join(_useradd(u) for u in users)
    return OsTask("passwd_query", "users", agentbench(desc, init, ["user"], example, match=answer), answer, params,
                  wrong, wrong_answer)


def group_members(rng: random.Random) -> OsTask:
    """Every member of a group, through the primary group field as well as the member list."""
    while True:
        taken: set[str] = set()
        group, other = name(rng, taken), name(rng, taken)
        gid, ogid = rng.sample(range(3000, 9000), 2)
        users = _accounts(rng, rng.randint(4, 9), taken)
        for u in users:
            u["home"] = f"/home/{u['name']}"
            role = rng.choice(["primary", "supplementary", "supplementary", "none", "other"])
            u["role"] = role
            if role == "primary":
                u["group"] = group
            if role == "supplementary":
                u["groups"] = [group] + ([other] if rng.random() < 0.4 else [])
            if role == "other":
                u["groups"] = [other]
        members = sorted(u["name"] for u in users if u["role"] in ("primary", "supplementary"))
        listed = sorted(u["name"] for u in users if u["role"] == "supplementary")
        if members and listed != members:
            break
    form = rng.choice(["list", "count"])
    gather = (f"{{ getent group {group} | cut -d: -f4 | tr ',' '\\n'; "
              f"getent passwd | awk -F: -v g=\"$(getent group {group} | cut -d: -f3)\" '$4 == g {{print $1}}'; }}"
              f" | grep -v '^$' | sort -u")
    if form == "list":
        desc = (f"Which users belong to the group {group}, either as their primary group or as a supplementary "
                f"group? Answer with the user names sorted alphabetically, separated by commas, without spaces.")
        answer, wrong_answer = ",".join(members), ",".join(listed)
        example = f"{gather} | paste -sd,"
        wrong = f"getent group {group} | cut -d: -f4 | tr ',' '\\n' | sort | paste -sd,"
    else:
        desc = (f"How many users belong to the group {group}, counting those for whom it is the primary group as "
                f"well as its supplementary members? Answer with the integer only.")
        answer, wrong_answer = str(len(members)), str(len(listed))
        example = f"{gather} | wc -l"
        wrong = f"getent group {group} | cut -d: -f4 | tr ',' '\\n' | grep -c ."
    init = "\n".join([f"groupadd -g {gid} {group}", f"groupadd -g {ogid} {other}"] + [_useradd(u) for u in users])
    return OsTask("group_members", "users", agentbench(desc, init, ["user", "group"], example, match=answer), answer,
                  {"group": group, "form": form}, wrong, wrong_answer)


def owner_size(rng: random.Random) -> OsTask:
    """Files of one owner (user or group) above or below a size in bytes."""
    while True:
        taken: set[str] = set()
        root = f"/srv/{name(rng, taken)}"
        owners = [name(rng, taken) for _ in range(rng.randint(2, 3))]
        files = [(p, s, rng.choice(owners + ["root"])) for p, s in _sized_files(rng, root, rng.randint(8, 18))]
        who = rng.choice(owners)
        by = rng.choice(["user", "group"])
        direction = rng.choice(["+", "-"])
        limit = rng.randint(200, 4500)
        mine = [s for _, s, o in files if o == who]

        def over(s, lim=limit, d=direction):
            return s > lim if d == "+" else s < lim
        answer = sum(1 for s in mine if over(s))
        variant = rng.choice(["blocks", "owner"])
        if variant == "blocks":                            # -size without c: 512-byte blocks, rounded up
            blocks = [math.ceil(s / 512) for s in mine]
            wrong_answer = sum(1 for b in blocks if (b > limit if direction == "+" else b < limit))
        else:                                              # the owner filter forgotten
            wrong_answer = sum(1 for _, s, _ in files if over(s))
        if answer and answer != wrong_answer:
            break
    rel = "larger than" if direction == "+" else "smaller than"
    desc = (f"How many regular files under {root} (subdirectories and hidden files included) are owned by the "
            f"{by} {who} and are {rel} {limit} bytes? Answer with the integer only.")
    example = f"find {root} -type f -{by} {who} -size {direction}{limit}c | wc -l"
    wrong = (f"find {root} -type f -{by} {who} -size {direction}{limit} | wc -l" if variant == "blocks" else
             f"find {root} -type f -size {direction}{limit}c | wc -l")
    init = [f"useradd -M -U {o}" for o in owners] + [mkdirs([p for p, _, _ in files])]
    init += [f"{fill_bytes(p, s)} && chown {o}:{o} {p}" for p, s, o in files]
    return OsTask("owner_size", "users", agentbench(desc, "\n".join(init), ["file", "user", "permission"], example,
                                                    match=str(answer)),
                  str(answer), {"root": root, "who": who, "by": by, "limit": f"{direction}{limit}"}, wrong,
                  str(wrong_answer))


PERM_QUESTIONS = {
    "group_or_other_write": ("writable by their group or by others (either one is enough)", "/022", "-022"),
    "anyone_exec": ("executable by anyone (owner, group or others)", "/111", "-111"),
    "all_exec": ("executable by all three: owner, group and others", "-111", "/111"),
    "other_read": ("readable by others", "-004", "004"),
    "group_write": ("writable by their group", "-020", "020"),
    "setuid_or_setgid": ("setuid or setgid (either bit)", "/6000", "-6000"),
}
MODES = ["644", "640", "600", "664", "666", "660", "755", "750", "700", "775", "711", "744", "620", "604", "4755",
         "2755", "6755", "2750", "4711", "400", "444", "004", "020", "111"]


def _perm_match(mode: int, spec: str) -> bool:
    if spec.startswith("/"):
        return mode & int(spec[1:], 8) != 0
    if spec.startswith("-"):
        bits = int(spec[1:], 8)
        return mode & bits == bits
    return mode == int(spec, 8)


def perm_count(rng: random.Random) -> OsTask:
    """Files whose permission bits match: any-of (``-perm /``), all-of (``-perm -``) or exact (``-perm``)."""
    while True:
        root = f"/opt/{name(rng)}"
        files = [p for p, _ in _sized_files(rng, root, rng.randint(6, 16))]
        modes = {p: rng.choice(MODES) for p in files}
        key, (phrase, right, wrong_spec) = pick(rng, PERM_QUESTIONS)
        answer = sum(1 for m in modes.values() if _perm_match(int(m, 8), right))
        wrong_answer = sum(1 for m in modes.values() if _perm_match(int(m, 8), wrong_spec))
        if answer and answer != wrong_answer:
            break
    desc = (f"How many regular files under {root} (subdirectories and hidden files included) are {phrase}? "
            f"Answer with the integer only.")
    example = f"find {root} -type f -perm {right} | wc -l"
    wrong = f"find {root} -type f -perm {wrong_spec} | wc -l"
    init = [mkdirs(files)] + [f"echo {rng.choice(WORDS)} > {p} && chmod {m} {p}" for p, m in modes.items()]
    return OsTask("perm_count", "users", agentbench(desc, "\n".join(init), ["permission", "file"], example,
                                                    match=str(answer)),
                  str(answer), {"root": root, "question": key}, wrong, str(wrong_answer))
