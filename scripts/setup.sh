#!/usr/bin/env bash
# Install everything Legwork needs on a fresh machine (Debian + Python 3.11).
# Usage: scripts/setup.sh [test]   ("test" adds the test tools)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  missing=""
  command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
  command -v coqc >/dev/null 2>&1 || missing="$missing coq"
  command -v git >/dev/null 2>&1 || missing="$missing git"
  command -v unshare >/dev/null 2>&1 || missing="$missing util-linux"
  if [ "${1:-}" = "test" ]; then
    command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
  fi
  if [ -n "$missing" ]; then
    echo "installing Debian packages:$missing"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
  fi
fi
extras=""
[ "${1:-}" = "test" ] && extras="[test]"
python -m pip install --disable-pip-version-check -q -e ".${extras}"
# Byte-compile the project once, as a regular (non-editable) install does: with PYTHONDONTWRITEBYTECODE set,
# every process (each CLI, each worker) would otherwise compile the package's sources again (~0.3 s a CLI).
python -m compileall -q pipeline flows >/dev/null
