"""Torch golden of moe_compute's tilize stage (tt-metal 0.81.1), from its documented semantics.

On device `lin` the stage picks, in ascending token order, the tokens of the dispatch group that chose one of the
device's local experts (the experts the device's own mapping row places on it, ascending) through the mapping row
of the token's source device, and records per local expert its (token, k) entries and per activated token one
row: the token id, per local expert the k slot that chose it, per local expert that slot's score bits (bfloat16,
zero-extended). An expert the token did not choose carries a sentinel k: K + 1 where the token belongs to the first
half of a tilize core's token range (the reader's rows), K in the second half (the writer's rows; the two
kernels initialise their rows differently). Each expert's tokens then go to the matmul ring in chunks of 32.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

CHUNK = 32


@dataclass
class TilizeGolden:
    local_experts: list[int]
    e_t: list[list[tuple[int, int]]]  # per local expert: (token, k)
    activation: list[list[int]]  # per activated token: [token, k per local expert, score bits per local expert]

    def chunks(self) -> list[tuple[int, list[int]]]:
        """(local expert, its tokens) of every chunk, in the order the ring receives them."""
        return [(e, [t for t, _ in entries[i : i + CHUNK]]) for e, entries in enumerate(self.e_t)
                for i in range(0, len(entries), CHUNK)]  # fmt: skip


def source_device(token: int, tokens_per_device: int, lin: int, rows: int, cols: int, axis: int) -> int:
    position = token // tokens_per_device
    return (lin // cols) * cols + position if axis == 1 else position * cols + lin % cols


def sentinel_k(token: int, tokens: int, tilize_cores: int, k: int) -> int:
    per_core = tokens // tilize_cores
    core = min(token // per_core, tilize_cores - 1)
    start = core * per_core
    end = tokens if core == tilize_cores - 1 else start + per_core
    return k + 1 if token < start + (end - start) // 2 else k


def tilize_stage(indices, score_bits, mapping, lin, rows, cols, axis, tilize_cores, local_capacity) -> TilizeGolden:
    """indices, score_bits: `[T, K]` ints of device `lin`; mapping: `[D, E]` ints."""
    tokens, k = indices.shape
    group = rows if axis == 0 else cols
    local = [e for e in range(mapping.shape[1]) if int(mapping[lin, e]) == lin][:local_capacity]
    e_t: list[list[tuple[int, int]]] = [[] for _ in local]
    activation = []
    for t in range(tokens):
        src = source_device(t, tokens // group, lin, rows, cols, axis)
        row = None
        for slot in range(k):
            expert = int(indices[t, slot])
            if int(mapping[src, expert]) != lin or expert not in local:
                continue
            e = local.index(expert)
            if row is None:
                none = sentinel_k(t, tokens, tilize_cores, k)
                row = [t] + [none] * len(local) + [0] * len(local)
            row[1 + e] = slot
            row[1 + len(local) + e] = int(score_bits[t, slot])
            e_t[e].append((t, slot))
        if row is not None:
            activation.append(row)
    return TilizeGolden(local, e_t, activation)


def untilize(pages: torch.Tensor, rows: int, cols: int) -> torch.Tensor:
    """bfloat16 tile pages (32x32 tiles in four 16x16 faces, tiles row-major) -> `[rows, cols]`."""
    t = pages.reshape(rows // 32, cols // 32, 2, 2, 16, 16).permute(0, 2, 4, 1, 3, 5)
    return t.reshape(rows, cols)


def bfloat4_b(w: torch.Tensor) -> torch.Tensor:
    """`w` as the device holds it: rounded to bfloat4_b tile by tile (each 32x32 tile of the last two dims)."""
    from ttnn_moe.emu import types
    from ttnn_moe.emu.pages import from_pages, to_pages

    flat = w.reshape(-1, w.shape[-1]).float()
    raw = to_pages(flat, types.bfloat4_b, types.TILE_LAYOUT)
    return from_pages(raw, list(flat.shape), types.bfloat4_b, types.TILE_LAYOUT).reshape(w.shape)


def expert_outputs(x, stage: TilizeGolden, w0, w1, w2, k: int) -> torch.Tensor:
    """The op's `[K, T, H]` output on one device: row k of token t is silu(x_t W0_e) * (x_t W1_e) W2_e for the
    local expert e that token t chose in slot k; rows of no local expert stay zero. x: `[T, H]` bfloat16;
    w0, w1: `[E, H, N]`, w2: `[E, N, H]` (the values the device holds)."""
    tokens, hidden = x.shape
    out = torch.zeros(k, tokens, hidden)
    for e, entries in enumerate(stage.e_t):
        if not entries:
            continue
        ts = [t for t, _ in entries]
        xe = x[ts].float()
        y = (torch.nn.functional.silu(xe @ w0[e].float()) * (xe @ w1[e].float())) @ w2[e].float()
        for row, (t, slot) in enumerate(entries):
            out[slot, t] = y[row]
    return out


def pcc(a: torch.Tensor, b: torch.Tensor) -> float:
    a, b = a.flatten().double(), b.flatten().double()
    a, b = a - a.mean(), b - b.mean()
    return float((a @ b) / (a.norm() * b.norm()))


def group_members(rows: int, cols: int, axis: int) -> list[list[int]]:
    """The dispatch groups: device indices along `axis`, in group position order."""
    if axis == 1:
        return [[r * cols + c for c in range(cols)] for r in range(rows)]
    return [[r * cols + c for r in range(rows)] for c in range(cols)]


def combined_outputs(x, indices, scores, mapping, w0, w1, w2, rows: int, cols: int, axis: int) -> torch.Tensor:
    """The FullCcl op's `[devices, K, T/D, H]` output: on the device of group token t (position t // (T/D) of its
    group), row (k, t mod T/D) is silu(x_t W0_e) * (x_t W1_e) W2_e of the expert e the token chose in slot k when
    a device of the group holds e (its own weights), else zero. x, indices, scores: `[devices, T, *]` (every device
    of a group holds the group's T tokens); w0, w1 `[devices, 1, E, H, N]`, w2 `[devices, 1, E, N, H]` as the
    device holds them."""
    devices, tokens, hidden = x.shape
    k = indices.shape[-1]
    local = w0.shape[2]
    members_of = group_members(rows, cols, axis)
    per_device = tokens // len(members_of[0])
    out = torch.zeros(devices, k, per_device, hidden)
    for members in members_of:
        for holder in members:
            bits = scores[holder].view(torch.int16).to(torch.int64) & 0xFFFF
            stage = tilize_stage(indices[holder], bits, mapping, holder, rows, cols, axis, 4, local)
            y = expert_outputs(x[holder], stage, w0[holder, 0], w1[holder, 0], w2[holder, 0], k)
            for entries in stage.e_t:
                for t, slot in entries:
                    out[members[t // per_device], slot, t % per_device] = y[slot, t]
    return out
