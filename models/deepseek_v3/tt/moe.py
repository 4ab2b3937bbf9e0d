"""TtMoE: the DeepSeek-V3 MoE layer on a mesh, step by step (docs/deepseek_v3_moe.md).

Mesh (R, C): axis 1 (the C columns of a row) is tensor parallel, axis 0 (the R
rows of a column) is the dispatch line. Shapes are per device; B tokens per
mesh row, H hidden, E_l experts per device, K top-k, I expert intermediate,
Is shared intermediate, cap dispatch capacity.

Two kinds of calls:
- our kernels (`ttnn_moe.*`): moe_gate, all_to_all_dispatch_dense, moe_bmm
  (the routed and the shared experts, SwiGLU fused, the shared expert's down
  projection adding the routed share), local_reduce_moe_output,
  all_to_all_combine_dense;
- ttnn's own ops (`ttnn` from `ttnn_api`): all_gather, reduce_scatter, to_layout,
  reshape. On hardware the real ttnn ops; in the emulator the collectives are fabric
  line kernels and to_layout a tilize/untilize program (ttnn_moe.emu's line_ccl and
  layout_programs), and these reshapes are views, so the whole forward pass runs on
  the devices: nothing is computed on or read back to the host between input and output.

Nothing in `forward` reads a count back to the host: every op takes its counts
from device memory. Ops that can validate by reading back (gate, dispatch, moe_bmm,
local reduce, combine) get strict=False; their device-side status (e.g. dispatch_status) is
kept on the device for a caller that wants to check it outside the hot path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Mapping, Optional

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.tt.moe_weights import TtMoEWeights, load_tt_moe_weights
from models.deepseek_v3.tt.ttnn_api import ttnn, ttnn_moe

if TYPE_CHECKING:  # a state dict holds torch tensors; the layer itself runs without torch (from_weights)
    import torch

DISPATCH_AXIS = 0  # mesh rows: tokens travel up and down their column to the experts' owners
TP_AXIS = 1  # mesh columns: the hidden dimension is split over a row

StageObserver = Callable[[str, ttnn.Tensor], None]


class TtMoE:
    """The MoE layer's device weights and its forward pass on one mesh."""

    def __init__(
        self,
        state_dict: Mapping[str, torch.Tensor],
        config: DeepseekV3MoEConfig,
        mesh_device: ttnn.MeshDevice,
        *,
        prefix: str = "",
        expert_dtype=ttnn.bfloat16,
        capacity: Optional[int] = None,
    ):
        """state_dict: the layer's weights below `prefix` in any layout `weights.load_moe_layer` reads
        (per-expert, fp8 with block scales, transformers' fused experts). expert_dtype: bfloat16,
        bfloat8_b or bfloat4_b for the routed experts' weights. capacity: dispatch rows per device (None: the
        dispatch op's worst case, which never drops a token)."""
        from models.deepseek_v3.weights import load_moe_layer  # noqa: PLC0415  (torch: host-side weights)

        layer = load_moe_layer(state_dict, config, prefix=prefix)
        weights = load_tt_moe_weights(layer, config, mesh_device, expert_dtype=expert_dtype)
        self._hold(weights, config, mesh_device, capacity)

    @classmethod
    def from_weights(
        cls,
        weights: TtMoEWeights,
        config: DeepseekV3MoEConfig,
        mesh_device: ttnn.MeshDevice,
        *,
        capacity: Optional[int] = None,
    ) -> "TtMoE":
        """The layer over device weights already on `mesh_device` (e.g. streamed from a checkpoint by
        `tt.checkpoint_moe`)."""
        moe = cls.__new__(cls)
        moe._hold(weights, config, mesh_device, capacity)
        return moe

    def _hold(self, weights: TtMoEWeights, config, mesh_device, capacity) -> None:
        self.config = config
        self.mesh_device = mesh_device
        self.capacity = capacity
        self.weights: TtMoEWeights = weights
        self.last_gate_status: Optional[ttnn.Tensor] = None  # (ceil(B/32), 3) uint32 per device, see 2
        self.last_dispatch_status: Optional[ttnn.Tensor] = None  # (1, 8) uint32 per device, see dispatch
        self.last_reduce_row_overflow: Optional[ttnn.Tensor] = None  # (cap, 1) uint32 per device, see 5a
        self.last_reduce_status: Optional[ttnn.Tensor] = None  # (1, 14) uint32 per device, see 5a
        self.last_combine_status: Optional[ttnn.Tensor] = None  # (1, 8) uint32 per device, see 5b
        self._all_rows: dict[int, tuple[ttnn.Tensor, ttnn.Tensor]] = {}  # B -> shared expert's routing, see 6
        self._block_rows: dict[int, tuple[ttnn.Tensor, ttnn.Tensor]] = {}  # B -> dispatched rows, expert output

    def _every_row(self, rows: int) -> tuple[ttnn.Tensor, ttnn.Tensor]:
        """moe_bmm routing of one expert taking all `rows` rows of x: counts [[rows]], offsets [[0]]
        ((1, 1) uint32 each, replicated), uploaded once per batch size."""
        if rows not in self._all_rows:
            self._all_rows[rows] = tuple(
                ttnn.full(
                    ttnn.Shape([1, 1]), value, dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT, device=self.mesh_device
                )
                for value in (rows, 0)
            )
        return self._all_rows[rows]

    def _block_row_buffers(self, batch: int) -> tuple[ttnn.Tensor, ttnn.Tensor]:
        """Dispatch's token rows and the routed experts' output rows, (cap, H) ROW_MAJOR each, zeroed
        once per batch size and written by every step. Dispatch and moe_bmm write only their blocks'
        counted rows and every reader reads only those, so the rest never needs clearing; zeroing once
        keeps it from ever holding memory nothing wrote (which a device would after a fresh
        allocation)."""
        if batch not in self._block_rows:
            rows, cols = tuple(self.mesh_device.shape)
            config = self.config
            capacity = self.capacity or ttnn_moe._C.ops.all_to_all_dispatch_dense.default_capacity(
                tokens_per_device=batch,
                top_k=config.num_experts_per_tok,
                line_size=rows,
                local_experts=config.n_routed_experts // (rows * cols),
            )
            shape = ttnn.Shape([capacity, config.hidden_size])
            self._block_rows[batch] = tuple(
                ttnn.full(shape, 0.0, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT, device=self.mesh_device)
                for _ in range(2)
            )
        return self._block_rows[batch]

    def forward(self, x: ttnn.Tensor, observer: Optional[StageObserver] = None) -> ttnn.Tensor:
        """x per device (B, H/C) bfloat16 TILE -> per device (B, H/C) bfloat16 TILE.

        `observer(stage, tensor)`, if given, sees the mesh tensor after every stage.
        """
        w, config = self.weights, self.config
        notify = observer or (lambda stage, tensor: None)
        rows, cols = tuple(self.mesh_device.shape)
        if not isinstance(x, ttnn.Tensor) or x.device() is not self.mesh_device:
            raise ValueError(f"x must be a tensor on this layer's mesh {self.mesh_device!r}, got {x!r}")
        B, H = int(x.shape[0]), config.hidden_size
        if tuple(x.shape) != (B, H // cols):
            raise ValueError(f"x must be (B, {H // cols}) per device on a {rows}x{cols} mesh, got {list(x.shape)}")
        notify("input", x)  # (B, H/C)

        # 1. All-gather the hidden slices of a row [ttnn op]: every device of a row
        #    holds the row's B tokens in full.
        x_full = ttnn.all_gather(x, dim=1, cluster_axis=TP_AXIS)  # (B, H) TILE
        notify("all_gather", x_full)

        # 2. Route [kernel]: sigmoid scores, group-limited top-k; identical on the devices of a row,
        #    since their x is. The outputs are (1, B, K): dispatch's (batch 1, sequence B, K).
        topk_indices, topk_weights, self.last_gate_status = ttnn_moe.moe_gate(
            x_full,
            w.gate_weight,
            w.gate_bias,
            n_group=config.n_group,
            topk_group=config.topk_group,
            top_k=config.num_experts_per_tok,
            routed_scaling_factor=config.routed_scaling_factor,
            norm_topk_prob=config.norm_topk_prob,
            strict=False,
        )  # (1, B, K) each; the status stays on the device
        notify("gate.topk_indices", topk_indices)
        notify("gate.topk_weights", topk_weights)

        # 3. Dense dispatch down the column [kernel]: device (r, c) receives the rows of column c
        #    whose experts it owns, packed by local expert in 32-row-aligned blocks; each token row
        #    crosses the fabric at most once per destination device.
        x_rows = ttnn.reshape(ttnn.to_layout(x_full, ttnn.ROW_MAJOR_LAYOUT), (1, B, H))  # (1, S=B, H) RM
        notify("to_layout.x_rows", x_rows)
        token_rows, expert_out = self._block_row_buffers(B)
        dispatched = ttnn_moe.all_to_all_dispatch_dense(
            x_rows,
            topk_indices,
            topk_weights,
            w.expert_mapping,
            cluster_axis=DISPATCH_AXIS,
            capacity=self.capacity,
            output_tensors=[token_rows, None, None, None, None],
            strict=False,
        )
        ttnn.deallocate(x_rows)
        self.last_dispatch_status = dispatched.handle.dispatch_status  # (1, 8), stays on device
        counts, offsets = dispatched.num_routed_tokens, dispatched.expert_offsets  # (E_l, 1) each
        notify("dispatch.tokens", dispatched.tokens)  # (cap, H) RM
        notify("dispatch.num_routed_tokens", counts)
        notify("dispatch.expert_offsets", offsets)
        notify("dispatch.token_idx_map", dispatched.token_idx_map)  # (cap,)
        notify("dispatch.routed_token_weights", dispatched.routed_token_weights)  # (cap,)
        notify("dispatch.slot_source", dispatched.handle.slot_source)  # (cap, 2)
        notify("dispatch.num_slots", dispatched.handle.num_slots)  # (1,)

        # 4. Routed experts, grouped moe_bmm over the packed blocks [kernels]: only the active row
        #    tiles of each local expert are computed; idle experts' weights are not read. The first
        #    launch is SwiGLU fused: silu(tokens @ w1) * (tokens @ w3), each token tile read once; it
        #    reads the dispatched ROW_MAJOR rows (only the counted ones) and tilizes them itself.
        hidden = ttnn_moe.moe_bmm(
            dispatched.tokens, w.experts_w1_w3, counts, expert_offsets=offsets, activation="swiglu", strict=False
        )  # (cap, I) TILE
        notify("experts.swiglu", hidden)
        expert_rows = ttnn_moe.moe_bmm(
            hidden, w.experts_w2, counts, expert_offsets=offsets, output_tensor=expert_out, strict=False
        )  # (cap, H) ROW_MAJOR: the counted rows, untilized by the op
        ttnn.deallocate(hidden)
        notify("experts.w2", expert_rows)

        # 5a. Local reduce into slots [kernel]: weight every row by its routing weight (the only
        #     place the weights are applied) and sum the rows of each (source device, token) slot.
        #     A slot receives at most K rows (one per top-k choice): bounding the per-core
        #     assignment lists by K keeps them in L1 at prefill capacities. Only the used slots
        #     [0, num_slots) are computed and written (the count read on the device): combine
        #     reads no other row.
        reduced, self.last_reduce_row_overflow, self.last_reduce_status = ttnn_moe.local_reduce_moe_output(
            expert_rows,
            dispatched.token_idx_map,
            dispatched.routed_token_weights,
            counts,
            num_out_rows=int(dispatched.tokens.shape[0]),
            expert_offsets=offsets,
            num_used_rows=dispatched.handle.num_slots,
            max_assignments_per_row=config.num_experts_per_tok,
            strict=False,
        )  # (cap, H) RM, rows past num_slots not written; (cap, 1), (1, 14)
        notify("local_reduce", reduced)

        # 5b. Combine up the column [kernel]: slot rows return to their source devices, which sum
        #     them in ascending source order: column c's experts' share of every token.
        combined, self.last_combine_status = ttnn_moe.all_to_all_combine_dense(
            reduced, dispatched.handle, strict=False
        )  # (1, B, H) RM, (1, 8)
        notify("combine", combined)

        # 6. Shared expert, tensor parallel [kernels]: moe_bmm with one expert taking every token.
        #    Column c computes its Is/C slice of the intermediate (SwiGLU fused), then its partial
        #    (B, H) of the down projection, which starts from the routed share (the addend), so the
        #    sum of the two never leaves the device; the reduce-scatter below sums the row's partials.
        #    The addend is the combined ROW_MAJOR rows as they are: the op tilizes them itself.
        every_row, at_row_0 = self._every_row(B)  # (1, 1) each
        shared_hidden = ttnn_moe.moe_bmm(
            x_full, w.shared_w1_w3, every_row, expert_offsets=at_row_0, activation="swiglu", strict=False
        )  # (B, Is/C)
        notify("shared_expert.swiglu", shared_hidden)
        partial = ttnn_moe.moe_bmm(
            shared_hidden, w.shared_w2, every_row, expert_offsets=at_row_0, addend=combined, strict=False
        )  # (B, H) TILE: shared partial + routed share
        for intermediate in (shared_hidden, combined):
            ttnn.deallocate(intermediate)
        notify("shared_expert_partial", partial)

        # 7. Reduce-scatter over the row [ttnn op]: sum the C partials, column c keeps slice c.
        output = ttnn.reduce_scatter(partial, dim=1, cluster_axis=TP_AXIS)  # (B, H/C)
        notify("reduce_scatter", output)
        return output

    __call__ = forward
