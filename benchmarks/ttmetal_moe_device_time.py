"""Modeled device time of Tenstorrent's MoE data-movement ops against the suite's dense ones.

    python benchmarks/ttmetal_moe_device_time.py [--rows 2 --cols 4 --axis 1 --tokens 32]

One decode-sized routing (DeepSeek-V3 widths: H = 7168, top-8, 8 experts per device, experts
e // 8 in row-major device order; each token draws its 8 distinct experts from its own dispatch
line, so every choice is served along `axis` by both implementations) runs through:

- ttnn.all_to_all_dispatch and ttnn.all_to_all_combine (tt-metal 0.81.1's kernels from the wheel,
  Linear fabric; combine with and without local_reduce) and moe_expert_token_remap;
- all_to_all_dispatch_dense and all_to_all_combine_dense (this suite's ops; combine sends the
  dispatched slot rows straight back).

Each op is recorded by `ttnn_moe.profile` (Wormhole B0 time model): the printed time is the op's
modeled device time, the slowest device's kernel duration, and the fabric payload it sends.
"""

from __future__ import annotations

import argparse
import tempfile

import torch
from ttnn_moe.emu.tensor import from_shards
from ttnn_moe.emu.ttmetal import use_wheel
from ttnn_moe.emu.ttmetal.all_to_all_combine import all_to_all_combine
from ttnn_moe.emu.ttmetal.all_to_all_dispatch import all_to_all_dispatch
from ttnn_moe.emu.ttmetal.moe_expert_token_remap import moe_expert_token_remap

import ttnn_moe
from tools.tt_wheel import ensure_ttnn_wheel
from ttnn_moe import emu

HIDDEN = 7168
TOP_K = 8
EXPERTS_PER_DEVICE = 8


def line_of(device: int, rows: int, cols: int, axis: int) -> list[int]:
    r, c = divmod(device, cols)
    return [r * cols + j for j in range(cols)] if axis == 1 else [i * cols + c for i in range(rows)]


def routing(rows: int, cols: int, axis: int, tokens: int, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    ids = []
    for d in range(rows * cols):
        line_experts = torch.tensor(
            [q * EXPERTS_PER_DEVICE + j for q in line_of(d, rows, cols, axis) for j in range(EXPERTS_PER_DEVICE)]
        )
        ids.append(
            torch.stack([line_experts[torch.randperm(len(line_experts), generator=g)[:TOP_K]] for _ in range(tokens)])
        )
    return ids


def fabric_payload_mb(record) -> float:
    return sum(d.counters["fabric"]["bytes"] for d in record.devices) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2)
    parser.add_argument("--cols", type=int, default=4)
    parser.add_argument("--axis", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=32, help="tokens per device")
    parser.add_argument("--links", type=int, default=1, help="fabric links (sender cores) of every op")
    args = parser.parse_args()
    rows, cols, axis, tokens, links = args.rows, args.cols, args.axis, args.tokens, args.links
    devices = rows * cols
    experts = devices * EXPERTS_PER_DEVICE
    line = cols if axis == 1 else rows
    use_wheel(ensure_ttnn_wheel())
    ids = routing(rows, cols, axis, tokens)
    mesh = emu.open_mesh_device(emu.MeshShape(rows, cols))
    g = torch.Generator().manual_seed(1)
    xs = [torch.randn(tokens, 1, 1, HIDDEN, generator=g).to(torch.bfloat16) for _ in range(devices)]
    mapping_rows = ttnn_moe.expert_mapping(experts, devices).reshape(1, 1, experts, devices)

    def shards(tensors, dtype):
        return from_shards(tensors, dtype, emu.ROW_MAJOR_LAYOUT, mesh)

    x = shards(xs, emu.bfloat16)
    idx16 = shards([i.reshape(tokens, 1, 1, TOP_K) for i in ids], emu.uint16)
    mapping16 = shards([mapping_rows] * devices, emu.uint16)
    weights = shards(
        [torch.rand(tokens, 1, 1, TOP_K, generator=g).to(torch.bfloat16) for _ in range(devices)], emu.bfloat16
    )
    idx32 = shards([i.reshape(tokens, 1, 1, TOP_K) for i in ids], emu.uint32)
    mapping32 = shards([mapping_rows] * devices, emu.int32)

    with tempfile.TemporaryDirectory() as scratch:
        # A first pass builds every kernel; the profiled pass below measures the same programs.
        for profiled in (False, True):
            session = ttnn_moe.profile(scratch) if profiled else None
            run = session.__enter__() if session else None
            out, metadata = all_to_all_dispatch(x, idx16, mapping16, cluster_axis=axis, num_links=links)
            per_expert = from_shards(
                [torch.zeros(EXPERTS_PER_DEVICE, tokens * line, 1, HIDDEN, dtype=torch.bfloat16)] * devices,
                emu.bfloat16,
                emu.ROW_MAJOR_LAYOUT,
                mesh,
            )
            all_to_all_combine(per_expert, metadata, mapping16, cluster_axis=axis, num_links=links)
            all_to_all_combine(out, metadata, mapping16, cluster_axis=axis, num_links=links, local_reduce=True)
            topk_scores = from_shards(
                [torch.rand(1, tokens * line, 1, experts, generator=g).to(torch.bfloat16) for _ in range(devices)],
                emu.bfloat16,
                emu.ROW_MAJOR_LAYOUT,
                mesh,
            )
            moe_expert_token_remap(topk_scores, mapping16, metadata)
            dense = ttnn_moe.all_to_all_dispatch_dense(x, idx32, weights, mapping32, cluster_axis=axis, num_links=links)
            ttnn_moe.all_to_all_combine_dense(dense.tokens, dense.handle)
            if session:
                session.__exit__(None, None, None)
    names = [
        "ttnn.all_to_all_dispatch",
        "ttnn.all_to_all_combine (E/D rows per token)",
        "ttnn.all_to_all_combine (local_reduce)",
        "ttnn.moe_expert_token_remap",
        "all_to_all_dispatch_dense",
        "all_to_all_combine_dense",
    ]
    print(
        f"{rows}x{cols} mesh, axis {axis}, {tokens} tokens per device, H={HIDDEN}, top-{TOP_K}, "
        f"{EXPERTS_PER_DEVICE} experts per device, Linear fabric, Wormhole B0 model"
    )
    print(f"{'op':48s} {'device us':>10s} {'fabric MB':>10s}")
    for name, record in zip(names, run.ops):
        print(f"{name:48s} {record.device_ns() / 1e3:10.1f} {fabric_payload_mb(record):10.2f}")


if __name__ == "__main__":
    main()
