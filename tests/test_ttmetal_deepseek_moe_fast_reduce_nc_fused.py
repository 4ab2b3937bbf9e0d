"""Tenstorrent's deepseek_moe_fast_reduce_nc_fused (ttnn 0.81.1 reader and compute kernels and the unfused op's
writer, unmodified) on the emulator (ttnn_moe.emu.ttmetal.deepseek_moe_fast_reduce_nc_fused), against torch.

The golden follows the op's definition: each token's output is the sum over the K expert slots of the slot's
activation row times the slot's weight, the weight being the token's score when the slot's expert lives on the
device's cluster axis (else 0) for routed slots, and the bf16-truncated shared_expert_scale for shared slots.
Exactness: with the op's default compute config (fp32 DST) every product of two bf16 values is exact in fp32 and
the FPU adds it onto DST (ELWMUL is Dst += A * B), so an output is the fp32 sum in slot order rounded once to
bf16: bf16 outputs are compared bit for bit; bfloat8_b inputs are held to PCC and the block format's step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal import deepseek_moe_fast_reduce_nc as unfused
from ttnn_moe.emu.ttmetal import deepseek_moe_fast_reduce_nc_fused as fused

pytestmark = pytest.mark.usefixtures("wheel")

EXPERTS = 16


def pcc(got: torch.Tensor, want: torch.Tensor) -> float:
    return float(np.corrcoef(got.flatten().double().numpy(), want.flatten().double().numpy())[0, 1])


def truncated_bf16(value: float) -> float:
    """float32 -> bf16 by dropping the low 16 bits (the factory's conversion of shared_expert_scale)."""
    bits = torch.tensor([value], dtype=torch.float32).view(torch.int32) & ~0xFFFF
    return float(bits.view(torch.float32))


def slot_weights(scores, indices, mapping, coord, mesh_cols, cluster_axis, shared, scale) -> torch.Tensor:
    """(K, tokens) weights of one device at mesh coordinate coord = (row, col)."""
    tokens, routed = scores.shape
    row = 0 if mapping.shape[0] == 1 else coord[0] * mesh_cols + coord[1]
    w = torch.zeros(routed + shared, tokens)
    for t in range(tokens):
        for e in range(routed):
            owner = int(mapping[row, int(indices[t, e])])
            on_axis = owner % mesh_cols == coord[1] if cluster_axis == 0 else owner // mesh_cols == coord[0]
            w[e, t] = scores[t, e] if on_axis else 0.0
    w[routed:] = truncated_bf16(scale)
    return w


def weighted_sum(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """x (K, 1, tokens, H) weighted by w (K, tokens), summed over K in fp32 in slot order -> (1, 1, tokens, H)."""
    acc = torch.zeros(x.shape[1:], dtype=torch.float32)
    for e in range(x.shape[0]):
        acc = acc + x[e].float() * w[e][None, :, None]
    return acc.unsqueeze(0)


def routing(tokens: int, routed: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    scores = torch.rand(tokens, routed, generator=g).bfloat16().float()
    indices = torch.stack([torch.randperm(EXPERTS, generator=g)[:routed] for _ in range(tokens)])
    return scores, indices


def device_inputs(scores, indices, mapping, device, **mesh_kwargs):
    tokens, routed = scores.shape
    s = ttnn.from_torch(scores.reshape(tokens, 1, 1, routed).bfloat16(), dtype=ttnn.bfloat16,
                        layout=ttnn.ROW_MAJOR_LAYOUT, device=device, **mesh_kwargs)  # fmt: skip
    i = ttnn.from_torch(indices.reshape(1, 1, tokens, routed).to(torch.int16), dtype=ttnn.uint16,
                        layout=ttnn.ROW_MAJOR_LAYOUT, device=device, **mesh_kwargs)  # fmt: skip
    return s, i


def mapping_tensor(mapping: torch.Tensor, device, **mesh_kwargs):
    return ttnn.from_torch(mapping.to(torch.int16), dtype=ttnn.uint16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device,
                           **mesh_kwargs)  # fmt: skip


def run_one_device(x, scores, indices, mapping, split_size, cluster_axis=0, dtype=ttnn.bfloat16, **kwargs):
    device = ttnn.open_device()
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    s, i = device_inputs(scores, indices, mapping, device)
    m = mapping_tensor(mapping, device)
    outputs = fused.deepseek_moe_fast_reduce_nc_fused(t, i, m, 0, split_size=split_size, cluster_axis=cluster_axis,
                                                      scores_tensor=s, **kwargs)  # fmt: skip
    return t, outputs


def joined(outputs) -> torch.Tensor:
    return torch.cat([ttnn.to_torch(o).float() for o in outputs], dim=-1)


@pytest.mark.parametrize("cluster_axis", [0, 1])
def test_decode_weighted_sum_is_bit_exact(cluster_axis):
    # One device: cluster axis 0 keeps every routed slot (mesh column 0 holds all devices' experts when the mesh
    # is one column wide), axis 1 keeps the slots whose expert lives on device 0 only.
    x = (torch.randn(8, 1, 32, 512, generator=torch.Generator().manual_seed(1)) * 4).bfloat16()
    scores, indices = routing(32, 8, 2)
    mapping = (torch.arange(EXPERTS) % 3).reshape(1, EXPERTS)  # experts on devices 0, 1, 2
    _, outputs = run_one_device(x, scores, indices, mapping, 64, cluster_axis)
    assert len(outputs) == 8 and list(ttnn.to_torch(outputs[0]).shape) == [1, 1, 32, 64]
    w = slot_weights(scores, indices, mapping, (0, 0), 1, cluster_axis, 0, 1.0)
    assert (w == 0).any() == (cluster_axis == 1)  # the gate mattered on axis 1 only
    want = weighted_sum(x, w)
    assert torch.equal(joined(outputs), want.bfloat16().float())


def test_shared_expert_slots_take_the_truncated_constant_scale():
    x = torch.randn(9, 1, 32, 256, generator=torch.Generator().manual_seed(3)).bfloat16()
    scores, indices = routing(32, 8, 4)
    mapping = torch.zeros(1, EXPERTS, dtype=torch.long)
    _, outputs = run_one_device(x, scores, indices, mapping, 128, num_shared_experts=1, shared_expert_scale=0.3)
    w = slot_weights(scores, indices, mapping, (0, 0), 1, 0, 1, 0.3)
    assert w[8, 0] == 0.298828125  # 0.3's bf16 by truncation (rounding would give 0.30078125)
    assert torch.equal(joined(outputs), weighted_sum(x, w).bfloat16().float())


def test_tokens_past_one_row_tile_use_their_own_score_tiles():
    x = torch.randn(4, 1, 50, 256, generator=torch.Generator().manual_seed(5)).bfloat16()
    scores, indices = routing(50, 4, 6)
    mapping = torch.zeros(1, EXPERTS, dtype=torch.long)
    _, outputs = run_one_device(x, scores, indices, mapping, 256)
    w = slot_weights(scores, indices, mapping, (0, 0), 1, 0, 0, 1.0)
    got = joined(outputs)
    assert list(got.shape) == [1, 1, 50, 256]
    assert torch.equal(got, weighted_sum(x, w).bfloat16().float())


def test_bfloat8_b_within_the_block_format_step():
    x = torch.randn(8, 1, 32, 256, generator=torch.Generator().manual_seed(7)).bfloat16()
    scores, indices = routing(32, 8, 8)
    mapping = torch.zeros(1, EXPERTS, dtype=torch.long)
    t, outputs = run_one_device(x, scores, indices, mapping, 128, dtype=ttnn.bfloat8_b)
    held = ttnn.to_torch(t).float()  # the activations the device holds
    want = weighted_sum(held, slot_weights(scores, indices, mapping, (0, 0), 1, 0, 0, 1.0)).double()
    got = joined(outputs).double()
    assert pcc(got, want) > 0.9999
    segment_max = want.abs().reshape(-1, 16).amax(dim=1, keepdim=True)
    assert ((got - want).abs().reshape(-1, 16) <= segment_max / 64).all()


def test_without_scores_it_is_the_unfused_sum():
    x = torch.randn(8, 1, 32, 256, generator=torch.Generator().manual_seed(9)).bfloat16()
    device = ttnn.open_device()
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    m = mapping_tensor(torch.zeros(1, EXPERTS), device)
    got = joined(fused.deepseek_moe_fast_reduce_nc_fused(t, m, m, 0, split_size=128, cluster_axis=0))
    assert torch.equal(got, joined(unfused.deepseek_moe_fast_reduce_nc(t, 0, split_size=128)))


@pytest.mark.parametrize("cluster_axis, per_device_mapping", [(1, False), (0, True)])
def test_every_device_of_a_2x4_mesh_weights_by_its_own_axis(cluster_axis, per_device_mapping):
    rows, cols, k, tokens, hidden = 2, 4, 8, 32, 256
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols))
    g = torch.Generator().manual_seed(10)
    x = torch.randn(rows * cols * k, 1, tokens, hidden, generator=g).bfloat16()
    routes = [routing(tokens, k, 11 + d) for d in range(rows * cols)]
    scores = torch.cat([s for s, _ in routes])
    indices = torch.cat([i for _, i in routes])
    owners = torch.randint(0, rows * cols, (rows * cols if per_device_mapping else 1, EXPERTS), generator=g)
    shard = {"mesh_mapper": ttnn.ShardTensorToMesh(mesh, dim=0)}
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh, **shard)
    s = ttnn.from_torch(scores.reshape(-1, 1, 1, k).bfloat16(), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT,
                        device=mesh, **shard)  # fmt: skip
    i = ttnn.from_torch(indices.reshape(rows * cols, 1, tokens, k).to(torch.int16), dtype=ttnn.uint16,
                        layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, **shard)  # fmt: skip
    m = mapping_tensor(owners, mesh, mesh_mapper=ttnn.ReplicateTensorToMesh(mesh))
    outputs = fused.deepseek_moe_fast_reduce_nc_fused(t, i, m, 0, split_size=64, cluster_axis=cluster_axis,
                                                      scores_tensor=s)  # fmt: skip
    per_output = [device_shards(o) for o in outputs]
    gated = 0
    for d in range(rows * cols):
        scores_d, indices_d = routes[d]
        w = slot_weights(scores_d, indices_d, owners, (d // cols, d % cols), cols, cluster_axis, 0, 1.0)
        gated += int((w == 0).sum())
        want = weighted_sum(x[d * k : (d + 1) * k], w).bfloat16().float()
        got = torch.cat([per_output[o][d].float() for o in range(len(outputs))], dim=-1)
        assert torch.equal(got, want), f"device {d}"
    assert 0 < gated < rows * cols * k * tokens  # some slots were on the axis and some not


def test_reads_each_activation_tile_once_and_packs_each_output_tile_once():
    x = torch.randn(8, 1, 32, 512, generator=torch.Generator().manual_seed(12)).bfloat16()
    scores, indices = routing(32, 8, 13)
    run_one_device(x, scores, indices, torch.zeros(1, EXPERTS, dtype=torch.long), 64)
    counters = ttnn.last_run_counters()
    assert counters["tiles_packed"] == 16
    # Every core reads the 8 x 16 activation tiles it reduces once, and the scores, indices and mapping whole.
    small = 32 * 16 + 32 * 16 + 2 * EXPERTS  # scores rows, index rows, the mapping row
    assert counters["noc_bytes_read_dram"] == 8 * 16 * 2048 + 16 * small


@pytest.mark.parametrize(
    "change, message",
    [
        ({"cluster_axis": 2}, "cluster_axis must be 0 or 1, got 2"),
        ({"num_shared_experts": 9}, r"num_shared_experts \(9\) must be between 0 and the reduced dim's size \(8\)"),
        ({"num_shared_experts": 1}, r"scores_tensor must be \[tokens, 1, 1, 7\]"),
        ({"tokens": 40}, "between 1 and 32 tokens"),
        ({"mapping_rows": 2}, r"must have one row \(replicated\) or one per device \(1\)"),
        ({"indices_dtype": ttnn.bfloat16}, "expert_indices_tensor must be a uint16 ROW_MAJOR tensor, got bfloat16"),
    ],
)
def test_rejects_bad_arguments_naming_them(change, message):
    device = ttnn.open_device()
    x = ttnn.from_torch(torch.zeros(8, 1, 32, 256).bfloat16(), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                        device=device)  # fmt: skip
    tokens = change.get("tokens", 32)
    s = ttnn.from_torch(torch.zeros(tokens, 1, 1, 8).bfloat16(), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT,
                        device=device)  # fmt: skip
    i = ttnn.from_torch(torch.zeros(1, 1, 32, 8), dtype=change.get("indices_dtype", ttnn.uint16),
                        layout=ttnn.ROW_MAJOR_LAYOUT, device=device)  # fmt: skip
    m = mapping_tensor(torch.zeros(change.get("mapping_rows", 1), EXPERTS), device)
    kwargs = {k: v for k, v in change.items() if k in ("cluster_axis", "num_shared_experts")}
    with pytest.raises(ValueError, match=message):
        fused.deepseek_moe_fast_reduce_nc_fused(
            x, i, m, 0, split_size=128, scores_tensor=s, **{"cluster_axis": 0, **kwargs}
        )
