"""Helpers of the moe_compute tests and benchmark: routing cases, and its tilize stage run with a stand-in for the
matmul ring (kernels/emu/moe_chunk_sink.cpp on the 12 ring cores), which takes part in the stage's handshake and
stores the per-expert counts and, with store_chunks, every chunk it receives."""

from __future__ import annotations

import torch
import ttmetal_moe_compute_golden as golden
import ttnn_moe.emu as ttnn
from emu_programs import KERNELS
from ttmetal_moe_cases import per_device, replicated
from ttnn_moe._C import program as pd
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal import moe_compute as mc
from ttnn_moe.emu.ttmetal.profiling import record_op

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


def run_tilize_stage(mesh, x, indices, scores, mapping, *, axis, local_experts, store_chunks=True):
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
    max_chunks = sum(-(-tokens // golden.CHUNK) for _ in range(local_experts)) if store_chunks else 1
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
            ("store_chunks", int(store_chunks)),
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
    io = [x_t, mapping_t, activation, e_t, counts_out, chunks_out]
    program = ccl.per_device_programs(rows, cols, build)
    generic_op(io, program)
    record_op("moe_compute tilize stage", io[:2], io[2:4], program, last_run_counters())
    return layout, shape, activation, e_t, counts_out, chunks_out, max_chunks


def run_moe_compute(mesh, x, indices, scores, mapping, w0, w1, w2):
    """The whole op on LocalOutput (cluster axis 0 of a 1 x n mesh): per device `d` its tokens x[d] `[T, H]`,
    indices / scores `[T, K]`, weights w0[d], w1[d] `[1, E, H, N]`, w2[d] `[1, E, N, H]`. Returns the `[K, T, H]`
    output, the activation rows, the e_t entries and the counters of the run."""
    tensors = [
        per_device(mesh, x.unsqueeze(1), ttnn.bfloat16),
        per_device(mesh, indices.unsqueeze(1).to(torch.int32), ttnn.uint16),
        per_device(mesh, scores.unsqueeze(1), ttnn.bfloat16),
        replicated(mesh, mapping.to(torch.int32), ttnn.uint16),
    ]
    weights = mc.place_weights(mesh, w0, w1, w2)
    output, activation, e_t = mc.moe_compute_local_output(*tensors, weights, cluster_axis=0)
    return output, activation, e_t, last_run_counters()
