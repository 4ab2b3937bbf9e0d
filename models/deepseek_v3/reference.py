"""Torch references of the DeepSeek-V3 MoE layer.

Read top to bottom:
- `moe_gate`: sigmoid scores, bias-corrected group-limited top-k (noaux_tc).
- `reference_moe`: the whole layer on one device, fp32, no mesh: the golden
  every other implementation is compared with.
- `local_expert_weights`: the experts one device holds, stacked as moe_bmm's weights.

State dicts use the normalized keys of `weights.load_moe_layer`:
`gate.weight` (E, H), `gate.e_score_correction_bias` (E,),
`experts.{e}.{gate,up,down}_proj.weight` and
`shared_experts.{gate,up,down}_proj.weight` in nn.Linear layout (out, in).

Shape letters: T tokens, H hidden, E routed experts, K experts per token,
G groups, I expert intermediate, E_l experts per device.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import torch
import torch.nn.functional as F

from models.deepseek_v3.config import DeepseekV3MoEConfig


def moe_gate(
    x: torch.Tensor, gate_weight: torch.Tensor, e_score_correction_bias: torch.Tensor, config: DeepseekV3MoEConfig
) -> tuple[torch.Tensor, torch.Tensor]:
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

    scores = torch.sigmoid(x.float() @ gate_weight.float().T)  # (T, E)  s
    biased = scores + e_score_correction_bias.float()  # (T, E)  b = s + bias

    # A group is as good as the sum of its two best biased scores.
    group_scores = biased.view(T, G, E // G).topk(2, dim=-1).values.sum(dim=-1)  # (T, G)
    best_groups = group_scores.topk(config.topk_group, dim=-1).indices  # (T, topk_group)
    group_kept = torch.zeros(T, G, dtype=torch.bool).scatter_(1, best_groups, True)  # (T, G)
    expert_kept = group_kept.repeat_interleave(E // G, dim=1)  # (T, E)

    # The bias decides which experts win ...
    candidates = biased.masked_fill(~expert_kept, float("-inf"))  # (T, E)
    topk_indices = candidates.topk(K, dim=-1).indices  # (T, K)
    # ... but the weights come from the unbiased scores.
    topk_weights = scores.gather(1, topk_indices)  # (T, K)
    if config.norm_topk_prob:
        topk_weights = topk_weights / topk_weights.sum(dim=-1, keepdim=True)
    topk_weights = topk_weights * config.routed_scaling_factor  # (T, K)
    return topk_indices, topk_weights


def swiglu_mlp(
    x: torch.Tensor, gate_proj: torch.Tensor, up_proj: torch.Tensor, down_proj: torch.Tensor
) -> torch.Tensor:
    """down(silu(gate x) * up x) in fp32: x (n, H), gate/up (I, H), down (H, I) -> (n, H)."""
    x = x.float()
    hidden = F.silu(x @ gate_proj.float().T) * (x @ up_proj.float().T)  # (n, I)
    return hidden @ down_proj.float().T  # (n, H)


def _expert(state_dict: Mapping[str, torch.Tensor], name: str) -> tuple[torch.Tensor, ...]:
    """(gate_proj, up_proj, down_proj) weights of `experts.{e}` or `shared_experts`."""
    return tuple(state_dict[f"{name}.{proj}.weight"] for proj in ("gate_proj", "up_proj", "down_proj"))


def reference_moe(x: torch.Tensor, state_dict: Mapping[str, torch.Tensor], config: DeepseekV3MoEConfig) -> torch.Tensor:
    """The MoE layer on one device: x (T, H) -> y (T, H) fp32."""
    x = x.float()  # (T, H)
    topk_indices, topk_weights = moe_gate(
        x, state_dict["gate.weight"], state_dict["gate.e_score_correction_bias"], config
    )  # (T, K), (T, K)

    routed = torch.zeros_like(x)  # (T, H)
    for expert in topk_indices.unique().tolist():  # experts nobody chose are skipped
        token_ids, k_slots = torch.nonzero(topk_indices == expert, as_tuple=True)  # (n,), (n,)
        expert_out = swiglu_mlp(x[token_ids], *_expert(state_dict, f"experts.{expert}"))  # (n, H)
        routed.index_add_(0, token_ids, expert_out * topk_weights[token_ids, k_slots, None])

    shared = swiglu_mlp(x, *_expert(state_dict, "shared_experts"))  # (T, H)
    return routed + shared  # (T, H)


def local_expert_weights(
    state_dict: Mapping[str, torch.Tensor], experts: Sequence[int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Experts `experts` (one device's, ascending id = local-slot order) stacked as moe_bmm's
    (E_l, Kd, N) weights: w1 (E_l, H, I), w3 (E_l, H, I), w2 (E_l, I, H), in the stored dtype."""
    w1, w3, w2 = (
        torch.stack([state_dict[f"experts.{e}.{proj}.weight"].T for e in experts])
        for proj in ("gate_proj", "up_proj", "down_proj")
    )
    return w1, w3, w2
