"""Serve the regeneration flow on a schedule with Prefect.

    python -m flows.serve --cron "0 3 * * 1" [--count 5] [--repo-id ORG/NAME --upload]

This starts a long-running process that registers the deployment ``legwork-regeneration``
with the Prefect server and runs the flow at each scheduled time. Watch runs in the Prefect
UI: start it with ``prefect server start`` (then open http://127.0.0.1:4200) and set
``PREFECT_API_URL=http://127.0.0.1:4200/api`` for this process so both share one server.
``--print`` shows the deployment that would be served and exits.
"""
from __future__ import annotations

import argparse
import json
import sys

from flows.generate import prefect_environment
from pipeline.config import PROJECT_ROOT


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flows.serve", description=__doc__.split("\n\n")[0])
    p.add_argument("--cron", default="0 3 * * 1", help="schedule (cron syntax, UTC)")
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--out", default=str(PROJECT_ROOT / "data" / "release"))
    p.add_argument("--repo-id", default="legwork/legwork")
    p.add_argument("--upload", action="store_true")
    p.add_argument("--print", action="store_true", help="print the deployment and exit")
    args = p.parse_args(argv)
    parameters = {"argv": ["--out", args.out, "--count", str(args.count), "--repo-id", args.repo_id]
                  + (["--upload"] if args.upload else [])}
    if args.print:
        print(json.dumps({"name": "legwork-regeneration", "cron": args.cron, "parameters": parameters}, indent=2))
        return 0
    prefect_environment(PROJECT_ROOT / ".prefect")
    from prefect import flow

    from flows import regenerate

    @flow(name="legwork-scheduled-regeneration", validate_parameters=False)
    def scheduled(argv: list):
        return regenerate.main(list(argv))

    scheduled.serve(name="legwork-regeneration", cron=args.cron, parameters=parameters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
