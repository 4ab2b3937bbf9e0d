"""ttnn.matmul / ttnn.linear (0.81.1) on the emulator: tt-metal's 1D-multicast program (mcast_in0) or, given a
MatmulMultiCoreReuseMultiCastProgramConfig, its 2D-multicast program; their Metal 2.0 kernels unmodified
from the wheel.

A (..., M, K) with every leading dim 1 times B (K, N) (or (1, ..., K, N)) -> (..., M, N), in bfloat16 (the
2D program also writes bfloat8_b / bfloat4_b given `dtype`). Without a program_config, tt-metal's own 1D
choice for mcast_in0 (`matmul_config.mcast_in0_1d_config`): what the real runtime picked for the shapes
recorded (a (32, 256) x (256, 32) linear on one core, a (32, 7168) x (7168, 2048) matmul on 64). tt-metal's
own choice of the 2D or DRAM-sharded programs for other shapes is not described. `linear` takes no bias.
"""

from __future__ import annotations

import math

from ttnn_moe.emu.generic_op import generic_op
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.matmul_config import (
    DEFAULT_MATMUL_COMPUTE_CONFIG,
    MatmulMultiCoreReuseMultiCastProgramConfig,
    grid_xy,
    mcast_in0_1d_config,
)
from ttnn_moe.emu.ttmetal.matmul_mcast_1d import MatmulShape, Operand, mcast_in0_program
from ttnn_moe.emu.ttmetal.matmul_mcast_2d import mcast_2d_program
from ttnn_moe.emu.types import DRAM_MEMORY_CONFIG, TILE_LAYOUT, BufferType, bfloat4_b, bfloat8_b, bfloat16

TILE = 32
INPUT_DTYPES = (bfloat16, bfloat8_b, bfloat4_b)


def _check(t: Tensor, name: str, op: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"{op}: {name} must be an emulator Tensor, got {type(t).__name__}")
    if t.layout != TILE_LAYOUT or t.dtype not in INPUT_DTYPES:
        raise ValueError(
            f"{op}: {name} must be a TILE tensor of {[d.name for d in INPUT_DTYPES]}, got {t.dtype.name} {t.layout!r}"
        )
    if t.memory_config().buffer_type != BufferType.DRAM:
        raise ValueError(f"{op}: {name} must be in interleaved DRAM, got {t.memory_config()}")
    if len(t.shape) < 2 or math.prod(t.shape[:-2]) != 1:
        raise ValueError(f"{op}: {name} must be a matrix (every leading dim 1; no batches here), got {list(t.shape)}")


def matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    program_config=None,
    compute_kernel_config=None,
    memory_config=None,
    dtype=None,
    _op: str = "matmul",
) -> Tensor:
    a, b = input_tensor_a, input_tensor_b
    _check(a, "input_tensor_a", _op)
    _check(b, "input_tensor_b", _op)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{_op}: K of a {list(a.shape)} and b {list(b.shape)} differ")
    two_d = isinstance(program_config, MatmulMultiCoreReuseMultiCastProgramConfig) or hasattr(
        program_config, "transpose_mcast"
    )
    out_dtypes = INPUT_DTYPES if two_d else (bfloat16,)
    if memory_config not in (None, DRAM_MEMORY_CONFIG) or dtype not in (None, *out_dtypes):
        raise ValueError(
            f"{_op}: the output is an interleaved DRAM tensor of {[d.name for d in out_dtypes]} with this program, "
            f"got {memory_config} {dtype!r}"
        )
    device = a.device()
    if b.device() is not device:
        raise ValueError(f"{_op}: a and b must be on the same device")
    grid = device.compute_with_storage_grid_size()
    shape = MatmulShape(
        Mt=a.padded_shape[-2] // TILE,
        Kt=a.padded_shape[-1] // TILE,
        Nt=b.padded_shape[-1] // TILE,
        batchA=1,
        batchB=1,
        in0_last_ktile_w=a.shape[-1] % TILE,
    )
    config = program_config or mcast_in0_1d_config(shape.Mt, shape.Kt, b.shape[-1], (grid.x, grid.y))
    program_grid = grid_xy(config.compute_with_storage_grid_size)
    if program_grid[0] > grid.x or program_grid[1] > grid.y:
        raise ValueError(f"{_op}: program grid {program_grid} exceeds the device's {grid.x}x{grid.y}")
    out = allocate_tensor_on_device(
        list(a.shape[:-1]) + [b.shape[-1]], dtype or bfloat16, TILE_LAYOUT, device, DRAM_MEMORY_CONFIG
    )
    build = mcast_2d_program if two_d else mcast_in0_program
    program = build(
        device,
        shape,
        config,
        compute_kernel_config or DEFAULT_MATMUL_COMPUTE_CONFIG,
        _operand(a),
        _operand(b),
        _operand(out),
    )
    return generic_op([a, b, out], program)


def linear(input_tensor_a: Tensor, input_tensor_b: Tensor, *, bias=None, activation=None, **kwargs) -> Tensor:
    if bias is not None or activation is not None:
        raise ValueError("linear: a fused bias or activation is not described here")
    return matmul(input_tensor_a, input_tensor_b, _op="linear", **kwargs)


def _operand(t: Tensor) -> Operand:
    return Operand(t.buffer_address(), t.dtype.data_format, t.page_size)
