"""The layer as a list of device ops: which programs ran for each step of `TtMoE.forward` and
what the emulator counted for them (tile matmuls, NOC bytes, fabric bytes, modeled time).

`OpFlowRecorder` is the forward pass's observer: the device programs that ran since the
previous stage (the emulator's `record_runs`) belong to the stage just notified, named by
the op that produced it. A reshape that is a view runs nothing and is not listed.
"""

from __future__ import annotations

from dataclasses import dataclass

# The stage each op's output is first seen as -> the op.
OP_OF_STAGE = {
    "all_gather": "ttnn.all_gather (hidden slices of the row)",
    "gate.topk_indices": "moe_gate",
    "to_layout.x_rows": "ttnn.to_layout x -> ROW_MAJOR",
    "dispatch.tokens": "all_to_all_dispatch_dense",
    "experts.swiglu": "moe_bmm routed w1/w3 + SwiGLU",
    "experts.w2": "moe_bmm routed w2",
    "local_reduce": "local_reduce_moe_output",
    "combine": "all_to_all_combine_dense",
    "shared_expert.swiglu": "moe_bmm shared w1/w3 + SwiGLU",
    "shared_expert_partial": "moe_bmm shared w2 + routed share",
    "reduce_scatter": "ttnn.reduce_scatter (partials of the row)",
}

_NOC_KEYS = ("noc_bytes_read_dram", "noc_bytes_read_l1", "noc_bytes_written_dram", "noc_bytes_written_l1")


@dataclass(frozen=True)
class DeviceOp:
    name: str
    device_programs: int  # one per device per launch
    tile_matmuls: int  # summed over the mesh
    noc_bytes: int  # NOC reads and writes, DRAM and L1, summed over the mesh
    fabric_bytes: int  # fabric payload sent, summed over the mesh
    device_us: float  # modeled device time of the slowest device, summed over launches

    @classmethod
    def of_runs(cls, name: str, runs: list[dict]) -> "DeviceOp":
        devices = [device for run in runs for device in run["devices"].values()]
        slowest = [
            max(d["timing"]["duration_cycles"] / d["timing"]["clock_ghz"] for d in run["devices"].values())
            for run in runs
        ]
        return cls(
            name=name,
            device_programs=len(devices),
            tile_matmuls=sum(int(d["tile_matmuls"]) for d in devices),
            noc_bytes=sum(int(d[key]) for d in devices for key in _NOC_KEYS),
            fabric_bytes=sum(int(d["fabric"]["bytes"]) for d in devices),
            device_us=sum(slowest) / 1e3,
        )


class OpFlowRecorder:
    """Observer of a forward pass run inside `record_runs()`: `ops` lists the device ops in order."""

    def __init__(self, runs: list[dict]):
        self._runs = runs
        self._seen = 0
        self.ops: list[DeviceOp] = []

    def __call__(self, stage: str, tensor) -> None:
        new = self._runs[self._seen :]
        self._seen = len(self._runs)
        if new:
            self.ops.append(DeviceOp.of_runs(OP_OF_STAGE.get(stage, stage), new))


def format_op_flow(ops: list[DeviceOp]) -> list[str]:
    """The table's lines: a header, one line per op, the totals."""
    lines = [f"  {'op':<42} {'programs':>8} {'tile-matmuls':>12} {'NOC bytes':>13} {'fabric bytes':>12} {'us':>9}"]
    for op in ops:
        lines.append(
            f"  {op.name:<42} {op.device_programs:>8} {op.tile_matmuls:>12} {op.noc_bytes:>13} "
            f"{op.fabric_bytes:>12} {op.device_us:>9.2f}"
        )
    total = DeviceOp(
        "total",
        sum(o.device_programs for o in ops),
        sum(o.tile_matmuls for o in ops),
        sum(o.noc_bytes for o in ops),
        sum(o.fabric_bytes for o in ops),
        sum(o.device_us for o in ops),
    )
    lines.append(
        f"  {total.name:<42} {total.device_programs:>8} {total.tile_matmuls:>12} {total.noc_bytes:>13} "
        f"{total.fabric_bytes:>12} {total.device_us:>9.2f}"
    )
    return lines
