"""TensorAccessor over an ND-sharded L1 tensor in the emulator (tt-metal 0.81.1 args: config, page size, rank,
bank count, tensor and shard shapes in pages, bank NOC coordinates two to a word): page -> its shard (row-major
over the grid of shards) and its place in the shard -> the bank holding that shard (round-robin, or runs of
shards per bank when shard-contiguous) -> that bank's core at base + (shard in bank * shard pages + place) pages.
"""

from __future__ import annotations

import numpy as np
import pytest
from emu_programs import cb, core_set, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

PAGE = 2048
BASE = 0x40000
SHARDED = 1
SHARD_CONTIGUOUS = 1 << 31


def accessor_args(tensor_pages, shard_pages, banks, contiguous=False):
    coords = [(x << 8) | y for x, y in banks]
    packed = [coords[i] | ((coords[i + 1] << 16) if i + 1 < len(coords) else 0) for i in range(0, len(coords), 2)]
    num_banks = len(banks) | (SHARD_CONTIGUOUS if contiguous else 0)
    return [SHARDED, PAGE, len(tensor_pages), num_banks, *tensor_pages, *shard_pages, *packed]


def page_addresses(ct_args, pages):
    dev = emu.open_device()
    out = dev.allocate(256, 256)
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "sharded_page_addresses.cpp",
                cores,
                pd.WriterConfigDescriptor(),
                compile_time_args=ct_args,
                runtime_args=[(pd.CoreCoord(0, 0), [out, BASE, pages])],
            )
        ],  # fmt: skip
        cbs=[cb(0, 1, 256, cores)],
    )
    emu.run_program(dev, program)
    words = dev.read(out, 256, 256).view(np.uint32)
    return [tuple(int(v) for v in words[3 * p : 3 * p + 3]) for p in range(pages)]


BANKS = [(1, 2), (2, 2), (3, 2)]


def test_width_sharded_pages_go_to_their_shards_core_round_robin():
    # 1 x 12 pages in shards of 1 x 2: shard s on bank s % 3, as that bank's shard s // 3.
    got = page_addresses(accessor_args([1, 12], [1, 2], BANKS), 12)
    want = []
    for p in range(12):
        shard, place = p // 2, p % 2
        x, y = BANKS[shard % 3]
        want.append((x, y, BASE + ((shard // 3) * 2 + place) * PAGE))
    assert got == want


def test_a_2d_grid_of_shards_row_major_and_shard_contiguous_banks():
    # 4 x 4 pages in shards of 2 x 2: shards (0,0) (0,1) (1,0) (1,1) numbered 0..3; two banks, two shards each.
    got = page_addresses(accessor_args([4, 4], [2, 2], BANKS[:2], contiguous=True), 16)
    want = []
    for p in range(16):
        r, c = divmod(p, 4)
        shard, place = (r // 2) * 2 + c // 2, (r % 2) * 2 + c % 2
        x, y = BANKS[shard // 2]
        want.append((x, y, BASE + ((shard % 2) * 4 + place) * PAGE))
    assert got == want


def test_a_page_past_the_tensor_is_an_error():
    with pytest.raises(emu.EmulatorError, match="page id past the end of the sharded tensor"):
        page_addresses(accessor_args([1, 4], [1, 2], BANKS[:2]), 5)
