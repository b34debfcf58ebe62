#!/usr/bin/env bash
# Fresh machine -> test dependencies -> the default test suite (slow checks excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh test
python -m ruff check .   # lint first: ruff defaults plus import sorting (pyproject.toml)
# one direction of imports: the layers contract ([tool.importlinter] in pyproject.toml), on this checkout
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" lint-imports --no-cache --no-logo
# pytest keeps the test modules it rewrites for its assertions (~5 s a worker) for the next run, also
# where the machine sets PYTHONDONTWRITEBYTECODE (setup.sh has byte-compiled the package itself)
unset PYTHONDONTWRITEBYTECODE
# one worker per core, each test module kept on one worker (its module fixtures are built once)
python -m pytest -q -p no:cacheprovider -n auto --dist loadfile "$@"
