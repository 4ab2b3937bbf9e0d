"""The host side of a tt-metal profiler run, as Tracy's csvexport leaves it in `.logs/`:
`tracy_ops_data.csv` (one message per op launch: its global call count, device, op code and
tensors as JSON) and `tracy_ops_times.csv` (the op's host zone: start and duration in ns).
With these beside `profile_log_device.csv`, Tenstorrent's post-processor joins host and
device data into its full ops report (op codes, tensors, core counts, device times).

The post-processor keys ops by global call count alone, so an op that ran on several devices
is described for the first device that ran a kernel of it (the device log holds them all). It
then expects each device's log to hold exactly the ops described for it: true when every op
runs on the first device (or on one device); otherwise its device-only report still reads
every device.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ttnn_moe.profiler.records import OpRecord, TensorInfo

if TYPE_CHECKING:
    from ttnn_moe.profiler.session import Profile

OPS_DATA_LOG = "tracy_ops_data.csv"
OPS_TIMES_LOG = "tracy_ops_times.csv"
_HOST_ZONE = "TT_DNN_DEVICE_OP"
_TIMES_COLUMNS = ("name", "zone_text", "ns_since_start", "exec_time_ns", "special_parent_text")


def _tensor(tensor: TensorInfo) -> dict:
    return {
        "shape": {d: f"{v}[{v}]" for d, v in zip("WZYX", tensor.shape)},
        "layout": f"Layout::{tensor.layout}",
        "dtype": tensor.dtype,
        "storage_type": tensor.memory,
    }


def _op_message(op: OpRecord, device_id: int, worker_cores: int) -> str:
    data = {
        "global_call_count": op.call_count,
        "device_id": device_id,
        "op_code": op.name,
        "op_type": "tt_dnn_device",
        "device_arch": op.arch,
        "available_worker_core_count": worker_cores,
        "math_fidelity": op.math_fidelity,
        "program_cache_hit": op.program_cache_hit,
        "input_tensors": [_tensor(t) for t in op.inputs],
        "output_tensors": [_tensor(t) for t in op.outputs],
    }
    return f'{_HOST_ZONE}: "{op.name}", {device_id}, {op.call_count} ->\n{json.dumps(data)}'


def write_host_logs(profile: Profile, logs_dir: Path) -> None:
    """Writes the host op messages and zones of `profile` into `logs_dir`."""
    worker_cores = int(profile.params["worker_cores"])
    logs_dir.mkdir(parents=True, exist_ok=True)
    # The device log has rows only where kernels ran: an op without any is not in it.
    first_running = {}
    for op in profile.ops:
        running = [d.device_id for d in op.devices if d.timing["riscs"]]
        if running:
            first_running[op.call_count] = running[0]
    ops = [op for op in profile.ops if op.call_count in first_running]
    with (logs_dir / OPS_DATA_LOG).open("w", newline="") as f:
        writer = csv.writer(f, delimiter=";", quotechar="`", quoting=csv.QUOTE_ALL)
        writer.writerow(("MessageName", "total_ns"))
        for op in ops:
            message = _op_message(op, first_running[op.call_count], worker_cores)
            writer.writerow((message, round(op.start_ns - op.dispatch_ns)))
    with (logs_dir / OPS_TIMES_LOG).open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(_TIMES_COLUMNS)
        for op in ops:
            start = round(op.start_ns - op.dispatch_ns)
            writer.writerow((_HOST_ZONE, f"{op.name}:{op.call_count}", start, round(op.dispatch_ns), ""))
