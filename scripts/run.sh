#!/usr/bin/env bash
# Fresh machine -> installed project -> the main job on the embedded default snapshot, offline.
# Extra arguments go to pipeline.generate (e.g. --seed 5, --variant linear); the run they make is validated.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
args=(--difficulty extreme --count 3 "$@")
python -m pipeline.generate "${args[@]}"
out="$(python -c 'import sys; from pipeline.generate import parse_args, run_dir; print(run_dir(parse_args(sys.argv[1:])))' "${args[@]}")"
python -m pipeline.validate "$out"
