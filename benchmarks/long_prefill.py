"""The routing path of a long-context prefill on the emulator: prepare_moe_routing_tensors,
scatter_moe_input and local_reduce_moe_output at T tokens per device, top-K over E experts of which
the device holds E_l, with the tables streamed through L1 in chunks where they do not fit; with
--dispatch, all_to_all_dispatch_dense on a 1xD line instead.

    .venv/bin/python benchmarks/long_prefill.py [--tokens 16384] [--experts 256] [--local-experts 32]
                                                [--top-k 8] [--hidden 64] [--grid 8 8]
    .venv/bin/python benchmarks/long_prefill.py --dispatch [--line 8] [--capacity ROWS] [--links 4]

Prints per op: wall time, the chunking read from the emulator's DRAM counters (prepare: column
windows per table row; scatter: routed_tokens chunk reads; local_reduce, with the layer's bound of
K assignments per row and without one: map scans per core), the program's L1 per core (its
circular buffers; the ops' budget is 1 MiB) and whether the outputs match the goldens (indices
exactly, the reduced rows by PCC). With --dispatch: wall time, modeled device time (Wormhole B0,
the slowest device), the streamed windows (ids and weights per pass, read from their DRAM copy;
image windows, counted as token_idx_map writes; routing lists) and the L1 per core of the main core
and the row senders, and whether every device's outputs equal the golden.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
import ttnn_moe.emu as emu
from ttnn_moe.emu.tensor import device_shards, from_shards
from ttnn_moe.testing import comp_pcc

import ttnn_moe
from ttnn_moe import _C, golden


def rm(device, t, dtype):
    return emu.from_torch(t, dtype=dtype, layout=emu.ROW_MAJOR_LAYOUT, device=device)


def l1_per_core(device, op_name: str, io: list, attributes) -> int:
    """Bytes of circular buffers per core of the op's program for these tensors."""
    op = getattr(_C.ops, op_name)
    context = _C.ops.MeshContext(kernels_root=str(ttnn_moe.paths.kernels_dir()), device=device.device_limits())
    ((_, program),) = op.program(attributes, [t.to_arg() for t in io], context).mesh_programs
    return sum(cb.total_size for cb in program.cbs)


def traffic(tensor) -> dict:
    return emu.last_run_counters()["dram_buffers"][tensor.to_arg().address]


def cbs_per_core(program, core) -> int:
    """Bytes of the program's circular buffers on `core`."""
    return sum(cb.total_size for cb in program.cbs if cb.core_ranges.contains(core))


def run_dispatch(args) -> None:
    """all_to_all_dispatch_dense on a 1 x line mesh at T tokens per device."""
    T, E, K, H, D = args.tokens, args.experts, args.top_k, args.hidden, args.line
    g = torch.Generator().manual_seed(args.seed)
    xs = [torch.randn(1, T, H, generator=g).bfloat16() for _ in range(D)]
    ids = [torch.rand(T, E, generator=g).topk(K, dim=1).indices.int().reshape(1, T, K) for _ in range(D)]
    ws = [torch.rand(1, T, K, generator=g).bfloat16() for _ in range(D)]
    mapping = ttnn_moe.expert_mapping(E, D)
    # Default: 1.25 times a device's mean assignments plus the blocks' padding.
    capacity = args.capacity or (T * K * 5 // 4 + 31) // 32 * 32 + 32 * (E // D)
    mesh = emu.open_mesh_device(emu.MeshShape(1, D), grid=(args.links, 1))

    def shards(tensors, dtype):
        return from_shards(tensors, dtype, emu.ROW_MAJOR_LAYOUT, mesh)

    inputs = [
        shards(xs, emu.bfloat16),
        shards(ids, emu.uint32),
        shards(ws, emu.bfloat16),
        shards([mapping] * D, emu.int32),
    ]
    with tempfile.TemporaryDirectory() as report, ttnn_moe.profile(report, arch="wormhole_b0") as run:
        out, wall = timed(
            lambda: ttnn_moe.all_to_all_dispatch_dense(*inputs, cluster_axis=1, capacity=capacity, num_links=args.links)
        )
    device_us = run.ops[-1].device_ns() / 1e3
    image_writes = traffic(out.token_idx_map)["page_writes"] // D
    want = golden.all_to_all_dispatch_dense(xs, ids, ws, mapping, (1, D), 1, capacity=capacity)

    def block_end(w) -> int:
        """End of the last expert block (the op leaves the rows after it unwritten)."""
        return int(w.expert_offsets[-1, 0]) + -(-int(w.num_routed_tokens[-1, 0]) // 32) * 32

    got_idx = device_shards(out.token_idx_map)
    got_slots = device_shards(out.handle.slot_source)
    got_tokens = device_shards(out.tokens)
    exact = all(
        torch.equal(got_idx[d].reshape(-1).to(torch.int64) & 0xFFFFFFFF, w.token_idx_map.to(torch.int64))
        and torch.equal(got_slots[d].reshape(w.slot_source.shape).to(torch.int64), w.slot_source.to(torch.int64))
        and torch.equal(device_shards(out.routed_token_weights)[d].reshape(-1), w.routed_token_weights)
        and torch.equal(got_tokens[d][: block_end(w)], w.tokens[: block_end(w)])
        for d, w in enumerate(want)
    )

    # The program of device 0 (the CBs do not depend on the fabric connections).
    attributes = _C.ops.all_to_all_dispatch_dense.Attributes(cluster_axis=1, capacity=capacity, num_links=args.links)
    limits_device = emu.open_device(grid=(args.links, 1))
    context = _C.ops.MeshContext(
        kernels_root=str(ttnn_moe.paths.kernels_dir()),
        device=limits_device.device_limits(),
        rows=1,
        cols=D,
        topology=_C.ops.FabricTopology.Linear,
        max_packet_payload=4096,
        fabric_node_ids=[(0, d) for d in range(D)],
        connect_fabric=lambda *connection: [0],
    )
    io = [t.to_arg() for t in inputs]
    io += list(_C.ops.all_to_all_dispatch_dense.output_specs(attributes, io, context))
    program = _C.ops.all_to_all_dispatch_dense.program(attributes, io, context).mesh_programs[0][1]
    emu.close_device(limits_device)
    main_core, sender_core = _C.program.CoreCoord(0, 0), _C.program.CoreCoord(1, 0)
    cb_own = {f.buffer_index: cb.total_size for cb in program.cbs for f in cb.format_descriptors}[1]
    own_window = cb_own // (6 * K)
    passes = "whole in L1" if own_window >= T else f"{-(-T // own_window)} windows of {own_window} tokens per pass"
    print(
        f"T={T} tokens a device, top-{K} of E={E} experts, H={H}, a 1x{D} line, {args.links} links, capacity {capacity}"
    )
    print(f"wall {wall:.2f} s, modeled device time {device_us:.1f} us (slowest device)")
    print(f"ids and weights: {passes}; images: {image_writes} windows (token_idx_map writes a device)")
    print(
        f"L1 per core: main {cbs_per_core(program, main_core) / 1024:.1f} KiB, "
        f"row senders {cbs_per_core(program, sender_core) / 1024:.1f} KiB (budget 1024 KiB)"
    )
    print(f"vs golden: {'exact' if exact else 'MISMATCH'}")


def timed(call):
    start = time.perf_counter()
    result = call()
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=16384, help="T: tokens per device")
    parser.add_argument("--experts", type=int, default=256, help="E: routed experts of the model")
    parser.add_argument("--local-experts", type=int, default=32, help="E_l: experts of this device")
    parser.add_argument("--top-k", type=int, default=8)
    parser.add_argument("--hidden", type=int, default=32, help="H (the tables do not depend on it)")
    parser.add_argument("--grid", type=int, nargs=2, default=(8, 8))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dispatch", action="store_true", help="all_to_all_dispatch_dense on a 1 x --line mesh")
    parser.add_argument("--line", type=int, default=8, help="--dispatch: devices of the line")
    parser.add_argument("--capacity", type=int, default=0, help="--dispatch: rows a device (0: 1.25 x the mean)")
    parser.add_argument("--links", type=int, default=4, help="--dispatch: fabric links, one row sender each")
    args = parser.parse_args()
    if args.dispatch:
        run_dispatch(args)
        return
    T, E, E_l, K, H = args.tokens, args.experts, args.local_experts, args.top_k, args.hidden
    if E % E_l:
        parser.error(f"--experts {E} is not a multiple of --local-experts {E_l}")

    g = torch.Generator().manual_seed(args.seed)
    # K distinct experts per token over the model's E. This device owns experts [0, E_l) (its
    # one-column mapping); the choices of other devices' experts are given as id E_l, outside its
    # range: skipped and counted in routing_status as the contract says, hence strict=False.
    ids = torch.rand(T, E, generator=g).topk(K, dim=1).indices.int()
    local_ids = torch.where(ids < E_l, ids, torch.full_like(ids, E_l))
    weights = torch.rand(T, K, generator=g).bfloat16()
    mapping = torch.ones(1, 1, E_l, 1, dtype=torch.int32)
    x = torch.randn(T, H, generator=g).bfloat16()
    want = golden.prepare_moe_routing_tensors(local_ids, weights, mapping, strict=False)
    counts, tokens, token_weights, idx_map = want

    device = emu.open_device(grid=tuple(args.grid))
    grid = f"{args.grid[0]}x{args.grid[1]}"
    print(f"T={T} tokens, top-{K} of E={E} experts, E_l={E_l} on this device, H={H}, grid {grid}")
    print(f"{'op':<28}{'wall s':>8}  {'chunks':<46}{'L1/core KiB':>12}  vs golden")

    def report(name, wall, chunks, l1, check):
        print(f"{name:<28}{wall:>8.2f}  {chunks:<46}{l1 / 1024:>12.1f}  {check}")

    ids_d, weights_d = rm(device, local_ids, emu.uint32), rm(device, weights, emu.bfloat16)
    mapping_d = rm(device, mapping, emu.int32)
    tables, wall = timed(lambda: ttnn_moe.prepare_moe_routing_tensors(ids_d, weights_d, mapping_d, strict=False))
    windows = traffic(tables.routed_tokens)["page_writes"] // E_l
    exact = all(
        torch.equal(w, emu.to_torch(getattr(tables, name)).to(w.dtype))
        for name, w in zip(("num_routed_tokens", "routed_tokens", "routed_token_weights", "token_idx_map"), want)
    )
    io = [ids_d, weights_d, mapping_d, *tables]
    l1 = l1_per_core(device, "prepare_moe_routing_tensors", io, _C.ops.prepare_moe_routing_tensors.Attributes())
    report(
        "prepare_moe_routing_tensors",
        wall,
        f"{windows} column windows per table row",
        l1,
        "exact" if exact else "MISMATCH",
    )

    x_d = rm(device, x, emu.bfloat16)
    scattered, wall = timed(lambda: ttnn_moe.scatter_moe_input(x_d, tables.num_routed_tokens, tables.routed_tokens))
    reads = traffic(tables.routed_tokens)["page_reads"]
    exact = torch.equal(golden.scatter_moe_input(x, counts, tokens), emu.to_torch(scattered.output))
    io = [x_d, tables.num_routed_tokens, tables.routed_tokens, *scattered]
    l1 = l1_per_core(device, "scatter_moe_input", io, _C.ops.scatter_moe_input.Attributes())
    report("scatter_moe_input", wall, f"{reads} routed_tokens chunk reads", l1, "exact" if exact else "MISMATCH")

    # The expert outputs stand in for moe_bmm's: the scattered rows themselves. With the layer's
    # bound (K assignments per token) and without one (lists sized by what L1 leaves).
    want_out = golden.local_reduce_moe_output(emu.to_torch(scattered.output), idx_map, token_weights, counts, T)
    cores = min(T, args.grid[0] * args.grid[1])
    valid = int(counts.sum())
    reduced_bits = []
    for bound in (K, 0):
        reduced, wall = timed(
            lambda bound=bound: ttnn_moe.local_reduce_moe_output(
                scattered.output,
                tables.token_idx_map,
                tables.routed_token_weights,
                tables.num_routed_tokens,
                num_out_rows=T,
                max_assignments_per_row=bound or None,
            )
        )
        scans = traffic(tables.token_idx_map)["bytes_read"] / (4 * valid * cores) if valid else 0.0
        got = emu.to_torch(reduced.output)
        reduced_bits.append(got)
        _, pcc = comp_pcc(want_out, got.float())
        io = [scattered.output, tables.token_idx_map, tables.routed_token_weights, tables.num_routed_tokens, *reduced]
        attributes = _C.ops.local_reduce_moe_output.Attributes(num_out_rows=T, max_assignments_per_row=bound)
        l1 = l1_per_core(device, "local_reduce_moe_output", io, attributes)
        name = f"local_reduce (bound {bound})" if bound else "local_reduce (no bound)"
        report(name, wall, f"{scans:.2f} map scans per core ({cores} cores)", l1, f"PCC {pcc:.6f}")
    same = torch.equal(*reduced_bits)
    print(f"local_reduce with and without the bound: {'bitwise equal' if same else 'DIFFERENT BITS'}")
    emu.close_device(device)


if __name__ == "__main__":
    main()
