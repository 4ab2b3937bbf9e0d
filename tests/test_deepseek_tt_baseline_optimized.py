"""TtMoEBaseline(path="optimized"): tt-metal's optimized DeepSeek-V3 decode flow (deepseek_grouped_gate,
all_to_all_dispatch_metadata, moe_compute, the fused expert sum and ring reduce-scatter) against the fp32
reference: on meshes of one row (moe_compute's LocalOutput path) and of several (its FullCcl path).

The acceptance is tt-metal's own for the layer: PCC 0.97 over the hidden dim
(models/demos/deepseek_v3/tests/test_moe.py); its experts are bfloat4_b (the only format moe_compute reads).
"""

import dataclasses

import pytest
import torch
from ttmetal_moe_compute_golden import bfloat4_b
from ttnn_moe.emu.ttmetal import moe_compute_weights as mw
from ttnn_moe.testing import assert_pcc

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.reference import moe_gate as reference_gate
from models.deepseek_v3.reference import reference_moe
from models.deepseek_v3.tt import input_to_mesh, output_to_torch
from models.deepseek_v3.tt.ttnn_api import ttmetal_optimized_ops
from models.deepseek_v3.tt_baseline import TtMoEBaseline
from models.deepseek_v3.tt_baseline.optimized import OptimizedFlowOps, open_mesh, shared_w2_program_config
from models.deepseek_v3.tt_baseline.optimized_weights import load_optimized_weights
from models.deepseek_v3.weights import RandomMoELayer, random_moe_state_dict
from ttnn_moe import emu

# The mini config at hidden 512: every ring reduce-scatter slice of a 1x8 row is two tiles wide, as the op
# requires (an even tile count per shard); intermediate 384 gives each of moe_compute's 12 ring cores a tile;
# four shared experts give a shared MLP of 1536: 24 tiles per TP column of 1x2 (a 3x8 block of matmul cores), 6
# per column of 1x8.
CONFIG = DeepseekV3MoEConfig.mini(hidden_size=512, moe_intermediate_size=384, n_shared_experts=4)
TTMETAL_LAYER_PCC = 0.97


@pytest.fixture(scope="module")
def weights():
    return random_moe_state_dict(CONFIG, seed=7)


def experts_as_held(state_dict):
    """The layer with its routed experts rounded to bfloat4_b as moe_compute's ring holds them (x @ w.T, tiles of
    w.T)."""
    held = dict(state_dict)
    for name, w in state_dict.items():
        if name.startswith("experts."):
            held[name] = bfloat4_b(w.float().T).T
    return held


def tokens(count: int, seed: int) -> torch.Tensor:
    return torch.randn(count, CONFIG.hidden_size, generator=torch.Generator().manual_seed(seed)).bfloat16().float()


GRID = (8, 10)  # moe_compute's ring: the worker beside each of the 12 DRAM banks


GATE_STEP = "ttnn.experimental.deepseek_grouped_gate"


def run(mesh_shape, x, state_dict, topology=None):
    """The layer's output (T, H), the ops it ran, and the experts its gate chose per token (T, K) (read from the
    gate's output on each row's first device)."""
    mesh = emu.open_mesh_device(emu.MeshShape(*mesh_shape), grid=GRID)
    if topology is not None:
        mesh.fabric_topology = topology
    stages, chosen = [], []

    def observe(op, t):
        stages.append(op)
        if op == GATE_STEP:
            indices = emu.to_torch(t, mesh_composer=emu.ConcatMeshToTensor(mesh, dim=0))
            chosen.append(indices.reshape(mesh_shape[0], mesh_shape[1], -1, indices.shape[-1])[:, 0])

    try:
        layer = TtMoEBaseline(state_dict, CONFIG, mesh, path="optimized", tokens_per_row=x.shape[0] // mesh_shape[0])
        y = output_to_torch(layer(input_to_mesh(x, mesh), observer=observe))
        return y, layer, stages, chosen[0].reshape(x.shape[0], -1).to(torch.int64)
    finally:
        emu.close_mesh_device(mesh)


@pytest.mark.parametrize(
    "mesh_shape, topology, reduce_ops",
    [
        ((1, 2), None, ["ttnn.sum over K", "ttnn.reduce_scatter"]),
        # Dispatch groups of two devices down the columns: moe_compute's FullCcl path combines in its program.
        ((2, 2), None, ["ttnn.sum over K", "ttnn.reduce_scatter"]),
        (
            (1, 8),
            emu.Topology.Ring,
            ["ttnn.experimental.deepseek_moe_fast_reduce_nc", "ttnn.experimental.deepseek_moe_reduce_scatter"],
        ),
    ],
)
def test_optimized_flow_matches_reference(weights, mesh_shape, topology, reduce_ops):
    x = tokens(32 * mesh_shape[0], seed=mesh_shape[1])
    y, layer, stages, chosen = run(mesh_shape, x, weights, topology)
    golden = reference_moe(x, weights, CONFIG)
    assert y.shape == golden.shape
    assert_pcc(golden, y, TTMETAL_LAYER_PCC, f"tt-metal optimized flow on {mesh_shape}")
    # The gate scores bfloat16 logits, so near ties may pick another expert than the fp32 reference: those tokens
    # differ by a whole expert's share. Most agree, and where they do, the output matches the reference over the
    # experts as the devices hold them (bfloat4_b) closely.
    want, _ = reference_gate(x, weights["gate.weight"], weights["gate.e_score_correction_bias"], CONFIG)
    same = (chosen.sort(dim=1).values == want.sort(dim=1).values).all(dim=1)
    print(f"{mesh_shape}: {int(same.sum())} of {len(same)} tokens routed as the fp32 reference")
    assert same.sum() >= 0.75 * len(same)
    held = reference_moe(x, experts_as_held(weights), CONFIG)
    assert (y[same] - held[same]).abs().max() <= 0.02 * held.abs().max()
    for op in ("ttnn.experimental.deepseek_grouped_gate", "ttnn.experimental.all_to_all_dispatch_metadata",
               "ttnn.experimental.moe_compute", *reduce_ops):  # fmt: skip
        assert op in stages, f"{op} did not run; stages: {stages}"
    assert layer.ops.host_steps == []


def test_an_intermediate_size_below_one_tile_per_ring_core_is_refused():
    config = DeepseekV3MoEConfig.mini()  # intermediate 64: two tiles for a ring of 12 cores
    mesh = emu.open_mesh_device(emu.MeshShape(1, 2), grid=GRID)
    try:
        with pytest.raises(
            ValueError,
            match=r"moe_intermediate_size=64: moe_compute: intermediate size 64 is 2 tiles, "
            r"fewer than the 12 cores .* ttnn 0.81.1 refuses it too .* runs is 384",
        ):
            TtMoEBaseline(random_moe_state_dict(config, seed=1), config, mesh, path="optimized")
    finally:
        emu.close_mesh_device(mesh)


def test_a_prefill_batch_and_a_mesh_past_the_emulators_l1_slots_are_refused_before_any_weight_is_placed():
    """moe_compute's FullCcl staging holds token_expert_row_offset rows of an expert per combine core (128 at hidden
    512 with 4 token-parallel cores): 2 x 512 tokens put up to 256 there. A dispatch line of 64 devices x 80 cores
    does not fit the emulator's L1 slots at once (a QUAD's lines of 16 do: they run one at a time)."""
    layer = RandomMoELayer(CONFIG, seed=3)
    mesh = emu.open_mesh_device(emu.MeshShape(2, 2), grid=GRID)
    try:
        with pytest.raises(ValueError, match=r"tokens_per_row=512 on a 2x2 mesh: .*1024 tokens put up to 256 rows .* "
                                             r"more than the 128 of a staging half"):  # fmt: skip
            TtMoEBaseline(layer, CONFIG, mesh, path="optimized", tokens_per_row=512)
    finally:
        emu.close_mesh_device(mesh)
    long_line = emu.open_mesh_device(emu.MeshShape(64, 1), grid=GRID)
    try:
        with pytest.raises(
            NotImplementedError, match=r"line of 64 devices takes 5120 cores at once; the emulator holds"
        ):
            TtMoEBaseline(layer, CONFIG, long_line, path="optimized", tokens_per_row=2)
    finally:
        emu.close_mesh_device(long_line)


def test_a_batch_other_than_the_configured_one_is_refused(weights):
    mesh = emu.open_mesh_device(emu.MeshShape(1, 2), grid=GRID)
    try:
        layer = TtMoEBaseline(weights, CONFIG, mesh, path="optimized", tokens_per_row=32)
        with pytest.raises(ValueError, match=r"tokens_per_row=32 .* got \[16, 256\]"):
            layer(input_to_mesh(tokens(16, seed=1), mesh))
        with pytest.raises(ValueError, match="tokens_per_row must be a positive int, got 0"):
            TtMoEBaseline(weights, CONFIG, mesh, path="optimized", tokens_per_row=0)
    finally:
        emu.close_mesh_device(mesh)


def test_each_device_holds_its_experts_prepared_as_the_whole_stack_would_be():
    """The layer's experts, read expert by expert from a lazy layer, in each device's DRAM banks: the bytes of the
    host forms of prepare_w0_w1 / prepare_w2 over the device's experts stacked at once (fp32, x @ w)."""
    config = dataclasses.replace(CONFIG, n_routed_experts=16, n_group=4, topk_group=2, num_experts_per_tok=4)
    layer = RandomMoELayer(config, seed=11)
    mesh = emu.open_mesh_device(emu.MeshShape(1, 2), grid=GRID)
    try:
        placed = load_optimized_weights(
            layer, config, mesh, tokens_per_row=32, place_ring_weights=ttmetal_optimized_ops().place_moe_compute_weights
        )
        local = placed.experts_per_device
        for d, (chip, ring) in enumerate(zip(mesh.chips, placed.ring_weights)):

            def stacked(projection, d=d):  # (1, E_l, in, out)
                experts = range(d * local, (d + 1) * local)
                return torch.stack([layer[f"experts.{e}.{projection}.weight"].float().T for e in experts])[None]

            for address, shards in (
                (ring.w0_w1_address, mw.shard_bytes(mw.prepare_w0_w1(stacked("gate_proj"), stacked("up_proj")))),
                (ring.w2_address, mw.shard_bytes(mw.prepare_w2(stacked("down_proj")))),
            ):
                size = len(shards[0])
                pages = chip.read(address, size, size * len(shards)).reshape(len(shards), size)  # page b: bank b
                for position, bank in enumerate(ring.banks):
                    assert pages[bank].tobytes() == shards[position], f"device {d}, ring position {position}"
    finally:
        emu.close_mesh_device(mesh)


def test_the_shared_experts_down_projection_at_deepseek_v3_width_runs_on_whole_rows_of_the_grid():
    """(32, 256) x (256, 7168), a TG column's share: tt-metal's 75 cores of the 8x10 grid would leave the multicast
    rectangle partly idle; 56 cores of 4 tiles fill seven rows. Narrower outputs keep tt-metal's choice."""
    ops, mesh = OptimizedFlowOps(), open_mesh(1, 1)
    try:
        config = shared_w2_program_config(ops, mesh, 32, 256, 7168)
        assert (config.per_core_N, config.out_subblock_w) == (4, 4)
        assert shared_w2_program_config(ops, mesh, 32, 192, 512) is None  # 16 tiles on 16 cores: two rows
        gen = torch.Generator().manual_seed(3)
        a, b = torch.randn(32, 256, generator=gen).bfloat16(), torch.randn(256, 7168, generator=gen).bfloat16()
        on_mesh = [emu.from_torch(t, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=mesh) for t in (a, b)]
        y = emu.to_torch(ops.linear(*on_mesh, program_config=config)).float()
        golden = a.float() @ b.float()
        assert_pcc(golden, y, 0.9999, "shared w2")
        assert (y - golden).abs().max() <= 2**-7 * golden.abs().max()  # bfloat16 output rounding
    finally:
        emu.close_mesh_device(mesh)
