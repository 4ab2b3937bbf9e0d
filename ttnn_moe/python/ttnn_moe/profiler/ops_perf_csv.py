"""ops_perf_results.csv: one row per op and device, in the columns of tt-metal's device
profiler report (the v2.1 layout tt-perf-report reads: shapes as "padded[logical]",
DEVICE ARCH and AVAILABLE WORKER CORE COUNT). Times are the model's, in ns."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

from ttnn_moe.profiler.records import RISCS, OpRecord, TensorInfo

if TYPE_CHECKING:
    from ttnn_moe.profiler.session import Profile

_TENSOR_SLOTS = (("INPUT", 4), ("OUTPUT", 2))
_ARCH_NAMES = {"wormhole_b0": "wormhole_b0", "blackhole": "blackhole"}


def _columns() -> list[str]:
    columns = [
        "OP CODE",
        "OP TYPE",
        "GLOBAL CALL COUNT",
        "DEVICE ID",
        "ATTRIBUTES",
        "MATH FIDELITY",
        "CORE COUNT",
        "PARALLELIZATION STRATEGY",
        "HOST START TS",
        "HOST END TS",
        "HOST DURATION [ns]",
        "DEVICE FW START CYCLE",
        "DEVICE FW END CYCLE",
        "OP TO OP LATENCY [ns]",
        "DEVICE FW DURATION [ns]",
        "DEVICE KERNEL DURATION [ns]",
        "DEVICE KERNEL DURATION PER CORE MIN [ns]",
        "DEVICE KERNEL DURATION PER CORE MAX [ns]",
        "DEVICE KERNEL DURATION PER CORE AVG [ns]",
        *(f"DEVICE {risc} KERNEL DURATION [ns]" for risc in (*RISCS, "ERISC")),
        "DEVICE COMPUTE CB WAIT FRONT [ns]",
        "DEVICE COMPUTE CB RESERVE BACK [ns]",
    ]
    for kind, count in _TENSOR_SLOTS:
        for i in range(count):
            columns += [f"{kind}_{i}_{d}_PAD[LOGICAL]" for d in "WZYX"]
            columns += [f"{kind}_{i}_LAYOUT", f"{kind}_{i}_DATATYPE", f"{kind}_{i}_MEMORY"]
    columns += ["METAL TRACE ID", "METAL TRACE REPLAY SESSION ID", "DEVICE ARCH", "AVAILABLE WORKER CORE COUNT"]
    return columns


def _tensor_cells(kind: str, index: int, tensor: TensorInfo | None) -> dict[str, object]:
    if tensor is None:
        return {}
    cells: dict[str, object] = {f"{kind}_{index}_{d}_PAD[LOGICAL]": f"{v}[{v}]" for d, v in zip("WZYX", tensor.shape)}
    cells[f"{kind}_{index}_LAYOUT"] = f"Layout::{tensor.layout}"
    cells[f"{kind}_{index}_DATATYPE"] = tensor.dtype
    cells[f"{kind}_{index}_MEMORY"] = tensor.memory
    return cells


def _rows(op: OpRecord, worker_cores: int) -> list[dict[str, object]]:
    rows = []
    for device in op.devices:
        per_core = device.core_durations_ns()
        cycles = device.duration_cycles
        row: dict[str, object] = {
            "OP CODE": op.name,
            "OP TYPE": "tt_dnn_device",
            "GLOBAL CALL COUNT": op.call_count,
            "DEVICE ID": device.device_id,
            "ATTRIBUTES": f"{{'program_cache': '{'hit' if op.program_cache_hit else 'miss'}'}}",
            "MATH FIDELITY": op.math_fidelity,
            "CORE COUNT": len(device.cores()),
            "PARALLELIZATION STRATEGY": "",
            "HOST START TS": round(op.start_ns - op.dispatch_ns),
            "HOST END TS": round(op.start_ns),
            "HOST DURATION [ns]": round(op.dispatch_ns),
            "DEVICE FW START CYCLE": round(op.start_ns * device.clock_ghz),
            "DEVICE FW END CYCLE": round(op.start_ns * device.clock_ghz) + cycles,
            "OP TO OP LATENCY [ns]": round(op.dispatch_ns),
            "DEVICE FW DURATION [ns]": round(device.duration_ns()),
            "DEVICE KERNEL DURATION [ns]": round(device.duration_ns()),
            "DEVICE KERNEL DURATION PER CORE MIN [ns]": round(min(per_core, default=0)),
            "DEVICE KERNEL DURATION PER CORE MAX [ns]": round(max(per_core, default=0)),
            "DEVICE KERNEL DURATION PER CORE AVG [ns]": round(sum(per_core) / len(per_core)) if per_core else 0,
            "DEVICE COMPUTE CB WAIT FRONT [ns]": round(device.compute_wait_ns("cb_wait_front")),
            "DEVICE COMPUTE CB RESERVE BACK [ns]": round(device.compute_wait_ns("cb_reserve_back")),
            "METAL TRACE ID": "",
            "METAL TRACE REPLAY SESSION ID": "",
            "DEVICE ARCH": _ARCH_NAMES[op.arch],
            "AVAILABLE WORKER CORE COUNT": worker_cores,
        }
        for risc in RISCS:
            row[f"DEVICE {risc} KERNEL DURATION [ns]"] = round(device.risc_duration_ns(risc))
        row["DEVICE ERISC KERNEL DURATION [ns]"] = 0
        for kind, tensors in (("INPUT", op.inputs), ("OUTPUT", op.outputs)):
            count = dict(_TENSOR_SLOTS)[kind]
            for i, tensor in enumerate(tensors[:count]):
                row.update(_tensor_cells(kind, i, tensor))
        rows.append(row)
    return rows


def write_ops_perf_csv(profile: Profile, path: Path) -> None:
    worker_cores = int(profile.params["worker_cores"])
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=_columns(), restval="")
        writer.writeheader()
        for op in profile.ops:
            writer.writerows(_rows(op, worker_cores))
