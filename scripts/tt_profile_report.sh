#!/usr/bin/env bash
# Runs Tenstorrent's own profiler post-processing (tracy.process_ops_logs from the ttnn 0.81.1
# wheel, unmodified) on a folder written by `ttnn_moe.profile` / `scripts/demo.sh --profile DIR`,
# then tt-perf-report on the ops report it wrote (DIR/reports/ops_perf_results.csv).
# Usage: bash scripts/tt_profile_report.sh DIR [--device-only]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$(cd "${1:?usage: tt_profile_report.sh PROFILE_DIR [--device-only]}" && pwd)"
shift
bash "$ROOT/scripts/setup.sh" >&2
cd "$ROOT"
exec "$ROOT/.venv/bin/python" -m tools.tt_profile_report "$DIR" "$@"
