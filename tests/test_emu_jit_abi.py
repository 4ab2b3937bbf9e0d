"""Kernel headers from another emulator ABI than the built extension's are refused at build time.

This happens when the sources are edited or pulled and the extension is not rebuilt: a kernel built
against the new headers would call the running emulator's service table at the wrong slots."""

import shutil
import subprocess
import sys
import textwrap

from ttnn_moe.paths import emulator_include_dir

PROBE = textwrap.dedent(
    """
    import sys
    import ttnn_moe.paths
    ttnn_moe.paths.emulator_include_dir = lambda: sys.argv[1]  # before the first kernel build
    from ttnn_moe._C import emu
    from ttnn_moe._C import program as pd
    core = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(0, 0))])
    kernel = pd.KernelDescriptor(
        kernel_source='#include "api/dataflow/dataflow_api.h"\\nvoid kernel_main() {}\\n',
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=core,
        config=pd.ReaderConfigDescriptor(),
    )
    try:
        emu.run_program(emu.open_device(), pd.ProgramDescriptor(kernels=[kernel]))
    except Exception as error:
        print("REFUSED:", error)
    else:
        print("RAN")
    """
)


def run_probe(include_dir, tmp_path) -> str:
    env = {**__import__("os").environ, "TTNN_MOE_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(include_dir)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_headers_of_the_built_abi_run(tmp_path):
    assert "RAN" in run_probe(emulator_include_dir(), tmp_path)


def test_headers_of_another_abi_are_refused_with_a_rebuild_hint(tmp_path):
    headers = tmp_path / "include"
    shutil.copytree(emulator_include_dir(), headers)
    abi = headers / "ttnn_moe_emu" / "abi.h"
    text = abi.read_text()
    assert "inline constexpr uint32_t ABI_VERSION = " in text
    abi.write_text(
        text.replace("inline constexpr uint32_t ABI_VERSION = ", "inline constexpr uint32_t ABI_VERSION = 1000 + ")
    )
    out = run_probe(headers, tmp_path)
    assert "REFUSED" in out and "do not match the built ttnn_moe extension" in out and "scripts/setup.sh" in out, out
