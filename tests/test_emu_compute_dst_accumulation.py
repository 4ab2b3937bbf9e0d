"""What the FPU's element-wise ops do to DST, on the emulator, against the Wormhole B0 ISA's definitions:

- ELWMUL is `Dst += SrcA * SrcB`: there is no overwriting multiply, and the 0.81.1 LLK issues none (its
  standard path clears nothing before the multiply), so mul_tiles into a DST tile holding a value adds to it;
- ELWADD / ELWSUB are `Dst = SrcA op SrcB`, or `Dst += SrcA op SrcB` when the binary init asked for
  acc_to_dest (the instruction's AddDst bit), with or without a broadcast of SrcB;
- unary_bcast<COL|ROW|SCALAR> is a datacopy (MOVB2D): DST = the tile's column 0, row 0 or element (0, 0)
  spread over the tile, overwriting what DST held;
- the packer clears the DST half it releases (ZEROACC), so a tile reads zero again after release and
  re-acquire.

Each golden is computed in torch from those definitions: a bf16 x bf16 product is exact in fp32, the sum
onto DST is one fp32 rounding, and the packer rounds to the bf16 output once. A kernel that breaks the
acquire / release protocol is an error naming the rule."""

from __future__ import annotations

import pytest
import torch
from emu_programs import TILE_BYTES, cb, core_set, kernel, tilize, untilize
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

COMPUTE = """
#include "api/compute/bcast.h"
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    compute_kernel_hw_startup(0, 0, 16);
    cb_wait_front(0, IN_TILES);
    cb_reserve_back(16, OUT_TILES);
    BODY
    cb_push_back(16, OUT_TILES);
    cb_pop_front(0, IN_TILES);
}
"""


def section(*ops: str, pack: int = 1) -> str:
    """One DST section: acquire, the ops, then DST tiles 0 .. pack - 1 packed in order, release."""
    packs = "".join(f"pack_tile({i}, 16);" for i in range(pack))
    return f"tile_regs_acquire(); {' '.join(ops)} tile_regs_commit(); tile_regs_wait(); {packs} tile_regs_release();"


def run(tiles: list[torch.Tensor], body: str, out_tiles: int, fp32_dest: bool = True, full_sync: bool = False):
    """tiles (each 32x32 bf16) -> CB 0 tiles 0.. ; runs `body`; returns the out_tiles bf16 tiles packed to CB 16."""
    dev = emu.open_device()
    n = len(tiles)
    src = dev.allocate(n * TILE_BYTES, TILE_BYTES)
    dst = dev.allocate(out_tiles * TILE_BYTES, TILE_BYTES)
    dev.write(src, TILE_BYTES, tilize(torch.cat(tiles)))
    cores, core = core_set(0, 0), pd.CoreCoord(0, 0)
    ct = emu.tensor_accessor_args(TILE_BYTES, True)
    compute = pd.KernelDescriptor(
        kernel_source=COMPUTE,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=cores,
        defines=[("IN_TILES", str(n)), ("OUT_TILES", str(out_tiles)), ("BODY", body)],
        config=pd.ComputeConfigDescriptor(fp32_dest_acc_en=fp32_dest, dst_full_sync_en=full_sync),
    )
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_two_cbs.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                ct,
                [("cb_first", 0), ("cb_second", 1)],
                [(core, [src, n, 0])],
            ),  # fmt: skip
            compute,
            kernel(
                "writer_two_cbs.cpp",
                cores,
                pd.WriterConfigDescriptor(),
                ct,
                [("cb_first", 16), ("cb_second", 17)],
                [(core, [dst, out_tiles, 0])],
            ),  # fmt: skip
        ],
        cbs=[
            cb(0, n, TILE_BYTES, cores),
            cb(1, 1, TILE_BYTES, cores),
            cb(16, out_tiles, TILE_BYTES, cores),
            cb(17, 1, TILE_BYTES, cores),
        ],  # fmt: skip
    )
    emu.run_program(dev, program)
    out = untilize(dev.read(dst, TILE_BYTES, out_tiles * TILE_BYTES), 32 * out_tiles, 32)
    return [out[32 * i : 32 * i + 32] for i in range(out_tiles)]


def operands(n: int, seed: int) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(32, 32, generator=g) * 2).bfloat16().float() for _ in range(n)]


def packed(x: torch.Tensor) -> torch.Tensor:
    """What the packer writes to a bf16 CB: the fp32 DST value rounded once."""
    return x.bfloat16().float()


COL = lambda b: b[:, 0:1].expand(32, 32)  # noqa: E731 BroadcastType::COL: column 0 for every column
ROW = lambda b: b[0:1, :].expand(32, 32)  # noqa: E731 BroadcastType::ROW: row 0 for every row
SCALAR = lambda b: b[0:1, 0:1].expand(32, 32)  # noqa: E731


def test_mul_into_a_dst_tile_holding_a_value_adds_the_product_to_it():
    x, a, b = operands(3, 1)
    (got,) = run([x, a, b], section("copy_init(0); copy_tile(0, 0, 0); mul_init(0, 0); mul_tiles(0, 0, 1, 2, 0);"), 1)
    assert torch.equal(got, packed(x + a * b))
    assert not torch.equal(got, packed(a * b))


def test_mul_into_a_fresh_dst_tile_is_the_product():
    a, b = operands(2, 2)
    (got,) = run([a, b], section("mul_init(0, 0); mul_tiles(0, 0, 0, 1, 0);"), 1)
    assert torch.equal(got, packed(a * b))


@pytest.mark.parametrize("fp32_dest", [True, False])
def test_consecutive_multiplies_into_one_tile_sum_their_products(fp32_dest):
    a, b, c, d = operands(4, 3)
    (got,) = run([a, b, c, d], section("mul_init(0, 0); mul_tiles(0, 0, 0, 1, 0); mul_tiles(0, 0, 2, 3, 0);"), 1,
                 fp32_dest=fp32_dest)  # fmt: skip
    # A 16-bit DST holds bf16: the first product is rounded there before the second is added.
    first = a * b if fp32_dest else packed(a * b)
    assert torch.equal(got, packed(first + c * d))


@pytest.mark.parametrize(
    "call, bcast",
    [("mul_tiles_bcast_cols", COL), ("mul_tiles_bcast_rows", ROW), ("mul_tiles_bcast_scalar", SCALAR)],
)
def test_broadcast_multiplies_accumulate_too(call, bcast):
    a, b, c, d = operands(4, 4)
    ops = f"mul_bcast_cols_init(0, 0); {call}(0, 0, 0, 1, 0); {call}(0, 0, 2, 3, 0);"
    (got,) = run([a, b, c, d], section(ops), 1)
    assert torch.equal(got, packed(a * bcast(b) + c * bcast(d)))


@pytest.mark.parametrize("full_sync", [False, True])
def test_dst_reads_zero_after_release_and_reacquire(full_sync):
    a, b, c, d = operands(4, 5)
    mul = "mul_init(0, 0); mul_tiles(0, 0, {}, {}, 0);"
    # Three sections: in half-sync they alternate between the two DST halves, each cleared when released.
    body = section(mul.format(0, 1)) + section(mul.format(2, 3)) + section(mul.format(0, 3))
    got = run([a, b, c, d], body, 3, full_sync=full_sync)
    assert torch.equal(got[0], packed(a * b))
    assert torch.equal(got[1], packed(c * d))
    assert torch.equal(got[2], packed(a * d))


@pytest.mark.parametrize("op, fn", [("add", torch.add), ("sub", torch.sub)])
def test_add_and_sub_overwrite_dst_without_acc_to_dest(op, fn):
    x, a, b = operands(3, 6)
    ops = f"copy_init(0); copy_tile(0, 0, 0); {op}_init(0, 0); {op}_tiles(0, 0, 1, 2, 0);"
    (got,) = run([x, a, b], section(ops), 1)
    assert torch.equal(got, packed(fn(a, b)))


@pytest.mark.parametrize("op, fn", [("add", torch.add), ("sub", torch.sub)])
def test_add_and_sub_with_acc_to_dest_add_their_result_onto_dst(op, fn):
    x, a, b = operands(3, 7)
    ops = f"copy_init(0); copy_tile(0, 0, 0); {op}_init(0, 0, true); {op}_tiles(0, 0, 1, 2, 0);"
    (got,) = run([x, a, b], section(ops), 1)
    assert torch.equal(got, packed(x + fn(a, b)))


@pytest.mark.parametrize(
    "llk_op, call, fn",
    [("ELWADD", "add_tiles_bcast_cols", torch.add), ("ELWSUB", "sub_tiles_bcast_cols", torch.sub)],
)
def test_broadcast_add_and_sub_honour_acc_to_dest(llk_op, call, fn):
    x, a, b = operands(3, 8)
    init = f"llk_math_eltwise_binary_init<EltwiseBinaryType::{llk_op}, BroadcastType::COL, MATH_FIDELITY>(0, 0, 1);"
    (got,) = run([x, a, b], section(f"copy_init(0); copy_tile(0, 0, 0); {init} {call}(0, 0, 1, 2, 0);"), 1)
    assert torch.equal(got, packed(x + fn(a, COL(b))))


def test_bcast_init_turns_acc_to_dest_off():
    x, a, b = operands(3, 9)
    ops = (
        "add_init(0, 0, true); copy_init(0); copy_tile(0, 0, 0);"
        "bcast_init<EltwiseBinaryType::ELWADD, BroadcastType::COL>(0, 0); add_tiles_bcast_cols(0, 0, 1, 2, 0);"
    )
    (got,) = run([x, a, b], section(ops), 1)
    assert torch.equal(got, packed(a + COL(b)))


def test_the_fused_reduce_init_multiplies_and_sums_every_expert_into_one_tile():
    """deepseek_moe_fast_reduce_nc_fused's compute init and loop: sum_e act[e] * score column of e."""
    tiles = operands(6, 10)
    acts, scores = tiles[:3], tiles[3:]
    init = (
        "bcast_init<EltwiseBinaryType::ELWMUL, BroadcastType::COL>(0, 0);"
        "llk_math_eltwise_binary_init<EltwiseBinaryType::ELWMUL, BroadcastType::COL, MATH_FIDELITY>(0, 0, 1);"
    )
    macs = "".join(f"mul_tiles_bcast_cols(0, 0, {e}, {3 + e}, 0);" for e in range(3))
    (got,) = run(tiles, section(init + macs), 1)
    want = torch.zeros(32, 32)
    for act, score in zip(acts, scores):
        want = want + act * COL(score)
    assert torch.equal(got, packed(want))


def test_a_kernel_that_forgets_to_release_dst_is_an_error_naming_the_rule():
    a, b = operands(2, 11)
    forgot = "tile_regs_acquire(); mul_tiles(0, 0, 0, 1, 0); tile_regs_commit(); tile_regs_wait(); pack_tile(0, 16);"
    with pytest.raises(emu.EmulatorError, match="tile_regs_acquire: DST must be released"):
        run([a, b], forgot + section("mul_tiles(0, 0, 0, 1, 0);", pack=0), 1)


@pytest.mark.parametrize("kind, bcast", [("COL", COL), ("ROW", ROW), ("SCALAR", SCALAR)])
def test_unary_bcast_overwrites_dst_with_the_broadcast_tile(kind, bcast):
    x, b = operands(2, 5)
    ops = (
        f"copy_init(0); copy_tile(0, 0, 0); unary_bcast_init<BroadcastType::{kind}>(0); "
        f"unary_bcast<BroadcastType::{kind}>(0, 1, 0);"
    )
    (got,) = run([x, b], section(ops), 1)
    assert torch.equal(got, packed(bcast(b)))
