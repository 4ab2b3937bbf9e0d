"""The emulator's ComputeEngine, driven through the in-memory CB harness `_EngineHarness`.

Each test scripts the calls a compute kernel would make (acquire, math, commit, wait, pack, release) and
checks the packed output against torch/numpy, or checks the error a misuse raises."""

import numpy as np
import pytest
import torch
import ttnn_moe_numerics_testing as numerics_testing
from ttnn_moe._C import numerics
from ttnn_moe._C import program as pd
from ttnn_moe._C.program import DataFormat

F32, BF16, BFP8, U32, U16 = (
    DataFormat.Float32,
    DataFormat.Float16_b,
    DataFormat.Bfp8_b,
    DataFormat.UInt32,
    DataFormat.UInt16,
)
# The engine raises EmuError, which reaches Python as a RuntimeError (the emulator module may register a
# RuntimeError subclass for it).
EMU_ERRORS = RuntimeError


def harness(cbs, fp32_dest=False, full_sync=False):
    config = pd.ComputeConfigDescriptor(fp32_dest_acc_en=fp32_dest, dst_full_sync_en=full_sync)
    return numerics_testing._EngineHarness(config, cbs)


def tiles_of(matrix: np.ndarray, fmt=F32) -> np.ndarray:
    return numerics.tilize(fmt, np.ascontiguousarray(matrix, dtype=np.float32))


def read_matrix(h, cb, fmt, rows, cols, tiles=None):
    data = h.read(cb)
    if tiles is not None:
        data = data[: tiles * numerics_testing.tile_bytes(fmt)]
    return numerics.untilize(fmt, data, rows, cols)


def pcc(a, b):
    return np.corrcoef(np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel())[0, 1]


def sequential_fp32_matmul(a, b, c=None):
    """c + a @ b in float32, adding the 32 products of each element one by one in k order (no FMA)."""
    c = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32) if c is None else c.copy()
    for k in range(a.shape[1]):
        c = c + a[:, k : k + 1] * b[k : k + 1, :]
    return c


def run_one(h, math, pack_cb, dst=0):
    """acquire -> math() -> commit -> wait -> pack dst into pack_cb -> release."""
    h.tile_regs_acquire()
    math()
    h.tile_regs_commit()
    h.tile_regs_wait()
    h.pack_tile(dst, pack_cb)
    h.tile_regs_release()


@pytest.fixture
def rng():
    return np.random.default_rng(12)


# ---- matmul ---------------------------------------------------------------------------------------


def test_matmul_tiles_fp32_is_sequential_fp32_and_matches_torch(rng):
    a = rng.standard_normal((32, 32)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    h = harness({0: (F32, 1), 1: (F32, 1), 16: (F32, 1)}, fp32_dest=True)
    h.load(0, tiles_of(a))
    h.load(1, tiles_of(b))
    run_one(h, lambda: h.matmul_tiles(0, 1, 0, 0, 0), 16)
    out = read_matrix(h, 16, F32, 32, 32)
    np.testing.assert_array_equal(out, sequential_fp32_matmul(a, b))
    golden = torch.from_numpy(a).double() @ torch.from_numpy(b).double()
    assert pcc(out, golden) > 0.999999
    assert np.abs(out - golden.numpy()).max() < 1e-4
    assert h.tile_matmuls == 1 and h.tiles_packed == 1


def test_matmul_tiles_transpose_b_and_accumulation_over_k(rng):
    kt = 3
    a = rng.standard_normal((32, 32 * kt)).astype(np.float32)
    b_t = rng.standard_normal((32, 32 * kt)).astype(np.float32)  # B^T stored: (N, K)
    h = harness({0: (F32, kt), 1: (F32, kt), 16: (F32, 2)}, fp32_dest=True)
    h.load(0, tiles_of(a))
    h.load(1, tiles_of(b_t))

    def math():
        for k in range(kt):
            h.matmul_tiles(0, 1, k, k, 0, transpose_b=True)

    run_one(h, math, 16)
    # A second round must start from a zeroed DST (acquire clears it), not accumulate onto the first.
    run_one(h, math, 16)
    first, second = read_matrix(h, 16, F32, 32, 64).reshape(32, 2, 32).transpose(1, 0, 2)
    golden = torch.from_numpy(a).double() @ torch.from_numpy(b_t).double().T
    assert pcc(first, golden) > 0.999999
    np.testing.assert_array_equal(first, second)
    assert h.tile_matmuls == 2 * kt


def test_matmul_block_tile_indexing_matches_block_matmul(rng):
    rt, ct, kt = 2, 3, 2
    a = rng.standard_normal((32 * rt, 32 * kt)).astype(np.float32)  # in0 block, tiles row-major: r*kt + k
    b = rng.standard_normal((32 * kt, 32 * ct)).astype(np.float32)  # in1 block, tiles row-major: k*ct + c
    # 6 fp32 output tiles need full-sync DST (8 tiles).
    h = harness({0: (F32, rt * kt), 1: (F32, kt * ct), 16: (F32, rt * ct)}, fp32_dest=True, full_sync=True)
    h.load(0, tiles_of(a))
    h.load(1, tiles_of(b))
    h.tile_regs_acquire()
    for k in range(kt):  # one inner-dimension step per call, as bmm kernels drive matmul_block
        h.matmul_block(0, 1, k, k * ct, 0, False, ct, rt, kt)
    h.tile_regs_commit()
    h.tile_regs_wait()
    for t in range(rt * ct):  # DST holds the output block row-major: r*ct + c
        h.pack_tile(t, 16)
    h.tile_regs_release()
    out = read_matrix(h, 16, F32, 32 * rt, 32 * ct)
    golden = torch.from_numpy(a).double() @ torch.from_numpy(b).double()
    assert pcc(out, golden) > 0.999999
    assert np.abs(out - golden.numpy()).max() < 1e-4
    assert h.tile_matmuls == rt * ct * kt


def test_matmul_block_transpose_transposes_each_b_tile(rng):
    a = rng.standard_normal((32, 32)).astype(np.float32)
    b = rng.standard_normal((32, 64)).astype(np.float32)
    h = harness({0: (F32, 1), 1: (F32, 2), 16: (F32, 2)}, fp32_dest=True)
    h.load(0, tiles_of(a))
    h.load(1, tiles_of(b))
    h.tile_regs_acquire()
    h.matmul_block(0, 1, 0, 0, 0, True, 2, 1, 1)
    h.tile_regs_commit()
    h.tile_regs_wait()
    h.pack_tile(0, 16)
    h.pack_tile(1, 16)
    h.tile_regs_release()
    out = read_matrix(h, 16, F32, 32, 64)
    np.testing.assert_array_equal(out[:, :32], sequential_fp32_matmul(a, b[:, :32].T.copy()))
    np.testing.assert_array_equal(out[:, 32:], sequential_fp32_matmul(a, b[:, 32:].T.copy()))


@pytest.mark.parametrize("block_format", [BFP8, DataFormat.Bfp4_b], ids=["bfp8_b", "bfp4_b"])
def test_block_float_operand_is_dequantized_exactly(rng, block_format):
    a = rng.standard_normal((32, 32)).astype(np.float32)
    w = rng.standard_normal((32, 32)).astype(np.float32)
    w_pages = tiles_of(w, block_format)
    w_dequantized = numerics.untilize(block_format, w_pages, 32, 32)
    assert not np.array_equal(w_dequantized, w)  # it does quantize
    h = harness({0: (F32, 1), 1: (block_format, 1), 16: (F32, 1)}, fp32_dest=True)
    h.load(0, tiles_of(a))
    h.load(1, w_pages)
    run_one(h, lambda: h.matmul_tiles(0, 1, 0, 0, 0), 16)
    np.testing.assert_array_equal(read_matrix(h, 16, F32, 32, 32), sequential_fp32_matmul(a, w_dequantized))


# ---- DST precision -----------------------------------------------------------------------------------


def _bf16(x: np.ndarray) -> np.ndarray:
    return torch.from_numpy(x).to(torch.bfloat16).float().numpy()


@pytest.mark.parametrize("fp32_dest", [False, True])
def test_dst_rounds_to_bf16_after_every_op_unless_fp32_dest(rng, fp32_dest):
    kt = 4
    a = _bf16(rng.standard_normal((32, 32 * kt)).astype(np.float32))
    b = _bf16(rng.standard_normal((32 * kt, 32)).astype(np.float32))
    h = harness({0: (BF16, kt), 1: (BF16, kt), 16: (F32, 1)}, fp32_dest=fp32_dest)
    h.load(0, tiles_of(a, BF16))
    h.load(1, tiles_of(b, BF16))  # tile k = rows 32k..32k+31

    def math():
        for k in range(kt):
            h.matmul_tiles(0, 1, k, k, 0)

    run_one(h, math, 16)
    out = read_matrix(h, 16, F32, 32, 32)
    expected = np.zeros((32, 32), dtype=np.float32)
    for k in range(kt):
        expected = sequential_fp32_matmul(a[:, 32 * k : 32 * (k + 1)], b[32 * k : 32 * (k + 1)], expected)
        if not fp32_dest:
            expected = _bf16(expected)
    np.testing.assert_array_equal(out, expected)
    assert np.array_equal(out, _bf16(out)) is not fp32_dest  # fp32 DST keeps bits bf16 cannot hold


def test_copy_of_fp32_tile_keeps_precision_only_with_fp32_dest(rng):
    x = rng.standard_normal((32, 32)).astype(np.float32)
    for fp32_dest, expected in ((True, x), (False, _bf16(x))):
        h = harness({0: (F32, 1), 16: (F32, 1)}, fp32_dest=fp32_dest)
        h.load(0, tiles_of(x))
        run_one(h, lambda: h.copy_tile(0, 0, 0), 16)
        np.testing.assert_array_equal(read_matrix(h, 16, F32, 32, 32), expected)


def test_pack_rounds_to_the_output_format(rng):
    x = rng.standard_normal((32, 32)).astype(np.float32)
    h = harness({0: (F32, 1), 16: (BF16, 1), 17: (BFP8, 1)}, fp32_dest=True)
    h.load(0, tiles_of(x))
    h.tile_regs_acquire()
    h.copy_tile(0, 0, 0)
    h.tile_regs_commit()
    h.tile_regs_wait()
    h.pack_tile(0, 16)
    h.pack_tile(0, 17)
    h.tile_regs_release()
    np.testing.assert_array_equal(h.read(16), tiles_of(x, BF16))
    np.testing.assert_array_equal(h.read(17), tiles_of(x, BFP8))


# ---- binary and unary ---------------------------------------------------------------------------------

BINARY = {
    numerics_testing.BinaryOp.Add: torch.add,
    numerics_testing.BinaryOp.Sub: torch.sub,
    numerics_testing.BinaryOp.Mul: torch.mul,
}
BROADCAST = {
    numerics_testing.Broadcast.NONE: lambda b: b,
    numerics_testing.Broadcast.ROW: lambda b: b[0:1, :].expand(32, 32),  # B's row 0 for every row
    numerics_testing.Broadcast.COL: lambda b: b[:, 0:1].expand(32, 32),  # B's column 0 for every column
    numerics_testing.Broadcast.SCALAR: lambda b: b[0:1, 0:1].expand(32, 32),
}


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("bcast", list(BROADCAST))
def test_binary_with_broadcast_matches_torch(rng, op, bcast):
    a = rng.standard_normal((32, 32)).astype(np.float32)
    b = rng.standard_normal((32, 32)).astype(np.float32)
    h = harness({0: (F32, 1), 1: (F32, 1), 16: (F32, 1)}, fp32_dest=True)
    h.load(0, tiles_of(a))
    h.load(1, tiles_of(b))
    run_one(h, lambda: h.binary_tiles(op, bcast, 0, 1, 0, 0, 0), 16)
    expected = BINARY[op](torch.from_numpy(a), BROADCAST[bcast](torch.from_numpy(b))).numpy()
    np.testing.assert_array_equal(read_matrix(h, 16, F32, 32, 32), expected)


UNARY = {
    numerics_testing.UnaryOp.Silu: torch.nn.functional.silu,
    numerics_testing.UnaryOp.Sigmoid: torch.sigmoid,
    numerics_testing.UnaryOp.Exp: torch.exp,
    numerics_testing.UnaryOp.Relu: torch.relu,
    numerics_testing.UnaryOp.Recip: torch.reciprocal,
    numerics_testing.UnaryOp.Neg: torch.neg,
}


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_matches_torch(rng, op):
    x = (rng.standard_normal((32, 32)) * 4).astype(np.float32)
    x[0, :4] = [0.0, -0.0, 30.0, -30.0]
    h = harness({0: (F32, 1), 16: (F32, 1)}, fp32_dest=True)
    h.load(0, tiles_of(x))

    def math():
        h.copy_tile(0, 0, 0)
        h.unary_tile(op, 0)

    run_one(h, math, 16)
    out = read_matrix(h, 16, F32, 32, 32)
    expected = UNARY[op](torch.from_numpy(x).double()).numpy()
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-30)


def test_silu_in_bf16_dst_is_rounded(rng):
    x = _bf16((rng.standard_normal((32, 32)) * 3).astype(np.float32))
    h = harness({0: (BF16, 1), 16: (F32, 1)})
    h.load(0, tiles_of(x, BF16))

    def math():
        h.copy_tile(0, 0, 0)
        h.unary_tile(numerics_testing.UnaryOp.Silu, 0)

    run_one(h, math, 16)
    out = read_matrix(h, 16, F32, 32, 32)
    np.testing.assert_array_equal(out, _bf16(out))
    golden = torch.nn.functional.silu(torch.from_numpy(x).double()).numpy()
    np.testing.assert_allclose(out, golden, rtol=2**-8, atol=1e-6)


@pytest.mark.parametrize("fp32_dest", [False, True])
def test_mul_binary_dst_tiles_is_silu_times_up(rng, fp32_dest):
    """The SwiGLU epilogue of a fused matmul: silu(DST 0) * DST 1 into DST 0, both operands in DST."""
    gate = _bf16((rng.standard_normal((32, 32)) * 3).astype(np.float32))
    up = _bf16(rng.standard_normal((32, 32)).astype(np.float32))
    h = harness({0: (BF16, 1), 1: (BF16, 1), 16: (F32, 1)}, fp32_dest=fp32_dest)
    h.load(0, tiles_of(gate, BF16))
    h.load(1, tiles_of(up, BF16))

    def math():
        h.copy_tile(0, 0, 0)
        h.copy_tile(1, 0, 1)
        h.unary_tile(numerics_testing.UnaryOp.Silu, 0)
        h.binary_dst_tiles(numerics_testing.BinaryOp.Mul, 0, 1, 0)

    run_one(h, math, 16)
    out = read_matrix(h, 16, F32, 32, 32)
    silu = torch.nn.functional.silu(torch.from_numpy(gate).double()).numpy()
    if fp32_dest:
        expected = silu.astype(np.float32) * up
        np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-30)
    else:  # silu rounded to bf16 in DST, then the product rounded again
        np.testing.assert_array_equal(out, _bf16(out))
        np.testing.assert_array_equal(out, _bf16(_bf16(silu.astype(np.float32)) * up))


def test_binary_dst_tiles_checks_slots_and_phase():
    h = harness({0: (U32, 1), 1: (F32, 1), 16: (F32, 1)}, fp32_dest=True)
    with pytest.raises(EMU_ERRORS, match="binary DST op.*tile_regs_acquire"):
        h.binary_dst_tiles(numerics_testing.BinaryOp.Mul, 0, 1, 0)
    h.tile_regs_acquire()
    with pytest.raises(EMU_ERRORS, match="DST"):
        h.binary_dst_tiles(numerics_testing.BinaryOp.Mul, 0, 4, 0)  # fp32 half-sync DST holds 4 tiles
    h.copy_tile(0, 0, 0)
    h.copy_tile(1, 0, 1)
    with pytest.raises(EMU_ERRORS, match="DST tile 0 holds integer bits"):
        h.binary_dst_tiles(numerics_testing.BinaryOp.Mul, 0, 1, 1)


# ---- integer tiles ---------------------------------------------------------------------------------------


def test_uint32_copy_and_pack_preserve_bits():
    rng = np.random.default_rng(13)
    bits = rng.integers(0, 2**32, size=(32, 32), dtype=np.uint64).astype(np.uint32)
    bits[0, :3] = [0x7F800001, 0xFFC00001, 0x00000001]  # NaN / subnormal patterns as floats
    h = harness({0: (U32, 1), 16: (U32, 1)}, fp32_dest=True)
    h.load(0, tiles_of(bits.view(np.float32), U32))
    run_one(h, lambda: h.copy_tile(0, 0, 0), 16)
    np.testing.assert_array_equal(read_matrix(h, 16, U32, 32, 32).view(np.uint32), bits)


def test_uint16_fits_a_16_bit_dst():
    values = np.arange(1024, dtype=np.uint32).reshape(32, 32) * 61 % 65536
    h = harness({0: (U16, 1), 16: (U16, 1)})
    h.load(0, tiles_of(values.view(np.float32), U16))
    run_one(h, lambda: h.copy_tile(0, 0, 0), 16)
    np.testing.assert_array_equal(read_matrix(h, 16, U16, 32, 32).view(np.uint32), values)


def test_integer_misuse_is_rejected():
    h = harness({0: (U32, 1), 1: (F32, 1), 16: (F32, 1)})
    h.tile_regs_acquire()
    with pytest.raises(EMU_ERRORS, match="32-bit UInt32 data but DST is 16-bit"):
        h.copy_tile(0, 0, 0)
    with pytest.raises(EMU_ERRORS, match="CB 0 holds UInt32"):
        h.matmul_tiles(1, 0, 0, 0, 0)
    with pytest.raises(EMU_ERRORS, match="CB 0 holds UInt32"):
        h.binary_tiles(numerics_testing.BinaryOp.Add, numerics_testing.Broadcast.NONE, 0, 1, 0, 0, 0)

    h = harness({0: (U32, 1), 16: (F32, 1), 17: (U32, 1), 1: (F32, 1)}, fp32_dest=True)
    h.tile_regs_acquire()
    h.copy_tile(0, 0, 0)
    with pytest.raises(EMU_ERRORS, match="DST tile 0 holds integer bits"):
        h.unary_tile(numerics_testing.UnaryOp.Neg, 0)
    # ELWMUL adds its product to what DST holds: integer bits there cannot be added to.
    with pytest.raises(EMU_ERRORS, match=r"binary multiply \(DST \+= A \* B\): DST tile 0 holds integer bits"):
        h.binary_tiles(numerics_testing.BinaryOp.Mul, numerics_testing.Broadcast.NONE, 1, 1, 0, 0, 0)
    h.copy_tile(1, 0, 1)
    h.tile_regs_commit()
    h.tile_regs_wait()
    with pytest.raises(EMU_ERRORS, match="holds integer bits but CB 16 is Float32"):
        h.pack_tile(0, 16)
    with pytest.raises(EMU_ERRORS, match="holds float values but CB 17 is UInt32"):
        h.pack_tile(1, 17)


# ---- DST capacity and ownership -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fp32_dest, full_sync, capacity", [(False, False, 8), (True, False, 4), (False, True, 16), (True, True, 8)]
)
def test_dst_capacity(fp32_dest, full_sync, capacity):
    h = harness({0: (F32, 1), 16: (F32, 1)}, fp32_dest=fp32_dest, full_sync=full_sync)
    assert h.dst_capacity == capacity
    h.tile_regs_acquire()
    h.copy_tile(0, 0, capacity - 1)
    with pytest.raises(EMU_ERRORS, match=f"DST index {capacity} is out of range: DST holds {capacity} tiles"):
        h.copy_tile(0, 0, capacity)
    with pytest.raises(EMU_ERRORS, match=f"needs DST index {capacity}, past the {capacity} tiles"):
        h.matmul_block(0, 0, 0, 0, capacity - 1, False, 2, 1, 1)
    h.tile_regs_commit()
    h.tile_regs_wait()
    with pytest.raises(EMU_ERRORS, match=f"DST index {capacity + 3} is out of range"):
        h.pack_tile(capacity + 3, 16)


def test_acquire_discipline_errors():
    h = harness({0: (F32, 2), 16: (F32, 2)})
    with pytest.raises(EMU_ERRORS, match=r"copy_tile: math ops run between tile_regs_acquire.*DST is free"):
        h.copy_tile(0, 0, 0)
    with pytest.raises(EMU_ERRORS, match="tile_regs_commit: needs a preceding tile_regs_acquire"):
        h.tile_regs_commit()
    with pytest.raises(EMU_ERRORS, match="tile_regs_wait: needs a preceding tile_regs_commit"):
        h.tile_regs_wait()
    with pytest.raises(EMU_ERRORS, match="tile_regs_release: needs a preceding tile_regs_wait"):
        h.tile_regs_release()
    h.tile_regs_acquire()
    with pytest.raises(EMU_ERRORS, match="tile_regs_acquire: DST must be released"):
        h.tile_regs_acquire()
    with pytest.raises(EMU_ERRORS, match="pack_tile: packing runs between tile_regs_wait and tile_regs_release"):
        h.pack_tile(0, 16)
    with pytest.raises(EMU_ERRORS, match="tilize_block: it acquires and releases DST itself"):
        h.tilize_block(0, 1, 16)
    h.copy_tile(0, 0, 0)
    h.tile_regs_commit()
    with pytest.raises(EMU_ERRORS, match=r"unary op: math ops run.*DST is committed"):
        h.unary_tile(numerics_testing.UnaryOp.Neg, 0)
    with pytest.raises(EMU_ERRORS, match=r"pack_tile: packing runs.*DST is committed"):
        h.pack_tile(0, 16)
    h.tile_regs_wait()
    with pytest.raises(EMU_ERRORS, match=r"matmul_tiles: math ops run.*held by the packer"):
        h.matmul_tiles(0, 0, 0, 0, 0)
    h.pack_tile(0, 16)
    h.tile_regs_release()
    h.tile_regs_acquire()  # the cycle can start again


def test_pack_positions_sequential_explicit_and_push_back(rng):
    x = rng.standard_normal((32, 96)).astype(np.float32)
    h = harness({0: (F32, 3), 16: (F32, 4)}, fp32_dest=True)
    h.load(0, tiles_of(x))
    h.tile_regs_acquire()
    for t in range(3):
        h.copy_tile(0, t, t)
    h.tile_regs_commit()
    h.tile_regs_wait()
    h.pack_tile(0, 16)  # slot 0
    h.pack_tile(2, 16, 3)  # explicit slot 3; does not move the sequential position
    h.pack_tile(1, 16)  # slot 1
    h.on_push_back(16)
    h.pack_tile(2, 16)  # position restarted: slot 0 again
    h.tile_regs_release()
    out = read_matrix(h, 16, F32, 32, 128)
    np.testing.assert_array_equal(out[:, 0:32], x[:, 64:96])
    np.testing.assert_array_equal(out[:, 32:64], x[:, 32:64])
    np.testing.assert_array_equal(out[:, 96:128], x[:, 64:96])
    assert h.tiles_packed == 4


def test_cb_page_size_must_be_a_tile():
    h = harness({0: (BF16, 2, 1024), 16: (F32, 1)})
    h.tile_regs_acquire()
    with pytest.raises(EMU_ERRORS, match=r"CB 0 pages are 1024 bytes, not a Float16_b tile \(2048 bytes\)"):
        h.copy_tile(0, 0, 0)


# ---- tilize / untilize blocks ---------------------------------------------------------------------------


@pytest.mark.parametrize("fp32_dest", [False, True])
def test_tilize_block_and_untilize_block(rng, fp32_dest):
    ntiles = 3
    rows = rng.standard_normal((32, 32 * ntiles)).astype(np.float32)  # one row of tiles, row-major
    h = harness({0: (F32, ntiles), 16: (F32, ntiles), 17: (F32, ntiles)}, fp32_dest=fp32_dest)
    h.load(0, rows.view(np.uint8).ravel())
    h.tilize_block(0, ntiles, 16)
    through_dst = rows if fp32_dest else _bf16(rows)
    tiles = h.read(16).view(np.float32).reshape(ntiles, 1024)
    expected = torch.from_numpy(through_dst).reshape(2, 16, ntiles, 2, 16).permute(2, 0, 3, 1, 4).reshape(ntiles, 1024)
    np.testing.assert_array_equal(tiles, expected.numpy())

    h.load(16, h.read(16))
    h.untilize_block(16, ntiles, 17)
    np.testing.assert_array_equal(h.read(17).view(np.float32).reshape(32, 32 * ntiles), through_dst)
    assert h.tiles_packed == 2 * ntiles


def test_tilize_block_converts_to_the_output_format(rng):
    rows = _bf16(rng.standard_normal((32, 64)).astype(np.float32))
    h = harness({0: (BF16, 2), 16: (BFP8, 2)})
    h.load(0, numerics_testing.pack_elements(BF16, rows.ravel()))
    h.tilize_block(0, 2, 16)
    np.testing.assert_array_equal(h.read(16), tiles_of(rows, BFP8))


def test_untilize_block_packs_sequentially(rng):
    x = rng.standard_normal((32, 64)).astype(np.float32)
    h = harness({0: (F32, 2), 16: (F32, 4)}, fp32_dest=True)
    h.load(0, tiles_of(x))
    h.untilize_block(0, 1, 16)  # tile 0 -> rows of one tile: output pages 0
    h.untilize_block(0, 2, 16)  # tiles 0, 1 -> output pages 1, 2 (the position advanced)
    out = h.read(16).view(np.float32)
    np.testing.assert_array_equal(out[:1024].reshape(32, 32), x[:, :32])
    np.testing.assert_array_equal(out[1024:3072].reshape(32, 64), x)


def test_tilize_block_rejects_a_block_that_wraps_the_ring(rng):
    rows = rng.standard_normal((32, 64)).astype(np.float32)
    h = harness({0: (F32, 3), 16: (F32, 2)})
    h.load(0, rows.view(np.uint8).ravel(), start=2)  # pages 0, 1 sit at ring slots 2, 0
    with pytest.raises(EMU_ERRORS, match="the 2 pages read from CB 0 wrap around the end of its ring"):
        h.tilize_block(0, 2, 16)


def test_tilize_block_integer_needs_fp32_dest_and_keeps_bits():
    bits = (np.arange(32 * 32, dtype=np.uint64) * 2654435761 % 2**32).astype(np.uint32).reshape(32, 32)
    h = harness({0: (U32, 1), 16: (U32, 1)})
    h.load(0, bits.view(np.uint8).ravel())
    with pytest.raises(EMU_ERRORS, match="DST is 16-bit"):
        h.tilize_block(0, 1, 16)
    h = harness({0: (U32, 1), 16: (U32, 1)}, fp32_dest=True)
    h.load(0, bits.view(np.uint8).ravel())
    h.tilize_block(0, 1, 16)
    np.testing.assert_array_equal(h.read(16), tiles_of(bits.view(np.float32), U32))
