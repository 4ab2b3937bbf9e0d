"""all_to_all_combine_dense past one presence window of tokens: just below, at and just above the
single-window limit and at a 16k-token prefill per device, on a line of 4, exact against
ttnn_moe.golden (float32 bit for bit, bfloat16 its rounding), with the windows counted from the
emulator's DRAM counters of the presence buffer; and the program's L1 independent of the tokens."""

from __future__ import annotations

import math

import pytest
import torch
from combine_inputs import check_exact, combine_inputs
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.ops.all_to_all_combine_dense import _combine as combine_with_scratch

import ttnn_moe
from ttnn_moe import _C, emu, golden

COMBINE = _C.ops.all_to_all_combine_dense
WINDOW = COMBINE.PRESENCE_WINDOW_TOKENS
L1_BUDGET = 1024 * 1024  # circular buffers per core (docs/ops/all_to_all_combine_dense.md)
PREFILL = 16384  # tokens per device of a long-context prefill
HIDDEN = 32


def line_slots(line: int, tokens: int, density: float, seed: int) -> list[torch.Tensor]:
    """Per holder on the line: the (source position, token) pairs it returns partials for, each
    pair drawn with probability `density`, in a shuffled order (slots come grouped by expert, not
    by token)."""
    g = torch.Generator().manual_seed(seed)
    holders = []
    for _ in range(line):
        chosen = (torch.rand(line, tokens, generator=g) < density).nonzero()
        holders.append(chosen[torch.randperm(chosen.shape[0], generator=g)].to(torch.int32))
    return holders


def run_combine(line: int, tokens: int, density: float, *, links: int = 1, seed: int = 0, hidden: int = HIDDEN):
    """Combine of random rows on a 1 x `line` mesh (dispatch along axis 1) with `links` cores and
    links; returns (float32 output, bfloat16 output, golden, the DRAM traffic of each device's
    presence buffer, slots)."""
    mesh = emu.open_mesh_device(emu.MeshShape(1, line), grid=(links, 1))
    mesh._mesh.fabric_topology = _C.emu.Topology.Linear
    mesh._mesh.set_fabric_num_links(links)
    used = line_slots(line, tokens, density, seed)
    handle, reduced_mesh, reduced, sources, counts = combine_inputs(
        mesh, used, tokens, cluster_axis=1, links=links, hidden=hidden, seed=seed + 1
    )
    # The op's entry point, which also returns its internal presence buffer.
    output, _partials, presence_buffer, _status = combine_with_scratch(
        reduced_mesh, handle, "float32", False, None, None, True
    )
    got32 = device_shards(output)
    counters = emu.last_run_counters()["devices"]
    presence = [counters[d]["dram_buffers"][presence_buffer.buffer_address()] for d in sorted(counters)]
    got16 = device_shards(ttnn_moe.all_to_all_combine_dense(reduced_mesh, handle).output)
    want = golden.all_to_all_combine_dense(reduced, sources, counts, (1, line), 1, 1, tokens)
    return got32, got16, want, presence, used


@pytest.mark.parametrize("tokens", [WINDOW - 1, WINDOW, WINDOW + 1], ids=["below", "at", "above"])
def test_one_core_at_the_single_window_limit(tokens):
    line = 4
    got32, got16, want, presence, used = run_combine(line, tokens, 0.4, seed=tokens)
    check_exact(got32, got16, want)
    windows = math.ceil(tokens / WINDOW)
    for d, traffic in enumerate(presence):
        if windows == 1:
            # The rows stay in L1 while slots are sent; each page is merged in one read.
            assert traffic["page_reads"] == line, f"device {d}"
            assert traffic["bytes_read"] == line * tokens * 4, f"device {d}"
        else:
            # Every outgoing page is read back a window at a time to be sent, and every received
            # page merged a window at a time. The NOC writes: a window-sized clear per outgoing
            # page and window, a mark per slot sent, and the device's own windows (the peers'
            # arrive over the fabric).
            assert traffic["page_reads"] == 2 * line * windows, f"device {d}"
            assert traffic["bytes_read"] == 2 * line * tokens * 4, f"device {d}"
            assert traffic["page_writes"] == line * windows + used[d].shape[0] + windows, f"device {d}"


def test_two_cores_with_token_shares_off_the_dram_alignment():
    # 2 cores: token shares [0, 513) and [513, 1025), the second merged from the aligned token 512.
    got32, got16, want, _, _ = run_combine(4, WINDOW + 1, 0.4, links=2, seed=7)
    check_exact(got32, got16, want)


def test_a_16k_token_prefill_per_device():
    line = 4
    got32, got16, want, presence, _ = run_combine(line, PREFILL, 1.5 / line, seed=line)
    check_exact(got32, got16, want)
    for d, traffic in enumerate(presence):
        assert traffic["page_reads"] == 2 * line * (PREFILL // WINDOW), f"device {d}"


def combine_program_cbs(line: int, tokens: int, hidden: int) -> dict[int, int]:
    """{CB index: total size} of core (0, 0)'s program at the first position of a line."""
    context = _C.ops.MeshContext(
        kernels_root=str(ttnn_moe.paths.kernels_dir()),
        device=emu.open_device(device_id=0, grid=(8, 8)).device_limits(),
        rows=line,
        cols=8,
        topology=_C.ops.FabricTopology.Linear,
        max_packet_payload=4096,
        fabric_node_ids=[(0, d) for d in range(line * 8)],
        connect_fabric=lambda *args: [0],
    )
    attributes = COMBINE.Attributes(cluster_axis=0, batch=1, seq=tokens, num_links=4)
    capacity = 1024
    inputs = [
        rm_arg((capacity, hidden), _C.program.DataFormat.Float16_b, 2),
        rm_arg((capacity, 2), _C.program.DataFormat.UInt32, 4),
        rm_arg((1,), _C.program.DataFormat.UInt32, 4),
    ]
    outputs = COMBINE.output_specs(attributes, inputs, context)
    programs = COMBINE.program(attributes, inputs + list(outputs), context).mesh_programs
    program = programs[0][1]
    return {f.buffer_index: cb.total_size for cb in program.cbs for f in cb.format_descriptors}


def rm_arg(shape, dtype, element_bytes):
    rows = math.prod(shape[:-1])
    return _C.program.TensorArg(
        shape=list(shape),
        dtype=dtype,
        layout=_C.program.Layout.ROW_MAJOR,
        address=4096,
        page_size=shape[-1] * element_bytes,
        num_pages=rows,
        is_dram=True,
        alignment=32,
    )


def test_l1_does_not_grow_with_the_tokens_on_a_16_device_line():
    # QUAD 16x8 along axis 0 at DeepSeek-V3's H: the presence rows hold one window of tokens.
    one_window = combine_program_cbs(16, WINDOW, 7168)
    prefill = combine_program_cbs(16, PREFILL, 7168)
    assert prefill == one_window
    assert sum(prefill.values()) <= L1_BUDGET
    # cb_presence: 16 rows of a window and the 8-token alignment slack, and as many page buffers for
    # the merge of the other 3 cores' pages as fit 32 KiB (7 of the 48)
    presence_cb = 3
    row_bytes = (WINDOW + 8) * 4
    assert prefill[presence_cb] == (16 + 32 * 1024 // row_bytes) * row_bytes


def test_a_32_device_line_at_full_h_fits_with_one_token_of_partials():
    # 2 x 32 x 7 pages of 2 KiB would not fit with the rest: one token's block is read at a time.
    partial_cb = 1
    assert combine_program_cbs(32, PREFILL, 7168)[partial_cb] == 32 * 7 * 2048
    assert sum(combine_program_cbs(32, PREFILL, 7168).values()) <= L1_BUDGET
    assert combine_program_cbs(16, PREFILL, 7168)[partial_cb] == 2 * 16 * 7 * 2048
    got32, got16, want, _, _ = run_combine(32, 6, 0.3, seed=32, hidden=7168)
    check_exact(got32, got16, want)
