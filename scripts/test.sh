#!/usr/bin/env bash
# The test command: set up (venv, pinned installs, build), then run the whole suite.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k golden`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$ROOT/.venv/bin/python" -m pytest "$@"
