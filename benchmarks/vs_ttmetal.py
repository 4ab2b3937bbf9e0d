"""Our MoE layer (TtMoE) against tt-metal's classic MoE flow (TtMoEBaseline) on emulated meshes.

    .venv/bin/python benchmarks/vs_ttmetal.py [--quick] [--meshes tg quad] [--modes decode prefill]
                                              [--hidden mini full] [--expert-dtype bfloat8_b]

Cases: TG 4x8 and QUAD 16x8, decode (32 tokens per mesh row) and prefill (512 per row), the mini and
the full hidden size. `--quick`: mini hidden size, TG, decode only (about a minute once the kernels are
built; TG prefill adds about four minutes, most of it the emulated wheel dispatch and combine of 2048
tokens per column). Each (case, implementation) runs one
forward pass in its own process (its memory is its own). Per op and per layer: tile-matmuls executed,
DRAM bytes (NOC reads and writes of DRAM), NOC bytes (all), fabric bytes, L1 peak (the largest sum of
circular-buffer bytes one core of one program of the op holds; L1-resident tensors are not counted)
and the modeled device time (the emulator's time model, slowest device per launch, launches summed),
with ours / theirs ratios per layer.

tt-metal steps without a device program in the emulator run as host stand-ins or host built-ins:
their rows say `host` and their work is NOT in modeled device time (it flatters tt-metal). While any
remain, the classic ratio is printed as nan, with the device-only part's ratio (an upper bound of it)
on the line before.
The optimized tt-metal path (TtMoEBaseline(path="optimized"): deepseek_grouped_gate,
all_to_all_dispatch_metadata, moe_compute (its FullCcl path down the columns), deepseek_moe_fast_reduce_nc +
deepseek_moe_reduce_scatter or ttnn.sum + reduce_scatter) runs on the full Wormhole grid and a ring fabric, as
tt-metal runs it; where it cannot (a refusal with its reason), its ratio is nan with that reason on the line before.
The mini case is hidden 256 with intermediate 512 for all three layers (moe_compute's ring needs a tile per core).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the models package
RESULT_PREFIX = "vs_ttmetal result: "
MESHES = {"tg": (4, 8), "quad": (16, 8)}
TOKENS_PER_ROW = {"decode": 32, "prefill": 512}
IMPLEMENTATIONS = ("ours", "tt-metal classic", "tt-metal optimized")
BASELINES = IMPLEMENTATIONS[1:]
# Tenstorrent's reported silicon figures for the MoE sequence at QUAD decode (a published silicon
# measurement, not a model): the optimized path and the classic path it replaced.
PUBLISHED_QUAD_DECODE_US = {"optimized": 578.0, "classic": 9620.0}
# The mini case's expert width, so that all three layers run the same layer: moe_compute's ring of 12 cores needs an
# intermediate tile per core, and the classic flow's sparse matmul a block of its 8-wide grid (16 tiles).
MINI_INTERMEDIATE = 512
_NOC_KEYS = ("noc_bytes_read_dram", "noc_bytes_read_l1", "noc_bytes_written_dram", "noc_bytes_written_l1")


@dataclass
class OpRow:
    name: str
    where: str  # "device": device programs ran; "host": host work (stand-in or built-in); "view": neither
    programs: int = 0
    tile_matmuls: int = 0
    dram_bytes: int = 0
    noc_bytes: int = 0
    fabric_bytes: int = 0
    l1_peak: int = 0
    device_us: float = 0.0
    host_events: int = 0  # host computations + device reads the emulator counted
    host_computations: int = 0


def op_row(name: str, runs: list[dict], l1_peaks: list[int], host_events: int, host_computations: int) -> OpRow:
    """One op's figures from its program runs (`record_runs`), their L1 peaks and its host events."""
    devices = [device for run in runs for device in run["devices"].values()]
    slowest = [
        max(d["timing"]["duration_cycles"] / d["timing"]["clock_ghz"] for d in run["devices"].values()) for run in runs
    ]
    where = "device" if runs else ("host" if host_events else "view")
    # Device reads without a host computation are the emulator placing the L1 shard an op's circular buffer aliases
    # on hardware (moe_compute's top-k rows, deepseek_moe_reduce_scatter's inputs): no host work of the flow.
    if runs and host_computations:
        where = "device+host"
    return OpRow(
        name=name,
        where=where,
        programs=len(devices),
        tile_matmuls=sum(int(d["tile_matmuls"]) for d in devices),
        dram_bytes=sum(int(d["noc_bytes_read_dram"]) + int(d["noc_bytes_written_dram"]) for d in devices),
        noc_bytes=sum(int(d[key]) for d in devices for key in _NOC_KEYS),
        fabric_bytes=sum(int(d["fabric"]["bytes"]) for d in devices),
        l1_peak=max(l1_peaks, default=0),
        device_us=sum(slowest) / 1e3,
        host_events=host_events,
        host_computations=host_computations,
    )


def layer_row(ops: list[OpRow]) -> OpRow:
    return OpRow(
        name="layer",
        where="host" if any("host" in o.where for o in ops) else "device",
        programs=sum(o.programs for o in ops),
        tile_matmuls=sum(o.tile_matmuls for o in ops),
        dram_bytes=sum(o.dram_bytes for o in ops),
        noc_bytes=sum(o.noc_bytes for o in ops),
        fabric_bytes=sum(o.fabric_bytes for o in ops),
        l1_peak=max((o.l1_peak for o in ops), default=0),
        device_us=sum(o.device_us for o in ops),
        host_events=sum(o.host_events for o in ops),
        host_computations=sum(o.host_computations for o in ops),
    )


class L1Watch:
    """Stands in for the emulator module `generic_op` launches through: notes each program's L1 peak
    (the largest per-core sum of its circular buffers' sizes), then runs it."""

    def __init__(self, real):
        self._real = real
        self.peaks: list[int] = []

    def __getattr__(self, name):
        return getattr(self._real, name)

    @staticmethod
    def _program_peak(program) -> int:
        per_core: dict[tuple[int, int], int] = {}
        for cb in program.cbs:
            for core_range in cb.core_ranges.ranges:
                for x in range(core_range.start.x, core_range.end.x + 1):
                    for y in range(core_range.start.y, core_range.end.y + 1):
                        per_core[(x, y)] = per_core.get((x, y), 0) + int(cb.total_size)
        return max(per_core.values(), default=0)

    def run_program(self, chip, program):
        self.peaks.append(self._program_peak(program))
        return self._real.run_program(chip, program)

    def run_mesh_program(self, mesh, mesh_program):
        self.peaks.append(max((self._program_peak(p) for _, p in mesh_program.mesh_programs), default=0))
        return self._real.run_mesh_program(mesh, mesh_program)


class OpRecorder:
    """Observer of a forward pass: the runs, L1 peaks and host events since the previous op belong to
    the op just notified."""

    def __init__(self, runs: list[dict], watch: L1Watch, host_traffic, names: dict[str, str], label: str):
        self._runs, self._watch, self._host_traffic, self._names = runs, watch, host_traffic, names
        self._seen_runs, self._seen_peaks, self._seen_host = 0, 0, host_traffic()
        self._label, self._start = label, time.perf_counter()
        self.ops: list[OpRow] = []

    def __call__(self, stage: str, tensor) -> None:
        runs, peaks = self._runs[self._seen_runs :], self._watch.peaks[self._seen_peaks :]
        host = self._host_traffic()
        events = host - self._seen_host
        self._seen_runs, self._seen_peaks, self._seen_host = len(self._runs), len(self._watch.peaks), host
        if runs or events.total or stage in self._names or stage.startswith("ttnn."):
            row = op_row(self._names.get(stage, stage), runs, peaks, events.total, events.host_computations)
            self.ops.append(row)
            # Progress on stderr (a full-size case emulates for tens of minutes); stdout carries the result.
            elapsed = time.perf_counter() - self._start
            print(f"  [{self._label}] {row.name}: {row.device_us:.2f} us modeled ({elapsed:.0f} s)", file=sys.stderr)


def run_case(implementation: str, mesh: str, mode: str, hidden: str, expert_dtype: str, seed: int) -> dict:
    """In this process: one forward pass of `implementation`, its op rows as a dict."""
    import torch  # noqa: PLC0415  (the parent only starts children)

    from models.deepseek_v3.config import MESH_FABRIC_TOPOLOGY, DeepseekV3MoEConfig  # noqa: PLC0415
    from models.deepseek_v3.tt import TtMoE, input_to_mesh  # noqa: PLC0415
    from models.deepseek_v3.tt.moe_weights import EXPERT_DTYPES  # noqa: PLC0415
    from models.deepseek_v3.tt.op_flow import OP_OF_STAGE  # noqa: PLC0415
    from models.deepseek_v3.tt_baseline import TtMoEBaseline  # noqa: PLC0415
    from models.deepseek_v3.tt_baseline.optimized import open_mesh as open_optimized_mesh  # noqa: PLC0415
    from models.deepseek_v3.weights import RandomMoELayer  # noqa: PLC0415
    from ttnn_moe import emu  # noqa: PLC0415

    # The module generic_op launches through (the package's `generic_op` name is the function).
    launcher = importlib.import_module("ttnn_moe.emu.generic_op")
    torch.set_num_threads(1)
    config = (
        DeepseekV3MoEConfig.mini(moe_intermediate_size=MINI_INTERMEDIATE) if hidden == "mini" else DeepseekV3MoEConfig()
    )
    rows, cols = MESHES[mesh]
    layer_weights = RandomMoELayer(config, seed=seed)
    x = torch.randn(rows * TOKENS_PER_ROW[mode], config.hidden_size, generator=torch.Generator().manual_seed(seed))
    if implementation == "tt-metal optimized":  # the full Wormhole grid and a ring fabric, as that flow runs
        mesh_device = open_optimized_mesh(rows, cols)
    else:
        mesh_device = emu.open_mesh_device(emu.MeshShape(rows, cols))
        # The fabric the preset's hardware has (a QUAD's columns are rings); a mesh of no preset runs lines.
        mesh_device.fabric_topology = getattr(emu.Topology, MESH_FABRIC_TOPOLOGY.get(mesh, "Linear"))
    watch = L1Watch(launcher._emu)
    launcher._emu = watch
    try:
        dtype = EXPERT_DTYPES[expert_dtype]
        if implementation == "ours":
            layer = TtMoE(layer_weights, config, mesh_device, expert_dtype=dtype)
        elif implementation == "tt-metal classic":
            layer = TtMoEBaseline(layer_weights, config, mesh_device, expert_dtype=dtype)
        else:
            try:
                layer = TtMoEBaseline(
                    layer_weights, config, mesh_device, path="optimized", tokens_per_row=TOKENS_PER_ROW[mode]
                )
            except (NotImplementedError, ValueError) as refused:  # a mesh or size the flow cannot run
                return {"ops": [], "wall_s": 0.0, "host_steps": [], "refused": str(refused)}
        print(f"  [{implementation}, {mesh.upper()} {mode}, {hidden}] layer built; forward pass:", file=sys.stderr)
        x_mesh = input_to_mesh(x.bfloat16().float(), mesh_device)
        start = time.perf_counter()
        with emu.record_runs() as runs:
            label = f"{implementation}, {mesh.upper()} {mode}, {hidden}"
            names = OP_OF_STAGE if implementation == "ours" else {}
            recorder = OpRecorder(runs, watch, emu.host_traffic, names, label)
            recorder("input", x_mesh)
            layer(x_mesh, observer=recorder)
        wall = time.perf_counter() - start
    finally:
        launcher._emu = watch._real
        emu.close_mesh_device(mesh_device)
    host_steps = sorted(set(layer.ops.host_steps)) if implementation != "ours" else []
    return {"ops": [asdict(o) for o in recorder.ops], "wall_s": wall, "host_steps": host_steps}


def format_ops(title: str, ops: list[OpRow]) -> list[str]:
    header = (
        f"  {'op':<44} {'where':<11} {'tile-mm':>9} {'DRAM B':>12} {'NOC B':>12} {'fabric B':>11} "
        f"{'L1 peak':>9} {'model us':>9}"
    )
    lines = [title, header]
    for o in [*ops, layer_row(ops)]:
        lines.append(
            f"  {o.name[:44]:<44} {o.where:<11} {o.tile_matmuls:>9} {o.dram_bytes:>12} {o.noc_bytes:>12} "
            f"{o.fabric_bytes:>11} {o.l1_peak:>9} {o.device_us:>9.2f}"
        )
    return lines


def ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def format_comparison(ours: OpRow, theirs: OpRow, implementation: str) -> list[str]:
    fields = ("tile_matmuls", "dram_bytes", "noc_bytes", "fabric_bytes", "l1_peak", "device_us")
    ratios = ", ".join(f"{f} {ratio(getattr(ours, f), getattr(theirs, f)):.3f}" for f in fields)
    part = " (theirs: its device programs only; host rows are missing)" if "host" in theirs.where else ""
    return [f"  ours / {implementation}, per layer{part}: {ratios}"]


def final_lines(tg_decode: dict | None) -> list[str]:
    """The closing lines: the two TG decode ratios, each preceded by its caveat or reason."""
    if tg_decode is None or "ours" not in tg_decode:
        return [
            "TG decode was not run: both ratios are nan",
            "TG decode was not run",
            f"TG decode layer, ours / tt-metal classic modeled device time: {math.nan:.3f}",
            f"TG decode layer, ours / tt-metal optimized modeled device time: {math.nan:.3f}",
        ]
    ours = layer_row(rows_of(tg_decode["ours"]))
    lines, ratios = [], []
    for implementation in BASELINES:
        result = tg_decode.get(implementation)
        if result is None:
            lines.append(f"{implementation} failed on TG decode, so its ratio is nan")
            ratios.append(math.nan)
        elif "refused" in result:
            lines.append(f"{implementation} cannot run on TG: {result['refused']}; its ratio is nan")
            ratios.append(math.nan)
        else:
            theirs = layer_row(rows_of(result))
            device_only = ratio(ours.device_us, theirs.device_us)
            if theirs.where == "host":
                lines.append(
                    f"{implementation} ran partly on the host ({', '.join(result['host_steps']) or 'host built-ins'} "
                    f"and host glue; not in modeled device time, which flatters tt-metal): ours / its device-only "
                    f"part = {device_only:.3f}, an upper bound of the ratio (those steps' device time could only "
                    f"add to tt-metal's), so the ratio is nan"
                )
                ratios.append(math.nan)
            else:
                lines.append(f"{implementation} ran entirely as device programs")
                ratios.append(device_only)
    for implementation, value in zip(BASELINES, ratios):
        lines.append(f"TG decode layer, ours / {implementation} modeled device time: {value:.3f}")
    return lines


def rows_of(result: dict) -> list[OpRow]:
    return [OpRow(**o) for o in result["ops"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="mini hidden size, TG, decode only")
    parser.add_argument("--meshes", nargs="+", default=list(MESHES), choices=list(MESHES))
    parser.add_argument("--modes", nargs="+", default=list(TOKENS_PER_ROW), choices=list(TOKENS_PER_ROW))
    parser.add_argument("--hidden", nargs="+", default=["mini", "full"], choices=["mini", "full"])
    parser.add_argument("--expert-dtype", default="bfloat8_b", choices=["bfloat16", "bfloat8_b", "bfloat4_b"])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--case", nargs=4, metavar=("IMPL", "MESH", "MODE", "HIDDEN"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.case:
        from loguru import logger  # noqa: PLC0415

        logger.remove()  # the weight upload's progress lines would drown the tables
        logger.add(sys.stderr, level="WARNING")
        implementation, mesh, mode, hidden = args.case
        result = run_case(implementation.replace("_", " "), mesh, mode, hidden, args.expert_dtype, args.seed)
        print(RESULT_PREFIX + json.dumps(result), flush=True)
        return 0

    meshes, hiddens = (["tg"], ["mini"]) if args.quick else (args.meshes, args.hidden)
    modes = ["decode"] if args.quick else args.modes
    tg_decode = None
    for hidden in hiddens:
        for mesh in meshes:
            for mode in modes:
                case = f"{mesh.upper()} {mode} ({TOKENS_PER_ROW[mode]} tokens per row), {hidden} hidden size"
                print(f"== {case}, {args.expert_dtype} experts", flush=True)
                results = {}
                for implementation in IMPLEMENTATIONS:
                    child = [sys.executable, __file__, "--case", implementation.replace(" ", "_"), mesh, mode, hidden]
                    child += ["--expert-dtype", args.expert_dtype, "--seed", str(args.seed)]
                    done = subprocess.run(child, cwd=ROOT, stdout=subprocess.PIPE, text=True)
                    found = [line for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
                    if done.returncode != 0 or not found:
                        print(f"  {implementation}: failed with exit code {done.returncode}", flush=True)
                        continue
                    result = results[implementation] = json.loads(found[-1][len(RESULT_PREFIX) :])
                    if "refused" in result:
                        print(f" {implementation}: cannot run on {mesh.upper()}: {result['refused']}", flush=True)
                        continue
                    title = f" {implementation} (wall {result['wall_s']:.1f} s)"
                    print("\n".join(format_ops(title, rows_of(result))), flush=True)
                ran = {impl: r for impl, r in results.items() if "refused" not in r}
                if "ours" in ran:
                    ours = layer_row(rows_of(ran["ours"]))
                    for implementation in BASELINES:
                        if implementation in ran:
                            theirs = layer_row(rows_of(ran[implementation]))
                            print("\n".join(format_comparison(ours, theirs, implementation)), flush=True)
                    if mesh == "quad" and mode == "decode":
                        print(
                            f"  ours QUAD decode modeled: {ours.device_us:.1f} us; Tenstorrent's published SILICON "
                            f"figures for the QUAD decode MoE sequence (measured, not a model): optimized "
                            f"{PUBLISHED_QUAD_DECODE_US['optimized']:.0f} us, classic "
                            f"{PUBLISHED_QUAD_DECODE_US['classic']:.0f} us",
                            flush=True,
                        )
                if mesh == "tg" and mode == "decode" and tg_decode is None:
                    tg_decode = results
    print("\n".join(final_lines(tg_decode)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
