"""Golden of moe_gate: DeepSeek-V3 routing with a deterministic tie-break (lower group id, then
lower expert id, first), as the device op ranks."""

from __future__ import annotations

import torch

from ttnn_moe.golden._validate import require_float, require_positive_int, require_shape, squeeze_to_rank


def _best_first(values: torch.Tensor, count: int) -> torch.Tensor:
    """Indices of the `count` largest entries of the last dim, largest first, ties by lower index."""
    return torch.sort(values, dim=-1, descending=True, stable=True).indices[..., :count]


def moe_gate(
    x: torch.Tensor,
    gate_weight: torch.Tensor,
    e_score_correction_bias: torch.Tensor,
    *,
    n_group: int,
    topk_group: int,
    top_k: int,
    routed_scaling_factor: float,
    norm_topk_prob: bool = True,
) -> tuple[torch.Tensor, torch.Tensor]:
    """x (T, H), gate_weight (E, H), e_score_correction_bias (E,) ->
    topk_indices (T, K) int32 (best biased score first), topk_weights (T, K) bfloat16.

    scores = sigmoid(x @ gate_weight^T) in fp32; selection on scores + bias among the topk_group
    groups with the best sum of their two best biased scores; weights = the chosen unbiased scores,
    divided by their sum (added in k order) when norm_topk_prob, times routed_scaling_factor.
    """
    x = squeeze_to_rank(x, 2, "x")
    gate_weight = squeeze_to_rank(gate_weight, 2, "gate_weight")
    bias = squeeze_to_rank(e_score_correction_bias, 1, "e_score_correction_bias")
    for tensor, name in ((x, "x"), (gate_weight, "gate_weight"), (bias, "e_score_correction_bias")):
        require_float(tensor, name)
    T, H = x.shape
    E = gate_weight.shape[0]
    require_shape(gate_weight, (E, H), "gate_weight")
    require_shape(bias, (E,), "e_score_correction_bias")
    G = require_positive_int(n_group, "n_group")
    require_positive_int(topk_group, "topk_group")
    K = require_positive_int(top_k, "top_k")
    if E % G or E // G < 2:
        raise ValueError(f"E={E} experts must split into n_group={G} equal groups of at least 2")
    if topk_group > G or K > topk_group * (E // G):
        raise ValueError(f"topk_group={topk_group}, top_k={K} exceed n_group={G} groups of {E // G} experts")

    scores = torch.sigmoid(x.float() @ gate_weight.float().T)  # (T, E)
    biased = scores + bias.float()  # (T, E)
    by_group = biased.view(T, G, E // G)
    two_best = by_group.gather(-1, _best_first(by_group, 2))  # (T, G, 2)
    group_scores = two_best[..., 0] + two_best[..., 1]  # (T, G)
    kept = torch.zeros(T, G, dtype=torch.bool).scatter_(1, _best_first(group_scores, topk_group), True)
    candidates = biased.masked_fill(~kept.repeat_interleave(E // G, dim=1), float("-inf"))
    indices = _best_first(candidates, K)  # (T, K)

    chosen = scores.gather(1, indices)  # (T, K)
    if norm_topk_prob:
        total = torch.zeros(T)
        for k in range(K):
            total = total + chosen[:, k]
        chosen = chosen / total.unsqueeze(1)
    weights = chosen * torch.tensor(routed_scaling_factor, dtype=torch.float32)
    return indices.to(torch.int32), weights.bfloat16()
