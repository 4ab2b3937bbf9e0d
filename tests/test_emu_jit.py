"""Kernel builds: disk cache, build counting, compile errors, precompiled standard headers."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import ttnn_moe.paths as paths
from emu_programs import copy_program, core_set, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

TESTS = Path(__file__).resolve().parent


def test_second_run_builds_nothing():
    dev = emu.open_device()
    src = dev.allocate(4 * 64, 64)
    dst = dev.allocate(4 * 64, 64)
    emu.run_program(dev, copy_program(src, dst, 64, 4, [(0, 0)]))
    before = emu.jit_stats()
    counters = emu.run_program(dev, copy_program(src, dst, 64, 4, [(0, 0)]))
    assert counters["kernel_builds"] == 0
    assert counters["kernel_cache_hits"] == 2  # reader and writer
    assert emu.jit_stats()["builds"] == before["builds"]


_RUN_TWICE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    from emu_programs import copy_program
    from ttnn_moe._C import emu
    dev = emu.open_device()
    src = dev.allocate(4 * 96, 96)
    dst = dev.allocate(4 * 96, 96)
    print(emu.run_program(dev, copy_program(src, dst, 96, 4, [(0, 0)]))["kernel_builds"])
    """
)


def test_disk_cache_survives_the_process(tmp_path):
    env = dict(os.environ, TTNN_MOE_CACHE=str(tmp_path / "cache"))
    script = _RUN_TWICE.format(tests=str(TESTS))
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "2"
    assert second.stdout.strip() == "0"
    assert len(list((tmp_path / "cache" / "emu_kernels").glob("*/*/kernel.so"))) == 2


def test_compile_error_shows_path_and_line(tmp_path):
    bad = tmp_path / "bad_kernel.cpp"
    bad.write_text('#include "api/dataflow/dataflow_api.h"\n\nvoid kernel_main() {\n    undeclared_call(1);\n}\n')
    program = pd.ProgramDescriptor(kernels=[kernel(str(bad), core_set(0, 0), pd.ReaderConfigDescriptor())])
    with pytest.raises(emu.EmulatorError) as err:
        emu.run_program(emu.open_device(), program)
    msg = str(err.value)
    assert "kernel build failed" in msg
    assert f"{bad}:4:" in msg and "undeclared_call" in msg


def test_source_code_kernels_and_defines():
    dev = emu.open_device()
    out = dev.allocate(32, 32)
    code = textwrap.dedent(
        """
        #include "api/dataflow/dataflow_api.h"
        void kernel_main() {
            const uint32_t scratch = get_semaphore(0);
            auto* p = reinterpret_cast<volatile uint32_t*>(scratch);
            p[0] = MAGIC + get_compile_time_arg_val(0) + get_named_compile_time_arg_val("extra");
            noc_async_write(scratch, get_noc_addr_from_bank_id<true>(0, get_arg_val<uint32_t>(0)), 4);
        }
        """
    )
    k = pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=core_set(1, 1),
        compile_time_args=[100],
        named_compile_time_args=[("extra", 20)],
        defines=[("MAGIC", "3")],
        runtime_args=[(pd.CoreCoord(1, 1), [out])],
        config=pd.WriterConfigDescriptor(),
    )
    emu.run_program(dev, pd.ProgramDescriptor(kernels=[k]))
    assert dev.read(out, 32, 32).view(np.uint32)[0] == 123


def test_editing_a_header_included_by_relative_path_rebuilds_the_kernel(tmp_path):
    # Op kernels share headers under ttnn_moe/kernels/common/ through "../../common/..." includes;
    # the build cache key must cover them, and the headers they include in turn.
    kernel_path = tmp_path / "op" / "dataflow" / "write_value.cpp"
    header = tmp_path / "common" / "value.hpp"
    nested = tmp_path / "common" / "value_detail.hpp"
    kernel_path.parent.mkdir(parents=True)
    header.parent.mkdir()
    kernel_path.write_text(
        textwrap.dedent(
            """
            #include "../../common/value.hpp"
            #include "api/dataflow/dataflow_api.h"
            void kernel_main() {
                const uint32_t scratch = get_semaphore(0);
                reinterpret_cast<volatile uint32_t*>(scratch)[0] = kValue;
                noc_async_write(scratch, get_noc_addr_from_bank_id<true>(0, get_arg_val<uint32_t>(0)), 4);
            }
            """
        )
    )
    header.write_text('#pragma once\n#include "value_detail.hpp"\nconstexpr uint32_t kValue = kDetail + 1;\n')
    dev = emu.open_device()
    out = dev.allocate(32, 32)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                str(kernel_path),
                core_set(0, 0),
                pd.WriterConfigDescriptor(),
                runtime_args=[(pd.CoreCoord(0, 0), [out])],
            )
        ]
    )
    results = []
    for detail in (41, 99):
        nested.write_text(f"#pragma once\n#include <cstdint>\nconstexpr uint32_t kDetail = {detail};\n")
        counters = emu.run_program(dev, program)
        results.append((counters["kernel_builds"], int(dev.read(out, 32, 32).view(np.uint32)[0])))
    assert results == [(1, 42), (1, 100)]  # (kernel builds, value written) per run


# Runs in a fresh process over a private copy of the emulator's headers: each step edits that copy
# and prints (kernel builds, value the kernel wrote) for the copy program's kernels or a kernel
# that takes a constant from <shadow_value.hpp>.
_HEADER_EDITS = textwrap.dedent(
    """
    import json, pathlib, sys
    sys.path.insert(0, {tests!r})
    import ttnn_moe.paths as paths
    include = pathlib.Path({include!r})
    paths.emulator_include_dir = lambda: include
    import numpy as np
    from emu_programs import copy_program, core_set, kernel
    from ttnn_moe._C import emu
    from ttnn_moe._C import program as pd

    dev = emu.open_device()
    src, dst, out = dev.allocate(4 * 64, 64), dev.allocate(4 * 64, 64), dev.allocate(32, 32)
    shadow_kernel = pd.ProgramDescriptor(kernels=[kernel({shadow_kernel!r}, core_set(0, 0),
        pd.WriterConfigDescriptor(), runtime_args=[(pd.CoreCoord(0, 0), [out])])])
    dataflow_api = include / "api" / "dataflow" / "dataflow_api.h"
    original = dataflow_api.read_text()
    steps = []

    def copy(label):
        steps.append([label, emu.run_program(dev, copy_program(src, dst, 64, 4, [(0, 0)]))["kernel_builds"]])

    def shadow(label):
        builds = emu.run_program(dev, shadow_kernel)["kernel_builds"]
        steps.append([label, builds, int(dev.read(out, 32, 32).view(np.uint32)[0])])

    copy("first")
    (include / "sfpi.h").write_text((include / "sfpi.h").read_text() + "// an edit\\n")
    copy("header not included edited")
    dataflow_api.write_text(original + "// an edit\\n")
    copy("included header edited")
    dataflow_api.write_text(original)
    copy("edit reverted")
    shadow("beside the kernel")
    (include / "shadow_value.hpp").write_text("#pragma once\\nconstexpr uint32_t kValue = 8;\\n")
    shadow("shadowed by an emulator header")
    (include / "shadow_value.hpp").unlink()
    shadow("shadow removed")
    print(json.dumps(steps))
    """
)


def test_a_kernel_rebuilds_only_when_a_header_it_read_changes(tmp_path):
    include = tmp_path / "include"
    shutil.copytree(paths.emulator_include_dir(), include)
    shadow_kernel = tmp_path / "kernels" / "write_value.cpp"
    shadow_kernel.parent.mkdir()
    (shadow_kernel.parent / "shadow_value.hpp").write_text("#pragma once\nconstexpr uint32_t kValue = 7;\n")
    shadow_kernel.write_text(
        textwrap.dedent(
            """
            #include "api/dataflow/dataflow_api.h"
            #include <shadow_value.hpp>
            void kernel_main() {
                const uint32_t scratch = get_semaphore(0);
                reinterpret_cast<volatile uint32_t*>(scratch)[0] = kValue;
                noc_async_write(scratch, get_noc_addr_from_bank_id<true>(0, get_arg_val<uint32_t>(0)), 4);
            }
            """
        )
    )
    script = _HEADER_EDITS.format(tests=str(TESTS), include=str(include), shadow_kernel=str(shadow_kernel))
    env = dict(os.environ, TTNN_MOE_CACHE=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == [
        ["first", 2],  # reader and writer
        ["header not included edited", 0],
        ["included header edited", 2],
        ["edit reverted", 0],  # the first builds are still on disk
        ["beside the kernel", 1, 7],
        ["shadowed by an emulator header", 1, 8],  # <shadow_value.hpp> now resolves to the emulator's copy
        ["shadow removed", 0, 7],
    ]


_MATMUL_IN_A_FRESH_CACHE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {tests!r})
    import torch
    from emu_programs import TILE_BYTES, matmul_program, tilize, untilize
    from ttnn_moe._C import emu
    gen = torch.Generator().manual_seed(5)
    A = torch.randn(64, 64, generator=gen).to(torch.bfloat16)
    B = torch.randn(64, 32, generator=gen).to(torch.bfloat16)
    dev = emu.open_device()
    a, b, c = (dev.allocate(n * TILE_BYTES, TILE_BYTES) for n in (4, 2, 2))
    dev.write(a, TILE_BYTES, tilize(A))
    dev.write(b, TILE_BYTES, tilize(B))
    builds = emu.run_program(dev, matmul_program(a, b, c, 2, 2, 1, [(0, 0)]))["kernel_builds"]
    got = untilize(dev.read(c, TILE_BYTES, 2 * TILE_BYTES), 64, 32)
    want = A.float() @ B.float()
    # fp32 sums in DST, one rounding to bf16 at pack: the error relative to the largest output.
    print(builds, float((got - want).abs().max() / want.abs().max()))
    """
)


def test_kernel_builds_precompile_the_standard_headers_once_per_kind(tmp_path):
    # A fresh cache: the reader and writer (data movement) and the compute kernel each start from the
    # precompiled standard headers of their kind, built once beside the kernel builds.
    env = dict(os.environ, TTNN_MOE_CACHE=str(tmp_path / "cache"))
    script = _MATMUL_IN_A_FRESH_CACHE.format(tests=str(TESTS))
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    builds, relative_error = run.stdout.split()
    assert int(builds) == 3
    assert float(relative_error) <= 0.01
    precompiled = sorted((tmp_path / "cache" / "emu_kernels" / "std_pch").glob("*/ttnn_moe_emu_kernel_std.h.gch"))
    assert len(precompiled) == 2  # data movement, compute
    # Beside each, the header GCC reads instead when it cannot use the precompiled one; only the compute
    # kernels' (whose SFPU headers include it) has <functional>.
    with_functional = sorted("#include <functional>" in p.with_suffix("").read_text() for p in precompiled)
    assert with_functional == [False, True]


def test_a_define_named_like_a_precompiled_identifier_still_builds():
    # GCC refuses a precompiled header when a macro defined for the build names an identifier in it
    # (here `tuple`, defined as itself: the code means the same) and reads the header text instead.
    dev = emu.open_device()
    out = dev.allocate(32, 32)
    code = textwrap.dedent(
        """
        #include <tuple>
        #include "api/dataflow/dataflow_api.h"
        void kernel_main() {
            const uint32_t scratch = get_semaphore(0);
            reinterpret_cast<volatile uint32_t*>(scratch)[0] = std::get<1>(std::tuple<int, int>(4, MAGIC));
            noc_async_write(scratch, get_noc_addr_from_bank_id<true>(0, get_arg_val<uint32_t>(0)), 4);
        }
        """
    )
    k = pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=core_set(0, 0),
        defines=[("tuple", "tuple"), ("MAGIC", "77")],
        runtime_args=[(pd.CoreCoord(0, 0), [out])],
        config=pd.WriterConfigDescriptor(),
    )
    emu.run_program(dev, pd.ProgramDescriptor(kernels=[k]))
    assert dev.read(out, 32, 32).view(np.uint32)[0] == 77
