"""The sparse expert matmuls' configurations in tt-metal's classic DeepSeek-V3 flow.

Program config: MatmulMultiCoreReuseMultiCast1DProgramConfig with in0 multicast, one 32-token block per
core row (per_core_M 1), the output columns spread over the 8x8 grid (per_core_N = N / 64 cores, rounded
up to tiles), in0_block_w 2 when K is an even number of tiles. At DeepSeek-V3's sizes that is w1/w3 on
64 cores with per_core_N 1 and w2 on 8x7 cores with per_core_N 4, as tt-metal's decode ran them.
Compute: LoFi for w1/w3, HiFi2 for w2, packer L1 accumulation, 16-bit DST (tt-metal's decode configs).
"""

from __future__ import annotations

TILE = 32
GRID = (8, 8)
MAX_SUBBLOCK_W = 8  # DST tiles of one output subblock row (16-bit DST, half sync)


def _div_up(a: int, b: int) -> int:
    return -(-a // b)


def expert_program_config(ops, k: int, n: int):
    """The program config of an (M = 32) x k by k x n expert matmul; `ops` provides ttnn's types."""
    per_core_n = _div_up(_div_up(n, GRID[0] * GRID[1]), TILE)
    cores = _div_up(_div_up(n, TILE), per_core_n)
    rows = _div_up(cores, GRID[0])
    subblock_w = max(w for w in range(1, MAX_SUBBLOCK_W + 1) if per_core_n % w == 0)
    return ops.MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=ops.CoreCoord(min(cores, GRID[0]), rows),
        in0_block_w=2 if (k // TILE) % 2 == 0 else 1,
        out_subblock_h=1,
        out_subblock_w=subblock_w,
        out_block_h=1,
        out_block_w=per_core_n,
        per_core_M=1,
        per_core_N=per_core_n,
        fuse_batch=False,
        fused_activation=None,
        mcast_in0=True,
    )


def expert_compute_config(ops, fidelity: str):
    return ops.WormholeComputeKernelConfig(
        math_fidelity=getattr(ops.MathFidelity, fidelity),
        math_approx_mode=False,
        fp32_dest_acc_en=False,
        packer_l1_acc=True,
    )
