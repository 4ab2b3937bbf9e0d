"""Torch goldens of tt-metal's MoE data-movement ops, from their documented semantics.

Devices are numbered row-major over a rows x cols mesh. A dispatch group is the devices
along `axis` that share the source's other coordinate (axis 1: its row, axis 0: its column,
None: the whole mesh); a device's position in its group is its column (axis 1), its row
(axis 0) or its number (None). Tokens are the flattened (batch, seq) rows of a device, T of
them; global token `a * T + t` is token t of the group's device at position a.
"""

from __future__ import annotations

import torch


def group_of(device: int, rows: int, cols: int, axis: int | None) -> list[int]:
    r, c = divmod(device, cols)
    if axis == 1:
        return [r * cols + j for j in range(cols)]
    if axis == 0:
        return [i * cols + c for i in range(rows)]
    return list(range(rows * cols))


def local_experts(mapping: torch.Tensor, device: int) -> list[int]:
    """The experts mapped to `device` (mapping [E, D], 1 = resident), ascending."""
    return [e for e in range(mapping.shape[0]) if int(mapping[e, device]) == 1]


def dispatch(xs, indices, mapping, rows, cols, axis):
    """all_to_all_dispatch. xs[d] [T, H], indices[d] [T, K], mapping [E, D].

    Per device: (rows [G*T, H], defined [G*T] bool, metadata [G*T, K]): global token row a*T + t
    holds the token iff one of its experts is resident here (the rest are unspecified), and the
    metadata is the group's indices gathered in position order (all defined).
    """
    results = []
    for d in range(rows * cols):
        group = group_of(d, rows, cols, axis)
        t_count, hidden = xs[d].shape
        out = torch.zeros(len(group) * t_count, hidden, dtype=xs[d].dtype)
        defined = torch.zeros(len(group) * t_count, dtype=torch.bool)
        metadata = torch.cat([indices[s] for s in group])
        for a, s in enumerate(group):
            for t in range(t_count):
                if any(int(mapping[int(e), d]) == 1 for e in indices[s][t]):
                    out[a * t_count + t] = xs[s][t]
                    defined[a * t_count + t] = True
        results.append((out, defined, metadata))
    return results


def dispatch_metadata(xs, indices, scores, device_of, rows, cols, axis):
    """ttnn.experimental.all_to_all_dispatch_metadata. xs[d] [T, H], indices[d] / scores[d] [T, K],
    device_of [D, E] (row s: the device each expert lives on, as device s routes).

    Per device: (rows [G*T, H], defined [G*T] bool, indices [G*T, K], scores [G*T, K]): global token row
    a*T + t holds token t of the group's device s at position a iff s routes one of the token's experts
    to this device; indices and scores are the group's gathered in position order (all defined).
    """
    results = []
    for d in range(rows * cols):
        group = group_of(d, rows, cols, axis)
        t_count, hidden = xs[d].shape
        out = torch.zeros(len(group) * t_count, hidden, dtype=xs[d].dtype)
        defined = torch.zeros(len(group) * t_count, dtype=torch.bool)
        for a, s in enumerate(group):
            for t in range(t_count):
                if any(int(device_of[s, int(e)]) == d for e in indices[s][t]):
                    out[a * t_count + t] = xs[s][t]
                    defined[a * t_count + t] = True
        gathered_indices = torch.cat([indices[s] for s in group])
        gathered_scores = torch.cat([scores[s] for s in group])
        results.append((out, defined, gathered_indices, gathered_scores))
    return results


def combine(expert_outputs, metadata, mapping, rows, cols, axis, local_reduce=False):
    """all_to_all_combine back to each token's device. expert_outputs[q] [E_l or 1, G*T, H] on
    device q, metadata[q] [G*T, K] (the group's gathered indices), mapping [E, D].

    Per source device: [K, T, H], zero where nothing is sent: row (k, t) holds the output of the
    device owning the token's k-th expert for its first occurrence k among the token's choices
    (local_reduce: only the k of the first of the device's experts the token chose, holding the
    device's reduced row).
    """
    results = []
    for d in range(rows * cols):
        group = group_of(d, rows, cols, axis)
        a = group.index(d)
        g_tokens, k_count = metadata[d].shape
        t_count = g_tokens // len(group)
        hidden = expert_outputs[d].shape[-1]
        out = torch.zeros(k_count, t_count, hidden, dtype=expert_outputs[d].dtype)
        for q in group:
            experts = local_experts(mapping, q)
            for t in range(t_count):
                chosen = [int(e) for e in metadata[q][a * t_count + t]]
                for j, e in enumerate(experts):
                    if e in chosen:
                        k = chosen.index(e)
                        out[k, t] = expert_outputs[q][0 if local_reduce else j][a * t_count + t]
                        if local_reduce:
                            break
        results.append(out)
    return results


def expert_token_remap(topk, metadata, mapping, device, reduction_size):
    """moe_expert_token_remap on one device. topk [BS, E], metadata [BS, K], mapping [E, D].

    (mapping [BS, E_l]: the token's score of each local expert it chose, else 0;
     reduced [BS / reduction_size, E_l]: 1 where a token of the chunk chose that local expert.)
    """
    experts = local_experts(mapping, device)
    tokens = topk.shape[0]
    out = torch.zeros(tokens, len(experts), dtype=topk.dtype)
    reduced = torch.zeros(tokens // reduction_size, len(experts), dtype=torch.int64)
    for t in range(tokens):
        chosen = {int(e) for e in metadata[t]}
        for j, e in enumerate(experts):
            if e in chosen:
                out[t, j] = topk[t, e]
                reduced[t // reduction_size, j] = 1
    return out, reduced
