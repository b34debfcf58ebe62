"""``pipeline.score`` reads a fetched title as the page the tools answered with: a redirect ("What'd I Say
(song)") is the page it leads to (What'd I Say), through the configured world by default. Blind race 48's
R11 fetched "Levumodwick City", got the page Levumodwick, and was scored as not having visited it."""
from __future__ import annotations

import json

import pytest

from flows.generate import GenerationParams, local_map_stage, run_generation
from pipeline import score
from pipeline.config import load_settings
from pipeline.export import load_legs
from pipeline.race import run_trial
from pipeline.snapshot.page import title_to_url
from pipeline.stages.base import StageContext
from pipeline.tools.registry import Toolbox

SEED, ALIAS = "What'd I Say", "What'd I Say (song)"   # a page of the embedded world and a redirect to it


@pytest.fixture(scope="module")
def raced(tmp_path_factory):
    """An easy leg from SEED and its oracle trial, the seed fetched by its redirect's title."""
    root = tmp_path_factory.mktemp("redirects")
    settings = load_settings(cache_path=root / "cache.sqlite")
    run_generation(GenerationParams(level="easy", variant="linear", count=1, seed=5, seed_title=SEED),
                   root / "legs", settings, local_map_stage(StageContext.create(settings)))
    [leg] = load_legs(root / "legs")
    assert leg.seed_title == SEED
    trial = run_trial(leg, "oracle", root / "runs", toolbox=Toolbox(settings))
    log = trial / "tool_log.jsonl"
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    renamed = 0
    for call in calls:
        if call["tool"] == "fetch_webpage" and call["args"].get("url") in (SEED, title_to_url(SEED)):
            call["args"]["url"] = call["url"] = ALIAS   # as the tools CLI logs a racer's fetch of the alias
            renamed += 1
    assert renamed
    log.write_text("".join(json.dumps(c) + "\n" for c in calls), encoding="utf-8")
    return root


def pvr(root, *snapshot) -> float:
    out = root / f"report{len(snapshot)}.json"
    assert score.main(["--legs", str(root / "legs"), "--runs", str(root / "runs"), "--out", str(out), *snapshot]) == 0
    [trial] = [json.loads(line) for line in out.with_name(out.stem + ".trials.jsonl").read_text().splitlines()]
    return trial["pvr"]


def test_a_page_fetched_by_its_redirect_is_visited_through_the_configured_world(raced):
    assert pvr(raced) == 1.0
    assert pvr(raced, "--snapshot", str(load_settings().snapshot_dir)) == 1.0


def test_without_a_world_a_redirect_is_another_title(raced):
    assert pvr(raced, "--snapshot", "none") < 1.0
