"""CLI: ``python -m pipeline.snapshot build --from PATH [--from PATH ...] [--out DIR] [--workers N]
[--dask-address tcp://HOST:PORT | --dask-workers N] [--shard-mb MB] [--fresh] [--quiet]`` and ``info``.

``build`` resumes: an interrupted or killed build keeps what it imported in ``.<out>.staging``
beside the output, and the same command run again continues after the last committed shard. It
shows its progress (pages/s, MB/s of XML, time left) unless ``--quiet``.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from pipeline.config import load_settings
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.importers import SnapshotInputError
from pipeline.snapshot.store import SnapshotError, SnapshotStore


def _settings():
    return load_settings()


class _ProgressView:
    """Rich progress of a build: a bar per input and one for the final pass, with pages/s, MB/s of XML
    and the time left (from the share of the input's file read)."""

    def __init__(self, console: Console):
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                                 TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("left"),
                                 TimeRemainingColumn(), console=console, transient=False)
        self.tasks: dict[str, int] = {}

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        return self.progress.__exit__(*exc)

    def __call__(self, event: dict) -> None:
        name = f"import {event['source']}" if event["phase"] == "import" else "final pass"
        task = self.tasks.get(name)
        if task is None:
            task = self.tasks[name] = self.progress.add_task(name, total=event["total"], rate="")
        seconds = max(event["seconds"], 1e-6)
        if event["phase"] == "finish":
            rate = f"{event['done']} of {event['total']} pages, {event['done'] / seconds:,.0f} pages/s"
        elif event.get("unit") == "entries":
            rate = f"{event['articles']:,} articles, {event['pages'] / seconds:,.0f} entries/s"
        else:
            rate = (f"{event['articles']:,} articles, {event['pages'] / seconds:,.0f} pages/s, "
                    f"{event['xml_bytes'] / 1e6 / seconds:.1f} MB/s of XML")
        self.progress.update(task, completed=event["done"], total=event["total"], rate=rate)


def cmd_build(args, console: Console) -> int:
    out = Path(args.out) if args.out else _settings().snapshot_dir
    started = time.monotonic()
    if args.fresh:
        staging = out.parent / f".{out.name}.staging"
        if staging.exists():
            shutil.rmtree(staging)
    view = _ProgressView(console) if not args.quiet else None
    try:
        with view or contextlib.nullcontext():
            result = build_snapshot(args.sources, out, log=(lambda m: console.print(m, highlight=False, markup=False))
                                    if not args.quiet else None, language=args.language, workers=args.workers,
                                    resume=True, dask_address=args.dask_address, dask_workers=args.dask_workers,
                                    progress=view, shard_bytes=int(args.shard_mb * 2**20) if args.shard_mb else 0)
    except SnapshotInputError as exc:
        console.print("[red]build failed, snapshot not written:[/red] ", end="", highlight=False)
        console.print(str(exc), highlight=False, markup=False)
        return 2
    except KeyboardInterrupt:
        console.print(f"interrupted: run the same command again to resume (staged in .{out.name}.staging)",
                      highlight=False, markup=False)
        return 130
    m = result.manifest
    table = Table(title=f"snapshot {out}")
    table.add_column("source")
    table.add_column("kind")
    for col in ("pages", "redirects", "skipped"):
        table.add_column(col, justify="right")
    for s in m["sources"]:
        table.add_row(s["name"], s["kind"], str(s["pages"]), str(s["redirects"]), str(s["skipped"]))
    console.print(table)
    c, r = m["counts"], m["report"]
    console.print(f"pages {c['pages']}, infobox pages {c['infobox_pages']}, links inside the snapshot "
                  f"{c['links_in_snapshot']} of {c['links']}, redirects {c['redirects']}", highlight=False)
    console.print(f"merged titles {r['merges']}, skipped pages {r['skipped']}, redirects dropped "
                  f"{r['redirects_dropped']} (see build_report.json)", highlight=False)
    console.print(f"language {m['language']}: {r['other_language']} pages identified as another language "
                  "(kept, never seeds or route pages); by language " + ", ".join(
                      f"{k} {v}" for k, v in sorted(m["languages"].items(), key=lambda kv: -kv[1])[:6]),
                  highlight=False)
    console.print(f"hash {m['hash']}  ({time.monotonic() - started:.1f} s)", highlight=False)
    return 0


def cmd_info(args, console: Console) -> int:
    path = Path(args.snapshot) if args.snapshot else _settings().snapshot_dir
    try:
        info = SnapshotStore.open(path).info()
    except SnapshotError as exc:
        console.print(f"[red]{exc}[/red]", highlight=False)
        return 2
    if args.json:
        print(json.dumps(info, indent=1, sort_keys=True))
        return 0
    table = Table(title=f"snapshot {info['path']}", show_header=False)
    for key in ("pages", "infobox_pages", "links_in_snapshot", "links", "redirects", "pages_with_coords",
                "size_bytes", "hash"):
        table.add_row(key.replace("_", " "), str(info[key]))
    table.add_row("sources", ", ".join(info["sources"]))
    console.print(table)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.snapshot", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="import dumps / ZIM / wikitext / summary JSON into a snapshot")
    b.add_argument("--from", dest="sources", action="append", required=True, metavar="PATH",
                   help="a file or a folder (scanned for .zim, .xml(.bz2), .json and folders of .txt); repeatable")
    b.add_argument("--out", help="snapshot directory (default: settings.snapshot_dir)")
    b.add_argument("--language", default="en", help="the snapshot's language (ISO 639-1); pages identified as "
                   "another (py3langid) are never seeds or route pages")
    b.add_argument("--workers", type=int, default=None, metavar="N",
                   help="processes parsing pages (default: every core; inputs under 1 MB are parsed in one)")
    b.add_argument("--dask-address", metavar="tcp://HOST:PORT", default=None,
                   help="run the import's shards and the final pass on this Dask cluster (its workers must see the "
                   "inputs and the output folder at the same paths); the snapshot is the same bytes")
    b.add_argument("--dask-workers", type=int, default=None, metavar="N",
                   help="run them on a local Dask cluster of N worker processes")
    b.add_argument("--shard-mb", type=float, default=None, metavar="MB",
                   help="XML a dump shard (default: 16, less for small dumps); a resumed build keeps its own")
    b.add_argument("--fresh", action="store_true",
                   help="discard an import left by an interrupted build instead of resuming it")
    b.add_argument("--quiet", action="store_true")
    i = sub.add_parser("info", help="counts and content hash of a snapshot")
    i.add_argument("--snapshot", help="snapshot directory (default: settings.snapshot_dir)")
    i.add_argument("--json", action="store_true", help="print the info as JSON")
    args = parser.parse_args(argv)
    console = Console(width=120)
    return {"build": cmd_build, "info": cmd_info}[args.command](args, console)


if __name__ == "__main__":
    sys.exit(main())
