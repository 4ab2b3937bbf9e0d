"""The launch path of the mesh ops (all_to_all_dispatch_dense, all_to_all_combine_dense).

Like `_launch.launch`, but for tensors that live on a whole mesh (one buffer
address on every device, as in ttnn) and per-device programs. A mesh op's C++
factory returns, per device, its program plus the fabric neighbors its kernel
connects to; this module appends the fabric connection block to that kernel's
runtime args with the target's `setup_fabric_connection`, in ttnn's convention
`[has_forward][forward args per link][has_backward][backward args per link]`, builds the
MeshProgramDescriptor and runs it. The same C++ factory serves the emulator and
hardware: only the `MeshTarget` differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from ttnn_moe import _C, emu
from ttnn_moe.emu import fabric as emu_fabric
from ttnn_moe.ops._launch import _EMU_DTYPE_OF_FORMAT
from ttnn_moe.paths import kernels_dir

# ttnn.Topology member names the mesh ops accept, as the factories number them.
TOPOLOGIES = {"Linear": 0, "Ring": 1, "Mesh": 2}


def topology_code(topology: Any) -> int:
    """ttnn.Topology member (or its name) -> factory code; ValueError naming the value."""
    name = topology if isinstance(topology, str) else getattr(topology, "name", None)
    if isinstance(name, str):
        name = name.split(".")[-1]
    if name not in TOPOLOGIES:
        raise ValueError(f"topology must be one of {sorted(TOPOLOGIES)}, got {topology!r}")
    return TOPOLOGIES[name]


class MeshTarget(Protocol):
    """Where mesh tensors live and how a fabric-using mesh program runs there."""

    name: str

    def owns(self, tensor: Any) -> bool: ...

    def mesh_of(self, tensor: Any) -> Any: ...

    def mesh_shape(self, mesh: Any) -> tuple[int, int]: ...

    def grid_of(self, mesh: Any) -> tuple[int, int]: ...

    def fabric_node_ids(self, mesh: Any) -> list[tuple[int, int]]: ...

    def fabric_topology(self, mesh: Any) -> int | None: ...  # None: the target cannot tell

    def max_packet_payload(self, mesh: Any) -> int: ...

    def setup_fabric_connection(self, mesh: Any, src: Any, dst: Any, link: int, program: Any, core: Any
                                ) -> list[int]: ...

    def to_arg(self, tensor: Any) -> _C.program.TensorArg: ...

    def allocate(self, spec: _C.program.TensorArg, mesh: Any, memory_config: Any) -> Any: ...

    def run(self, io_tensors: list[Any], program: _C.program.MeshProgramDescriptor) -> None: ...


class EmulatorMeshTarget:
    """`ttnn_moe.emu` tensors on an emulated mesh with tt-fabric."""

    name = "emulator"

    def owns(self, tensor: Any) -> bool:
        return isinstance(tensor, emu.Tensor)

    def mesh_of(self, tensor: Any) -> Any:
        device = tensor.device()
        if not isinstance(device, emu.MeshDevice):
            raise ValueError(f"a mesh op needs tensors on a mesh device, got one on {device!r}")
        return device

    def mesh_shape(self, mesh: Any) -> tuple[int, int]:
        return int(mesh.shape[0]), int(mesh.shape[1])

    def grid_of(self, mesh: Any) -> tuple[int, int]:
        grid = mesh.compute_with_storage_grid_size()
        return int(grid.x), int(grid.y)

    # The fabric lives on the emulated mesh (`_C.emu.Mesh`) that the MeshDevice wraps.
    def fabric_node_ids(self, mesh: Any) -> list[tuple[int, int]]:
        rows, cols = self.mesh_shape(mesh)
        nodes = [mesh._mesh.get_fabric_node_id(_C.program.MeshCoordinate(r, c)) for r in range(rows)
                 for c in range(cols)]
        return [(int(n.mesh_id), int(n.chip_id)) for n in nodes]

    def fabric_topology(self, mesh: Any) -> int:
        return topology_code(mesh._mesh.fabric_topology)

    def max_packet_payload(self, mesh: Any) -> int:
        return int(emu_fabric.fabric_max_payload_size)

    def setup_fabric_connection(self, mesh: Any, src: Any, dst: Any, link: int, program: Any, core: Any
                                ) -> list[int]:
        return emu_fabric.setup_fabric_connection(mesh._mesh.get_fabric_node_id(src),
                                                  mesh._mesh.get_fabric_node_id(dst), link, program, core)

    def to_arg(self, tensor: Any) -> _C.program.TensorArg:
        return tensor.to_arg()

    def allocate(self, spec: _C.program.TensorArg, mesh: Any, memory_config: Any) -> Any:
        layout = emu.TILE_LAYOUT if spec.layout == _C.program.Layout.TILE else emu.ROW_MAJOR_LAYOUT
        return emu.allocate_tensor_on_device(
            list(spec.shape), _EMU_DTYPE_OF_FORMAT[spec.dtype], layout, mesh, memory_config=memory_config
        )

    def run(self, io_tensors: list[Any], program: _C.program.MeshProgramDescriptor) -> None:
        emu.generic_op(io_tensors, program)


_TARGETS: list[MeshTarget] = [EmulatorMeshTarget()]


def register_target(target: MeshTarget) -> None:
    """Adds a mesh target, replacing one of the same name (attaching another ttnn module rebinds it,
    as `_launch.register_backend` does)."""
    _TARGETS[:] = [t for t in _TARGETS if t.name != target.name] + [target]


def common_target_and_mesh(op: str, inputs: Mapping[str, Any]) -> tuple[MeshTarget, Any]:
    """The target and mesh shared by every input; TypeError/ValueError naming the odd one out."""
    first_name = next(iter(inputs))
    target = _target_of(op, first_name, inputs[first_name])
    mesh = target.mesh_of(inputs[first_name])
    for name, tensor in inputs.items():
        if _target_of(op, name, tensor) is not target:
            raise TypeError(f"{op}: {name} and {first_name} are tensors of different targets")
        if target.mesh_of(tensor) is not mesh:
            raise ValueError(f"{op}: {name} is on {target.mesh_of(tensor)!r}, {first_name} on {mesh!r}: "
                             "all inputs must be on one mesh")
    return target, mesh


def _target_of(op: str, name: str, tensor: Any) -> MeshTarget:
    for target in _TARGETS:
        if target.owns(tensor):
            return target
    raise TypeError(f"{op}: {name} is a {type(tensor).__module__}.{type(tensor).__qualname__}, expected a mesh "
                    f"tensor of one of: {', '.join(t.name for t in _TARGETS)}")


def _with_fabric_connections(target: MeshTarget, mesh: Any, entry: dict) -> Any:
    """The entry's program with the connection block appended to its fabric kernel's runtime args."""
    program = entry["program"]
    core = entry["core"]
    block: list[int] = []
    for side in ("forward", "backward"):
        neighbor = entry[side]
        block.append(0 if neighbor is None else 1)
        for link in range(entry["num_links"] if neighbor is not None else 0):
            # Adds the connection's semaphores to `program` and returns its runtime args.
            block.extend(target.setup_fabric_connection(mesh, entry["coord"], neighbor, link, program, core))
    kernels = program.kernels
    kernel = kernels[entry["kernel_index"]]
    kernel.runtime_args = [(c, list(args) + block if (c.x, c.y) == (core.x, core.y) else args)
                           for c, args in kernel.runtime_args]
    kernels[entry["kernel_index"]] = kernel
    program.kernels = kernels
    return program


def _resolve_topology(op: str, requested: Any, fabric: int | None) -> int:
    """The factory code of the topology to route for: the requested one (which must be the
    fabric's when the target knows it), else the fabric's, else Linear."""
    if requested is None:
        return TOPOLOGIES["Linear"] if fabric is None else fabric
    code = topology_code(requested)
    if fabric is not None and code != fabric:
        names = {v: k for k, v in TOPOLOGIES.items()}
        raise ValueError(f"{op}: topology {requested!r} does not match the mesh's fabric topology {names[fabric]}")
    return code


def launch_mesh(
    op: str,
    inputs: Mapping[str, Any],
    *,
    attrs: Mapping[str, Any],
    topology: Any = None,
    memory_config: Any = None,
) -> list[Any]:
    """Runs mesh op `op` on `inputs` (name -> mesh tensor, in the factory's input order).

    attrs: the op's attributes except mesh_shape, topology, max_packet_payload and
    fabric_node_ids, which come from the mesh. topology None = the mesh fabric's own
    (Linear when the target cannot tell).
    Returns the outputs of `<op>_output_specs`, allocated on the mesh.
    """
    target, mesh = common_target_and_mesh(op, inputs)
    mesh_attrs = dict(attrs)
    mesh_attrs["mesh_shape"] = target.mesh_shape(mesh)
    mesh_attrs["topology"] = _resolve_topology(op, topology, target.fabric_topology(mesh))
    mesh_attrs["max_packet_payload"] = target.max_packet_payload(mesh)
    input_args = [target.to_arg(t) for t in inputs.values()]
    specs = getattr(_C.ops, f"{op}_output_specs")(input_args, **mesh_attrs)
    outputs = [target.allocate(spec, mesh, memory_config) for spec in specs]
    io_args = input_args + [target.to_arg(t) for t in outputs]
    entries = getattr(_C.ops, f"{op}_program")(
        io_args, str(kernels_dir()), target.grid_of(mesh), fabric_node_ids=target.fabric_node_ids(mesh), **mesh_attrs
    )
    mesh_program = _C.program.MeshProgramDescriptor(
        [(_C.program.MeshCoordinateRange(e["coord"], e["coord"]), _with_fabric_connections(target, mesh, e))
         for e in entries]
    )
    target.run(list(inputs.values()) + outputs, mesh_program)
    return outputs
