"""Torch golden of ttnn.experimental.deepseek_grouped_gate (tt-metal 0.81.1), from its documented semantics
and where its program rounds: every intermediate CB is bfloat16 and DST is 16-bit, so the sigmoid, the
biased scores, the group sums, the weight sum, its reciprocal and each product are bfloat16.

    sigmoid s = bf16(sigmoid(scores)); biased b = bf16(s + bias)
    group score = bf16(best b + second best b) over 8 groups of 32; the 4 best groups kept
    the 8 best b among the kept groups' experts, best first
    w = bf16(bf16(s_k * bf16(1 / bf16(bf16(sum_k s_k) + bf16(epsilon)))) * bf16(route_scale))

Equal values: the device's bitonic network is unstable, so the op has no order among ties. Per token the
golden says where a tie cannot change the result: `groups_decided` (the 4th best group score above the 5th),
`set_decided` (that, and the 8th best candidate above the 9th: the chosen set is fixed), `order_decided`
(that, and the chosen eight pairwise distinct: the order is fixed too). With bf16 keys ties are common: for
N(0, 1) logits about a quarter of the tokens have a tie at the set's boundary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

GROUPS, GROUP_SIZE, KEPT_GROUPS, CHOSEN = 8, 32, 4, 8


def bf16(t: torch.Tensor) -> torch.Tensor:
    return t.float().bfloat16().float()


@dataclass
class GateResult:
    weights: torch.Tensor  # (T, 8) float, bf16 values
    indices: torch.Tensor  # (T, 8) int64, best first (lower id first among ties)
    biased: torch.Tensor  # (T, 256) the bf16 biased scores the op ranks
    groups_decided: torch.Tensor  # (T,) bool
    set_decided: torch.Tensor
    order_decided: torch.Tensor


def deepseek_grouped_gate(scores: torch.Tensor, bias: torch.Tensor, route_scale: float, epsilon: float) -> GateResult:
    """scores, bias (T, 256) -> the op's result by the semantics above."""
    s = bf16(torch.sigmoid(bf16(scores)))
    b = bf16(s + bf16(bias))
    T = b.shape[0]
    by_group = b.view(T, GROUPS, GROUP_SIZE)
    two_best = by_group.topk(2, dim=-1).values
    group_scores = bf16(two_best[..., 0] + two_best[..., 1])
    group_order = torch.sort(group_scores, dim=-1, descending=True, stable=True)
    kept = group_order.indices[:, :KEPT_GROUPS]
    mask = torch.zeros(T, GROUPS, dtype=torch.bool).scatter_(1, kept, True).repeat_interleave(GROUP_SIZE, dim=1)
    candidates = b.masked_fill(~mask, float("-inf"))
    ranked = torch.sort(candidates, dim=-1, descending=True, stable=True)
    indices = ranked.indices[:, :CHOSEN]

    chosen = s.gather(1, indices)
    total = bf16(chosen.sum(dim=1, keepdim=True))
    reciprocal = bf16(1.0 / bf16(total + bf16(torch.tensor(epsilon))))
    weights = bf16(bf16(chosen * reciprocal) * bf16(torch.tensor(route_scale)))

    top = ranked.values[:, : CHOSEN + 1]
    groups_decided = group_order.values[:, KEPT_GROUPS - 1] > group_order.values[:, KEPT_GROUPS]
    set_decided = groups_decided & (top[:, CHOSEN - 1] > top[:, CHOSEN])
    order_decided = set_decided & (top[:, :-1] > top[:, 1:]).all(dim=1)
    return GateResult(weights, indices, b, groups_decided, set_decided, order_decided)
