#!/usr/bin/env bash
# Every op through the real ttnn 0.81.1 runtime on mock devices, one line per case:
#   bash scripts/real_ttnn.sh [--device NAME] [--op NAME]
# Sets up the project environment and the real-ttnn one (Python 3.12 or 3.10) if needed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh" >&2
cd "$ROOT"
exec "$ROOT/.venv/bin/python" -m tools.real_ttnn.matrix "$@"
