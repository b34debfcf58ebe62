"""Parameterised shell tasks in the AgentBench OS-interaction format.

Each generator returns an ``OsTask``: the AgentBench dict (``description``, ``create.init``,
optional ``start`` for background processes, ``evaluation.match`` or ``evaluation.check``,
``evaluation.example``, ``labels``) plus the answer the generator expects, computed here in
Python from the same parameters (the sandbox run must then agree with it).

Two kinds of task:
  * answer tasks: ``evaluation.match`` holds the one correct answer;
  * state tasks: ``evaluation.check.code`` is a bash script that exits 0 once the system is in
    the asked-for state (and must fail right after init, when nothing was done).

The 21 one-command kinds live here; the multi-command kinds in ``questions`` (several commands over
generated data), ``scripts`` (write a command, checked on hidden inputs) and ``discover`` (find out
what a running process does), each with a plausible wrong solution (``OsTask.wrong``).
"""
from __future__ import annotations

import random
from collections.abc import Callable

from pipeline.tasks.common import cell_rng
from pipeline.tasks.os import discover, questions, scripts
from pipeline.tasks.os.base import EXTS as _EXTS
from pipeline.tasks.os.base import WORDS as _WORDS
from pipeline.tasks.os.base import OsTask
from pipeline.tasks.os.base import agentbench as _agentbench
from pipeline.tasks.os.base import name as _name

DOMAINS = ("filesystem", "users", "processes")


def _files(rng: random.Random, root: str, n: int) -> list[tuple[str, int]]:
    """n distinct (path, size) pairs under root, some hidden, some one level down."""
    taken: set[str] = set()
    out = []
    while len(out) < n:
        sub = rng.choice(["", "", "", "sub", "deep/er"])
        base = ("." if rng.random() < 0.15 else "") + _name(rng) + "." + rng.choice(_EXTS)
        path = f"{root}/{sub}/{base}".replace("//", "/")
        if path in taken:
            continue
        taken.add(path)
        out.append((path, rng.randint(1, 4000)))
    return out


def _make_files_script(files: list[tuple[str, int]]) -> str:
    dirs = sorted({p.rsplit("/", 1)[0] for p, _ in files})
    lines = [f"mkdir -p {' '.join(dirs)}"]
    lines += [f"head -c {size} /dev/zero | tr '\\0' 'x' > {p}" for p, size in files]
    return "\n".join(lines)


# ---------------------------------------------------------------- file system

def count_extension(rng: random.Random) -> OsTask:
    root = f"/data/{_name(rng)}"
    files = _files(rng, root, rng.randint(8, 20))
    ext = rng.choice(sorted({p.rsplit(".", 1)[1] for p, _ in files}))
    answer = sum(1 for p, _ in files if p.endswith("." + ext))
    desc = (f"How many regular files with the extension .{ext} are there in {root}, counting subdirectories "
            f"and hidden files? Answer with the integer only.")
    return OsTask("count_extension", "filesystem", _agentbench(
        desc, _make_files_script(files), ["file"], f"find {root} -type f -name '*.{ext}' | wc -l",
        match=str(answer)), str(answer), {"root": root, "ext": ext})


def largest_file(rng: random.Random) -> OsTask:
    root = f"/data/{_name(rng)}"
    files = _files(rng, root, rng.randint(6, 14))
    sizes = [s for _, s in files]
    while len(set(sizes)) != len(sizes):     # unique largest (and a total order) by construction
        files = _files(rng, root, len(files))
        sizes = [s for _, s in files]
    biggest = max(files, key=lambda f: f[1])[0]
    desc = (f"Which regular file under {root} (subdirectories included) is the largest in bytes? "
            f"Answer with its file name only (no directory).")
    return OsTask("largest_file", "filesystem", _agentbench(
        desc, _make_files_script(files), ["file"],
        f"find {root} -type f -printf '%s %f\\n' | sort -n | tail -1 | cut -d' ' -f2",
        match=biggest.rsplit("/", 1)[1]), biggest.rsplit("/", 1)[1], {"root": root})


def count_matching_lines(rng: random.Random) -> OsTask:
    root = f"/var/log/{_name(rng)}"
    word = rng.choice(["ERROR", "WARN", "TIMEOUT", "DENIED"])
    others = ["INFO ok", "DEBUG tick", "INFO done", "NOTICE rotate"]
    lines_script, total = [f"mkdir -p {root}"], 0
    for i in range(rng.randint(2, 4)):
        lines = []
        for _ in range(rng.randint(5, 25)):
            if rng.random() < 0.3:
                lines.append(f"{word} code={rng.randint(100, 999)}")
                total += 1
            else:
                lines.append(rng.choice(others))
        body = "\\n".join(lines)
        lines_script.append(f"printf '{body}\\n' > {root}/part{i}.log")
    lines_script.append(f"printf '{word} in a file that is not a log\\n' > {root}/notes.txt")
    desc = (f"Count the lines containing the word {word} across all files ending in .log directly inside {root}. "
            f"Answer with the integer only.")
    return OsTask("count_matching_lines", "filesystem", _agentbench(
        desc, "\n".join(lines_script), ["file", "log"], f"cat {root}/*.log | grep -c {word}",
        match=str(total)), str(total), {"root": root, "word": word})


def archive_logs(rng: random.Random) -> OsTask:
    root = f"/srv/{_name(rng)}"
    names = sorted({_name(rng) for _ in range(rng.randint(3, 6))})
    keep = sorted({_name(rng) for _ in range(rng.randint(1, 3))} - set(names))
    init = [f"mkdir -p {root}"] + [f"echo 'entry {n}' > {root}/{n}.log" for n in names] + \
           [f"echo 'keep {k}' > {root}/{k}.txt" for k in keep]
    check = [f"[ -d {root}/archive ] || exit 1", f"[ -z \"$(ls {root}/*.log 2>/dev/null)\" ] || exit 1"]
    check += [f"[ \"$(cat {root}/archive/{n}.log)\" = 'entry {n}' ] || exit 1" for n in names]
    check += [f"[ -f {root}/{k}.txt ] || exit 1" for k in keep]
    desc = (f"Move every .log file directly inside {root} into a new directory {root}/archive, keeping their "
            f"names and contents. Leave all other files where they are.")
    return OsTask("archive_logs", "filesystem", _agentbench(
        desc, "\n".join(init), ["file"], f"mkdir -p {root}/archive && mv {root}/*.log {root}/archive/",
        check="\n".join(check)), None, {"root": root, "logs": names})


def delete_empty(rng: random.Random) -> OsTask:
    root = f"/opt/{_name(rng)}"
    empty = sorted({f"{root}/{rng.choice(['', 'a/', 'a/b/'])}{_name(rng)}.tmp" for _ in range(rng.randint(2, 5))})
    full = sorted({f"{root}/{rng.choice(['', 'a/', 'a/b/'])}{_name(rng)}.dat" for _ in range(rng.randint(2, 5))})
    init = [f"mkdir -p {root}/a/b"] + [f"touch {p}" for p in empty] + [f"echo data > {p}" for p in full]
    check = [f"[ ! -e {p} ] || exit 1" for p in empty] + [f"[ -s {p} ] || exit 1" for p in full]
    check.append(f"[ -d {root}/a/b ] || exit 1")
    desc = f"Delete every empty regular file under {root} (recursively). Keep non-empty files and all directories."
    return OsTask("delete_empty", "filesystem", _agentbench(
        desc, "\n".join(init), ["file"], f"find {root} -type f -empty -delete", check="\n".join(check)),
        None, {"root": root})


def rename_extension(rng: random.Random) -> OsTask:
    root = f"/home/media/{_name(rng)}"
    stems = sorted({_name(rng) for _ in range(rng.randint(3, 6))})
    init = [f"mkdir -p {root}"] + [f"echo {s} > {root}/{s}.jpeg" for s in stems] + [f"echo raw > {root}/cover.png"]
    check = [f"[ \"$(cat {root}/{s}.jpg)\" = {s} ] && [ ! -e {root}/{s}.jpeg ] || exit 1" for s in stems]
    check.append(f"[ -f {root}/cover.png ] || exit 1")
    desc = f"In {root}, rename every file ending in .jpeg so that it ends in .jpg instead. Other files stay as they are."
    return OsTask("rename_extension", "filesystem", _agentbench(
        desc, "\n".join(init), ["file"], f"cd {root} && for f in *.jpeg; do mv \"$f\" \"${{f%.jpeg}}.jpg\"; done",
        check="\n".join(check)), None, {"root": root})


def sorted_unique(rng: random.Random) -> OsTask:
    root = f"/srv/{_name(rng)}"
    words = [rng.choice(_WORDS) for _ in range(rng.randint(8, 16))]
    expected = "\n".join(sorted(set(words)))
    body = "\\n".join(words)
    init = f"mkdir -p {root}\nprintf '{body}\\n' > {root}/words.txt"
    check = f"[ \"$(cat {root}/unique.txt)\" = \"$(printf '{expected.replace(chr(10), chr(92) + 'n')}')\" ]"
    desc = (f"Write the distinct lines of {root}/words.txt, sorted alphabetically, one per line, "
            f"into {root}/unique.txt.")
    return OsTask("sorted_unique", "filesystem", _agentbench(
        desc, init, ["file"], f"sort -u {root}/words.txt > {root}/unique.txt", check=check), None, {"root": root})


# ---------------------------------------------------------------- users, groups, permissions

def create_user(rng: random.Random) -> OsTask:
    user, uid = _name(rng), rng.randint(2000, 2999)
    check = (f"[ \"$(getent passwd {user} | cut -d: -f3,6,7)\" = '{uid}:/home/{user}:/bin/bash' ] && "
             f"[ -d /home/{user} ] && [ \"$(stat -c %U /home/{user})\" = {user} ]")
    desc = (f"Create a user named {user} with UID {uid}, login shell /bin/bash and a home directory "
            f"/home/{user} owned by that user.")
    return OsTask("create_user", "users", _agentbench(
        desc, "true", ["user"], f"useradd -m -u {uid} -s /bin/bash {user}", check=check), None,
        {"user": user, "uid": uid})


def add_to_group(rng: random.Random) -> OsTask:
    taken: set[str] = set()
    user, group, other = _name(rng, taken), _name(rng, taken), _name(rng, taken)
    init = f"groupadd {group}\ngroupadd {other}\nuseradd -m -G {other} {user}"
    check = (f"id -nG {user} | tr ' ' '\\n' | grep -qx {group} && id -nG {user} | tr ' ' '\\n' | grep -qx {other}")
    desc = f"Add the existing user {user} to the supplementary group {group}, keeping the groups it already has."
    return OsTask("add_to_group", "users", _agentbench(
        desc, init, ["user", "group"], f"usermod -aG {group} {user}", check=check), None,
        {"user": user, "group": group})


def create_group(rng: random.Random) -> OsTask:
    group, gid = _name(rng), rng.randint(3000, 3999)
    desc = f"Create a group named {group} with GID {gid}."
    return OsTask("create_group", "users", _agentbench(
        desc, "true", ["group"], f"groupadd -g {gid} {group}",
        check=f"[ \"$(getent group {group} | cut -d: -f3)\" = {gid} ]"), None, {"group": group, "gid": gid})


def set_mode(rng: random.Random) -> OsTask:
    path = f"/srv/{_name(rng)}/{_name(rng)}.sh"
    mode = rng.choice(["750", "700", "640", "600", "755", "711", "444", "540"])
    init = f"mkdir -p {path.rsplit('/', 1)[0]}\necho 'echo hi' > {path}\nchmod 666 {path}"
    desc = f"Set the permissions of {path} to {mode} (octal)."
    return OsTask("set_mode", "users", _agentbench(
        desc, init, ["permission", "file"], f"chmod {mode} {path}",
        check=f"[ \"$(stat -c %a {path})\" = {mode} ]"), None, {"path": path, "mode": mode})


def change_owner(rng: random.Random) -> OsTask:
    taken: set[str] = set()
    user, group = _name(rng, taken), _name(rng, taken)
    root = f"/srv/{_name(rng, taken)}"
    files = sorted({_name(rng) for _ in range(rng.randint(2, 4))})
    init = [f"groupadd {group}", f"useradd {user}", f"mkdir -p {root}/inner"] + \
           [f"echo x > {root}/inner/{f}" for f in files]
    check = [f"[ \"$(stat -c %U:%G {root})\" = {user}:{group} ] || exit 1"] + \
            [f"[ \"$(stat -c %U:%G {root}/inner/{f})\" = {user}:{group} ] || exit 1" for f in files]
    desc = f"Make the directory {root} and everything inside it owned by user {user} and group {group}."
    return OsTask("change_owner", "users", _agentbench(
        desc, "\n".join(init), ["permission", "user"], f"chown -R {user}:{group} {root}",
        check="\n".join(check)), None, {"root": root, "user": user, "group": group})


def count_group_members(rng: random.Random) -> OsTask:
    taken: set[str] = set()
    group, decoy = _name(rng, taken), _name(rng, taken)
    users = [_name(rng, taken) for _ in range(rng.randint(3, 7))]
    members = [u for u in users if rng.random() < 0.6] or users[:1]
    init = [f"groupadd {group}", f"groupadd {decoy}"]
    for u in users:
        groups = [g for g, inside in ((group, u in members), (decoy, rng.random() < 0.5)) if inside]
        init.append(f"useradd {'-G ' + ','.join(groups) + ' ' if groups else ''}{u}")
    desc = (f"How many users have {group} as a supplementary group? Answer with the integer only.")
    return OsTask("count_group_members", "users", _agentbench(
        desc, "\n".join(init), ["user", "group"],
        f"getent group {group} | cut -d: -f4 | tr ',' '\\n' | grep -c .", match=str(len(members))),
        str(len(members)), {"group": group})


def uid_of(rng: random.Random) -> OsTask:
    taken: set[str] = set()
    users = [_name(rng, taken) for _ in range(rng.randint(2, 4))]
    uids = rng.sample(range(1500, 1999), len(users))
    target = rng.randrange(len(users))
    init = "\n".join(f"useradd -u {uid} {u}" for u, uid in zip(users, uids))
    desc = f"What is the UID of the user {users[target]}? Answer with the integer only."
    return OsTask("uid_of", "users", _agentbench(
        desc, init, ["user"], f"id -u {users[target]}", match=str(uids[target])), str(uids[target]),
        {"user": users[target]})


def count_executables(rng: random.Random) -> OsTask:
    root = f"/opt/{_name(rng)}/bin"
    names = sorted({_name(rng) for _ in range(rng.randint(4, 9))})
    modes = {n: rng.choice(["755", "644", "700", "600", "744", "640"]) for n in names}
    init = [f"mkdir -p {root}"] + [f"echo '#!/bin/sh' > {root}/{n} && chmod {m} {root}/{n}" for n, m in modes.items()]
    answer = sum(1 for m in modes.values() if int(m[0]) & 1)
    desc = f"How many regular files in {root} are executable by their owner? Answer with the integer only."
    return OsTask("count_executables", "users", _agentbench(
        desc, "\n".join(init), ["permission", "file"], f"find {root} -maxdepth 1 -type f -perm -u+x | wc -l",
        match=str(answer)), str(answer), {"root": root})


# ---------------------------------------------------------------- processes

def _start_workers(names_counts: list[tuple[str, int]], extra: str = "") -> str:
    """Background workers: copies of sleep under distinctive names, started detached; waits until all run."""
    lines = []
    for name, count in names_counts:
        lines.append(f"cp /bin/sleep /usr/local/bin/{name}")
        lines += [f"(setsid {extra}{name} 600 > /dev/null 2>&1 &)"] * count
    waits = " && ".join(f"[ \"$(pgrep -xc {n})\" -ge {c} ]" for n, c in names_counts if c)
    lines.append(f"for i in $(seq 100); do {waits} && break; sleep 0.05; done")
    return "\n".join(lines)


def _proc_names(rng: random.Random, k: int) -> list[str]:
    taken: set[str] = set()
    return [_name(rng, taken)[:15] for _ in range(k)]


def count_processes(rng: random.Random) -> OsTask:
    target, decoy = _proc_names(rng, 2)
    n, m = rng.randint(2, 6), rng.randint(1, 4)
    desc = f"How many processes named {target} are running right now? Answer with the integer only."
    return OsTask("count_processes", "processes", _agentbench(
        desc, "true", ["process"], f"pgrep -xc {target}", match=str(n),
        start=_start_workers([(target, n), (decoy, m)])), str(n), {"target": target})


def kill_processes(rng: random.Random) -> OsTask:
    target, keep = _proc_names(rng, 2)
    n, m = rng.randint(1, 4), rng.randint(1, 3)
    check = f"! pgrep -x {target} > /dev/null && [ \"$(pgrep -xc {keep})\" = {m} ]"
    desc = f"Terminate every process named {target}. Processes named {keep} must keep running."
    return OsTask("kill_processes", "processes", _agentbench(
        desc, "true", ["process"], f"pkill -x {target}; for i in $(seq 50); do pgrep -x {target} > /dev/null || break; sleep 0.05; done",
        check=check, start=_start_workers([(target, n), (keep, m)])), None, {"target": target})


def pid_file(rng: random.Random) -> OsTask:
    target, decoy = _proc_names(rng, 2)
    check = f"[ \"$(cat /root/{target}.pid)\" = \"$(pgrep -xo {target})\" ]"
    desc = (f"Exactly one process named {target} is running. Write its PID (the number only) into the file "
            f"/root/{target}.pid.")
    return OsTask("pid_file", "processes", _agentbench(
        desc, "true", ["process", "file"], f"pgrep -xo {target} > /root/{target}.pid", check=check,
        start=_start_workers([(target, 1), (decoy, rng.randint(1, 3))])), None, {"target": target})


def child_count(rng: random.Random) -> OsTask:
    parent, child = _proc_names(rng, 2)
    k = rng.randint(2, 5)
    children = " ".join([f"{child} 600 &"] * k)
    start = (f"cp /bin/bash /usr/local/bin/{parent}\ncp /bin/sleep /usr/local/bin/{child}\n"
             f"(setsid {parent} -c '{children} wait' > /dev/null 2>&1 &)\n"
             f"for i in $(seq 100); do [ \"$(pgrep -xc {child})\" -ge {k} ] && break; sleep 0.05; done")
    desc = f"How many direct child processes does the process named {parent} have? Answer with the integer only."
    return OsTask("child_count", "processes", _agentbench(
        desc, "true", ["process"], f"pgrep -P \"$(pgrep -xo {parent})\" | wc -l", match=str(k), start=start),
        str(k), {"parent": parent})


def process_env(rng: random.Random) -> OsTask:
    target, = _proc_names(rng, 1)
    var = rng.choice(["DEPLOY_TOKEN", "SERVICE_COLOR", "REGION_CODE", "BUILD_TAG"])
    value = f"{rng.choice(_WORDS)}-{rng.randint(1000, 9999)}"
    desc = (f"A process named {target} is running. What is the value of the environment variable {var} in "
            f"that process's environment? Answer with the value only.")
    return OsTask("process_env", "processes", _agentbench(
        desc, "true", ["process"],
        f"tr '\\0' '\\n' < /proc/$(pgrep -xo {target})/environ | grep '^{var}=' | cut -d= -f2-",
        match=value, start=_start_workers([(target, 1)], extra=f"env {var}={value} ")), value,
        {"target": target, "var": var})


def renice(rng: random.Random) -> OsTask:
    target, = _proc_names(rng, 1)
    nice = rng.randint(5, 19)
    desc = f"Change the niceness of the running process named {target} to {nice}."
    return OsTask("renice", "processes", _agentbench(
        desc, "true", ["process"], f"renice -n {nice} -p \"$(pgrep -xo {target})\" > /dev/null",
        check=f"[ \"$(ps -o ni= -p \"$(pgrep -xo {target})\" | tr -d ' ')\" = {nice} ]",
        start=_start_workers([(target, 1)])), None, {"target": target, "nice": nice})


GENERATORS: dict[str, list[Callable[[random.Random], OsTask]]] = {
    "filesystem": [count_extension, largest_file, count_matching_lines, archive_logs, delete_empty,
                   rename_extension, sorted_unique,
                   questions.access_log_window, questions.access_log_top, questions.csv_aggregate,
                   questions.grep_tree, questions.ext_sizes, questions.file_times,
                   scripts.write_csv_command, scripts.write_text_command, scripts.write_dir_command],
    "users": [create_user, add_to_group, create_group, set_mode, change_owner, count_group_members, uid_of,
              count_executables,
              questions.passwd_query, questions.group_members, questions.owner_size, questions.perm_count],
    "processes": [count_processes, kill_processes, pid_file, child_count, process_env, renice,
                  discover.proc_open_file, discover.proc_stop_writer, discover.proc_parent,
                  discover.proc_listen_port, discover.proc_user_count, discover.proc_interval],
}


GENERATOR_BY_KIND: dict[str, Callable[[random.Random], OsTask]] = {
    gen.__name__: gen for gens in GENERATORS.values() for gen in gens}
MAX_DRAWS = 3000            # draws per kind; their distinct descriptions are the kind's space


def kinds() -> list[str]:
    """Every task kind, domains in turn (first of each domain, then second...): a small count reaches
    every domain first."""
    width = max(len(g) for g in GENERATORS.values())
    return [GENERATORS[d][i].__name__ for i in range(width) for d in DOMAINS if i < len(GENERATORS[d])]


def kind_draws(seed: int, kind: str, max_draws: int = MAX_DRAWS):
    """``((description,), task)`` for each of a kind's draws, from the kind's own seeded stream."""
    rng = cell_rng(seed, "os", kind)
    for _ in range(max_draws):
        task = GENERATOR_BY_KIND[kind](rng)
        yield (task.task["description"],), task


def generate(count: int, seed: int) -> list[OsTask]:
    """``count`` tasks, domains in turn and generators in turn within a domain; deterministic per seed."""
    rng = random.Random(seed)
    out: list[OsTask] = []
    seen: set[str] = set()
    turn = 0
    while len(out) < count:
        domain = DOMAINS[turn % len(DOMAINS)]
        gens = GENERATORS[domain]
        gen = gens[(turn // len(DOMAINS)) % len(gens)]
        turn += 1
        task = gen(rng)
        if task.task["description"] in seen:
            continue
        seen.add(task.task["description"])
        out.append(task)
    return out
