"""CLI: python -m pipeline.generate --difficulty extreme [--variant dag] [--count N] ...

Generates race legs offline on the embedded snapshot (or the configured one) and prints a
summary table. The stages run as the Prefect flow in flows/generate.py where a Prefect API is
configured (``PREFECT_API_URL`` or the active Prefect profile) or a Prefect task runner is asked
for; otherwise the same driver runs them in-process (``--task-runner auto``), which spares a
small run the temporary Prefect server (ten seconds on three legs; see benchmarks/headline.py)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from flows.generate import BudgetExhausted, GenerationErrors, GenerationParams, local_map_stage, run_generation
from flows.prefect_api import configured_api_url, prefect_api
from pipeline.config import PROJECT_ROOT, ConfigError, load_settings
from pipeline.export.aar import write_aar_dir
from pipeline.model import LEVELS, VARIANTS, WIDE
from pipeline.report.stats import spread_line, world_spread
from pipeline.stages.base import DERIVED_COMPUTED, STAGES, StageContext
from pipeline.usage import run_cli


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m pipeline.generate", description=__doc__.split("\n\n")[0])
    p.add_argument("--difficulty", "--level", dest="level", choices=LEVELS, required=True)
    p.add_argument("--variant", choices=VARIANTS, default="dag")
    p.add_argument("--count", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="run directory (default data/runs/<level>-<variant>-s<seed>)")
    p.add_argument("--no-simulated", action="store_true", help="refuse simulated tool values")
    p.add_argument("--simulated-templates", action="store_true",
                   help="also use roadblock templates that only a simulated provider answers offline (place "
                        "ratings, crypto); off by default: real data first")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="LEVEL.KEY=VALUE",
                   help="override a difficulty preset, e.g. --set extreme.diamonds=[3,3]")
    p.add_argument("--seed-title", default=None, help="start every leg at this page")
    p.add_argument("--export-aar", type=Path, default=None, help="also write one AAR JSON file per leg here")
    p.add_argument("--task-runner", choices=["auto", "thread", "process", "dask", "local"], default="auto",
                   help="Prefect task runner (thread, process, dask: a Prefect flow, on a temporary server when no "
                        "Prefect API is configured); 'local' runs the stages in-process without Prefect; 'auto' "
                        "(default) is 'thread' where a Prefect API is configured and 'local' otherwise")
    p.add_argument("--dask-address", default=None, help="scheduler address of an existing Dask cluster")
    p.add_argument("--batch-size", type=int, default=8, help="legs per stage task")
    p.add_argument("--llm-base-url", default=None)
    p.add_argument("--llm-model", default=None)
    p.add_argument("--snapshot", type=Path, default=None)
    p.add_argument("--cache", type=Path, default=None)
    p.add_argument("--faults", default=None, metavar="SPEC",
                   help="inject seeded tool faults, e.g. rate=0.1,seed=7 (pipeline.tools.faults; 'off' disables "
                        "LEGWORK_FAULTS); not part of the run's digest, so a run may be resumed without them")
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar and no table of legs: a successful run prints its one-line result only; a "
                        "failure (and a fresh start over another version's run) is still said on stderr")
    p.add_argument("--allow-errors", action="store_true",
                   help="exit 0 even when a stage met an unexpected exception (errors are still recorded)")
    return p.parse_args(argv)


def run_dir(args: argparse.Namespace) -> Path:
    """Where a run goes: --out, else data/runs/<level>-<variant>-s<seed>."""
    return args.out or PROJECT_ROOT / "data" / "runs" / f"{args.level}-{args.variant}-s{args.seed}"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    console = Console(stderr=True, soft_wrap=True)   # failures and warnings: said whatever the flags (--quiet silences progress)
    try:
        settings = load_settings(snapshot_dir=args.snapshot, cache_path=args.cache,
                                 allow_simulated=False if args.no_simulated else None,
                                 simulated_templates=True if args.simulated_templates else None,
                                 llm_base_url=args.llm_base_url, llm_model=args.llm_model, faults=args.faults)
    except ConfigError as exc:
        console.print(f"[red]configuration error:[/red] {escape(str(exc))}")
        return 2
    if args.count < 1:
        console.print("[red]--count must be at least 1[/red]")
        return 2
    out = run_dir(args)
    params = GenerationParams(level=args.level, variant=args.variant, count=args.count, seed=args.seed,
                              no_simulated=args.no_simulated, simulated_templates=settings.simulated_templates,
                              preset_overrides=tuple(args.overrides),
                              batch_size=args.batch_size, seed_title=args.seed_title)
    try:
        ctx = StageContext.for_worker(settings, tuple(args.overrides))
    except Exception as exc:  # noqa: BLE001 - configuration problems (e.g. LLMError) stop the run before it starts
        console.print(f"[red]configuration error:[/red] {escape(str(exc))}")
        return 2

    if args.seed_title:
        problem = seed_title_problem(args.seed_title, ctx)
        if problem:
            console.print(f"[red]--seed-title:[/red] {escape(problem)}")
            return 2

    progress = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total} stages"),
                        TimeElapsedColumn(), console=console, transient=True, disable=args.quiet)
    bar = progress.add_task(f"{args.level}/{args.variant}: generating", total=len(STAGES))

    def on_stage(stage: str, round_no: int, alive: int) -> None:
        progress.update(bar, completed=STAGES.index(stage) + 1,
                        description=f"{args.level}/{args.variant} round {round_no}: {stage} ({alive} legs alive)")

    def notice(message: str) -> None:
        console.print(f"[yellow]note:[/yellow] {escape(message)}", highlight=False)

    runner = resolve_task_runner(args.task_runner)
    kept_before = (*ctx.kept_tally(), len(DERIVED_COMPUTED))
    try:
        with progress:
            if runner == "local":
                result = run_generation(params, out, settings, local_map_stage(ctx), on_stage,
                                        allow_errors=args.allow_errors, notice=notice)
            else:
                with prefect_api(PREFECT_HOME):
                    from flows.prefect_tasks import run_with_prefect  # Prefect: once its API is chosen
                    result = run_with_prefect(params, out, settings, ctx, runner, args.dask_address, on_stage,
                                              allow_errors=args.allow_errors)
    except GenerationErrors as exc:
        print_summary(exc.result, console, table=not args.quiet)
        print_errors(exc.result, console)
        return 3
    except BudgetExhausted as exc:
        console.print(f"[red]generation incomplete:[/red] {escape(str(exc))}")
        print_errors(exc.result, console)
        return 1

    if args.export_aar:
        write_aar_dir(result.accepted, args.export_aar)
    print_summary(result, console, table=not args.quiet)
    if not args.quiet:
        print_first_met(kept_before, ctx, console)
    print_errors(result, console)
    return 0


def print_first_met(before: tuple[int, float, int], ctx: StageContext, out) -> None:
    """The run's one-off cost: what it computed for this world and kept for later runs, which read it
    instead: the values of the pages it met first (profile, hops, facts; a large world's first runs
    pay most of their time here, ``python -m flows.derive`` pays it ahead) and, in a world small
    enough, every page's profile at once."""
    count, seconds = (a - b for a, b in zip(ctx.kept_tally(), before[:2], strict=True))
    whole = DERIVED_COMPUTED[before[2]:]
    parts = [f"{count:,} page values in {seconds:.1f} s"] if count else []
    if whole:
        parts.append(f"{len(whole)} whole-world tables ({', '.join(sorted({n.split('-')[0].replace('_', ' ') for n, _ in whole}))}) "
                     f"in {sum(took for _, took in whole):.1f} s")
    if parts:
        out.print(f"first run on this world: computed {', '.join(parts)}, kept in {ctx.settings.derived_dir} "
                  "for later runs (`python -m flows.derive` computes every page's values ahead)",
                  highlight=False, soft_wrap=True)


PREFECT_HOME = PROJECT_ROOT / ".prefect"


def seed_title_problem(title: str, ctx: StageContext) -> str | None:
    """Why ``--seed-title`` cannot seed any leg (absent or malformed page), said before the first
    attempt rather than after the attempt budget; None when the page is there."""
    if ctx.page(title) is not None:
        return None
    if title in ctx.bad_pages:
        return f"the page {title!r} is malformed in the snapshot ({ctx.bad_pages[title]})"
    near = [hit["title"] for hit in ctx.store.search(title, k=3)]
    hint = f"; pages with its words: {', '.join(near)}" if near else ""
    return f"no page {title!r} in the snapshot {ctx.settings.snapshot_dir}{hint}"


def resolve_task_runner(name: str) -> str:
    """``auto``: a Prefect flow (thread runner) where a Prefect API is configured, else in-process."""
    if name != "auto":
        return name
    return "thread" if configured_api_url(PREFECT_HOME) else "local"


def print_errors(result, console) -> None:
    """Errors are bugs, not rejections: each is shown with where it happened."""
    for row in result.errors:
        console.print(f"[red]error[/red] {row['leg_id']} at {row['stage']} ({row['where']}): {row['reason']}")
    if result.errors:
        console.print(f"[red]{len(result.errors)} error(s)[/red]: unexpected exceptions inside stages; "
                      f"see {result.out_dir / 'rejected.parquet'} (status 'error'). A re-run redoes those stages.")


def print_summary(result, console, *, table: bool = True) -> None:
    """The legs as a table, the spread and a one-line result on stdout (``table=False``: the line only)."""
    out = Console(width=160)  # the table goes to stdout, progress and errors to stderr
    if table:
        print_table(result, out)
    reasons: dict[str, int] = {}
    for row in result.rejected:
        if row["status"] == "rejected":
            reasons[row["stage"]] = reasons.get(row["stage"], 0) + 1
    out.print(f"accepted {len(result.accepted)} legs in {result.seconds:.1f} s after {result.attempts} attempts; "
              f"rejected by stage: {reasons or 'none'}; errors: {len(result.errors)}; artifacts in {result.out_dir}",
              highlight=False, soft_wrap=True)


def print_table(result, out) -> None:
    table = Table(title=f"Legwork legs in {result.out_dir}")
    for col in ("leg", "seed page", "stops", "pages", "roadblocks", "detours", "diamonds", "wide (members)",
                "tool calls", "simulated", "y*"):
        table.add_column(col)
    for leg in result.accepted:
        kinds = [s.kind for s in leg.stops]
        wide = leg.stops_of(WIDE)
        sets = f"{len(wide)} ({', '.join(str(len(s.wide.members)) for s in wide)})" if wide else "0"
        table.add_row(leg.leg_id, leg.seed_title, str(len(leg.stops)), str(kinds.count("route_info")),
                      str(kinds.count("roadblock")), str(kinds.count("detour")), str(leg.diamonds), sets,
                      str(len(leg.trace)), f"{leg.metadata.get('simulated_share', 0):.0%}", str(leg.passcode))
    out.print(table)
    if result.accepted:
        out.print("spread: " + spread_line(world_spread(result.accepted)[-1]))


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m pipeline.generate"))
