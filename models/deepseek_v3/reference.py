"""Torch references of the DeepSeek-V3 MoE layer.

Read top to bottom:
- `moe_gate`: sigmoid scores, bias-corrected group-limited top-k (noaux_tc).
- `reference_moe`: the whole layer on one device, fp32, no mesh: the golden
  every other implementation is compared with.
- `reference_moe_mesh`: the same layer as the mesh flow of SPEC section 5
  (all-gather, gate, dense dispatch, grouped expert matmuls, local reduce,
  combine, tensor-parallel shared expert, reduce-scatter) on per-device
  tensors, calling the ops of a backend (`backends.py`; default the torch
  goldens of `ttnn_moe.golden`).

State dicts use the normalized keys of `weights.load_moe_layer`:
`gate.weight` (E, H), `gate.e_score_correction_bias` (E,),
`experts.{e}.{gate,up,down}_proj.weight` and
`shared_experts.{gate,up,down}_proj.weight` in nn.Linear layout (out, in).

Shape letters: T tokens, H hidden, E routed experts, K experts per token,
G groups, I expert intermediate, Is shared intermediate; on a mesh: R rows,
C columns, B tokens per row, E_l experts per device, cap dispatch capacity.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import torch
import torch.nn.functional as F

from models.deepseek_v3.backends import MeshOpBackend, golden_backend
from models.deepseek_v3.config import DeepseekV3MoEConfig

StageObserver = Callable[[str, Sequence[torch.Tensor]], None]


def moe_gate(x: torch.Tensor, gate_weight: torch.Tensor, e_score_correction_bias: torch.Tensor,
             config: DeepseekV3MoEConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """Routes each token to K experts.

    x (T, H), gate_weight (E, H), e_score_correction_bias (E,) ->
    topk_indices (T, K) int64 (by descending biased score), topk_weights (T, K) fp32.
    """
    E, G, K = config.n_routed_experts, config.n_group, config.num_experts_per_tok
    if x.dim() != 2 or x.shape[1] != config.hidden_size:
        raise ValueError(f"x must be (T, {config.hidden_size}), got {tuple(x.shape)}")
    if tuple(gate_weight.shape) != (E, config.hidden_size):
        raise ValueError(f"gate_weight must be ({E}, {config.hidden_size}), got {tuple(gate_weight.shape)}")
    if tuple(e_score_correction_bias.shape) != (E,):
        raise ValueError(f"e_score_correction_bias must be ({E},), got {tuple(e_score_correction_bias.shape)}")
    T = x.shape[0]

    scores = torch.sigmoid(x.float() @ gate_weight.float().T)           # (T, E)  s
    biased = scores + e_score_correction_bias.float()                   # (T, E)  b = s + bias

    # A group is as good as the sum of its two best biased scores.
    group_scores = biased.view(T, G, E // G).topk(2, dim=-1).values.sum(dim=-1)         # (T, G)
    best_groups = group_scores.topk(config.topk_group, dim=-1).indices                   # (T, topk_group)
    group_kept = torch.zeros(T, G, dtype=torch.bool).scatter_(1, best_groups, True)      # (T, G)
    expert_kept = group_kept.repeat_interleave(E // G, dim=1)                            # (T, E)

    # The bias decides which experts win ...
    candidates = biased.masked_fill(~expert_kept, float("-inf"))                         # (T, E)
    topk_indices = candidates.topk(K, dim=-1).indices                                    # (T, K)
    # ... but the weights come from the unbiased scores.
    topk_weights = scores.gather(1, topk_indices)                                        # (T, K)
    if config.norm_topk_prob:
        topk_weights = topk_weights / topk_weights.sum(dim=-1, keepdim=True)
    topk_weights = topk_weights * config.routed_scaling_factor                           # (T, K)
    return topk_indices, topk_weights


def swiglu_mlp(x: torch.Tensor, gate_proj: torch.Tensor, up_proj: torch.Tensor,
               down_proj: torch.Tensor) -> torch.Tensor:
    """down(silu(gate x) * up x) in fp32: x (n, H), gate/up (I, H), down (H, I) -> (n, H)."""
    x = x.float()
    hidden = F.silu(x @ gate_proj.float().T) * (x @ up_proj.float().T)   # (n, I)
    return hidden @ down_proj.float().T                                  # (n, H)


def _expert(state_dict: Mapping[str, torch.Tensor], name: str) -> tuple[torch.Tensor, ...]:
    """(gate_proj, up_proj, down_proj) weights of `experts.{e}` or `shared_experts`."""
    return tuple(state_dict[f"{name}.{proj}.weight"] for proj in ("gate_proj", "up_proj", "down_proj"))


def reference_moe(x: torch.Tensor, state_dict: Mapping[str, torch.Tensor],
                  config: DeepseekV3MoEConfig) -> torch.Tensor:
    """The MoE layer on one device: x (T, H) -> y (T, H) fp32."""
    x = x.float()                                                                        # (T, H)
    topk_indices, topk_weights = moe_gate(
        x, state_dict["gate.weight"], state_dict["gate.e_score_correction_bias"], config)  # (T, K), (T, K)

    routed = torch.zeros_like(x)                                                         # (T, H)
    for expert in topk_indices.unique().tolist():  # experts nobody chose are skipped
        token_ids, k_slots = torch.nonzero(topk_indices == expert, as_tuple=True)        # (n,), (n,)
        expert_out = swiglu_mlp(x[token_ids], *_expert(state_dict, f"experts.{expert}"))  # (n, H)
        routed.index_add_(0, token_ids, expert_out * topk_weights[token_ids, k_slots, None])

    shared = swiglu_mlp(x, *_expert(state_dict, "shared_experts"))                      # (T, H)
    return routed + shared                                                               # (T, H)


# ---------------------------------------------------------------------------------------------
# Mesh layout: rows of the mesh are data parallel (each row owns B = T / R tokens), columns are
# tensor parallel (each column owns H / C of the hidden dimension). Device (r, c) has index r*C + c.
# ---------------------------------------------------------------------------------------------

def _check_mesh(mesh_shape: tuple[int, int]) -> tuple[int, int]:
    if len(mesh_shape) != 2 or any(int(n) < 1 for n in mesh_shape):
        raise ValueError(f"mesh_shape must be (rows, cols) of positive ints, got {mesh_shape}")
    return int(mesh_shape[0]), int(mesh_shape[1])


def split_input_for_mesh(x: torch.Tensor, mesh_shape: tuple[int, int]) -> list[torch.Tensor]:
    """x (T, H) -> per-device list of (B, H / C): device (r, c) holds x[r*B:(r+1)*B, c*H/C:(c+1)*H/C]."""
    rows, cols = _check_mesh(mesh_shape)
    if x.dim() != 2:
        raise ValueError(f"x must be (T, H), got {tuple(x.shape)}")
    T, H = x.shape
    if T % rows != 0:
        raise ValueError(f"{T} tokens do not split evenly over {rows} mesh rows")
    if H % cols != 0:
        raise ValueError(f"hidden size {H} does not split evenly over {cols} mesh columns")
    B, Hc = T // rows, H // cols
    return [x[r * B:(r + 1) * B, c * Hc:(c + 1) * Hc].clone() for r in range(rows) for c in range(cols)]


def assemble_mesh_output(y_per_device: Sequence[torch.Tensor], mesh_shape: tuple[int, int]) -> torch.Tensor:
    """Inverse of `split_input_for_mesh`: per-device (B, H / C) -> (T, H)."""
    rows, cols = _check_mesh(mesh_shape)
    if len(y_per_device) != rows * cols:
        raise ValueError(f"expected {rows * cols} device tensors for mesh {mesh_shape}, got {len(y_per_device)}")
    return torch.cat([torch.cat(list(y_per_device[r * cols:(r + 1) * cols]), dim=1) for r in range(rows)], dim=0)


def local_expert_weights(state_dict: Mapping[str, torch.Tensor], local_slots: torch.Tensor
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The experts one device owns, stacked in local-slot order as moe_bmm's (E_l, Kd, N) weights.

    local_slots (E,): slot of each global expert on this device, -1 if elsewhere.
    Returns w1 (E_l, H, I), w3 (E_l, H, I), w2 (E_l, I, H), in the stored dtype.
    """
    owned = [(slot, expert) for expert, slot in enumerate(local_slots.tolist()) if slot >= 0]
    experts = [expert for _, expert in sorted(owned)]
    w1, w3, w2 = (torch.stack([state_dict[f"experts.{e}.{proj}.weight"].T for e in experts])
                  for proj in ("gate_proj", "up_proj", "down_proj"))
    return w1, w3, w2


def shared_expert_shard(state_dict: Mapping[str, torch.Tensor], column: int, cols: int
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Column `column`'s tensor-parallel slice of the shared expert: gate/up rows and down columns
    [column*Is/C, (column+1)*Is/C). Returns gate (Is/C, H), up (Is/C, H), down (H, Is/C)."""
    gate, up, down = _expert(state_dict, "shared_experts")
    width = gate.shape[0] // cols
    cut = slice(column * width, (column + 1) * width)
    return gate[cut], up[cut], down[:, cut]


def reference_moe_mesh(x_per_device: Sequence[torch.Tensor], state_dict: Mapping[str, torch.Tensor],
                       config: DeepseekV3MoEConfig, mesh_shape: tuple[int, int], *,
                       backend: MeshOpBackend | None = None,
                       observer: StageObserver | None = None) -> list[torch.Tensor]:
    """The MoE layer as it runs on a (R, C) mesh: per-device (B, H/C) -> per-device (B, H/C) fp32.

    `backend` supplies the collective and expert ops (default: torch goldens). `observer`, if
    given, is called as observer(stage_name, per_device_tensors) after every stage.
    """
    backend = backend or golden_backend()
    rows, cols = _check_mesh(mesh_shape)
    num_devices = rows * cols
    H, K, E = config.hidden_size, config.num_experts_per_tok, config.n_routed_experts
    if H % cols != 0 or config.shared_intermediate_size % cols != 0:
        raise ValueError(f"hidden_size={H} and shared intermediate size {config.shared_intermediate_size} "
                         f"must both split over {cols} mesh columns")
    if len(x_per_device) != num_devices:
        raise ValueError(f"expected {num_devices} device tensors for mesh {mesh_shape}, got {len(x_per_device)}")
    B = x_per_device[0].shape[0]
    for device, x in enumerate(x_per_device):
        if tuple(x.shape) != (B, H // cols):
            raise ValueError(f"device {device}: input must be ({B}, {H // cols}), got {tuple(x.shape)}")
    notify = observer or (lambda stage, tensors: None)
    notify("input", x_per_device)                                                    # (B, H/C)

    # 1. All-gather the hidden dimension over the columns: every device of a row holds its row's tokens.
    x_full = backend.all_gather(list(x_per_device), mesh_shape, 1, 1)                  # (B, H)
    notify("all_gather", x_full)

    # 2. Gate on every device; the inputs of a row are identical, so is the routing.
    routing = [moe_gate(x, state_dict["gate.weight"], state_dict["gate.e_score_correction_bias"], config)
               for x in x_full]
    topk_indices = [indices.to(torch.int32).view(B, 1, K) for indices, _ in routing]  # (B, S=1, K) int32
    topk_weights = [weights.to(torch.bfloat16).view(B, 1, K) for _, weights in routing]  # (B, S=1, K) bf16
    notify("gate.topk_indices", topk_indices)

    # 3. Dense dispatch along axis 0: the group of device (r, c) is column c, and it only routes to
    #    experts placed on column c's devices. The columns split the experts, so every (token, expert)
    #    pair is computed exactly once on the mesh. Tokens travel in bf16, the device payload dtype.
    expert_mapping = backend.expert_mapping_for_mesh(E, num_devices)                  # (1, 1, E, R*C)
    dispatched = backend.all_to_all_dispatch_dense(
        [x.to(torch.bfloat16).view(B, 1, H) for x in x_full],                         # (B, S=1, H) bf16
        topk_indices, topk_weights, expert_mapping, mesh_shape, 0)
    notify("dispatch.tokens", [d.tokens for d in dispatched])                          # (cap, H)
    notify("dispatch.num_routed_tokens", [d.num_routed_tokens for d in dispatched])    # (E_l, 1)

    # 4. Local experts on the packed rows: grouped moe_bmm reads expert l's block at expert_offsets[l].
    # 5a. Local reduce: weight each row (the only place routing weights are applied) and sum the
    #     rows of each (source device, token) slot.
    reduced = []
    for device, d in enumerate(dispatched):
        w1, w3, w2 = local_expert_weights(state_dict, backend.local_expert_slots(expert_mapping, device))
        gate_out = backend.moe_bmm(d.tokens, w1, d.num_routed_tokens, expert_offsets=d.expert_offsets)  # (cap, I)
        up_out = backend.moe_bmm(d.tokens, w3, d.num_routed_tokens, expert_offsets=d.expert_offsets)    # (cap, I)
        hidden = F.silu(gate_out) * up_out                                                               # (cap, I)
        expert_out = backend.moe_bmm(hidden, w2, d.num_routed_tokens, expert_offsets=d.expert_offsets)  # (cap, H)
        reduced.append(backend.local_reduce_moe_output(
            expert_out, d.token_idx_map, d.routed_token_weights, d.num_routed_tokens,
            d.tokens.shape[0], expert_offsets=d.expert_offsets))                                         # (cap, H)
    notify("local_reduce", reduced)

    # 5b. Combine back up each column: device (r, c) gets its tokens' sum over column c's experts.
    combined = backend.all_to_all_combine_dense(
        reduced, [d.slot_source for d in dispatched], [d.num_slots for d in dispatched],
        mesh_shape, 0, B, 1)                                                          # (B, S=1, H)
    notify("combine", combined)

    # 6. Shared expert, tensor parallel: column c computes its Is/C slice of the intermediate, a
    #    partial (B, H) that the reduce-scatter sums with the other columns' slices.
    partials = []
    for device, (x, routed) in enumerate(zip(x_full, combined)):
        shared = swiglu_mlp(x, *shared_expert_shard(state_dict, device % cols, cols))  # (B, H)
        partials.append(routed.view(B, H).float() + shared)                             # (B, H)
    notify("shared_expert_partial", partials)

    # 7. Reduce-scatter over the columns: sum the partials, column c keeps hidden slice c.
    output = backend.reduce_scatter(partials, mesh_shape, 1, 1)                        # (B, H/C)
    notify("reduce_scatter", output)
    return output
