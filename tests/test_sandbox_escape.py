"""Escape probes against the code sandbox: what agent code must not reach.

Each probe runs twice: inside the sandbox (every isolating mode this machine has), where it must
fail, and outside as a plain unsandboxed child of the same interpreter, where it must succeed, so a
passing test shows a real wall and not a probe that could never work.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pipeline.config import PROJECT_ROOT
from pipeline.tools.sandbox import (
    SANDBOX_UID,
    SandboxUnavailable,
    available_isolations,
    run_python,
    sandbox_mounts,
)
from pipeline.tools.sandbox import _interpreter_candidates as real_candidates

ISOLATED = [iso for iso in available_isolations() if iso != "none"]
isolating_modes = pytest.mark.parametrize(
    "isolation", ISOLATED or [pytest.param("none", marks=pytest.mark.skip(reason="no isolation here"))])
PASSCODE = 7319


def outside(code: str, cwd: Path | str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """The unsandboxed control: the same code in a plain child process of the same interpreter."""
    return subprocess.run([sys.executable, "-s", "-B", "-c", code], capture_output=True, text=True, check=False,
                          cwd=cwd or tempfile.gettempdir(), timeout=timeout)


def inside(code: str, isolation: str, **kwargs):
    result = run_python(code, isolation=isolation, **kwargs)
    assert result.isolation == isolation
    return result


# A probe prints "ESCAPED ..." when it reaches its target, "blocked <errno name>" when it cannot.
def probe_read(path: str) -> str:
    return (f"try:\n    data = open({path!r}, 'rb').read()\n    print('ESCAPED', len(data), data[:64])\n"
            f"except OSError as exc:\n    import errno\n    print('blocked', errno.errorcode[exc.errno])")


@pytest.fixture
def project_like():
    """A project checkout as the agent's host would have it: a finished run's legs (with their
    passcodes) under data/runs/, the record/replay cache with golden responses, a snapshot file.
    Under /var/tmp, not /tmp: the sandbox's private /tmp hid /tmp even before the root was rebuilt."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = Path(tempfile.mkdtemp(prefix="legwork-test-project-", dir="/var/tmp"))
    run = root / "data" / "runs" / "easy-001"
    run.mkdir(parents=True)
    pq.write_table(pa.table({"leg_id": ["leg_a"], "passcode": [PASSCODE]}), run / "legs.parquet")
    (run / "answers.json").write_text(json.dumps({"leg_a": PASSCODE}))
    (root / "data" / "cache").mkdir()
    with sqlite3.connect(root / "data" / "cache" / "cache.sqlite") as db:
        db.execute("CREATE TABLE calls (key TEXT, response TEXT)")
        db.execute("INSERT INTO calls VALUES ('golden', ?)", (json.dumps({"passcode": PASSCODE}),))
    (root / "snapshots" / "default").mkdir(parents=True)
    (root / "snapshots" / "default" / "manifest.json").write_text('{"hash": "0"}')
    yield root
    shutil.rmtree(root, ignore_errors=True)


# ---- /etc secrets --------------------------------------------------------------------------------
@isolating_modes
def test_etc_shadow_is_not_there(isolation):
    if not os.access("/etc/shadow", os.R_OK):
        pytest.skip("this user cannot read /etc/shadow on the host either (the control would fail)")
    assert outside(probe_read("/etc/shadow")).stdout.startswith("ESCAPED")
    result = inside(probe_read("/etc/shadow"), isolation)
    assert result.stdout == "blocked ENOENT\n", result
    # Only what the interpreter needs of /etc (the loader's cache) and the sandbox's own account files.
    listed = inside("import os; print(sorted(os.listdir('/etc')))", isolation)
    assert listed.stdout == f"{sorted(['group', 'passwd'] + ['ld.so.cache'] * os.path.isfile('/etc/ld.so.cache'))}\n"


@isolating_modes
def test_code_runs_as_an_unprivileged_user(isolation):
    code = ("import os, getpass\nprint(os.getuid(), os.geteuid(), os.getgid(), os.getgroups(), getpass.getuser())\n"
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith(('CapEff', 'CapPrm', 'CapBnd'))],"
            " [l.split()[1] for l in open('/proc/self/status') if l.startswith('NoNewPrivs')])")
    result = inside(code, isolation)
    assert result.stdout == (f"{SANDBOX_UID} {SANDBOX_UID} {SANDBOX_UID} [] nobody\n"
                             "['0000000000000000', '0000000000000000', '0000000000000000'] ['1']\n"), result


# ---- home folders ------------------------------------------------------------------------------------
def _allowed_in(folder: str) -> set[str]:
    """Names the sandbox shows in ``folder``: only the next step towards a bound folder (for a pyenv
    interpreter under /root: ``.pyenv``), never the folder's own files."""
    prefix = folder.rstrip("/") + "/"
    return {m.path[len(prefix):].split("/")[0] for m in sandbox_mounts() if m.path.startswith(prefix)}


@isolating_modes
@pytest.mark.parametrize("home", [str(Path.home()), "/home"])
def test_home_folders_are_not_listed(isolation, home):
    code = f"import os\ntry:\n    print('ESCAPED', sorted(os.listdir({home!r})))\nexcept OSError as exc:\n" \
           f"    print('blocked', exc.strerror)"
    control = outside(code)
    allowed = _allowed_in(home)
    if not control.stdout.startswith("ESCAPED") or set(eval(control.stdout.split(" ", 1)[1])) <= allowed:
        pytest.skip(f"{home} holds nothing of its own on this host")
    result = inside(code, isolation)
    if allowed:  # the interpreter lives under it: the path to it, nothing else
        assert result.stdout == f"ESCAPED {sorted(allowed)!r}\n", result
    else:
        assert result.stdout == "blocked No such file or directory\n", result


# ---- the project's runs, caches and snapshots --------------------------------------------------------------
PROJECT_PROBE = """import json, os, sqlite3
import pyarrow.parquet as pq
root = {root!r}
for name, read in [
    ("legs", lambda: pq.read_table(root + "/data/runs/easy-001/legs.parquet").column("passcode").to_pylist()),
    ("answers", lambda: json.load(open(root + "/data/runs/easy-001/answers.json"))),
    ("cache", lambda: sqlite3.connect("file:" + root + "/data/cache/cache.sqlite?mode=ro", uri=True)
                      .execute("SELECT response FROM calls").fetchall()),
    ("snapshot", lambda: open(root + "/snapshots/default/manifest.json").read()),
    ("listing", lambda: os.listdir(root)),
]:
    try:
        print(name, "ESCAPED", read())
    except Exception as exc:
        print(name, "blocked", type(exc).__name__)
"""


@isolating_modes
def test_a_projects_runs_and_cache_are_not_there(isolation, project_like):
    code = PROJECT_PROBE.format(root=str(project_like))
    control = outside(code)
    assert control.returncode == 0, control.stderr
    assert control.stdout.count("ESCAPED") == 5 and str(PASSCODE) in control.stdout, control.stdout
    result = inside(code, isolation)
    assert result.exit_code == 0, result  # pyarrow and sqlite3 import fine: the libraries are there
    assert "ESCAPED" not in result.stdout and str(PASSCODE) not in result.stdout, result
    assert result.stdout.count("blocked") == 5


@isolating_modes
def test_the_checkout_itself_is_not_there(isolation):
    """This very checkout (its data/, snapshots/, code): the agent's code imports nothing of it."""
    code = (f"import os\nfor path in [{str(PROJECT_ROOT / 'pyproject.toml')!r}, "
            f"{str(PROJECT_ROOT / 'snapshots' / 'default' / 'manifest.json')!r}, {str(PROJECT_ROOT)!r}]:\n"
            "    print(path.rsplit('/', 1)[1], 'ESCAPED' if os.path.exists(path) else 'blocked')\n"
            "try:\n    import pipeline.config\n    print('import ESCAPED')\nexcept ImportError:\n    print('import blocked')")
    control = outside(code, cwd=PROJECT_ROOT)
    assert control.stdout.count("ESCAPED") >= 3, control.stdout  # (the import depends on how it was installed)
    result = inside(code, isolation)
    assert result.stdout.count("blocked") == 4 and "ESCAPED" not in result.stdout, result


def test_private_folders_under_a_bound_one_are_masked(monkeypatch, tmp_path):
    """A project (or a home) under a folder the sandbox binds is covered by an empty folder, and an
    interpreter inside it (a virtualenv in the checkout) is bound again on top; an interpreter
    folder holding a private one is refused."""
    system = tmp_path / "usr"
    venv = system / "src" / "app" / ".venv"
    (venv / "lib").mkdir(parents=True)
    monkeypatch.setattr("pipeline.tools.sandbox.SYSTEM_DIRS", (str(system),))
    monkeypatch.setattr("pipeline.tools.sandbox.SYSTEM_FILES", ())
    monkeypatch.setattr("pipeline.tools.sandbox._interpreter_candidates", lambda: [str(venv)])
    mounts = sandbox_mounts(private=(str(system / "src" / "app"),))
    assert [(m.kind, m.path) for m in mounts] == [("ro", str(system)), ("mask", str(system / "src" / "app")),
                                                  ("ro", str(venv))]
    # A private folder under an interpreter folder the system does not cover: no way to show one alone.
    prefix = tmp_path / "opt" / "python"
    (prefix / "project").mkdir(parents=True)
    monkeypatch.setattr("pipeline.tools.sandbox._interpreter_candidates", lambda: [str(prefix)])
    with pytest.raises(SandboxUnavailable, match="holds"):
        sandbox_mounts(private=(str(prefix / "project"),))
    monkeypatch.setattr("pipeline.tools.sandbox._interpreter_candidates", real_candidates)


@isolating_modes
def test_a_masked_folder_shows_empty(isolation):
    """The mask on a real run: a folder of /usr named private is empty inside, the rest of /usr is not."""
    private = "/usr/share/doc" if os.listdir("/usr/share/doc") else "/usr/share"
    code = f"import os\nprint(len(os.listdir({private!r})), len(os.listdir('/usr/bin')) > 0)"
    assert outside(code).stdout.split()[0] != "0"
    assert inside(code, isolation, private=(private,)).stdout == "0 True\n"


# ---- host processes ---------------------------------------------------------------------------------------------
@isolating_modes
def test_host_processes_are_not_visible(isolation):
    marker = f"legwork-probe-{os.getpid()}-{time.monotonic_ns()}"
    host = subprocess.Popen([sys.executable, "-c", "import sys, time; time.sleep(120)", marker])
    try:
        # The marker is spelt backwards in the probe, so the probe's own command line never holds it.
        code = (f"import os\npid = {host.pid}\nmarker = {marker[::-1].encode()!r}[::-1]\nfound = set()\n"
                "if os.path.exists('/proc/%d' % pid):\n    found.add('proc entry')\n"
                "for entry in os.listdir('/proc'):\n    try:\n"
                "        if entry.isdigit() and marker in open('/proc/%s/cmdline' % entry, 'rb').read():\n"
                "            found.add('cmdline')\n    except OSError:\n        pass\n"
                "try:\n    os.kill(pid, 0)\n    found.add('signal')\nexcept PermissionError:\n    found.add('signal')\n"
                "except ProcessLookupError:\n    pass\nprint('ESCAPED' if found else 'blocked', sorted(found))")
        assert outside(code).stdout == "ESCAPED ['cmdline', 'proc entry', 'signal']\n"
        result = inside(code, isolation)
        assert result.stdout == "blocked []\n", result
    finally:
        host.kill()
        host.wait()


# ---- resource limits --------------------------------------------------------------------------------------------
FILE_CAP = 1024 * 1024


@pytest.mark.parametrize("isolation", [*ISOLATED, "none"])
def test_file_size_limit(isolation, tmp_path):
    code = ("import errno\ntry:\n    with open('big.bin', 'wb') as fh:\n"
            f"        fh.write(b'x' * {2 * FILE_CAP})\n    print('ESCAPED')\n"
            "except OSError as exc:\n    print('blocked', errno.errorcode[exc.errno])")
    assert outside(code, cwd=tmp_path).stdout == "ESCAPED\n"
    assert (tmp_path / "big.bin").stat().st_size == 2 * FILE_CAP
    result = run_python(code, isolation=isolation, file_cap=FILE_CAP, allow_unisolated=True)
    assert result.stdout == "blocked EFBIG\n", result


CPU_HOG = "import time\nwhile time.process_time() < 2:\n    pass\nprint('ESCAPED')"


@pytest.fixture(scope="module")
def cpu_hog_escapes():
    """The 2 s of CPU run to the end outside the sandbox (once for the module: it is the same code for every
    isolation, and 2 s of CPU a run)."""
    return outside(CPU_HOG).stdout


@pytest.mark.parametrize("isolation", [*ISOLATED, "none"])
def test_cpu_limit_stops_the_code_before_the_wall_clock(isolation, cpu_hog_escapes):
    """2 s of CPU under a 1 s CPU limit and a 60 s wall-clock timeout: SIGXCPU, not the timeout."""
    code = CPU_HOG
    assert cpu_hog_escapes == "ESCAPED\n"
    started = time.monotonic()
    result = run_python(code, isolation=isolation, timeout_s=60, cpu_s=1, allow_unisolated=True)
    assert (result.limit, result.exit_code, result.stdout) == ("cpu", 128 + signal.SIGXCPU, ""), result
    assert "CPU time limit of 1 s reached" in result.stderr and "time limit of 60" not in result.stderr
    assert time.monotonic() - started < 50
