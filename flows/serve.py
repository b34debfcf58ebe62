"""Serve the regeneration flow on a schedule with Prefect.

    python -m flows.serve --cron "0 3 * * 1" [--count 5] [--repo-id ORG/NAME --upload]

This starts a long-running process that registers the deployment ``legwork-regeneration``
(the flow ``flows.prefect_tasks.regeneration`` with typed parameters) with the Prefect server and
runs it at each scheduled time. Watch runs in the Prefect UI: start it with ``prefect server
start`` (then open http://127.0.0.1:4200) and set ``PREFECT_API_URL=http://127.0.0.1:4200/api``
for this process so both share one server. ``--print`` shows the deployment that would be
served, with its parameters and their schema, and exits.
"""
from __future__ import annotations

import argparse
import json
import sys

from flows.prefect_api import prefect_api, prefect_environment
from pipeline.config import PROJECT_ROOT

PREFECT_HOME = PROJECT_ROOT / ".prefect"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m flows.serve", description=__doc__.split("\n\n")[0])
    p.add_argument("--cron", default="0 3 * * 1", help="schedule (cron syntax, UTC)")
    p.add_argument("--count", type=int, default=5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(PROJECT_ROOT / "data" / "release"))
    p.add_argument("--repo-id", default="legwork/legwork")
    p.add_argument("--upload", action="store_true")
    p.add_argument("--print", action="store_true", help="print the deployment and exit")
    args = p.parse_args(argv)
    parameters = {"out": args.out, "count": args.count, "seed": args.seed, "repo_id": args.repo_id,
                  "upload": args.upload}
    if args.print:
        prefect_environment(PREFECT_HOME)
        from prefect.utilities.callables import parameter_schema

        from flows.prefect_tasks import regeneration  # Prefect: once its API is chosen
        schema = parameter_schema(regeneration.fn).model_dump(mode="json")
        print(json.dumps({"name": "legwork-regeneration", "flow": regeneration.name, "cron": args.cron,
                          "parameters": parameters, "parameter_schema": schema["properties"]}, indent=2))
        return 0
    with prefect_api(PREFECT_HOME):
        from flows.prefect_tasks import regeneration  # Prefect: once its API is chosen
        regeneration.serve(name="legwork-regeneration", cron=args.cron, parameters=parameters)
    return 0


if __name__ == "__main__":
    sys.exit(main())
