"""Hardware adapter: our program descriptions as `ttnn.ProgramDescriptor` for `ttnn.generic_op`.

Never run on silicon: there is no Tenstorrent hardware in this project's CI. What is
tested is the conversion against a test double of ttnn's descriptor classes
(tests/test_hardware_adapter.py) and, for the single-device ops, the real ttnn 0.81.1
runtime on mock devices up to the kernel compile (tests/test_real_ttnn.py).

The real `ttnn` module is passed in (never imported here), so this file loads
on machines without ttnn. `HardwareTarget(ttnn)` plugs ttnn tensors into the
ops' launch path (`ttnn_moe.ops._launch`); `ttnn_moe.attach(ttnn)` registers it
and sets `ttnn.moe_bmm`, `ttnn.prepare_moe_routing_tensors`, ... .
"""

from __future__ import annotations

from typing import Any

from ttnn_moe._C import ops as _ops
from ttnn_moe._C import program as pd

# Our DataFormat -> name of the ttnn DataType that CBFormatDescriptor converts back to it.
_TTNN_DTYPE_OF_FORMAT = {
    pd.DataFormat.Float16_b: "bfloat16",
    pd.DataFormat.Float32: "float32",
    pd.DataFormat.Bfp8_b: "bfloat8_b",
    pd.DataFormat.Bfp4_b: "bfloat4_b",
    pd.DataFormat.UInt32: "uint32",
    pd.DataFormat.Int32: "int32",
    pd.DataFormat.UInt16: "uint16",
    pd.DataFormat.UInt8: "uint8",
}
_FORMAT_OF_TTNN_DTYPE_NAME = {name: fmt for fmt, name in _TTNN_DTYPE_OF_FORMAT.items()}

# Limits the 0.81.1 runtime has no Python query for (tt-metal's circular_buffer_constants.h:
# NUM_CIRCULAR_BUFFERS per arch; the host's NUM_SEMAPHORES), by the device's reported arch.
_MAX_CBS_OF_ARCH = {"WORMHOLE_B0": 32, "BLACKHOLE": 64}
_SEMAPHORES_PER_CORE = 16
# ttnn.FabricConfig member -> the routes a fabric op takes on it; the 2D configs are left to the op's argument.
_TOPOLOGY_OF_FABRIC_CONFIG = {"FABRIC_1D": _ops.FabricTopology.Linear, "FABRIC_1D_RING": _ops.FabricTopology.Ring}


def ttnn_dtype(ttnn: Any, data_format: pd.DataFormat) -> Any:
    if data_format not in _TTNN_DTYPE_OF_FORMAT:
        raise ValueError(f"data format {data_format} has no ttnn DataType")
    return getattr(ttnn, _TTNN_DTYPE_OF_FORMAT[data_format])


def _enum_member(ttnn_enum: Any, ours: Any) -> Any:
    """The member of a ttnn enum with the same name as ours (enums are named alike)."""
    return getattr(ttnn_enum, ours.name)


def core_range_set(ttnn: Any, crs: pd.CoreRangeSet) -> Any:
    return ttnn.CoreRangeSet(
        [ttnn.CoreRange(ttnn.CoreCoord(r.start.x, r.start.y), ttnn.CoreCoord(r.end.x, r.end.y)) for r in crs.ranges]
    )


def _config(ttnn: Any, config: Any) -> Any:
    if isinstance(config, pd.ComputeConfigDescriptor):
        converted = ttnn.ComputeConfigDescriptor(
            math_fidelity=_enum_member(ttnn.MathFidelity, config.math_fidelity),
            math_approx_mode=config.math_approx_mode,
            fp32_dest_acc_en=config.fp32_dest_acc_en,
            dst_full_sync_en=config.dst_full_sync_en,
            bfp8_pack_precise=config.bfp8_pack_precise,
        )
        # Not a constructor argument in 0.81.1: set as an attribute.
        converted.unpack_to_dest_mode = [_enum_member(ttnn.UnpackToDestMode, m) for m in config.unpack_to_dest_mode]
        return converted
    if isinstance(config, pd.ReaderConfigDescriptor):
        return ttnn.ReaderConfigDescriptor()
    if isinstance(config, pd.WriterConfigDescriptor):
        return ttnn.WriterConfigDescriptor()
    if isinstance(config, pd.DataMovementConfigDescriptor):
        return ttnn.DataMovementConfigDescriptor(
            processor=_enum_member(ttnn.DataMovementProcessor, config.processor),
            noc=_enum_member(ttnn.NOC, config.noc),
        )
    raise TypeError(f"unknown kernel config {type(config).__name__}")


def kernel_descriptor(ttnn: Any, kernel: pd.KernelDescriptor) -> Any:
    if kernel.bindings is not None:
        raise ValueError(
            f"kernel {kernel.kernel_source} declares Metal 2.0 bindings, which ttnn.KernelDescriptor cannot carry"
        )
    return ttnn.KernelDescriptor(
        kernel_source=kernel.kernel_source,
        source_type=_enum_member(ttnn.KernelDescriptor.SourceType, kernel.source_type),
        core_ranges=core_range_set(ttnn, kernel.core_ranges),
        compile_time_args=list(kernel.compile_time_args),
        named_compile_time_args=[(name, value) for name, value in kernel.named_compile_time_args],
        defines=[(name, value) for name, value in kernel.defines],
        runtime_args=[(ttnn.CoreCoord(core.x, core.y), list(args)) for core, args in kernel.runtime_args],
        common_runtime_args=list(kernel.common_runtime_args),
        config=_config(ttnn, kernel.config),
    )


def cb_descriptor(ttnn: Any, cb: pd.CBDescriptor) -> Any:
    if cb.shard_cores:
        # The emulator's stand-in for a CB over an L1-sharded tensor: host bytes loaded at the CB's base. On a
        # device the CB aliases the tensor's buffer instead, which ttnn's descriptor takes as a buffer, not bytes.
        index = cb.format_descriptors[0].buffer_index if cb.format_descriptors else "?"
        raise ValueError(
            f"circular buffer {index} holds L1 shard contents for {len(cb.shard_cores)} core(s), an emulator-only "
            "stand-in ttnn.CBDescriptor cannot carry (on a device, point the CB at the sharded tensor's buffer)"
        )
    formats = []
    for f in cb.format_descriptors:
        tile = None if f.tile is None else ttnn.TileDescriptor(f.tile.height, f.tile.width, f.tile.transpose)
        formats.append(
            ttnn.CBFormatDescriptor(
                buffer_index=f.buffer_index,
                data_format=ttnn_dtype(ttnn, f.data_format),
                page_size=f.page_size,
                tile=tile,
            )
        )
    return ttnn.CBDescriptor(
        total_size=cb.total_size, core_ranges=core_range_set(ttnn, cb.core_ranges), format_descriptors=formats
    )


def semaphore_descriptor(ttnn: Any, sem: pd.SemaphoreDescriptor) -> Any:
    return ttnn.SemaphoreDescriptor(
        id=sem.id,
        core_type=_enum_member(ttnn.CoreType, sem.core_type),
        core_ranges=core_range_set(ttnn, sem.core_ranges),
        initial_value=sem.initial_value,
    )


def program_descriptor(ttnn: Any, program: pd.ProgramDescriptor) -> Any:
    """Our ProgramDescriptor -> ttnn.ProgramDescriptor (every field carried over)."""
    converted = ttnn.ProgramDescriptor(
        kernels=[kernel_descriptor(ttnn, k) for k in program.kernels],
        semaphores=[semaphore_descriptor(ttnn, s) for s in program.semaphores],
        cbs=[cb_descriptor(ttnn, cb) for cb in program.cbs],
    )
    if program.custom_program_hash is not None:
        converted.custom_program_hash = program.custom_program_hash
    return converted


def mesh_program_descriptor(ttnn: Any, mesh_program: pd.MeshProgramDescriptor) -> Any:
    """Our MeshProgramDescriptor -> ttnn.MeshProgramDescriptor (device range -> program)."""
    converted = ttnn.MeshProgramDescriptor()
    for device_range, program in mesh_program.mesh_programs:
        key = ttnn.MeshCoordinateRange(
            ttnn.MeshCoordinate(device_range.start.row, device_range.start.col),
            ttnn.MeshCoordinate(device_range.end.row, device_range.end.col),
        )
        converted[key] = program_descriptor(ttnn, program)
    return converted


def run_program(ttnn: Any, io_tensors: list[Any], program: pd.ProgramDescriptor | pd.MeshProgramDescriptor) -> Any:
    """`ttnn.generic_op(io_tensors, converted program)`; io_tensors = inputs then outputs."""
    if isinstance(program, pd.MeshProgramDescriptor):
        return ttnn.generic_op(io_tensors, mesh_program_descriptor(ttnn, program))
    return ttnn.generic_op(io_tensors, program_descriptor(ttnn, program))


def _dtype_name(dtype: Any) -> str:
    # ttnn.DataType members print as "DataType.BFLOAT16"; match on the lower-case member name.
    return str(getattr(dtype, "name", dtype)).split(".")[-1].lower()


def _flat(values: Any) -> list[int]:
    """Nested lists (a tensor's to_list) -> their ints in row-major order."""
    if isinstance(values, (list, tuple)):
        return [v for item in values for v in _flat(item)]
    return [int(values)]


class HardwareTarget:
    """ttnn tensors on a Tenstorrent device or mesh (a single device is a 1x1 mesh), for the
    ops' launch path (`ttnn_moe.ops._launch`). Interleaved tensors (DRAM or L1) only.

    NOT EXECUTABLE HERE, like the rest of this module. Fabric connections come from
    `ttnn.setup_fabric_connection(src_fabric_node_id, dst_fabric_node_id, link_idx,
    program_descriptor, worker_core)` on the device's converted program; the two
    semaphores it adds on the worker core (their ids are the last two of the runtime args
    it returns, in 0.81.1's convention) are mirrored into our program so the conversion
    in `run` carries them. `max_packet_payload` must not exceed the fabric's channel buffer
    size; 4096 bytes fits every 0.81.1 fabric configuration. A 1D fabric's topology comes from
    `ttnn.get_fabric_config()` (a ring under FABRIC_1D_RING); under the other configurations routes
    follow the op's `topology` argument (default Linear).
    """

    name = "ttnn"

    def __init__(self, ttnn: Any, max_packet_payload: int = 4096):
        self.ttnn = ttnn
        self._max_packet_payload = max_packet_payload

    def owns(self, tensor: Any) -> bool:
        return isinstance(tensor, self.ttnn.Tensor)

    def mesh_of(self, tensor: Any) -> Any:
        return tensor.device()

    def mesh_shape(self, mesh: Any) -> tuple[int, int]:
        shape = getattr(mesh, "shape", None)
        if shape is None:  # a single device
            return 1, 1
        rows, cols = tuple(shape)
        return int(rows), int(cols)

    def device_limits(self, mesh: Any) -> pd.DeviceLimits:
        grid = mesh.compute_with_storage_grid_size()
        arch = str(mesh.arch()).split(".")[-1]
        if arch not in _MAX_CBS_OF_ARCH:
            raise ValueError(f"ttnn_moe ops support {sorted(_MAX_CBS_OF_ARCH)} devices, got {arch}")
        return pd.DeviceLimits(
            grid=pd.CoreCoord(int(grid.x), int(grid.y)),
            l1_bytes_per_core=int(self.ttnn.get_max_worker_l1_unreserved_size()),
            max_cbs_per_core=_MAX_CBS_OF_ARCH[arch],
            max_semaphores_per_core=_SEMAPHORES_PER_CORE,
            dram_alignment=int(self.ttnn.get_dram_alignment()),
            worker_noc_cores=self._worker_noc_cores(mesh, int(grid.x), int(grid.y)),
        )

    def _worker_noc_cores(self, mesh: Any, columns: int, rows: int) -> list[pd.CoreCoord]:
        """The NOC coordinates kernels address the logical worker cores by, row-major."""
        cores = []
        for y in range(rows):
            for x in range(columns):
                noc = mesh.worker_core_from_logical_core(self.ttnn.CoreCoord(x, y))
                cores.append(pd.CoreCoord(int(noc.x), int(noc.y)))
        return cores

    def fabric_topology(self, mesh: Any) -> _ops.FabricTopology | None:
        """The 1D fabric's topology from the runtime's fabric config (FABRIC_1D: Linear, FABRIC_1D_RING:
        Ring); None for the others, where the op's `topology` argument decides (default Linear)."""
        config = str(self.ttnn.get_fabric_config()).split(".")[-1]
        return _TOPOLOGY_OF_FABRIC_CONFIG.get(config)

    def max_packet_payload(self, mesh: Any) -> int:
        return self._max_packet_payload

    def fabric_num_links(self, mesh: Any) -> int:
        return 1  # not read from the device: ops default to one link; pass num_links for more

    def _node(self, mesh: Any, coord: pd.MeshCoordinate) -> Any:
        return mesh.get_fabric_node_id(self.ttnn.MeshCoordinate(coord.row, coord.col))

    def fabric_node_ids(self, mesh: Any) -> list[tuple[int, int]]:
        rows, cols = self.mesh_shape(mesh)
        nodes = [self._node(mesh, pd.MeshCoordinate(r, c)) for r in range(rows) for c in range(cols)]
        return [(int(n.mesh_id), int(n.chip_id)) for n in nodes]

    def setup_fabric_connection(
        self, mesh: Any, src: Any, dst: Any, link: int, program: pd.ProgramDescriptor, core: pd.CoreCoord
    ) -> list[int]:
        converted = program_descriptor(self.ttnn, program)
        args = list(
            self.ttnn.setup_fabric_connection(
                self._node(mesh, src), self._node(mesh, dst), link, converted, self.ttnn.CoreCoord(core.x, core.y)
            )
        )
        on_core = pd.CoreRangeSet([pd.CoreRange(core, core)])
        program.semaphores = list(program.semaphores) + [
            pd.SemaphoreDescriptor(id=sem_id, core_type=pd.CoreType.WORKER, core_ranges=on_core, initial_value=0)
            for sem_id in args[-2:]
        ]
        return args

    def device_words(self, tensor: Any) -> list[list[int]]:
        # to_list needs no torch; uint32 words may come back as int32.
        return [[v & 0xFFFFFFFF for v in _flat(t.cpu().to_list())] for t in self.ttnn.get_device_tensors(tensor)]

    def to_arg(self, tensor: Any) -> pd.TensorArg:
        data_format = _FORMAT_OF_TTNN_DTYPE_NAME.get(_dtype_name(tensor.dtype))
        if data_format is None:
            raise ValueError(f"tensor dtype {tensor.dtype} is not supported by ttnn_moe ops")
        memory = tensor.memory_config()
        if memory.is_sharded():
            raise ValueError(f"ttnn_moe ops take interleaved tensors, got one with {memory.memory_layout}")
        is_dram = memory.buffer_type == self.ttnn.BufferType.DRAM
        shape = [int(d) for d in tensor.shape]
        tiled = tensor.layout == self.ttnn.TILE_LAYOUT
        padded = [int(d) for d in tensor.padded_shape] if tiled else shape
        rows = 1
        for d in padded[:-1]:
            rows *= d
        if tiled:
            page_size = pd.tile_size_bytes(data_format)
            num_pages = rows * padded[-1] // (32 * 32)
        else:
            page_size = padded[-1] * tensor.element_size()
            num_pages = rows
        return pd.TensorArg(
            shape=shape,
            dtype=data_format,
            layout=pd.Layout.TILE if tiled else pd.Layout.ROW_MAJOR,
            address=int(tensor.buffer_address()),
            page_size=page_size,
            num_pages=num_pages,
            is_dram=is_dram,
            alignment=int(self.ttnn.get_dram_alignment() if is_dram else self.ttnn.get_l1_alignment()),
        )

    def allocate(self, spec: pd.TensorArg, mesh: Any, memory_config: Any) -> Any:
        ttnn = self.ttnn
        return ttnn.allocate_tensor_on_device(
            ttnn.Shape(list(spec.shape)),
            ttnn_dtype(ttnn, spec.dtype),
            ttnn.TILE_LAYOUT if spec.layout == pd.Layout.TILE else ttnn.ROW_MAJOR_LAYOUT,
            mesh,
            memory_config or ttnn.DRAM_MEMORY_CONFIG,
        )

    def run(self, io_tensors: list[Any], program: pd.MeshProgramDescriptor) -> None:
        # The op's program was checked against device_limits when it was built (mesh_program).
        # Nothing is measured here: device time on silicon comes from tt-metal's own profiler.
        entries = program.mesh_programs
        if len(entries) == 1:  # one program for every device: ttnn.generic_op broadcasts a ProgramDescriptor
            run_program(self.ttnn, io_tensors, entries[0][1])
        else:
            run_program(self.ttnn, io_tensors, program)
        return None
