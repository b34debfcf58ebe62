"""CLI: ``python -m pipeline.snapshot build --from PATH [--from PATH ...] [--out DIR] [--workers N] [--fresh]``
and ``info``.

``build`` resumes: an interrupted or failed build keeps what it imported in ``.<out>.staging``
beside the output, and the same command run again continues after the last committed page.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from pipeline.config import load_settings
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.importers import SnapshotInputError
from pipeline.snapshot.store import SnapshotError, SnapshotStore


def _settings():
    return load_settings()


def cmd_build(args, console: Console) -> int:

    out = Path(args.out) if args.out else _settings().snapshot_dir
    started = time.monotonic()
    if args.fresh:
        staging = out.parent / f".{out.name}.staging"
        if staging.exists():
            shutil.rmtree(staging)
    try:
        result = build_snapshot(args.sources, out, log=(lambda m: console.print(m, highlight=False, markup=False))
                                if not args.quiet else None, language=args.language, workers=args.workers,
                                resume=True)
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
