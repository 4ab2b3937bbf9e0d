"""Fidelity: Tenstorrent's own 0.81.1 kernels, unmodified, on the emulator (issue 3, item 9).

The kernels are read from the downloaded `ttnn` wheel (never copied into this
repository) and run with the compile-time args, named args, CB formats and
runtime args that tt-metal's host code gives them:

- matmul: `reader_bmm_8bank_output_tiles_partitioned.cpp` + `bmm.cpp` + the
  unary writer, as the legacy ProgramDescriptor path of the multi-core matmul
  factory (and `test_generic_op.cpp`'s TestGenericOpMatmul) builds them: output
  tiles split over the grid by `split_work_to_cores`, two compute kernels for the
  two core groups;
- eltwise unary: `reader_unary_interleaved_start_id.cpp` + `eltwise_sfpu.cpp` +
  `writer_unary_interleaved_start_id.cpp`, as the unary factory builds them
  (input CB c_0, output CB c_2, the op chain as SFPU_OP_* defines).

Results are compared with torch: bit-exact where the math is exact, else PCC.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from emu_programs import BF16, TILE_BYTES, cb, tilize_bf16, untilize_bf16
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.tt_wheel import ensure_ttnn_wheel

MATMUL_KERNELS = "ttnn/cpp/ttnn/operations/matmul/device/kernels"
UNARY_KERNELS = "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels"
CB_IN0, CB_IN1, CB_MATMUL_OUT = 0, 1, 16  # tt::CBIndex::c_0, c_1, c_16 (matmul factory)
CB_UNARY_IN, CB_UNARY_OUT = 0, 2  # c_0, c_2: hard-coded in the unary reader and eltwise_sfpu.cpp


@pytest.fixture(scope="session")
def wheel() -> Path:
    """The wheel root; its ttnn/cpp holds the kernels' helper headers (pad_tile.hpp, ...)."""
    root = ensure_ttnn_wheel()  # downloads ~100 MB from PyPI on a machine's first run
    # ttnn/cpp: the ops' helper headers; tt_metal/api: tt-metalium/constants.hpp, which they include.
    emu.set_kernel_include_dirs([str(root / "ttnn" / "cpp"), str(root / "tt_metal" / "api")])
    yield root
    emu.set_kernel_include_dirs([])


def split_work_to_cores(grid_x: int, grid_y: int, units: int) -> list[tuple[pd.CoreCoord, int, int]]:
    """tt-metal's split_work_to_cores (column-major): [(core, units, first unit)].

    The first `units % num_cores` cores (group 1) take one unit more than the rest (group 2);
    core i is (i // grid_y, i % grid_y).
    """
    num_cores = min(units, grid_x * grid_y)
    base, extra = divmod(units, num_cores)
    split, start = [], 0
    for i in range(num_cores):
        n = base + (1 if i < extra else 0)
        split.append((pd.CoreCoord(i // grid_y, i % grid_y), n, start))
        start += n
    return split


def core_range_set(cores: list[pd.CoreCoord]) -> pd.CoreRangeSet:
    return pd.CoreRangeSet([pd.CoreRange(c, c) for c in cores])


def wheel_kernel(wheel: Path, path: str, cores, config, compile_time_args=(), named=(), runtime_args=(),
                 defines=()) -> pd.KernelDescriptor:
    source = wheel / path
    assert source.is_file(), f"the wheel has no {path}"
    return pd.KernelDescriptor(kernel_source=str(source), core_ranges=cores,
                               compile_time_args=list(compile_time_args), named_compile_time_args=list(named),
                               defines=list(defines), runtime_args=list(runtime_args), config=config)


# ---------------------------------------------------------------- matmul

def matmul_program(wheel: Path, a: int, b: int, c: int, Mt: int, Kt: int, Nt: int, batch: int, bcast_b: bool,
                   grid: tuple[int, int], fp32_dest_acc_en: bool) -> pd.ProgramDescriptor:
    """The multi-core matmul program: one output tile per bmm iteration, tiles split over `grid`."""
    split = split_work_to_cores(*grid, batch * Mt * Nt)
    all_cores = core_range_set([core for core, _, _ in split])
    tensor_args = emu.tensor_accessor_args(TILE_BYTES, True)
    # in0_last_ktile_w, in0_last_ktile_h: K is a whole number of tiles, nothing to pad.
    reader_ct = [0, 0] + tensor_args + tensor_args
    reader_rt = [(core, [a, b, Mt, Kt, Nt, Mt * Kt, Kt * Nt, batch, int(bcast_b), start, n, Mt * Nt])
                 for core, n, start in split]
    writer_rt = [(core, [c, n, start]) for core, n, start in split]
    kernels = [
        wheel_kernel(wheel, f"{MATMUL_KERNELS}/dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp", all_cores,
                     pd.ReaderConfigDescriptor(), reader_ct, [("cb_in0", CB_IN0), ("cb_in1", CB_IN1)], reader_rt),
        wheel_kernel(wheel, f"{UNARY_KERNELS}/dataflow/writer_unary_interleaved_start_id.cpp", all_cores,
                     pd.WriterConfigDescriptor(), [CB_MATMUL_OUT] + tensor_args, (), writer_rt),
    ]
    # bmm.cpp's batch and Mt loops are one loop here: (1, 1, Kt, tiles of the core), one kernel per core group.
    for tiles in sorted({n for _, n, _ in split}, reverse=True):
        group = core_range_set([core for core, n, _ in split if n == tiles])
        kernels.append(wheel_kernel(
            wheel, f"{MATMUL_KERNELS}/compute/bmm.cpp", group,
            pd.ComputeConfigDescriptor(math_fidelity=pd.MathFidelity.HiFi4, fp32_dest_acc_en=fp32_dest_acc_en,
                                       dst_full_sync_en=True),
            [1, 1, Kt, tiles], [("cb_in0", CB_IN0), ("cb_in1", CB_IN1), ("cb_out", CB_MATMUL_OUT)]))
    cbs = [cb(CB_IN0, 2, TILE_BYTES, all_cores), cb(CB_IN1, 2, TILE_BYTES, all_cores),
           cb(CB_MATMUL_OUT, 2, TILE_BYTES, all_cores)]
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


@pytest.mark.parametrize("batch, M, K, N, bcast_b, grid", [
    (1, 64, 128, 96, True, (2, 3)),     # 6 output tiles over 6 cores: one group
    (2, 96, 64, 160, False, (2, 3)),    # 30 tiles over 6 cores, batched B
    (3, 128, 96, 96, True, (8, 8)),     # 36 tiles on 36 of 64 cores, B broadcast over the batch
    (1, 320, 64, 256, True, (8, 8)),    # 80 tiles over 64 cores: groups of 2 and 1 tiles
])
def test_matmul_kernels_match_torch(wheel, batch, M, K, N, bcast_b, grid):
    Mt, Kt, Nt = M // 32, K // 32, N // 32
    gen = torch.Generator().manual_seed(batch * 1000 + M + K + N)
    A = torch.randn(batch, M, K, generator=gen).to(torch.bfloat16)
    B = torch.randn(1 if bcast_b else batch, K, N, generator=gen).to(torch.bfloat16)
    dev = emu.open_device()
    a = dev.allocate(A.numel() * 2, TILE_BYTES)
    b = dev.allocate(B.numel() * 2, TILE_BYTES)
    c = dev.allocate(batch * M * N * 2, TILE_BYTES)
    dev.write(a, TILE_BYTES, np.concatenate([tilize_bf16(m) for m in A]))
    dev.write(b, TILE_BYTES, np.concatenate([tilize_bf16(m) for m in B]))
    counters = emu.run_program(dev, matmul_program(wheel, a, b, c, Mt, Kt, Nt, batch, bcast_b, grid, True))

    pages = dev.read(c, TILE_BYTES, batch * M * N * 2).reshape(batch, -1)
    got = torch.stack([untilize_bf16(p, M, N) for p in pages])
    want = A.float() @ B.float()  # fp32 accumulation, as DST with fp32_dest_acc_en
    assert torch.equal(got, want.to(torch.bfloat16).float())  # TODO measure
    assert counters["tile_matmuls"] == batch * Mt * Nt * Kt
    assert counters["tiles_packed"] == batch * Mt * Nt
    assert len(counters["core_busy"]) == min(batch * Mt * Nt, grid[0] * grid[1])


# ---------------------------------------------------------------- eltwise unary

# The unary factory's defines for a one-op chain (get_block_defines): the op's include switch, then
# SFPU_OP_CHAIN_0 expanding to its init and call on DST slot 0.
UNARY_OPS = {
    "copy": ({}, None, lambda x: x),
    "relu": ({"SFPU_OP_RELU_FAMILY_INCLUDE": "1"}, ("relu_tile_init();", "relu_tile(0);"), torch.relu),
    "exp": ({"SFPU_OP_EXP_INCLUDE": "1"}, ("exp_tile_init<false>();", "exp_tile<false>(0);"), torch.exp),
    "silu": ({"SFPU_OP_SILU_INCLUDE": "1"}, ("silu_tile_init();", "silu_tile(0);"), torch.nn.functional.silu),
}


def unary_defines(op: str) -> list[tuple[str, str]]:
    includes, chain, _ = UNARY_OPS[op]
    defines = dict(includes, INP_FLOAT="1")
    if chain is not None:
        init, call = chain
        defines.update(SFPU_OP_CHAIN_0="SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0",
                       SFPU_OP_CHAIN_0_INIT_0=init, SFPU_OP_CHAIN_0_FUNC_0=call)
    return sorted(defines.items())


def unary_program(wheel: Path, src: int, dst: int, num_tiles: int, grid: tuple[int, int], op: str,
                  fp32_dest_acc_en: bool) -> pd.ProgramDescriptor:
    split = split_work_to_cores(*grid, num_tiles)
    all_cores = core_range_set([core for core, _, _ in split])
    tensor_args = emu.tensor_accessor_args(TILE_BYTES, True)
    kernels = [
        wheel_kernel(wheel, f"{UNARY_KERNELS}/dataflow/reader_unary_interleaved_start_id.cpp", all_cores,
                     pd.ReaderConfigDescriptor(), tensor_args, (),
                     [(core, [src, n, start]) for core, n, start in split]),
        wheel_kernel(wheel, f"{UNARY_KERNELS}/dataflow/writer_unary_interleaved_start_id.cpp", all_cores,
                     pd.WriterConfigDescriptor(), [CB_UNARY_OUT] + tensor_args, (),
                     [(core, [dst, n, start]) for core, n, start in split]),
        wheel_kernel(wheel, f"{UNARY_KERNELS}/compute/eltwise_sfpu.cpp", all_cores,
                     pd.ComputeConfigDescriptor(math_fidelity=pd.MathFidelity.HiFi4,
                                                fp32_dest_acc_en=fp32_dest_acc_en, math_approx_mode=False),
                     (), (), [(core, [n]) for core, n, _ in split], unary_defines(op)),
    ]
    cbs = [cb(CB_UNARY_IN, 2, TILE_BYTES, all_cores), cb(CB_UNARY_OUT, 2, TILE_BYTES, all_cores)]
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_unary_kernels_match_torch(wheel, op):
    num_tiles, grid = 23, (2, 3)
    x = (torch.randn(num_tiles * 32, 32, generator=torch.Generator().manual_seed(7)) * 2).to(torch.bfloat16)
    dev = emu.open_device()
    src = dev.allocate(x.numel() * 2, TILE_BYTES)
    dst = dev.allocate(x.numel() * 2, TILE_BYTES)
    dev.write(src, TILE_BYTES, tilize_bf16(x))
    emu.run_program(dev, unary_program(wheel, src, dst, num_tiles, grid, op, False))
    got = untilize_bf16(dev.read(dst, TILE_BYTES, x.numel() * 2), num_tiles * 32, 32)
    want = UNARY_OPS[op][2](x.float()).to(torch.bfloat16).float()
    assert torch.equal(got, want)  # TODO measure
