#!/usr/bin/env bash
# The demo command: set up (venv, pinned installs, build), then run the DeepSeek-V3 MoE demo.
# Extra arguments go to the demo, e.g. `bash scripts/demo.sh --mesh quad --tokens 64`.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$ROOT/.venv/bin/python" -m models.deepseek_v3.demo "$@"
