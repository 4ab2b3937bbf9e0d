"""Tenstorrent's moe_expert_token_remap (ttnn 0.81.1 kernels, unmodified: the combine reader and the
remap writer) on emulated meshes, against the torch golden (ttmetal_moe_golden.expert_token_remap).

Both outputs are fully defined (a token that chose none of the device's experts gets a row of zeros,
and the reduced mask is 0/1 everywhere), so they are compared exactly in full.
"""

from __future__ import annotations

import pytest
import torch
import ttmetal_moe_golden as golden
import ttnn_moe.emu as ttnn
from ttmetal_moe_cases import (
    open_mesh,
    per_device,
    replicated,
)
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal.moe_expert_token_remap import moe_expert_token_remap

K = 4
EXPERTS = 16  # a bf16 topk row of 32 bytes: the factory strides the topk CB by the L1 alignment (16 B), so on
# Wormhole the row must be a whole number of DRAM read alignments (32 B) for the CB's second page

pytestmark = pytest.mark.usefixtures("wheel")


def mapping_of(devices: int) -> torch.Tensor:
    """Expert e on device e // (EXPERTS / devices), one-hot [E, D]."""
    mapping = torch.zeros(EXPERTS, devices, dtype=torch.int64)
    mapping[torch.arange(EXPERTS), torch.arange(EXPERTS) // (EXPERTS // devices)] = 1
    return mapping


def metadata_rows(kind: str, tokens: int, experts: int, g: torch.Generator) -> torch.Tensor:
    if kind == "random":
        return torch.stack([torch.randperm(experts, generator=g)[:K] for _ in range(tokens)])
    if kind == "one_expert":  # every token on expert 0 (repeated), so the other experts get no tokens
        return torch.zeros(tokens, K, dtype=torch.int64)
    if kind == "sparse":  # only every 16th token chooses expert 3, the rest the last expert (last device)
        rows = torch.full((tokens, K), experts - 1, dtype=torch.int64)
        rows[::16, 0] = 3
        return rows
    raise ValueError(kind)


@pytest.mark.parametrize(
    "rows, cols, batch, seq, kind, reduction_size",
    [
        pytest.param(1, 2, 4, 8, "random", 16, id="1x2-random"),
        pytest.param(2, 2, 1, 64, "sparse", 16, id="2x2-sparse"),
        pytest.param(1, 2, 2, 16, "one_expert", 8, id="1x2-one_expert-reduce8"),
    ],
)
def test_remap_matches_the_golden(rows, cols, batch, seq, kind, reduction_size):
    mesh = open_mesh(rows, cols)
    devices = rows * cols
    mapping = mapping_of(devices)
    experts = EXPERTS
    g = torch.Generator().manual_seed(batch * seq)
    tokens = batch * seq
    topk = [torch.randn(tokens, experts, generator=g).to(torch.bfloat16) for _ in range(devices)]
    metadata = [metadata_rows(kind, tokens, experts, g) for _ in range(devices)]
    out_map, out_reduced = moe_expert_token_remap(
        per_device(mesh, [t.reshape(1, batch, seq, experts) for t in topk], ttnn.bfloat16),
        replicated(mesh, mapping.reshape(1, 1, experts, devices), ttnn.uint16),
        per_device(mesh, [m.reshape(1, batch, seq, K) for m in metadata], ttnn.uint16),
        reduction_size=reduction_size,
    )
    local = experts // devices
    for d, (got_map, got_reduced) in enumerate(zip(device_shards(out_map), device_shards(out_reduced))):
        want_map, want_reduced = golden.expert_token_remap(topk[d], metadata[d], mapping, d, reduction_size)
        assert list(got_map.shape) == [1, batch, seq, local]
        assert torch.equal(got_map.reshape(tokens, local), want_map), f"device {d}: mapping"
        assert list(got_reduced.shape) == [1, 1, tokens // reduction_size, local]
        assert torch.equal(got_reduced.reshape(-1, local).to(torch.int64), want_reduced), f"device {d}: reduced"


def test_reduction_size_must_divide_the_tokens():
    mesh = open_mesh(1, 2)
    mapping = replicated(mesh, mapping_of(2).reshape(1, 1, EXPERTS, 2), ttnn.uint16)
    topk = replicated(mesh, torch.zeros(1, 1, 24, EXPERTS), ttnn.bfloat16)
    md = replicated(mesh, torch.zeros(1, 1, 24, K, dtype=torch.int64), ttnn.uint16)
    with pytest.raises(ValueError, match=r"batch \* seq \(24\) must be divisible by reduction_size \(16\)"):
        moe_expert_token_remap(topk, mapping, md)
    narrow = replicated(mesh, torch.zeros(1, 1, 32, 8), ttnn.bfloat16)
    small_mapping = replicated(mesh, torch.zeros(1, 1, 8, 2, dtype=torch.int64), ttnn.uint16)
    md32 = replicated(mesh, torch.zeros(1, 1, 32, K, dtype=torch.int64), ttnn.uint16)
    with pytest.raises(ValueError, match=r"topk_tensor's rows of 16 bytes"):
        moe_expert_token_remap(narrow, small_mapping, md32)
