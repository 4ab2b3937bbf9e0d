"""moe_bmm on the emulator against ttnn_moe.golden.moe_bmm (fp32 torch), padded and grouped.

Inputs carry garbage (not zeros) in every row the op must not use, so the tests see
both that inactive rows are never read into results and that rows past count_l come
out as exact zeros. Counters check the work: exactly sum_l ceil(count_l/32) * Kt * Nt
tile matmuls, and weight pages read only for experts that have tokens.
"""

from __future__ import annotations

import math

import pytest
import torch
import ttnn_moe.emu as ttnn
import ttnn_moe.paths
from emu_fixtures import emu_devices_by_name_fixture, emulator_device_limits
from ttnn_moe.ops.compute_kernel_config import MathFidelity, WormholeComputeKernelConfig
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from ttnn_moe import _C, golden

GRIDS = {"1x1": (1, 1), "2x3": (2, 3), "8x8": (8, 8)}
ROUTINGS = ("uniform", "skewed", "one_expert", "zero_experts")
PCC_BF16 = 0.9999
PCC_BFP8 = 0.99
PCC_BFP4 = 0.999  # against the golden on the bfloat4_b-rounded weights
GARBAGE = 1.0e3  # magnitude of the values in rows the op must ignore


devices = emu_devices_by_name_fixture(GRIDS)


# ---- routing and inputs ----------------------------------------------------------------------


def routed_counts(routing: str, num_experts: int, tokens: int, seed: int) -> list[int]:
    """Assignments per expert of `tokens` tokens choosing top_k distinct experts each."""
    gen = torch.Generator().manual_seed(seed)
    top_k = min(4, num_experts)
    if routing == "one_expert":
        return [tokens if l == num_experts - 1 else 0 for l in range(num_experts)]
    if routing == "uniform":
        probs = torch.ones(num_experts)
    elif routing == "skewed":
        probs = 1.0 / torch.arange(1, num_experts + 1, dtype=torch.float32) ** 2
    elif routing == "zero_experts":  # only odd experts receive tokens (all of them when E_l == 1)
        probs = torch.tensor([1.0 if l % 2 or num_experts == 1 else 0.0 for l in range(num_experts)])
        top_k = min(top_k, int((probs > 0).sum()))
    else:
        raise AssertionError(routing)
    choice = torch.multinomial(probs.expand(tokens, -1), top_k, replacement=False, generator=gen)
    return torch.bincount(choice.reshape(-1), minlength=num_experts).tolist()


def row_tiles(count: int) -> int:
    return math.ceil(count / 32)


def with_garbage_rows(values: torch.Tensor, valid: torch.Tensor, seed: int) -> torch.Tensor:
    """values where `valid` (broadcast over the last dim), large random values elsewhere."""
    gen = torch.Generator().manual_seed(seed)
    garbage = GARBAGE * (torch.rand(values.shape, generator=gen) + 0.5)
    return torch.where(valid.unsqueeze(-1), values, garbage)


def make_padded(num_experts, tokens, kd, n, counts, seed, w_dtype=ttnn.bfloat16, device=None):
    """Host x (E_l, T, Kd) bf16 with garbage past count_l, w (E_l, Kd, N) bf16, and device copies."""
    gen = torch.Generator().manual_seed(seed)
    valid = torch.arange(tokens).unsqueeze(0) < torch.tensor(counts).unsqueeze(1)  # (E_l, T)
    x = with_garbage_rows(torch.randn(num_experts, tokens, kd, generator=gen), valid, seed + 1).bfloat16()
    w = (torch.randn(num_experts, kd, n, generator=gen) / math.sqrt(kd)).bfloat16()
    return x, w, to_device(x, w, counts, None, w_dtype, device)


def to_device(x, w, counts, offsets, w_dtype, device):
    column = lambda values: ttnn.from_torch(  # noqa: E731  (E_l, 1) uint32 ROW_MAJOR
        torch.tensor(values, dtype=torch.int32).reshape(-1, 1),
        dtype=ttnn.uint32,
        layout=ttnn.ROW_MAJOR_LAYOUT,
        device=device,
    )
    return (
        ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device),
        ttnn.from_torch(w, dtype=w_dtype, layout=ttnn.TILE_LAYOUT, device=device),
        column(counts),
        None if offsets is None else column(offsets),
    )


def grouped_layout(counts: list[int], gap_tiles: int = 1) -> tuple[list[int], int]:
    """Tile-aligned offsets with `gap_tiles` unused row tiles before every block, and M."""
    offsets, row = [], 0
    for count in counts:
        row += 32 * gap_tiles
        offsets.append(row)
        row += 32 * row_tiles(count)
    return offsets, row + 32 * gap_tiles


def make_grouped(kd, n, counts, seed, w_dtype=ttnn.bfloat16, device=None):
    gen = torch.Generator().manual_seed(seed)
    offsets, rows = grouped_layout(counts)
    valid = torch.zeros(rows, dtype=torch.bool)
    for offset, count in zip(offsets, counts):
        valid[offset : offset + count] = True
    x = with_garbage_rows(torch.randn(rows, kd, generator=gen), valid, seed + 1).bfloat16()
    w = (torch.randn(len(counts), kd, n, generator=gen) / math.sqrt(kd)).bfloat16()
    return x, w, offsets, to_device(x, w, counts, offsets, w_dtype, device)


def counts_column(counts):
    return torch.tensor(counts, dtype=torch.int32).reshape(-1, 1)


# ---- checks shared by the tests -------------------------------------------------------------


MAX_ROW_BLOCK, MAX_OUTPUT_BLOCK = 8, 128  # the op's segment limits when L1 is not the constraint


def segments_per_core(counts: list[int], nt: int, num_cores: int, x_row_tiles: int) -> list[list[tuple]]:
    """Each core's segments (expert, first row tile, rows, first column, columns), as the op documents
    its split: every expert's active row tiles cut into row blocks of up to Mb = min(8, row tiles of x),
    halved while the units would be fewer than the cores (down to 1);
    units = one column of one row block, ordered (expert, row block, column) on the line of all active
    tiles; the even tile shares of that line; a core takes the units starting in its share and groups
    consecutive ones of a row block into segments of up to min(128, Mb * Nt) / rows columns."""
    row_block = min(MAX_ROW_BLOCK, x_row_tiles)
    output_block = min(MAX_OUTPUT_BLOCK, row_block * nt)
    while row_block > 1 and sum(math.ceil(row_tiles(c) / row_block) for c in counts) * nt < num_cores:
        row_block //= 2
    units, position = [], 0  # (start on the line, expert, first row, rows, column)
    for l, count in enumerate(counts):
        active = row_tiles(count)
        for r0 in range(0, active, row_block):
            rows = min(row_block, active - r0)
            for col in range(nt):
                units.append((position, l, r0, rows, col))
                position += rows
    base, extra = divmod(position, num_cores)
    cores, first = [], 0
    for core in range(num_cores):
        end = first + base + (1 if core < extra else 0)
        segments: list[tuple] = []
        for start, l, r0, rows, col in units:
            if not first <= start < end:
                continue
            last = segments[-1] if segments else None
            if last and last[:3] == (l, r0, rows) and last[3] + last[4] == col and last[4] < output_block // rows:
                segments[-1] = (l, r0, rows, last[3], last[4] + 1)
            else:
                segments.append((l, r0, rows, col, 1))
        cores.append(segments)
        first = end
    return cores


def w_reads(segments: list[list[tuple]]) -> tuple[list[int], dict[tuple, int]]:
    """How the weights leave DRAM, as the op documents their sharing: the cores whose segments all lie
    in one row block share weight round j with every such core whose j-th segment (in another row
    block of the same expert) has the same columns: one read per round, multicast to its other cores;
    a core with segments of two row blocks reads the weights of each of its segments itself. Returns
    the columns of each such solo read and the number of cores of each round (expert, first column,
    columns, j)."""
    solo, rounds = [], {}
    for core in segments:
        if len({(l, r0) for l, r0, *_ in core}) > 1:
            solo += [cols for *_, cols in core]
            continue
        for j, (l, _, _, col, cols) in enumerate(core):
            rounds[(l, col, cols, j)] = rounds.get((l, col, cols, j), 0) + 1
    return solo, rounds


def w_multicast_bytes(segments, kt, tile_bytes, halves=1):
    """L1 bytes the weight multicasts write: each round's blocks and a 4-byte flag per block into each of
    its other cores."""
    inner_block = max(d for d in range(1, 17) if kt % d == 0)
    per_column = halves * kt * tile_bytes + 4 * (kt // inner_block)
    return sum((cores - 1) * cols * per_column for (_, _, cols, _), cores in w_reads(segments)[1].items())


def check_work_counters(w_device, counts, kd, n, grid, x_device):
    """Exactly the active tile matmuls; weight pages read only for experts with tokens, each active
    weight tile once per weight round (once when every core's share lies in one row block), and once
    per segment of a core straddling two row blocks."""
    kt, nt = kd // 32, n // 32
    counters = ttnn.last_run_counters()
    assert counters["tile_matmuls"] == sum(row_tiles(c) for c in counts) * kt * nt
    w_arg = w_device.to_arg()
    traffic = counters["dram_buffers"].get(w_arg.address)
    active = sum(1 for c in counts if c > 0)
    if active == 0:
        assert traffic is None or traffic["page_reads"] == 0
        return
    assert traffic["unique_pages_read"] == active * kt * nt
    segments = segments_per_core(counts, nt, grid[0] * grid[1], row_tiles(x_device.to_arg().shape[-2]))
    solo, rounds = w_reads(segments)
    assert traffic["page_reads"] == (sum(solo) + sum(cols for _, _, cols, _ in rounds)) * kt
    assert traffic["bytes_read"] == traffic["page_reads"] * w_arg.page_size


def check_padded(out, x, w, counts, pcc):
    got = ttnn.to_torch(out).float()
    expected = golden.moe_bmm(x, w, counts_column(counts))
    assert got.shape == expected.shape
    for l, count in enumerate(counts):
        assert torch.count_nonzero(got[l, count:]) == 0, f"expert {l}: rows past count {count} are not zero"
    assert_pcc(expected, got, pcc, name="moe_bmm padded")


def check_grouped(out, x, w, counts, offsets, pcc):
    """Compares the active row tiles of every expert (the rest of the output is not written)."""
    got = ttnn.to_torch(out).float()
    expected = golden.moe_bmm(x, w, counts_column(counts), expert_offsets=counts_column(offsets))
    assert got.shape == expected.shape
    rows = torch.cat([torch.arange(o, o + 32 * row_tiles(c)) for o, c in zip(offsets, counts)]).long()
    for offset, count in zip(offsets, counts):
        tail = got[offset + count : offset + 32 * row_tiles(count)]
        assert torch.count_nonzero(tail) == 0, f"rows past count {count} at offset {offset} are not zero"
    if rows.numel():
        assert_pcc(expected[rows], got[rows], pcc, name="moe_bmm grouped")


def x_reads(segments: list[list[tuple]]) -> tuple[list[int], dict[tuple, int]]:
    """How x leaves DRAM, as the op documents its sharing: the cores whose segments all lie in one
    row block share round j of it (their j-th segments): one read per round, multicast to the round's
    other cores; a core with segments of two row blocks reads x for each of its segments itself.
    Returns the rows of each such solo read and the number of cores of each shared round
    (expert, first row, rows, j)."""
    solo, rounds = [], {}
    for core in segments:
        if len({(l, r0) for l, r0, *_ in core}) > 1:
            solo += [rows for _, _, rows, *_ in core]
            continue
        for j, (l, r0, rows, *_) in enumerate(core):
            rounds[(l, r0, rows, j)] = rounds.get((l, r0, rows, j), 0) + 1
    return solo, rounds


def check_x_reads(x_device, counts, kd, n, grid, w_tile_bytes=2048, halves=1):
    """x leaves DRAM once per round of a row block (the round's first core reads it and multicasts
    it into the other cores' cb_x), and once per segment of a core straddling two row blocks. The
    multicasts write each x block, and a 4-byte flag per k block, into every other core of a round;
    the weight multicasts (w_multicast_bytes) write the rest of the L1 bytes."""
    kt = kd // 32
    inner_block = max(d for d in range(1, 17) if kt % d == 0)
    counters = ttnn.last_run_counters()
    traffic = counters["dram_buffers"][x_device.to_arg().address]
    segments = segments_per_core(counts, n // 32, grid[0] * grid[1], row_tiles(x_device.to_arg().shape[-2]))
    solo, rounds = x_reads(segments)
    assert traffic["bytes_read"] == (sum(solo) + sum(rows for _, _, rows, _ in rounds)) * kt * 2048
    assert traffic["unique_pages_read"] == sum(row_tiles(c) for c in counts) * kt
    block_bytes = {key: key[2] * kt * 2048 + 4 * (kt // inner_block) for key in rounds}
    x_bytes = sum((cores - 1) * block_bytes[key] for key, cores in rounds.items())
    assert counters["noc_bytes_written_l1"] == x_bytes + w_multicast_bytes(segments, kt, w_tile_bytes, halves)


# ---- padded mode ----------------------------------------------------------------------------

SMALL_CASES = [(t, e) for t in (1, 31, 32, 100, 256) for e in (1, 2, 8, 32)]


@pytest.mark.parametrize("tokens,num_experts", SMALL_CASES, ids=[f"T{t}-E{e}" for t, e in SMALL_CASES])
def test_padded_every_small_shape(devices, tokens, num_experts):
    """Every T x E_l pair, small Kd/N; routing and grid rotate over the cases."""
    index = SMALL_CASES.index((tokens, num_experts))
    routing = ROUTINGS[index % len(ROUTINGS)]
    grid = list(GRIDS)[index % len(GRIDS)]
    device = devices[grid]
    kd, n = 64, 32
    counts = routed_counts(routing, num_experts, tokens, seed=index)
    x, w, (x_d, w_d, counts_d, _) = make_padded(num_experts, tokens, kd, n, counts, seed=index, device=device)
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    check_padded(out, x, w, counts, PCC_BF16)
    check_work_counters(w_d, counts, kd, n, GRIDS[grid], x_d)


@pytest.mark.parametrize("grid", GRIDS)
@pytest.mark.parametrize("routing", ROUTINGS)
def test_padded_routings_on_grids(devices, routing, grid):
    num_experts, tokens, kd, n = 8, 100, 256, 256
    counts = routed_counts(routing, num_experts, tokens, seed=7)
    x, w, (x_d, w_d, counts_d, _) = make_padded(num_experts, tokens, kd, n, counts, seed=11, device=devices[grid])
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    check_padded(out, x, w, counts, PCC_BF16)
    check_work_counters(w_d, counts, kd, n, GRIDS[grid], x_d)


@pytest.mark.parametrize("layout", ["padded", "grouped"])
@pytest.mark.parametrize("counts", [[20, 32, 0, 5], [70, 3, 96, 0]], ids=["decode", "prefill"])
def test_expert_x_rows_are_shared_by_multicast(devices, layout, counts):
    """Decode-like (one row tile per expert) and prefill-like (up to three) routing over many
    columns on 6 cores: the cores of one row block get its x rows by one DRAM read and a multicast;
    only a core straddling two row blocks reads its rows itself; never once per output column."""
    kd, n, grid = 256, 1024, "2x3"
    if layout == "padded":
        x, w, (x_d, w_d, counts_d, _) = make_padded(4, 96, kd, n, counts, seed=2, device=devices[grid])
        out = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
        check_padded(out, x, w, counts, PCC_BF16)
    else:
        x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=2, device=devices[grid])
        out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d)
        check_grouped(out, x, w, counts, offsets, PCC_BF16)
    check_work_counters(w_d, counts, kd, n, GRIDS[grid], x_d)
    check_x_reads(x_d, counts, kd, n, GRIDS[grid])


def test_row_block_wider_than_a_segment_shares_x_per_round(devices):
    """8 row tiles x 160 columns on 6 cores: each core's ~26 columns of the row block take two
    segments (16 columns of partial sums at most), so the block's x is multicast in two rounds,
    each read from DRAM once."""
    counts, kd, n, grid = [256], 64, 5120, "2x3"
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=14, device=devices[grid])
    check_grouped(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d), x, w, counts, offsets, PCC_BF16)
    check_work_counters(w_d, counts, kd, n, GRIDS[grid], x_d)
    segments = segments_per_core(counts, n // 32, 6, row_tiles(x_d.to_arg().shape[-2]))
    assert max(x_reads(segments)[1][(0, 0, 8, j)] for j in (0, 1)) == 6  # two rounds of all 6 cores
    check_x_reads(x_d, counts, kd, n, GRIDS[grid])


def test_x_shared_by_cores_that_are_not_consecutive(devices):
    """10 row tiles x 32 columns on 64 cores: row blocks of 8 and 2 (64 units, one per core on
    average), 5 output tiles per core against units of 8 in the first block, so some of its cores
    start no unit; the sender multicasts to runs of receivers spread over the grid's rows."""
    counts, kd, n, grid = [300], 128, 1024, "8x8"
    x, w, (x_d, w_d, counts_d, _) = make_padded(1, 320, kd, n, counts, seed=15, device=devices[grid])
    check_padded(ttnn_moe.moe_bmm(x_d, w_d, counts_d), x, w, counts, PCC_BF16)
    check_work_counters(w_d, counts, kd, n, GRIDS[grid], x_d)
    segments = segments_per_core(counts, n // 32, 64, row_tiles(320))
    first_block = [core for core, segs in enumerate(segments) if segs and segs[0][1] == 0]
    assert len(first_block) < first_block[-1] - first_block[0] + 1  # gaps inside the round
    check_x_reads(x_d, counts, kd, n, GRIDS[grid])


@pytest.mark.parametrize("kd", [96, 544, 1024], ids=["one-k-block", "17-k-blocks", "2-k-blocks"])
def test_sharing_x_changes_no_bit(devices, kd):
    """One core computing everything (no x shared) and 6 or 64 cores (x multicast between them, an
    odd or even number of k blocks per segment) give bitwise the same output."""
    counts = routed_counts("skewed", 4, 200, seed=16)
    outputs = []
    for grid in GRIDS:
        x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, 256, counts, seed=17, device=devices[grid])
        out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d)
        check_x_reads(x_d, counts, kd, 256, GRIDS[grid])
        check_grouped(out, x, w, counts, offsets, PCC_BF16)
        outputs.append(ttnn.to_torch(out))
    for other in outputs[1:]:
        assert torch.equal(outputs[0].view(torch.int16), other.view(torch.int16))


def test_a_device_without_noc_coordinates_is_refused(devices):
    """The x multicast addresses cores by the device's NOC coordinates: a target that gives none
    gets a ValueError naming them, before anything runs."""
    limits = devices["2x3"].device_limits()
    bare = _C.program.DeviceLimits(
        grid=limits.grid,
        l1_bytes_per_core=limits.l1_bytes_per_core,
        max_cbs_per_core=limits.max_cbs_per_core,
        max_semaphores_per_core=limits.max_semaphores_per_core,
        dram_alignment=limits.dram_alignment,
    )
    context = _C.ops.MeshContext(kernels_root=str(ttnn_moe.paths.kernels_dir()), device=bare)
    _, _, (x_d, w_d, counts_d, _) = make_padded(2, 32, 64, 64, [3, 0], seed=18, device=devices["2x3"])
    inputs = [x_d.to_arg(), w_d.to_arg(), counts_d.to_arg()]
    op = _C.ops.moe_bmm
    attributes = op.Attributes()
    outputs = op.output_specs(attributes, inputs, context)
    with pytest.raises(
        ValueError, match=r"moe_bmm: the target gave no NOC coordinates of the worker cores \(0 for a 2x3 grid\)"
    ):
        op.program(attributes, inputs + list(outputs), context)
    with pytest.raises(ValueError, match=r"worker_noc_cores must list the 6 cores of the grid, got 2"):
        _C.program.DeviceLimits(
            grid=limits.grid,
            l1_bytes_per_core=limits.l1_bytes_per_core,
            max_cbs_per_core=limits.max_cbs_per_core,
            max_semaphores_per_core=limits.max_semaphores_per_core,
            dram_alignment=limits.dram_alignment,
            worker_noc_cores=[_C.program.CoreCoord(1, 1), _C.program.CoreCoord(2, 1)],
        )


@pytest.mark.parametrize("layout", ["padded", "grouped"])
def test_expert_beyond_one_row_block(devices, layout):
    """An expert with 330 rows has 11 row tiles: two row blocks (8 + 3, the last partial); the other
    expert's rows stay in one. On 6 cores most shares straddle two row blocks, so the weights are read
    once per row block (three times in all)."""
    counts, kd, n, grid = [330, 40], 256, 256, "2x3"
    if layout == "padded":
        x, w, (x_d, w_d, counts_d, _) = make_padded(2, 352, kd, n, counts, seed=12, device=devices[grid])
        check_padded(ttnn_moe.moe_bmm(x_d, w_d, counts_d), x, w, counts, PCC_BF16)
    else:
        x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=12, device=devices[grid])
        out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d)
        check_grouped(out, x, w, counts, offsets, PCC_BF16)
    check_work_counters(w_d, counts, kd, n, GRIDS[grid], x_d)
    assert ttnn.last_run_counters()["dram_buffers"][w_d.to_arg().address]["page_reads"] == 3 * (kd // 32) * (n // 32)


@pytest.mark.parametrize("kd,n", [(32, 1024), (1024, 32), (1024, 1024), (256, 32)])
def test_padded_wide_inner_and_outer_dims(devices, kd, n):
    num_experts, tokens = 2, 100
    counts = routed_counts("skewed", num_experts, tokens, seed=3)
    x, w, (x_d, w_d, counts_d, _) = make_padded(num_experts, tokens, kd, n, counts, seed=5, device=devices["8x8"])
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    check_padded(out, x, w, counts, PCC_BF16)
    check_work_counters(w_d, counts, kd, n, GRIDS["8x8"], x_d)


@pytest.mark.parametrize("w_dtype", [ttnn.bfloat16, ttnn.bfloat8_b], ids=["bf16", "bfp8"])
def test_weight_column_beyond_l1_is_read_once(devices, w_dtype):
    """Kd=16384: a bf16 column is 512 tiles * 2 KiB = 1 MiB, more than a core's L1; the op goes
    through it in k blocks with the partial sums (fp32 here) in L1, reading each weight tile once.
    fp32 accumulation: a 16384-long sum in bf16 DST would miss the PCC bar by itself."""
    num_experts, tokens, kd, n = 2, 64, 16384, 64
    counts = [64, 33]
    x, w, (x_d, w_d, counts_d, _) = make_padded(
        num_experts, tokens, kd, n, counts, seed=81, w_dtype=w_dtype, device=devices["2x3"]
    )
    config = WormholeComputeKernelConfig(
        math_fidelity=MathFidelity.HiFi4, fp32_dest_acc_en=True, math_approx_mode=False, packer_l1_acc=False
    )
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, compute_kernel_config=config)
    check_padded(out, x, w, counts, PCC_BF16 if w_dtype == ttnn.bfloat16 else PCC_BFP8)
    check_work_counters(w_d, counts, kd, n, GRIDS["2x3"], x_d)


def test_no_tokens_at_all_reads_no_weights_and_writes_zeros(devices):
    counts = [0, 0, 0]
    x, w, (x_d, w_d, counts_d, _) = make_padded(3, 64, 64, 64, counts, seed=2, device=devices["2x3"])
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    assert torch.count_nonzero(ttnn.to_torch(out)) == 0
    check_work_counters(w_d, counts, 64, 64, GRIDS["2x3"], x_d)


@pytest.mark.parametrize("routing", ["uniform", "zero_experts"])
def test_padded_bfloat8_weights(devices, routing):
    num_experts, tokens, kd, n = 8, 100, 256, 256
    counts = routed_counts(routing, num_experts, tokens, seed=21)
    x, w, (x_d, w_d, counts_d, _) = make_padded(
        num_experts, tokens, kd, n, counts, seed=22, w_dtype=ttnn.bfloat8_b, device=devices["8x8"]
    )
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    check_padded(out, x, w, counts, PCC_BFP8)
    check_work_counters(w_d, counts, kd, n, GRIDS["8x8"], x_d)


def test_compute_kernel_config_fp32_accumulation(devices):
    num_experts, tokens, kd, n = 2, 64, 1024, 64
    counts = [64, 17]
    x, w, (x_d, w_d, counts_d, _) = make_padded(num_experts, tokens, kd, n, counts, seed=31, device=devices["2x3"])
    config = WormholeComputeKernelConfig(
        math_fidelity=MathFidelity.HiFi2, fp32_dest_acc_en=True, math_approx_mode=False, packer_l1_acc=True
    )
    out, status = ttnn_moe.moe_bmm(x_d, w_d, counts_d, compute_kernel_config=config, return_status=True)
    check_padded(out, x, w, counts, PCC_BF16)
    # The config reaches the compute kernel's descriptor.
    io = [t.to_arg() for t in (x_d, w_d, counts_d, out, status)]
    context = _C.ops.MeshContext(kernels_root=str(ttnn_moe.paths.kernels_dir()), device=emulator_device_limits(2, 3))
    attributes = _C.ops.moe_bmm.Attributes(math_fidelity=MathFidelity.HiFi2, fp32_dest_acc_en=True)
    ((_, program),) = _C.ops.moe_bmm.program(attributes, io, context).mesh_programs
    compute = [k for k in program.kernels if k.is_compute()]
    assert len(compute) == 1
    assert compute[0].config.math_fidelity == MathFidelity.HiFi2 and compute[0].config.fp32_dest_acc_en


# ---- grouped mode ---------------------------------------------------------------------------


@pytest.mark.parametrize("routing", ROUTINGS)
def test_grouped_packed_input(devices, routing):
    num_experts, tokens, kd, n = 8, 100, 256, 128
    grid = list(GRIDS)[ROUTINGS.index(routing) % len(GRIDS)]
    counts = routed_counts(routing, num_experts, tokens, seed=41)
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(kd, n, counts, seed=42, device=devices[grid])
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d)
    check_grouped(out, x, w, counts, offsets, PCC_BF16)
    check_work_counters(w_d, counts, kd, n, GRIDS[grid], x_d)


def test_grouped_bfloat8_weights(devices):
    counts = routed_counts("skewed", 4, 100, seed=51)
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(
        256, 256, counts, seed=52, w_dtype=ttnn.bfloat8_b, device=devices["8x8"]
    )
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d)
    check_grouped(out, x, w, counts, offsets, PCC_BFP8)
    check_work_counters(w_d, counts, 256, 256, GRIDS["8x8"], x_d)


# ---- bfloat4_b weights: against the golden on the weights as bfloat4_b stores them -----------


def check_error_bound(out_rows, x_rows, w_rows, counts, kt, offsets=None):
    """|got - golden| <= (Kt + 1) * 2^-9 * (|x| @ |w|) element by element: with bfloat16 DST each of
    the Kt tile-product accumulations rounds once to bf16 (half an ulp, 2^-9 relative, of a partial
    sum no larger than |x| @ |w|)."""
    column = None if offsets is None else counts_column(offsets)
    expected = golden.moe_bmm(x_rows, w_rows, counts_column(counts), expert_offsets=column)
    magnitude = golden.moe_bmm(x_rows.float().abs(), w_rows.abs(), counts_column(counts), expert_offsets=column)
    got = ttnn.to_torch(out_rows).float()
    bound = (kt + 1) * 2.0**-9 * magnitude
    if offsets is not None:  # only the active row tiles are written
        rows = torch.cat([torch.arange(o, o + 32 * row_tiles(c)) for o, c in zip(offsets, counts)]).long()
        expected, got, bound = expected[rows], got[rows], bound[rows]
    excess = (got - expected).abs() - bound
    assert (excess <= 0).all(), f"error exceeds the bound by {excess.max().item():.3g}"


def test_bfloat4_b_weights_are_576_byte_tiles_rounded_like_tt_metal(devices):
    w = torch.randn(2, 64, 96, generator=torch.Generator().manual_seed(71)) * 3
    w_d = ttnn.from_torch(w, dtype=ttnn.bfloat4_b, layout=ttnn.TILE_LAYOUT, device=devices["1x1"])
    assert w_d.to_arg().page_size == 576
    assert torch.equal(ttnn.to_torch(w_d), golden.round_to_block_float(w, "bfloat4_b"))


@pytest.mark.parametrize("routing", ["uniform", "zero_experts", "one_expert"])
def test_padded_bfloat4_weights(devices, routing):
    """T = 100 (not a multiple of 32); zero_experts and one_expert leave experts without tokens."""
    num_experts, tokens, kd, n = 8, 100, 256, 256
    counts = routed_counts(routing, num_experts, tokens, seed=91)
    assert 0 in counts or routing == "uniform"
    x, w, (x_d, w_d, counts_d, _) = make_padded(
        num_experts, tokens, kd, n, counts, seed=92, w_dtype=ttnn.bfloat4_b, device=devices["8x8"]
    )
    w_stored = golden.round_to_block_float(w, "bfloat4_b")
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    check_padded(out, x, w_stored, counts, PCC_BFP4)
    check_error_bound(out, x, w_stored, counts, kd // 32)
    check_work_counters(w_d, counts, kd, n, GRIDS["8x8"], x_d)


def test_grouped_bfloat4_weights(devices):
    counts = [0, 45, 7, 64, 0, 1]
    kd, n = 128, 192
    x, w, offsets, (x_d, w_d, counts_d, offsets_d) = make_grouped(
        kd, n, counts, seed=93, w_dtype=ttnn.bfloat4_b, device=devices["2x3"]
    )
    w_stored = golden.round_to_block_float(w, "bfloat4_b")
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d)
    check_grouped(out, x, w_stored, counts, offsets, PCC_BFP4)
    check_error_bound(out, x, w_stored, counts, kd // 32, offsets=offsets)
    check_work_counters(w_d, counts, kd, n, GRIDS["2x3"], x_d)


# ---- determinism and the program cache ------------------------------------------------------


@pytest.mark.parametrize("grouped", [False, True], ids=["padded", "grouped"])
def test_two_runs_are_bitwise_equal(devices, grouped):
    counts = routed_counts("skewed", 8, 100, seed=61)
    if grouped:
        _, _, _, (x_d, w_d, counts_d, offsets_d) = make_grouped(256, 64, counts, seed=62, device=devices["8x8"])
    else:
        _, _, (x_d, w_d, counts_d, offsets_d) = make_padded(8, 100, 256, 64, counts, seed=62, device=devices["8x8"])
    first = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d))
    second = ttnn.to_torch(ttnn_moe.moe_bmm(x_d, w_d, counts_d, expert_offsets=offsets_d))
    assert torch.equal(first.view(torch.int16), second.view(torch.int16))


def test_same_shapes_hit_the_program_cache_and_build_nothing(devices):
    counts = [40, 0, 3]
    _, _, (x_d, w_d, counts_d, _) = make_padded(3, 48, 96, 64, counts, seed=71, device=devices["2x3"])
    ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    before = _C.ops.moe_bmm.program_cache_info()
    new_counts = [1, 47, 0]  # new tensors (new addresses), same shapes
    x, w, (x_d, w_d, counts_d, _) = make_padded(3, 48, 96, 64, new_counts, seed=72, device=devices["2x3"])
    out = ttnn_moe.moe_bmm(x_d, w_d, counts_d)
    after = _C.ops.moe_bmm.program_cache_info()
    assert after["hits"] == before["hits"] + 1
    assert after["misses"] == before["misses"]
    assert ttnn.last_run_counters()["kernel_builds"] == 0
    check_padded(out, x, w, new_counts, PCC_BF16)  # the addresses were rewritten


# ---- bad input ------------------------------------------------------------------------------


def _tile(t, dtype=ttnn.bfloat16, device=None):
    return ttnn.from_torch(t, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)


def _column(values, device, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT):
    return ttnn.from_torch(
        torch.tensor(values, dtype=torch.int32).reshape(-1, 1), dtype=dtype, layout=layout, device=device
    )


def test_bad_inputs_raise_naming_the_value(devices):
    dev = devices["1x1"]
    x = _tile(torch.randn(2, 32, 64), device=dev)
    w = _tile(torch.randn(2, 64, 32), device=dev)
    counts = _column([3, 4], dev)
    with pytest.raises(ValueError, match="Kd=96"):
        ttnn_moe.moe_bmm(x, _tile(torch.randn(2, 96, 32), device=dev), counts)
    with pytest.raises(ValueError, match="x has 3 experts"):
        ttnn_moe.moe_bmm(_tile(torch.randn(3, 32, 64), device=dev), w, counts)
    with pytest.raises(ValueError, match="w must be in TILE layout, got ROW_MAJOR"):  # x may be either
        ttnn_moe.moe_bmm(
            x,
            ttnn.from_torch(torch.randn(2, 64, 32), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=dev),
            counts,
        )
    with pytest.raises(ValueError, match="x must be bfloat16, got float32"):
        ttnn_moe.moe_bmm(_tile(torch.randn(2, 32, 64), dtype=ttnn.float32, device=dev), w, counts)
    with pytest.raises(ValueError, match="num_routed_tokens must be uint32, got int32"):
        ttnn_moe.moe_bmm(x, w, _column([3, 4], dev, dtype=ttnn.int32))
    with pytest.raises(ValueError, match=r"num_routed_tokens must be \(E_l, 1\) = \(2, 1\), got \(3, 1\)"):
        ttnn_moe.moe_bmm(x, w, _column([3, 4, 5], dev))
    with pytest.raises(ValueError, match="N \\(w.shape\\[-1\\]\\) must be a positive multiple of 32, got 40"):
        ttnn_moe.moe_bmm(x, _tile(torch.randn(2, 64, 40), device=dev), counts)
    with pytest.raises(ValueError, match=r"num_routed_tokens\[1\] = 33 exceeds T = 32"):
        ttnn_moe.moe_bmm(x, w, _column([3, 33], dev))
    with pytest.raises(TypeError, match="torch.Tensor"):
        ttnn_moe.moe_bmm(torch.randn(2, 32, 64), w, counts)


def test_bad_grouped_inputs_raise_naming_the_value(devices):
    dev = devices["1x1"]
    x = _tile(torch.randn(128, 64), device=dev)
    w = _tile(torch.randn(2, 64, 32), device=dev)
    counts = _column([3, 4], dev)
    with pytest.raises(ValueError, match=r"expert_offsets\[1\] = 40 is not a multiple of 32"):
        ttnn_moe.moe_bmm(x, w, counts, expert_offsets=_column([0, 40], dev))
    with pytest.raises(ValueError, match=r"rows \[96, 136\)"):
        ttnn_moe.moe_bmm(x, w, _column([3, 40], dev), expert_offsets=_column([0, 96], dev))
    with pytest.raises(ValueError, match="expert_offsets must be in ROW_MAJOR layout, got TILE"):
        ttnn_moe.moe_bmm(x, w, counts, expert_offsets=_column([0, 32], dev, layout=ttnn.TILE_LAYOUT))
    with pytest.raises(ValueError, match=r"x must be \(M, Kd\) in grouped mode, got shape \(2, 64, 64\)"):
        ttnn_moe.moe_bmm(_tile(torch.randn(2, 64, 64), device=dev), w, counts, expert_offsets=_column([0, 32], dev))


def test_routing_tables_beyond_the_l1_budget_raise():
    """Each core keeps two copies of the (E_l, 1) counts/offsets in L1: a huge E_l cannot fit."""
    P = _C.program
    experts = 5000
    x = P.TensorArg([experts, 32, 32], P.DataFormat.Float16_b, P.Layout.TILE, 0, 2048, experts)
    w = P.TensorArg([experts, 32, 32], P.DataFormat.Float16_b, P.Layout.TILE, 0, 2048, experts)
    counts = P.TensorArg([experts, 1], P.DataFormat.UInt32, P.Layout.ROW_MAJOR, 0, 4, experts)
    with pytest.raises(ValueError, match=r"B of L1 per core for E_l=5000, more than the 1048576 B budget"):
        _C.ops.moe_bmm.output_specs(
            _C.ops.moe_bmm.Attributes(),
            [x, w, counts],
            _C.ops.MeshContext(kernels_root="", device=emulator_device_limits(8, 8)),
        )
