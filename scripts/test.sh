#!/usr/bin/env bash
# Fresh machine -> test dependencies -> the default test suite (slow checks excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
python -m ruff check .   # lint first: ruff defaults plus import sorting (pyproject.toml)
# one direction of imports: the layers contract ([tool.importlinter] in pyproject.toml), on this checkout
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" lint-imports --no-cache --no-logo
# bytecode kept on disk for this run: the commands the tests start import the package afresh, and a
# machine that sets PYTHONDONTWRITEBYTECODE would have each of them compile it again
unset PYTHONDONTWRITEBYTECODE
# one worker per core, each test module kept on one worker (its module fixtures are built once)
python -m pytest -q -p no:cacheprovider -n auto --dist loadfile "$@"
