"""The tile matmul on bf16 pairs (VDPBF16PS, hosts with AVX512_BF16) against the sequential fp32 golden.

Every result must equal c + a @ b computed with the 32 products of each element added one by one in k
order, separately rounded (numpy float32), bit for bit, whichever kernel ran. The pair kernel must run
exactly when the host has AVX512_BF16, both operands hold bf16 values and the exponent bounds of
`emu/numerics/matmul_operand.cpp` rule out denormals and overflow; elsewhere the generic kernel runs."""

import numpy as np
import pytest
import ttnn_moe_numerics_testing as numerics_testing
from ttnn_moe._C import numerics
from ttnn_moe._C import program as pd

SUPPORTED = numerics_testing.bf16_pair_matmul_supported()
BF16, F32 = pd.DataFormat.Float16_b, pd.DataFormat.Float32


def sequential_fp32_matmul(a, b, c):
    """c + a @ b in float32, the products of each element added one by one in k order (no FMA)."""
    with np.errstate(all="ignore"):
        for k in range(a.shape[1]):
            c = c + a[:, k : k + 1] * b[k : k + 1, :]
    return c


def bits(x):
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def exponents(x):
    return (bits(x) >> 23) & 0xFF


def bf16_exact(x):
    return not np.any(bits(x) & 0xFFFF)


def pair_kernel_applies(a, b, c):
    """The documented bounds (biased exponents): operands bf16 and finite, no denormal input, the least
    nonzero exponents of a and b summing to >= 142, the greatest to <= 372, c zero or of exponent 24..251."""
    if not (bf16_exact(a) and bf16_exact(b)):
        return False
    mins, maxs = [], []
    for t in (a, b):
        e = exponents(t)
        nonzero = (bits(t) & 0x7FFFFFFF) != 0
        mins.append(int(e[nonzero].min()) if nonzero.any() else 255)
        maxs.append(int(e.max()))
    if min(mins) < 1 or max(maxs) == 255 or sum(mins) < 142 or sum(maxs) > 372:
        return False
    ec = exponents(c)[(bits(c) & 0x7FFFFFFF) != 0]
    return bool(np.all((ec >= 24) & (ec <= 251)))


def to_bf16(x):
    """Round float32 values to bf16 (nearest, ties to even), kept as float32."""
    u = bits(x).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return rounded.astype(np.uint32).view(np.float32).reshape(np.shape(x))


def check(a, b, c, expect_pairs):
    a, b, c = (np.ascontiguousarray(t, dtype=np.float32).reshape(32, 32) for t in (a, b, c))
    assert pair_kernel_applies(a, b, c) == expect_pairs
    got, paired = numerics_testing.matmul_prepared_tiles(a, b, c)
    want = sequential_fp32_matmul(a, b, c.copy())
    assert paired == (SUPPORTED and expect_pairs)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(bits(got)[~nan], bits(want)[~nan])


@pytest.fixture
def rng():
    return np.random.default_rng(2026)


def test_the_pair_kernel_is_available_on_avx512_bf16_hosts():
    with open("/proc/cpuinfo") as f:
        flags = next((line.split() for line in f if line.startswith("flags")), [])
    assert SUPPORTED == ("avx512_bf16" in flags)


@pytest.mark.parametrize("scale", [1.0, 2.0**-40, 2.0**40])
def test_random_bf16_tiles_equal_the_sequential_golden(rng, scale):
    for _ in range(40):
        a = to_bf16(rng.standard_normal((32, 32)) * scale)
        b = to_bf16(rng.standard_normal((32, 32)))
        c = rng.standard_normal((32, 32)).astype(np.float32) * np.float32(scale)
        check(a, b, c, True)
        check(a, b, np.zeros((32, 32), np.float32), True)


def test_wide_exponent_spreads_inside_the_bounds(rng):
    for _ in range(100):
        a = to_bf16(rng.standard_normal((32, 32)) * 2.0 ** rng.integers(-28, 28, (32, 32)))
        b = to_bf16(rng.standard_normal((32, 32)) * 2.0 ** rng.integers(-28, 28, (32, 32)))
        c = (rng.standard_normal((32, 32)) * 2.0 ** rng.integers(-60, 60, (32, 32))).astype(np.float32)
        a[rng.random((32, 32)) < 0.1] = 0.0
        check(a, b, c, True)


def test_exact_cancellation_and_signed_zeros():
    # Row i of a is 1 at k = 0 and k = 1; b's rows 0 and 1 are x and -x: every product pair cancels,
    # c + x - x = c, and from c = -0 or +0 the sum is +0 (round to nearest), never -0.
    a = np.zeros((32, 32), np.float32)
    a[:, 0] = 1.0
    a[:, 1] = 1.0
    b = np.zeros((32, 32), np.float32)
    b[0] = to_bf16(np.linspace(-3, 3, 32))
    b[1] = -b[0]
    b[2] = -0.0
    a[:, 2] = -0.0
    c = np.where(np.arange(32 * 32).reshape(32, 32) % 2 == 0, -0.0, 0.0).astype(np.float32)
    c[5] = -b[0]  # c cancels the first product exactly
    check(a, b, c, True)
    check(-a, b, np.full((32, 32), -0.0, np.float32), True)


def test_round_to_nearest_even_ties(rng):
    # c near 2^24 (ulp 2) plus products of +-1 and +-0.5: the additions tie and must round to even in
    # both steps of every pair.
    a = to_bf16(rng.choice([1.0, -1.0, 0.5, -0.5, 1.5, 0.75], (32, 32)))
    b = to_bf16(rng.choice([1.0, -1.0, 0.5, 3.0], (32, 32)))
    c = (2.0**24 + 2.0 * rng.integers(0, 1000, (32, 32))).astype(np.float32)
    c *= rng.choice([1.0, -1.0], (32, 32)).astype(np.float32)
    check(a, b, c, True)


def test_bounds_of_the_least_products_exponents():
    # a and b hold one tiny value each among ones; products of the tiny pair are at 2^-126 granularity
    # when their exponents sum to 142 (pairs allowed), one less and the partial sums may go denormal.
    a = np.ones((32, 32), np.float32)
    b = np.ones((32, 32), np.float32)
    a[:, 0] = np.float32(2.0**-63 * 1.5)  # biased exponent 64
    b[0, :] = np.float32(2.0**-49 * 1.25)  # biased exponent 78: 142
    c = np.full((32, 32), -31.0, np.float32)  # absorbs the tiny product, then the 31 ones cancel it
    check(a, b, c, True)
    b[0, :] = np.float32(2.0**-50 * 1.25)  # 141
    check(a, b, c, False)
    # Products that would be denormal: c and the other products cancel, leaving them alone.
    a = np.zeros((32, 32), np.float32)
    b = np.zeros((32, 32), np.float32)
    a[:, 0], b[0, :] = np.float32(2.0**-70), np.float32(2.0**-60 * 1.5)
    check(a, b, np.zeros((32, 32), np.float32), False)


def test_bounds_of_the_greatest_products_exponents():
    a = to_bf16(np.full((32, 32), 2.0**60 * 1.5))  # biased exponent 187
    b = to_bf16(np.full((32, 32), 2.0**58))  # 185: 372
    check(a, b, np.zeros((32, 32), np.float32), True)
    b = to_bf16(np.full((32, 32), 2.0**59))  # 373
    check(a, b, np.zeros((32, 32), np.float32), False)
    # Products past fp32's range: the generic kernel's infinities.
    a = to_bf16(np.full((32, 32), 2.0**100))
    check(a, b, np.full((32, 32), -(2.0**127), np.float32), False)


def test_accumulator_bounds(rng):
    a = to_bf16(rng.standard_normal((32, 32)))
    b = to_bf16(rng.standard_normal((32, 32)))
    for value, applies in [
        (2.0**-103, True),  # biased exponent 24
        (2.0**-104, False),
        (2.0**124, True),  # 251
        (2.0**125, False),
        (1e-40, False),  # denormal
        (np.inf, False),
        (np.nan, False),
    ]:
        c = rng.standard_normal((32, 32)).astype(np.float32)
        c[3, 7] = value
        check(a, b, c, applies)


def test_operands_outside_the_pair_kernel(rng):
    a = to_bf16(rng.standard_normal((32, 32)))
    b = to_bf16(rng.standard_normal((32, 32)))
    c = rng.standard_normal((32, 32)).astype(np.float32)
    fp32 = rng.standard_normal((32, 32)).astype(np.float32)  # not bf16 values (an fp32 or tf32 operand)
    check(fp32, b, c, False)
    check(a, fp32, c, False)
    for special in [np.inf, -np.inf, np.nan, 2.0**-130]:  # the last is a bf16 denormal
        for target in ("a", "b"):
            x, y = a.copy(), b.copy()
            (x if target == "a" else y)[9, 4] = special
            check(x, y, c, False)


def test_transposed_operand_pairs_follow_k(rng):
    # Distinct per-k magnitudes make any pairing of the wrong k values visible.
    a = to_bf16(rng.standard_normal((32, 32)) * 2.0 ** np.arange(32)[None, :] / 2**16)
    b = to_bf16(rng.standard_normal((32, 32)) * 2.0 ** -np.arange(32)[:, None] * 2**10)
    check(a, b, np.zeros((32, 32), np.float32), True)
    check(b.T.copy(), a.T.copy(), np.ones((32, 32), np.float32), True)


@pytest.mark.parametrize("transpose_b", [False, True])
def test_engine_block_matmul_on_bf16_tiles_with_and_without_pairs(rng, transpose_b):
    """The ComputeEngine pairs bf16 CB tiles straight from their bytes; tiles the pair kernel must not take
    (a denormal, an infinity, products past the exponent bounds) are unpacked for the generic kernel."""
    rt, ct, kt = 2, 2, 2
    a = to_bf16(rng.standard_normal((32 * rt, 32 * kt)))
    b = to_bf16(rng.standard_normal((32 * kt, 32 * ct)))
    a[3, 5] = 2.0**-130  # A tile (0, 0): a denormal
    b[40, 50] = np.inf  # B tile (1, 1)
    a[40:, 32:] *= np.float32(2.0**120)  # A tile (1, 1): exponents with B tile (1, *)'s past 372
    # transpose_b: the CB holds each tile of B transposed, in B's tile order.
    b_stored = b.reshape(kt, 32, ct, 32).transpose(0, 3, 2, 1).reshape(32 * kt, 32 * ct).copy() if transpose_b else b
    h = numerics_testing._EngineHarness(
        pd.ComputeConfigDescriptor(fp32_dest_acc_en=True, dst_full_sync_en=True),
        {0: (BF16, rt * kt), 1: (BF16, kt * ct), 16: (F32, rt * ct)},
    )
    h.load(0, numerics.tilize(BF16, a))
    h.load(1, numerics.tilize(BF16, b_stored))
    h.tile_regs_acquire()
    for k in range(kt):
        h.matmul_block(0, 1, k, k * ct, 0, transpose_b, ct, rt, kt)
    h.tile_regs_commit()
    h.tile_regs_wait()
    for t in range(rt * ct):
        h.pack_tile(t, 16)
    h.tile_regs_release()
    got = numerics.untilize(F32, h.read(16), 32 * rt, 32 * ct)
    want = sequential_fp32_matmul(a, b, np.zeros((32 * rt, 32 * ct), np.float32))
    nan = np.isnan(want)
    assert np.isinf(want).any() and np.abs(want[~np.isinf(want)]).max() > 2.0**120  # the extremes reach it
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(bits(got)[~nan], bits(want)[~nan])
