"""The code sandbox: isolation holds, limits trigger, output comes back."""
from __future__ import annotations

import shutil
import signal
import socket
import tempfile
import time
from pathlib import Path

import pytest

from pipeline.tools.sandbox import SANDBOX_WORKDIR, available_isolations, isolation_available
from pipeline.tools.sandbox import run_python as _run_python


def run_python(code: str, **kwargs):
    """The best mode here; the limits and output checks also run (unisolated) on machines without one."""
    return _run_python(code, allow_unisolated=True, **kwargs)


ISOLATED = [iso for iso in available_isolations() if iso != "none"]
needs_isolation = pytest.mark.skipif(not isolation_available(),
                                     reason="no sandbox isolation (install bubblewrap or run as root)")
# Every isolating mode this machine has; an empty list skips (never passes) the isolation tests.
isolating_modes = pytest.mark.parametrize(
    "isolation", ISOLATED or [pytest.param("none", marks=pytest.mark.skip(reason="no isolation here"))])


def test_stdout_stderr_and_exit_code_come_back():
    result = run_python("import sys\nprint(6 * 7)\nprint('oops', file=sys.stderr)\nsys.exit(3)")
    assert result.stdout == "42\n"
    assert result.stderr == "oops\n"
    assert result.exit_code == 3
    assert result.timed_out is False


def test_exception_gives_traceback_and_exit_code_1():
    result = run_python("1/0")
    assert result.exit_code == 1
    assert "ZeroDivisionError" in result.stderr


@isolating_modes
def test_working_dir_is_writable_and_fixed(isolation):
    code = ("import os\nopen('notes.txt', 'w').write('hello')\n"
            "print(os.getcwd(), open('notes.txt').read(), sorted(os.listdir('.')))")
    result = run_python(code, isolation=isolation)
    assert result.isolation == isolation
    assert result.stdout.strip() == f"{SANDBOX_WORKDIR} hello ['notes.txt']"


@isolating_modes
def test_each_run_starts_in_an_empty_folder(isolation):
    run_python("open('left.txt', 'w').write('x')", isolation=isolation)
    assert run_python("import os; print(os.listdir('.'))", isolation=isolation).stdout == "[]\n"


@pytest.fixture
def outside_dir():
    """A folder outside /tmp (the sandbox hides the host's /tmp behind a private tmpfs)."""
    path = Path(tempfile.mkdtemp(prefix="legwork-test-outside-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@isolating_modes
def test_write_outside_the_folder_fails(isolation, outside_dir):
    existing = outside_dir / "existing.txt"
    existing.write_text("original")
    new_file = outside_dir / "escape.txt"
    code = (f"try:\n    open({str(existing)!r}, 'w').write('changed')\nexcept OSError as exc:\n"
            f"    print(exc.strerror)\nopen({str(new_file)!r}, 'w').write('escaped')")
    result = run_python(code, isolation=isolation)
    assert result.stdout == "No such file or directory\n"  # the host's folders are not even there
    assert result.exit_code == 1 and "No such file or directory" in result.stderr
    assert existing.read_text() == "original"
    assert not new_file.exists()
    # What the code does see of the host (the interpreter, /usr) is read-only.
    shown = run_python("import sys\nfor folder in (sys.prefix, '/usr/lib', '/', '/etc'):\n    try:\n"
                       "        open(folder + '/escape.txt', 'w')\n    except OSError as exc:\n"
                       "        print(exc.strerror)", isolation=isolation)
    assert shown.stdout == "Read-only file system\n" * 4, shown
    # Outside the sandbox the same code does write: the check above is not vacuous.
    assert run_python(code, isolation="none").exit_code == 0
    assert existing.read_text() == "changed" and new_file.exists()


def _pending_connection(listener: socket.socket) -> bool:
    """Whether a client reached the listener (the kernel completes a TCP connect before accept)."""
    listener.settimeout(0.3)
    try:
        conn, _ = listener.accept()
    except TimeoutError:
        return False
    conn.close()
    return True


@isolating_modes
def test_network_connection_fails(isolation):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        port = listener.getsockname()[1]
        code = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                "    print('connected')\nexcept OSError as exc:\n    print('failed', exc.strerror)")
        # Outside the sandbox the same code reaches the listener: the check is not vacuous.
        assert run_python(code, isolation="none").stdout == "connected\n"
        assert _pending_connection(listener)
        result = run_python(code, isolation=isolation)
        assert result.stdout.startswith("failed"), result
        assert not _pending_connection(listener)


def test_unisolated_mode_says_so():
    result = run_python("print('hi')", isolation="none")
    assert result.isolation == "none"
    assert result.stdout == "hi\n"


def test_timeout_is_reported_and_kills_children():
    code = "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n" \
           "print('started', flush=True)\ntime.sleep(60)"
    result = run_python(code, timeout_s=1)
    assert result.timed_out is True
    assert result.stdout == "started\n"
    assert result.exit_code == 128 + 9
    assert "time limit" in result.stderr


def test_cpu_limit_stops_a_busy_loop():
    """The CPU rlimit, not the wall clock: the wall-clock timeout is far above the CPU limit."""
    started = time.monotonic()
    result = run_python("while True: pass", timeout_s=60, cpu_s=1)
    assert (result.limit, result.exit_code) == ("cpu", 128 + signal.SIGXCPU), result
    assert result.timed_out is True and "CPU time limit of 1 s" in result.stderr
    assert time.monotonic() - started < 50  # long before the wall clock (slack for a loaded machine)


def test_memory_limit_triggers():
    result = run_python("block = bytearray(400 * 1024 * 1024)\nprint('allocated')", memory_mb=256)
    assert result.exit_code != 0
    assert "MemoryError" in result.stderr
    assert "allocated" not in result.stdout
    # The same allocation fits under a larger limit, so it is the limit that stopped it.
    assert run_python("block = bytearray(100 * 1024 * 1024)\nprint('allocated')",
                      memory_mb=512).stdout == "allocated\n"


def test_output_is_capped():
    result = run_python("print('x' * 300000)", output_cap=1000)
    assert result.stdout.startswith("x" * 1000)
    assert "[output truncated: 299001 more bytes]" in result.stdout
    assert len(result.stdout) < 1100


@pytest.fixture
def own_tmp(tmp_path, monkeypatch):
    """A temporary-folder root only this test uses. (Globbing the shared /tmp before and after a
    run raced with every other run_python on the machine: another test worker's or another user's
    legwork-sandbox-* folder, alive during the second glob only, failed the test under load.)"""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_temporary_folder_is_removed(own_tmp):
    code = "import os\nos.mkdir('d'); open('d/a', 'w').write('b'); os.chmod('d', 0o500)\nprint(os.listdir('d'))"
    assert run_python(code).stdout == "['a']\n"
    assert list(own_tmp.iterdir()) == []
    # Killed at the wall clock while still writing (a child in the background too): nothing is left.
    code = ("import os, subprocess, sys\nsubprocess.Popen([sys.executable, '-c', "
            "'import itertools\\nfor i in itertools.count(): open(\"c%d\" % (i % 50), \"w\").write(\"x\")'])\n"
            "i = 0\nwhile True:\n    i += 1\n    open('f%d' % (i % 50), 'w').write('x' * 1000)")
    assert run_python(code, timeout_s=1).limit == "time"
    assert list(own_tmp.iterdir()) == []


@needs_isolation
def test_same_code_gives_same_bytes():
    code = "print({'b', 'a', 'c', 'd'}); import os; print(os.getcwd())"
    first, second = run_python(code), run_python(code)
    assert first == second
