#!/usr/bin/env bash
# Creates or updates .venv with the pinned dependencies and builds ttnn_moe._C.
# Sourced by scripts/test.sh and scripts/demo.sh; safe to run again (incremental).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV="$ROOT/.venv"

if [ ! -x "$VENV/bin/python" ]; then
    echo "[setup] creating virtual environment in .venv"
    "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"

# Reinstall the pinned requirements only when requirements.txt changed.
STAMP="$VENV/.requirements.sha256"
WANT="$(sha256sum requirements.txt | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
    echo "[setup] installing pinned requirements (first run takes a few minutes)"
    "$PY" -m pip install --quiet --disable-pip-version-check -r requirements.txt
    echo "$WANT" > "$STAMP"
fi

# The kernel conformance check compiles against the real tt-metal 0.81.1 headers,
# which need clang >= 17 (Debian 12's g++ 12 rejects their templates).
if ! command -v clang++-19 >/dev/null 2>&1 && [ -z "${TTNN_MOE_CONFORMANCE_CXX:-}" ]; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "[setup] installing clang-19 for the kernel conformance check"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-19 >/dev/null
    else
        echo "[setup] warning: clang++-19 not found; install it (apt-get install clang-19) or set" \
             "TTNN_MOE_CONFORMANCE_CXX to a clang >= 17 / g++ >= 13, or the conformance tests fail" >&2
    fi
fi

echo "[setup] building ttnn_moe._C and the test-only numerics extension (incremental)"
"$PY" -m pip install --quiet --disable-pip-version-check --no-build-isolation --no-deps \
    --config-settings=cmake.define.TTNN_MOE_TESTING=ON -e "$ROOT"
"$PY" -c "import ttnn_moe, ttnn_moe._C; print('[setup] ttnn_moe ready:', ttnn_moe._C.__file__)"

# The real ttnn 0.81.1 runtime (Python 3.12 / 3.10, mock devices) for tests/test_real_ttnn.py:
# created once in the cache, the extension rebuilt for it when the sources change.
"$PY" -m tools.real_ttnn.env
