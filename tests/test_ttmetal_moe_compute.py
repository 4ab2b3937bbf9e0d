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
from ttmetal_moe_compute_cases import GRID, routing, run_tilize_stage
from ttnn_moe.emu.tensor import device_shards

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
