"""TtMoE (the MoE layer on emulated meshes) against the fp32 reference and transformers' DeepseekV3MoE.

Every forward runs our kernels (dense dispatch, grouped moe_bmm, local reduce, dense combine) in the
Tensix emulator, with the emulator's device programs for ttnn's collectives and layout changes around
them.
"""

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hf_moe import hf_moe_with
from ttnn_moe.ops.all_to_all_dispatch_dense import StatusWord, raise_on_dispatch_errors
from ttnn_moe.ops.local_reduce_moe_output import StatusWord as ReduceWord
from ttnn_moe.testing import assert_pcc

import ttnn_moe
from models.deepseek_v3.config import DeepseekV3MoEConfig, mesh_shape
from models.deepseek_v3.pcc_floors import LAYER_PCC_FLOOR
from models.deepseek_v3.reference import moe_gate, reference_moe
from models.deepseek_v3.tt import TtMoE, device_values, input_to_mesh, output_to_torch
from models.deepseek_v3.tt.preset_mesh import open_preset_mesh
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe import emu, golden

CONFIG = DeepseekV3MoEConfig.mini()
LAYER_PCC = LAYER_PCC_FLOOR["bfloat16"]  # whole layer vs the fp32 reference
HF_PCC = 0.995  # whole layer vs transformers' DeepseekV3MoE


@pytest.fixture(scope="module")
def weights():
    return random_moe_state_dict(CONFIG, seed=31)


def bf16_tokens(tokens: int, seed: int) -> torch.Tensor:
    """(T, H) activations as the mesh holds them: bf16 values, given to the references in fp32."""
    return torch.randn(tokens, CONFIG.hidden_size, generator=torch.Generator().manual_seed(seed)).bfloat16().float()


def run_on_mesh(mesh_name: str, x: torch.Tensor, state_dict, **tt_moe_kwargs) -> torch.Tensor:
    mesh_device = open_preset_mesh(mesh_name)  # a QUAD's columns are rings, as on its hardware
    try:
        moe = TtMoE(state_dict, CONFIG, mesh_device, **tt_moe_kwargs)
        return output_to_torch(moe(input_to_mesh(x, mesh_device)))  # (T, H)
    finally:
        emu.close_mesh_device(mesh_device)


@pytest.mark.parametrize(
    "mesh_name, topology",
    [
        ("t3k", emu.Topology.Linear),
        ("tg", emu.Topology.Linear),
        ("dual", emu.Topology.Linear),
        ("quad", emu.Topology.Ring),
    ],
)
def test_each_preset_mesh_opens_on_the_fabric_its_hardware_runs(mesh_name, topology):
    """tt-metal's DeepSeek-V3 runs a QUAD (torus-wired) with FABRIC_1D_RING and the others with FABRIC_1D."""
    mesh_device = open_preset_mesh(mesh_name)
    try:
        assert tuple(mesh_device.shape) == mesh_shape(mesh_name)
        assert mesh_device.fabric_topology == topology
    finally:
        emu.close_mesh_device(mesh_device)


@pytest.mark.parametrize("mesh_name, tokens", [("t3k", 8), ("tg", 32), ("dual", 16), ("quad", 32)])
def test_layer_matches_reference_on_every_mesh(weights, mesh_name, tokens):
    x = bf16_tokens(tokens, seed=tokens)
    y = run_on_mesh(mesh_name, x, weights)
    assert y.shape == (tokens, CONFIG.hidden_size)
    assert_pcc(reference_moe(x, weights, CONFIG), y, LAYER_PCC, f"TtMoE on {mesh_name} vs reference_moe")


def test_gate_routes_each_mesh_row_like_the_reference_gate(weights):
    """Per device: the indices of the reference gate on that row's tokens, weights rounded to bf16;
    every device of a row gets the same routing."""
    x = bf16_tokens(16, seed=3)
    mesh_device = emu.open_mesh_device(emu.MeshShape(2, 8))
    try:
        moe = TtMoE(weights, CONFIG, mesh_device)
        x_full = emu.all_gather(input_to_mesh(x, mesh_device), dim=1, cluster_axis=1)  # (B, H)
        indices, gate_weights, _ = ttnn_moe.moe_gate(
            x_full,
            moe.weights.gate_weight,
            moe.weights.gate_bias,
            n_group=CONFIG.n_group,
            topk_group=CONFIG.topk_group,
            top_k=CONFIG.num_experts_per_tok,
            routed_scaling_factor=CONFIG.routed_scaling_factor,
        )
        indices, gate_weights = device_values(indices), device_values(gate_weights)  # (1, B, K) each
    finally:
        emu.close_mesh_device(mesh_device)
    for device in range(16):
        row_tokens = x[(device // 8) * 8 : (device // 8 + 1) * 8]
        expected_ids, expected_weights = moe_gate(
            row_tokens, weights["gate.weight"], weights["gate.e_score_correction_bias"], CONFIG
        )
        assert indices[device].reshape(8, -1).to(torch.int64).tolist() == expected_ids.tolist()
        assert torch.equal(gate_weights[device].reshape(8, -1), expected_weights.bfloat16())


def test_busy_experts_span_several_row_tiles():
    """32 experts for 128 tokens: about 32 tokens per expert, so expert blocks run over several 32-row
    tiles; B = 128 rows per device; H = 512 and I = 96 give several tiles along every matrix dim."""
    config = DeepseekV3MoEConfig.mini(
        n_routed_experts=32, hidden_size=512, moe_intermediate_size=96, n_shared_experts=8
    )
    state = random_moe_state_dict(config, seed=41)
    x = torch.randn(128, 512, generator=torch.Generator().manual_seed(42)).bfloat16().float()
    expected = reference_moe(x, state, config)
    busiest = int(torch.bincount(moe_gate_ids(x, state, config).reshape(-1), minlength=32).max())
    assert busiest > 32
    mesh_device = emu.open_mesh_device(emu.MeshShape(1, 8))
    try:
        y = output_to_torch(TtMoE(state, config, mesh_device)(input_to_mesh(x, mesh_device)))
    finally:
        emu.close_mesh_device(mesh_device)
    assert_pcc(expected, y, LAYER_PCC, "TtMoE with busy experts vs reference_moe")


def moe_gate_ids(x, state, config):
    return moe_gate(x, state["gate.weight"], state["gate.e_score_correction_bias"], config)[0]


def test_two_runs_are_bitwise_equal(weights):
    x = bf16_tokens(32, seed=5)
    mesh_device = emu.open_mesh_device(emu.MeshShape(4, 8))
    try:
        moe = TtMoE(weights, CONFIG, mesh_device)
        first = output_to_torch(moe(input_to_mesh(x, mesh_device)))
        # The second run's buffers sit at other addresses, over what the first run left in DRAM.
        second = output_to_torch(moe(input_to_mesh(x, mesh_device)))
    finally:
        emu.close_mesh_device(mesh_device)
    assert torch.equal(first, second)


def test_layer_matches_transformers_deepseek_v3_moe(weights):
    # A score-correction bias of N(0, 0.1) changes most tokens' routing: the bias path is exercised.
    state = dict(weights)
    state["gate.e_score_correction_bias"] = 0.1 * torch.randn(
        CONFIG.n_routed_experts, generator=torch.Generator().manual_seed(32)
    )
    x = bf16_tokens(32, seed=33)
    hf_moe = hf_moe_with(state, CONFIG)
    with torch.no_grad():
        expected = hf_moe(x.view(1, 32, -1)).view(32, -1)
    # TtMoE reads transformers' own (fused-expert) state dict, below a decoder layer's prefix.
    hf_state = {f"model.layers.3.mlp.{k}": v for k, v in hf_moe.state_dict().items()}
    y = run_on_mesh("tg", x, hf_state, prefix="model.layers.3.mlp.")
    assert_pcc(expected, y, HF_PCC, "TtMoE on tg vs transformers DeepseekV3MoE")


def as_stored(w: torch.Tensor, dtype_name: str) -> torch.Tensor:
    """nn.Linear weight (out, in) rounded as the device stores it: transposed to moe_bmm's (in, out)
    tiles in a block float (a shared exponent per 16 values along `out`), back in fp32."""
    return golden.round_to_block_float(w.T.contiguous(), dtype_name).T


@pytest.mark.parametrize(
    "dtype_name, mesh_name, tokens", [("bfloat8_b", "t3k", 8), ("bfloat4_b", "t3k", 8), ("bfloat4_b", "tg", 32)]
)
def test_block_float_experts_match_reference_with_the_same_rounding(weights, dtype_name, mesh_name, tokens):
    rounded = {k: as_stored(v, dtype_name) if k.startswith("experts.") else v for k, v in weights.items()}
    assert not torch.equal(rounded["experts.0.up_proj.weight"], weights["experts.0.up_proj.weight"].float())
    x = bf16_tokens(tokens, seed=7)
    y = run_on_mesh(mesh_name, x, weights, expert_dtype=getattr(emu, dtype_name))
    expected = reference_moe(x, rounded, CONFIG)
    assert_pcc(expected, y, LAYER_PCC, f"{dtype_name} TtMoE on {mesh_name} vs reference with the same experts")
    # Against the unrounded weights the rounding itself costs accuracy: the dtype's own floor.
    assert_pcc(reference_moe(x, weights, CONFIG), y, LAYER_PCC_FLOOR[dtype_name], f"{dtype_name} TtMoE vs reference")


def test_forward_never_validates_by_reading_back(weights, monkeypatch):
    """The ops' strict checks read counts or status words back to the host; forward must not take them."""

    def forbidden(*args, **kwargs):
        raise AssertionError("forward read a device count back to the host")

    for module in ("all_to_all_dispatch_dense", "all_to_all_combine_dense"):
        monkeypatch.setattr(importlib.import_module(f"ttnn_moe.ops.{module}"), "read_device_words", forbidden)
    monkeypatch.setattr(importlib.import_module("ttnn_moe.ops.moe_bmm"), "_check_routing", forbidden)
    x = bf16_tokens(16, seed=9)
    assert_pcc(reference_moe(x, weights, CONFIG), run_on_mesh("tg", x, weights), LAYER_PCC, "TtMoE on tg")


def test_stages_keep_the_documented_per_device_shapes(weights):
    mesh_device = emu.open_mesh_device(emu.MeshShape(4, 8))
    shapes = {}
    try:
        moe = TtMoE(weights, CONFIG, mesh_device)
        moe(
            input_to_mesh(bf16_tokens(32, seed=11), mesh_device),
            observer=lambda stage, t: shapes.setdefault(stage, (tuple(t.shape), t.layout)),
        )
        checked = (StatusWord.kDroppedRows, StatusWord.kInvalidIds, StatusWord.kMappingErrors)
        status = [
            tuple(int(words.reshape(-1)[i]) for i in checked) for words in device_values(moe.last_dispatch_status)
        ]
        # row_overflow is written for the used slots only: [0, reduce_status[kRowsComputed]).
        computed = [int(words.reshape(-1)[ReduceWord.kRowsComputed]) for words in device_values(moe.last_reduce_status)]
        reduce_overflow = [
            int(words.reshape(-1)[:n].sum()) for words, n in zip(device_values(moe.last_reduce_row_overflow), computed)
        ]
    finally:
        emu.close_mesh_device(mesh_device)
    B, H, K, E_l = 8, CONFIG.hidden_size, CONFIG.num_experts_per_tok, CONFIG.n_routed_experts // 32
    capacity = shapes["dispatch.tokens"][0][0]
    assert capacity % 32 == 0
    assert shapes["input"] == ((B, H // 8), emu.TILE_LAYOUT)
    assert shapes["all_gather"] == ((B, H), emu.TILE_LAYOUT)
    assert shapes["gate.topk_indices"] == ((1, B, K), emu.ROW_MAJOR_LAYOUT)
    assert shapes["dispatch.num_routed_tokens"] == ((E_l, 1), emu.ROW_MAJOR_LAYOUT)
    assert shapes["experts.swiglu"] == ((capacity, CONFIG.moe_intermediate_size), emu.TILE_LAYOUT)
    assert shapes["experts.w2"] == ((capacity, H), emu.ROW_MAJOR_LAYOUT)
    assert shapes["local_reduce"] == ((capacity, H), emu.ROW_MAJOR_LAYOUT)
    assert shapes["combine"] == ((1, B, H), emu.ROW_MAJOR_LAYOUT)
    assert shapes["shared_expert.swiglu"] == ((B, CONFIG.shared_intermediate_size // 8), emu.TILE_LAYOUT)
    assert shapes["shared_expert_partial"] == ((B, H), emu.TILE_LAYOUT)
    assert shapes["reduce_scatter"] == ((B, H // 8), emu.TILE_LAYOUT)
    assert status == [(0, 0, 0)] * 32  # the default capacity drops nothing; routing and mapping are valid
    assert reduce_overflow == [0] * 32  # no slot receives more than K rows
    assert sum(computed) > 0 and max(computed) < capacity  # the used slots, a few of the capacity


def test_dispatch_counts_and_expert_tile_matmuls_follow_the_routing(weights):
    """Each device's per-expert counts equal the reference gate's assignments to its experts, and the
    routed experts' moe_bmm calls execute exactly the active tiles: ceil(count / 32) row tiles per
    expert times (H/32 x I/32) tiles for w1, w3 (fused) and w2 each (the work the routing needs,
    ratio 1.00). The gate adds its own: on every device, ceil(B/32) token row tiles times E/32 x H/32
    tiles; so does the shared expert: ceil(B/32) row tiles times H/32 x (Is/8)/32 for each of its
    three projections, column c computing its slice."""
    x = bf16_tokens(64, seed=17)
    ids = moe_gate_ids(x, weights, CONFIG)  # (T, K) global experts
    expected_counts = torch.bincount(ids.reshape(-1), minlength=CONFIG.n_routed_experts)  # (E,)
    H_tiles, I_tiles = CONFIG.hidden_size // 32, CONFIG.moe_intermediate_size // 32
    expert_matmuls = 3 * int(((expected_counts + 31) // 32).sum()) * H_tiles * I_tiles
    devices, B = 32, 64 // 4  # a 4x8 mesh: B tokens per mesh row
    gate_matmuls = devices * ((B + 31) // 32) * (CONFIG.n_routed_experts // 32) * H_tiles
    shared_matmuls = devices * ((B + 31) // 32) * 3 * H_tiles * (CONFIG.shared_intermediate_size // 8 // 32)
    mesh_device = emu.open_mesh_device(emu.MeshShape(4, 8))
    kept = {}
    try:
        moe = TtMoE(weights, CONFIG, mesh_device)
        x_mesh = input_to_mesh(x, mesh_device)
        mesh_device.reset_counters()
        moe(x_mesh, observer=lambda stage, t: kept.setdefault(stage, t))
        tile_matmuls = sum(c["tile_matmuls"] for c in mesh_device.counters())
        counts = torch.cat(device_values(kept["dispatch.num_routed_tokens"]))  # (32 * E_l, 1)
    finally:
        emu.close_mesh_device(mesh_device)
    # Device d owns experts [d * E_l, (d + 1) * E_l) in slot order: the stacked counts are by global id.
    assert counts.reshape(-1).to(torch.int64).tolist() == expected_counts.tolist()
    assert tile_matmuls == expert_matmuls + gate_matmuls + shared_matmuls


def test_too_small_capacity_is_reported_in_the_dispatch_status_not_dropped_silently(weights):
    mesh_device = emu.open_mesh_device(emu.MeshShape(4, 8))
    try:
        # 32 tokens on 4x8: some device owns two active experts, i.e. needs two 32-row blocks.
        moe = TtMoE(weights, CONFIG, mesh_device, capacity=32)
        moe(input_to_mesh(bf16_tokens(32, seed=13), mesh_device))
        with pytest.raises(ValueError, match="capacity"):
            raise_on_dispatch_errors(moe.last_dispatch_status)
    finally:
        emu.close_mesh_device(mesh_device)


def test_bad_construction_and_input_raise(weights):
    with pytest.raises(TypeError, match="MeshDevice"):
        TtMoE(weights, CONFIG, emu.open_device())
    mesh_device = emu.open_mesh_device(emu.MeshShape(1, 8))
    try:
        incomplete = {k: v for k, v in weights.items() if k != "experts.7.up_proj.weight"}
        with pytest.raises(ValueError, match="experts.7.up_proj.weight"):
            TtMoE(incomplete, CONFIG, mesh_device)
        with pytest.raises(ValueError, match="float32"):
            TtMoE(weights, CONFIG, mesh_device, expert_dtype=emu.float32)
        narrow = DeepseekV3MoEConfig.mini(hidden_size=128)
        with pytest.raises(ValueError, match="hidden_size=128"):
            TtMoE(random_moe_state_dict(narrow, seed=0), narrow, mesh_device)
        moe = TtMoE(weights, CONFIG, mesh_device)
        wrong = emu.from_torch(
            torch.zeros(8, 64),
            dtype=emu.bfloat16,
            layout=emu.TILE_LAYOUT,
            device=mesh_device,
            mesh_mapper=emu.ShardTensorToMesh(mesh_device, dim=1),
        )
        with pytest.raises(ValueError, match=r"\[8, 8\]"):
            moe(wrong)
        with pytest.raises(ValueError, match="mesh"):
            moe(torch.zeros(8, 32))
    finally:
        emu.close_mesh_device(mesh_device)
    odd_mesh = emu.open_mesh_device(emu.MeshShape(3, 8))
    try:
        with pytest.raises(ValueError, match="24 devices"):
            TtMoE(weights, CONFIG, odd_mesh)
    finally:
        emu.close_mesh_device(odd_mesh)


@pytest.mark.parametrize(
    "backend, message",
    [
        ("hardware", "TTNN_MOE_BACKEND=hardware needs the real ttnn 0.81.1 with torch (Python 3.10 or 3.12"),
        ("gpu", "TTNN_MOE_BACKEND must be one of ('emulator', 'hardware'), got 'gpu'"),
    ],
)
def test_the_model_backend_is_chosen_in_one_place(backend, message):
    """The model's ttnn is the emulator by default; asking for hardware where the real ttnn cannot be
    imported (this interpreter has no wheel of it) says so."""
    probe = "import models.deepseek_v3.tt.ttnn_api as api; print(api.BACKEND, api.ttnn.__name__)"
    root = Path(__file__).resolve().parents[1]
    default = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "TTNN_MOE_BACKEND"},
    )
    assert default.returncode == 0 and default.stdout.split() == ["emulator", "ttnn_moe.emu"], default.stderr[-2000:]
    chosen = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, TTNN_MOE_BACKEND=backend),
    )
    assert chosen.returncode != 0 and message in chosen.stderr, chosen.stderr[-2000:]
