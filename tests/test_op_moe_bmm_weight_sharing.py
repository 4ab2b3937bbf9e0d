"""moe_bmm sharing weight blocks between the row blocks of one expert on the emulator.

An expert with more than 8 active row tiles has several row blocks, each needing all of the expert's
weight columns. The cores computing the same columns in different row blocks share them: one reads
each weight block from DRAM and multicasts it to the others. The DeepSeek layer's shared expert at
prefill is the case it is for (one expert taking every row, few columns): every weight tile then
leaves DRAM once. Checked: the output bit for bit equal to one core computing everything (nothing
shared) and to 6 cores (mostly solo reads), and against the fp32 golden; weight tiles read once per
weight round; the L1 bytes the multicasts write.
"""

from __future__ import annotations

import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_devices_by_name_fixture
from test_op_moe_bmm import (
    GRIDS,
    PCC_BF16,
    check_grouped,
    check_work_counters,
    check_x_reads,
    counts_column,
    make_grouped,
    row_tiles,
    segments_per_core,
    w_reads,
)
from test_op_moe_bmm_addend import one_expert_on_every_row
from test_op_moe_bmm_swiglu import fused_weight, gate_up_weights, swiglu_golden
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from ttnn_moe import golden

GRIDS = {**GRIDS, "13x10": (13, 10)}  # and a Blackhole-sized grid: 130 cores, 13 per row
devices = emu_devices_by_name_fixture(GRIDS)


def same_bits(a, b):
    return torch.equal(a.contiguous().view(torch.int16), b.contiguous().view(torch.int16))


def test_shared_expert_prefill_reads_each_weight_tile_once(devices):
    """The shared expert's w1/w3 at prefill, scaled: one expert taking 2048 rows (64 row tiles, 8 row
    blocks), 8 output columns, SwiGLU. On 64 cores each core computes one column of one row block; the
    8 cores of a column (one grid column of the 8x8 grid) form a weight round, so each gate and up tile
    is read from DRAM once, and the output is bitwise the one core's (and 6 cores')."""
    rows, kd, n = 2048, 64, 256
    kt, nt = kd // 32, n // 32
    w_gate, w_up = gate_up_weights(1, kd, n, seed=3)
    outputs = {}
    for grid in ("8x8", "2x3", "1x1"):
        device = devices[grid]
        x, _, _, (x_d, _, counts_d, offsets_d) = one_expert_on_every_row(rows, kd, 32, 2, device)
        w_d = fused_weight(w_gate, w_up, ttnn.bfloat16, device)
        out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, activation="swiglu")
        outputs[grid] = ttnn.to_torch(out)
        traffic = ttnn.last_run_counters()["dram_buffers"][w_d.to_arg().address]
        segments = segments_per_core([rows], nt, GRIDS[grid][0] * GRIDS[grid][1], row_tiles(rows))
        solo, rounds = w_reads(segments)
        assert traffic["page_reads"] == 2 * kt * (sum(solo) + sum(cols for _, _, cols, _ in rounds))
        check_x_reads(x_d, [rows], kd, n, GRIDS[grid], halves=2)
        if grid == "8x8":
            assert not solo and sorted(rounds.values()) == [8] * nt  # 8 rounds of 8 cores
            assert traffic["page_reads"] == traffic["unique_pages_read"] == 2 * kt * nt
    assert same_bits(outputs["8x8"], outputs["1x1"]) and same_bits(outputs["2x3"], outputs["1x1"])
    expected = swiglu_golden(x, w_gate, w_up, [rows], [0])
    assert_pcc(expected, outputs["8x8"].float(), PCC_BF16, name="shared expert prefill, SwiGLU")


def test_experts_of_several_row_blocks_share_their_weights(devices):
    """Two experts of 300 and 530 rows (10 and 17 row tiles: 2 and 3 row blocks, the last ones partial)
    and a small one, plain projection: weight tiles read once per weight round of the op's split (on 64
    cores some rounds have receivers; on 6 most shares straddle two row blocks and read alone); the
    output bitwise the one core's on both, and the golden's."""
    counts, kd, n = [300, 5, 530], 96, 512
    results = {}
    for grid in ("8x8", "2x3", "1x1"):
        x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=9, device=devices[grid])
        out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d)
        results[grid] = ttnn.to_torch(out)
        check_work_counters(w_d, counts, kd, n, GRIDS[grid], x_d)
        check_x_reads(x_d, counts, kd, n, GRIDS[grid])
        check_grouped(out, x, w, counts, offsets, PCC_BF16)
        segments = segments_per_core(counts, n // 32, GRIDS[grid][0] * GRIDS[grid][1], row_tiles(x.shape[0]))
        if grid == "8x8":
            assert max(w_reads(segments)[1].values()) > 1  # some weight round has receivers
    rows = torch.cat([torch.arange(o, o + 32 * row_tiles(c)) for o, c in zip(offsets, counts)])
    for grid in ("8x8", "2x3"):
        assert same_bits(results[grid][rows], results["1x1"][rows]), grid


def test_a_blackhole_sized_grid_shares_weights_bit_for_bit(devices):
    """130 cores in rows of 13: the shared expert's prefill shape (SwiGLU, 2048 rows, 8 columns: row
    blocks of 2 row tiles, since blocks of 8 or 4 would leave cores without a unit) gives the one
    core's output bit for bit and reads each weight tile once per weight round."""
    rows, kd, n = 2048, 64, 256
    w_gate, w_up = gate_up_weights(1, kd, n, seed=6)
    outputs = {}
    for grid in ("13x10", "1x1"):
        device = devices[grid]
        x, _, _, (x_d, _, counts_d, offsets_d) = one_expert_on_every_row(rows, kd, 32, 7, device)
        w_d = fused_weight(w_gate, w_up, ttnn.bfloat16, device)
        outputs[grid] = ttnn.to_torch(
            ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, activation="swiglu")
        )
        segments = segments_per_core([rows], n // 32, GRIDS[grid][0] * GRIDS[grid][1], row_tiles(rows))
        solo, rounds = w_reads(segments)
        traffic = ttnn.last_run_counters()["dram_buffers"][w_d.to_arg().address]
        assert traffic["page_reads"] == 2 * (kd // 32) * (sum(solo) + sum(cols for _, _, cols, _ in rounds))
        check_x_reads(x_d, [rows], kd, n, GRIDS[grid], halves=2)
    assert same_bits(outputs["13x10"], outputs["1x1"])
    assert_pcc(swiglu_golden(x, w_gate, w_up, [rows], [0]), outputs["13x10"].float(), PCC_BF16, name="13x10")


def test_shared_down_projection_at_prefill_with_a_row_major_addend(devices):
    """The shared expert's w2 at prefill, scaled: 1024 rows (4 row blocks), Kd 64, 16 columns, the routed
    share as a ROW_MAJOR addend; weights shared between the row blocks, output bitwise the one core's."""
    rows, kd, n = 1024, 64, 512
    addend = (torch.randn(rows, n, generator=torch.Generator().manual_seed(5)) * 2).bfloat16()
    results = {}
    for grid in ("8x8", "1x1"):
        device = devices[grid]
        x, w, _, (x_d, w_d, counts_d, offsets_d) = one_expert_on_every_row(rows, kd, n, 4, device)
        addend_d = ttnn.from_torch(addend, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
        results[grid] = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, addend=addend_d))
        if grid == "8x8":
            check_work_counters(w_d, [rows], kd, n, GRIDS[grid], x_d)
    assert same_bits(results["8x8"], results["1x1"])
    expected = golden.moe_bmm(x, w, counts_column([rows]), expert_offsets=counts_column([0])) + addend.float()
    assert_pcc(expected, results["8x8"].float(), PCC_BF16, name="shared down projection + RM addend")
