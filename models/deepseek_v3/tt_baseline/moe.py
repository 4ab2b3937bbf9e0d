"""TtMoEBaseline: tt-metal's classic DeepSeek-V3 MoE flow (models/demos/deepseek_v3/tt/moe.py and
experts.py of the ttnn 0.81.1 era, the sparse_matmul version) written against the ttnn API; with
path="optimized", its optimized decode flow instead (`optimized.py`, which describes it).

Mesh (R, C) as `TtMoE`: axis 1 is tensor parallel, axis 0 the dispatch line; B tokens per mesh row.
The flow, per device:

 1. ttnn.all_gather over the row (axis 1): (B, H/C) -> (B, H)
 2. gate: our `ttnn_moe.moe_gate` (the same routing as `TtMoE`; tt-metal's gate is its own generic_op)
 3. top-k weights to (K, 1, B, H) TILE: to_layout, reshape, repeat (H, 1, 1, 1), permute (3, 1, 2, 0)
 4. ttnn.all_to_all_dispatch (axis 0) of x (B, 1, 1, H) ROW_MAJOR and the indices (B, 1, 1, K) uint16
    (the gate writes them in uint16, as tt-metal's gate does):
    (1, R*B, 1, H) with the rows routed here, and the metadata (1, R*B, 1, K)
 5. ttnn.moe_expert_token_remap of the remap mask repeated to (1, R*B, 1, E): the sparsity
    (1, 1, R*B/32, E_l) of 32-token blocks per local expert
 6. ttnn.sparse_matmul w1 and w3 over the blocks (x as (1, R*B/32, 32, H) TILE), ttnn.mul with SiLU on
    its first input, ttnn.sparse_matmul w2 (input sparse): (R*B/32, E_l, 32, H)
 7. permute (1, 0, 2, 3), to ROW_MAJOR, reshape (E_l, R*B, 1, H); ttnn.all_to_all_combine (axis 0):
    (K, B, 1, H), each slot holding the output of the token's k-th expert if the expert is in this column
 8. reshape (K, 1, B, H), to TILE, ttnn.mul by the top-k weights, ttnn.sum over K: this column's
    experts' share of every token
 9. shared expert, tensor parallel as tt-metal's MLP: ttnn.linear w1, w3 (H, Is/C), ttnn.mul with
    SiLU, ttnn.linear w2 (Is/C, H): column c's partial, added (ttnn.add) to the routed share
10. ttnn.reduce_scatter over the row (axis 1): (B, H) -> (B, H/C)

tt-metal's decoder block reduce-scatters the MoE and the shared-expert outputs separately and adds
them after; adding first (step 9) saves the baseline one reduce-scatter. tt-metal's newest prefill
path computes the experts densely over repeated activations; here prefill takes the sparse flow too.

Which of these ops run as device programs depends on the backend: `ops.on_device` names them (on the
emulator and on hardware: all of them), and any other would run as a host stand-in (`host_standins`),
listed in `ops.host_steps` for every call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Optional

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.tt.ttnn_api import ttnn, ttnn_moe
from models.deepseek_v3.tt_baseline.expert_matmul_configs import expert_compute_config, expert_program_config
from models.deepseek_v3.tt_baseline.optimized import OptimizedMoEFlow
from models.deepseek_v3.tt_baseline.ttmetal_flow_ops import TtMetalFlowOps
from models.deepseek_v3.tt_baseline.weights import ClassicMoEWeights, load_classic_weights

if TYPE_CHECKING:
    import torch

DISPATCH_AXIS = 0
TP_AXIS = 1
SPARSITY_BLOCK = 32  # tokens per sparsity block: one tile of rows
PATHS = {
    "classic": "all_to_all_dispatch, moe_expert_token_remap, sparse_matmul, all_to_all_combine",
    "optimized": "ttnn.experimental.all_to_all_dispatch_metadata, moe_compute, selective_reduce_combine, "
    "deepseek_moe_reduce_scatter",
}
# ttnn's UnaryOpType.SILU on hardware; the emulator's binary ops take the activation's name.
SILU = ttnn.UnaryOpType.SILU if hasattr(ttnn, "UnaryOpType") else "silu"

StageObserver = Callable[[str, ttnn.Tensor], None]


class TtMoEBaseline:
    """tt-metal's MoE flow over the layer's weights on one mesh; `forward` as `TtMoE.forward`."""

    def __init__(
        self,
        state_dict: Mapping[str, torch.Tensor],
        config: DeepseekV3MoEConfig,
        mesh_device: ttnn.MeshDevice,
        *,
        path: str = "classic",
        prefix: str = "",
        expert_dtype=ttnn.bfloat16,
        tokens_per_row: int = 32,
    ):
        """`expert_dtype`: the classic flow's expert format (the optimized flow's moe_compute reads bfloat4_b
        only); `tokens_per_row`: the decode batch per mesh row the optimized flow is built for (its gate bias
        holds one row per token, as tt-metal's optimized model is configured for a batch per row)."""
        if path not in PATHS:
            raise ValueError(f"path must be one of {sorted(PATHS)}, got {path!r}")
        from models.deepseek_v3.weights import load_moe_layer  # noqa: PLC0415  (torch: host-side weights)

        self.path = path
        self.config = config
        self.mesh_device = mesh_device
        layer = load_moe_layer(state_dict, config, prefix=prefix)
        if path == "optimized":
            self.flow = OptimizedMoEFlow(layer, config, mesh_device, tokens_per_row=tokens_per_row)
            self.ops = self.flow.ops
            return
        self.weights: ClassicMoEWeights = load_classic_weights(layer, config, mesh_device, expert_dtype=expert_dtype)
        self.ops = TtMetalFlowOps()

    def forward(self, x: ttnn.Tensor, observer: Optional[StageObserver] = None) -> ttnn.Tensor:
        """x per device (B, H/C) bfloat16 TILE -> per device (B, H/C) bfloat16 TILE.

        `observer(op, tensor)`, if given, sees the mesh tensor after every op, named by the op."""
        if self.path == "optimized":
            return self.flow.forward(x, observer)
        w, config, ops = self.weights, self.config, self.ops
        notify = observer or (lambda op, tensor: None)
        rows, cols = tuple(self.mesh_device.shape)
        if not isinstance(x, ttnn.Tensor) or x.device() is not self.mesh_device:
            raise ValueError(f"x must be a tensor on this layer's mesh {self.mesh_device!r}, got {x!r}")
        B, H, K = int(x.shape[0]), config.hidden_size, config.num_experts_per_tok
        E_l, T = w.experts_per_device, rows * B  # T: the tokens of a dispatch line
        if tuple(x.shape) != (B, H // cols):
            raise ValueError(f"x must be (B, {H // cols}) per device on a {rows}x{cols} mesh, got {list(x.shape)}")
        if T % SPARSITY_BLOCK:
            raise ValueError(f"the {rows} rows' {T} tokens must split into sparsity blocks of {SPARSITY_BLOCK}")
        blocks = T // SPARSITY_BLOCK

        def step(op: str, tensor: ttnn.Tensor) -> ttnn.Tensor:
            notify(op, tensor)
            return tensor

        # 1-2. Gather the row's hidden slices; route.
        x_full = step("ttnn.all_gather", ttnn.all_gather(x, dim=1, cluster_axis=TP_AXIS))  # (B, H)
        indices, weights, _ = ttnn_moe.moe_gate(
            x_full,
            w.gate_weight,
            w.gate_bias,
            n_group=config.n_group,
            topk_group=config.topk_group,
            top_k=K,
            routed_scaling_factor=config.routed_scaling_factor,
            norm_topk_prob=config.norm_topk_prob,
            indices_dtype=ttnn.uint16,
            strict=False,
        )  # (1, B, K) each, the indices uint16 as the dispatch takes them; the NaN-token status is not read
        step("moe_gate", indices)

        # 3. The top-k weights broadcast over the hidden dim, one (1, B, H) plane per choice.
        weights = step("ttnn.reshape topk weights", ttnn.reshape(weights, (1, 1, B, K)))
        weights = step("ttnn.repeat topk weights", ops.repeat(weights, ttnn.Shape([H, 1, 1, 1])))  # (H, 1, B, K)
        weights = step("ttnn.permute topk weights", ops.permute(weights, (3, 1, 2, 0)))  # (K, 1, B, H)
        weights = step("ttnn.to_layout topk weights -> TILE", ttnn.to_layout(weights, ttnn.TILE_LAYOUT))

        # 4. Dispatch down the column.
        x_rm = step("ttnn.to_layout x -> ROW_MAJOR", ttnn.to_layout(x_full, ttnn.ROW_MAJOR_LAYOUT))
        x_rm = step("ttnn.reshape x", ttnn.reshape(x_rm, (B, 1, 1, H)))
        indices = step("ttnn.reshape topk indices", ttnn.reshape(indices, (B, 1, 1, K)))
        dispatched, metadata = ops.all_to_all_dispatch(x_rm, indices, w.expert_mapping, cluster_axis=DISPATCH_AXIS)
        step("ttnn.all_to_all_dispatch", dispatched)  # (1, T, 1, H) RM, metadata (1, T, 1, K)
        tokens = step("ttnn.reshape dispatched", ttnn.reshape(dispatched, (1, 1, T, H)))
        tokens = step("ttnn.to_layout dispatched -> TILE", ttnn.to_layout(tokens, ttnn.TILE_LAYOUT))

        # 5. Which 32-token blocks each local expert needs.
        mask = step("ttnn.repeat remap mask", ops.repeat(w.remap_topk_mask, ttnn.Shape([1, B, 1, 1])))  # (1, T, 1, E)
        _, sparsity = ops.moe_expert_token_remap(mask, w.expert_mapping, metadata, reduction_size=SPARSITY_BLOCK)
        step("ttnn.moe_expert_token_remap", sparsity)  # (1, 1, T/32, E_l)

        # 6. The experts over the active blocks.
        tokens = step("ttnn.reshape tokens to blocks", ttnn.reshape(tokens, (1, blocks, SPARSITY_BLOCK, H)))
        I = config.moe_intermediate_size  # noqa: E741
        up_config = dict(
            sparsity=sparsity,
            program_config=expert_program_config(ops, H, I),
            compute_kernel_config=expert_compute_config(ops, "LoFi"),
        )
        gate = step("ttnn.sparse_matmul w1", ops.sparse_matmul(tokens, w.w1, **up_config))  # (T/32, E_l, 32, I)
        up = step("ttnn.sparse_matmul w3", ops.sparse_matmul(tokens, w.w3, **up_config))
        hidden = step("ttnn.mul silu(w1) * w3", ops.mul(gate, up, input_tensor_a_activations=[SILU]))
        for intermediate in (tokens, gate, up):
            ttnn.deallocate(intermediate)
        expert_out = ops.sparse_matmul(
            hidden,
            w.w2,
            sparsity=sparsity,
            program_config=expert_program_config(ops, I, H),
            compute_kernel_config=expert_compute_config(ops, "HiFi2"),
            is_input_a_sparse=True,
            is_input_b_sparse=False,
        )  # (T/32, E_l, 32, H)
        step("ttnn.sparse_matmul w2", expert_out)
        ttnn.deallocate(hidden)

        # 7. Back to the tokens' devices.
        expert_out = step("ttnn.permute expert outputs", ops.permute(expert_out, (1, 0, 2, 3)))  # (E_l, T/32, 32, H)
        expert_out = step("ttnn.reshape expert outputs", ttnn.reshape(expert_out, (1, E_l, T, H)))
        expert_out = step(
            "ttnn.to_layout expert outputs -> ROW_MAJOR", ttnn.to_layout(expert_out, ttnn.ROW_MAJOR_LAYOUT)
        )
        expert_out = step("ttnn.reshape expert outputs for combine", ttnn.reshape(expert_out, (E_l, T, 1, H)))
        combined = ops.all_to_all_combine(expert_out, metadata, w.expert_mapping, cluster_axis=DISPATCH_AXIS)
        step("ttnn.all_to_all_combine", combined)  # (K, B, 1, H) RM
        ttnn.deallocate(expert_out)

        # 8. Weigh the K choices and sum them.
        combined = step("ttnn.reshape combined", ttnn.reshape(combined, (K, 1, B, H)))
        combined = step("ttnn.to_layout combined -> TILE", ttnn.to_layout(combined, ttnn.TILE_LAYOUT))
        weighted = step("ttnn.mul by topk weights", ops.mul(combined, weights))
        routed = step("ttnn.sum over K", ops.sum(weighted, dim=0, keepdim=True))  # (1, 1, B, H)

        # 9. Shared expert, tensor parallel; its partial joins the routed share.
        shared_gate = step("ttnn.linear shared w1", ops.linear(x_full, w.shared_w1))  # (B, Is/C)
        shared_up = step("ttnn.linear shared w3", ops.linear(x_full, w.shared_w3))
        shared_hidden = step(
            "ttnn.mul shared silu(w1) * w3", ops.mul(shared_gate, shared_up, input_tensor_a_activations=[SILU])
        )
        shared = step("ttnn.linear shared w2", ops.linear(shared_hidden, w.shared_w2))  # (B, H) partial
        partial = step("ttnn.add routed + shared", ops.add(ttnn.reshape(routed, (B, H)), shared))

        # 10. Sum the row's partials; column c keeps slice c.
        return step("ttnn.reduce_scatter", ttnn.reduce_scatter(partial, dim=1, cluster_axis=TP_AXIS))

    __call__ = forward
