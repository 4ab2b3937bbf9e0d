"""moe_gate on the emulator against ttnn_moe.golden.moe_gate (torch, lower-id tie-break): indices
exact, weights by PCC and max error; adversarial scores; DeepSeek-V3 dimensions; transformers'
router; the outputs fed unconverted to prepare_moe_routing_tensors; work counters; a row tile's expert
tiles spread over a team of cores; bad arguments."""

from __future__ import annotations

import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_device_per_grid_fixture, emu_devices_by_name_fixture
from hf_moe import hf_moe_with
from routing_cases import single_device_mapping
from ttnn_moe.testing import assert_equal_exact, assert_pcc, max_abs_error

import ttnn_moe
from models.deepseek_v3.config import DeepseekV3MoEConfig
from ttnn_moe import golden

PCC = 0.9999
DEEPSEEK = {"n_group": 8, "topk_group": 4, "top_k": 8, "routed_scaling_factor": 2.5}

device = emu_device_per_grid_fixture([(1, 1), (2, 3)])
grids = emu_devices_by_name_fixture({"1x1": (1, 1), "8x8": (8, 8), "8x1": (8, 1), "4x1": (4, 1), "3x2": (3, 2)})


def gate_inputs(T, H, E, seed, bias_std=0.02):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(T, H, generator=gen).bfloat16()
    gate_weight = torch.randn(E, H, generator=gen) / H**0.5
    bias = bias_std * torch.randn(E, generator=gen)
    return x, gate_weight, bias


def run_gate(device, x, gate_weight, bias, weight_dtype=ttnn.float32, **routing):
    out = ttnn_moe.moe_gate(
        ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device),
        ttnn.from_torch(gate_weight, dtype=weight_dtype, layout=ttnn.TILE_LAYOUT, device=device),
        ttnn.from_torch(bias, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device),
        **routing,
    )
    return out


def check_against_golden(out, x, gate_weight, bias, **routing):
    """Indices exactly the golden's (order included), weights PCC >= 0.9999 and within a bf16 ulp."""
    T, K = x.shape[0], routing["top_k"]
    want_ids, want_weights = golden.moe_gate(x, gate_weight, bias, **routing)
    got_ids, got_weights = ttnn.to_torch(out.topk_indices), ttnn.to_torch(out.topk_weights)
    assert tuple(got_ids.shape) == tuple(got_weights.shape) == (1, T, K)
    assert_equal_exact(want_ids, got_ids.reshape(T, K).to(torch.int32), "topk_indices")
    if T > 1:
        assert_pcc(want_weights.float(), got_weights.reshape(T, K).float(), PCC, "topk_weights")
    assert max_abs_error(want_weights.float(), got_weights.reshape(T, K).float()) <= 2**-7 * float(
        want_weights.float().abs().max()
    )
    return got_ids.reshape(T, K).long(), got_weights.reshape(T, K).float()


ROUTINGS = {
    "deepseek": {"n_group": 8, "topk_group": 4, "top_k": 8, "routed_scaling_factor": 2.5},
    "unnormalized": {"n_group": 8, "topk_group": 4, "top_k": 8, "routed_scaling_factor": 1.0, "norm_topk_prob": False},
    "4groups_top6": {"n_group": 4, "topk_group": 2, "top_k": 6, "routed_scaling_factor": 2.5},
    "one_group_top1": {"n_group": 1, "topk_group": 1, "top_k": 1, "routed_scaling_factor": 1.5},
    "2groups_top2": {"n_group": 2, "topk_group": 1, "top_k": 2, "routed_scaling_factor": 2.5},
}


@pytest.mark.parametrize("routing", sorted(ROUTINGS))
@pytest.mark.parametrize("T, E", [(1, 64), (33, 256), (100, 64), (7, 16)], ids=lambda v: str(v))
def test_random_routing_matches_golden(device, routing, T, E):
    x, gate_weight, bias = gate_inputs(T, 256, E, seed=T + E)
    out = run_gate(device, x, gate_weight, bias, **ROUTINGS[routing])
    check_against_golden(out, x, gate_weight, bias, **ROUTINGS[routing])


@pytest.mark.parametrize("E", [8, 48])
def test_experts_not_a_multiple_of_32(device, E):
    """The last expert tile of gate_weight is padded; its padding rows are never ranked."""
    routing = ROUTINGS["2groups_top2"]
    x, gate_weight, bias = gate_inputs(37, 256, E, seed=E)
    out = run_gate(device, x, gate_weight, bias, **routing)
    check_against_golden(out, x, gate_weight, bias, **routing)


def test_bfloat16_gate_weight(device):
    x, gate_weight, bias = gate_inputs(45, 512, 256, seed=4)
    gate_weight = gate_weight.bfloat16()
    out = run_gate(device, x, gate_weight, bias, weight_dtype=ttnn.bfloat16, **DEEPSEEK)
    check_against_golden(out, x, gate_weight, bias, **DEEPSEEK)


def test_all_equal_scores_take_the_lowest_groups_and_ids(device):
    """x = 0: every score is sigmoid(0) = 0.5 exactly, every group ties: groups 0..3, experts 0..7."""
    x, gate_weight, _ = gate_inputs(40, 256, 256, seed=1)
    out = run_gate(device, torch.zeros_like(x), gate_weight, torch.zeros(256), **DEEPSEEK)
    ids, weights = check_against_golden(out, torch.zeros_like(x), gate_weight, torch.zeros(256), **DEEPSEEK)
    assert ids.tolist() == [list(range(8))] * 40
    assert weights.unique().tolist() == [2.5 / 8]


def test_exact_ties_in_the_bias_go_to_the_lower_ids(device):
    """Equal scores (x = 0) and a bias with exact ties inside and across groups: the order of the
    chosen experts is by bias, then by id, and group ties go to the lower group."""
    bias = torch.zeros(256)
    bias[[200, 40, 72, 8]] = 0.25  # the best experts of groups 6, 1, 2, 0, tied
    bias[[201, 9]] = 0.125  # the second best of groups 6 and 0
    x, gate_weight, _ = gate_inputs(3, 256, 256, seed=2)
    x = torch.zeros_like(x)
    out = run_gate(device, x, gate_weight, bias, **DEEPSEEK)
    ids, _ = check_against_golden(out, x, gate_weight, bias, **DEEPSEEK)
    # Group scores: 0 and 6 1.375, 1 and 2 1.25, the rest 1.0: groups 0, 1, 2, 6 are kept. The four
    # tied 0.75s come by id, then the two 0.625s, then the lowest 0.5s of the kept groups (0, 1).
    assert ids.tolist() == [[8, 40, 72, 200, 9, 201, 0, 1]] * 3


def test_near_ties_separated_by_small_gaps(device):
    """Logits 1e-4 apart (far above the fp32 accumulation error, far below any realistic gap): the
    device ranks them as the golden does."""
    T, H, E = 64, 256, 256
    gen = torch.Generator().manual_seed(9)
    direction = torch.randn(H, generator=gen)
    direction = direction / direction.norm()
    levels = torch.randperm(E, generator=gen).float() * 1e-4  # distinct, 1e-4 apart
    gate_weight = (1.0 + levels).unsqueeze(1) * direction  # logit_e = (1 + level_e) * <x, u>
    x = (torch.rand(T, 1, generator=gen) + 0.5) * direction.unsqueeze(0)
    x = x.bfloat16()
    out = run_gate(device, x, gate_weight, torch.zeros(E), **DEEPSEEK)
    check_against_golden(out, x, gate_weight, torch.zeros(E), **DEEPSEEK)


def test_dominating_bias_wins_the_choice_but_not_the_weight(device):
    T, E = 40, 256
    x, gate_weight, _ = gate_inputs(T, 256, E, seed=6)
    bias = torch.zeros(E)
    bias[[3, 100, 250]] = 10.0
    out = run_gate(device, x, gate_weight, bias, **DEEPSEEK)
    ids, weights = check_against_golden(out, x, gate_weight, bias, **DEEPSEEK)
    assert ids[:, :3].sort(dim=1).values.tolist() == [[3, 100, 250]] * T
    scores = torch.sigmoid(x.float() @ gate_weight.T).gather(1, ids)
    expected = scores / scores.sum(dim=1, keepdim=True) * 2.5
    torch.testing.assert_close(weights, expected, rtol=2**-7, atol=0)


def test_deepseek_v3_dimensions_and_work_counters(device):
    """H=7168, 256 experts, 8 groups, top-4 groups, top-8: exact indices, the matmul work is exactly
    ceil(T/32) * E/32 * H/32 tile matmuls, and each core reads the gate weight once per row tile."""
    T, H, E = 40, 7168, 256
    x, gate_weight, bias = gate_inputs(T, H, E, seed=11, bias_std=0.05)
    x_d = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    w_d = ttnn.from_torch(gate_weight, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    b_d = ttnn.from_torch(bias, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    out = ttnn_moe.moe_gate(x_d, w_d, b_d, **DEEPSEEK)
    counters = ttnn.last_run_counters()
    check_against_golden(out, x, gate_weight, bias, **DEEPSEEK)
    row_tiles = 2
    assert counters["tile_matmuls"] == row_tiles * (E // 32) * (H // 32)
    w_traffic = counters["dram_buffers"][w_d.to_arg().address]
    assert w_traffic["unique_pages_read"] == (E // 32) * (H // 32)
    assert w_traffic["bytes_read"] == row_tiles * E * H * 4


def test_matches_transformers_router(device):
    """transformers' DeepseekV3TopkRouter on the same weights: the same experts (its top-k is
    unsorted, so rows are compared sorted by id) and weights."""
    config = DeepseekV3MoEConfig.mini()
    T, H, E = 48, config.hidden_size, config.n_routed_experts
    x, gate_weight, bias = gate_inputs(T, H, E, seed=13, bias_std=0.05)
    state = {"gate.weight": gate_weight, "gate.e_score_correction_bias": bias}
    hf = hf_moe_with({**state, **_zero_experts(config)}, config)
    with torch.no_grad():
        _, hf_weights, hf_ids = hf.gate(x.float())
    routing = {
        "n_group": config.n_group,
        "topk_group": config.topk_group,
        "top_k": config.num_experts_per_tok,
        "routed_scaling_factor": config.routed_scaling_factor,
        "norm_topk_prob": config.norm_topk_prob,
    }
    ids, weights = check_against_golden(
        run_gate(device, x, gate_weight, bias, **routing), x, gate_weight, bias, **routing
    )
    order, hf_order = ids.sort(dim=1), hf_ids.sort(dim=1)
    assert_equal_exact(hf_order.values, order.values, "topk_indices vs transformers")
    # transformers keeps fp32 weights, ours are bfloat16: at most one bf16 step (2^-9 below 0.5) apart.
    hf_rounded = hf_weights.gather(1, hf_order.indices).bfloat16().float()
    torch.testing.assert_close(weights.gather(1, order.indices), hf_rounded, atol=2**-9, rtol=0)


def _zero_experts(config):
    H, I, Is = config.hidden_size, config.moe_intermediate_size, config.shared_intermediate_size
    state = {}
    for e in range(config.n_routed_experts):
        for name, shape in (("gate_proj", (I, H)), ("up_proj", (I, H)), ("down_proj", (H, I))):
            state[f"experts.{e}.{name}.weight"] = torch.zeros(shape)
    for name, shape in (("gate_proj", (Is, H)), ("up_proj", (Is, H)), ("down_proj", (H, Is))):
        state[f"shared_experts.{name}.weight"] = torch.zeros(shape)
    return state


def test_outputs_feed_prepare_moe_routing_tensors_unconverted(device):
    T, E = 50, 64
    routing = ROUTINGS["4groups_top6"]
    x, gate_weight, bias = gate_inputs(T, 256, E, seed=21)
    out = run_gate(device, x, gate_weight, bias, **routing)
    mapping = single_device_mapping(E)
    tables = ttnn_moe.prepare_moe_routing_tensors(
        out.topk_indices,
        out.topk_weights,
        ttnn.from_torch(mapping, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device),
    )
    want_ids, want_weights = golden.moe_gate(x, gate_weight, bias, **routing)
    got_weights = ttnn.to_torch(out.topk_weights).reshape(T, -1)
    want = golden.prepare_moe_routing_tensors(want_ids, got_weights, mapping)
    for name, w, g in zip(
        ("num_routed_tokens", "routed_tokens", "routed_token_weights", "token_idx_map"), want, tables
    ):
        assert_equal_exact(w, ttnn.to_torch(g), name)


def test_program_is_cached(device):
    x, gate_weight, bias = gate_inputs(8, 256, 64, seed=3)
    routing = ROUTINGS["4groups_top6"]
    run_gate(device, x, gate_weight, bias, **routing)
    before = ttnn_moe._C.ops.moe_gate.program_cache_info()
    x2, gate_weight2, bias2 = gate_inputs(8, 256, 64, seed=5)
    out = run_gate(device, x2, gate_weight2, bias2, **routing)
    after = ttnn_moe._C.ops.moe_gate.program_cache_info()
    assert (after["hits"], after["misses"]) == (before["hits"] + 1, before["misses"])
    check_against_golden(out, x2, gate_weight2, bias2, **routing)


@pytest.mark.parametrize("grid", ["1x1", "8x8"])
def test_uint16_indices_are_the_uint32_ones_narrowed(grids, grid):
    """indices_dtype=uint16 (what tt-metal's all_to_all_dispatch takes): the golden's ids in uint16,
    the weights bit for bit those of the uint32 run, on one core and spread over a team of 8."""
    T, H, E = 33, 64, 256
    x, gate_weight, bias = gate_inputs(T, H, E, seed=21)
    device = grids[grid]
    wide = run_gate(device, x, gate_weight, bias, **DEEPSEEK)
    narrow = run_gate(device, x, gate_weight, bias, indices_dtype=ttnn.uint16, **DEEPSEEK)
    assert narrow.topk_indices.dtype == ttnn.uint16
    ids, _ = check_against_golden(narrow, x, gate_weight, bias, **DEEPSEEK)
    assert_equal_exact(ttnn.to_torch(wide.topk_indices).reshape(T, 8).long(), ids, "uint32 vs uint16 ids")
    assert torch.equal(ttnn.to_torch(wide.topk_weights), ttnn.to_torch(narrow.topk_weights))


def _bad_call(
    device,
    T=8,
    H=64,
    E=64,
    x_dtype=ttnn.bfloat16,
    x_layout=ttnn.TILE_LAYOUT,
    w_shape=None,
    bias_shape=None,
    bias_dtype=ttnn.float32,
    **routing,
):
    args = {**ROUTINGS["4groups_top6"], **routing}
    x = ttnn.from_torch(torch.zeros(T, H), dtype=x_dtype, layout=x_layout, device=device)
    w = ttnn.from_torch(torch.zeros(w_shape or (E, H)), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    b = ttnn.from_torch(torch.zeros(bias_shape or (E,)), dtype=bias_dtype, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    return ttnn_moe.moe_gate(x, w, b, **args)


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"x_dtype": ttnn.float32}, ValueError, "x must be bfloat16, got float32"),
        ({"x_layout": ttnn.ROW_MAJOR_LAYOUT}, ValueError, "x must be in TILE layout"),
        ({"H": 48}, ValueError, r"H \(x.shape\[-1\]\) must be a positive multiple of 32, got 48"),
        ({"w_shape": (64, 96)}, ValueError, r"gate_weight \(64, 96\) must be \(E, H\) with H=64"),
        ({"bias_shape": (32,)}, ValueError, r"e_score_correction_bias \(32,\) must have E=64 entries"),
        ({"bias_dtype": ttnn.bfloat16}, ValueError, "e_score_correction_bias must be float32, got bfloat16"),
        ({"n_group": 3}, ValueError, "E=64 experts do not split into n_group=3"),
        (
            {"E": 32, "n_group": 32, "topk_group": 1, "top_k": 1},
            ValueError,
            "a group.s score sums its two best experts, but E=32 with n_group=32 leaves 1 per group",
        ),
        ({"topk_group": 5}, ValueError, r"topk_group must be in \[1, n_group=4\], got 5"),
        ({"top_k": 33}, ValueError, r"top_k must be in \[1, 32\]"),
        ({"top_k": 0}, ValueError, r"top_k must be in \[1, 4294967295\], got 0"),
        ({"top_k": 2.0}, TypeError, "top_k must be an int, got 2.0"),
        ({"norm_topk_prob": 1}, TypeError, "norm_topk_prob must be a bool, got 1"),
        ({"routed_scaling_factor": float("nan")}, ValueError, r"routed_scaling_factor must be in \(0, .*, got nan"),
        ({"routed_scaling_factor": -1.0}, ValueError, r"routed_scaling_factor must be in \(0, .*, got -1.0"),
        ({"routed_scaling_factor": 1e39}, ValueError, r"routed_scaling_factor must be in \(0, 3.40282e\+38\] .*1e\+39"),
        ({"routed_scaling_factor": True}, TypeError, "routed_scaling_factor must be a float, got True"),
        ({"indices_dtype": ttnn.int32}, ValueError, "indices_dtype must be uint32 or uint16, got .*int32"),
        (
            {"E": 65540, "H": 32, "indices_dtype": "uint16"},
            ValueError,
            "uint16 topk_indices hold expert ids below 65536, but E=65540",
        ),
    ],
)
def test_bad_arguments_raise_naming_the_value(device, kwargs, error, words):
    with pytest.raises(error, match="moe_gate: " + words):
        _bad_call(device, **kwargs)


def test_a_hidden_size_past_the_l1_budget_is_refused(device):
    with pytest.raises(ValueError, match="moe_gate: .*H=16384"):
        _bad_call(device, H=16384)


def test_preallocated_outputs_are_written_and_checked(device):
    T, E = 20, 64
    routing = ROUTINGS["4groups_top6"]
    x, gate_weight, bias = gate_inputs(T, 256, E, seed=8)
    poison = torch.full((1, T, 6), 7)
    indices = ttnn.from_torch(poison, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    weights = ttnn.from_torch(poison, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    out = run_gate(device, x, gate_weight, bias, output_tensors=[indices, weights], **routing)
    assert out.topk_indices is indices and out.topk_weights is weights
    check_against_golden(out, x, gate_weight, bias, **routing)
    wrong = ttnn.from_torch(torch.zeros(T, 6), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    with pytest.raises(ValueError, match=r"moe_gate: output_tensors\[0\] is \[20, 6\] uint32 ROW_MAJOR, the op writes"):
        run_gate(device, x, gate_weight, bias, output_tensors=[wrong], **routing)


def test_nan_scores_are_counted_per_row_tile_and_strict_names_the_first_token(device):
    """T = 100 tokens over 4 row tiles (split over the grid's cores): NaNs in tokens 40, 65 and 66
    (x) and a clean last tile. gate_status has a row per tile; the other tokens route like the
    golden; strict mode raises naming token 40 and the total."""
    x, gate_weight, bias = gate_inputs(100, 64, 16, seed=11)
    nan_tokens = [40, 65, 66]
    x[nan_tokens, 3] = float("nan")
    routing = ROUTINGS["4groups_top6"]
    out = run_gate(device, x, gate_weight, bias, strict=False, **routing)
    status = ttnn.to_torch(out.gate_status).to(torch.int64)
    words = ttnn_moe._C.ops.moe_gate.StatusWord
    none = int(ttnn_moe._C.ops.moe_gate.NONE)
    assert tuple(status.shape) == (4, 3)
    expected = [[0, none, none], [1, 40, 0], [2, 65, 0], [0, none, none]]
    order = [int(words.kNanTokens), int(words.kFirstNanToken), int(words.kFirstNanExpert)]
    assert status[:, order].tolist() == expected
    clean = [t for t in range(100) if t not in nan_tokens]
    want_ids, _ = golden.moe_gate(x[clean], gate_weight, bias, **routing)
    got_ids = ttnn.to_torch(out.topk_indices).reshape(100, -1)[clean].to(torch.int32)
    assert_equal_exact(want_ids, got_ids, "topk_indices of the tokens without NaN")
    with pytest.raises(ValueError, match=r"moe_gate: token 40 has a NaN score \(expert 0, .*\(3 such tokens\)"):
        run_gate(device, x, gate_weight, bias, **routing)


# (grid, T, E, routing, cores that work). Teams: one row tile, or expert tiles too many for the resident
# split (more than 4 per grid column). The expert tiles of a row tile are spread over a team of
# consecutive cores of a grid row, as many as there are expert tiles and the grid row holds, while the
# teams of all row tiles use at most 16 cores and the grid has a team per row tile; each team's first
# core ranks.
SPLITS = [
    # decode: one row tile, its 8 expert tiles on the 8 cores of the first row
    ("8x8", 32, 256, "deepseek", {(x, 0) for x in range(8)}),
    # 3 expert tiles (E = 80, not a multiple of 32): a team of 3, one tile each
    ("8x1", 5, 80, "4groups_top6", {(0, 0), (1, 0), (2, 0)}),
    # 7 expert tiles over a row of 3 cores (2, 2, 3): E not a multiple of the team size
    ("3x2", 1, 224, "deepseek", {(0, 0), (1, 0), (2, 0)}),
    # 2 row tiles (T = 33 not a multiple of 32), 15 expert tiles: 2 teams of 3 (5 tiles each)
    ("3x2", 33, 480, "deepseek", {(x, y) for x in range(3) for y in range(2)}),
    # 3 row tiles on a grid of 3 x 2: no room for a team per row tile, so a core per row tile
    ("3x2", 70, 480, "deepseek", {(0, 0), (1, 0), (2, 0)}),
    # one core, 8 expert tiles: no team
    ("1x1", 33, 256, "deepseek", {(0, 0)}),
]


@pytest.mark.parametrize("grid, T, E, routing, cores", SPLITS, ids=lambda v: str(v) if not isinstance(v, set) else "")
def test_expert_tiles_spread_over_a_team(grids, grid, T, E, routing, cores):
    """Indices exact and weights against the golden; the work is split, not repeated (every tile
    matmul once, the gate weight read once per row tile), on the expected cores; and the outputs are
    bitwise the single core's (each score keeps its accumulation order)."""
    H = 256
    x, gate_weight, bias = gate_inputs(T, H, E, seed=T * E)
    routing = ROUTINGS[routing]
    w_d = ttnn.from_torch(gate_weight, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=grids[grid])
    out = ttnn_moe.moe_gate(
        ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=grids[grid]),
        w_d,
        ttnn.from_torch(bias, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=grids[grid]),
        **routing,
    )
    counters = ttnn.last_run_counters()
    ids, weights = check_against_golden(out, x, gate_weight, bias, **routing)
    row_tiles, expert_tiles = -(-T // 32), -(-E // 32)
    assert counters["tile_matmuls"] == row_tiles * expert_tiles * (H // 32)
    assert counters["dram_buffers"][w_d.to_arg().address]["bytes_read"] == row_tiles * expert_tiles * 32 * H * 4
    assert {core for core, busy in counters["core_busy"].items() if busy} == cores
    single = run_gate(grids["1x1"], x, gate_weight, bias, **routing)
    assert torch.equal(ids, ttnn.to_torch(single.topk_indices).reshape(T, -1).long())
    assert torch.equal(
        ttnn.to_torch(out.topk_weights).view(torch.int16), ttnn.to_torch(single.topk_weights).view(torch.int16)
    )


# (grid, T, E). The resident split: grid columns take the expert tiles (min(Et, grid columns) columns, at
# most 4 tiles each), grid rows the row tiles (min(row tiles, grid rows) rows). T not a multiple of 32;
# E not a multiple of the columns; x in two k blocks per row tile (H = 1088: 34 tiles, blocks of 17).
RESIDENT = [
    ("8x8", 33, 256),  # 2 row tiles: 8 columns x 2 rows
    ("8x8", 1000, 200),  # 7 expert tiles: 7 columns x 8 rows of 4 row tiles
    ("8x8", 1024, 256),
    ("8x8", 2050, 256),  # 65 row tiles: 8 or 9 per grid row
    ("3x2", 1000, 224),  # 7 expert tiles over 3 columns (2, 2, 3), 32 row tiles over 2 rows
    ("3x2", 33, 80),  # 3 expert tiles: a column each
    ("1x1", 1024, 96),  # one core holds the whole (3-tile) weight
    ("1x1", 33, 128),
]


@pytest.mark.parametrize("grid, T, E", RESIDENT, ids=lambda v: str(v))
def test_resident_split_reads_each_weight_tile_once(grids, grid, T, E):
    """Many row tiles: indices exact and weights against the golden; every tile matmul once; every
    gate-weight tile and every x tile read from DRAM once (the weight is multicast down the grid columns
    and stays in L1, x is multicast along the grid rows); the expected cores busy; and the outputs
    bitwise those of the 1x1 grid (each score keeps its accumulation order)."""
    H = 1088
    x, gate_weight, bias = gate_inputs(T, H, E, seed=T + E)
    device = grids[grid]
    w_d = ttnn.from_torch(gate_weight, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    x_d = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    out = ttnn_moe.moe_gate(
        x_d, w_d, ttnn.from_torch(bias, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device), **DEEPSEEK
    )
    counters = ttnn.last_run_counters()
    ids, _ = check_against_golden(out, x, gate_weight, bias, **DEEPSEEK)
    row_tiles, expert_tiles, inner_tiles = -(-T // 32), -(-E // 32), H // 32
    assert counters["tile_matmuls"] == row_tiles * expert_tiles * inner_tiles
    fp32_tile, bf16_tile = 32 * 32 * 4, 32 * 32 * 2
    assert counters["dram_buffers"][w_d.to_arg().address]["bytes_read"] == expert_tiles * inner_tiles * fp32_tile
    assert counters["dram_buffers"][x_d.to_arg().address]["bytes_read"] == row_tiles * inner_tiles * bf16_tile
    grid_x, grid_y = (int(n) for n in grid.split("x"))
    cols, rows = min(expert_tiles, grid_x), min(row_tiles, grid_y)
    assert {core for core, busy in counters["core_busy"].items() if busy} == {
        (c, r) for c in range(cols) for r in range(rows)
    }
    if grid != "1x1":
        single = run_gate(grids["1x1"], x, gate_weight, bias, **DEEPSEEK)
        assert torch.equal(ids, ttnn.to_torch(single.topk_indices).reshape(T, -1).long())
        assert torch.equal(
            ttnn.to_torch(out.topk_weights).view(torch.int16), ttnn.to_torch(single.topk_weights).view(torch.int16)
        )
