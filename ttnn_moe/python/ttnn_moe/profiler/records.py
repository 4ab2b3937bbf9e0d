"""What one op run looks like to the profiler: its tensors, program and modeled time per device."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

RISCS = ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2")


@dataclass
class TensorInfo:
    shape: tuple[int, ...]
    dtype: str  # ttnn's name: BFLOAT16, BFLOAT8_B, ...
    layout: str  # TILE, ROW_MAJOR
    memory: str  # DEV_0_DRAM_INTERLEAVED


@dataclass
class DeviceRecord:
    """One device's part of an op: its counters and modeled timing (cycles of the arch clock)."""

    device_id: int
    counters: dict[str, Any]

    @property
    def timing(self) -> dict[str, Any]:
        return self.counters["timing"]

    @property
    def clock_ghz(self) -> float:
        return float(self.timing["clock_ghz"])

    @property
    def duration_cycles(self) -> int:
        return int(self.timing["duration_cycles"])

    def duration_ns(self) -> float:
        return self.duration_cycles / self.clock_ghz

    def cores(self) -> list[tuple[int, int]]:
        return sorted({tuple(s["core"]) for s in self.timing["riscs"]})

    def core_durations_ns(self) -> list[float]:
        ends: dict[tuple[int, int], int] = {}
        for s in self.timing["riscs"]:
            core = tuple(s["core"])
            ends[core] = max(ends.get(core, 0), int(s["end"]))
        return [ends[c] / self.clock_ghz for c in sorted(ends)]

    def risc_duration_ns(self, risc: str) -> float:
        ends = [int(s["end"]) for s in self.timing["riscs"] if s["risc"] == risc]
        return max(ends, default=0) / self.clock_ghz

    def compute_wait_ns(self, kind: str) -> float:
        """The longest total wait of `kind` of a compute kernel (unpack waits on inputs, pack on outputs)."""
        waits = [int(s["wait_cycles"].get(kind, 0)) for s in self.timing["riscs"] if s["risc"].startswith("TRISC")]
        return max(waits, default=0) / self.clock_ghz


@dataclass
class OpRecord:
    """One op launch: name, call count, tensors, math fidelity, host dispatch and per-device timing."""

    name: str
    call_count: int
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    math_fidelity: str
    program_cache_hit: bool
    dispatch_ns: float  # modeled host dispatch before the op (the op-to-op gap)
    start_ns: float  # modeled start of the op's kernels on the host timeline
    arch: str
    devices: list[DeviceRecord] = field(default_factory=list)

    def device_ns(self) -> float:
        """The op's device time: its slowest device (the devices run at once)."""
        return max((d.duration_ns() for d in self.devices), default=0.0)

    def end_ns(self) -> float:
        return self.start_ns + self.device_ns()
