"""The sandbox's plain helpers by hand: the message that says what to install, path containment
(the cases benchmarks/mutation.py found no test for; no sandbox is started here)."""
from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager

import pytest

from pipeline.tools import sandbox

TAIL = ("install bubblewrap (Debian package 'bubblewrap') or run as root for unshare, or set "
        "sandbox_allow_unisolated = true (LEGWORK_SANDBOX_ALLOW_NONE=1) to run it without isolation "
        "(resource limits only)")


@pytest.mark.parametrize("present, works, root, why", [
    ({"bwrap", "unshare", "setpriv"}, {"bwrap": False, "unshare": False}, True,
     ("bwrap cannot create namespaces here, cannot start the interpreter or fails the isolation check; "
     "unshare cannot create namespaces here, cannot start the interpreter or fails the isolation check")),
    (set(), {}, True, "bwrap not installed; unshare/setpriv (util-linux) not installed"),
    ({"unshare"}, {}, True, "bwrap not installed; unshare/setpriv (util-linux) not installed"),
    ({"setpriv"}, {}, False, "bwrap not installed; not root (unshare mode)"),
    ({"bwrap", "unshare", "setpriv"}, {"bwrap": True, "unshare": True}, True, ""),
])
def test_missing_sandbox_message_says_what_is_missing(monkeypatch, present, works, root, why):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: f"/usr/bin/{name}" if name in present else None)
    monkeypatch.setattr(sandbox, "_works", lambda isolation: works[isolation])
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0 if root else 1000)
    assert sandbox.missing_sandbox_message() == f"no sandbox for agent code ({why}): {TAIL}"


def test_under():
    assert sandbox._under("/usr", "/usr") and sandbox._under("/usr/lib", "/usr") and sandbox._under("/usr/lib", "/usr/")
    assert not sandbox._under("/usrlocal", "/usr") and not sandbox._under("/", "/usr")
    assert not sandbox._under("/usr/lib", "/usrX") and sandbox._under("/usrX/lib", "/usrX/")


@pytest.mark.parametrize("present, works, available", [
    (set(), set(), ["none"]),
    ({"bwrap", "unshare"}, {"unshare"}, ["unshare", "none"]),
    ({"unshare"}, {"bwrap", "unshare"}, ["unshare", "none"]),      # a probe that works needs the tool too
    ({"bwrap", "unshare"}, {"bwrap", "unshare"}, ["bwrap", "unshare", "none"]),
])
def test_available_isolations(monkeypatch, present, works, available):
    monkeypatch.setattr(sandbox, "_tool_present", lambda isolation: isolation in present)
    monkeypatch.setattr(sandbox, "_works", lambda isolation: isolation in works)   # "none" needs no probe
    assert sandbox.available_isolations() == available
    assert sandbox.best_isolation() == available[0]
    assert sandbox.isolation_available() is (available[0] != "none")
    if available[0] == "none":
        with pytest.raises(sandbox.SandboxUnavailable):
            sandbox.choose_isolation()
        assert sandbox.choose_isolation(allow_unisolated=True) == "none"
    else:
        assert sandbox.choose_isolation() == available[0]


def test_a_probe_shows_nothing_and_reads_nothing(capfd):
    import sys
    here = os.getcwd()
    assert sandbox._probe([sys.executable, "-c", ("import sys; print('out'); print('err', file=sys.stderr); "
                                             "sys.exit(0 if sys.stdin.read() == '' else 1)")], here)
    assert capfd.readouterr() == ("", "")
    assert not sandbox._probe([sys.executable, "-c", "raise SystemExit(3)"], here)
    assert not sandbox._probe(["/no/such/program"], here)


def test_a_probe_runs_in_the_folder_given_with_the_sandbox_environment(tmp_path):
    import sys
    check = ("import os, sys\nsys.exit(os.getcwd() != {cwd!r} or sorted(os.environ) != {keys!r} "
             "or os.environ['HOME'] != '/tmp/work')")
    keys = sorted(["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PYTHONHASHSEED", "PYTHONIOENCODING",
                   "PYTHONDONTWRITEBYTECODE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"])
    assert sandbox._probe([sys.executable, "-c", check.format(cwd=str(tmp_path), keys=keys)], str(tmp_path))
    # the control: the same check fails for another folder
    assert not sandbox._probe([sys.executable, "-c", check.format(cwd="/elsewhere", keys=keys)], str(tmp_path))


@pytest.mark.parametrize("present, root, bwrap, unshare", [
    ({"bwrap", "unshare", "setpriv"}, True, True, True),
    ({"bwrap", "unshare", "setpriv"}, False, True, False),      # unshare mode needs root
    ({"bwrap", "unshare"}, True, False, False),                 # as root both need setpriv to drop privileges
    ({"bwrap"}, False, True, False),                            # bwrap as another user does not
    ({"unshare", "setpriv"}, True, False, True),
    ({"setpriv"}, True, False, False),
    (set(), True, False, False),
])
def test_tool_present(monkeypatch, present, root, bwrap, unshare):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: f"/usr/bin/{name}" if name in present else None)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0 if root else 1000)
    assert (sandbox._tool_present("bwrap"), sandbox._tool_present("unshare")) == (bwrap, unshare)
    assert sandbox._tool_present("none") is True


@contextmanager
def typed_stdin(text: bytes):
    """This process's stdin (fd 0) a pipe holding ``text``, for as long as the block runs."""
    read_end, write_end = os.pipe()
    os.write(write_end, text)
    os.close(write_end)
    saved = os.dup(0)
    os.dup2(read_end, 0)
    os.close(read_end)
    try:
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)


def test_a_probe_reads_nothing_of_the_callers_stdin(tmp_path):
    import subprocess
    import sys
    reads = [sys.executable, "-c", "import sys; sys.exit(0 if sys.stdin.read() == '' else 1)"]
    with typed_stdin(b"typed by the caller"):          # the control: a child that inherits stdin reads it
        assert subprocess.run(reads, check=False).returncode == 1
    with typed_stdin(b"typed by the caller"):
        assert sandbox._probe(reads, str(tmp_path))


def test_missing_setpriv_as_root(monkeypatch):
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: "/usr/bin/bwrap" if name == "bwrap" else None)
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    assert sandbox.missing_sandbox_message() == (
        "no sandbox for agent code (setpriv (util-linux) not installed, needed by bwrap as root to drop to an "
        f"unprivileged user; unshare/setpriv (util-linux) not installed): {TAIL}")


def test_result_to_dict():
    result = sandbox.SandboxResult("out", "err", 137, True, "bwrap", "time")
    assert result.to_dict() == {"stdout": "out", "stderr": "err", "exit_code": 137, "timed_out": True,
                                "isolation": "bwrap", "limit": "time"}


# ---- the paths the sandbox shows ------------------------------------------------------------------

def test_parents_and_destination():
    assert sandbox._parents("/a/b/c") == ["/a", "/a/b"]
    assert sandbox._parents("/X/Y/Z/") == ["/X", "/X/Y"]
    assert sandbox._parents("/a") == [] and sandbox._parents("a/b") == ["/a"]
    assert sandbox._destination(["file", "/host/etc/passwd", "/etc/passwd"]) == "/etc/passwd"
    assert sandbox._destination(["rw", "/host/work", "/tmp/work"]) == "/tmp/work"
    for kind in ("ro", "mask", "link", "dev", "proc", "tmpfs"):
        assert sandbox._destination([kind, "/p", "t"]) == "/p"


def test_path_variants(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "file").write_text("x")
    got = sandbox._path_variants([str(tmp_path / "link"), str(tmp_path / "file"), str(tmp_path / "nothing"), "/",
                                  str(tmp_path / "real" / ".." / "real")])
    assert got == {str(tmp_path / "link"), str(real)}          # folders only, absolute and real, never /


def test_private_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "extra").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "extra")
    from pipeline.config import PROJECT_ROOT
    expected = {os.path.realpath(str(PROJECT_ROOT)), str(tmp_path / "home"), "/root", "/home", str(tmp_path / "extra")}
    assert sandbox.private_paths((str(tmp_path / "alias"), "", "/")) == sorted(expected)


def fake_interpreter(monkeypatch, tmp_path):
    """An interpreter laid out under tmp_path: a virtualenv whose bin/python links to a base install."""
    base, venv, user = tmp_path / "base", tmp_path / "venv", tmp_path / "user"
    for d in (base / "bin", base / "lib" / "python3.11", venv / "bin", venv / "lib" / "site-packages",
              tmp_path / "deb" / "dist-packages", user / "site-packages", tmp_path / "other"):
        d.mkdir(parents=True)
    (base / "bin" / "python3.11").write_text("")
    (venv / "bin" / "python").symlink_to(base / "bin" / "python3.11")
    monkeypatch.setattr(sandbox.sys, "prefix", str(venv))
    monkeypatch.setattr(sandbox.sys, "exec_prefix", str(venv))
    monkeypatch.setattr(sandbox.sys, "base_prefix", str(base))
    monkeypatch.setattr(sandbox.sys, "base_exec_prefix", str(tmp_path / "other"))
    monkeypatch.setattr(sandbox.sys, "executable", str(venv / "bin" / "python"))
    monkeypatch.setattr(sandbox.sys, "path", ["", str(base / "lib" / "python3.11"), str(venv / "lib" / "site-packages"),
                                              str(tmp_path / "deb" / "dist-packages"), str(user / "site-packages")])
    import site
    monkeypatch.setattr(site, "getusersitepackages", lambda: str(user / "site-packages"))
    return base, venv


def test_interpreter_candidates(monkeypatch, tmp_path):
    base, venv = fake_interpreter(monkeypatch, tmp_path)
    # the prefixes, the executable's folder and its real folder, site- and dist-packages but the user's own
    # (compared as sets: the callers make a set of them, order and repeats do not matter)
    assert set(sandbox._interpreter_candidates()) == {
        str(venv), str(base), str(tmp_path / "other"), str(venv / "bin"), str(base / "bin"),
        str(venv / "lib" / "site-packages"), str(tmp_path / "deb" / "dist-packages")}
    # an old site module without getusersitepackages: no user site to leave out
    import site
    monkeypatch.delattr(site, "getusersitepackages")
    assert str(tmp_path / "user" / "site-packages") in sandbox._interpreter_candidates()
    monkeypatch.setattr(sandbox.sys, "executable", "")                    # an embedded interpreter
    assert str(venv / "bin") not in sandbox._interpreter_candidates()
    assert "" not in sandbox._interpreter_candidates()


def test_interpreter_paths(monkeypatch, tmp_path):
    base, venv = fake_interpreter(monkeypatch, tmp_path)
    # hidden: the folder holding the virtualenv (itself never kept), and the base install's lib folder
    hidden = (str(tmp_path / "venv"), str(base / "lib"))
    # the venv is a hidden root itself; inside it: bin (bin/python's folder) and site-packages
    assert sandbox.interpreter_paths(hidden) == [str(venv / "bin"), str(venv / "lib" / "site-packages")]
    assert sandbox.interpreter_paths((str(tmp_path),)) == sorted(
        [str(base), str(tmp_path / "deb" / "dist-packages"), str(tmp_path / "other"), str(venv)])
    assert sandbox.interpreter_paths(("/nowhere",)) == []
    root = os.stat("/").st_dev
    elsewhere = [p for p in (str(base), str(venv), str(tmp_path / "deb" / "dist-packages"), str(tmp_path / "other"))
                 if os.stat(p).st_dev != root]
    from pipeline.config import PROJECT_ROOT
    project = os.path.realpath(str(PROJECT_ROOT))
    with_other_fs = sandbox.interpreter_paths(hidden, other_filesystems=True)
    assert set(with_other_fs) - {project} == set(sandbox.outermost(
        {str(venv / "bin"), str(venv / "lib" / "site-packages"), *elsewhere})) - {project}
    assert (project in with_other_fs) == (os.stat(project).st_dev != root)
    # defaults: hidden under /tmp, not looking at other filesystems
    assert sandbox.interpreter_paths() == sandbox.interpreter_paths(("/tmp",), other_filesystems=False)
    # the project is a candidate too
    assert project in sandbox.interpreter_paths((os.path.dirname(project),))
    # a hidden root on the path is never kept itself, and the search goes on after it: twenty of them, each
    # holding site-packages
    roots = [tmp_path / f"root{i}-site-packages" for i in range(20)]
    for r in roots:
        (r / "site-packages").mkdir(parents=True)
    monkeypatch.setattr(sandbox.sys, "path", [str(r) for r in roots] + [str(r / "site-packages") for r in roots])
    got = sandbox.interpreter_paths(tuple(map(str, roots)))
    assert set(got) >= {str(r / "site-packages") for r in roots} and not set(got) & set(map(str, roots))
    # a prefix on another filesystem than / (/proc/sys): kept only when asked for
    if os.stat("/proc/sys").st_dev != root:
        monkeypatch.setattr(sandbox.sys, "base_exec_prefix", "/proc/sys")
        assert "/proc/sys" not in sandbox.interpreter_paths()
        assert "/proc/sys" in sandbox.interpreter_paths(other_filesystems=True)


def test_bwrap_args_by_hand():
    plan = [["link", "/bin", "usr/bin"], ["ro", "/usr", ""], ["mask", "/usr/src/app", ""],
            ["ro", "/opt/py/lib", ""], ["ro", "/opt/py/share", ""], ["file", "/h/etc/passwd", "/etc/passwd"],
            ["dev", "/dev", ""], ["proc", "/proc", ""], ["tmpfs", "/tmp", ""], ["rw", "/h/work", "/tmp/work"]]
    assert sandbox._bwrap_args(plan) == [
        "--symlink", "usr/bin", "/bin",
        "--ro-bind", "/usr", "/usr",
        # under a bound folder: no folder to make
        "--perms", "0755", "--size", "65536", "--tmpfs", "/usr/src/app",
        # the parents of /opt/py/lib made once, readable by all
        "--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", "/opt/py",
        "--ro-bind", "/opt/py/lib", "/opt/py/lib",
        "--ro-bind", "/opt/py/share", "/opt/py/share",
        "--perms", "0755", "--dir", "/etc", "--ro-bind", "/h/etc/passwd", "/etc/passwd",
        "--dev", "/dev",
        "--proc", "/proc", "--ro-bind-try", "/proc/sys", "/proc/sys",
        "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger",
        "--perms", "1777", "--tmpfs", "/tmp",
        # (/tmp made again after its tmpfs: redundant, bwrap leaves an existing folder and its mode as they are)
        "--perms", "0755", "--dir", "/tmp", "--bind", "/h/work", "/tmp/work",
        # the masks read-only again, then the whole root
        "--remount-ro", "/usr/src/app", "--remount-ro", "/"]
    assert sandbox._bwrap_args([]) == ["--remount-ro", "/"]


DIST_PACKAGES = "/usr/lib/python3/dist-packages"


@pytest.mark.skipif(not os.path.isdir(DIST_PACKAGES), reason=f"no {DIST_PACKAGES} here")
def test_an_interpreter_folder_inside_a_masked_system_folder_is_bound_again(monkeypatch, tmp_path):
    """/usr is bound; /usr/lib named private is masked by an empty folder; site-packages on the path
    inside it must then be bound again on top of the mask, or the interpreter would not find them."""
    fake_interpreter(monkeypatch, tmp_path)
    monkeypatch.setattr(sandbox.sys, "path", [*sandbox.sys.path, DIST_PACKAGES])
    monkeypatch.setattr(sandbox.sys, "base_exec_prefix", "/usr/share")  # in /usr, not in /usr/lib: seen through /usr
    mounts = [(m.kind, m.path) for m in sandbox.sandbox_mounts(private=("/usr/lib",))]
    at = mounts.index(("ro", "/usr"))
    assert mounts[at:at + 3] == [("ro", "/usr"), ("mask", "/usr/lib"), ("ro", DIST_PACKAGES)]
    assert ("ro", "/usr/share") not in mounts
    # not named private, /usr/lib is shown as it is and nothing under it is bound apart
    mounts = [(m.kind, m.path) for m in sandbox.sandbox_mounts()]
    assert ("mask", "/usr/lib") not in mounts and ("ro", DIST_PACKAGES) not in mounts


# Folders whose text order and folder order differ: "python3.11" sorts before "python3/..." as text
# ("." before "/"), after "python3" as a folder name.
LAYERED = ("/usr/lib/python3/dist-packages", "/usr/lib/python3.11")
layered = pytest.mark.skipif(not all(map(os.path.isdir, LAYERED)), reason="no /usr/lib/python3 and python3.11")


@layered
def test_mounts_in_folder_order():
    masks = [m.path for m in sandbox.sandbox_mounts(private=LAYERED[::-1]) if m.kind == "mask"]
    assert masks == list(LAYERED)


def test_an_interpreter_holding_a_private_folder_is_refused(monkeypatch, tmp_path):
    fake_interpreter(monkeypatch, tmp_path)
    with pytest.raises(sandbox.SandboxUnavailable) as refused:
        sandbox.sandbox_mounts(private=(str(tmp_path / "venv" / "lib"),))
    assert str(refused.value) == (f"the interpreter's folder {tmp_path / 'venv'} holds {tmp_path / 'venv' / 'lib'}, "
                                  "which agent code must not see: install the interpreter (or the virtualenv) "
                                  "elsewhere")


def test_a_run_folder(tmp_path, monkeypatch):
    import stat
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    umask = os.umask(0o077)                  # the modes below are set, not left to the umask
    try:
        folder = sandbox._RunFolder("legwork-test-")
    finally:
        os.umask(umask)
    with folder:
        assert os.path.dirname(folder.base) == str(tmp_path)
        assert os.path.basename(folder.base).startswith("legwork-test-")
        assert (folder.work, folder.etc) == (os.path.join(folder.base, "work"), os.path.join(folder.base, "etc"))
        assert sorted(os.listdir(folder.base)) == ["etc", "work"] and os.listdir(folder.work) == []
        modes = {p: stat.S_IMODE(os.stat(os.path.join(folder.base, p)).st_mode)
                 for p in ("", "work", "etc", "etc/passwd", "etc/group", "etc/empty")}
        # only the base folder private; the sandbox user writes the work folder, reads its account files
        assert modes == {"": 0o700, "work": 0o777, "etc": 0o755, "etc/passwd": 0o644, "etc/group": 0o644,
                         "etc/empty": 0o644}
        assert sorted(os.listdir(folder.etc)) == ["empty", "group", "passwd"]
        assert os.path.getsize(os.path.join(folder.etc, "empty")) == 0
        with open(os.path.join(folder.etc, "passwd"), encoding="utf-8") as fh:
            assert fh.read() == ("root:x:0:0:root:/root:/usr/sbin/nologin\n"
                                 "nobody:x:65534:65534:nobody:/tmp/work:/usr/sbin/nologin\n")
        with open(os.path.join(folder.etc, "group"), encoding="utf-8") as fh:
            assert fh.read() == "root:x:0:\nnogroup:x:65534:\n"
        base = folder.base
    assert not os.path.exists(base)
    with sandbox._RunFolder() as folder:
        assert os.path.basename(folder.base).startswith("legwork-sandbox-")


def test_the_plan_of_a_run(tmp_path, monkeypatch):
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with sandbox._RunFolder() as folder:
        plan = sandbox._plan(folder, ())
        own = [["file", os.path.join(folder.etc, "passwd"), "/etc/passwd"],
               ["file", os.path.join(folder.etc, "group"), "/etc/group"],
               ["dev", "/dev", ""], ["proc", "/proc", ""], ["tmpfs", "/tmp", ""],
               ["rw", folder.work, "/tmp/work"]]
        shown = [[m.kind, m.path, m.target] for m in sandbox.sandbox_mounts()]
        # the project's own import hooks (an editable install's .pth) in the bound site-packages, shown empty
        hooks = [["file", os.path.join(folder.etc, "empty"), hook] for hook in sandbox.project_hooks()
                 if any(sandbox._under(hook, m[1]) for m in shown if m[0] == "ro")]
        assert sorted(map(tuple, plan)) == sorted(map(tuple, own + shown + hooks))
        # a parent before its children: ordered by the path each step makes in the new root
        made = [sandbox._destination(step).split("/") for step in plan]
        assert made == sorted(made)
        assert plan.index(["tmpfs", "/tmp", ""]) < plan.index(["rw", folder.work, "/tmp/work"])
        with_private = sandbox._plan(folder, ("/usr/share",))
        assert ["mask", "/usr/share", ""] in with_private and ["mask", "/usr/share", ""] not in plan
        # folders named so that the order of the text and the order of the folders differ
        if all(map(os.path.isdir, LAYERED)):
            masks = [step[1] for step in sandbox._plan(folder, LAYERED[::-1]) if step[0] == "mask"]
            assert masks == list(LAYERED)


@pytest.mark.slow  # 20 s of waiting
@pytest.mark.skipif(shutil.which("sleep") is None, reason="no sleep program")
def test_a_probe_still_running_after_20_seconds_has_failed(tmp_path):
    """The probe's time limit (idle waiting: the probe only sleeps)."""
    started = time.monotonic()
    assert not sandbox._probe(["sleep", "20.5"], str(tmp_path))
    assert 20 <= time.monotonic() - started < 30


def test_command_lines(monkeypatch, tmp_path):
    import json
    import sys
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sandbox.shutil, "which", lambda name: f"/sbin/{name}")
    payload = ["/py", "-s", "-B", "-"]
    dropped = ["/sbin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
               "--bounding-set=-all", "--no-new-privs", "--", *payload]
    assert sandbox._drop_to_nobody(payload) == dropped
    tail = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "sandbox",
            "--die-with-parent", "--new-session", "--"]
    with sandbox._RunFolder() as folder:
        roots = sandbox._bwrap_args(sandbox._plan(folder, ("/usr/share",)))
        assert sandbox._command("none", folder, payload) == payload
        # as root: bwrap keeps only what setpriv needs to become nobody
        monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
        assert sandbox._command("bwrap", folder, payload, ("/usr/share",)) == [
            "bwrap", *roots, "--chdir", "/tmp/work", "--cap-drop", "ALL", "--cap-add", "CAP_SETUID",
            "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP", *tail, *dropped]
        assert sandbox._command("unshare", folder, payload, ("/usr/share",)) == [
            "unshare", "--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--mount-proc", "--kill-child", "--",
            sys.executable, "-I", "-S", "-c", sandbox._UNSHARE_PROLOGUE,
            json.dumps(sandbox._plan(folder, ("/usr/share",))), "--", *dropped]
        # as another user: a user namespace maps the caller to 65534
        monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
        assert sandbox._command("bwrap", folder, payload, ("/usr/share",)) == [
            "bwrap", *roots, "--chdir", "/tmp/work", "--unshare-user", "--uid", "65534", "--gid", "65534",
            "--cap-drop", "ALL", *tail, *payload]
        with pytest.raises(ValueError, match=r"^unknown isolation 'chroot'; choose one of bwrap, unshare, none$"):
            sandbox._command("chroot", folder, payload)


@pytest.mark.skipif(shutil.which("sleep") is None, reason="no sleep program")
def test_children_of_a_process(tmp_path):
    """The processes whose parent is the given one, read from /proc, even when a child's name holds
    parentheses and spaces (its name is the text between the first "(" and the last ")" of its stat)."""
    import subprocess
    odd = tmp_path / "a) 1 2 (b"
    odd.symlink_to(shutil.which("sleep"))
    kids = [subprocess.Popen([str(odd), "30"]), subprocess.Popen(["sleep", "30"])]
    try:
        found = sandbox._children(os.getpid())
        assert {k.pid for k in kids} <= set(found) and os.getpid() not in found and os.getppid() not in found
        assert all(isinstance(pid, int) for pid in found)
        assert sandbox._children(kids[0].pid) == []
    finally:
        for k in kids:
            k.kill()
            k.wait()



@pytest.mark.skipif(shutil.which("sleep") is None, reason="no sleep program")
def test_children_skips_a_process_that_ended_while_proc_was_read(monkeypatch):
    """A process listed in /proc may be gone before its stat is read: it is skipped, the search goes on.
    (The listing is made to name such a process first: a number above the kernel's largest pid.)"""
    import subprocess
    kid = subprocess.Popen(["sleep", "30"])
    try:
        with open("/proc/sys/kernel/pid_max") as fh:
            gone = str(int(fh.read()) + 1)
        listdir = os.listdir
        monkeypatch.setattr(sandbox.os, "listdir", lambda path: [gone, *listdir(path)])
        assert kid.pid in sandbox._children(os.getpid())
    finally:
        kid.kill()
        kid.wait()


def _remove_what_the_code_left(base: str, outside: str) -> None:
    """As the sandbox user would leave it: read-only folders holding a file, an empty folder and a link
    to a folder outside the run (one each, so that each removal fails once); then the run folder's removal."""
    os.makedirs(os.path.join(base, "ro-empty", "empty"))
    os.makedirs(os.path.join(base, "ro-file"))
    os.makedirs(os.path.join(base, "ro-link"))
    os.makedirs(outside)
    os.chmod(outside, 0o755)
    with open(os.path.join(base, "ro-file", "file"), "w") as fh:
        fh.write("x")
    os.symlink(outside, os.path.join(base, "ro-link", "link"))
    for name in ("ro-empty", "ro-file", "ro-link"):
        os.chmod(os.path.join(base, name), 0o500)
    sandbox._remove_tree(base)


def test_a_read_only_run_folder_is_removed():
    """The code may make its folders read-only; the run folder goes anyway, and what a link in it points
    to is left as it was. (Root may remove anything: then the removal runs in a child that became the
    unprivileged user, as a caller that is not root would be.)"""
    import stat
    import tempfile
    plain = tempfile.mkdtemp(prefix="legwork-test-rm-")                 # whoever runs this may remove this one
    os.makedirs(os.path.join(plain, "a", "b"))
    sandbox._remove_tree(plain)
    assert not os.path.lexists(plain)
    tag = f"legwork-test-rm-{os.getpid()}-{time.monotonic_ns()}"
    base, outside = os.path.join(tempfile.gettempdir(), tag), os.path.join(tempfile.gettempdir(), tag + "-outside")
    try:
        if os.geteuid() != 0:
            _remove_what_the_code_left(base, outside)
            gone, mode = not os.path.lexists(base), stat.S_IMODE(os.stat(outside).st_mode)
        else:
            pid = os.fork()
            if pid == 0:                                                   # the child: nobody from here on
                code = 3
                try:
                    os.setgroups([])
                    os.setgid(sandbox.SANDBOX_GID)
                    os.setuid(sandbox.SANDBOX_UID)
                    _remove_what_the_code_left(base, outside)
                    code = 0
                finally:
                    os._exit(code)
            _, status = os.waitpid(pid, 0)
            assert os.waitstatus_to_exitcode(status) == 0                  # the removal raised nothing
            gone, mode = not os.path.lexists(base), stat.S_IMODE(os.stat(outside).st_mode)
        assert gone and mode == 0o755
    finally:
        for path in (base, outside):
            if os.path.lexists(path):
                for root, dirs, _ in os.walk(path):
                    for d in dirs:
                        os.chmod(os.path.join(root, d), 0o700)
                shutil.rmtree(path, ignore_errors=True)
