"""moe_compute's weight layout (ttnn_moe.emu.ttmetal.moe_compute_weights: the host forms of
prepare_w0_w1_tensor_for_moe_compute / prepare_w2_tensor_for_moe_compute, placed one shard per DRAM bank) read
by the wheel's unmodified dm0.cpp on the 12-core Wormhole ring.

A stand-in for the ring's compute kernel (tests/kernels/emu/ring_weight_sink.cpp) hands dm0 the token counts and
stores every block dm0 delivers in c_3. The golden is the block stream the compute kernel consumes, written here
tile by tile from the kernels' documented geometry (moe_ring_common.h): per expert and chunk, the core's W0/W1
blocks (rows [W0 k c, W1 k c, W0 k c+1, W1 k c+1] of 7 K rows; an odd last column as rows of two K rows) then its W2
blocks (rows of 4 output tiles of its hidden slice, K in the ring's delivery order: its own intermediate columns,
then those of the core before it, ...). Blocks are compared as bfloat4_b tile bytes, exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_programs import KERNELS
from ttmetal_moe_compute_cases import GRID
from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.pages import to_pages
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal import moe_compute as mc
from ttnn_moe.emu.ttmetal import moe_compute_weights as mw

pytestmark = pytest.mark.usefixtures("wheel")
BFP4_TILE = 576
KERNEL_DM0 = "ttnn/cpp/ttnn/operations/experimental/ccl/moe_compute/device/kernels/dm0.cpp"


def expected_w0_w1_tile(w0, w1, ht, nt, n, core, block, pos):
    own = mw.shard_tiles(nt, core, n)
    offset = sum(mw.shard_tiles(nt, c, n) for c in range(core))
    widest = -(-nt // n)
    stride = max(widest + widest % 2, 4)
    stored = own if widest < stride else stride
    per_col = -(-ht // 7)
    row, col = divmod(pos, 4)
    if block < (stored // 2) * per_col:
        pair, kb = divmod(block, per_col)
        k, column = 7 * kb + row, offset + 2 * pair + col // 2
    else:
        k, column = 14 * (block - (stored // 2) * per_col) + 2 * row + col // 2, offset + stored - 1
    if k >= ht or column >= offset + own:
        return torch.zeros(32, 32)
    return (w0, w1)[col % 2][32 * k : 32 * k + 32, 32 * column : 32 * column + 32]


def expected_w2_tile(w2, ht, nt, n, core, block, pos):
    order = []
    for step in range(n):
        src = (core - step) % n
        start = sum(mw.shard_tiles(nt, c, n) for c in range(src))
        order += range(start, start + mw.shard_tiles(nt, src, n))
    it, kb = divmod(block, -(-nt // 7))
    row, col = divmod(pos, 4)
    kpos, out = 7 * kb + row, 4 * it + col
    if kpos >= nt or out >= mw.w2_shard_tiles(ht, core, nt, n):
        return torch.zeros(32, 32)
    k, h = order[kpos], sum(mw.w2_shard_tiles(ht, c, nt, n) for c in range(core)) + out
    return w2[32 * k : 32 * k + 32, 32 * h : 32 * h + 32]


def bfp4_bytes(tiles: list[torch.Tensor]) -> np.ndarray:
    return to_pages(torch.cat(tiles).float(), ttnn.bfloat4_b, ttnn.TILE_LAYOUT)


@pytest.mark.parametrize(
    "hidden, intermediate, counts",
    [
        (512, 384, [40, 5]),  # 12 intermediate tiles: one column per core (half block-columns), compact
        (512, 2048, [3, 0, 33]),  # DeepSeek's 64 intermediate tiles: 6 or 5 columns per core, a uniform stride of 6
        (448, 640, [1]),  # 20 tiles: 2 or 1 columns per core, compact; 14 hidden tiles (2 blocks per column)
    ],
)
def test_dm0_streams_the_prepared_weights_in_the_order_compute_consumes_them(hidden, intermediate, counts):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 1), grid=GRID)
    device, chip = mesh.get_devices()[0], mesh.chips[0]
    experts = len(counts)
    gen = torch.Generator().manual_seed(hidden + intermediate)
    w0, w1 = (torch.randn(1, experts, hidden, intermediate, generator=gen) for _ in range(2))
    w2 = torch.randn(1, experts, intermediate, hidden, generator=gen)
    geom = mw.RingGeometry(hidden // 32, intermediate // 32)
    ring = mc.dram_bank_worker_cores(device)
    banks = mc.ring_banks(device, ring)  # ring position -> bank
    w0_w1 = mw.place_shards(chip, mw.shard_bytes(mw.prepare_w0_w1(w0, w1)), banks)
    w2_addr = mw.place_shards(chip, mw.shard_bytes(mw.prepare_w2(w2)), banks)
    blocks = [geom.w0_w1_core_blocks(r) + geom.w2_blocks_per_expert for r in range(12)]
    chunks = sum(-(-c // 32) for c in counts)
    per_core = chunks * max(blocks)
    block_bytes = geom.tiles_per_block * BFP4_TILE
    out = chip.allocate(12 * per_core * block_bytes, block_bytes)

    cores = ccl.core_range_set(ring)
    named = [
        ("has_bias", 0), ("hidden_tiles", geom.ht), ("intermediate_tiles", geom.nt), ("num_cores", 12),
        ("num_experts", experts), ("num_shared_experts", 0), ("shared_expert_tp_factor", 1),
        ("tiles_per_txn", geom.tiles_per_txn), ("layer_id", 0), ("num_banks", 12),
        ("w2_pages_per_ring_core_total", experts * geom.w2_blocks_per_expert * geom.tiles_per_block),
        ("metadata_ready_semaphore_id", 0), ("per_expert_total_tokens_cb_id", 2), ("tokens_per_chunk", 32),
    ]  # fmt: skip
    dm0_rt, sink_rt = [], []
    for pos, bank in enumerate(banks):
        neighbor = device.worker_core_from_logical_core(ring[banks[(pos + 1) % 12]])
        dm0_rt.append((ring[bank], [0, bank & 3, w0_w1, w2_addr, 0, 1, pos, neighbor.x, neighbor.y, *banks]))
        sink_rt.append((ring[bank], [out, pos * per_core, geom.w0_w1_core_blocks(pos), geom.w2_blocks_per_expert,
                                     *counts]))  # fmt: skip
    accessor = list(_emu.tensor_accessor_args(BFP4_TILE, True))
    program = pd.ProgramDescriptor(
        kernels=[
            pd.KernelDescriptor(
                kernel_source=ccl.kernel_path(KERNEL_DM0), core_ranges=cores, compile_time_args=accessor * 3,
                named_compile_time_args=named, runtime_args=dm0_rt,
                config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_1, pd.NOC.RISCV_0_default),
            ),
            pd.KernelDescriptor(
                kernel_source=str(KERNELS / "ring_weight_sink.cpp"), core_ranges=cores,
                named_compile_time_args=[("metadata_ready_semaphore_id", 0), ("per_expert_total_tokens_cb_id", 2),
                                         ("num_experts", experts), ("tiles_per_block", geom.tiles_per_block),
                                         ("tile_bytes", BFP4_TILE)],
                runtime_args=sink_rt,
                config=pd.DataMovementConfigDescriptor(pd.DataMovementProcessor.RISCV_0, pd.NOC.RISCV_1_default),
            ),
        ],
        semaphores=[pd.SemaphoreDescriptor(i, pd.CoreType.WORKER, cores, 0) for i in range(2)],
        cbs=[
            ccl.cb(0, 2048, 2048, cores, pd.DataFormat.Float16_b),
            ccl.cb(2, 16, 16, cores, pd.DataFormat.UInt32),
            ccl.cb(3, 3 * block_bytes, BFP4_TILE, cores, pd.DataFormat.Bfp4_b),
            ccl.cb(6, 2048, 2048, cores, pd.DataFormat.Float16_b),
        ],
    )  # fmt: skip
    ccl.use_kernel_includes()
    _emu.run_program(chip, program)
    got = chip.read(out, block_bytes, 12 * per_core * block_bytes).reshape(12, per_core, block_bytes)
    for pos in range(12):
        tiles = []
        for e, count in enumerate(counts):
            for _ in range(-(-count // 32)):
                for b in range(geom.w0_w1_core_blocks(pos)):
                    tiles += [expected_w0_w1_tile(w0[0, e], w1[0, e], geom.ht, geom.nt, 12, pos, b, p)
                              for p in range(geom.tiles_per_block)]  # fmt: skip
                for b in range(geom.w2_blocks_per_expert):
                    tiles += [expected_w2_tile(w2[0, e], geom.ht, geom.nt, 12, pos, b, p)
                              for p in range(geom.tiles_per_block)]  # fmt: skip
        want = bfp4_bytes(tiles)
        assert np.array_equal(got[pos].reshape(-1)[: want.size], want), f"ring position {pos}"


@pytest.mark.parametrize("hidden, intermediate", [(448, 640), (512, 384), (512, 2048)])
def test_experts_prepared_one_at_a_time_give_the_shards_of_the_whole_layer(hidden, intermediate):
    """The per-expert path (what a full-size layer is placed with) against the host forms over all experts at once,
    converted to bfloat4_b in one piece: the same bytes in every W0/W1 and W2 shard."""
    gen = torch.Generator().manual_seed(hidden + intermediate)
    experts = 3
    w0, w1 = (torch.randn(1, experts, hidden, intermediate, generator=gen).bfloat16() for _ in range(2))
    w2 = torch.randn(1, experts, intermediate, hidden, generator=gen).bfloat16()
    prepared = mw.prepare_experts(((w0[0, e], w1[0, e], w2[0, e]) for e in range(experts)), 12)
    assert prepared.experts == experts
    assert prepared.geometry == mw.RingGeometry(hidden // 32, intermediate // 32)
    assert prepared.w0_w1_shards == mw.shard_bytes(mw.prepare_w0_w1(w0.float(), w1.float()))
    assert prepared.w2_shards == mw.shard_bytes(mw.prepare_w2(w2.float()))


def test_a_misshapen_expert_is_refused_naming_it():
    w = torch.zeros(512, 384)
    with pytest.raises(ValueError, match=r"expert 1's w2 is \[512, 384\], expected \[384, 512\]"):
        mw.prepare_experts([(w, w, w.T), (w, w, w)], 12)
    with pytest.raises(ValueError, match="no experts to prepare"):
        mw.prepare_experts([], 12)
