"""pack_untilize_dest on the emulator (the packer writing DST tiles as row-major rows, as tt-metal's permute
kernels use it), against torch: blocks of tiles land in their columns of the output rows exactly; a block
that does not fit the rows is refused with its sizes."""

from __future__ import annotations

import pytest
import torch
from emu_programs import TILE_BYTES, cb, core_set, kernel, tilize
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd


def run_pack_untilize(m: torch.Tensor, block_rt: int, block_ct: int, full_ct: int) -> torch.Tensor:
    """m (32 block_rt, 32 block_ct * blocks) bf16 -> CB 0 block by block -> pack_untilize_dest into rows of
    full_ct tiles -> those rows read back."""
    blocks = m.shape[1] // (32 * block_ct)
    dev = emu.open_device()
    # CB 0 receives each column block's tiles row-major: the tiles of columns [c*ct, (c+1)*ct) of every tile row.
    column_blocks = [m[:, 32 * block_ct * c : 32 * block_ct * (c + 1)] for c in range(blocks)]
    ordered = torch.cat([torch.from_numpy(tilize(b)) for b in column_blocks]).numpy()
    in_pages, out_pages = block_rt * block_ct * blocks, block_rt * full_ct
    src = dev.allocate(in_pages * TILE_BYTES, TILE_BYTES)
    dst = dev.allocate(out_pages * TILE_BYTES, TILE_BYTES)
    dev.write(src, TILE_BYTES, ordered)
    cores = core_set(0, 0)
    core = pd.CoreCoord(0, 0)
    ct = emu.tensor_accessor_args(TILE_BYTES, True)
    named = [("block_rt", block_rt), ("block_ct", block_ct), ("full_ct", full_ct), ("blocks", blocks)]
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_two_cbs.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                ct,
                [("cb_first", 0), ("cb_second", 1)],
                [(core, [src, in_pages, 0])],
            ),
            kernel("compute_pack_untilize.cpp", cores, pd.ComputeConfigDescriptor(), (), named, []),
            kernel(
                "writer_two_cbs.cpp",
                cores,
                pd.WriterConfigDescriptor(),
                ct,
                [("cb_first", 16), ("cb_second", 17)],
                [(core, [dst, out_pages, 0])],
            ),
        ],
        cbs=[
            cb(0, in_pages, TILE_BYTES, cores),
            cb(1, 1, TILE_BYTES, cores),
            cb(16, out_pages, TILE_BYTES, cores),
            cb(17, 1, TILE_BYTES, cores),
        ],
    )
    emu.run_program(dev, program)
    raw = dev.read(dst, TILE_BYTES, out_pages * TILE_BYTES)
    return torch.from_numpy(raw.copy()).view(torch.bfloat16).reshape(32 * block_rt, 32 * full_ct).float()


@pytest.mark.parametrize(("block_rt", "block_ct", "full_ct"), [(1, 1, 1), (2, 2, 4), (1, 1, 3)])
def test_pack_untilize_dest_writes_each_block_into_its_columns(block_rt, block_ct, full_ct):
    m = torch.randn(32 * block_rt, 32 * full_ct, generator=torch.Generator().manual_seed(full_ct)).bfloat16()
    got = run_pack_untilize(m, block_rt, block_ct, full_ct)
    assert torch.equal(got, m.float())


def test_pack_untilize_dest_refuses_a_block_past_the_row_end():
    m = torch.zeros(32, 96).bfloat16()  # three column blocks of one tile into rows of two tiles
    with pytest.raises(emu.EmulatorError, match="column block 2 does not fit rows of 2 tiles"):
        run_pack_untilize(m, 1, 1, 2)
