"""Converted routed-expert weights on disk, so a second load of a layer skips the conversion.

One directory per key, a hash of (the checkpoint's fingerprint: config.json and each shard's
size, modification time and header; the layer; the mesh shape; the expert dtype), holding one
file per (projection, device): that device's share in the device format (`ttnn.dump_tensor`).
Each file is written atomically, so an interrupted load leaves only whole files and the next
load converts only what is missing. Only the routed experts are cached: the router and the shared
expert are read from the layer at every load, so how they are held on the device (the router's
weight in bf16 or fp32) is no part of the key. Files are read back memory-mapped (`ttnn.load_tensor`).

Where: `$TTNN_MOE_WEIGHT_CACHE` if set, else `$TTNN_MOE_CACHE/weights`, else
`~/.cache/ttnn_moe/weights`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from models.deepseek_v3.tt.moe_weights import ExpertShardSource
from models.deepseek_v3.tt.ttnn_api import ttnn

CACHE_FORMAT = "expert-shards-v2"  # bump when the stored form changes


def weight_cache_dir() -> Path:
    if os.environ.get("TTNN_MOE_WEIGHT_CACHE"):
        return Path(os.environ["TTNN_MOE_WEIGHT_CACHE"])
    root = os.environ.get("TTNN_MOE_CACHE") or Path.home() / ".cache" / "ttnn_moe"
    return Path(root) / "weights"


def cache_key(layer_fingerprint: str, mesh_shape: tuple[int, int], expert_dtype) -> str:
    rows, cols = mesh_shape
    text = f"{CACHE_FORMAT}|{layer_fingerprint}|mesh{rows}x{cols}|{expert_dtype.name}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass
class ExpertWeightCache:
    """Wraps an `ExpertShardSource`: a cached shard is loaded, a missing one converted and stored."""

    directory: Path
    converted: int = 0  # device shards converted from the source by this object
    loaded: int = 0  # device shards read from the cache by this object

    def wrap(self, convert: ExpertShardSource) -> ExpertShardSource:
        def cached(projection: str, device: int, experts: Sequence[int]) -> ttnn.Tensor:
            file = self.directory / f"{projection}.device{device}.tensor"
            if file.is_file():
                self.loaded += 1
                return ttnn.load_tensor(file)
            shard = convert(projection, device, experts)
            self.directory.mkdir(parents=True, exist_ok=True)
            ttnn.dump_tensor(file, shard)
            self.converted += 1
            return shard

        return cached
