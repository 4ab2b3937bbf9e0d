"""ttnn.permute (tt-metal 0.81.1) of an interleaved tensor on the emulator: which program each permutation runs.

ttnn.permute (permute.cpp, shipped in the wheel) views a tensor of rank < 4 as 4D, returns a permutation that moves
no data as it is, sends the swap of the two outer dims (1, 0, 2, 3) to ttnn.transpose(t, 0, 1) (the CN program,
`transpose_cn`), the H/W and H/C swaps to their transposes, and every other permutation to its permute device
operation, whose row-major factory for a moved last dim is `permute_rm`. Described here: the CN swap (TILE and
ROW_MAJOR) and ROW_MAJOR permutations that move the last dim; the others raise.
"""

from __future__ import annotations

from ttnn_moe.emu.conversions import reshape
from ttnn_moe.emu.tensor import Tensor
from ttnn_moe.emu.ttmetal.permute_rm import permute_rows
from ttnn_moe.emu.ttmetal.transpose_cn import transpose_cn
from ttnn_moe.emu.types import ROW_MAJOR_LAYOUT

CN = [1, 0, 2, 3]


def moves_no_data(shape: list[int], dims: list[int], row_major: bool) -> bool:
    """is_permute_nop: the identity, or a permutation that keeps the page dims and only moves dims of size 1."""
    rank = len(dims)
    if dims == list(range(rank)):
        return True
    kept = 1 if row_major else 2
    if dims[rank - kept :] != list(range(rank - kept, rank)):
        return False
    return all(i == j or shape[i] == 1 for i, j in enumerate(dims)) and [shape[d] for d in dims] == shape


def permute(t: Tensor, dims) -> Tensor:
    """ttnn.permute(t, dims) of an interleaved DRAM tensor of rank <= 4."""
    shape = [int(v) for v in t.shape]
    rank = len(shape)
    if len(dims) != rank:
        raise ValueError(f"dims {list(dims)} do not match the rank {rank} of shape {shape}")
    normalized = [int(d) % rank if -rank <= int(d) < rank else -1 for d in dims]
    if sorted(normalized) != list(range(rank)):
        raise ValueError(f"dims must be a permutation of the {rank} dims of shape {shape}, got {list(dims)}")
    if rank > 4:
        raise ValueError(f"permute takes ranks up to 4 here, got shape {shape}")
    row_major = t.layout == ROW_MAJOR_LAYOUT
    out_shape = [shape[d] for d in normalized]
    if moves_no_data(shape, normalized, row_major):
        return reshape(t, out_shape)
    pad = 4 - rank
    dims4 = list(range(pad)) + [d + pad for d in normalized]
    t4 = reshape(t, [1] * pad + shape) if pad else t
    if dims4 == CN:
        out = transpose_cn(t4)
    elif row_major and dims4[-1] != 3:
        out = permute_rows(t4, dims4)
    else:
        raise NotImplementedError(
            f"permute {list(dims)} of a {t.layout!r} tensor builds a program not described here "
            "(only (1, 0, 2, 3) and ROW_MAJOR permutations that move the last dim are)"
        )
    return reshape(out, out_shape) if pad else out
