"""No sandbox is a configuration error: loud, never cached, never a quietly dropped chain.

A machine without isolation is made by hiding bwrap and unshare from PATH (the sandbox finds
them with ``shutil.which``), so the real code paths run.
"""
from __future__ import annotations

import os
import shutil

import pytest

from pipeline.config import ConfigError, load_settings
from pipeline.execute import StopFailed, run_stop
from pipeline.model import ROADBLOCK, Stop, ToolStep
from pipeline.tools.errors import ToolError, ToolUnavailable
from pipeline.tools.registry import Toolbox
from pipeline.tools.sandbox import SandboxUnavailable, available_isolations, run_python

CODE = {"code": "print(6*7)"}


@pytest.fixture
def no_sandbox(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    assert available_isolations() == ["none"]


def _toolbox(tmp_path, **overrides) -> Toolbox:
    return Toolbox(load_settings(env={}, cache_path=tmp_path / "c.sqlite", snapshot_dir=tmp_path / "snap",
                                 **overrides))


def test_settings_keys_from_environment():
    settings = load_settings(env={"LEGWORK_SANDBOX_ALLOW_NONE": "1", "LEGWORK_SANDBOX_ISOLATION": "unshare"})
    assert settings.sandbox_allow_unisolated is True and settings.sandbox_isolation == "unshare"
    assert load_settings(env={}).sandbox_allow_unisolated is False
    with pytest.raises(ConfigError, match="sandbox_isolation"):
        load_settings(env={"LEGWORK_SANDBOX_ISOLATION": "chroot"})
    with pytest.raises(ConfigError, match="sandbox_allow_unisolated"):
        load_settings(env={"LEGWORK_SANDBOX_ALLOW_NONE": "maybe"})


def test_unavailable_is_a_configuration_error_not_a_tool_answer():
    # generation rejects legs on ToolError; a missing sandbox must fail the run instead
    assert issubclass(SandboxUnavailable, ToolUnavailable) and not issubclass(SandboxUnavailable, ToolError)


def test_no_sandbox_raises_and_records_nothing(no_sandbox, tmp_path):
    toolbox = _toolbox(tmp_path)
    with pytest.raises(SandboxUnavailable, match="no sandbox.*bubblewrap.*LEGWORK_SANDBOX_ALLOW_NONE"):
        toolbox.call("python_execute_code", CODE)
    assert toolbox.cache.count() == 0
    with pytest.raises(SandboxUnavailable):
        run_python("print(1)")


def test_a_chain_that_cannot_run_is_not_dropped_quietly(no_sandbox, tmp_path):
    """Pre-validation drops a stop only on StopFailed; the missing sandbox must get past it."""
    stop = Stop(index=0, kind=ROADBLOCK, description="x", tool_chain=[
        ToolStep(tool="python_execute_code", args=CODE, output_key="out", extract="stdout")])
    with pytest.raises(SandboxUnavailable):
        run_stop(stop, {}, _toolbox(tmp_path), [])
    assert not issubclass(SandboxUnavailable, StopFailed)


def test_unisolated_only_when_asked(no_sandbox, tmp_path):
    result = _toolbox(tmp_path, sandbox_allow_unisolated=True).call("python_execute_code", CODE)
    assert result.ok and (result.data["stdout"], result.data["isolation"]) == ("42\n", "none")
    forced = _toolbox(tmp_path / "b", sandbox_isolation="none").call("python_execute_code", CODE)
    assert forced.data["isolation"] == "none"


@pytest.mark.skipif(len(available_isolations()) < 2, reason="no isolating sandbox mode here")
def test_forced_mode_is_used(tmp_path):
    for isolation in available_isolations():
        data = _toolbox(tmp_path / isolation, sandbox_isolation=isolation).call("python_execute_code", CODE).data
        assert (data["stdout"], data["isolation"]) == ("42\n", isolation)


def test_a_forced_mode_that_is_not_there_is_refused(no_sandbox):
    for isolation in ("bwrap", "unshare"):
        with pytest.raises(SandboxUnavailable, match=rf"^isolation '{isolation}' does not work on this machine$"):
            run_python("print(1)", isolation=isolation)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is None or not os.path.isfile("/usr/bin/setpriv"),
                    reason="bwrap as root, setpriv in /usr/bin")
def test_bwrap_as_root_without_setpriv_is_refused(tmp_path, monkeypatch):
    """As root bwrap needs setpriv to drop to an unprivileged user: without it on the PATH the mode is
    not offered, even though its probe (which finds setpriv inside the sandbox) would pass."""
    from pipeline.tools import sandbox
    (tmp_path / "bwrap").symlink_to(shutil.which("bwrap"))
    monkeypatch.setenv("PATH", str(tmp_path))
    sandbox._works.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match=r"^isolation 'bwrap' does not work on this machine$"):
            run_python("print(1)", isolation="bwrap")
        assert sandbox._works("bwrap")        # the probe runs setpriv by name, found in the sandbox's /usr/bin
    finally:
        sandbox._works.cache_clear()
