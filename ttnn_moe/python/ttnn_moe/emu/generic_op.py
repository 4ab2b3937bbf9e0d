"""generic_op: run a program description on the emulator, like ttnn.generic_op.

The tensors' device decides where it runs. A ProgramDescriptor runs on a single
device, or on every device of a mesh (as ttnn broadcasts it over the mesh); a
MeshProgramDescriptor runs per-device programs on a mesh (a single device is a
1x1 mesh). Returns the last io
tensor (the output, by ttnn's convention); the run's counters are kept for
`last_run_counters()`.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as _program
from ttnn_moe.emu.device import Device, MeshDevice
from ttnn_moe.emu.run_log import note_run
from ttnn_moe.emu.tensor import Tensor

_last_run_counters: Optional[dict] = None


def _common_device(io_tensors: Sequence[Tensor]):
    if not io_tensors:
        raise ValueError("generic_op needs at least one io tensor (the output is the last one)")
    for t in io_tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"io_tensors must be emulator Tensors, got {type(t).__name__}")
        t._check_on_device()
    device = io_tensors[0].device()
    for t in io_tensors[1:]:
        if t.device() is not device:
            raise ValueError(f"io tensors live on different devices: {device!r} and {t.device()!r}")
    return device


def _whole_mesh(mesh: MeshDevice, program: _program.ProgramDescriptor) -> _program.MeshProgramDescriptor:
    rows, cols = mesh.shape
    everywhere = _program.MeshCoordinateRange(
        _program.MeshCoordinate(0, 0), _program.MeshCoordinate(rows - 1, cols - 1)
    )
    return _program.MeshProgramDescriptor([(everywhere, program)])


def _single_device_program(device: Device, mesh_program: _program.MeshProgramDescriptor):
    origin = _program.MeshCoordinateRange(_program.MeshCoordinate(0, 0), _program.MeshCoordinate(0, 0))
    entries = mesh_program.mesh_programs
    if len(entries) != 1 or entries[0][0] != origin:
        raise ValueError(
            f"a MeshProgramDescriptor on the single device {device!r} must hold one program for the "
            f"1x1 mesh (0, 0), got {len(entries)} entries"
        )
    return entries[0][1]


def generic_op(io_tensors: Sequence[Tensor], program_descriptor) -> Tensor:
    global _last_run_counters
    device = _common_device(io_tensors)
    _last_run_counters = None  # a failed run must not leave the previous run's figures behind
    if isinstance(program_descriptor, _program.MeshProgramDescriptor):
        if isinstance(device, MeshDevice):
            counters = _emu.run_mesh_program(device._mesh, program_descriptor)
        else:  # a single device is a 1x1 mesh
            counters = _emu.run_program(device._chip, _single_device_program(device, program_descriptor))
    elif isinstance(program_descriptor, _program.ProgramDescriptor):
        if isinstance(device, MeshDevice):
            counters = _emu.run_mesh_program(device._mesh, _whole_mesh(device, program_descriptor))
        else:
            assert isinstance(device, Device)
            counters = _emu.run_program(device._chip, program_descriptor)
    else:
        raise TypeError(
            f"program_descriptor must be a ProgramDescriptor or MeshProgramDescriptor, "
            f"got {type(program_descriptor).__name__}"
        )
    _last_run_counters = counters
    note_run(counters)
    return io_tensors[-1]


def last_run_counters() -> Optional[dict]:
    """Counters of the last generic_op run (None before the first)."""
    return _last_run_counters
