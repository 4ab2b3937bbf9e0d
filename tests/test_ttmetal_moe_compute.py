"""Tenstorrent's moe_compute (ttnn 0.81.1) on the emulator: its tilize stage (tilize_reader.cpp /
tilize_writer.cpp / tilize_compute.cpp, unmodified) on the Wormhole layout, against the torch golden of its
documented semantics (ttmetal_moe_compute_golden).

The matmul ring is stood in for by tests/kernels/emu/moe_chunk_sink.cpp on the 12 ring cores: it takes part in
the stage's handshake and stores the per-expert counts and every chunk it receives, so the test sees what the
ring would compute on. Routing outputs (counts, e_t entries, activation rows) are compared exactly; the chunks
are bfloat16 copies of the routed tokens, compared exactly on their valid rows.
"""

from __future__ import annotations

import pytest
import torch
import ttmetal_moe_compute_golden as golden
import ttnn_moe.emu as ttnn
from ttmetal_moe_compute_cases import GRID, routing, run_moe_compute, run_tilize_stage
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal import moe_compute as mc

pytestmark = pytest.mark.usefixtures("wheel")


def check_stage(mesh, x, indices, scores, mapping, *, axis, local_experts):
    rows, cols = mesh.shape
    layout, shape, activation, e_t, counts_out, chunks_out, max_chunks = run_tilize_stage(
        mesh, x, indices, scores, mapping, axis=axis, local_experts=local_experts
    )
    ring = len(layout.matmul)
    acts, ets = device_shards(activation), device_shards(e_t)
    counts, chunks = device_shards(counts_out), device_shards(chunks_out)
    row_words = shape.activation_row_bytes // 4
    for lin in range(rows * cols):
        bits = scores[lin].view(torch.int16).to(torch.int64) & 0xFFFF
        want = golden.tilize_stage(indices[lin], bits, mapping, lin, rows, cols, axis, len(layout.tilize),
                                   local_experts)  # fmt: skip
        n = [len(entries) for entries in want.e_t]
        # Every ring core received the same counts.
        assert counts[lin].reshape(ring, -1)[:, :local_experts].tolist() == [n] * ring
        got_rows = acts[lin].reshape(-1, row_words)[: len(want.activation), : 1 + 2 * local_experts]
        assert got_rows.tolist() == want.activation
        entries = ets[lin].reshape(local_experts, -1, 4)
        for e in range(local_experts):
            assert entries[e, : n[e], :2].tolist() == [list(p) for p in want.e_t[e]]
            assert int(entries[e, n[e], 0]) == 0xFFFFFFFF  # the -1 that ends the list
        got_chunks = chunks[lin].reshape(ring, max_chunks, -1)
        for c, (e, tokens) in enumerate(want.chunks()):
            for core in range(ring):
                pages = got_chunks[core, c].to(torch.int32).view(torch.int16).view(torch.bfloat16)
                tile_rows = golden.untilize(pages.reshape(-1), golden.CHUNK, shape.hidden)
                assert torch.equal(tile_rows[: len(tokens)], x[lin, tokens]), f"device {lin} chunk {c} core {core}"


@pytest.mark.parametrize(
    "rows, cols, axis, tokens_per_device, experts, k, hidden",
    [
        (1, 1, 1, 64, 8, 4, 256),  # one device: every expert local, several chunks per expert
        (1, 4, 1, 8, 16, 4, 128),  # the dispatch group along the row; 2 tilize cores (4 hidden tiles)
        (2, 2, 0, 16, 16, 2, 256),  # along the column (a mapping page of 32 bytes: DRAM reads stay aligned)
    ],
)
def test_tilize_stage_routes_and_tilizes_every_local_token(rows, cols, axis, tokens_per_device, experts, k, hidden):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(rows, cols), grid=GRID)
    indices, scores, mapping = routing(rows, cols, axis, tokens_per_device, experts, k, seed=rows * 10 + cols)
    group = rows if axis == 0 else cols
    x = torch.randn(rows * cols, tokens_per_device * group, hidden).to(torch.bfloat16)
    check_stage(mesh, x, indices, scores, mapping, axis=axis, local_experts=experts // (rows * cols))


@pytest.mark.parametrize(
    "cols, tokens, experts_per_device, k, hidden, intermediate",
    [
        (1, 32, 2, 2, 512, 384),  # one device, one chunk per expert; one intermediate column per ring core
        # two devices (16 experts: a mapping page of 32 bytes keeps its DRAM reads aligned), second chunks; 20
        # intermediate tiles (2 or 1 per ring core)
        (2, 72, 8, 8, 448, 640),
        (8, 32, 2, 4, 512, 384),  # a T3K-shaped 1x8 mesh, dispatched along its axis of extent 1
    ],
)
def test_moe_compute_runs_swiglu_of_every_local_expert(cols, tokens, experts_per_device, k, hidden, intermediate):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, cols), grid=GRID)
    devices = cols
    experts = devices * experts_per_device
    gen = torch.Generator().manual_seed(tokens + hidden)
    indices = torch.stack([torch.stack([torch.randperm(experts, generator=gen)[:k] for _ in range(tokens)])
                           for _ in range(devices)])  # fmt: skip
    scores = torch.rand(devices, tokens, k, generator=gen).to(torch.bfloat16)
    mapping = (torch.arange(experts) // experts_per_device).repeat(devices, 1)
    x = torch.randn(devices, tokens, hidden, generator=gen).to(torch.bfloat16)
    w0, w1 = (torch.randn(devices, 1, experts_per_device, hidden, intermediate, generator=gen) / hidden**0.5
              for _ in range(2))  # fmt: skip
    w2 = torch.randn(devices, 1, experts_per_device, intermediate, hidden, generator=gen) / intermediate**0.5
    out, *_ = run_moe_compute(mesh, x, indices, scores, mapping, w0, w1, w2)
    for d, got in enumerate(device_shards(out)):
        stage = golden.tilize_stage(indices[d], scores[d].view(torch.int16).to(torch.int64) & 0xFFFF, mapping, d,
                                    1, cols, 0, 4, experts_per_device)  # fmt: skip
        want = golden.expert_outputs(x[d], stage, *(golden.bfloat4_b(w[d, 0]) for w in (w0, w1, w2)), k)
        written = want.abs().sum(-1) > 0
        assert torch.equal(got.float().abs().sum(-1) > 0, written), f"device {d}: other rows than the golden's"
        value_pcc = golden.pcc(got.float()[written], want[written])
        max_error = (got.float() - want).abs().max().item()
        print(f"device {d}: PCC {value_pcc:.5f}, max error {max_error:.4f} (max |y| {want.abs().max():.3f})")
        # tt-metal's own moe_compute test accepts PCC 0.988 on hardware; the emulator's LoFi bfloat4_b matmuls
        # and approximate SiLU stay far closer to the golden over the same weights.
        assert value_pcc >= 0.999
        assert max_error <= 0.03 * want.abs().max().item()


@pytest.mark.parametrize("intermediate, tiles", [(64, 2), (352, 11)])
def test_an_intermediate_size_of_fewer_tiles_than_ring_cores_is_refused_as_ttnn_does(intermediate, tiles):
    # ttnn 0.81.1's validation refuses intermediate_tiles < matmul_num_cores (12 on a Wormhole); at those sizes the
    # ring's kernels would wait for each other for good.
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), grid=GRID)
    gen = torch.Generator().manual_seed(intermediate)
    indices = torch.stack([torch.randperm(2, generator=gen) for _ in range(8)]).unsqueeze(0)
    scores = torch.rand(1, 8, 2, generator=gen).to(torch.bfloat16)
    x = torch.randn(1, 8, 128, generator=gen).to(torch.bfloat16)
    w0, w1 = (torch.randn(1, 1, 2, 128, intermediate, generator=gen) for _ in range(2))
    w2 = torch.randn(1, 1, 2, intermediate, 128, generator=gen)
    with pytest.raises(
        ValueError,
        match=rf"intermediate size {intermediate} is {tiles} tiles, fewer than the 12 "
        r"cores of the matmul ring; ttnn 0.81.1 refuses it too .*"
        r"TT_FATAL\(intermediate_tiles >= matmul_num_cores\).* runs is 384",
    ):
        run_moe_compute(mesh, x, indices, scores, torch.zeros(1, 2, dtype=torch.int64), w0, w1, w2)


def test_a_mapping_whose_rows_break_the_dram_read_alignment_is_refused():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), grid=GRID)
    indices, scores, mapping = routing(1, 2, 1, 8, 4, 2, seed=3)  # 4 experts: rows of 8 bytes
    x = torch.randn(2, 16, 128).to(torch.bfloat16)
    with pytest.raises(ValueError, match=r"mapping's 2 rows of 4 experts .* multiple of 16 experts"):
        run_tilize_stage(mesh, x, indices, scores, mapping, axis=1, local_experts=2)


def test_a_cluster_axis_with_more_than_one_device_is_refused():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), grid=GRID)
    x = ttnn.from_torch(torch.zeros(2, 32, 512), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
    with pytest.raises(ValueError, match=r"cluster_axis 1 of the 1x2 mesh has more than one device"):
        mc.moe_compute_local_output(x, x, x, x, [], cluster_axis=1)
