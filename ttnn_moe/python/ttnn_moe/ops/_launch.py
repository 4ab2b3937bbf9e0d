"""The one launch path every op wrapper uses.

An op is described to Python by two functions of its C++ program factory in
`ttnn_moe._C.ops` (the convention every op follows):

- `<op>_output_specs(inputs: list[TensorArg], **attrs) -> list[TensorArg]`:
  validates the inputs (ValueError/TypeError naming the offending value) and
  returns the outputs' shape, dtype, layout and page geometry (address 0);
- `<op>_program(io_tensors: list[TensorArg], kernels_root: str, grid: (x, y), **attrs)
  -> ProgramDescriptor`: the program from the op's program cache (a hit only
  rewrites buffer addresses), io_tensors = inputs then outputs.

`launch` validates that the inputs are device tensors of one backend on one
device, allocates the outputs there, fetches the program and runs it. Backends:
the emulator (`ttnn_moe.emu` tensors, always available) and, after
`ttnn_moe.attach(ttnn)`, Tenstorrent hardware (`ttnn.Tensor`, see
`ttnn_moe.hardware`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ttnn_moe import _C, emu
from ttnn_moe.paths import kernels_dir

# The dtypes op outputs can have, by their data format.
_EMU_DTYPE_OF_FORMAT = {
    _C.program.DataFormat.Float16_b: emu.bfloat16,
    _C.program.DataFormat.Bfp8_b: emu.bfloat8_b,
    _C.program.DataFormat.Float32: emu.float32,
    _C.program.DataFormat.UInt32: emu.uint32,
    _C.program.DataFormat.UInt16: emu.uint16,
    _C.program.DataFormat.Int32: emu.int32,
}


class Backend(Protocol):
    """Where an op's tensors live and how its program is run."""

    name: str

    def owns(self, tensor: Any) -> bool: ...

    def device_of(self, tensor: Any) -> Any: ...

    def grid_of(self, device: Any) -> tuple[int, int]: ...

    def to_arg(self, tensor: Any) -> _C.program.TensorArg: ...

    def allocate(self, spec: _C.program.TensorArg, device: Any, memory_config: Any) -> Any: ...

    def run(self, io_tensors: list[Any], program: _C.program.ProgramDescriptor) -> None: ...


class EmulatorBackend:
    """`ttnn_moe.emu` tensors; programs run in the Tensix emulator.

    On a mesh tensor a single-device op runs on every device of the mesh, as ttnn runs an
    op on a mesh tensor: mesh tensors have one buffer address on all devices and the
    kernels read their counts from device memory, so one program serves every device.
    """

    name = "emulator"

    def owns(self, tensor: Any) -> bool:
        return isinstance(tensor, emu.Tensor)

    def device_of(self, tensor: Any) -> Any:
        return tensor.device()

    def grid_of(self, device: Any) -> tuple[int, int]:
        grid = device.compute_with_storage_grid_size()
        return int(grid.x), int(grid.y)

    def to_arg(self, tensor: Any) -> _C.program.TensorArg:
        return tensor.to_arg()

    def allocate(self, spec: _C.program.TensorArg, device: Any, memory_config: Any) -> Any:
        layout = emu.TILE_LAYOUT if spec.layout == _C.program.Layout.TILE else emu.ROW_MAJOR_LAYOUT
        return emu.allocate_tensor_on_device(
            list(spec.shape), _EMU_DTYPE_OF_FORMAT[spec.dtype], layout, device, memory_config=memory_config
        )

    def run(self, io_tensors: list[Any], program: _C.program.ProgramDescriptor) -> None:
        emu.generic_op(io_tensors, program)


_BACKENDS: list[Backend] = [EmulatorBackend()]


def register_backend(backend: Backend) -> None:
    """Adds a backend, replacing one of the same name (attaching another ttnn module rebinds it)."""
    _BACKENDS[:] = [b for b in _BACKENDS if b.name != backend.name] + [backend]


def backend_of(op: str, name: str, tensor: Any) -> Backend:
    for backend in _BACKENDS:
        if backend.owns(tensor):
            return backend
    known = ", ".join(b.name for b in _BACKENDS)
    raise TypeError(f"{op}: {name} is a {type(tensor).__module__}.{type(tensor).__qualname__}, "
                    f"expected a device tensor of one of: {known}")


def common_backend_and_device(op: str, inputs: Mapping[str, Any]) -> tuple[Backend, Any]:
    """The backend and device shared by every input; TypeError/ValueError naming the odd one out."""
    first_name = next(iter(inputs))
    backend = backend_of(op, first_name, inputs[first_name])
    device = backend.device_of(inputs[first_name])
    for name, tensor in inputs.items():
        other = backend_of(op, name, tensor)
        if other is not backend:
            raise TypeError(f"{op}: {name} is a {other.name} tensor but {first_name} is a {backend.name} tensor")
        if backend.device_of(tensor) is not device:
            raise ValueError(f"{op}: {name} is on device {backend.device_of(tensor)!r}, "
                             f"{first_name} on {device!r}: all inputs must be on one device")
    return backend, device


def launch(
    op: str,
    inputs: Mapping[str, Any],
    *,
    attrs: Mapping[str, Any] | None = None,
    memory_config: Any = None,
) -> list[Any]:
    """Runs `op` on `inputs` (name -> device tensor, in the factory's input order); returns its outputs."""
    attrs = dict(attrs or {})
    backend, device = common_backend_and_device(op, inputs)
    input_args = [backend.to_arg(t) for t in inputs.values()]
    specs = getattr(_C.ops, f"{op}_output_specs")(input_args, **attrs)
    outputs = [backend.allocate(spec, device, memory_config) for spec in specs]
    io_tensors = list(inputs.values()) + outputs
    program = getattr(_C.ops, f"{op}_program")(
        input_args + [backend.to_arg(t) for t in outputs], str(kernels_dir()), backend.grid_of(device), **attrs
    )
    backend.run(io_tensors, program)
    return outputs
