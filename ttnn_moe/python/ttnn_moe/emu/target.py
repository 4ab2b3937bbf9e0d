"""The emulator as a launch target of the ops (`ttnn_moe.ops._launch.Target`).

`ttnn_moe.emu` tensors live on an emulated device or mesh; a single device is a 1x1
mesh. Fabric ops need a `MeshDevice`: its emulated tt-fabric gives the node ids,
the topology and the connections.
"""

from __future__ import annotations

from typing import Any

from ttnn_moe import _C, emu
from ttnn_moe.emu import fabric as emu_fabric
from ttnn_moe.emu.generic_op import last_run_counters
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.types import check_memory_config

# Output dtypes by data format.
_DTYPE_OF_FORMAT = {
    _C.program.DataFormat.Float16_b: emu.bfloat16,
    _C.program.DataFormat.Bfp8_b: emu.bfloat8_b,
    _C.program.DataFormat.Bfp4_b: emu.bfloat4_b,
    _C.program.DataFormat.Float32: emu.float32,
    _C.program.DataFormat.UInt32: emu.uint32,
    _C.program.DataFormat.UInt16: emu.uint16,
    _C.program.DataFormat.Int32: emu.int32,
}


class EmulatorTarget:
    name = "emulator"

    def owns(self, tensor: Any) -> bool:
        return isinstance(tensor, emu.Tensor)

    def mesh_of(self, tensor: Any) -> Any:
        return tensor.device()

    def mesh_shape(self, mesh: Any) -> tuple[int, int]:
        if isinstance(mesh, emu.MeshDevice):
            return int(mesh.shape[0]), int(mesh.shape[1])
        return 1, 1

    def device_limits(self, mesh: Any) -> _C.program.DeviceLimits:
        return mesh.device_limits()

    def _fabric_mesh(self, mesh: Any) -> Any:
        if not isinstance(mesh, emu.MeshDevice):
            raise ValueError(f"a fabric op needs tensors on a mesh device, got one on {mesh!r}")
        return mesh._mesh

    def fabric_topology(self, mesh: Any) -> _C.ops.FabricTopology:
        name = str(self._fabric_mesh(mesh).fabric_topology).split(".")[-1]
        return _C.ops.FabricTopology.__members__[name]

    def max_packet_payload(self, mesh: Any) -> int:
        return int(emu_fabric.fabric_max_payload_size)

    def fabric_num_links(self, mesh: Any) -> int:
        return int(self._fabric_mesh(mesh).fabric_num_links)

    def fabric_node_ids(self, mesh: Any) -> list[tuple[int, int]]:
        rows, cols = self.mesh_shape(mesh)
        fabric = self._fabric_mesh(mesh)
        nodes = [fabric.get_fabric_node_id(_C.program.MeshCoordinate(r, c)) for r in range(rows) for c in range(cols)]
        return [(int(n.mesh_id), int(n.chip_id)) for n in nodes]

    def setup_fabric_connection(self, mesh: Any, src: Any, dst: Any, link: int, program: Any, core: Any) -> list[int]:
        fabric = self._fabric_mesh(mesh)
        return emu_fabric.setup_fabric_connection(
            fabric.get_fabric_node_id(src), fabric.get_fabric_node_id(dst), link, program, core
        )

    def to_arg(self, tensor: Any) -> _C.program.TensorArg:
        return tensor.to_arg()

    def device_words(self, tensor: Any) -> list[list[int]]:
        return [[int(v) & 0xFFFFFFFF for v in shard.reshape(-1).tolist()] for shard in device_shards(tensor)]

    def allocate(self, spec: _C.program.TensorArg, mesh: Any, memory_config: Any) -> Any:
        # The suite's kernels address their outputs as interleaved DRAM.
        check_memory_config(memory_config)
        layout = emu.TILE_LAYOUT if spec.layout == _C.program.Layout.TILE else emu.ROW_MAJOR_LAYOUT
        return emu.allocate_tensor_on_device(
            list(spec.shape), _DTYPE_OF_FORMAT[spec.dtype], layout, mesh, memory_config=memory_config
        )

    def run(self, io_tensors: list[Any], program: _C.program.MeshProgramDescriptor) -> dict:
        emu.generic_op(io_tensors, program)
        return last_run_counters()
