"""tt-metal's optimized DeepSeek-V3 MoE decode flow (models/demos/deepseek_v3/tt/moe_optimized.py and the
decoder block around it) written against the ttnn API, over Tenstorrent's unmodified kernels
(`ttnn_moe.emu.ttmetal`).

Mesh (R, C) as `TtMoE`: axis 1 is tensor parallel, axis 0 the dispatch axis; B tokens per mesh row. Per device:

 1. ttnn.all_gather over the row (axis 1): (B, H/C) -> (B, H)
 2. gate: ttnn.linear of the gate projection -> logits (1, 1, B, E) bfloat16;
    ttnn.experimental.deepseek_grouped_gate(logits, bias rows, route_scale = routed_scaling_factor)
    -> top-k weights and indices (1, 1, B, K), TILE
 3. the indices and weights to ROW_MAJOR in L1, (B, 1, 1, K) (tt-metal's permute (2, 0, 1, 3) moves only
    unit dims: a reshape here), for the dispatch
 4. the top-k weights one column per choice: to ROW_MAJOR, permute (3, 1, 2, 0), to TILE -> (K, 1, B, 1)
 5. ttnn.experimental.all_to_all_dispatch_metadata (axis 0, drain core (6, 9), SPARSE_MCAST_SHORTEST_PATH):
    x (B, 1, 1, H) ROW_MAJOR and the top-k rows -> the dispatch group's T = R*B tokens (1, T, H) in DRAM,
    their indices and scores (1, T, K) in L1 of the drain core
 6. ttnn.experimental.moe_compute over the ring-prepared bfloat4_b experts -> (K, B, H): row k of token b the
    output of the token's k-th expert. On a mesh of one row its LocalOutput path (each device its own group);
    else its FullCcl path (output_height_shard_dim 4, mux cores (3, 0) - (3, 7)), whose combine,
    selective_reduce_combine's kernels in the same program, sends each row back to its token's device
 7. unsqueeze to (K, 1, B, H), tilize (tt-metal's deepseek_moe_post_combine_tilize for 32 tokens, which is not
    described here: ttnn.to_layout), ttnn.mul by the top-k weights (K, 1, B, 1): binary_ng's column broadcast
    of b, each weight spread across the hidden dim inside the op
 8. the sum over K and the reduce-scatter over the row: ttnn.experimental.deepseek_moe_fast_reduce_nc (dim 0,
    split into C slices) + deepseek_moe_reduce_scatter on a Ring row of 8 with 32 tokens (tt-metal's decode
    condition; the slices must shard into even tile counts), else ttnn.sum + ttnn.reduce_scatter
 9. shared expert, tensor parallel as tt-metal's MLP (ttnn.linear w1, w3, ttnn.mul with SiLU, ttnn.linear w2),
    its partial reduce-scattered over the row and added (ttnn.add) to the routed share, as tt-metal's decoder
    block adds the MoE and shared-expert outputs

moe_compute's ring needs the full Wormhole grid (open the mesh with grid=(8, 10)) and an intermediate size of at
least one tile per ring core (384): ttnn 0.81.1's moe_compute refuses fewer tiles than its 12 ring cores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Optional

from ttnn_moe._C.program import CoreCoord, CoreRange, CoreRangeSet

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.tt.ttnn_api import emulator, ttmetal_ops, ttmetal_optimized_ops, ttnn
from models.deepseek_v3.tt_baseline.optimized_weights import OptimizedMoEWeights, load_optimized_weights

if TYPE_CHECKING:
    import torch

DISPATCH_AXIS = 0
TP_AXIS = 1
DRAIN_CORE = (6, 9)  # tt-metal's drain_sync_tilizer_core: moe_compute's first tilize core
OUTPUT_HEIGHT_SHARD_DIM = 4  # moe_compute's token-parallel combine cores, as tt-metal's decode configures it
# The fabric mux cores of moe_compute's combine: the x = 3 column of tt-metal's (3, 0) - (4, 7); its x = 4 column
# holds ring cores (the workers beside DRAM banks 6 .. 11) in this layout, which the op refuses as mux cores.
MUX_CORES = CoreRangeSet([CoreRange(CoreCoord(3, 0), CoreCoord(3, 7))])
RING_DEVICES = 8  # deepseek_moe_reduce_scatter's ring
RING_TOKENS = 32  # the decode batch per row the fused reduce path is built for
RS_SHARD_WIDTH = 128  # columns of one reduce-scatter input shard (4 tiles), as on the decode path
TILE = 32
MESH_GRID = (8, 10)  # the Wormhole worker grid moe_compute lays its ring and tilize cores out on
SILU = "silu"

# Tenstorrent's ops the flow runs, each a device program of the wheel's kernels here.
ON_DEVICE = (
    "linear",
    "mul",
    "add",
    "permute",
    "sum",
    "deepseek_grouped_gate",
    "all_to_all_dispatch_metadata",
    "moe_compute",
    "deepseek_moe_fast_reduce_nc",
    "deepseek_moe_reduce_scatter",
)

StageObserver = Callable[[str, ttnn.Tensor], None]


def open_mesh(rows: int, cols: int) -> ttnn.MeshDevice:
    """A mesh as tt-metal's optimized flow runs on it: the full Wormhole grid and a ring fabric (its model asserts
    one)."""
    if emulator is None:  # hardware: the device's own grid; tt-fabric configured before the mesh opens
        if rows * cols > 1:
            ttnn.set_fabric_config(ttnn.FabricConfig.FABRIC_1D_RING)
        return ttnn.open_mesh_device(ttnn.MeshShape(rows, cols))
    mesh = emulator.open_mesh_device(emulator.MeshShape(rows, cols), grid=MESH_GRID)
    mesh.fabric_topology = emulator.Topology.Ring
    return mesh


class OptimizedFlowOps:
    """Tenstorrent's ops the optimized flow calls, resolved once (`ttnn_api`)."""

    def __init__(self):
        classic, optimized = ttmetal_ops(), ttmetal_optimized_ops()
        self.linear, self.mul, self.add = classic.linear, classic.mul, classic.add
        self.matmul_1d_config = classic.MatmulMultiCoreReuseMultiCast1DProgramConfig
        self.permute, self.sum = classic.permute, classic.sum
        self.deepseek_grouped_gate = optimized.deepseek_grouped_gate
        self.all_to_all_dispatch_metadata = optimized.all_to_all_dispatch_metadata
        self.dispatch_algorithm = optimized.DispatchAlgorithm.SPARSE_MCAST_SHORTEST_PATH
        self.moe_compute_local_output = optimized.moe_compute_local_output
        self.moe_compute_full_ccl = optimized.moe_compute_full_ccl
        self.place_ring_weights = optimized.place_moe_compute_weights
        self.check_moe_compute_intermediate_size = optimized.check_moe_compute_intermediate_size
        self.check_moe_compute_full_ccl = optimized.check_moe_compute_full_ccl
        self.fast_reduce_nc = optimized.deepseek_moe_fast_reduce_nc
        self.moe_reduce_scatter = optimized.deepseek_moe_reduce_scatter
        self.input_shards = optimized.ReduceScatterInputShards
        self.on_device = set(ON_DEVICE)
        self.host_steps: list[str] = []  # no op of this flow runs as a host stand-in


def shared_w2_program_config(ops: OptimizedFlowOps, mesh_device, tokens: int, k: int, n: int):
    """The program config of the shared expert's (tokens, k) x (k, n) linear: tt-metal's own choice (None) where its
    cores fill whole rows of the grid. Else (DeepSeek-V3's n = 7168 on the 8x10 grid: 224 output tiles over 80
    cores, 3 each, 75 cores) the same 1D config with the fewest tiles per core whose cores do: tt-metal's program
    gives the idle cores of the multicast rectangle a part that is not described here (the emulator's refuses them)."""
    grid = mesh_device.compute_with_storage_grid_size()
    m_tiles, k_tiles, n_tiles = -(-tokens // TILE), k // TILE, n // TILE
    per_core_n = -(-n_tiles // (grid.x * grid.y))

    def fills_rows(width: int) -> bool:
        cores = -(-n_tiles // width)
        return cores <= grid.x or cores % grid.x == 0

    if fills_rows(per_core_n):
        return None
    while not fills_rows(per_core_n):
        per_core_n += 1
    return ops.matmul_1d_config(
        compute_with_storage_grid_size=(grid.x, grid.y),
        in0_block_w=2 if k_tiles % 2 == 0 else 1,
        out_subblock_h=1,
        out_subblock_w=max(w for w in range(1, 9) if per_core_n % w == 0),  # DST: 8 bfloat16 tiles
        out_block_h=m_tiles,
        out_block_w=per_core_n,
        per_core_M=m_tiles,
        per_core_N=per_core_n,
        fuse_batch=True,
    )


class OptimizedMoEFlow:
    """tt-metal's optimized MoE decode flow on one mesh; `forward` as `TtMoE.forward`."""

    def __init__(
        self,
        layer: Mapping[str, torch.Tensor],
        config: DeepseekV3MoEConfig,
        mesh_device: ttnn.MeshDevice,
        *,
        tokens_per_row: int,
    ):
        if isinstance(tokens_per_row, bool) or not isinstance(tokens_per_row, int) or tokens_per_row <= 0:
            raise ValueError(f"tokens_per_row must be a positive int, got {tokens_per_row!r}")
        self.ops = OptimizedFlowOps()
        try:
            self.ops.check_moe_compute_intermediate_size(config.moe_intermediate_size)
        except ValueError as refusal:
            raise ValueError(f"moe_intermediate_size={config.moe_intermediate_size}: {refusal}") from None
        rows, cols = tuple(mesh_device.shape)
        if rows > 1:  # moe_compute's FullCcl path: refused here before any weight is placed
            local_experts = config.n_routed_experts // (rows * cols)
            try:
                self.ops.check_moe_compute_full_ccl(
                    mesh_device, rows * tokens_per_row, local_experts, config.num_experts_per_tok, config.hidden_size,
                    OUTPUT_HEIGHT_SHARD_DIM,
                )  # fmt: skip
            except ValueError as refusal:
                raise ValueError(f"tokens_per_row={tokens_per_row} on a {rows}x{cols} mesh: {refusal}") from None
        self.config = config
        self.mesh_device = mesh_device
        self.tokens_per_row = tokens_per_row
        self.weights: OptimizedMoEWeights = load_optimized_weights(
            layer, config, mesh_device, tokens_per_row=tokens_per_row, place_ring_weights=self.ops.place_ring_weights
        )
        self.reduce_path = self._reduce_path()
        _, cols = tuple(mesh_device.shape)
        self.shared_w2_config = shared_w2_program_config(
            self.ops, mesh_device, tokens_per_row, config.shared_intermediate_size // cols, config.hidden_size
        )

    def _reduce_path(self) -> str:
        """tt-metal's choice of the decode's expert sum and reduce-scatter, and where this mesh takes it."""
        _, cols = tuple(self.mesh_device.shape)
        slice_width = self.config.hidden_size // cols
        ring = getattr(self.mesh_device, "fabric_topology", None) == ttnn.Topology.Ring
        if ring and cols == RING_DEVICES and self.tokens_per_row == RING_TOKENS and slice_width % (2 * TILE) == 0:
            return "deepseek_moe_fast_reduce_nc + deepseek_moe_reduce_scatter"
        return "ttnn.sum + ttnn.reduce_scatter"

    def forward(self, x: ttnn.Tensor, observer: Optional[StageObserver] = None) -> ttnn.Tensor:
        """x per device (B, H/C) bfloat16 TILE -> per device (B, H/C) bfloat16 TILE.

        `observer(op, tensor)`, if given, sees the mesh tensor after every op, named by the op."""
        w, config, ops = self.weights, self.config, self.ops
        notify = observer or (lambda op, tensor: None)
        rows, cols = tuple(self.mesh_device.shape)
        if not isinstance(x, ttnn.Tensor) or x.device() is not self.mesh_device:
            raise ValueError(f"x must be a tensor on this layer's mesh {self.mesh_device!r}, got {x!r}")
        B, H, K, E = int(x.shape[0]), config.hidden_size, config.num_experts_per_tok, config.n_routed_experts
        if tuple(x.shape) != (self.tokens_per_row, H // cols):
            raise ValueError(
                f"x must be ({self.tokens_per_row}, {H // cols}) per device (the layer was built for "
                f"tokens_per_row={self.tokens_per_row} on a {rows}x{cols} mesh), got {list(x.shape)}"
            )

        def step(op: str, tensor: ttnn.Tensor) -> ttnn.Tensor:
            notify(op, tensor)
            return tensor

        # 1-2. Gather the row's hidden slices; route.
        x_full = step("ttnn.all_gather", ttnn.all_gather(x, dim=1, cluster_axis=TP_AXIS))  # (B, H)
        logits = step("ttnn.linear gate", ops.linear(x_full, w.gate_weight))  # (B, E)
        logits = ttnn.reshape(logits, (1, 1, B, E))
        weights, indices = ops.deepseek_grouped_gate(
            logits,
            w.gate_bias,
            n_groups=config.n_group,
            summed_experts_per_group=2,
            topk_groups=config.topk_group,
            n_activated_experts=K,
            route_scale=config.routed_scaling_factor,
            epsilon=1e-20,
        )  # (1, 1, B, K) each, TILE
        step("ttnn.experimental.deepseek_grouped_gate", indices)

        # 3. The top-k rows in L1, as the dispatch reads them.
        indices = step(
            "ttnn.to_layout topk indices -> ROW_MAJOR L1",
            ttnn.to_layout(indices, ttnn.ROW_MAJOR_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG),
        )
        scores = step(
            "ttnn.to_layout topk weights -> ROW_MAJOR L1",
            ttnn.to_layout(weights, ttnn.ROW_MAJOR_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG),
        )
        indices, scores = ttnn.reshape(indices, (B, 1, 1, K)), ttnn.reshape(scores, (B, 1, 1, K))

        # 4. The top-k weights one column per choice, for the scaling after moe_compute.
        scale = step("ttnn.to_layout topk weights -> ROW_MAJOR", ttnn.to_layout(weights, ttnn.ROW_MAJOR_LAYOUT))
        scale = step("ttnn.permute topk weights", ops.permute(scale, (3, 1, 2, 0)))  # (K, 1, B, 1)
        scale = step("ttnn.to_layout topk weights -> TILE", ttnn.to_layout(scale, ttnn.TILE_LAYOUT))

        # 5. Dispatch down the column: tokens and their routing to the devices of their experts.
        x_rm = step("ttnn.to_layout x -> ROW_MAJOR", ttnn.to_layout(x_full, ttnn.ROW_MAJOR_LAYOUT))
        x_rm = ttnn.reshape(x_rm, (B, 1, 1, H))
        dispatched, routed_indices, routed_scores = ops.all_to_all_dispatch_metadata(
            x_rm,
            indices,
            scores,
            w.expert_mapping,
            cluster_axis=DISPATCH_AXIS,
            drain_sync_tilizer_core=DRAIN_CORE,
            dispatch_algorithm=ops.dispatch_algorithm,
        )
        step("ttnn.experimental.all_to_all_dispatch_metadata", dispatched)  # (1, T, H), (1, T, K) x 2

        # 6. The local experts over the tokens that chose them; with several devices down the column their rows
        # go back to the tokens' devices in the same program.
        if rows == 1:
            expert_out, _, _ = ops.moe_compute_local_output(
                dispatched, routed_indices, routed_scores, w.expert_mapping, w.ring_weights, cluster_axis=DISPATCH_AXIS
            )
        else:
            expert_out, _, _ = ops.moe_compute_full_ccl(
                dispatched,
                routed_indices,
                routed_scores,
                w.expert_mapping,
                w.ring_weights,
                cluster_axis=DISPATCH_AXIS,
                mux_core_range_set=MUX_CORES,
                output_height_shard_dim=OUTPUT_HEIGHT_SHARD_DIM,
            )
        step("ttnn.experimental.moe_compute", expert_out)  # (K, B, H) ROW_MAJOR: this device's tokens

        # 7. Weigh each choice.
        expert_out = ttnn.reshape(expert_out, (K, 1, B, H))
        expert_out = step("ttnn.to_layout expert outputs -> TILE", ttnn.to_layout(expert_out, ttnn.TILE_LAYOUT))
        weighted = step("ttnn.mul by topk weights", ops.mul(expert_out, scale))  # (K, 1, B, H) x (K, 1, B, 1)

        # 8. Sum the K choices and the row's partials; column c keeps slice c.
        routed = self._sum_and_reduce_scatter(weighted, step)  # (1, 1, B, H/C)

        # 9. Shared expert, tensor parallel; its reduced share joins the routed one.
        shared_gate = step("ttnn.linear shared w1", ops.linear(x_full, w.shared_w1))  # (B, Is/C)
        shared_up = step("ttnn.linear shared w3", ops.linear(x_full, w.shared_w3))
        shared_hidden = step(
            "ttnn.mul shared silu(w1) * w3", ops.mul(shared_gate, shared_up, input_tensor_a_activations=[SILU])
        )
        shared = step(
            "ttnn.linear shared w2", ops.linear(shared_hidden, w.shared_w2, program_config=self.shared_w2_config)
        )  # (B, H) partial
        shared = step("ttnn.reduce_scatter shared", ttnn.reduce_scatter(shared, dim=1, cluster_axis=TP_AXIS))
        return step("ttnn.add routed + shared", ops.add(ttnn.reshape(routed, (B, H // cols)), shared))

    def _sum_and_reduce_scatter(self, weighted: ttnn.Tensor, step) -> ttnn.Tensor:
        ops, H = self.ops, self.config.hidden_size
        _, cols = tuple(self.mesh_device.shape)
        if self.reduce_path.startswith("deepseek"):
            slice_width = H // cols
            slices = ops.fast_reduce_nc(weighted, 0, split_size=slice_width)  # C x (1, 1, B, H/C)
            step("ttnn.experimental.deepseek_moe_fast_reduce_nc", slices[0])
            width = RS_SHARD_WIDTH if slice_width % RS_SHARD_WIDTH == 0 else slice_width
            shards = ops.input_shards(width, tuple(CoreCoord(i, 0) for i in range(slice_width // width)))
            out = ops.moe_reduce_scatter(
                slices,
                ttnn.DRAM_MEMORY_CONFIG,
                3,
                cluster_axis=TP_AXIS,
                topology=ttnn.Topology.Ring,
                input_shards=shards,
            )
            return step("ttnn.experimental.deepseek_moe_reduce_scatter", out)
        summed = step("ttnn.sum over K", ops.sum(weighted, dim=0, keepdim=True))  # (1, 1, B, H)
        return step("ttnn.reduce_scatter", ttnn.reduce_scatter(summed, dim=3, cluster_axis=TP_AXIS))

    __call__ = forward
