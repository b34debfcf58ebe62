"""The sandbox's plain helpers by hand: the message that says what to install, path containment
(the cases benchmarks/mutation.py found no test for; no sandbox is started here)."""
from __future__ import annotations

import os

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
