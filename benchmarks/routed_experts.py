"""Modeled device time of the DeepSeek-V3 routed experts' two moe_bmm launches on one device.

    python benchmarks/routed_experts.py                       # QUAD and TG decode, bfloat4_b and bfloat8_b
    python benchmarks/routed_experts.py --mesh quad --dtype bfloat4_b

The layer's step 4 at full dimensions (H = 7168, I = 2048; --hidden, --intermediate change the launches'
dimensions, not the routing) on the busiest device of the mesh: the fused
w1/w3 + SwiGLU launch over the dispatched ROW_MAJOR token rows, then w2 writing ROW_MAJOR rows. The
routing is the demo's (decode: 32 tokens per mesh row; the reference gate over the random layer's gate
weight and bias, seed 0): every column dispatches all the mesh's tokens to its devices, so expert e
receives every token choosing it; experts e // (E / D) live on device d. The busiest device (most active
row tiles, then most rows) is the one whose launches bound the mesh's. Its expert blocks are packed at
32-row aligned offsets, as dispatch writes them.

Per launch: modeled us (Wormhole B0 model, 8x8 grid), weight bytes read from DRAM, all DRAM bytes (reads
and writes), and the achieved DRAM rate (all DRAM bytes / modeled time; the model's peak is 267 GB/s),
with the readers' mean waits: for read barriers, for the multicast handshakes' semaphores, for free
slots in their circular buffers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

import ttnn_moe
from ttnn_moe import emu

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the models package
from models.deepseek_v3.config import DeepseekV3MoEConfig, mesh_shape  # noqa: E402
from models.deepseek_v3.reference import moe_gate  # noqa: E402
from models.deepseek_v3.weights import RandomMoELayer  # noqa: E402

TOKENS_PER_ROW = 32  # decode
WAIT_KINDS = {"noc_read_barrier": "barrier", "semaphore_wait": "sem", "cb_reserve_back": "cb full"}
DTYPES = {"bfloat4_b": emu.bfloat4_b, "bfloat8_b": emu.bfloat8_b}


def busiest_device_counts(mesh: str, seed: int) -> tuple[list[int], int]:
    """The routed rows of each expert of the mesh's busiest device, and its index."""
    config = DeepseekV3MoEConfig()
    rows, cols = mesh_shape(mesh)
    layer = RandomMoELayer(config, seed)
    tokens = rows * TOKENS_PER_ROW
    x = torch.randn(tokens, config.hidden_size, generator=torch.Generator().manual_seed(seed + 1)).bfloat16().float()
    indices, _ = moe_gate(x, layer["gate.weight"], layer["gate.e_score_correction_bias"], config)
    load = torch.bincount(indices.flatten(), minlength=config.n_routed_experts).tolist()
    per_device = config.n_routed_experts // (rows * cols)
    devices = [load[d * per_device : (d + 1) * per_device] for d in range(rows * cols)]

    def weight(counts: list[int]) -> tuple[int, int]:
        return sum(-(-c // 32) for c in counts), sum(counts)

    busiest = max(range(len(devices)), key=lambda d: weight(devices[d]))
    return devices[busiest], busiest


def run_launches(device, counts: list[int], dtype, hidden: int, intermediate: int) -> dict[str, int]:
    """The layer's two launches; returns the DRAM address of each launch's weights."""
    g = torch.Generator().manual_seed(0)
    experts = len(counts)
    blocks = [32 * -(-c // 32) for c in counts]
    offsets = [sum(blocks[:i]) for i in range(experts)]
    total = max(sum(blocks), 32)
    column = lambda values: emu.from_torch(  # noqa: E731
        torch.tensor(values, dtype=torch.int32).reshape(-1, 1), dtype=emu.uint32, layout=emu.ROW_MAJOR_LAYOUT,
        device=device,
    )  # fmt: skip
    counts_t, offsets_t = column(counts), column(offsets)
    tokens = emu.from_torch(
        torch.randn(total, hidden, generator=g), dtype=emu.bfloat16, layout=emu.ROW_MAJOR_LAYOUT, device=device
    )
    gate, up = (torch.randn(experts, hidden, intermediate, generator=g) * hidden**-0.5 for _ in range(2))
    w1_w3 = emu.from_torch(ttnn_moe.interleave_gate_up(gate, up), dtype=dtype, layout=emu.TILE_LAYOUT, device=device)
    del gate, up
    w2 = emu.from_torch(
        torch.randn(experts, intermediate, hidden, generator=g) * intermediate**-0.5,
        dtype=dtype,
        layout=emu.TILE_LAYOUT,
        device=device,
    )
    out = emu.from_torch(
        torch.zeros(total, hidden), dtype=emu.bfloat16, layout=emu.ROW_MAJOR_LAYOUT, device=device
    )  # fmt: skip
    hidden_rows = ttnn_moe.moe_bmm(tokens, w1_w3, counts_t, expert_offsets=offsets_t, activation="swiglu", strict=False)
    ttnn_moe.moe_bmm(hidden_rows, w2, counts_t, expert_offsets=offsets_t, output_tensor=out, strict=False)
    return {"w1/w3 + SwiGLU": w1_w3.to_arg().address, "w2": w2.to_arg().address}


def reader_waits_us(op) -> dict[str, float]:
    """The readers' mean waits by kind (read barrier, semaphore, CB reservation), us."""
    (device,) = op.devices
    readers = [s for s in device.timing["riscs"] if "reader" in s["kernel"]]
    return {
        kind: sum(int(s["wait_cycles"].get(kind, 0)) for s in readers) / len(readers) / device.clock_ghz / 1e3
        for kind in WAIT_KINDS
    }


def print_case(mesh: str, dtype_name: str, seed: int, grid: tuple[int, int], hidden: int, intermediate: int) -> float:
    counts, index = busiest_device_counts(mesh, seed)
    device = emu.open_device(device_id=0, grid=grid)
    with tempfile.TemporaryDirectory() as directory, ttnn_moe.profile(directory) as session:
        addresses = run_launches(device, counts, DTYPES[dtype_name], hidden, intermediate)
    print(
        f"\n{mesh} decode ({TOKENS_PER_ROW} tokens per row), busiest device {index}: {len(counts)} experts, rows "
        f"{counts}, {dtype_name}, H={hidden}, I={intermediate}, Wormhole B0 model, {grid[0]}x{grid[1]} grid"
    )
    waits = "".join(f"{label + ' us':>11}" for label in WAIT_KINDS.values())
    header = f"{'launch':<18}{'modeled us':>11}{'w MB':>9}{'DRAM MB':>9}{'GB/s':>8}{waits}"
    print(header)
    print("-" * len(header))
    total = 0.0
    for op, (label, address) in zip(session.ops, addresses.items()):
        c = op.devices[0].counters
        weight_bytes = c["dram_buffers"][address]["bytes_read"]
        dram = c["noc_bytes_read_dram"] + c["noc_bytes_written_dram"]
        ns = op.device_ns()
        waits = "".join(f"{us:>11.2f}" for us in reader_waits_us(op).values())
        print(f"{label:<18}{ns / 1e3:>11.2f}{weight_bytes / 1e6:>9.2f}{dram / 1e6:>9.2f}{dram / ns:>8.1f}{waits}")
        total += ns / 1e3
    print(f"{'both':<18}{total:>11.2f}")
    return total


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", nargs="+", default=["quad", "tg"], choices=["tg", "quad"])
    parser.add_argument("--dtype", nargs="+", default=list(DTYPES), choices=list(DTYPES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grid", type=int, nargs=2, default=(8, 8), metavar=("X", "Y"))
    config = DeepseekV3MoEConfig()
    parser.add_argument("--hidden", type=int, default=config.hidden_size, help="the launches' H (routing: full)")
    parser.add_argument("--intermediate", type=int, default=config.moe_intermediate_size, help="the launches' I")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for mesh in args.mesh:
        for dtype in args.dtype:
            print_case(mesh, dtype, args.seed, tuple(args.grid), args.hidden, args.intermediate)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
