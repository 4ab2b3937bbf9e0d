"""Modeled device time of tt-metal's optimized decode dispatch (ttnn.experimental.all_to_all_dispatch_metadata)
against its classic ttnn.all_to_all_dispatch and this suite's all_to_all_dispatch_dense.

    python benchmarks/ttmetal_dispatch_metadata_device_time.py [--rows 4 --cols 8 --axis 0 --tokens 32
                                                               --hidden 256 --topology linear]

The defaults are vs_ttmetal.py --quick's dispatch: TG 4x8, 32 tokens per device (the row's decode batch,
replicated along the row), dispatched down the column (axis 0), the mini hidden size 256, DeepSeek-V3's
top-8 of 8 experts per device (expert e on device e // 8, row-major); each token draws its experts from its
own dispatch line, so every choice is served along the axis by every implementation. The metadata op keeps
its indices and scores in L1 as tt-metal's tests do and runs on the default worker column with the mesh's
links; the classic op and ours on the same link count.

Each op is recorded by `ttnn_moe.profile` (Wormhole B0 time model): the printed time is the op's modeled
device time, the slowest device's kernel duration, and the fabric payload it sends.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch
from ttnn_moe.emu.tensor import from_shards
from ttnn_moe.emu.ttmetal import use_wheel
from ttnn_moe.emu.ttmetal.all_to_all_dispatch import all_to_all_dispatch
from ttnn_moe.emu.ttmetal.all_to_all_dispatch_metadata import DispatchAlgorithm, all_to_all_dispatch_metadata

import ttnn_moe
from ttnn_moe import emu

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tools package
# The classic ops' benchmark's routing (every token's experts on its own line), so the figures compare.
from ttmetal_moe_device_time import EXPERTS_PER_DEVICE, TOP_K, fabric_payload_mb, routing  # noqa: E402

from tools.tt_wheel import ensure_ttnn_wheel  # noqa: E402

TOPOLOGIES = {"linear": emu.Topology.Linear, "ring": emu.Topology.Ring}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4)
    parser.add_argument("--cols", type=int, default=8)
    parser.add_argument("--axis", type=int, default=0)
    parser.add_argument("--tokens", type=int, default=32, help="tokens per device")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--topology", choices=sorted(TOPOLOGIES), default="linear", help="the mesh's 1D fabric")
    args = parser.parse_args()
    rows, cols, axis, tokens, hidden = args.rows, args.cols, args.axis, args.tokens, args.hidden
    devices = rows * cols
    experts = devices * EXPERTS_PER_DEVICE
    use_wheel(ensure_ttnn_wheel())
    ids = routing(rows, cols, axis, tokens)
    mesh = emu.open_mesh_device(emu.MeshShape(rows, cols))
    mesh.fabric_topology = TOPOLOGIES[args.topology]
    links = mesh.chip_mesh.fabric_num_links
    g = torch.Generator().manual_seed(1)

    def shards(tensors, dtype, memory_config=None):
        return from_shards(tensors, dtype, emu.ROW_MAJOR_LAYOUT, mesh, memory_config)

    x = shards(
        [torch.randn(tokens, 1, 1, hidden, generator=g).to(torch.bfloat16) for _ in range(devices)], emu.bfloat16
    )
    scores = [torch.rand(tokens, 1, 1, TOP_K, generator=g).to(torch.bfloat16) for _ in range(devices)]
    one_hot = ttnn_moe.expert_mapping(experts, devices).reshape(1, 1, experts, devices)
    device_of = (torch.arange(experts) // EXPERTS_PER_DEVICE).repeat(devices, 1)
    idx16 = shards([i.reshape(tokens, 1, 1, TOP_K) for i in ids], emu.uint16)
    idx16_l1 = shards([i.reshape(tokens, 1, 1, TOP_K) for i in ids], emu.uint16, emu.L1_MEMORY_CONFIG)
    scores_l1 = shards(scores, emu.bfloat16, emu.L1_MEMORY_CONFIG)
    mapping_one_hot = shards([one_hot] * devices, emu.uint16)
    mapping_ids = shards([device_of] * devices, emu.uint16)
    idx32 = shards([i.reshape(tokens, 1, 1, TOP_K) for i in ids], emu.uint32)
    mapping32 = shards([one_hot] * devices, emu.int32)
    algorithms = (DispatchAlgorithm.SPARSE_MCAST_SHORTEST_PATH, DispatchAlgorithm.SPARSE_UNICAST)

    with tempfile.TemporaryDirectory() as scratch:
        # A first pass builds every kernel; the profiled pass below measures the same programs.
        for profiled in (False, True):
            session = ttnn_moe.profile(scratch) if profiled else None
            run = session.__enter__() if session else None
            for algorithm in algorithms:
                all_to_all_dispatch_metadata(
                    x, idx16_l1, scores_l1, mapping_ids, cluster_axis=axis, num_links=links,
                    drain_sync_tilizer_core=(0, 0), dispatch_algorithm=algorithm,
                )  # fmt: skip
            all_to_all_dispatch(x, idx16, mapping_one_hot, cluster_axis=axis, num_links=links)
            ttnn_moe.all_to_all_dispatch_dense(x, idx32, shards(scores, emu.bfloat16), mapping32, cluster_axis=axis,
                                               num_links=links)  # fmt: skip
            if session:
                session.__exit__(None, None, None)
    names = [f"all_to_all_dispatch_metadata ({a.name})" for a in algorithms]
    names += ["ttnn.all_to_all_dispatch (classic)", "all_to_all_dispatch_dense (ours)"]
    print(
        f"{rows}x{cols} mesh, axis {axis}, {tokens} tokens per device, H={hidden}, top-{TOP_K}, "
        f"{EXPERTS_PER_DEVICE} experts per device, {links} link(s), {args.topology} fabric, Wormhole B0 model"
    )
    print(f"{'op':52s} {'device us':>10s} {'fabric MB':>10s}")
    for name, record in zip(names, run.ops):
        print(f"{name:52s} {record.device_ns() / 1e3:10.1f} {fabric_payload_mb(record):10.2f}")


if __name__ == "__main__":
    main()
