"""moe_bmm's fused SwiGLU mode on the emulator: silu(x @ w_gate) * (x @ w_up) in one launch.

Checked against two independent references: the unfused path (moe_bmm gate, moe_bmm up, torch
silu * mul on their bf16 outputs) and an fp32 torch golden. The interleaved weight is built here
tile column by tile column, independently of `ttnn_moe.interleave_gate_up`, which is checked
against it. Counters: 2 * Kt tile matmuls per active output tile, weight pages of active experts
only, and each core reads an expert's x rows once for both products.
"""

from __future__ import annotations

import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_devices_by_name_fixture
from test_op_moe_bmm import (
    GRIDS,
    ROUTINGS,
    check_x_reads,
    counts_column,
    make_grouped,
    make_padded,
    routed_counts,
    row_tiles,
)
from ttnn_moe.ops.compute_kernel_config import MathFidelity, WormholeComputeKernelConfig
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from ttnn_moe import _C, golden

PCC = 0.9999
PCC_BFP8 = 0.99


devices = emu_devices_by_name_fixture(GRIDS)


def interleaved_by_columns(w_gate: torch.Tensor, w_up: torch.Tensor) -> torch.Tensor:
    """(E, Kd, N) twice -> (E, Kd, 2N): gate column tile n at tile 2n, up column tile n at 2n + 1."""
    pieces = []
    for n in range(w_gate.shape[-1] // 32):
        pieces += [w_gate[..., 32 * n : 32 * (n + 1)], w_up[..., 32 * n : 32 * (n + 1)]]
    return torch.cat(pieces, dim=-1)


def swiglu_golden(x, w_gate, w_up, counts, offsets=None):
    """fp32: silu(x @ gate) * (x @ up) over each expert's rows, 0 elsewhere."""
    offsets = None if offsets is None else counts_column(offsets)
    gate = golden.moe_bmm(x, w_gate, counts_column(counts), expert_offsets=offsets)
    up = golden.moe_bmm(x, w_up, counts_column(counts), expert_offsets=offsets)
    return torch.nn.functional.silu(gate) * up


def unfused(x_d, w_gate, w_up, counts_d, offsets_d, w_dtype, device, config=None):
    """Two launches and the activation in torch on their bf16 outputs, rounded to bf16 like a device op."""
    outs = [
        ttnn.to_torch(
            ttnn_moe.moe_bmm(
                x_d,
                ttnn.from_torch(w, dtype=w_dtype, layout=ttnn.TILE_LAYOUT, device=device),
                counts_d,
                expert_offsets=offsets_d,
                compute_kernel_config=config,
            )
        ).float()
        for w in (w_gate, w_up)
    ]
    return (torch.nn.functional.silu(outs[0]).bfloat16().float() * outs[1]).bfloat16().float()


def gate_up_weights(num_experts, kd, n, seed):
    gen = torch.Generator().manual_seed(seed)
    return [(torch.randn(num_experts, kd, n, generator=gen) / kd**0.5).bfloat16() for _ in range(2)]


def fused_weight(w_gate, w_up, w_dtype, device):
    return ttnn.from_torch(interleaved_by_columns(w_gate, w_up), dtype=w_dtype, layout=ttnn.TILE_LAYOUT, device=device)


def active_rows(counts, offsets, tokens):
    """Indices of the rows the op computes (grouped: the active row tiles; padded: all T rows of each expert)."""
    if offsets is None:
        return torch.arange(len(counts) * tokens)
    return torch.cat([torch.arange(o, o + 32 * row_tiles(c)) for o, c in zip(offsets, counts)]).long()


def check_against_references(got, x_d, x, w_gate, w_up, counts, offsets, w_dtype, device, pcc, config=None):
    offsets_d = (
        None
        if offsets is None
        else ttnn.from_torch(counts_column(offsets), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    )
    counts_d = ttnn.from_torch(counts_column(counts), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    reference = unfused(x_d, w_gate, w_up, counts_d, offsets_d, w_dtype, device, config)
    expected = swiglu_golden(x, w_gate, w_up, counts, offsets)
    assert got.shape == expected.shape
    rows = active_rows(counts, offsets, x.shape[-2])
    flat = lambda t: t.reshape(-1, t.shape[-1])[rows]  # noqa: E731
    if rows.numel():
        assert_pcc(flat(reference), flat(got), PCC, name="fused vs unfused")
        assert (flat(reference) - flat(got)).abs().max() <= 2**-7 * flat(reference).abs().max()
        assert_pcc(flat(expected), flat(got), pcc, name="fused vs fp32 golden")


def check_swiglu_counters(w_d, counts, kd, n):
    """2 * Kt tile matmuls per active output tile (gate and up), nothing else; one packed tile per
    output tile, plus its two partial sums after every k block but the last (blocks of the largest
    divisor of Kt up to 16); the gate and up tiles of the active experts each read once (every expert
    here has at most 8 row tiles)."""
    kt, nt = kd // 32, n // 32
    inner_block = max(b for b in range(1, 17) if kt % b == 0)
    counters = ttnn.last_run_counters()
    assert counters["tile_matmuls"] == sum(row_tiles(c) for c in counts) * kt * nt * 2
    spills = 2 * (kt // inner_block - 1)
    assert counters["tiles_packed"] == sum(row_tiles(c) for c in counts) * nt * (1 + spills)
    traffic = counters["dram_buffers"].get(w_d.to_arg().address)
    active = sum(1 for c in counts if c > 0)
    if active == 0:
        assert traffic is None or traffic["page_reads"] == 0
        return
    assert traffic["unique_pages_read"] == active * kt * nt * 2
    assert traffic["page_reads"] == active * kt * nt * 2


# ---- padded and grouped ----------------------------------------------------------------------


@pytest.mark.parametrize("routing", ROUTINGS)
def test_padded_swiglu_matches_unfused_and_golden(devices, routing):
    """T = 100 (not a multiple of 32); zero-token experts, one expert taking every token."""
    grid = list(GRIDS)[ROUTINGS.index(routing) % len(GRIDS)]
    device = devices[grid]
    num_experts, tokens, kd, n = 8, 100, 256, 128
    counts = routed_counts(routing, num_experts, tokens, seed=5)
    x, _, (x_d, _, counts_d, _) = make_padded(num_experts, tokens, kd, 32, counts, seed=6, device=device)
    w_gate, w_up = gate_up_weights(num_experts, kd, n, seed=7)
    w_d = fused_weight(w_gate, w_up, ttnn.bfloat16, device)
    got = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, activation="swiglu")).float()
    check_swiglu_counters(w_d, counts, kd, n)
    check_x_reads(x_d, counts, kd, n, GRIDS[grid], halves=2)
    for l, count in enumerate(counts):
        assert torch.count_nonzero(got[l, count:]) == 0, f"expert {l}: rows past count {count} are not zero"
    check_against_references(got, x_d, x, w_gate, w_up, counts, None, ttnn.bfloat16, device, PCC)


@pytest.mark.parametrize("w_dtype", [ttnn.bfloat16, ttnn.bfloat8_b], ids=["bf16", "bfp8"])
def test_grouped_swiglu_matches_unfused_and_golden(devices, w_dtype):
    counts = routed_counts("skewed", 6, 70, seed=11)
    x, _, offsets, (x_d, _, _, offsets_d) = make_grouped(128, 32, counts, seed=12, device=devices["8x8"])
    counts_d = ttnn.from_torch(
        counts_column(counts), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=devices["8x8"]
    )
    w_gate, w_up = gate_up_weights(6, 128, 96, seed=13)
    w_d = fused_weight(w_gate, w_up, w_dtype, devices["8x8"])
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d, activation="swiglu")
    got = ttnn.to_torch(out).float()
    check_swiglu_counters(w_d, counts, 128, 96)
    for offset, count in zip(offsets, counts):
        assert torch.count_nonzero(got[offset + count : offset + 32 * row_tiles(count)]) == 0
    pcc = PCC if w_dtype == ttnn.bfloat16 else PCC_BFP8
    check_against_references(got, x_d, x, w_gate, w_up, counts, offsets, w_dtype, devices["8x8"], pcc)


def test_x_is_read_once_for_both_products(devices):
    """The fused launch reads x exactly as much as ONE of the two unfused launches."""
    counts = [70, 3, 0, 40]
    device = devices["2x3"]
    _, _, (x_d, _, counts_d, _) = make_padded(4, 96, 128, 32, counts, seed=21, device=device)
    w_gate, w_up = gate_up_weights(4, 128, 64, seed=22)
    x_address = x_d.to_arg().address
    ttnn_moe.moe_bmm(x_d, ttnn.from_torch(w_gate, layout=ttnn.TILE_LAYOUT, device=device), counts_d)
    one_projection = ttnn.last_run_counters()["dram_buffers"][x_address]["bytes_read"]
    ttnn_moe.moe_bmm(x_d, fused_weight(w_gate, w_up, ttnn.bfloat16, device), counts_d, activation="swiglu")
    assert ttnn.last_run_counters()["dram_buffers"][x_address]["bytes_read"] == one_projection


def test_long_weight_columns_and_fp32_accumulation(devices):
    """Kd = 8192: a gate and an up bf16 column together (2 x 256 tiles x 2 KiB) exceed L1; they go
    through in k blocks with both partial sums kept in fp32 between blocks, each weight tile read
    once; fp32 DST accumulation keeps the long sums at the bar."""
    device = devices["2x3"]
    counts = [64, 33]
    x, _, (x_d, _, counts_d, _) = make_padded(2, 64, 8192, 32, counts, seed=31, device=device)
    w_gate, w_up = gate_up_weights(2, 8192, 32, seed=32)
    w_d = fused_weight(w_gate, w_up, ttnn.bfloat16, device)
    config = WormholeComputeKernelConfig(
        math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=True, math_approx_mode=False, packer_l1_acc=False
    )
    got = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, activation="swiglu", compute_kernel_config=config))
    traffic = ttnn.last_run_counters()["dram_buffers"][w_d.to_arg().address]
    assert traffic["page_reads"] == len(counts) * 256 * 2  # each gate and up tile once
    check_against_references(got.float(), x_d, x, w_gate, w_up, counts, None, ttnn.bfloat16, device, PCC, config=config)


def test_no_tokens_reads_no_weights_and_writes_zeros(devices):
    device = devices["2x3"]
    _, _, (x_d, _, counts_d, _) = make_padded(3, 40, 64, 32, [0, 0, 0], seed=41, device=device)
    w_gate, w_up = gate_up_weights(3, 64, 64, seed=42)
    w_d = fused_weight(w_gate, w_up, ttnn.bfloat16, device)
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, activation="swiglu")
    assert list(out.shape) == [3, 40, 64]
    assert torch.count_nonzero(ttnn.to_torch(out)) == 0
    check_swiglu_counters(w_d, [0, 0, 0], 64, 64)


# ---- program cache, helper, bad input --------------------------------------------------------


def test_program_cache_key_tells_the_modes_apart(devices):
    """The same tensors run plain (out N = 64) and fused (out N = 32): two programs, then a hit."""
    device = devices["1x1"]
    _, _, (x_d, w_d, counts_d, _) = make_padded(2, 32, 64, 64, [5, 32], seed=51, device=device)
    plain = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    before = _C.ops.moe_bmm.program_cache_info()
    fused = ttnn_moe.moe_bmm(x_d, w_d, counts_d, activation="swiglu")
    middle = _C.ops.moe_bmm.program_cache_info()
    ttnn_moe.moe_bmm(x_d, w_d, counts_d, activation="swiglu")
    after = _C.ops.moe_bmm.program_cache_info()
    assert (list(plain.shape), list(fused.shape)) == ([2, 32, 64], [2, 32, 32])
    assert middle["misses"] == before["misses"] + 1
    assert after["hits"] == middle["hits"] + 1 and after["misses"] == middle["misses"]


def test_interleave_gate_up_puts_tile_columns_side_by_side():
    gen = torch.Generator().manual_seed(61)
    w_gate, w_up = torch.randn(3, 64, 96, generator=gen), torch.randn(3, 64, 96, generator=gen)
    assert torch.equal(ttnn_moe.interleave_gate_up(w_gate, w_up), interleaved_by_columns(w_gate, w_up))
    assert torch.equal(ttnn_moe.interleave_gate_up(w_gate[0], w_up[0]), interleaved_by_columns(w_gate, w_up)[0])
    # Transposed views of (N, Kd) nn.Linear weights, as the model passes them.
    as_views = [w.mT.contiguous().mT for w in (w_gate, w_up)]
    assert torch.equal(ttnn_moe.interleave_gate_up(*as_views), interleaved_by_columns(w_gate, w_up))
    with pytest.raises(ValueError, match=r"w_gate \[3, 64, 96\] and w_up \[3, 64, 64\] differ"):
        ttnn_moe.interleave_gate_up(w_gate, w_up[..., :64])
    with pytest.raises(ValueError, match=r"N a multiple of 32, got \[64, 40\]"):
        ttnn_moe.interleave_gate_up(w_gate[0, :, :40], w_up[0, :, :40])
    with pytest.raises(TypeError, match="torch tensors"):
        ttnn_moe.interleave_gate_up([1.0], w_up)


def test_bad_swiglu_inputs_raise_naming_the_value(devices):
    device = devices["1x1"]
    _, _, (x_d, w_d, counts_d, _) = make_padded(2, 32, 64, 32, [5, 32], seed=71, device=device)
    with pytest.raises(ValueError, match="activation must be None or 'swiglu', got 'gelu'"):
        ttnn_moe.moe_bmm(x_d, w_d, counts_d, activation="gelu")
    with pytest.raises(ValueError, match="must be a multiple of 64, got 32"):
        ttnn_moe.moe_bmm(x_d, w_d, counts_d, activation="swiglu")
