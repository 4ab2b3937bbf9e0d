"""Fidelity: Tenstorrent's own 0.81.1 kernels, unmodified, on the emulator.

The kernels are read from the downloaded `ttnn` wheel (never copied into this
repository) and run with the compile-time args, named args, CB formats and
runtime args that tt-metal's host code gives them:

- matmul: `reader_bmm_8bank_output_tiles_partitioned.cpp` + `bmm.cpp` + the
  unary writer, as the legacy ProgramDescriptor path of the multi-core matmul
  factory (and tt-metal's TestGenericOpMatmul) builds them: output tiles split
  over the grid by `split_work_to_cores`, one bmm.cpp kernel per core group.
  (The matmul directory's own `writer_unary_interleaved_start_id.cpp` is a
  Metal 2.0 kernel: it needs the ProgramSpec path's generated binding headers.)
- eltwise unary: `reader_unary_interleaved_start_id.cpp` + `eltwise_sfpu.cpp` +
  `writer_unary_interleaved_start_id.cpp`, as the unary factory builds them
  (input CB c_0, output CB c_2, the op chain as SFPU_OP_* defines).

Every kernel configuration run here also builds against the wheel's real device
headers (the conformance check), so the args and defines are ones tt-metal's JIT
accepts. Goldens are torch. Exactness, measured: matmul with fp32_dest_acc_en
equals torch's fp32 matmul rounded to bf16 except where the fp32 sum sits on a
bf16 rounding boundary (summation order differs), one bf16 step away; with a
16-bit DST it follows a golden that rounds the running sum to bf16 after each K
tile. Copy and relu are bit-exact; exp, silu and sigmoid measure bit-exact too
(the emulator computes them in fp32 and rounds once, as torch does) but are held
to one bf16 step: two fp32 libraries may round differently on a bf16 boundary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from emu_programs import TILE_BYTES, cb, tilize, untilize
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

from tools.conformance import check as conformance
from tools.conformance.jit import ComputeConfig
from tools.tt_wheel import ensure_ttnn_wheel

MATMUL_KERNELS = "ttnn/cpp/ttnn/operations/matmul/device/kernels"
UNARY_KERNELS = "ttnn/cpp/ttnn/operations/eltwise/unary/device/kernels"
CB_IN0, CB_IN1, CB_MATMUL_OUT = 0, 1, 16  # tt::CBIndex::c_0, c_1, c_16 (matmul factory)
CB_UNARY_IN, CB_UNARY_OUT = 0, 2  # c_0, c_2: hard-coded in the unary reader and eltwise_sfpu.cpp
FORMATS = {torch.bfloat16: pd.DataFormat.Float16_b, torch.float32: pd.DataFormat.Float32}


@pytest.fixture(scope="session")
def wheel() -> Path:
    root = ensure_ttnn_wheel()  # downloads ~100 MB from PyPI on a machine's first run
    # ttnn/cpp: the ops' helper headers (pad_tile.hpp, ...); tt_metal/api: tt-metalium/constants.hpp they include.
    emu.set_kernel_include_dirs([str(root / "ttnn" / "cpp"), str(root / "tt_metal" / "api")])
    yield root
    emu.set_kernel_include_dirs([])


def split_work_to_cores(grid_x: int, grid_y: int, units: int) -> list[tuple[pd.CoreCoord, int, int]]:
    """tt-metal's split_work_to_cores, column-major: [(core, units, first unit)].

    Core i is (i // grid_y, i % grid_y); the first `units % num_cores` cores (group 1) take one unit
    more than the others (group 2).
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


def wheel_kernel(
    wheel: Path, path: str, cores, config, compile_time_args=(), named=(), runtime_args=(), defines=()
) -> pd.KernelDescriptor:
    source = wheel / path
    assert source.is_file(), f"the wheel has no {path}"
    return pd.KernelDescriptor(
        kernel_source=str(source),
        core_ranges=cores,
        compile_time_args=list(compile_time_args),
        named_compile_time_args=list(named),
        defines=list(defines),
        runtime_args=list(runtime_args),
        config=config,
    )


def bf16_steps(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """How many representable bf16 values lie between got and want (0 = bit-exact), elementwise."""

    def ordinal(x):
        bits = x.to(torch.bfloat16).view(torch.int16).int()
        return torch.where(bits >= 0, bits, -(bits & 0x7FFF))

    return (ordinal(got) - ordinal(want)).abs()


def pcc(got: torch.Tensor, want: torch.Tensor) -> float:
    return float(np.corrcoef(got.flatten().double().numpy(), want.flatten().double().numpy())[0, 1])


# ---------------------------------------------------------------- matmul


def matmul_program(
    wheel: Path,
    a: int,
    b: int,
    c: int,
    Mt: int,
    Kt: int,
    Nt: int,
    batch: int,
    bcast_b: bool,
    grid: tuple[int, int],
    fp32_dest_acc_en: bool,
    in0_last_ktile: tuple[int, int] = (0, 0),
    in0_format: pd.DataFormat = pd.DataFormat.Float16_b,
) -> pd.ProgramDescriptor:
    """The multi-core matmul program (bf16 in1 and output): one output tile per bmm iteration."""
    split = split_work_to_cores(*grid, batch * Mt * Nt)
    all_cores = core_range_set([core for core, _, _ in split])
    in0_tile = 4096 if in0_format == pd.DataFormat.Float32 else TILE_BYTES
    # in0_last_ktile_w, in0_last_ktile_h (the factory's transpose_a path), then the accessors.
    reader_ct = list(in0_last_ktile) + emu.tensor_accessor_args(in0_tile, True) + emu.tensor_accessor_args(TILE_BYTES)
    reader_rt = [
        (core, [a, b, Mt, Kt, Nt, Mt * Kt, Kt * Nt, batch, int(bcast_b), start, n, Mt * Nt]) for core, n, start in split
    ]
    writer_ct = [CB_MATMUL_OUT] + emu.tensor_accessor_args(TILE_BYTES, True)
    kernels = [
        wheel_kernel(
            wheel,
            f"{MATMUL_KERNELS}/dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp",
            all_cores,
            pd.ReaderConfigDescriptor(),
            reader_ct,
            [("cb_in0", CB_IN0), ("cb_in1", CB_IN1)],
            reader_rt,
        ),
        wheel_kernel(
            wheel,
            f"{UNARY_KERNELS}/dataflow/writer_unary_interleaved_start_id.cpp",
            all_cores,
            pd.WriterConfigDescriptor(),
            writer_ct,
            (),
            [(core, [c, n, start]) for core, n, start in split],
        ),
    ]
    # bmm.cpp's batch, Mt and Nt loops are one loop of the core's tiles: ct args (1, 1, Kt, tiles).
    for tiles in sorted({n for _, n, _ in split}, reverse=True):
        group = core_range_set([core for core, n, _ in split if n == tiles])
        config = pd.ComputeConfigDescriptor(
            math_fidelity=pd.MathFidelity.HiFi4, fp32_dest_acc_en=fp32_dest_acc_en, dst_full_sync_en=True
        )
        kernels.append(
            wheel_kernel(
                wheel,
                f"{MATMUL_KERNELS}/compute/bmm.cpp",
                group,
                config,
                [1, 1, Kt, tiles],
                [("cb_in0", CB_IN0), ("cb_in1", CB_IN1), ("cb_out", CB_MATMUL_OUT)],
            )
        )
    cbs = [
        cb(CB_IN0, 2, in0_tile, all_cores, in0_format),
        cb(CB_IN1, 2, TILE_BYTES, all_cores),
        cb(CB_MATMUL_OUT, 2, TILE_BYTES, all_cores),
    ]
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


def run_matmul(wheel, A: torch.Tensor, B: torch.Tensor, grid, fp32_dest_acc_en, in0_last_ktile=(0, 0)):
    """A: (batch, M, K) padded, bf16 or fp32; B: (1 or batch, K, N) bf16. Returns (C float32, counters)."""
    batch, M, K = A.shape
    N = B.shape[-1]
    in0_page = A.element_size() * 1024
    dev = emu.open_device()
    a = dev.allocate(A.numel() * A.element_size(), in0_page)
    b = dev.allocate(B.numel() * 2, TILE_BYTES)
    c = dev.allocate(batch * M * N * 2, TILE_BYTES)
    dev.write(a, in0_page, np.concatenate([tilize(m, A.dtype) for m in A]))
    dev.write(b, TILE_BYTES, np.concatenate([tilize(m) for m in B]))
    program = matmul_program(
        wheel,
        a,
        b,
        c,
        M // 32,
        K // 32,
        N // 32,
        batch,
        B.shape[0] == 1,
        grid,
        fp32_dest_acc_en,
        in0_last_ktile,
        FORMATS[A.dtype],
    )
    counters = emu.run_program(dev, program)
    pages = dev.read(c, TILE_BYTES, batch * M * N * 2).reshape(batch, -1)
    return torch.stack([untilize(p, M, N) for p in pages]), counters


def assert_fp32_accumulated_then_rounded(got: torch.Tensor, A: torch.Tensor, B: torch.Tensor) -> None:
    """|got - A@B| within an fp32 sum's error bound (K eps32 sum|a b|) plus one bf16 rounding (2^-8 relative)."""
    exact = A.double() @ B.double()
    fp32_error = A.shape[-1] * 2.0**-24 * (A.double().abs() @ B.double().abs())
    bound = 2.0**-8 * (exact.abs() + fp32_error) + fp32_error
    excess = (got.double() - exact).abs() - bound
    assert excess.max() <= 0, f"{(excess > 0).sum()} elements off by more than fp32 accumulation + bf16 rounding"


def bf16_dst_matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Matmul through a 16-bit DST: fp32 tile products, the running sum rounded to bf16 after each K tile."""
    acc = torch.zeros(A.shape[0], A.shape[1], B.shape[-1])
    for k in range(0, A.shape[-1], 32):
        acc = (acc + A[..., k : k + 32].float() @ B[..., k : k + 32, :].float()).to(torch.bfloat16).float()
    return acc


@pytest.mark.parametrize(
    "batch, M, K, N, bcast_b, grid",
    [
        (1, 64, 128, 96, True, (2, 3)),  # 6 output tiles on the 6 cores of a 2x3 grid: one core group
        (2, 96, 64, 160, False, (2, 3)),  # 30 tiles over 6 cores, a B per batch
        (3, 128, 96, 96, True, (8, 8)),  # 36 tiles on 36 of 64 cores, B broadcast over the batch
        (1, 320, 256, 256, True, (8, 8)),  # 80 tiles over 64 cores: 16 cores with 2 tiles, 48 with 1
    ],
)
@pytest.mark.parametrize("fp32_dest_acc_en", [True, False], ids=["fp32_dst", "bf16_dst"])
def test_matmul_kernels_match_torch(wheel, batch, M, K, N, bcast_b, grid, fp32_dest_acc_en):
    gen = torch.Generator().manual_seed(batch * 1000 + M + K + N)
    A = torch.randn(batch, M, K, generator=gen).to(torch.bfloat16)
    B = torch.randn(1 if bcast_b else batch, K, N, generator=gen).to(torch.bfloat16)
    got, counters = run_matmul(wheel, A, B, grid, fp32_dest_acc_en)

    exact = A.double() @ B.double()
    if fp32_dest_acc_en:
        assert_fp32_accumulated_then_rounded(got, A, B)
        # Summation order differs from torch's only on bf16 rounding boundaries (measured: 0 elements
        # differ for K <= 128, 10 of 81920 at K = 256).
        golden = (A.float() @ B.float()).to(torch.bfloat16).float()
        assert (got != golden).float().mean() <= 1e-3
    else:
        golden = bf16_dst_matmul(A, B)
        # A rare one-step difference in a running sum propagates (measured: 0-3 elements per case).
        assert (got != golden).float().mean() <= 1e-3
        assert pcc(got, golden) >= 0.99999
    # Against exact math (measured: 0.9999986 with an fp32 DST, 0.999994-0.999998 with a 16-bit DST).
    assert pcc(got, exact) >= (0.99999 if fp32_dest_acc_en else 0.9999)

    Mt, Kt, Nt = M // 32, K // 32, N // 32
    assert counters["tile_matmuls"] == batch * Mt * Nt * Kt
    assert counters["tiles_packed"] == batch * Mt * Nt
    # The reader streams a row of A and a column of B per output tile.
    assert counters["noc_bytes_read_dram"] == batch * Mt * Nt * Kt * 2 * TILE_BYTES
    assert counters["noc_bytes_written_dram"] == batch * Mt * Nt * TILE_BYTES
    assert len(counters["core_busy"]) == min(batch * Mt * Nt, grid[0] * grid[1])


@pytest.mark.parametrize("in0_dtype", [torch.bfloat16, torch.float32], ids=["bf16_in0", "fp32_in0"])
@pytest.mark.parametrize("padded", ["columns", "rows"])
def test_matmul_reader_pads_the_last_k_tile(wheel, in0_dtype, padded):
    """A's last K tile keeps 16 valid columns (pad_last_ktile) or, as the transpose_a path lays K out, 16 valid
    rows (pad_last_transposed_ktile). The padding holds NaN here: the reader must zero it in the CB."""
    M, K, N = 64, 96, 64
    gen = torch.Generator().manual_seed(5)
    A = torch.randn(1, M, K, generator=gen).to(torch.bfloat16).float()
    B = torch.randn(1, K, N, generator=gen).to(torch.bfloat16)
    padding = torch.zeros(1, M, K, dtype=torch.bool)
    if padded == "columns":
        padding[..., K - 16 :] = True
    else:
        padding[..., K - 32 :] = (torch.arange(M) % 32 >= 16)[:, None]
    got, _ = run_matmul(
        wheel,
        A.masked_fill(padding, float("nan")).to(in0_dtype),
        B,
        (2, 3),
        True,
        (16, 0) if padded == "columns" else (0, 16),
    )

    assert not got.isnan().any()
    assert_fp32_accumulated_then_rounded(got, A.masked_fill(padding, 0.0), B)


# ---------------------------------------------------------------- eltwise unary

# The unary factory's defines for a one-op chain: the op family's include switch, and SFPU_OP_CHAIN_0
# expanding to the op's init and its call on DST tile 0. `None`: no chain, eltwise_sfpu.cpp copies.
UNARY_OPS = {
    "copy": (None, None, lambda x: x),
    "relu": ("SFPU_OP_RELU_FAMILY_INCLUDE", ("relu_tile_init();", "relu_tile(0);"), torch.relu),
    "exp": ("SFPU_OP_EXP_INCLUDE", ("exp_tile_init<0u>();", "exp_tile<0u>(0);"), torch.exp),
    "silu": ("SFPU_OP_COMPUTE_KERNEL_API_INCLUDE", ("silu_tile_init();", "silu_tile(0);"), torch.nn.functional.silu),
    "sigmoid": ("SFPU_OP_COMPUTE_KERNEL_API_INCLUDE", ("sigmoid_tile_init();", "sigmoid_tile(0);"), torch.sigmoid),
}
EXACT_UNARY_OPS = {"copy", "relu"}


def unary_defines(op: str, input_dtype: torch.dtype) -> list[tuple[str, str]]:
    include, chain, _ = UNARY_OPS[op]
    defines = {"INP_FLOAT32" if input_dtype == torch.float32 else "INP_FLOAT": "1"}
    if chain is not None:
        init, call = chain
        defines.update(
            {
                include: "1",
                "SFPU_OP_CHAIN_0": "SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0",
                "SFPU_OP_CHAIN_0_INIT_0": init,
                "SFPU_OP_CHAIN_0_FUNC_0": call,
            }
        )
    return sorted(defines.items())


def unary_program(
    wheel: Path, src: int, dst: int, num_tiles: int, grid: tuple[int, int], op: str, dtype: torch.dtype
) -> pd.ProgramDescriptor:
    split = split_work_to_cores(*grid, num_tiles)
    all_cores = core_range_set([core for core, _, _ in split])
    page = 32 * 32 * torch.finfo(dtype).bits // 8
    tensor_args = emu.tensor_accessor_args(page, True)
    # fp32 tensors keep their precision through DST (the factory's fp32_dest_acc_en for FLOAT32).
    config = pd.ComputeConfigDescriptor(
        math_fidelity=pd.MathFidelity.HiFi4, fp32_dest_acc_en=dtype == torch.float32, math_approx_mode=False
    )
    kernels = [
        wheel_kernel(
            wheel,
            f"{UNARY_KERNELS}/dataflow/reader_unary_interleaved_start_id.cpp",
            all_cores,
            pd.ReaderConfigDescriptor(),
            tensor_args,
            (),
            [(core, [src, n, start]) for core, n, start in split],
        ),
        wheel_kernel(
            wheel,
            f"{UNARY_KERNELS}/dataflow/writer_unary_interleaved_start_id.cpp",
            all_cores,
            pd.WriterConfigDescriptor(),
            [CB_UNARY_OUT] + tensor_args,
            (),
            [(core, [dst, n, start]) for core, n, start in split],
        ),
        wheel_kernel(
            wheel,
            f"{UNARY_KERNELS}/compute/eltwise_sfpu.cpp",
            all_cores,
            config,
            (),
            (),
            [(core, [n]) for core, n, _ in split],
            unary_defines(op, dtype),
        ),
    ]
    cbs = [cb(CB_UNARY_IN, 2, page, all_cores, FORMATS[dtype]), cb(CB_UNARY_OUT, 2, page, all_cores, FORMATS[dtype])]
    return pd.ProgramDescriptor(kernels=kernels, cbs=cbs)


def run_unary(wheel, x: torch.Tensor, op: str, grid) -> torch.Tensor:
    """x: (tiles * 32, 32), bf16 or fp32. Returns op(x) from the device, float32."""
    num_tiles, page = x.shape[0] // 32, x.element_size() * 1024
    dev = emu.open_device()
    src = dev.allocate(x.numel() * x.element_size(), page)
    dst = dev.allocate(x.numel() * x.element_size(), page)
    dev.write(src, page, tilize(x, x.dtype))
    emu.run_program(dev, unary_program(wheel, src, dst, num_tiles, grid, op, x.dtype))
    return untilize(dev.read(dst, page, x.numel() * x.element_size()), x.shape[0], 32, x.dtype)


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
def test_unary_kernels_match_torch(wheel, op):
    gen = torch.Generator().manual_seed(7)
    x = (torch.randn(23 * 32, 32, generator=gen) * 3).to(torch.bfloat16)  # 23 tiles: 4 on 5 cores, 3 on 1
    got = run_unary(wheel, x, op, (2, 3))
    want = UNARY_OPS[op][2](x.float()).to(torch.bfloat16).float()
    if op in EXACT_UNARY_OPS:
        assert torch.equal(got, want)
    else:
        assert bf16_steps(got, want).max() <= 1
        assert pcc(got, want) >= 0.99999


def test_unary_copy_of_fp32_is_bit_exact_on_a_full_grid(wheel):
    # 4 KiB pages: the reader and writer size their transfers from get_local_cb_interface(cb).fifo_page_size.
    x = torch.randn(150 * 32, 32, generator=torch.Generator().manual_seed(3))
    assert torch.equal(run_unary(wheel, x, "copy", (8, 8)), x)


# ---------------------------------------------------------------- the same configurations on the real headers


def conformance_specs(program: pd.ProgramDescriptor) -> list[dict]:
    """check_kernel arguments for each kernel of a program: its args, defines, CB formats and compute config."""
    formats = {f.buffer_index: f.data_format.name for c in program.cbs for f in c.format_descriptors}
    specs = []
    for k in program.kernels:
        spec = {
            "path": k.kernel_source,
            "compile_time_args": tuple(k.compile_time_args),
            "named_args": dict(k.named_compile_time_args),
            "defines": dict(k.defines),
            "cb_formats": formats,
        }
        if isinstance(k.config, pd.ComputeConfigDescriptor):
            spec.update(
                kind="compute",
                compute_config=ComputeConfig(
                    math_fidelity=k.config.math_fidelity.name,
                    fp32_dest_acc_en=k.config.fp32_dest_acc_en,
                    math_approx_mode=k.config.math_approx_mode,
                    dst_full_sync_en=k.config.dst_full_sync_en,
                ),
            )
        else:
            spec.update(kind="dataflow")
        specs.append(spec)
    return specs


def test_the_programs_build_against_the_real_headers(wheel):
    # One program per distinct kernel configuration above (addresses are runtime args: any will do).
    programs = [matmul_program(wheel, 0, 0, 0, 2, 4, 3, 1, True, (2, 3), fp32) for fp32 in (True, False)]
    programs += [
        matmul_program(wheel, 0, 0, 0, 2, 3, 2, 1, True, (2, 3), True, (16, 0), pd.DataFormat.Float32),
        matmul_program(wheel, 0, 0, 0, 2, 3, 2, 1, True, (2, 3), True, (0, 16)),
    ]
    programs += [unary_program(wheel, 0, 0, 6, (2, 3), op, torch.bfloat16) for op in sorted(UNARY_OPS)]
    programs.append(unary_program(wheel, 0, 0, 6, (2, 3), "copy", torch.float32))
    checked, failures = set(), []
    for spec in (s for p in programs for s in conformance_specs(p)):
        key = repr(sorted(spec.items(), key=lambda item: item[0]))
        if key in checked:
            continue
        checked.add(key)
        result = conformance.check_kernel(spec.pop("path"), spec.pop("kind"), wheel_root=wheel, **spec)
        if not result.ok:
            failures.append(result.report())
    assert not failures, "\n".join(failures)
