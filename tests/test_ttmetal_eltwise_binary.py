"""Fidelity: ttnn.mul / ttnn.add as tt-metal 0.81.1 builds them (binary_ng), their kernels unmodified from
the wheel, on the emulator (ttnn_moe.emu.ttmetal.eltwise_binary), against torch.

Exactness: bf16 tiles, 16-bit DST. mul (SFPU) multiplies two bf16 values exactly in fp32 and rounds once,
add (FPU) rounds the fp32 sum once, as torch's bf16 ops do: bit-exact. With SILU on input a the activated
tile is rounded to bf16 into CB c_3 first; the emulator's fp32 silu and torch's may round differently where
the fp32 value sits on a bf16 rounding boundary, so that case is held to one bf16 step (measured: exact).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal import eltwise_binary

from tools.conformance import check as conformance
from tools.conformance.jit import ComputeConfig

TILE_BYTES = 2048


def bf16_steps(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    def ordinal(x):
        bits = x.to(torch.bfloat16).view(torch.int16).int()
        return torch.where(bits >= 0, bits, -(bits & 0x7FFF))

    return (ordinal(got) - ordinal(want)).abs()


def pcc(got: torch.Tensor, want: torch.Tensor) -> float:
    return float(np.corrcoef(got.flatten().double().numpy(), want.flatten().double().numpy())[0, 1])


def device_inputs(shape, seed, grid=(8, 8)):
    gen = torch.Generator().manual_seed(seed)
    a = (torch.randn(shape, generator=gen) * 3).bfloat16()
    b = torch.randn(shape, generator=gen).bfloat16()
    device = ttnn.open_device(grid=grid)
    to_device = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # noqa: E731
    return a, b, to_device(a), to_device(b)


# 70 tiles on the 8x8 grid: 6 cores take 2 tiles, 58 take 1 (split_work_to_cores, row-major).
SHAPE = (1, 2, 5 * 32, 7 * 32)
TILES = 70


def test_mul_is_bit_exact_and_reads_each_tile_once(wheel):
    a, b, ta, tb = device_inputs(SHAPE, 1)
    got = ttnn.to_torch(eltwise_binary.mul(ta, tb)).float()
    assert torch.equal(got, (a.float() * b.float()).bfloat16().float())
    counters = ttnn.last_run_counters()
    assert counters["tiles_packed"] == TILES
    assert counters["tile_matmuls"] == 0
    assert counters["noc_bytes_read_dram"] == 2 * TILES * TILE_BYTES
    assert counters["noc_bytes_written_dram"] == TILES * TILE_BYTES
    assert len(counters["core_busy"]) == 64


def test_mul_with_silu_on_a_matches_torch(wheel):
    """DeepSeek-V3's experts: ttnn.mul(w1_out, w3_out, input_tensor_a_activations=[SILU])."""
    a, b, ta, tb = device_inputs(SHAPE, 2)
    got = ttnn.to_torch(eltwise_binary.mul(ta, tb, input_tensor_a_activations=["SILU"])).float()
    silu_a = torch.nn.functional.silu(a.float()).bfloat16().float()  # rounded into CB c_3
    want = (silu_a * b.float()).bfloat16().float()
    assert bf16_steps(got, want).max() <= 1
    assert pcc(got, want) >= 0.99999
    # Each tile is packed twice: activated a into c_3, then the product into c_2.
    assert ttnn.last_run_counters()["tiles_packed"] == 2 * TILES


def test_add_is_bit_exact(wheel):
    a, b, ta, tb = device_inputs((3, 32, 32 * 9), 3, grid=(2, 3))  # 27 tiles on 6 cores
    got = ttnn.to_torch(eltwise_binary.add(ta, tb)).float()
    assert torch.equal(got, (a.float() + b.float()).bfloat16().float())
    assert len(ttnn.last_run_counters()["core_busy"]) == 6


def test_add_with_silu_on_a_matches_torch(wheel):
    a, b, ta, tb = device_inputs((64, 128), 4)
    got = ttnn.to_torch(eltwise_binary.add(ta, tb, input_tensor_a_activations=["silu"])).float()
    want = (torch.nn.functional.silu(a.float()).bfloat16().float() + b.float()).bfloat16().float()
    assert bf16_steps(got, want).max() <= 1
    assert pcc(got, want) >= 0.99999


@pytest.mark.parametrize("op", ["mul", "add"])
def test_a_relu_after_the_op_is_the_packers_relu(wheel, op):
    a, b, ta, tb = device_inputs((96, 64), 5)
    got = ttnn.to_torch(getattr(eltwise_binary, op)(ta, tb, activations=["relu"])).float()
    exact = a.float() * b.float() if op == "mul" else a.float() + b.float()
    assert torch.equal(got, torch.relu(exact.bfloat16().float()))
    assert (got == 0).float().mean() > 0.3


def column_broadcast_inputs(shape, seed, grid=(8, 8)):
    """a of `shape` and weights b of `shape` with its last dim 1, both bf16 tiles on a device."""
    gen = torch.Generator().manual_seed(seed)
    a = (torch.randn(shape, generator=gen) * 3).bfloat16()
    b = torch.randn((*shape[:-1], 1), generator=gen).bfloat16()
    device = ttnn.open_device(grid=grid)
    to_device = lambda t: ttnn.from_torch(t, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)  # noqa: E731
    return a, b, to_device(a), to_device(b)


# (K, 1, B, H): moe_compute's outputs times the top-k weights (K, 1, B, 1); B=20 pads to one tile row,
# 3x2x2 and the 5x3 grid give cores a start mid-row of tiles (start % Wt != 0).
@pytest.mark.parametrize(
    "shape,grid",
    [((8, 1, 32, 256), (8, 8)), ((8, 1, 20, 256), (8, 8)), ((3, 2, 64, 96), (5, 3)), ((1, 1, 32, 32), (1, 1))],
)
def test_mul_broadcasts_a_column_of_b_bit_exactly(wheel, shape, grid):
    """ttnn.mul(expert_out, topk_weights) with the weights' last dim 1: binary_ng's column broadcast of b.
    The SFPU product of two bf16 values is exact in fp32 and rounded once, as torch's bf16 product is."""
    a, b, ta, tb = column_broadcast_inputs(shape, 7, grid)
    got = ttnn.to_torch(eltwise_binary.mul(ta, tb)).float()
    assert got.shape == a.shape
    assert torch.equal(got, (a.float() * b.float()).bfloat16().float())
    counters = ttnn.last_run_counters()
    tiles = a.numel() // a.shape[-2] * -(-a.shape[-2] // 32) // 32
    rows = tiles // (a.shape[-1] // 32)
    # Each b tile is read once per row of a's tiles a core handles; one extra pack per such row (into c_6).
    assert counters["tiles_packed"] >= tiles + rows
    assert counters["noc_bytes_read_dram"] >= (tiles + rows) * TILE_BYTES
    assert counters["noc_bytes_written_dram"] == tiles * TILE_BYTES


def test_bad_arguments_are_named(wheel):
    _, _, ta, tb = device_inputs((64, 64), 6)
    _, _, _, other = device_inputs((64, 96), 6)
    with pytest.raises(ValueError, match="same shape"):
        eltwise_binary.mul(ta, other)
    with pytest.raises(ValueError, match="column broadcast of b is emulated for mul without activations only"):
        eltwise_binary.binary_ng_program("add", 0, 0, 0, (1, 1, 1, 2), b_column_broadcast=True)
    with pytest.raises(ValueError, match="'gelu'"):
        eltwise_binary.mul(ta, tb, input_tensor_a_activations=["gelu"])
    with pytest.raises(ValueError, match="'div'"):
        eltwise_binary.binary_ng_program("div", 0, 0, 0, (1, 1, 1, 1))
    with pytest.raises(ValueError, match="packer's ReLU only without input activations"):
        eltwise_binary.binary_ng_program("mul", 0, 0, 0, (1, 1, 1, 1), lhs_activation="silu", post_relu=True)


def test_the_programs_build_against_the_real_headers(wheel):
    """Every kernel configuration above also passes the wheel's real device headers (tt-metal's JIT flags)."""
    programs = [
        eltwise_binary.binary_ng_program(op, 0, 0, 0, (1, 1, 2, 2), lhs_activation=act, post_relu=relu)
        for op in ("mul", "add")
        for act, relu in ((None, False), ("silu", False), (None, True))
    ] + [eltwise_binary.binary_ng_program("mul", 0, 0, 0, (1, 1, 2, 2), b_column_broadcast=True)]
    checked, failures = set(), []
    for program in programs:
        formats = {f.buffer_index: f.data_format.name for c in program.cbs for f in c.format_descriptors}
        for k in program.kernels:
            spec = {
                "compile_time_args": tuple(k.compile_time_args),
                "named_args": dict(k.named_compile_time_args),
                "defines": dict(k.defines),
                "cb_formats": formats,
            }
            if isinstance(k.config, pd.ComputeConfigDescriptor):
                spec["compute_config"] = ComputeConfig(
                    math_fidelity=k.config.math_fidelity.name,
                    fp32_dest_acc_en=k.config.fp32_dest_acc_en,
                    math_approx_mode=k.config.math_approx_mode,
                    dst_full_sync_en=k.config.dst_full_sync_en,
                )
            kind = "compute" if "compute_config" in spec else "dataflow"
            key = (k.kernel_source, repr(sorted(spec.items(), key=lambda item: item[0])))
            if key in checked:
                continue
            checked.add(key)
            result = conformance.check_kernel(k.kernel_source, kind, wheel_root=wheel, **spec)
            if [d for d in result.problems() if not is_host_clang_artifact(d)]:
                failures.append(result.report())
    # Readers and writers with and without the activation CB c_3 in the CB formats, six compute configurations;
    # then the column broadcast's reader, writer (CB c_6 among the formats) and compute kernel.
    assert len(checked) == 4 + 6 + 3
    assert not failures, "\n".join(failures)


def is_host_clang_artifact(d: conformance.Diagnostic) -> bool:
    """The wheel's own gcd.h / lcm.h (included unconditionally by the SFPU kernel) pass the function template
    calculate_sfpu_gcd / _lcm to a deduced Callable parameter, which the host clang cannot deduce. The error
    lies in tt-metal's headers, whatever the args and defines (tt-metal ships this kernel for every bf16 mul)."""
    return Path(d.file).name in {"gcd.h", "lcm.h"} and "_llk_math_eltwise_binary_sfpu_params_" in d.message
