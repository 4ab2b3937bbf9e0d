#!/usr/bin/env bash
# The demo command: set up (venv, pinned installs, build), then run the DeepSeek-V3 MoE demo.
# Extra arguments go to the demo, e.g. `bash scripts/demo.sh --mesh quad --tokens 64`.
# `--profile DIR` writes the modeled device time (ops_perf_results.csv, trace.json) to DIR.
# `--backend hardware` runs it on the real ttnn (TTNN_MOE_BACKEND=hardware) instead of the emulator.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
demo_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --backend) export TTNN_MOE_BACKEND="${2:?--backend needs emulator or hardware}"; shift 2 ;;
        --backend=*) export TTNN_MOE_BACKEND="${1#*=}"; shift ;;
        *) demo_args+=("$1"); shift ;;
    esac
done
bash "$ROOT/scripts/setup.sh"
cd "$ROOT"
exec "$ROOT/.venv/bin/python" -m models.deepseek_v3.demo ${demo_args[@]+"${demo_args[@]}"}
