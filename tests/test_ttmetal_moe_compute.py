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
from emu_programs import KERNELS
from ttmetal_moe_cases import per_device, replicated
from ttnn_moe._C import program as pd
from ttnn_moe.emu.generic_op import generic_op
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal import moe_compute as mc

pytestmark = pytest.mark.usefixtures("wheel")
GRID = (8, 10)  # the Wormhole grid the ring and the tilize cores are laid out on


def routing(rows, cols, axis, tokens_per_device, experts, k, seed):
    """Per device: the dispatch group's top-k expert indices and score bits `[T, K]`; the expert mapping `[D, E]`
    (expert e on device e // (E / D), as every device sees it)."""
    gen = torch.Generator().manual_seed(seed)
    devices = rows * cols
    group = rows if axis == 0 else cols
    tokens = tokens_per_device * group
    indices = torch.stack([torch.stack([torch.randperm(experts, generator=gen)[:k] for _ in range(tokens)])
                           for _ in range(devices)])  # fmt: skip
    scores = torch.rand(devices, tokens, k, generator=gen).to(torch.bfloat16)
    mapping = (torch.arange(experts) // (experts // devices)).repeat(devices, 1)
    return indices, scores, mapping


def run_tilize_stage(mesh, x, indices, scores, mapping, *, axis, local_experts):
    rows, cols = mesh.shape
    devices, tokens, hidden = x.shape
    k = indices.shape[-1]
    device = mesh.get_devices()[0]
    layout = mc.core_layout(device, hidden, token_parallel=1, data_parallel=1)
    shape = mc.TilizeShape(tokens, hidden, k, mapping.shape[1], local_experts, devices)
    x_t = per_device(mesh, x.unsqueeze(1), ttnn.bfloat16)
    mapping_t = replicated(mesh, mapping.to(torch.int32), ttnn.uint16)

    def zeros(*shape_per_device):
        rows_per_device, *rest = shape_per_device
        return ttnn.from_torch(
            torch.zeros(devices * rows_per_device, *rest, dtype=torch.int64),
            dtype=ttnn.uint32,
            layout=ttnn.ROW_MAJOR_LAYOUT,
            device=mesh,
            memory_config=ttnn.L1_MEMORY_CONFIG,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
        )

    activation = zeros(1, tokens * shape.activation_row_bytes // 4)
    e_t = zeros(local_experts, shape.e_t_page_bytes // 4)
    ring = len(layout.matmul)
    max_chunks = sum(-(-tokens // golden.CHUNK) for _ in range(local_experts))
    counts_words = shape.counts_page_bytes // 4
    counts_out = per_device(mesh, [torch.zeros(devices * ring, counts_words, dtype=torch.int64)], ttnn.uint32)
    chunk_words = shape.hidden_tiles * mc.TILE_BYTES // 4
    chunks_out = per_device(mesh, [torch.zeros(devices * ring * max_chunks, chunk_words, dtype=torch.int64)],
                            ttnn.uint32)  # fmt: skip

    def build(r, c):
        lin = r * cols + c
        stage = mc.tilize_stage_program(
            mesh.get_devices()[lin], lin, rows, cols, axis, x_t, indices[lin], scores[lin], mapping_t, activation,
            e_t, shape, layout,
        )  # fmt: skip
        named = [
            ("metadata_ready_semaphore_id", stage.semaphores["metadata_ready"]),
            ("matmul_chunk_ready_semaphore_id", stage.semaphores["matmul_chunk_ready"]),
            ("matmul_chunk_available_semaphore_id", stage.semaphores["matmul_chunk_available"]),
            ("per_expert_cb", mc.PER_EXPERT_TOKENS_CB),
            ("chunk_cb", mc.TILIZE_OUTPUT_CB),
            ("experts", local_experts),
            ("counts_bytes", shape.counts_page_bytes),
            ("hidden_tiles", shape.hidden_tiles),
            ("drain_noc_x", stage.drain_noc.x),
            ("drain_noc_y", stage.drain_noc.y),
        ]
        rt = [(core, [counts_out.buffer_address(), chunks_out.buffer_address(), i, max_chunks])
              for i, core in enumerate(layout.matmul)]  # fmt: skip
        stage.program.kernels = [
            *stage.program.kernels,
            pd.KernelDescriptor(
                kernel_source=str(KERNELS / "moe_chunk_sink.cpp"), core_ranges=ccl.core_range_set(list(layout.matmul)),
                named_compile_time_args=named, runtime_args=rt,
                config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_0, pd.NOC.RISCV_1_default),
            ),
        ]  # fmt: skip
        return stage.program

    ccl.use_kernel_includes()
    generic_op([x_t, mapping_t, activation, e_t, counts_out, chunks_out], ccl.per_device_programs(rows, cols, build))
    return layout, shape, activation, e_t, counts_out, chunks_out, max_chunks


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
