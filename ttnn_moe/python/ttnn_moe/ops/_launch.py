"""The one launch path of every op: a single device is a 1x1 mesh.

Each op is a device operation in `ttnn_moe._C.ops.<op>` with the same face:
`Attributes(...)`, `output_specs(attributes, inputs, context)` (validation, ValueError
naming the offending value) and `program(attributes, io_tensors, context)`, the whole
`MeshProgramDescriptor` from the op's program cache (built once per cache key, fabric
connections included; a hit only rewrites buffer addresses).

`launch` finds the target that owns the inputs (the emulator, or after
`ttnn_moe.attach(ttnn)` Tenstorrent hardware, see `ttnn_moe.hardware`), describes
their mesh in a `MeshContext`, allocates the outputs (or checks the ones the caller
passed), fetches the program and runs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ttnn_moe import _C
from ttnn_moe.paths import kernels_dir
from ttnn_moe.profiler.session import active_profile

Topology = _C.ops.FabricTopology


class Target(Protocol):
    """Where tensors live (a mesh, or a single device as a 1x1 mesh) and how programs run there."""

    name: str

    def owns(self, tensor: Any) -> bool: ...

    def mesh_of(self, tensor: Any) -> Any: ...

    def mesh_shape(self, mesh: Any) -> tuple[int, int]: ...

    def device_limits(self, mesh: Any) -> _C.program.DeviceLimits: ...  # read from the device

    def fabric_topology(self, mesh: Any) -> Topology | None: ...  # None: the target cannot tell

    def max_packet_payload(self, mesh: Any) -> int: ...

    def fabric_num_links(self, mesh: Any) -> int: ...  # links per direction between line neighbours

    def fabric_node_ids(self, mesh: Any) -> list[tuple[int, int]]: ...

    def setup_fabric_connection(
        self, mesh: Any, src: Any, dst: Any, link: int, program: Any, core: Any
    ) -> list[int]: ...

    def to_arg(self, tensor: Any) -> _C.program.TensorArg: ...

    def device_words(self, tensor: Any) -> list[list[int]]: ...  # a small uint32 tensor's words, per device

    def allocate(self, spec: _C.program.TensorArg, mesh: Any, memory_config: Any) -> Any: ...

    def run(self, io_tensors: list[Any], program: _C.program.MeshProgramDescriptor) -> dict | None:
        """Runs the program; returns what the target measured of the run (the emulator's counters and
        modeled device time, which a profile records), or None where it measures nothing."""


_TARGETS: list[Target] = []


def register_target(target: Target) -> None:
    """Adds a target, replacing one of the same name (attaching another ttnn module rebinds it).
    The emulator registers itself when `ttnn_moe.emu` is imported (it needs torch, the ops do not);
    `ttnn_moe.attach(ttnn)` registers the hardware."""
    _TARGETS[:] = [t for t in _TARGETS if t.name != target.name] + [target]


def target_of(op: str, name: str, tensor: Any) -> Target:
    for target in _TARGETS:
        if target.owns(tensor):
            return target
    known = ", ".join(t.name for t in _TARGETS)
    raise TypeError(
        f"{op}: {name} is a {type(tensor).__module__}.{type(tensor).__qualname__}, "
        f"expected a device tensor of one of: {known}"
    )


def common_target_and_mesh(op: str, inputs: Mapping[str, Any]) -> tuple[Target, Any]:
    """The target and mesh shared by every input; TypeError/ValueError naming the odd one out."""
    first_name = next(iter(inputs))
    target = target_of(op, first_name, inputs[first_name])
    mesh = target.mesh_of(inputs[first_name])
    for name, tensor in inputs.items():
        other = target_of(op, name, tensor)
        if other is not target:
            raise TypeError(f"{op}: {name} is a {other.name} tensor but {first_name} is a {target.name} tensor")
        if target.mesh_of(tensor) is not mesh:
            raise ValueError(
                f"{op}: {name} is on {target.mesh_of(tensor)!r}, {first_name} on {mesh!r}: "
                "all inputs must be on one device or mesh"
            )
    return target, mesh


def topology_of(op: str, requested: Any, fabric: Topology | None) -> Topology:
    """The topology to route for: the requested one (ttnn.Topology member or name), which must be
    the fabric's when the target knows it; else the fabric's; else Linear."""
    if requested is None:
        return Topology.Linear if fabric is None else fabric
    name = requested if isinstance(requested, str) else getattr(requested, "name", None)
    name = name.split(".")[-1] if isinstance(name, str) else None
    if name not in Topology.__members__:
        raise ValueError(f"{op}: topology must be one of {sorted(Topology.__members__)}, got {requested!r}")
    topology = Topology.__members__[name]
    if fabric is not None and topology != fabric:
        raise ValueError(f"{op}: topology {requested!r} does not match the mesh's fabric topology {fabric.name}")
    return topology


def _context(op: str, operation: Any, target: Target, mesh: Any, topology: Any) -> _C.ops.MeshContext:
    rows, cols = target.mesh_shape(mesh)
    context = {
        "kernels_root": str(kernels_dir()),
        "device": target.device_limits(mesh),
        "rows": rows,
        "cols": cols,
    }
    if operation.uses_fabric:
        context.update(
            topology=topology_of(op, topology, target.fabric_topology(mesh)),
            max_packet_payload=target.max_packet_payload(mesh),
            fabric_node_ids=target.fabric_node_ids(mesh),
            connect_fabric=lambda src, dst, link, program, core: target.setup_fabric_connection(
                mesh, src, dst, link, program, core
            ),
        )
    elif topology is not None:
        raise ValueError(f"{op}: topology applies to fabric ops only, got {topology!r}")
    return _C.ops.MeshContext(**context)


def _outputs(
    op: str,
    target: Target,
    mesh: Any,
    specs: Sequence[Any],
    given: Sequence[Any] | None,
    memory_config: Any,
    output_tensor: Any,
) -> list[Any]:
    """The caller's preallocated outputs where given (checked against their specs), new ones elsewhere.
    output_tensor: the first output, for ops whose argument names only that one."""
    if output_tensor is not None:
        given = [output_tensor]
    if given is not None and not isinstance(given, (list, tuple)):
        raise TypeError(f"{op}: output_tensors must be a list of tensors (or None entries), got {given!r}")
    given = list(given or [])
    if len(given) > len(specs):
        raise ValueError(f"{op}: output_tensors has {len(given)} entries, the op has {len(specs)} outputs")
    outputs = []
    for index, spec in enumerate(specs):
        tensor = given[index] if index < len(given) else None
        if tensor is None:
            outputs.append(target.allocate(spec, mesh, memory_config))
            continue
        name = "output_tensor" if output_tensor is not None else f"output_tensors[{index}]"
        if not target.owns(tensor) or target.mesh_of(tensor) is not mesh:
            raise ValueError(f"{op}: {name} must be a tensor on the inputs' device ({target.name})")
        arg = target.to_arg(tensor)
        if (list(arg.shape), arg.dtype, arg.layout) != (list(spec.shape), spec.dtype, spec.layout):
            raise ValueError(f"{op}: {name} is {_spec_str(arg)}, the op writes {_spec_str(spec)}")
        outputs.append(tensor)
    return outputs


_DTYPE_NAMES = {
    "Float16_b": "bfloat16",
    "Bfp8_b": "bfloat8_b",
    "Bfp4_b": "bfloat4_b",
    "Float32": "float32",
    "UInt32": "uint32",
    "UInt16": "uint16",
    "Int32": "int32",
}


def _spec_str(arg: Any) -> str:
    """A tensor spec in ttnn's words: [4, 40, 32] bfloat16 TILE."""
    return f"{list(arg.shape)} {_DTYPE_NAMES.get(arg.dtype.name, arg.dtype.name)} {arg.layout.name}"


def launch(
    op: str,
    inputs: Mapping[str, Any],
    attributes: Any,
    *,
    memory_config: Any = None,
    output_tensors: Sequence[Any] | None = None,
    output_tensor: Any = None,
    topology: Any = None,
) -> list[Any]:
    """Runs `op` on `inputs` (name -> device tensor, in the op's input order); returns all its outputs.

    output_tensors: preallocated outputs in the op's output order (None entries are allocated).
    output_tensor: instead of output_tensors, a preallocated first output (the others allocated).
    topology: fabric ops only; ttnn.Topology (Linear, Ring, Mesh) or None for the mesh fabric's own.
    """
    target, mesh = common_target_and_mesh(op, inputs)
    operation = getattr(_C.ops, op)
    context = _context(op, operation, target, mesh, topology)
    input_args = [target.to_arg(t) for t in inputs.values()]
    specs = operation.output_specs(attributes, input_args, context)
    outputs = _outputs(op, target, mesh, specs, output_tensors, memory_config, output_tensor)
    output_args = [target.to_arg(t) for t in outputs]
    session = active_profile()
    misses = operation.program_cache_info()["misses"] if session else 0
    program = operation.program(attributes, input_args + output_args, context)
    measured = target.run([*inputs.values(), *outputs], program)
    if session and measured is not None:
        cache_hit = operation.program_cache_info()["misses"] == misses
        session.record(op, input_args, output_args, program, cache_hit, measured)
    return outputs


def output_specs(op: str, inputs: Mapping[str, Any], attributes: Any, *, topology: Any = None) -> list[Any]:
    """Validates `inputs` for `op` as `launch` does (ValueError naming the offending value) and
    returns the output specs, without running anything."""
    target, mesh = common_target_and_mesh(op, inputs)
    operation = getattr(_C.ops, op)
    context = _context(op, operation, target, mesh, topology)
    return operation.output_specs(attributes, [target.to_arg(t) for t in inputs.values()], context)
