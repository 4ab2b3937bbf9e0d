"""Op backends the mesh flow of the MoE layer can run on.

`reference_moe_mesh` only calls the ops through a `MeshOpBackend`, so the same
model code runs on the torch goldens or on another implementation of the ops
with the same signatures (per-device tensor lists in row-major device order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class MeshOpBackend:
    name: str
    expert_mapping_for_mesh: Callable     # (num_experts, num_devices) -> (1, 1, E, D) one-hot
    local_expert_slots: Callable          # (expert_mapping, device_index) -> (E,) slot or -1
    all_gather: Callable                  # (tensors, mesh_shape, dim, cluster_axis)
    reduce_scatter: Callable              # (tensors, mesh_shape, dim, cluster_axis)
    all_to_all_dispatch_dense: Callable   # (x, topk_indices, topk_weights, expert_mapping, mesh_shape, cluster_axis)
    moe_bmm: Callable                     # (x, w, num_routed_tokens, *, expert_offsets)
    local_reduce_moe_output: Callable     # (y, token_idx_map, weights, num_routed_tokens, num_out_rows, *, expert_offsets)
    all_to_all_combine_dense: Callable    # (reduced, slot_source, num_slots, mesh_shape, cluster_axis, batch, seq)


def golden_backend() -> MeshOpBackend:
    """The torch goldens of ttnn_moe: fp32 math, the correctness reference for every other backend."""
    from ttnn_moe import golden

    return MeshOpBackend(
        name="golden",
        expert_mapping_for_mesh=golden.expert_mapping_for_mesh,
        local_expert_slots=golden.local_expert_slots,
        all_gather=golden.all_gather,
        reduce_scatter=golden.reduce_scatter,
        all_to_all_dispatch_dense=golden.all_to_all_dispatch_dense,
        moe_bmm=golden.moe_bmm,
        local_reduce_moe_output=golden.local_reduce_moe_output,
        all_to_all_combine_dense=golden.all_to_all_combine_dense,
    )


BACKENDS: dict[str, Callable[[], MeshOpBackend]] = {"golden": golden_backend}


def get_backend(name: str) -> MeshOpBackend:
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; known backends: {sorted(BACKENDS)}")
    return BACKENDS[name]()
