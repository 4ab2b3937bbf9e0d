"""Tenstorrent's moe_compute (ttnn 0.81.1) on its FullCcl path: dispatch groups of several devices (the decode
meshes), where the matmul ring stages every token's rows on the combine cores and selective_reduce_combine's
reader.cpp / writer.cpp, built into the same program, send them back to the token's device. All eleven kernels
run unmodified.

Against a torch golden (ttmetal_moe_compute_golden.combined_outputs: SwiGLU experts over the same bfloat4_b
weights, routed by the group's top-k): which rows are written is compared exactly, the values by PCC and max
error, and so is the score-weighted sum over the K slots the layer takes next.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import ttmetal_moe_compute_golden as golden
import ttnn_moe.emu as ttnn
from ttmetal_moe_cases import per_device, replicated
from ttmetal_moe_compute_cases import GRID
from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal import moe_compute as mc
from ttnn_moe.emu.ttmetal.all_to_all_dispatch_metadata import all_to_all_dispatch_metadata

TESTS = Path(__file__).resolve().parent

pytestmark = pytest.mark.usefixtures("wheel")

MUX = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(1, 0), pd.CoreCoord(3, 1))])  # clear of every moe_compute core


def group_routing(rows, cols, axis, tokens_per_device, experts, k, gen, *, forced=None, excluded=()):
    """Per device the group's top-k indices and scores `[T, K]` (the same on every device of a group, as the
    dispatch leaves them). `forced`: the expert every token takes in slot 0; `excluded`: experts no token takes."""
    devices = rows * cols
    members_of = golden.group_members(rows, cols, axis)
    tokens = tokens_per_device * len(members_of[0])
    indices = torch.zeros(devices, tokens, k, dtype=torch.int64)
    scores = torch.zeros(devices, tokens, k, dtype=torch.bfloat16)
    allowed = torch.tensor([e for e in range(experts) if e not in excluded and e != forced])
    for members in members_of:
        picks = torch.stack([allowed[torch.randperm(len(allowed), generator=gen)[:k]] for _ in range(tokens)])
        if forced is not None:
            picks[:, 0] = forced
        weights = torch.rand(tokens, k, generator=gen).to(torch.bfloat16)
        for d in members:
            indices[d], scores[d] = picks, weights
    return indices, scores


def check_routing(activation, e_t, indices, scores, mapping, rows, cols, axis, local_experts):
    """The e_t entries and expert-activation rows each device leaves (what the combine routes by), exactly."""
    acts, ets = device_shards(activation), device_shards(e_t)
    row_words = 4 * -(-(2 * local_experts + 1) // 4)  # a row padded to 16 bytes
    for d in range(rows * cols):
        bits = scores[d].view(torch.int16).to(torch.int64) & 0xFFFF
        want = golden.tilize_stage(indices[d], bits, mapping, d, rows, cols, axis, 4, local_experts)
        got_rows = acts[d].reshape(-1, row_words)[: len(want.activation), : 1 + 2 * local_experts]
        assert got_rows.tolist() == want.activation, f"device {d}: activation rows"
        entries = ets[d].reshape(local_experts, -1, 4)
        for e, pairs in enumerate(want.e_t):
            assert entries[e, : len(pairs), :2].tolist() == [list(p) for p in pairs], f"device {d} expert {e}"
            assert int(entries[e, len(pairs), 0]) == 0xFFFFFFFF  # the -1 that ends the list


def run_and_check(mesh, axis, indices, scores, hidden, intermediate, local_experts, seed, same_weights=False,
                  **kwargs):  # fmt: skip
    rows, cols = mesh.shape
    devices = rows * cols
    experts = devices * local_experts
    gen = torch.Generator().manual_seed(seed)
    members_of = golden.group_members(rows, cols, axis)
    tokens = indices.shape[1]
    x = torch.zeros(devices, tokens, hidden, dtype=torch.bfloat16)
    for members in members_of:
        x[members] = torch.randn(tokens, hidden, generator=gen).to(torch.bfloat16)
    drawn = 1 if same_weights else devices
    w0, w1 = (torch.randn(drawn, 1, local_experts, hidden, intermediate, generator=gen) / hidden**0.5
              for _ in range(2))  # fmt: skip
    w2 = torch.randn(drawn, 1, local_experts, intermediate, hidden, generator=gen) / intermediate**0.5
    mapping = (torch.arange(experts) // local_experts).repeat(devices, 1)
    tensors = [
        per_device(mesh, x.unsqueeze(1), ttnn.bfloat16),
        per_device(mesh, indices.unsqueeze(1).to(torch.int32), ttnn.uint16),
        per_device(mesh, scores.unsqueeze(1), ttnn.bfloat16),
        replicated(mesh, mapping.to(torch.int32), ttnn.uint16),
    ]
    if same_weights:  # prepared once, placed on every device
        weights = mc.place_same_weights(mesh, w0[0], w1[0], w2[0])
        w0, w1, w2 = (w.expand(devices, *w.shape[1:]) for w in (w0, w1, w2))
    else:
        weights = mc.place_weights(mesh, w0, w1, w2)
    out, activation, e_t = mc.moe_compute_full_ccl(*tensors, weights, cluster_axis=axis, mux_core_range_set=MUX,
                                                   **kwargs)  # fmt: skip
    check_routing(activation, e_t, indices, scores, mapping, rows, cols, axis, local_experts)
    held = [golden.bfloat4_b(w) for w in (w0, w1, w2)]
    want = golden.combined_outputs(x, indices, scores, mapping, *held, rows, cols, axis)
    got = torch.stack([s.float() for s in device_shards(out)])
    written = want.abs().sum(-1) > 0
    assert torch.equal(got.abs().sum(-1) > 0, written), "other rows than the golden's were written"
    value_pcc = golden.pcc(got[written], want[written])
    max_error = (got - want).abs().max().item()
    # The layer's next step: each token's sum over its K slots weighted by its scores.
    own = tokens // len(members_of[0])
    position = {d: p for members in members_of for p, d in enumerate(members)}
    weights_k = torch.stack([scores[d, position[d] * own : (position[d] + 1) * own].float().T for d in range(devices)])
    got_sum, want_sum = (got * weights_k.unsqueeze(-1)).sum(1), (want * weights_k.unsqueeze(-1)).sum(1)
    sum_pcc = golden.pcc(got_sum, want_sum)
    print(f"{rows}x{cols} axis {axis}: {int(written.sum())} rows, PCC {value_pcc:.5f}, max error {max_error:.4f} "
          f"(max |y| {want.abs().max():.3f}); weighted sum PCC {sum_pcc:.5f}")  # fmt: skip
    assert value_pcc >= 0.999 and sum_pcc >= 0.999
    assert max_error <= 0.03 * want.abs().max().item()
    return written


@pytest.mark.parametrize(
    "rows, cols, tokens_per_device, local_experts, k, hidden, intermediate, links",
    [
        (2, 1, 16, 8, 4, 512, 384, 1),  # two devices, 16 experts
        (4, 1, 8, 4, 4, 512, 384, 2),  # a column of four (interior devices send both ways), two links
        (2, 2, 16, 4, 8, 256, 384, 1),  # two groups side by side; hidden 256: 8 W2 tiles, ring cores without a slice
    ],
)
def test_every_token_gets_its_experts_rows_from_its_group(rows, cols, tokens_per_device, local_experts, k, hidden,
                                                          intermediate, links):  # fmt: skip
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), grid=GRID)
    gen = torch.Generator().manual_seed(rows * 10 + cols)
    indices, scores = group_routing(rows, cols, 0, tokens_per_device, rows * cols * local_experts, k, gen)
    run_and_check(mesh, 0, indices, scores, hidden, intermediate, local_experts, seed=rows + cols, num_links=links)


def test_all_tokens_on_one_expert_and_experts_with_no_tokens():
    rows, cols, local_experts = 4, 1, 4
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), grid=GRID)
    gen = torch.Generator().manual_seed(5)
    # Every token's slot 0 is expert 6 (device 1); experts 0, 9 and 15 get no token.
    indices, scores = group_routing(rows, cols, 0, 8, 16, 4, gen, forced=6, excluded=(0, 9, 15))
    written = run_and_check(mesh, 0, indices, scores, 512, 384, local_experts, seed=6)
    assert bool(written[:, 0].all())  # slot 0 of every token on every device


def tg_mesh_dispatching_down_the_columns():
    rows, cols, local_experts = 4, 8, 2
    # 32 devices of 80 cores run at once (the shared buffer spans the grid): all of the L1 pool's 2560 slots.
    assert int(_emu.runtime_state()["l1_slots"]) >= rows * cols * GRID[0] * GRID[1]
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), grid=GRID)
    gen = torch.Generator().manual_seed(48)
    indices, scores = group_routing(rows, cols, 0, 8, rows * cols * local_experts, 8, gen)
    run_and_check(mesh, 0, indices, scores, 512, 384, local_experts, seed=49, same_weights=True)


def test_tg_mesh_dispatching_down_the_columns():
    # Needs every emulated L1 slot at once, so it runs in a process of its own: in the suite's process earlier
    # tests' L1-resident tensors may still hold a few.
    script = "\n".join(
        [
            f"import sys; sys.path[:0] = [{str(TESTS)!r}, {str(TESTS.parent)!r}]",
            "from tools.tt_wheel import ensure_ttnn_wheel",
            "from ttnn_moe.emu.ttmetal.wheel import use_wheel",
            "use_wheel(ensure_ttnn_wheel())",
            f"import {Path(__file__).stem} as case",
            "case.tg_mesh_dispatching_down_the_columns()",
        ]
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]


def test_bad_fullccl_arguments_are_refused_naming_them():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 1), grid=GRID)
    x = ttnn.from_torch(torch.zeros(2, 32, 512), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
    gen = torch.Generator().manual_seed(1)
    w = torch.randn(2, 1, 8, 512, 384, generator=gen)
    weights = mc.place_weights(mesh, w, w, torch.randn(2, 1, 8, 384, 512, generator=gen))
    with pytest.raises(ValueError, match=r"cluster_axis 1 of the 2x1 mesh has one device"):
        mc.moe_compute_full_ccl(x, x, x, x, weights, cluster_axis=1, mux_core_range_set=MUX)
    with pytest.raises(ValueError, match=r"output_height_shard_dim 2 .* needs output_height_shard_dim >= 4"):
        mc.moe_compute_full_ccl(x, x, x, x, weights, cluster_axis=0, mux_core_range_set=MUX,
                                output_height_shard_dim=2)  # fmt: skip
    on_ring = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(0, 1))])
    with pytest.raises(ValueError, match=r"mux cores \[\(0, 0\)\] are tilize, ring or combine cores"):
        mc.moe_compute_full_ccl(x, x, x, x, weights, cluster_axis=0, mux_core_range_set=on_ring)


def test_an_intermediate_size_of_fewer_tiles_than_ring_cores_is_refused_as_ttnn_does():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(2, 1), grid=GRID)
    x = ttnn.from_torch(torch.zeros(2, 32, 256), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
    gen = torch.Generator().manual_seed(2)
    w = torch.randn(2, 1, 2, 256, 64, generator=gen)  # intermediate 64: 2 tiles for a ring of 12 cores
    weights = mc.place_weights(mesh, w, w, torch.randn(2, 1, 2, 64, 256, generator=gen))
    with pytest.raises(
        ValueError,
        match=r"intermediate size 64 is 2 tiles, fewer than the 12 cores .*"
        r"TT_FATAL\(intermediate_tiles >= matmul_num_cores\).* smallest size it runs is 384",
    ):
        mc.moe_compute_full_ccl(x, x, x, x, weights, cluster_axis=0, mux_core_range_set=MUX)


def test_after_all_to_all_dispatch_metadata_on_a_column_of_two():
    """The decode path's first two ops: the dispatch's outputs (the group's tokens, sparse: only rows some local
    expert needs are written; the gathered indices and scores on the tilize drain core) feed moe_compute as they
    are."""
    rows, cols, tokens, k, local_experts, hidden, intermediate = 2, 1, 16, 4, 8, 512, 384
    devices, experts = rows * cols, rows * cols * local_experts
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), grid=GRID)
    gen = torch.Generator().manual_seed(21)
    xs = torch.randn(devices, tokens, hidden, generator=gen).to(torch.bfloat16)
    own_indices = torch.stack([torch.stack([torch.randperm(experts, generator=gen)[:k] for _ in range(tokens)])
                               for _ in range(devices)])  # fmt: skip
    own_scores = torch.rand(devices, tokens, k, generator=gen).to(torch.bfloat16)
    mapping = (torch.arange(experts) // local_experts).repeat(devices, 1)
    drain = pd.CoreCoord(*mc.WORMHOLE_TILIZE_CORES[0])

    def l1(t, dtype, memory_config=ttnn.L1_MEMORY_CONFIG):
        return ttnn.from_torch(t, dtype=dtype, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh, memory_config=memory_config,
                               mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip

    shard = ttnn.ShardSpec(pd.CoreRangeSet([pd.CoreRange(drain, drain)]), (rows * tokens, k))
    on_drain = ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, shard)
    outputs = (
        per_device(mesh, [torch.zeros(1, rows * tokens, hidden)] * devices, ttnn.bfloat16),
        l1(torch.zeros(devices, rows * tokens, k, dtype=torch.int64), ttnn.uint16, on_drain),
        l1(torch.zeros(devices, rows * tokens, k), ttnn.bfloat16, on_drain),
    )
    dispatched = all_to_all_dispatch_metadata(
        per_device(mesh, [t.reshape(tokens, 1, 1, hidden) for t in xs], ttnn.bfloat16),
        l1(own_indices.reshape(devices * tokens, 1, 1, k).to(torch.int32), ttnn.uint16),
        l1(own_scores.reshape(devices * tokens, 1, 1, k), ttnn.bfloat16),
        replicated(mesh, mapping.to(torch.int32), ttnn.uint16),
        cluster_axis=0, output_tensors=outputs, drain_sync_tilizer_core=(drain.x, drain.y),
    )  # fmt: skip
    w0, w1 = (torch.randn(devices, 1, local_experts, hidden, intermediate, generator=gen) / hidden**0.5
              for _ in range(2))  # fmt: skip
    w2 = torch.randn(devices, 1, local_experts, intermediate, hidden, generator=gen) / intermediate**0.5
    weights = mc.place_weights(mesh, w0, w1, w2)
    out, _, _ = mc.moe_compute_full_ccl(*dispatched, replicated(mesh, mapping.to(torch.int32), ttnn.uint16),
                                        weights, cluster_axis=0, mux_core_range_set=MUX)  # fmt: skip
    # Every device of the column sees the column's tokens, indices and scores (device 0's, then device 1's).
    group = [xs.reshape(-1, hidden), own_indices.reshape(-1, k), own_scores.reshape(-1, k)]
    x, indices, scores = (t.unsqueeze(0).expand(devices, *t.shape) for t in group)
    held = [golden.bfloat4_b(w) for w in (w0, w1, w2)]
    want = golden.combined_outputs(x, indices, scores, mapping, *held, rows, cols, 0)
    got = torch.stack([s.float() for s in device_shards(out)])
    written = want.abs().sum(-1) > 0
    assert torch.equal(got.abs().sum(-1) > 0, written)
    value_pcc, max_error = golden.pcc(got[written], want[written]), (got - want).abs().max().item()
    print(f"dispatch -> moe_compute 2x1: PCC {value_pcc:.5f}, max error {max_error:.4f}")
    assert value_pcc >= 0.999 and max_error <= 0.03 * want.abs().max().item()
