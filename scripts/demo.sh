#!/usr/bin/env bash
# The demo command: set up (venv, pinned installs, build), then run the DeepSeek-V3 MoE demo.
# Extra arguments go to the demo, e.g. `bash scripts/demo.sh --mesh quad --tokens 64`.
# `--profile DIR` writes the modeled device time (ops_perf_results.csv, trace.json) to DIR.
# `--backend hardware` runs it on the real ttnn (TTNN_MOE_BACKEND=hardware) instead of the emulator;
# where the real ttnn is only in the project's torch-free 3.12 environment, the device-only demo
# (models/deepseek_v3/device_only_demo.py; on a mock device it stops at the first kernel compile).
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
if [ "${TTNN_MOE_BACKEND:-}" = "hardware" ] && ! "$ROOT/.venv/bin/python" -c "import ttnn" 2>/dev/null; then
    # No real ttnn beside torch here: the real runtime lives in the project's Python 3.12 / 3.10
    # environment, without torch, where the layer runs on allocated weights (device_only_demo.py).
    real_python="$("$ROOT/.venv/bin/python" -m tools.real_ttnn.env | sed -n 's/^\[real-ttnn\] ready: //p')"
    if [ -z "$real_python" ]; then
        echo "demo: --backend hardware needs the real ttnn 0.81.1 (Python 3.12 or 3.10); none is set up here" >&2
        exit 1
    fi
    echo "[demo] the real ttnn runs under $real_python (no torch there): the device-only demo" >&2
    PYTHONPATH="$ROOT" exec "$real_python" -m models.deepseek_v3.device_only_demo ${demo_args[@]+"${demo_args[@]}"}
fi
exec "$ROOT/.venv/bin/python" -m models.deepseek_v3.demo ${demo_args[@]+"${demo_args[@]}"}
