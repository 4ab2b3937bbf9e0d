"""Per-op roofline of the DeepSeek-V3 MoE layer's device ops on TG 4x8, from the device-time model.

DeepSeek-V3 dims: H = 7168, moe intermediate I = 2048, 256 routed experts (8 per device), top-8
drawn uniformly per token, decode 32 tokens per mesh row (each device of a row holds the row's
tokens), prefill 512. What runs:

- all_to_all_dispatch_dense and all_to_all_combine_dense on the whole 4x8 mesh (8x8 worker
  grids, Linear fabric, dispatch down the columns; combine sends the dispatched rows back);
- moe_bmm (w1 and w3 fused with SwiGLU, then w2, grouped) and local_reduce_moe_output on ONE
  device with the busiest
  device's dispatch output (its tokens, counts, offsets, slot map): the experts' weights of all
  32 devices would not fit this machine (22 GiB in bf16), and the devices run the same program
  on their own share at once, so the busiest device's time is the layer's. The shared expert
  (two more moe_bmm launches over the row's tokens) is not part of this table.

For each op: modeled time (slowest device), the binding resource, its lower bound (the work the
emulator counted at that resource's peak) and the fraction reached, then the layer's total.
"""

from __future__ import annotations

import tempfile

import torch
from dispatch import NUM_EXPERTS, TOP_K, dispatch_inputs, make_routing, routing_facts
from ttnn_moe.emu.pages import tile_bytes
from ttnn_moe.profiler.bounds import op_bounds

import ttnn_moe
from ttnn_moe import emu

HIDDEN = 7168  # DeepSeek-V3; --hidden / --intermediate shrink them for a quick check
INTERMEDIATE = 2048
MESH = (4, 8)
TOKENS = {"decode": 32, "prefill": 512}
DTYPES = {"bfloat16": emu.bfloat16, "bfloat8_b": emu.bfloat8_b, "bfloat4_b": emu.bfloat4_b}


def _shards(t: "emu.Tensor") -> list[torch.Tensor]:
    mesh = t.device()
    stacked = emu.to_torch(t, mesh_composer=emu.ConcatMeshToTensor(mesh, dim=0))
    return list(torch.chunk(stacked, mesh.get_num_devices(), dim=0))


def _mesh_ops(tokens: int, hidden: int) -> tuple[dict, object]:
    """Dispatch and combine on the 4x8 mesh; returns the busiest device's dispatch outputs."""
    rows, cols = MESH
    n = rows * cols
    ids = make_routing(n, tokens)
    _, capacity = routing_facts(ids, MESH)
    mesh = emu.open_mesh_device(emu.MeshShape(rows, cols))
    x, topk, weights, mapping = dispatch_inputs(mesh, ids, hidden)
    out = ttnn_moe.all_to_all_dispatch_dense(x, topk, weights, mapping, cluster_axis=0, capacity=capacity)
    ttnn_moe.all_to_all_combine_dense(out.tokens, out.handle)
    counts = _shards(out.num_routed_tokens)
    busiest = max(range(n), key=lambda d: int(((counts[d].to(torch.int64) + 31) // 32).sum()))
    picked = {
        "tokens": _shards(out.tokens)[busiest],
        "counts": counts[busiest],
        "offsets": _shards(out.expert_offsets)[busiest],
        "token_idx_map": _shards(out.token_idx_map)[busiest],
        "weights": _shards(out.routed_token_weights)[busiest],
    }
    return picked, mesh


def _device_ops(picked: dict, expert_dtype: str, hidden: int, intermediate: int) -> None:
    """moe_bmm x 3 and local_reduce on one device with the busiest device's share."""
    device = emu.open_device(device_id=0, grid=(8, 8))
    e_l = NUM_EXPERTS // (MESH[0] * MESH[1])
    g = torch.Generator().manual_seed(2)
    cap = int(picked["tokens"].shape[-2])
    tokens = emu.from_torch(
        picked["tokens"].reshape(cap, hidden), dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=device
    )
    column = lambda t: emu.from_torch(  # noqa: E731
        t.reshape(e_l, 1).to(torch.int64), dtype=emu.uint32, layout=emu.ROW_MAJOR_LAYOUT, device=device
    )
    counts, offsets = column(picked["counts"]), column(picked["offsets"])

    def weight(k: int, n: int) -> "emu.Tensor":
        w = torch.randn(e_l, k, n, generator=g) * 0.02
        return emu.from_torch(w, dtype=DTYPES[expert_dtype], layout=emu.TILE_LAYOUT, device=device)

    w1_w3, w2 = weight(hidden, 2 * intermediate), weight(intermediate, hidden)  # w1_w3: gate and up interleaved
    hidden = ttnn_moe.moe_bmm(tokens, w1_w3, counts, expert_offsets=offsets, activation="swiglu", strict=False)
    out = ttnn_moe.moe_bmm(hidden, w2, counts, expert_offsets=offsets, strict=False)
    rows = emu.to_layout(out, emu.ROW_MAJOR_LAYOUT)
    ttnn_moe.local_reduce_moe_output(
        rows,
        emu.from_torch(
            picked["token_idx_map"].reshape(-1).to(torch.int64),
            dtype=emu.uint32,
            layout=emu.ROW_MAJOR_LAYOUT,
            device=device,
        ),
        emu.from_torch(picked["weights"].reshape(-1), dtype=emu.bfloat16, layout=emu.ROW_MAJOR_LAYOUT, device=device),
        counts,
        num_out_rows=cap,
        expert_offsets=offsets,
        max_assignments_per_row=TOP_K,
        strict=False,
    )


def needed_dram_ns(counts: torch.Tensor, k: int, n: int, halves: int, expert_dtype: str, params: dict) -> float:
    """moe_bmm's DRAM time if every byte it must move crossed once: the active experts' weights
    (`halves` (k, n) matrices each: 2 for the fused gate and up), their padded x rows and output rows,
    at the model's DRAM bandwidth."""
    counts = counts.reshape(-1).to(torch.int64)
    rows = int(((counts + 31) // 32 * 32).sum())
    weight_bytes = tile_bytes(DTYPES[expert_dtype]) / 1024 * halves * k * n * int((counts > 0).sum())
    return (weight_bytes + 2 * rows * (k + n)) / params["dram_bytes_per_cycle"] / params["clock_ghz"]


def print_roofline(phase: str, expert_dtype: str, hidden: int = HIDDEN, intermediate: int = INTERMEDIATE) -> None:
    tokens = TOKENS[phase]
    with tempfile.TemporaryDirectory() as directory, ttnn_moe.profile(directory) as session:
        picked, _ = _mesh_ops(tokens, hidden)
        _device_ops(picked, expert_dtype, hidden, intermediate)
    order = [
        "all_to_all_dispatch_dense",
        "moe_bmm",
        "moe_bmm",
        "local_reduce_moe_output",
        "all_to_all_combine_dense",
    ]
    by_name: dict[str, list] = {}
    for op in session.ops:
        by_name.setdefault(op.name, []).append(op)
    labels = {"moe_bmm": ["moe_bmm w1w3 swiglu", "moe_bmm w2"]}
    print(
        f"\n{phase}: TG 4x8, {tokens} tokens per row, H={hidden}, I={intermediate}, E={NUM_EXPERTS}, "
        f"top-{TOP_K}, experts {expert_dtype}, Wormhole B0 model"
    )
    header = f"{'op':<28}{'modeled us':>11}{'bound':>9}{'lower us':>10}{'fraction':>10}  other bounds (us)"
    print(header)
    print("-" * (len(header) + 30))
    total = 0.0
    seen: dict[str, int] = {}
    for name in order:
        index = seen.get(name, 0)
        seen[name] = index + 1
        op = by_name[name][index]
        bounds = op_bounds(op, session.params)
        label = labels.get(name, [name] * 3)[index]
        others = ", ".join(f"{b.resource} {b.lower_ns / 1e3:.2f}" for b in bounds[1:])
        top = bounds[0]
        print(
            f"{label:<28}{op.device_ns() / 1e3:>11.2f}{top.resource:>9}{top.lower_ns / 1e3:>10.2f}"
            f"{top.fraction:>10.0%}  {others}"
        )
        if name == "moe_bmm":
            k, n, halves = (hidden, intermediate, 2) if index == 0 else (intermediate, hidden, 1)
            needed = needed_dram_ns(picked["counts"], k, n, halves, expert_dtype, session.params)
            print(
                f"{'  (each byte once)':<28}{'':>11}{'dram':>9}{needed / 1e3:>10.2f}"
                f"{needed / op.device_ns():>10.0%}  weights of active experts, x and output rows read once"
            )
        total += op.device_ns()
    print(
        f"{'layer (device ops)':<28}{total / 1e3:>11.2f}   + host dispatch per op "
        f"{session.params['dispatch_ns_cache_hit'] / 1e3:.0f} us untraced, "
        f"{session.params['dispatch_ns_traced'] / 1e3:.0f} us traced"
    )
