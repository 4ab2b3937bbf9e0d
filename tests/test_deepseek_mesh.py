"""TtMoE's mesh flow stage by stage.

A forward pass hands every stage's mesh tensor to its `observer`. Each stage is checked against its
own torch golden (`ttnn_moe.golden`, or the reference gate) computed from the tensors the previous
stages were observed to hold, so a wrong op is named rather than only a wrong layer:
- index and routing outputs (gate, dispatch) must be exact;
- numeric outputs (the fused SwiGLU and the down projection of the routed and of the shared
  experts, local reduce, combine, reduce-scatter) must reach PCC 0.9999 and stay, element by
  element, within the error their bf16 roundings allow;
- the layer's output must reach PCC 0.999 (the demo's bar) against the single-device fp32
  `reference_moe`, given the routed experts' weights as the devices store them.
"""

import pytest
import torch
import torch.nn.functional as F
from ttnn_moe.testing import assert_equal_exact, assert_pcc, max_abs_error

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.pcc_floors import LAYER_PCC_FLOOR
from models.deepseek_v3.reference import local_expert_weights, moe_gate, reference_moe
from models.deepseek_v3.tt import TtMoE, device_values, input_to_mesh, output_to_torch
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe import emu, expert_mapping, golden

CONFIG = DeepseekV3MoEConfig.mini()
LAYER_PCC = LAYER_PCC_FLOOR["bfloat16"]
STAGE_PCC = 0.9999
# bf16 keeps 8 significant bits: rounding to bf16 moves a value by at most 2^-8 of its magnitude.
BF16_UNIT_ROUNDOFF = 2.0**-8
TILE = 32
DISPATCH_AXIS, TP_AXIS = 0, 1


@pytest.fixture(scope="module")
def weights():
    return random_moe_state_dict(CONFIG, seed=5)


def bf16_tokens(count, seed):
    return torch.randn(count, CONFIG.hidden_size, generator=torch.Generator().manual_seed(seed)).bfloat16().float()


def words(t):
    """uint32 words read back as int32 -> their unsigned values in int64."""
    return t.to(torch.int64) & 0xFFFFFFFF


def with_experts_as_stored(state_dict, expert_dtype):
    """The state dict with every routed expert's weights as TtMoE stores them: transposed to moe_bmm's
    (in, out) tiles in `expert_dtype` (bfloat8_b shares an exponent per 16 values), read back in fp32."""

    def stored(w):  # nn.Linear (out, in)
        device_layout = emu.from_torch(w.T.contiguous(), dtype=expert_dtype, layout=emu.TILE_LAYOUT)
        return emu.to_torch(device_layout).float().T

    return {name: stored(w) if name.startswith("experts.") else w for name, w in state_dict.items()}


def forward_with_stages(state_dict, mesh_shape, x, expert_dtype=emu.bfloat16):
    """Runs TtMoE on an emulated mesh; returns (y (T, H), stage -> per-device torch tensors)."""
    mesh_device = emu.open_mesh_device(emu.MeshShape(*mesh_shape))
    stages = {}
    try:
        moe = TtMoE(state_dict, CONFIG, mesh_device, expert_dtype=expert_dtype)
        y = output_to_torch(
            moe(input_to_mesh(x, mesh_device), observer=lambda stage, t: stages.setdefault(stage, device_values(t)))
        )
    finally:
        emu.close_mesh_device(mesh_device)
    return y, stages


def assert_close(want, got, bound, name):
    """PCC(want, got) >= STAGE_PCC and |got - want| <= bound, element by element."""
    assert_pcc(want, got, STAGE_PCC, name)
    excess = ((got.float() - want).abs() - bound).reshape(-1)
    worst = int(excess.argmax())
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(worst), want.shape))
    assert excess[worst] <= 0, (
        f"{name}: error {float(got.float().reshape(-1)[worst] - want.reshape(-1)[worst]):.4g} at {index} is over "
        f"its bound {float(bound.reshape(-1)[worst]):.4g}; max abs error {max_abs_error(want, got):.4g}"
    )


def moe_bmm_error_bound(x, w, counts, offsets):
    """moe_bmm accumulates in a bf16 DST: after each 32-deep tile product the running sum is rounded
    to bf16, which moves it by at most BF16_UNIT_ROUNDOFF of its size. The bound sums that over the
    running sums x[:, :32k] @ w[:, :32k], k = 1 .. Kd/32, and doubles it for the products and
    roundings within a tile and second-order terms."""
    running_sums = (
        golden.moe_bmm(x[:, : TILE * k], w[:, : TILE * k], counts, expert_offsets=offsets).abs()
        for k in range(1, w.shape[1] // TILE + 1)
    )
    return 2 * BF16_UNIT_ROUNDOFF * sum(running_sums)


def swiglu_error_bound(x, w_gate, w_up, counts, offsets):
    """The fused SwiGLU moe_bmm: the gate and up sums carry moe_bmm's bf16 accumulation error (eg, eu);
    silu (slope at most 1.1) passes the gate's on, the product adds both, and silu and the product are
    each rounded to bf16 once."""
    gate = golden.moe_bmm(x, w_gate, counts, expert_offsets=offsets)
    up = golden.moe_bmm(x, w_up, counts, expert_offsets=offsets).abs()
    eg, eu = (moe_bmm_error_bound(x, w, counts, offsets) for w in (w_gate, w_up))
    silu = F.silu(gate).abs() + 1.1 * eg
    rounding = ((1 + BF16_UNIT_ROUNDOFF) ** 2 - 1) * silu * (up + eu)
    return 1.1 * eg * (up + eu) + silu * eu + rounding


def check_swiglu(stage, seen, d, x_in, w_gate, w_up, counts, offsets, rows):
    """silu(x @ gate) * (x @ up) in fp32 against the fused moe_bmm's output on `rows`."""
    want = F.silu(golden.moe_bmm(x_in, w_gate, counts, expert_offsets=offsets)) * golden.moe_bmm(
        x_in, w_up, counts, expert_offsets=offsets
    )
    bound = swiglu_error_bound(x_in, w_gate, w_up, counts, offsets)
    assert_close(want[rows], seen[stage][d][rows], bound[rows], f"device {d} {stage}")


def sum_error_bound(sum_of_absolute_terms):
    """Reductions (local reduce, combine) sum in fp32 and round each sum to bf16 once,
    moving it by at most BF16_UNIT_ROUNDOFF of its size; the bound takes that of the sum of the
    absolute terms and doubles it to leave room for the order of the fp32 additions."""
    return 2 * BF16_UNIT_ROUNDOFF * sum_of_absolute_terms


def check_all_gather(seen, mesh_shape):
    """Every device of a row holds the row's tokens in full."""
    gathered = golden.all_gather([t.bfloat16() for t in seen["input"]], mesh_shape, 1, TP_AXIS)
    for d, want in enumerate(gathered):
        assert_equal_exact(want, seen["all_gather"][d], f"device {d} all_gather")


def check_gate(seen, state_dict, B):
    """The reference gate on each device's gathered tokens: indices exact, weights as bf16."""
    K = CONFIG.num_experts_per_tok
    for d, x_full in enumerate(seen["all_gather"]):
        ids, gate_weights = moe_gate(
            x_full.float(), state_dict["gate.weight"], state_dict["gate.e_score_correction_bias"], CONFIG
        )
        assert_equal_exact(ids.to(torch.int32), words(seen["gate.topk_indices"][d]).reshape(B, K), f"device {d} ids")
        assert_equal_exact(gate_weights.bfloat16(), seen["gate.topk_weights"][d].reshape(B, K), f"device {d} weights")


def check_dispatch(seen, mapping, mesh_shape, B):
    """Dense dispatch down each column from the observed routing ((1, B, K): batch 1, sequence B):
    every index and routing output exact, and every token row inside an expert's block exact (rows
    past a block are padding)."""
    K = CONFIG.num_experts_per_tok
    dispatched = golden.all_to_all_dispatch_dense(
        [t.bfloat16().reshape(1, B, -1) for t in seen["all_gather"]],
        [words(t).to(torch.int32).reshape(1, B, K) for t in seen["gate.topk_indices"]],
        [t.reshape(1, B, K) for t in seen["gate.topk_weights"]],
        mapping,
        mesh_shape,
        DISPATCH_AXIS,
        capacity=seen["dispatch.tokens"][0].shape[0],
    )
    for d, want in enumerate(dispatched):
        for name in ("num_routed_tokens", "expert_offsets", "token_idx_map", "slot_source", "num_slots"):
            got = words(seen[f"dispatch.{name}"][d]).reshape(getattr(want, name).shape)
            assert_equal_exact(getattr(want, name).to(torch.int64), got, f"device {d} dispatch.{name}")
        assert_equal_exact(
            want.routed_token_weights,
            seen["dispatch.routed_token_weights"][d].reshape(-1),
            f"device {d} dispatch.routed_token_weights",
        )
        for offset, count in zip(want.expert_offsets.reshape(-1).tolist(), want.num_routed_tokens.reshape(-1).tolist()):
            block = slice(offset, offset + count)
            assert_equal_exact(
                want.tokens[block], seen["dispatch.tokens"][d][block], f"device {d} dispatch.tokens rows {block}"
            )


def check_experts_and_local_reduce(seen, stored_state, mapping):
    """Per device, from the observed inputs of each op: the two grouped moe_bmm calls (SwiGLU fused,
    then the down projection) and the local reduce."""
    owner = mapping[0, 0].argmax(dim=1)  # (E,) owning device of each expert
    capacity = seen["dispatch.tokens"][0].shape[0]
    for d in range(len(seen["dispatch.tokens"])):
        w1, w3, w2 = local_expert_weights(stored_state, (owner == d).nonzero()[:, 0].tolist())  # (E_l, Kd, N)
        counts = words(seen["dispatch.num_routed_tokens"][d]).to(torch.int32)  # (E_l, 1)
        offsets = words(seen["dispatch.expert_offsets"][d]).to(torch.int32)  # (E_l, 1)
        active = torch.zeros(capacity, dtype=torch.bool)  # rows inside some expert's block
        for offset, count in zip(offsets.reshape(-1).tolist(), counts.reshape(-1).tolist()):
            active[offset : offset + count] = True
        if not active.any():
            continue  # no token reached this device's experts: moe_bmm and the reduce write nothing

        def check_moe_bmm(stage, x_in, w):
            want = golden.moe_bmm(x_in, w, counts, expert_offsets=offsets)  # (cap, N)
            bound = moe_bmm_error_bound(x_in, w, counts, offsets)
            assert_close(want[active], seen[stage][d][active], bound[active], f"device {d} {stage}")

        # (cap, H) @ (H, I) twice, fused
        check_swiglu("experts.swiglu", seen, d, seen["dispatch.tokens"][d], w1, w3, counts, offsets, active)
        check_moe_bmm("experts.w2", seen["experts.swiglu"][d], w2)  # (cap, I) @ (I, H)

        slot_of_row = words(seen["dispatch.token_idx_map"][d]).to(torch.int32)  # (cap,)
        expert_rows, row_weights = seen["experts.w2"][d], seen["dispatch.routed_token_weights"][d]
        reduced, absolute_sum = (
            golden.local_reduce_moe_output(rows, slot_of_row, weights, counts, capacity, expert_offsets=offsets)
            for rows, weights in ((expert_rows, row_weights), (expert_rows.abs(), row_weights.abs()))
        )  # (cap, H) each
        slots = int(words(seen["dispatch.num_slots"][d]).reshape(-1)[0])
        assert_close(
            reduced[:slots],
            seen["local_reduce"][d][:slots],
            sum_error_bound(absolute_sum[:slots]),
            f"device {d} local_reduce",
        )


def check_combine(seen, mesh_shape, B):
    """Combine up each column: every token's slot rows from the devices of its column, summed."""
    slot_source = [words(t).to(torch.int32) for t in seen["dispatch.slot_source"]]
    num_slots = [words(t).to(torch.int32) for t in seen["dispatch.num_slots"]]
    combined, absolute_sum = (
        golden.all_to_all_combine_dense(slot_rows, slot_source, num_slots, mesh_shape, DISPATCH_AXIS, 1, B)
        for slot_rows in (seen["local_reduce"], [t.abs() for t in seen["local_reduce"]])
    )  # per device (1, B, H) each
    for d in range(len(combined)):
        assert_close(combined[d], seen["combine"][d], sum_error_bound(absolute_sum[d]), f"device {d} combine")


def check_shared_expert(seen, state_dict, mesh_shape, B):
    """Column c's slice of the shared expert on every device: the fused SwiGLU of the gathered tokens,
    then the down projection starting from the routed share (combine), all in moe_bmm (one expert,
    every token)."""
    cols = mesh_shape[1]
    gate, up, down = (
        state_dict[f"shared_experts.{p}.weight"].bfloat16().float().T for p in ("gate_proj", "up_proj", "down_proj")
    )  # (H, Is), (H, Is), (Is, H) as the devices store them
    every_row, at_row_0 = torch.tensor([[B]], dtype=torch.int32), torch.zeros(1, 1, dtype=torch.int32)
    rows = torch.arange(B)
    for d, x_full in enumerate(seen["all_gather"]):
        c = d % cols
        w_gate, w_up = (w.chunk(cols, 1)[c].unsqueeze(0) for w in (gate, up))  # (1, H, Is/C)
        check_swiglu("shared_expert.swiglu", seen, d, x_full.float(), w_gate, w_up, every_row, at_row_0, rows)
        hidden, w_down = seen["shared_expert.swiglu"][d].float(), down.chunk(cols, 0)[c].unsqueeze(0)  # (1, Is/C, H)
        routed = seen["combine"][d].reshape(B, -1).float()
        want = golden.moe_bmm(hidden, w_down, every_row, expert_offsets=at_row_0) + routed
        # The down projection's sums start from the routed share in DST: its running sums include it.
        bound = moe_bmm_error_bound(hidden, w_down, every_row, at_row_0) + 2 * BF16_UNIT_ROUNDOFF * (
            routed.abs() * (w_down.shape[1] // TILE)
        )
        assert_close(want, seen["shared_expert_partial"][d], bound, f"device {d} shared_expert_partial")


def check_reduce_scatter(seen, mesh_shape):
    """The row's partials (shared expert plus routed share) summed, column c keeping hidden slice c."""
    partials = seen["shared_expert_partial"]  # per device (B, H)
    summed, absolute_sum = (
        golden.reduce_scatter(tensors, mesh_shape, 1, TP_AXIS) for tensors in (partials, [t.abs() for t in partials])
    )  # per device (B, H/C) each
    # The line reduce_scatter rounds every partial to bf16 on its way: line size - 1 roundings.
    roundings = max(1, mesh_shape[TP_AXIS] - 1)
    for d in range(len(summed)):
        bound = roundings * sum_error_bound(absolute_sum[d])
        assert_close(summed[d], seen["reduce_scatter"][d], bound, f"device {d} reduce_scatter")


def check_stages(state_dict, mesh_shape, x, expert_dtype=emu.bfloat16):
    """Runs the layer on `mesh_shape`, checks every stage and the output; returns the observed stages."""
    rows, cols = mesh_shape
    B = x.shape[0] // rows
    y, seen = forward_with_stages(state_dict, mesh_shape, x, expert_dtype)
    stored_state = with_experts_as_stored(state_dict, expert_dtype)
    mapping = expert_mapping(CONFIG.n_routed_experts, rows * cols)

    check_all_gather(seen, mesh_shape)
    check_gate(seen, state_dict, B)
    check_dispatch(seen, mapping, mesh_shape, B)
    check_experts_and_local_reduce(seen, stored_state, mapping)
    check_combine(seen, mesh_shape, B)
    check_shared_expert(seen, state_dict, mesh_shape, B)
    check_reduce_scatter(seen, mesh_shape)
    assert_pcc(reference_moe(x, stored_state, CONFIG), y, LAYER_PCC, f"TtMoE on {rows}x{cols} vs reference_moe")
    return seen


@pytest.mark.parametrize(
    "mesh_shape, tokens, expert_dtype",
    [
        pytest.param((2, 4), 10, emu.bfloat16, id="2x4"),
        pytest.param((4, 8), 24, emu.bfloat16, id="tg-4x8"),
        pytest.param((1, 8), 5, emu.bfloat16, id="t3k-1x8"),
        pytest.param((1, 8), 12, emu.bfloat8_b, id="t3k-1x8-bfloat8_b-experts"),
        pytest.param((4, 8), 24, emu.bfloat4_b, id="tg-4x8-bfloat4_b-experts"),
    ],
)
def test_every_stage_matches_its_golden(weights, mesh_shape, tokens, expert_dtype):
    """Tokens per mesh row are never a multiple of a tile; with 256 experts most get no token."""
    seen = check_stages(weights, mesh_shape, bf16_tokens(tokens, seed=tokens), expert_dtype)
    counts = torch.cat([words(t).reshape(-1) for t in seen["dispatch.num_routed_tokens"]])  # (E,) tokens per expert
    assert int(counts.sum()) == tokens * CONFIG.num_experts_per_tok
    assert (counts == 0).any(), "some expert must receive no token"


def test_every_token_on_the_same_experts(weights):
    """A score-correction bias that makes experts 0..7 win every token: each of them receives all 48
    tokens (a block spanning two row tiles), all on device 0; every other expert receives none."""
    state = dict(weights)
    bias = torch.full((CONFIG.n_routed_experts,), -10.0)
    bias[: CONFIG.num_experts_per_tok] = 10.0
    state["gate.e_score_correction_bias"] = bias
    seen = check_stages(state, (2, 4), bf16_tokens(48, seed=3))
    # Device d owns experts [d * E_l, (d + 1) * E_l) in local-slot order: stacked counts are by expert id.
    counts = torch.cat([words(t).reshape(-1) for t in seen["dispatch.num_routed_tokens"]])  # (E,)
    expected = torch.zeros(CONFIG.n_routed_experts, dtype=torch.int64)
    expected[: CONFIG.num_experts_per_tok] = 48
    assert_equal_exact(expected, counts, "tokens per expert")


def test_the_observer_sees_every_stage_in_flow_order(weights):
    _, seen = forward_with_stages(weights, (2, 4), bf16_tokens(8, seed=1))
    assert list(seen) == [
        "input",
        "all_gather",
        "gate.topk_indices",
        "gate.topk_weights",
        "to_layout.x_rows",
        "dispatch.tokens",
        "dispatch.num_routed_tokens",
        "dispatch.expert_offsets",
        "dispatch.token_idx_map",
        "dispatch.routed_token_weights",
        "dispatch.slot_source",
        "dispatch.num_slots",
        "experts.swiglu",
        "experts.w2",
        "local_reduce",
        "combine",
        "shared_expert.swiglu",
        "shared_expert_partial",
        "reduce_scatter",
    ]
    assert all(len(per_device) == 8 for per_device in seen.values())
