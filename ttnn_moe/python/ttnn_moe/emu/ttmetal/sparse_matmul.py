"""ttnn.sparse_matmul (0.81.1) on the emulator: Tenstorrent's kernels from the wheel, unmodified.

Two programs, as the real runtime runs them: the output's zero fill (`zero_fill`; skipped batches read
as zeros), then the sparse 1D-multicast matmul (`matmul_mcast_1d` with its sparsity operand). With
`nnz` and a compact `optional_output_tensor` of shape [1, nnz, M, N] there is no fill and the results
of the nnz active batches are packed in sparsity order.

Modes (ttnn's docstring), M, K, N the matrices, E the groups of B:

| is_input_a_sparse | is_input_b_sparse | a | b | sparsity | output |
|---|---|---|---|---|---|
| True | True | [1, E, M, K] | [1, E, K, N] | [1, 1, 1, E] | [1, E, M, N] |
| False | True | [A, B, M, K] | [1, E, K, N] | [A, B, 1, E] | [A, B, 1, E, M, N] |
| True | False | [A, E, M, K] | [1, E, K, N] | [1, 1, A, E] | [A, E, M, N] |

The emulator's tensors have rank <= 4, so the rank-6 output of the second mode is returned as
[A * B, E, M, N]: the same pages in the same order (tt-metal's experts reshape it that way).
A batch whose sparsity value is 0 is not computed. The sparsity is ROW_MAJOR, one page per (A, B) row
of E flags (bfloat16, or the uint16 moe_expert_token_remap writes). `nnz`, when given, must equal the
number of non-zero flags: on a device a mismatch hangs unless the watcher checks the in0 sender's
ASSERT; the emulator always checks it and ends the run naming it. `indices` (gather mode) and `bias`
are not described.
"""

from __future__ import annotations

import math

from ttnn_moe._C import program as pd
from ttnn_moe.emu.generic_op import generic_op
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device
from ttnn_moe.emu.ttmetal.matmul_config import WormholeComputeKernelConfig, grid_xy
from ttnn_moe.emu.ttmetal.matmul_mcast_1d import MatmulShape, Operand, Sparsity, mcast_in0_program
from ttnn_moe.emu.ttmetal.zero_fill import zero_fill_program
from ttnn_moe.emu.types import (
    DRAM_MEMORY_CONFIG,
    ROW_MAJOR_LAYOUT,
    TILE_LAYOUT,
    BufferType,
    bfloat4_b,
    bfloat8_b,
    bfloat16,
    uint16,
)

TILE = 32
INPUT_DTYPES = (bfloat16, bfloat8_b, bfloat4_b)
# The kernels read each flag as a 16-bit word, non-zero meaning active. ttnn documents bfloat16; the
# 0.81.1 op checks the layout only, and tt-metal's own flow passes moe_expert_token_remap's uint16.
SPARSITY_DTYPES = (bfloat16, uint16)
# ttnn.sparse_matmul without a compute_kernel_config on Wormhole, as the real 0.81.1 runtime builds it:
# LoFi, packer L1 accumulation, 16-bit DST.
DEFAULT_COMPUTE_CONFIG = WormholeComputeKernelConfig(math_fidelity=pd.MathFidelity.LoFi, packer_l1_acc=True)


def _check_tile_input(t: Tensor, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"sparse_matmul: {name} must be an emulator Tensor, got {type(t).__name__}")
    if t.layout != TILE_LAYOUT or t.dtype not in INPUT_DTYPES:
        raise ValueError(
            f"sparse_matmul: {name} must be a TILE tensor of {[d.name for d in INPUT_DTYPES]}, "
            f"got {t.dtype.name} {t.layout!r}"
        )
    if len(t.shape) != 4:
        raise ValueError(f"sparse_matmul: {name} must have rank 4, got shape {list(t.shape)}")
    if t.memory_config().buffer_type != BufferType.DRAM:
        raise ValueError(f"sparse_matmul: {name} must be in interleaved DRAM, got {t.memory_config()}")


def _mode(a: Tensor, b: Tensor, a_sparse: bool, b_sparse: bool) -> tuple[int, int, list[int], list[int]]:
    """(batchA, batchB, expected sparsity shape, output shape (rank 4)) of a mode."""
    A0, A1, M, K = list(a.shape)
    b0, E, Kb, N = list(b.shape)
    if b0 != 1:
        raise ValueError(f"sparse_matmul: input_tensor_b must be [1, E, K, N], got {list(b.shape)}")
    if list(a.padded_shape)[-1] != list(b.padded_shape)[-2] or K != Kb:
        raise ValueError(
            f"sparse_matmul: K of input_tensor_a {list(a.shape)} and input_tensor_b {list(b.shape)} differ"
        )
    if a_sparse and b_sparse:
        if A0 != 1 or A1 != E:
            raise ValueError(f"sparse_matmul: with both inputs sparse, a must be [1, {E}, M, K], got {list(a.shape)}")
        return 1, E, [1, 1, 1, E], [1, E, M, N]
    if b_sparse:
        return A0 * A1, E, [A0, A1, 1, E], [A0 * A1, E, M, N]
    if a_sparse:
        if A1 != E:
            raise ValueError(f"sparse_matmul: with a sparse, a must be [A, {E}, M, K], got {list(a.shape)}")
        return A0, E, [1, 1, A0, E], [A0, E, M, N]
    raise ValueError("sparse_matmul requires at least one of is_input_a_sparse or is_input_b_sparse to be true")


def sparse_matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    sparsity: Tensor,
    program_config=None,
    nnz: int | None = None,
    is_input_a_sparse: bool = False,
    is_input_b_sparse: bool = True,
    memory_config=None,
    dtype=None,
    compute_kernel_config=None,
    optional_output_tensor: Tensor | None = None,
) -> Tensor:
    a, b = input_tensor_a, input_tensor_b
    _check_tile_input(a, "input_tensor_a")
    _check_tile_input(b, "input_tensor_b")
    if program_config is None:
        raise ValueError(
            "sparse_matmul: program_config (a MatmulMultiCoreReuseMultiCast1DProgramConfig) is required here"
        )
    if memory_config not in (None, DRAM_MEMORY_CONFIG):
        raise ValueError(f"sparse_matmul: the output goes to interleaved DRAM only, got memory_config={memory_config}")
    if dtype not in (None, bfloat16):
        raise ValueError(f"sparse_matmul: the output dtype must be bfloat16, got {dtype!r}")
    if not isinstance(sparsity, Tensor) or sparsity.dtype not in SPARSITY_DTYPES or sparsity.layout != ROW_MAJOR_LAYOUT:
        raise ValueError(f"sparse_matmul: sparsity must be a bfloat16 or uint16 ROW_MAJOR tensor, got {sparsity!r}")
    device = a.device()
    if b.device() is not device or sparsity.device() is not device:
        raise ValueError("sparse_matmul: all inputs must be on the same device")
    batchA, batchB, sparsity_shape, out_shape = _mode(a, b, is_input_a_sparse, is_input_b_sparse)
    batches = batchA * batchB
    if math.prod(sparsity.shape) != batches or list(sparsity.shape)[-1] != batchB:
        raise ValueError(
            f"sparse_matmul: sparsity must be {sparsity_shape} ({batches} flags, rows of {batchB}) for a "
            f"{list(a.shape)} and b {list(b.shape)}, got {list(sparsity.shape)}"
        )
    if nnz is not None and not 0 < nnz <= batches:
        raise ValueError(f"sparse_matmul: nnz must be in 1..{batches}, got {nnz}")
    M, N = out_shape[-2], out_shape[-1]
    compact = False
    if optional_output_tensor is not None:
        given = list(optional_output_tensor.shape)
        compact = nnz is not None and given == [1, nnz, M, N]
        if not compact and given != out_shape:
            raise ValueError(
                f"sparse_matmul: optional_output_tensor must be {out_shape} (or [1, nnz, M, N]), got {given}"
            )
        if optional_output_tensor.dtype != bfloat16 or optional_output_tensor.layout != TILE_LAYOUT:
            raise ValueError("sparse_matmul: optional_output_tensor must be a bfloat16 TILE tensor")
        out = optional_output_tensor
    else:
        out = allocate_tensor_on_device(out_shape, bfloat16, TILE_LAYOUT, device, DRAM_MEMORY_CONFIG)

    device_grid = device.compute_with_storage_grid_size()
    program_grid = grid_xy(program_config.compute_with_storage_grid_size)
    if program_grid[0] > device_grid.x or program_grid[1] > device_grid.y:
        raise ValueError(
            f"sparse_matmul: program grid {program_grid} exceeds the device's {device_grid.x}x{device_grid.y}"
        )
    out_tiles = math.prod(list(out.padded_shape)) // (TILE * TILE)
    if not compact:
        generic_op(
            [out],
            zero_fill_program(out.buffer_address(), out_tiles, out.dtype.data_format, (device_grid.x, device_grid.y)),
        )

    alignment = device.chips[0].dram_alignment
    sparsity_page = -(-sparsity.page_size // alignment) * alignment
    shape = MatmulShape(
        Mt=a.padded_shape[-2] // TILE,
        Kt=a.padded_shape[-1] // TILE,
        Nt=b.padded_shape[-1] // TILE,
        batchA=batchA,
        batchB=batchB,
        in0_last_ktile_w=a.shape[-1] % TILE,
    )
    program = mcast_in0_program(
        device,
        shape,
        program_config,
        compute_kernel_config or DEFAULT_COMPUTE_CONFIG,
        _operand(a),
        _operand(b),
        _operand(out),
        Sparsity(
            tensor=Operand(sparsity.buffer_address(), sparsity.dtype.data_format, sparsity_page),
            bcast_A=not is_input_a_sparse,
            get_batch_from_reader=nnz is None,
            num_batch_compute=batches if nnz is None else nnz,
            compact_output=compact,
        ),
    )
    return generic_op([a, b, sparsity, out], program)


def _operand(t: Tensor) -> Operand:
    return Operand(t.buffer_address(), t.dtype.data_format, t.page_size)
