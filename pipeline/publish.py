"""CLI: python -m pipeline.publish --repo-id ORG/NAME --legs RUN_DIR [--tasks DIR] [--dry-run --out DIR]

Publish a release to a Hugging Face dataset repository: validate every input again (refuse on any
failure), assemble the hub layout and dataset card (``pipeline.export.hub``: a config per family and
``trajectories``, the golden chats for training), then write it locally
(``--dry-run``) or upload it with ``huggingface_hub`` in one commit that names the runs. ATP rows
that no prover verified (Lean 4 and Isabelle without their toolchains) are left out unless
``--include-unverified``.

Environment: ``HF_TOKEN`` (or ``HUGGING_FACE_HUB_TOKEN``) for the upload, ``HF_ENDPOINT`` to send it to
another hub (tests use a local stand-in). The token is never printed or written: every message that
leaves this module passes through ``Redactor``.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline.config import PROJECT_ROOT, ConfigError, load_settings
from pipeline.export.hub import CONFIG_NAMES, Release, ReleaseError, assemble, write_release
from pipeline.tasks.common import family_module, read_task_rows
from pipeline.tools.registry import Toolbox
from pipeline.usage import run_cli
from pipeline.validate import legs_file, validate_dir

DEFAULT_ENDPOINT = "https://huggingface.co"
TRANSIENT_STATUS = {408, 425, 429, 500, 502, 503, 504}
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


class PublishError(RuntimeError):
    """The release was refused or the upload failed (message already redacted)."""


@dataclass(frozen=True)
class Redactor:
    """Replaces secrets in any text before it is shown or raised."""
    secrets: tuple[str, ...] = ()

    def __call__(self, text: object) -> str:
        text = str(text)
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, "***")
        return text


def hub_token(env=os.environ) -> str | None:
    return env.get("HF_TOKEN") or env.get("HUGGING_FACE_HUB_TOKEN") or None


def hub_endpoint(env=os.environ) -> str:
    return (env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


# ---- validation ------------------------------------------------------------------------------
def validate_inputs(legs_dirs: list[Path], task_dirs: list[Path], settings, say: Callable[[str], None],
                    task_settings=None) -> list[str]:
    """Re-run ``pipeline.validate`` on every run and each family's ``validate`` on every task set
    (task tool calls replay from ``task_settings``' cache, by default the legs' one)."""

    problems: list[str] = []
    for d in legs_dirs:
        if not legs_file(Path(d)).is_file():
            problems.append(f"{d}: no legs.parquet")
            continue
        n, failures, _ = validate_dir(Path(d), settings)
        problems += [f"{d}: {leg_id}: {why}" for leg_id, why in failures]
        say(f"validate {d}: {n} legs, {len({f[0] for f in failures})} failing")
    replay = None
    for d in task_dirs:
        rows = read_task_rows(Path(d))
        if not rows:
            problems.append(f"{d}: no task rows")
            continue
        replay = replay or Toolbox((task_settings or settings).with_overrides(default_backend="replay", backends={}))
        for family in sorted({r["family"] for r in rows}):
            mine = [r for r in rows if r["family"] == family]
            report = family_module(family).validate(mine, replay)
            problems += [f"{d}: {f.task_id}: {f.reason}" for f in report.failures]
            say(f"validate {d}: {len(mine)} {family} tasks, {len({f.task_id for f in report.failures})} failing")
    return problems


# ---- commit ----------------------------------------------------------------------------------
def commit_message(release: Release) -> tuple[str, str]:
    """A summary naming every run by its run.json digest, and a description with the row counts."""
    runs = ", ".join(f"{r.digest} ({r.params.get('level', '?')} {r.params.get('variant', '?')} "
                     f"s{r.params.get('seed', '?')})" for r in release.runs)
    families = sorted({fam for t in release.task_sets for f in t.files for fam in f.families})
    parts = ([f"runs {runs}"] if runs else []) + ([f"tasks {', '.join(families)}"] if families else [])
    summary = "Legwork release: " + "; ".join(parts)
    lines = [f"- {c.name}/{c.split}: {len(c.rows)} rows in {len(c.shards)} shard(s)" for c in release.configs.values()]
    lines += [f"- run {r.digest}: legs.parquet sha256 {r.legs_sha256}" for r in release.runs]
    lines += [f"- task file {f.name}: sha256 {f.sha256}" for t in release.task_sets for f in t.files]
    return summary, "\n".join(lines)


def _is_transient(exc: BaseException) -> bool:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if status is not None:
        return status in TRANSIENT_STATUS
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"TransportError", "TimeoutException", "NetworkError", "ConnectError", "ReadTimeout"}) \
        or isinstance(exc, (ConnectionError, TimeoutError))


def upload(folder: Path, repo_id: str, *, token: str, endpoint: str, private: bool, revision: str | None,
           message: str, description: str, retries: int, backoff: float, say: Callable[[str], None]) -> str:
    """create_repo + upload_folder, retried with exponential backoff on transient failures; returns the commit URL."""
    from huggingface_hub import HfApi

    redact = Redactor((token,))
    api = HfApi(endpoint=endpoint, token=token)
    # Stale shards of an earlier release would be read by the card's ``<config>/<split>-*`` patterns.
    delete_patterns = [f"{name}/*" for name in CONFIG_NAMES]
    for attempt in range(retries + 1):
        try:
            api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private)
            if revision and revision != "main":
                api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
            info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset",
                                     revision=revision, commit_message=message, commit_description=description,
                                     delete_patterns=delete_patterns)
            return str(info.commit_url)
        except Exception as exc:   # noqa: BLE001 - every failure is reported redacted, never raw
            why = redact(f"{type(exc).__name__}: {exc}")
            if attempt < retries and _is_transient(exc):
                wait = backoff * (2 ** attempt)
                say(f"upload attempt {attempt + 1} failed ({why}); retrying in {wait:.1f} s")
                time.sleep(wait)
                continue
            raise PublishError(f"upload to {repo_id} failed after {attempt + 1} attempt(s): {why}") from None
    raise AssertionError("unreachable")


# ---- CLI -------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m pipeline.publish", description=__doc__.split("\n\n")[0])
    p.add_argument("--repo-id", required=True, help="ORG/NAME of the dataset repository")
    p.add_argument("--legs", action="append", type=Path, default=[], metavar="RUN_DIR",
                   help="a generate run directory (with legs.parquet and run.json); repeatable")
    p.add_argument("--tasks", action="append", type=Path, default=[], metavar="TASKS_DIR",
                   help="an output directory of 'python -m pipeline.tasks build'; repeatable")
    p.add_argument("--dry-run", action="store_true", help="write the repository to --out instead of uploading")
    p.add_argument("--out", type=Path, default=None, help="where to write the repository (required with --dry-run)")
    p.add_argument("--private", action="store_true", help="create the repository private")
    p.add_argument("--revision", default=None, help="branch to commit to (created if missing); default main")
    p.add_argument("--skip-validate", action="store_true", help="publish without validating the inputs again")
    p.add_argument("--include-unverified", action="store_true",
                   help="also publish ATP rows no prover verified (Lean 4 / Isabelle checked structurally only); "
                        "left out by default")
    p.add_argument("--cache", type=Path, default=None, help="record/replay cache the inputs were made with")
    p.add_argument("--tasks-cache", type=Path, default=None,
                   help="cache the task sets were built with, when not the one of --cache")
    p.add_argument("--snapshot", type=Path, default=None, help="snapshot the legs were made from")
    p.add_argument("--shard-rows", type=int, default=None, help="rows per Parquet shard (default 500)")
    p.add_argument("--retries", type=int, default=4, help="upload retries on transient errors")
    p.add_argument("--backoff", type=float, default=2.0, help="first retry wait in seconds (doubles each time)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    token = hub_token()
    redact = Redactor((token,) if token else ())

    def say(text: str) -> None:
        print(redact(text), flush=True)

    def fail(text: str, code: int = 1) -> int:
        print(redact(text), file=sys.stderr, flush=True)
        return code

    if not REPO_ID.match(args.repo_id):
        return fail(f"--repo-id must look like ORG/NAME, got {args.repo_id!r}", 2)
    if not args.legs and not args.tasks:
        return fail("nothing to publish: give --legs RUN_DIR and/or --tasks TASKS_DIR", 2)
    if args.dry_run and args.out is None:
        return fail("--dry-run needs --out DIR", 2)
    if not args.dry_run and not token:
        return fail("no token: set HF_TOKEN (or HUGGING_FACE_HUB_TOKEN), or use --dry-run --out DIR", 2)

    started = time.perf_counter()
    try:
        if not args.skip_validate:
            try:
                settings = load_settings(cache_path=args.cache, snapshot_dir=args.snapshot)
                task_settings = settings.with_overrides(cache_path=args.tasks_cache) if args.tasks_cache else None
            except ConfigError as exc:
                return fail(f"configuration error: {exc}", 2)
            problems = validate_inputs(args.legs, args.tasks, settings, say, task_settings)
            if problems:
                for line in problems[:50]:
                    fail(f"FAIL {line}")
                return fail(f"refusing to publish: {len(problems)} validation failure(s) "
                            "(fix the inputs, or --skip-validate)")
        release = assemble(args.repo_id, args.legs, args.tasks, include_unverified=args.include_unverified)
        for name, n in sorted(release.left_out.items()):
            say(f"{name}: left out {n} unverified rows (no prover checked them; --include-unverified keeps them)")
        templates = PROJECT_ROOT / "templates"
        shard_kw = {"shard_rows": args.shard_rows} if args.shard_rows else {}
        with tempfile.TemporaryDirectory(prefix="legwork-release-") as tmp:
            out = args.out if args.out is not None else Path(tmp) / "release"
            files = write_release(release, out, templates, **shard_kw)
            size = sum(f.stat().st_size for f in files)
            for c in release.configs.values():
                say(f"{c.name}/{c.split}: {len(c.rows)} rows, {len(c.shards)} shard(s)")
            say(f"repository: {len(files)} files, {size:,} bytes in {out} ({time.perf_counter() - started:.1f} s)")
            if args.dry_run:
                return 0
            summary, description = commit_message(release)
            url = upload(out, args.repo_id, token=token, endpoint=hub_endpoint(), private=args.private,
                         revision=args.revision, message=summary, description=description,
                         retries=args.retries, backoff=args.backoff, say=say)
            say(f"published {args.repo_id}: {url} ({time.perf_counter() - started:.1f} s)")
            return 0
    except (ReleaseError, PublishError) as exc:
        return fail(f"error: {exc}")
    except Exception:   # noqa: BLE001 - last line of defence against printing a token
        return fail(f"unexpected error:\n{traceback.format_exc()}")


if __name__ == "__main__":
    sys.exit(run_cli(main, prog="python -m pipeline.publish"))
