"""Input checks shared by the golden ops: ranks, dtypes, shapes, mesh geometry.

Every failure raises ValueError (bad value or shape) or TypeError (bad dtype or
type) with the offending value in the message, so a caller can see what it passed.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

# ttnn tensors are at most 4-D; a rank-r argument may arrive padded with leading 1s up to this.
MAX_RANK = 4
TILE = 32


def squeeze_to_rank(t: torch.Tensor, rank: int, name: str) -> torch.Tensor:
    """View of `t` with exactly `rank` dims; extra leading dims must all be 1 (ttnn's [1, 1, r, c])."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() < rank or t.dim() > max(rank, MAX_RANK):
        raise ValueError(f"{name} must be {rank}-D (or padded with leading 1s to {MAX_RANK}-D), got shape {tuple(t.shape)}")
    extra = t.shape[: t.dim() - rank]
    if any(d != 1 for d in extra):
        raise ValueError(f"{name} must be {rank}-D; its leading dims {tuple(extra)} of shape {tuple(t.shape)} must be 1")
    return t.reshape(t.shape[t.dim() - rank :])


def require_int(t: torch.Tensor, name: str) -> None:
    if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype == torch.bool:
        raise TypeError(f"{name} must have an integer dtype, got {t.dtype}")


def require_float(t: torch.Tensor, name: str) -> None:
    if not t.dtype.is_floating_point:
        raise TypeError(f"{name} must have a floating dtype, got {t.dtype}")


def require_bf16(t: torch.Tensor, name: str) -> None:
    if t.dtype != torch.bfloat16:
        raise TypeError(f"{name} must be torch.bfloat16, got {t.dtype}")


def require_shape(t: torch.Tensor, shape: Sequence[int], name: str) -> None:
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(t.shape)}")


def require_positive_int(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def counts_column(num_routed_tokens: torch.Tensor, max_count: int, name: str = "num_routed_tokens") -> torch.Tensor:
    """(E_l, 1) int counts -> (E_l,) int64, each in [0, max_count]."""
    counts = squeeze_to_rank(num_routed_tokens, 2, name)
    require_int(counts, name)
    if counts.shape[1] != 1:
        raise ValueError(f"{name} must have shape (E_l, 1), got {tuple(counts.shape)}")
    counts = counts[:, 0].to(torch.int64)
    bad = ((counts < 0) | (counts > max_count)).nonzero()
    if bad.numel():
        l = int(bad[0, 0])
        raise ValueError(f"{name}[{l}] = {int(counts[l])} is outside [0, {max_count}]")
    return counts


def grouped_offsets(expert_offsets: torch.Tensor, counts: torch.Tensor, num_rows: int) -> torch.Tensor:
    """Checks grouped-mode blocks; returns (E_l,) int64 offsets.

    Expert l owns rows [off_l, off_l + count_l): offsets are tile-aligned, blocks
    lie inside the `num_rows` rows and never overlap (a row belongs to one expert).
    """
    offsets = squeeze_to_rank(expert_offsets, 2, "expert_offsets")
    require_int(offsets, "expert_offsets")
    if tuple(offsets.shape) != (counts.numel(), 1):
        raise ValueError(f"expert_offsets must have shape ({counts.numel()}, 1) like num_routed_tokens, got {tuple(offsets.shape)}")
    offsets = offsets[:, 0].to(torch.int64)
    for l, (off, count) in enumerate(zip(offsets.tolist(), counts.tolist())):
        if off < 0 or off % TILE:
            raise ValueError(f"expert_offsets[{l}] = {off} must be a non-negative multiple of {TILE}")
        if off + count > num_rows:
            raise ValueError(f"expert {l}: rows [{off}, {off + count}) exceed the {num_rows} rows of the input")
    blocks = sorted((off, off + count, l) for l, (off, count) in enumerate(zip(offsets.tolist(), counts.tolist())) if count)
    for (_, end_a, la), (start_b, _, lb) in zip(blocks, blocks[1:]):
        if start_b < end_a:
            raise ValueError(f"expert blocks overlap: expert {la} ends at row {end_a}, expert {lb} starts at row {start_b}")
    return offsets


def mesh_dims(mesh_shape: Sequence[int]) -> tuple[int, int]:
    if not isinstance(mesh_shape, (tuple, list)) or len(mesh_shape) != 2:
        raise ValueError(f"mesh_shape must be (rows, cols), got {mesh_shape!r}")
    rows, cols = mesh_shape
    require_positive_int(rows, "mesh_shape rows")
    require_positive_int(cols, "mesh_shape cols")
    return rows, cols


def require_axis(cluster_axis: object) -> int:
    if isinstance(cluster_axis, bool) or cluster_axis not in (0, 1):
        raise ValueError(f"cluster_axis must be 0 or 1, got {cluster_axis!r}")
    return int(cluster_axis)


def require_device_list(tensors: object, num_devices: int, name: str) -> list[torch.Tensor]:
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name} must be a list with one tensor per device, got {type(tensors).__name__}")
    if len(tensors) != num_devices:
        raise ValueError(f"{name} has {len(tensors)} entries, the mesh has {num_devices} devices")
    for d, t in enumerate(tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}[{d}] must be a torch.Tensor, got {type(t).__name__}")
    return list(tensors)
