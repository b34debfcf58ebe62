"""Leg generation, the driver: eight stages, each a task over batches of legs, each writing a
Parquet artifact; rejected legs go to rejected.parquet and their slot is retried with a new
attempt until --count legs are accepted or the attempt budget is spent.

No Prefect here: ``run_generation`` takes how to map a stage over batches, in-process
(``local_map_stage``) or as Prefect tasks (``flows.prefect_tasks``: the flow, the task runners and
``run_with_prefect``, which import Prefect).

Resume: every stage artifact of every round is written atomically under the run directory
together with the run's key (``run_key``: its arguments, the code version, the data version and
the settings that change answers, ``pipeline.versions``); a re-run with the same key loads
finished artifacts instead of recomputing them, so an interrupted run completes to the same
bytes. A re-run of the same arguments under another key (an edited template, a new snapshot,
another backend) says what changed and starts afresh: another version's artifacts are never
resumed. Other arguments in the same folder are refused (choose another --out).
Determinism: a leg's randomness depends only on its id and the stage, results are sorted
by slot, and nothing time-dependent enters an artifact.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.acceptance import leg_invariant_failures
from pipeline.cache import ReplayMiss, canonical_json
from pipeline.catalog import load_presets
from pipeline.config import Settings
from pipeline.execute import StopFailed, country_known
from pipeline.llm import LLMError
from pipeline.model import ARTIFACT_SCHEMA, Leg, leg_row
from pipeline.stages import build, crawl, diamond, golden, link, plan, prevalidate, verbalize
from pipeline.stages.base import STAGES, Rejected, StageContext
from pipeline.tools.errors import LiveServiceError, ToolError
from pipeline.tools.faults import fault_scope
from pipeline.tools.registry import noting_failures
from pipeline.versions import changes, snapshot_hash, snapshot_pages, versions

# 3: typed stop specs and stage hand-offs in leg_json (no hints, no metadata plan/crawl); rows carry
#    status "error" and the failing frame ("where")
ARTIFACT_FORMAT = 3

# What bad input may raise inside a stage: the leg is rejected with the message as its reason.
# Anything else is a bug in our code: recorded as an error, and the run fails.
REJECTIONS = (Rejected, StopFailed, ReplayMiss, ToolError, LiveServiceError, LLMError)

STAGE_MODULES = {
    "crawl": crawl, "plan": plan, "build": build, "prevalidate": prevalidate,
    "link": link, "diamond": diamond, "golden": golden, "verbalize": verbalize,
}
assert tuple(STAGE_MODULES) == STAGES


@dataclass(frozen=True)
class GenerationParams:
    level: str
    variant: str
    count: int
    seed: int
    no_simulated: bool = False
    simulated_templates: bool = False
    preset_overrides: tuple[str, ...] = ()
    batch_size: int = 8
    seed_title: str | None = None

    def digest(self) -> str:
        """The arguments' part of the run key (``run_key`` adds code, data and settings)."""
        return hashlib.sha256(canonical_json({"format": ARTIFACT_FORMAT, **self.as_dict()}).encode()).hexdigest()[:16]

    def as_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items() if k != "batch_size"}


def run_key(params: GenerationParams, settings: Settings) -> tuple[str, dict]:
    """(key, what it covers): the arguments' digest, the code version by part, the data version and
    the settings that change answers (``pipeline.versions``). Everything that changes a run's bytes
    but the faults it meets (``pipeline.tools.faults``: the weather, not the data set)."""
    covered = {"params": params.digest(), **versions(settings)}
    return hashlib.sha256(canonical_json(covered).encode()).hexdigest()[:16], covered


@dataclass(frozen=True)
class Failure:
    """Why a leg did not get through a stage: a rejection (bad input, recorded and retried) or an
    error (an unexpected exception, i.e. a bug, which also fails the run)."""
    reason: str
    error: bool = False
    where: str | None = None        # errors: the traceback's last frame, "file:line in function"

    @property
    def status(self) -> str:
        return "error" if self.error else "rejected"


@dataclass
class RunResult:
    accepted: list[Leg]
    rejected: list[dict]            # rows of rejected.parquet: rejections and errors
    out_dir: Path
    rounds: int
    attempts: int
    seconds: float
    stage_seconds: dict[str, float] = field(default_factory=dict)
    restarted: str | None = None    # what changed when an older run in the folder was discarded

    @property
    def errors(self) -> list[dict]:
        return [r for r in self.rejected if r["status"] == "error"]


class GenerationErrors(RuntimeError):
    """Stages met unexpected exceptions (bugs). Everything was recorded and written first;
    ``result`` holds the run, ``result.errors`` the error rows."""

    def __init__(self, message: str, result: RunResult):
        super().__init__(message)
        self.result = result


class BudgetExhausted(RuntimeError):
    """The attempt budget ran out before --count legs were accepted (``result`` holds what was made)."""

    def __init__(self, message: str, result: RunResult):
        super().__init__(message)
        self.result = result


# ---- rows ------------------------------------------------------------------------------------
def write_rows(path: Path, rows: list[dict]) -> None:
    """Atomic, deterministic Parquet write (tmp file then rename: a crash leaves no half artifact)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(rows, schema=ARTIFACT_SCHEMA)
    tmp = path.with_suffix(".parquet.tmp")
    pq.write_table(table, tmp, compression="zstd", use_dictionary=False, write_statistics=False)
    os.replace(tmp, path)


def read_rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


# ---- one stage over a batch (pure: no Prefect, no files) -----------------------------------------
def apply_stage(stage: str, legs: list[Leg], ctx: StageContext) -> list[tuple[Leg, Failure | None]]:
    """Run a stage on each leg. Bad input rejects that leg; an unexpected exception is recorded as
    an error. After the last stage every surviving leg must pass the invariants (acceptance is
    validation): a leg that the stages let through but that breaks one is an error too."""
    module = STAGE_MODULES[stage]
    out: list[tuple[Leg, Failure | None]] = []
    for leg in legs:
        with noting_failures() as noted:
            try:
                with fault_scope(leg.leg_id):  # injected faults (if any) are drawn afresh for each attempt
                    done = module.run(leg, ctx)
            except Rejected as exc:
                out.append((keep_failures(leg, stage, noted), Failure(str(exc))))
                continue
            except REJECTIONS as exc:
                out.append((keep_failures(leg, stage, noted), Failure(f"{stage}: {exc}")))
                continue
            except Exception as exc:  # noqa: BLE001 - a bug: recorded with where it broke, fails the run later
                out.append((keep_failures(leg, stage, noted),
                            Failure(f"{stage}: {type(exc).__name__}: {exc}", error=True, where=last_frame(exc))))
                continue
        keep_failures(done, stage, noted)
        if stage == STAGES[-1]:
            out.append((done, acceptance_failure(done, ctx)))
        else:
            out.append((done, None))
    return out


def keep_failures(leg: Leg, stage: str, noted: list[dict]) -> Leg:
    """Keep the transient tool failures a stage met on this leg (retried, or absorbed at the cost of a
    fact or a stop, or given up) in ``metadata["tool_failures"]``: under faults, every injected fault
    appears in the record of the leg that met it, accepted or rejected. Nothing is added without one."""
    if noted:
        leg.metadata.setdefault("tool_failures", []).extend({"stage": stage, **entry} for entry in noted)
    return leg


def acceptance_failure(leg: Leg, ctx: StageContext) -> Failure | None:
    try:
        broken = leg_invariant_failures(leg, ctx, allow_simulated=ctx.settings.allow_simulated)
    except Exception as exc:  # noqa: BLE001 - the checks themselves broke: a bug
        return Failure(f"acceptance: {type(exc).__name__}: {exc}", error=True, where=last_frame(exc))
    if not broken:
        return None
    name, errs = next(iter(sorted(broken.items())))
    return Failure(f"acceptance: invariant {name} fails: {errs[0]}", error=True, where="pipeline/invariants.py")


def last_frame(exc: BaseException) -> str:
    """The innermost traceback frame, as "path:line in function" relative to the project."""
    tb = traceback.extract_tb(exc.__traceback__)
    if not tb:
        return "?"
    frame = tb[-1]
    path = Path(frame.filename)
    try:
        path = path.resolve().relative_to(Path(__file__).resolve().parent.parent)
    except ValueError:
        pass
    return f"{path}:{frame.lineno} in {frame.name}"


def resumable(rows: list[dict], legs: list[Leg]) -> bool:
    """An artifact is reused only for the very legs now entering its stage, and never when it met a
    bug (a re-run after the fix redoes that stage, and a redone stage may change who comes next)."""
    return ([r["leg_id"] for r in rows] == [leg.leg_id for leg in legs]
            and all(r["status"] != "error" for r in rows))


def _failure_of(row: dict) -> Failure | None:
    if row["status"] == "ok":
        return None
    return Failure(row["reason"] or "", error=row["status"] == "error", where=row.get("where"))


def new_leg(params: GenerationParams, slot: int, attempt: int, reused: dict[str, int] | None = None,
            full: list[str] | None = None) -> Leg:
    """The leg of a slot's attempt. ``reused``: the seeds the run has accepted more than once so far,
    with their uses (``crawl.spread_seed`` passes over those at the run's bound); ``full``: the pages
    on as many of the run's accepted routes as it allows (``page_cap``), which plan's walk goes round."""
    leg_id = "leg_" + hashlib.sha256(f"{params.variant}|{params.level}|{params.seed}|{slot}|{attempt}".encode()).hexdigest()[:12]
    leg = Leg(leg_id=leg_id, level=params.level, variant=params.variant, seed=params.seed * 1_000_003 + slot,
              seed_title=params.seed_title or "", seed_url="")  # a requested seed; crawl resolves it
    leg.metadata["slot"], leg.metadata["attempt"], leg.metadata["slots"] = slot, attempt, params.count
    if reused:
        leg.metadata["reused_seeds"] = dict(sorted(reused.items()))
    if full:
        leg.metadata["full_pages"] = sorted(full)
    return leg


def page_share(generation: dict, settings: Settings) -> float:
    """The share of a run's legs one page (not a seed) may be on the route of (issue 33, item 9):
    ``max_page_share`` on a world small enough to be profiled whole (``whole_world_pages``: the embedded
    one, where routes have few pages to go round and the cap is off), ``large_world_page_share`` on a
    larger one, which has pages enough to go round."""
    pages = snapshot_pages(settings)
    if pages is not None and pages > int(generation.get("whole_world_pages", 50_000)):
        return float(generation.get("large_world_page_share", 1.0))
    return float(generation.get("max_page_share", 1.0))


def page_cap(count: int, generation: dict, share: float | None = None) -> int:
    """How many of a run's legs one page (not a seed) may be on the route of: ``share`` (default
    ``max_page_share``) of the run's legs, at least ``min_page_uses`` (a run of three legs from a world
    of one hub still goes)."""
    share = float(generation.get("max_page_share", 1.0)) if share is None else share
    return max(int(generation.get("min_page_uses", 3)), int(count * share))


@dataclass(frozen=True)
class PageCaps:
    """How many of a run's accepted legs a page after the seed may be on the route of: ``pages`` for any
    page, ``countries`` for the countries of the country statistics (0: uncapped). Countries have their
    own cap because every choice hop lands on one ("the one with the largest area") and a hard or
    extreme leg owes two to four of them: held to the page cap of one run, the ~200 countries run out
    (the embedded world: 45 of 50 extreme legs made, 2,583 attempts rejected). A release gives each run
    its share of the release's allowance instead (``flows.runs.country_caps``)."""
    pages: int
    countries: int = 0

    def limit(self, title: str) -> int | None:
        if country_known(title):
            return self.countries or None
        return self.pages

    def full(self, uses: Counter) -> list[str]:
        """The pages already on as many routes as they may be (plan's walk goes round them)."""
        return sorted(t for t, n in uses.items() if (cap := self.limit(t)) is not None and n >= cap)

    def overclaimed(self, legs: list[Leg], uses: Counter) -> dict[str, tuple[str, int]]:
        """The planned legs of a round that acceptance would turn away should every leg of an earlier
        slot in the round be accepted: leg id -> the first such page and the earlier legs that claim it.
        Acceptance goes in slot order, so those legs' routes may fill a page before a later leg comes to
        it; a later leg that finishes every stage and then meets a full page was work thrown away (on a
        large world 143 of a release's 1,400 legs, a tenth of its stage work). Such a leg gives its slot
        back after plan, and the slot plans afresh next round, round the pages by then full."""
        claims: Counter[str] = Counter()
        out: dict[str, tuple[str, int]] = {}
        for leg in sorted(legs, key=lambda leg: leg.metadata["slot"]):
            pages = sorted(route_pages(leg))
            crowded = [t for t in pages if (cap := self.limit(t)) is not None and uses[t] + claims[t] >= cap]
            if crowded:
                out[leg.leg_id] = (crowded[0], claims[crowded[0]])
            else:
                claims.update(pages)
        return out


def route_pages(leg: Leg) -> set[str]:
    """The pages of an accepted leg's route after its seed (what ``PageCaps`` holds)."""
    if not leg.plan:
        return set()
    return {page for page in leg.plan.route[1:] if page != leg.seed_title}


# ---- the driver (shared by the Prefect flow and the in-process runner) ----------------------------
MapStage = Callable[[str, list[list[Leg]]], list[list[tuple[Leg, Failure | None]]]]


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


RUN_OUTPUTS = ("artifacts", "legs.parquet", "rejected.parquet", "run.json")


def claim_run_dir(params: GenerationParams, out_dir: Path, settings: Settings,
                  notice: Callable[[str], None] = _to_stderr) -> str | None:
    """Make ``out_dir`` this run's folder. The same key resumes; the same arguments under another key
    (code, templates, prompts, snapshot, tool data or answer settings changed) discard the old run's
    outputs and start afresh, saying what changed (returned too); other arguments are refused
    (``SystemExit`` naming them): the folder holds another run."""
    manifest = out_dir / "run.json"
    key, covered = run_key(params, settings)
    info = {"params": params.as_dict(), "digest": params.digest(), "format": ARTIFACT_FORMAT,
            "snapshot": snapshot_hash(settings), "key": key,
            "versions": {k: v for k, v in covered.items() if k != "params"}}
    restarted = None
    if manifest.exists():
        previous = json.loads(manifest.read_text())
        if previous.get("key") == key:
            return None   # the very same run: resume its artifacts
        if previous.get("digest") != info["digest"]:
            what = "; ".join(changes(previous.get("params") or {}, info["params"])) or "the artifact format"
            raise SystemExit(f"{out_dir} holds a run with other arguments ({what}); "
                             "choose another --out or delete it")
        what = (changes(previous["versions"], info["versions"]) if isinstance(previous.get("versions"), dict)
                else ["it was made by an earlier Legwork that kept no code version"]) or ["the run key"]
        restarted = "; ".join(what)
        for name in RUN_OUTPUTS:
            path = out_dir / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        notice(f"{out_dir}: the run there has the same arguments but another key, so its artifacts are not "
               f"resumed; starting a fresh run. Changed: {restarted}")
    manifest.write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
    return restarted


def run_generation(params: GenerationParams, out_dir: Path, settings: Settings, map_stage: MapStage,
                   progress: Callable[[str, int, int], None] | None = None, *, allow_errors: bool = False,
                   notice: Callable[[str], None] | None = None) -> RunResult:
    """Generate ``params.count`` legs into ``out_dir`` (resuming what finished there under the same
    run key; see ``claim_run_dir``). ``notice`` hears what the user must know but is no failure (a
    fresh start over another version's run); stderr by default.

    Raises ``GenerationErrors`` after writing everything when a stage met a bug (unless
    ``allow_errors``), and ``BudgetExhausted`` when too few legs were accepted."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    restarted = claim_run_dir(params, out_dir, settings, notice or _to_stderr)

    pending = [(slot, 0) for slot in range(params.count)]
    accepted: dict[int, Leg] = {}
    accepted_json: dict[int, str] = {}    # their JSON, as the last stage wrote it
    seed_uses: Counter[str] = Counter()   # accepted legs per seed page (crawl.spread_seed's bound)
    page_uses: Counter[str] = Counter()   # accepted legs per route page after the seed (page_cap)
    rejected_rows: list[dict] = []
    stage_seconds = {s: 0.0 for s in STAGES}
    attempts = 0
    round_no = 0
    _, generation = load_presets(list(params.preset_overrides), settings.templates_dir)
    attempts_per_leg = int(generation["attempts_per_leg"])
    caps = PageCaps(page_cap(params.count, generation, page_share(generation, settings)),
                    int(generation.get("max_country_uses", 0)))
    while pending:
        round_dir = out_dir / "artifacts" / f"round-{round_no:02d}"
        reused = {title: n for title, n in seed_uses.items() if n > 1}
        full = caps.full(page_uses)
        legs = [new_leg(params, slot, attempt, reused, full) for slot, attempt in pending]
        attempts += len(legs)
        for n, stage in enumerate(STAGES):
            path = round_dir / f"{n + 1}-{stage}.parquet"
            t0 = time.perf_counter()
            rows = read_rows(path) if path.exists() else None
            if rows is not None and resumable(rows, legs):  # finished earlier: resume
                results = [(Leg.from_json(r["leg_json"]), _failure_of(r)) for r in rows]
            else:  # not run yet, or it met a bug: errors are never resumed from, a re-run redoes the stage
                batches = [legs[i:i + params.batch_size] for i in range(0, len(legs), params.batch_size)]
                results = [pair for batch in map_stage(stage, batches) for pair in batch]
                rows = [leg_row(leg, stage, leg.metadata["attempt"], why.status if why else "ok",
                                why.reason if why else None, why.where if why else None) for leg, why in results]
                write_rows(path, rows)
            stage_seconds[stage] += time.perf_counter() - t0
            legs = []
            for (leg, why), row in zip(results, rows, strict=True):
                if why:   # the stage's own row: a rejected leg is serialised once
                    rejected_rows.append(row)
                else:
                    legs.append(leg)
            if stage == "plan":
                over = caps.overclaimed(legs, page_uses)
                for leg in legs:
                    if leg.leg_id in over:
                        page, earlier = over[leg.leg_id]
                        rejected_rows.append(leg_row(
                            leg, "claim", leg.metadata["attempt"], "rejected",
                            f"claim: the page {page!r} would pass its cap of {caps.limit(page)} routes "
                            f"(max_page_share, max_country_uses): {page_uses[page]} accepted, {earlier} planned by "
                            "earlier slots of this round; the slot plans again next round",
                            None))
                legs = [leg for leg in legs if leg.leg_id not in over]
            if progress:
                progress(stage, round_no, len(legs))
        written = {row["leg_id"]: row["leg_json"] for row in rows}   # the last stage's rows: the legs as they are
        for leg in legs:   # in slot order: a seed past the run's bound (same-round wraps) is another attempt
            uses = seed_uses[leg.seed_title]
            crowded = caps.full(Counter({t: page_uses[t] for t in route_pages(leg)}))
            if uses >= leg.metadata.get("seed_bound", uses + 1):
                rejected_rows.append(leg_row(leg, "accept", leg.metadata["attempt"], "rejected",
                                             f"accept: the seed {leg.seed_title!r} already starts {uses} legs of "
                                             "the run (ceil(count / seed pool) + 1)", None, written[leg.leg_id]))
            elif crowded:   # the claims after plan (``PageCaps.overclaimed``) let no such leg go on
                raise AssertionError(f"{leg.leg_id}: the page {crowded[0]!r} is on {page_uses[crowded[0]]} accepted "
                                     f"routes, its cap, though the leg's claim after plan held")
            else:
                accepted[leg.metadata["slot"]] = leg
                accepted_json[leg.metadata["slot"]] = written[leg.leg_id]
                seed_uses[leg.seed_title] += 1
                page_uses.update(route_pages(leg))
        pending = [(slot, attempt + 1) for slot, attempt in pending
                   if slot not in accepted and attempt + 1 < attempts_per_leg]
        round_no += 1
    legs_sorted = [accepted[s] for s in sorted(accepted)]
    write_rows(out_dir / "legs.parquet", [leg_row(accepted[s], "accepted", accepted[s].metadata["attempt"], leg_json=accepted_json[s])
                                          for s in sorted(accepted)])
    write_rows(out_dir / "rejected.parquet", sorted(rejected_rows, key=lambda r: (r["attempt"], r["leg_id"])))
    result = RunResult(legs_sorted, rejected_rows, out_dir, round_no, attempts, time.perf_counter() - started, stage_seconds,
                       restarted)
    if result.errors and not allow_errors:
        first = result.errors[0]
        raise GenerationErrors(f"{len(result.errors)} unexpected error(s) inside stages, the first at {first['stage']} "
                               f"({first['where']}): {first['reason']}", result)
    if len(legs_sorted) < params.count:
        raise BudgetExhausted(f"accepted {len(legs_sorted)} of {params.count} legs after {attempts} attempts "
                              f"({attempts_per_leg} per leg); most frequent reasons: {common_reasons(rejected_rows)}; "
                              f"see {out_dir / 'rejected.parquet'} for all of them", result)
    return result


def common_reasons(rejected_rows: list[dict], top: int = 3) -> str:
    """The commonest rejection reasons, details (arguments, stop numbers in brackets) cut off."""
    counts = Counter((r.get("reason") or "").split(" (")[0] for r in rejected_rows)
    return "; ".join(f"{n} x {reason}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top])


def local_map_stage(ctx: StageContext, workers: int = 1) -> MapStage:
    """Run stage batches in this process (threads), without Prefect: used by tests and benchmarks."""
    def map_stage(stage: str, batches: list[list[Leg]]):
        if workers <= 1:
            return [apply_stage(stage, b, ctx) for b in batches]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(lambda b: apply_stage(stage, b, ctx), batches))
    return map_stage
