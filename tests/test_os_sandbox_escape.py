"""Escape probes against the OS-task sandbox (a shell session as root in a throwaway root).

A shell task may read and change anything in its session's root, but the host's private places
are not in it: the project checkout (runs, caches, snapshot), the home folders, the top-level
folders a Linux system does not have, a dataset being raced, the password hashes. Each probe has a
control that shows it reaches its target where nothing hides it."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from pipeline.agents.runtime import race, register_agent
from pipeline.agents.trial import TrialResult
from pipeline.config import PROJECT_ROOT
from pipeline.tasks.os.sandbox import locked_passwords, run_session, sandbox_available

needs_sandbox = pytest.mark.skipif(not sandbox_available(), reason="needs root, unshare and overlayfs")


def session(script: str, **kwargs):
    [result] = run_session([("probe", script)], **kwargs)
    return result


@pytest.fixture
def dataset_folder():
    """Legs being raced, with their passcodes, on the host's root file system (/var/tmp)."""
    root = Path(tempfile.mkdtemp(prefix="legwork-raced-", dir="/var/tmp"))
    (root / "answers.json").write_text(json.dumps({"leg_a": 7319}))
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def home_canary():
    fd, path = tempfile.mkstemp(prefix="legwork-canary-", dir=Path.home())
    os.write(fd, b"secret\n")
    os.close(fd)
    yield Path(path)
    os.unlink(path)


@needs_sandbox
def test_the_checkout_is_not_in_the_session():
    target = PROJECT_ROOT / "pyproject.toml"
    assert target.read_bytes()                                   # control: the host has it
    result = session(f"cat {target}; ls -A {PROJECT_ROOT}")
    assert result.exit_code != 0 and result.stdout == ""


@needs_sandbox
def test_home_folders_are_empty(home_canary):
    assert home_canary.read_text() == "secret\n"                 # control
    result = session(f"cat {home_canary}")
    assert result.exit_code != 0 and "secret" not in result.stdout


@needs_sandbox
def test_a_raced_dataset_named_private_is_hidden(dataset_folder):
    probe = f"cat {dataset_folder / 'answers.json'}"
    assert "7319" in session(probe).stdout                       # control: /var/tmp is the host's
    hidden = session(probe, private=(str(dataset_folder),))
    assert hidden.exit_code != 0 and "7319" not in hidden.stdout


@needs_sandbox
@pytest.mark.parametrize("folder", [p for p in ("/work", "/srv", "/mnt", "/media")
                                    if os.path.isdir(p) and not os.path.islink(p) and os.listdir(p)])
def test_non_system_top_level_folders_show_empty(folder):
    result = session(f"ls -A {folder} | wc -l")
    assert result.stdout.strip() == "0"


@needs_sandbox
def test_password_hashes_are_locked_and_useradd_still_works():
    host = {line.split(":")[1] for line in Path("/etc/shadow").read_text().splitlines() if line.count(":") > 2}
    result = session("cut -d: -f2 /etc/shadow | sort -u; useradd legwork_probe && grep -c legwork_probe /etc/shadow")
    fields = result.stdout.split()
    assert fields[:-1] == ["!"] and fields[-1] == "1"
    assert host != {"!"}                                          # control: the host's fields differ


def test_locked_passwords_keeps_users_and_drops_hashes():
    text = "root:$6$salt$abcdef:19000:0:99999:7:::\nbob:*:19000:0:99999:7:::\nodd line\n"
    assert locked_passwords(text) == "root:!:19000:0:99999:7:::\nbob:!:19000:0:99999:7:::\nodd line\n"


def test_the_sandbox_runs_where_the_machine_can_build_it():
    """The escape tests skip where no sandbox can be built; where root, ``unshare`` and overlayfs are
    all there, a sandbox that fails to start is a bug, not a reason to skip them."""
    can = (os.geteuid() == 0 and shutil.which("unshare") and shutil.which("chroot")
           and "overlay" in Path("/proc/filesystems").read_text())
    if not can:
        pytest.skip("this machine cannot build the OS sandbox")
    assert sandbox_available()


PROBE_FILE = "answers.json"


@register_agent("sandbox-probe", ("os",))
async def _probe_agent(env, ctx):
    """Reads the raced dataset's answers and lists the race's records from inside its session."""
    folder = os.environ["LEGWORK_TEST_RACED"]
    out = env.act("bash", {"command": f"cat {folder}/{PROBE_FILE}; ls -A {env.log.path.parent.parent}"})
    return TrialResult(env.item_id, ctx.label, ctx.seed, out, env.log.calls)


@needs_sandbox
def test_an_os_race_hides_its_dataset_and_its_records(dataset_folder, tmp_path, monkeypatch):
    """A race of an OS task set read from a folder on the host's root (/var/tmp): the agent's commands
    see neither the set's folder nor the race's own records; the same command outside a race does."""
    from pipeline.config import load_settings
    from pipeline.tasks.common import build_task_set, read_task_rows
    build_task_set("os", 1, 3, dataset_folder / "os", load_settings(cache_path=tmp_path / "c.sqlite"))
    [row] = read_task_rows(dataset_folder / "os")
    out = dataset_folder / "runs"
    out.mkdir()
    (out / "earlier-trial.json").write_text('{"answer": 4242}')
    monkeypatch.setenv("LEGWORK_TEST_RACED", str(dataset_folder))
    control = session(f"cat {dataset_folder}/{PROBE_FILE}; ls -A {out}")
    assert "7319" in control.stdout and "earlier-trial.json" in control.stdout   # the host shows both
    [trial], _ = asyncio.run(race([row], "sandbox-probe", out, private=(str(dataset_folder / "os"),)))
    seen = json.loads((trial / "trial.json").read_text())["answer"]
    assert "earlier-trial.json" not in seen and "7319" in seen   # the records hidden; the folder above is not
    (dataset_folder / "os" / PROBE_FILE).write_text(json.dumps({"leg_b": 5150}))
    monkeypatch.setenv("LEGWORK_TEST_RACED", str(dataset_folder / "os"))
    [trial], _ = asyncio.run(race([row], "sandbox-probe", tmp_path / "runs2", private=(str(dataset_folder / "os"),)))
    seen = json.loads((trial / "trial.json").read_text())["answer"]
    assert "5150" not in seen and "No such file" in seen
