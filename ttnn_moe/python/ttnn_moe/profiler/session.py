"""The profiling session: `profile(path)` records every op launched inside it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ttnn_moe import _C
from ttnn_moe.profiler.records import DeviceRecord, OpRecord, TensorInfo

_DTYPES = {
    "Float16_b": "BFLOAT16",
    "Bfp8_b": "BFLOAT8_B",
    "Bfp4_b": "BFLOAT4_B",
    "Float32": "FLOAT32",
    "UInt32": "UINT32",
    "UInt16": "UINT16",
    "Int32": "INT32",
}

_active: Profile | None = None


class Profile:
    """The ops recorded so far, on a modeled host timeline (ns) that starts at 0.

    Each op is dispatched after the previous op's devices finished (untraced ops do not overlap):
    the gap is the architecture's host dispatch cost, larger on a program-cache miss, or the
    traced op-to-op gap when `traced`."""

    def __init__(self, path: Path, arch: str, traced: bool):
        self.path = path
        self.arch = arch
        self.traced = traced
        self.ops: list[OpRecord] = []
        self.params = _C.emu.timing_params(arch)

    def total_ns(self) -> float:
        """Modeled time from the first dispatch to the last op's end."""
        return self.ops[-1].end_ns() if self.ops else 0.0

    def device_ns(self) -> float:
        """Sum of the ops' device times (without the dispatch gaps)."""
        return sum(op.device_ns() for op in self.ops)

    def record(
        self, op: str, inputs: list[Any], outputs: list[Any], program: Any, cache_hit: bool, counters: dict
    ) -> OpRecord:
        if self.traced:
            dispatch = float(self.params["dispatch_ns_traced"])
        else:
            dispatch = float(self.params["dispatch_ns_cache_hit" if cache_hit else "dispatch_ns_cache_miss"])
        start = (self.ops[-1].end_ns() if self.ops else 0.0) + dispatch
        per_device = counters.get("devices") or {0: counters}
        record = OpRecord(
            name=op,
            call_count=len(self.ops) + 1,
            inputs=[_tensor_info(t) for t in inputs],
            outputs=[_tensor_info(t) for t in outputs],
            math_fidelity=_math_fidelity(program),
            program_cache_hit=cache_hit,
            dispatch_ns=dispatch,
            start_ns=start,
            arch=self.arch,
            devices=[DeviceRecord(int(d), c) for d, c in sorted(per_device.items())],
        )
        self.ops.append(record)
        return record

    def write(self) -> None:
        from ttnn_moe.profiler.chrome_trace import write_trace  # noqa: PLC0415
        from ttnn_moe.profiler.device_log import DEVICE_LOG, LOGS_DIR, write_device_log  # noqa: PLC0415
        from ttnn_moe.profiler.host_log import write_host_logs  # noqa: PLC0415
        from ttnn_moe.profiler.ops_perf_csv import write_ops_perf_csv  # noqa: PLC0415

        self.path.mkdir(parents=True, exist_ok=True)
        write_ops_perf_csv(self, self.path / "ops_perf_results.csv")
        write_trace(self, self.path / "trace.json")
        write_device_log(self, self.path / LOGS_DIR / DEVICE_LOG)
        write_host_logs(self, self.path / LOGS_DIR)


def _tensor_info(arg: Any) -> TensorInfo:
    shape = tuple(int(s) for s in arg.shape)
    shape = (1,) * (4 - len(shape)) + shape if len(shape) < 4 else shape
    memory = "DEV_0_DRAM_INTERLEAVED" if arg.is_dram else "DEV_0_L1_INTERLEAVED"
    return TensorInfo(shape, _DTYPES.get(arg.dtype.name, arg.dtype.name.upper()), arg.layout.name, memory)


def _math_fidelity(program: Any) -> str:
    """The math fidelity of the op's compute kernels ('' when it has none); `program` is a MeshProgramDescriptor
    or a ProgramDescriptor (which generic_op runs on every device)."""
    programs = program.mesh_programs if hasattr(program, "mesh_programs") else [(None, program)]
    for _, device_program in programs:
        for kernel in device_program.kernels:
            if isinstance(kernel.config, _C.program.ComputeConfigDescriptor):
                return kernel.config.math_fidelity.name
    return ""


@contextlib.contextmanager
def profile(path: str | Path, *, arch: str = "wormhole_b0", traced: bool = False) -> Iterator[Profile]:
    """Records every op run inside the block (emulator target) and writes `path`/ops_perf_results.csv,
    `path`/trace.json and `path`/.logs/ (tt-metal's raw profiler logs) on exit.
    arch: 'wormhole_b0' or 'blackhole' (the model's parameter set);
    traced: model the ops as a trace replay (the traced op-to-op gap instead of host dispatch)."""
    global _active
    if _active is not None:
        raise RuntimeError("ttnn_moe.profile: a profile is already active (profiles do not nest)")
    if arch not in ("wormhole_b0", "blackhole"):
        raise ValueError(f"ttnn_moe.profile: arch must be 'wormhole_b0' or 'blackhole', got {arch!r}")
    previous_arch = _C.emu.timing_arch()
    _C.emu.set_timing_arch(arch)
    session = Profile(Path(path), arch, traced)
    _active = session
    try:
        yield session
    finally:
        _active = None
        _C.emu.set_timing_arch(previous_arch)
    session.write()


def active_profile() -> Profile | None:
    """The profile recording now, or None."""
    return _active
