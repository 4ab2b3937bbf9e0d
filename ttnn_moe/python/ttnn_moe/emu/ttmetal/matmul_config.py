"""The configuration objects of ttnn 0.81.1's matmuls, for the emulator's descriptions of their programs.

`MatmulMultiCoreReuseMultiCast1DProgramConfig`, `MatmulMultiCoreReuseMultiCastProgramConfig` (2D) and
`WormholeComputeKernelConfig` carry the fields of ttnn's classes of the same names; the programs read them
by attribute, so ttnn's own objects (on hardware) and these are interchangeable. `mcast_in0_1d_config` is
tt-metal's choice of the 1D program config for a wide matmul without one (`get_mcast_1d_config` with
mcast_in0 in matmul_program_config.cpp: the whole grid, per_core_M = Mt, per_core_N = N spread over every
core, in0_block_w 2 when Kt is even, the largest output subblock from tt-metal's list of subblock shapes
that divides the per-core block).
"""

from __future__ import annotations

from dataclasses import dataclass

from ttnn_moe._C import program as pd

TILE = 32
# tt-metal's SUBBLOCK_HW_CHOICES, in its order of preference: (out_subblock_h, out_subblock_w).
SUBBLOCK_HW_CHOICES = (
    (4, 2), (2, 4), (8, 1), (1, 8), (7, 1), (1, 7), (3, 2), (2, 3), (6, 1), (1, 6),
    (5, 1), (1, 5), (2, 2), (4, 1), (1, 4), (3, 1), (1, 3), (2, 1), (1, 2), (1, 1),
)  # fmt: skip
# DST holds 8 bfloat16 tiles in half-sync mode, 4 with fp32 accumulation: a subblock must fit.
DST_TILES = {False: 8, True: 4}


def div_up(a: int, b: int) -> int:
    return -(-a // b)


def grid_xy(grid) -> tuple[int, int]:
    """(x, y) of a CoreCoord-like object or a 2-tuple."""
    if isinstance(grid, tuple):
        return int(grid[0]), int(grid[1])
    return int(grid.x), int(grid.y)


@dataclass(frozen=True)
class MatmulMultiCoreReuseMultiCast1DProgramConfig:
    """ttnn.MatmulMultiCoreReuseMultiCast1DProgramConfig: a 1D grid of cores, each owning per_core_N
    output tile columns (mcast_in0: in0 multicast from the first core) in blocks of out_block_w."""

    compute_with_storage_grid_size: object
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    out_block_h: int
    out_block_w: int
    per_core_M: int
    per_core_N: int
    fuse_batch: bool = False
    fused_activation: object = None
    mcast_in0: bool = True


@dataclass(frozen=True, kw_only=True)
class MatmulMultiCoreReuseMultiCastProgramConfig:
    """ttnn.MatmulMultiCoreReuseMultiCastProgramConfig (keywords only): a 2D grid of cores, each owning a
    per_core_M x per_core_N output block (in0 multicast along rows, in1 down columns), computed in
    out_block_h x out_block_w blocks (the whole per-core block when not given)."""

    compute_with_storage_grid_size: object
    in0_block_w: int
    out_subblock_h: int
    out_subblock_w: int
    out_block_h: int | None = None
    out_block_w: int | None = None
    per_core_M: int
    per_core_N: int
    transpose_mcast: bool = False
    fused_activation: object = None
    fuse_batch: bool = True

    def __post_init__(self):
        if self.out_block_h is None:
            object.__setattr__(self, "out_block_h", self.per_core_M)
        if self.out_block_w is None:
            object.__setattr__(self, "out_block_w", self.per_core_N)


@dataclass(frozen=True)
class WormholeComputeKernelConfig:
    """ttnn.WormholeComputeKernelConfig (math fidelity by name or pd.MathFidelity)."""

    math_fidelity: object = pd.MathFidelity.HiFi4
    math_approx_mode: bool = False
    fp32_dest_acc_en: bool = False
    packer_l1_acc: bool = False
    dst_full_sync_en: bool = False


def math_fidelity(config) -> pd.MathFidelity:
    value = config.math_fidelity
    if isinstance(value, pd.MathFidelity):
        return value
    name = getattr(value, "name", value)
    if not hasattr(pd.MathFidelity, str(name)):
        raise ValueError(f"math_fidelity must be one of LoFi, HiFi2, HiFi3, HiFi4, got {value!r}")
    return getattr(pd.MathFidelity, str(name))


# What ttnn's matmuls take without a compute_kernel_config on Wormhole (read off the real 0.81.1
# runtime's builds: HiFi2, packer L1 accumulation, 16-bit DST).
DEFAULT_MATMUL_COMPUTE_CONFIG = WormholeComputeKernelConfig(math_fidelity=pd.MathFidelity.HiFi2, packer_l1_acc=True)


def subblock_hw(per_core_M: int, per_core_N: int, fp32_dest_acc_en: bool = False) -> tuple[int, int]:
    for h, w in SUBBLOCK_HW_CHOICES:
        if h * w <= DST_TILES[fp32_dest_acc_en] and per_core_M % h == 0 and per_core_N % w == 0:
            return h, w
    raise AssertionError("(1, 1) always fits")


def mcast_in0_1d_config(
    Mt: int, Kt: int, N: int, grid: tuple[int, int], fp32_dest_acc_en: bool = False
) -> MatmulMultiCoreReuseMultiCast1DProgramConfig:
    per_core_N = div_up(div_up(N, grid[0] * grid[1]), TILE)
    out_subblock_h, out_subblock_w = subblock_hw(Mt, per_core_N, fp32_dest_acc_en)
    return MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=grid,
        in0_block_w=2 if Kt % 2 == 0 else 1,
        out_subblock_h=out_subblock_h,
        out_subblock_w=out_subblock_w,
        out_block_h=Mt,
        out_block_w=per_core_N,
        per_core_M=Mt,
        per_core_N=per_core_N,
        fuse_batch=True,
    )
