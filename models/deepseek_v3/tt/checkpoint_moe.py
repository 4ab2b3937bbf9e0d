"""A MoE layer of a safetensors checkpoint on a mesh: `load_checkpoint_moe(path, layer, mesh)`.

The layer's tensors are checked from the checkpoint's headers first (`checkpoint_layer`), the
mesh against the layer's dimensions, and only then read: the routed experts expert by expert,
dequantized and converted to the device format and written device by device (through the
converted-weight cache unless `cache=False`), the router and the shared experts once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from models.deepseek_v3.checkpoint_layer import CheckpointMoELayer, open_moe_layer
from models.deepseek_v3.tt.moe import TtMoE
from models.deepseek_v3.tt.moe_weights import (
    EXPERT_PROJECTIONS,
    check_layer_fits_mesh,
    expert_shard_from_state_dict,
    load_tt_moe_weights,
)
from models.deepseek_v3.tt.ttnn_api import ttnn
from models.deepseek_v3.tt.weight_cache import ExpertWeightCache, cache_key, weight_cache_dir


@dataclass
class CheckpointLoad:
    moe: TtMoE
    layer: CheckpointMoELayer  # the lazy state dict, for the streaming reference
    seconds: float  # wall time of the weight upload
    shards_converted: int  # (projection, device) expert shards converted from the checkpoint
    shards_from_cache: int  # ... and read from the converted-weight cache
    cache_directory: Optional[Path]


def load_checkpoint_moe(
    path: str | Path,
    layer: int,
    mesh_device: ttnn.MeshDevice,
    *,
    expert_dtype=ttnn.bfloat16,
    capacity: Optional[int] = None,
    cache: bool = True,
    cache_root: Optional[Path] = None,
) -> CheckpointLoad:
    """TtMoE for MoE layer `layer` of the checkpoint at `path` (config from its config.json).

    CheckpointError (a ValueError) for a dense layer, a missing or misshapen tensor or shard;
    ValueError if the layer does not split over the mesh."""
    moe_layer = open_moe_layer(path, layer)
    mesh_shape = tuple(mesh_device.shape)
    try:
        check_layer_fits_mesh(moe_layer.config, mesh_shape)
    except ValueError as error:
        rows, cols = mesh_shape
        raise ValueError(f"mesh {rows}x{cols} cannot hold layer {layer} of checkpoint {str(path)!r}: {error}") from None
    source = expert_shard_from_state_dict(moe_layer, expert_dtype)
    store = None
    if cache:
        key = cache_key(moe_layer.fingerprint(), mesh_shape, expert_dtype)
        store = ExpertWeightCache((cache_root or weight_cache_dir()) / key)
        source = store.wrap(source)
    start = time.perf_counter()
    weights = load_tt_moe_weights(
        moe_layer, moe_layer.config, mesh_device, expert_dtype=expert_dtype, expert_source=source
    )
    seconds = time.perf_counter() - start
    num_shards = len(EXPERT_PROJECTIONS) * mesh_device.get_num_devices()
    return CheckpointLoad(
        moe=TtMoE.from_weights(weights, moe_layer.config, mesh_device, capacity=capacity),
        layer=moe_layer,
        seconds=seconds,
        shards_converted=store.converted if store else num_shards,
        shards_from_cache=store.loaded if store else 0,
        cache_directory=store.directory if store else None,
    )
