"""Find out what a running process does: the ``start`` script launches background processes (copies of
bash, sleep or python3 under task-specific names, so ``comm`` tells them apart) that write files,
listen on ports, run as other users or hang under launchers; the agent must discover which file,
which port, which parent, which user, and answer or act on it.

Each kind has a plausible wrong solution that reads the wrong evidence: the newest file by time
stamp (a decoy is dated in the future), a stale config file, the oldest process of the name,
every process of the name instead of one user's, killing instead of pausing.
"""
from __future__ import annotations

import random

from pipeline.tasks.os.base import WORDS, OsTask, agentbench, name, write_file

# processes whose age order matters (``pgrep -o``, the oldest, is a wrong guess) start at least this many
# seconds apart: start times count in 10 ms clock ticks, and a tie would make "the oldest" a coin toss
TICK = "0.05"
PORT_VARS = ["SERVICE_PORT", "LISTEN_PORT", "APP_PORT", "BIND_PORT", "HTTP_PORT"]


def _names(rng: random.Random, k: int) -> list[str]:
    taken: set[str] = set()
    return [name(rng, taken) for _ in range(k)]


def _wait(condition: str, tries: int = 200) -> str:
    return f"for i in $(seq {tries}); do {condition} && break; sleep 0.05; done"


def _writer(proc: str, path: str, held: bool, interval: str, word: str) -> str:
    """A copy of bash named ``proc`` appending ``word`` lines to ``path`` (fd held open or reopened)."""
    if held:
        loop = f"exec 3>>\"$OUT\"; while :; do echo {word} >&3; sleep {interval}; done"
    else:
        loop = f"while :; do echo {word} >> \"$OUT\"; sleep {interval}; done"
    return f"(cd / && OUT={path} setsid {proc} -c '{loop}' > /dev/null 2>&1 &)"


def proc_open_file(rng: random.Random) -> OsTask:
    """Which file a named process keeps appending to, among decoys (one dated in the future)."""
    proc, other, svc = _names(rng, 3)
    root = f"/var/lib/{svc}"
    files = sorted({f"{root}/{rng.choice(WORDS)}{rng.randint(1, 99)}.{rng.choice(['log', 'out', 'dat', 'txt'])}"
                    for _ in range(rng.randint(4, 8))})
    target, future = rng.sample(files, 2)
    held = rng.random() < 0.5
    start = [f"mkdir -p {root} /var/tmp/{other}", f"cp /bin/bash /usr/local/bin/{proc}",
             f"cp /bin/bash /usr/local/bin/{other}"]
    start += [f"echo {rng.choice(WORDS)} > {f}" for f in files if f != target]
    start.append(f"touch -d '2099-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 12:00:00' {future}")
    decoy_out = f"{root}/{rng.choice(WORDS)}-{rng.randint(100, 999)}.log" if held else f"/var/tmp/{other}/out.log"
    start.append(_writer(other, decoy_out, False, "0.2", "beat"))
    start.append(_writer(proc, target, held, "0.2", rng.choice(WORDS)))
    start.append(_wait(f"[ -s {target} ] && [ -s {decoy_out} ]"))
    desc = (f"A process named {proc} keeps appending lines to one file under {root}. Which file is it? "
            f"Answer with the file's full path.")
    if held:
        example = f"readlink /proc/$(pgrep -xo {proc})/fd/* | grep '^{root}/'"
    else:
        snap = f"find {root} -type f -printf '%s %p\\n' | sort"
        example = f"{snap} > /tmp/before; sleep 1; {snap} > /tmp/after; comm -13 /tmp/before /tmp/after | cut -d' ' -f2"
    wrong = f"echo {root}/$(ls -t {root} | head -1)"
    return OsTask("proc_open_file", "processes", agentbench(desc, "true", ["process", "file", "background"], example,
                                                            match=target, start="\n".join(start)),
                  target, {"process": proc, "held": held}, wrong, future)


def proc_stop_writer(rng: random.Random) -> OsTask:
    """Terminate or pause the one process (of several with the same name) that writes a given file."""
    proc, svc = _names(rng, 2)
    root = f"/var/spool/{svc}"
    n = rng.randint(2, 4)
    outs = [f"{root}/{w}.log" for w in rng.sample(WORDS, n)]
    target_i = rng.randrange(1, n)            # never the oldest: ``the oldest one`` is a wrong guess
    target = outs[target_i]
    action = rng.choice(["terminate", "pause"])
    start = [f"mkdir -p {root}", f"cp /bin/bash /usr/local/bin/{proc}"]
    for out in outs:
        start.append(_writer(proc, out, True, "0.1", rng.choice(WORDS)))
        start.append(_wait(f"[ -s {out} ]") + f"; sleep {TICK}")
    find_pid = f"for p in $(pgrep -x {proc}); do [ \"$(readlink /proc/$p/fd/3)\" = {target} ] && echo $p; done"
    holds = f"readlink /proc/$p/fd/3 | grep -q '^{target}'"
    # the check counts live writers only: a killed one stays a zombie until PID 1 reaps it, and a writer's
    # fork on its way to exec sleep has its name and fd 3 for a moment (the writers lead their sessions)
    live = (f"live() {{ for p in $(pgrep -x {proc}); do s=$(ps -o stat= -p $p); "
            f"case \"$s\" in Z*) ;; *s*) echo $p ;; esac; done; }}")
    if action == "terminate":
        desc = (f"Several processes named {proc} are running, each appending to its own file under {root}. Terminate "
                f"the one that writes to {target}; the other {proc} processes must keep running.")
        example = (f"p=$({find_pid}); kill $p; "
                   f"for i in $(seq 100); do [ \"$(ps -o stat= -p $p | tr -d ' Z')\" ] || break; sleep 0.05; done")
        done = (f"[ \"$(live | wc -l)\" = {n - 1} ] && "
                f"! {{ for p in $(live); do {holds} && echo $p; done | grep -q .; }}")
        wrong = rng.choice([f"pkill -x {proc}", f"kill $(pgrep -xo {proc})"])
    else:
        desc = (f"Several processes named {proc} are running, each appending to its own file under {root}. Pause "
                f"(suspend, without ending it) the one that writes to {target}, so that it can be resumed later; "
                f"the other {proc} processes must keep running.")
        example = f"kill -STOP $({find_pid})"
        done = (f"[ \"$(live | wc -l)\" = {n} ] && for p in $(live); do "
                f"s=$(ps -o stat= -p $p | cut -c1); if {holds}; then [ \"$s\" = T ] || exit 1; "
                f"else [ \"$s\" != T ] || exit 1; fi; done")
        wrong = f"kill $({find_pid})"
    # wait a moment for the state to show, then ask it to hold 0.3 s later (a pkill of every process
    # passes through the asked-for count on its way to none)
    check = (f"{live}\nok() ( {done} )\n"
             f"for i in $(seq 8); do ok && {{ sleep 0.3; ok; exit $?; }}; sleep 0.05; done\nexit 1")
    return OsTask("proc_stop_writer", "processes", agentbench(desc, "true", ["process", "background"], example,
                                                              check=check, start="\n".join(start)),
                  None, {"process": proc, "action": action, "target": target}, wrong)


def proc_parent(rng: random.Random) -> OsTask:
    """The parent, or the siblings, of one of several same-named processes started by different launchers."""
    proc, *launchers = _names(rng, rng.randint(3, 4))
    args = rng.sample(range(600, 1000), 3 * len(launchers))
    kids = {}
    for i, launcher in enumerate(launchers):
        kids[launcher] = args[:rng.randint(1, 3)]
        args = args[len(kids[launcher]):]
    owner = rng.choice(launchers[1:])          # never the first launcher: its children are the oldest
    question = rng.choice(["parent", "siblings"])
    if question == "siblings" and len(kids[owner]) < 2:    # at least one sibling: 0 is what an idle guess says
        kids[owner].append(args.pop())
    target = rng.choice(kids[owner])
    start = [f"cp /bin/sleep /usr/local/bin/{proc}"]
    total = 0
    for launcher in launchers:
        body = " ".join(f"{proc} {a} &" for a in kids[launcher]) + " wait"
        total += len(kids[launcher])
        start += [f"cp /bin/bash /usr/local/bin/{launcher}",
                  f"(cd / && setsid {launcher} -c '{body}' > /dev/null 2>&1 &)",
                  _wait(f"[ \"$(pgrep -xc {proc})\" -ge {total} ]") + f"; sleep {TICK}"]
    target_pid = f"$(pgrep -xf '{proc} {target}')"
    if question == "parent":
        desc = (f"Several processes named {proc} are running. What is the name of the parent process of the one "
                f"that was started with the argument {target}? Answer with the process name only.")
        example = f"ps -o comm= -p \"$(ps -o ppid= -p {target_pid} | tr -d ' ')\""
        wrong = f"ps -o comm= -p \"$(ps -o ppid= -p $(pgrep -xo {proc}) | tr -d ' ')\""
        answer, wrong_answer = owner, launchers[0]
    else:
        desc = (f"Several processes named {proc} are running. How many other {proc} processes have the same parent "
                f"as the one that was started with the argument {target}? Answer with the integer only.")
        example = (f"pgrep -x -P \"$(ps -o ppid= -p {target_pid} | tr -d ' ')\" {proc} | grep -vx {target_pid} | "
                   f"wc -l")
        wrong = f"echo $(( $(pgrep -xc {proc}) - 1 ))"
        answer, wrong_answer = str(len(kids[owner]) - 1), str(total - 1)
    return OsTask("proc_parent", "processes", agentbench(desc, "true", ["process", "background"], example,
                                                         match=answer, start="\n".join(start)),
                  answer, {"process": proc, "question": question, "argument": target}, wrong, wrong_answer)


_SERVER = ["import os, socket, time",
           "s = socket.socket()",
           "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)",
           "s.bind(('127.0.0.1', int(os.environ['{var}'])))",
           "s.listen()",
           "time.sleep(3600)"]


def proc_listen_port(rng: random.Random) -> OsTask:
    """Which port a service really listens on (its config file is stale), or which service holds a port."""
    services = _names(rng, rng.randint(2, 4))
    ports = rng.sample(range(2000, 9999), 2 * len(services))
    real = dict(zip(services, ports[:len(services)]))
    var = rng.choice(PORT_VARS)
    question = rng.choice(["port_of", "owner_of"])
    target = rng.choice(services)
    stale = dict(zip(services, ports[len(services):]))
    if question == "owner_of":
        other = rng.choice([s for s in services if s != target])
        stale[other] = real[target]           # another service's config names the port: a stale leftover
    start = []
    for s in services:
        start += [f"mkdir -p /opt/{s} /etc/{s}", write_file(f"/opt/{s}/server.py", [x.format(var=var) for x in _SERVER]),
                  write_file(f"/etc/{s}/{s}.conf", [f"# {s} settings", f"port = {stale[s]}", "workers = 2"]),
                  f"ln -s /usr/bin/python3 /usr/local/bin/{s}",
                  f"(cd / && {var}={real[s]} setsid {s} /opt/{s}/server.py > /dev/null 2>&1 &)"]
    start.append(_wait(" && ".join(f"ss -ltn | grep -q ':{p} '" for p in real.values())))
    if question == "port_of":
        desc = (f"The service {target} is running on this machine (process name {target}). On which TCP port is it "
                f"listening right now? Answer with the port number only.")
        example = f"ss -ltnpH | grep '\"{target}\"' | awk '{{print $4}}' | sed 's/.*://'"
        wrong = f"sed -n 's/^port = //p' /etc/{target}/{target}.conf"
        answer, wrong_answer = str(real[target]), str(stale[target])
    else:
        port = real[target]
        desc = (f"Which running process is listening on TCP port {port}? Answer with its process name only.")
        example = f"ss -ltnpH 'sport = :{port}' | grep -o '\"[^\"]*\"' | tr -d '\"'"
        wrong = f"grep -l '^port = {port}$' /etc/*/*.conf | xargs -n1 basename | sed 's/\\.conf$//'"
        answer, wrong_answer = target, other
    return OsTask("proc_listen_port", "processes", agentbench(desc, "true", ["process", "network", "background"],
                                                              example, match=answer, start="\n".join(start)),
                  answer, {"services": services, "question": question, "target": target}, wrong, wrong_answer)


def proc_user_count(rng: random.Random) -> OsTask:
    """Processes of one name per owning user: one user's count, or the user who runs the most."""
    proc, *users = _names(rng, rng.randint(3, 4))
    question = rng.choice(["count", "most"])      # drawn once: the loop redraws the counts only
    while True:
        counts = {u: rng.randint(0, 4) for u in users}
        counts["root"] = rng.randint(0, 3)
        order = [u for u in users + ["root"] if counts[u]]
        rng.shuffle(order)
        if not order:
            continue
        oldest = order[0]
        if question == "count":
            who = rng.choice(users)
            answer, wrong_answer = str(counts[who]), str(sum(counts.values()))
            if counts[who] and answer != wrong_answer:
                break
        else:
            top = sorted(counts.items(), key=lambda kv: -kv[1])
            if top[0][1] != top[1][1] and top[0][0] != oldest:
                answer, wrong_answer = top[0][0], oldest
                break
    init = "\n".join(f"useradd -M -U {u}" for u in users)
    start = [f"cp /bin/sleep /usr/local/bin/{proc}"]
    total = 0
    for u in order:
        run = proc if u == "root" else f"setpriv --reuid={u} --regid={u} --init-groups {proc}"
        start += [f"(cd / && setsid {run} {rng.randint(600, 999)} > /dev/null 2>&1 &)"] * counts[u]
        total += counts[u]
        start.append(_wait(f"[ \"$(pgrep -xc {proc})\" -ge {total} ]") + f"; sleep {TICK}")
    if question == "count":
        desc = (f"How many processes named {proc} are running as the user {who}? Answer with the integer only.")
        example = f"pgrep -xc -u {who} {proc}"
        wrong = f"pgrep -xc {proc}"
    else:
        desc = (f"Several users run processes named {proc}. Which user runs the most of them? Answer with the user "
                f"name only.")
        example = f"ps -C {proc} -o user:32= | sort | uniq -c | sort -k1,1nr | head -1 | awk '{{print $2}}'"
        wrong = f"ps -o user:32= -p $(pgrep -xo {proc})"
    return OsTask("proc_user_count", "processes", agentbench(desc, init, ["process", "user", "background"], example,
                                                             match=answer, start="\n".join(start)),
                  answer, {"process": proc, "question": question}, wrong, wrong_answer)


def proc_interval(rng: random.Random) -> OsTask:
    """How often a process writes: its script takes the interval from a default, a config file or its
    environment (only one is in force); the agent reads the evidence or times it."""
    proc, svc = _names(rng, 2)
    default, conf_value, env_value = rng.sample(range(2, 90), 3)
    source = rng.choice(["env", "config", "default"])
    var = f"{svc.rstrip('0123456789').upper()}_INTERVAL"
    script = f"/opt/{svc}/bin/{proc}.sh"
    conf = f"/etc/{svc}/{proc}.conf"
    out = f"/var/log/{svc}/{proc}.log"
    lines = ["#!/bin/bash", f"INTERVAL=${{{var}:-{default}}}",
             "[ -n \"$1\" ] && [ -f \"$1\" ] && INTERVAL=$(sed -n 's/^interval=//p' \"$1\")",
             f"while :; do echo \"$(date +%s) alive\" >> {out}; sleep \"$INTERVAL\"; done"]
    conf_lines = [f"# {proc} configuration", f"interval={conf_value}"]
    env = f"{var}={env_value} " if source == "env" else ""
    arg = f" {conf}" if source == "config" else ""
    spare = f"{conf}.example" if source != "config" else f"{conf}.old"
    start = [f"mkdir -p /opt/{svc}/bin /etc/{svc} /var/log/{svc}", write_file(script, lines, "755"),
             write_file(spare if source != "config" else conf, conf_lines),
             write_file(spare if source == "config" else f"/etc/{svc}/defaults",
                        [f"interval={rng.choice([v for v in range(2, 90) if v not in (default, conf_value, env_value)])}"]),
             f"cp /bin/bash /usr/local/bin/{proc}",
             f"(cd / && {env}setsid {proc} {script}{arg} > /dev/null 2>&1 &)",
             _wait(f"[ -s {out} ]")]
    answer = {"env": env_value, "config": conf_value, "default": default}[source]
    desc = (f"A process named {proc} appends a line to {out} at a fixed interval. How many seconds does it wait "
            f"between two lines? Answer with the integer only.")
    pid = f"$(pgrep -xo {proc})"
    if source == "env":
        example = f"tr '\\0' '\\n' < /proc/{pid}/environ | sed -n 's/^{var}=//p'"
        wrong = f"sed -n 's/^INTERVAL=${{{var}:-\\([0-9]*\\)}}/\\1/p' {script}"
        wrong_answer = default
    elif source == "config":
        example = f"sed -n 's/^interval=//p' \"$(tr '\\0' '\\n' < /proc/{pid}/cmdline | sed -n 3p)\""
        wrong = f"sed -n 's/^INTERVAL=${{{var}:-\\([0-9]*\\)}}/\\1/p' {script}"
        wrong_answer = default
    else:
        example = f"sed -n 's/^INTERVAL=${{{var}:-\\([0-9]*\\)}}/\\1/p' {script}"
        wrong = f"sed -n 's/^interval=//p' {spare}"
        wrong_answer = conf_value
    return OsTask("proc_interval", "processes", agentbench(desc, "true", ["process", "file", "background"], example,
                                                           match=str(answer), start="\n".join(start)),
                  str(answer), {"process": proc, "source": source}, wrong, str(wrong_answer))

