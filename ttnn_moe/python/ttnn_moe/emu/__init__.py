"""ttnn_moe.emu: the emulator in ttnn's shape.

    import ttnn_moe.emu as ttnn
    device = ttnn.open_device()
    x = ttnn.from_torch(torch_x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    y = ttnn.generic_op([x, out], program_descriptor)   # runs kernels on the emulator
    torch_y = ttnn.to_torch(y)

Device programs run through `generic_op` on the C++ emulator (`ttnn_moe._C.emu`).
`concat`, `get_device_tensors`, `copy_host_to_device_tensor`, `dump_tensor` and
`load_tensor` fill large tensors piece by piece from the host (host_tensors.py).
all_gather and reduce_scatter along a mesh line run as device programs on the
emulated fabric (line_ccl.py), to_layout between ROW_MAJOR and TILE as a device
program (layout_programs.py), and a reshape that keeps the pages is a view.
Everything else that computes (matmul, linear, add, mul, silu, sigmoid, topk,
typecast, and the collectives and conversions those paths do not take) is a HOST
BUILT-IN, NOT A KERNEL: torch on the host, results written back to device tensors,
so model code written against ttnn runs here unchanged around our device ops.
`host_traffic()` counts those host computations and every read of a device tensor.
"""

from ttnn_moe.emu.builtins import add, linear, matmul, mul, sigmoid, silu, topk
from ttnn_moe.emu.collectives import all_gather, reduce_scatter
from ttnn_moe.emu.conversions import reshape, to_layout, typecast
from ttnn_moe.emu.device import Device, MeshDevice, close_device, close_mesh_device, open_device, open_mesh_device
from ttnn_moe.emu.fabric import FabricNodeId, Topology, setup_fabric_connection
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.host_tensors import concat, copy_host_to_device_tensor, dump_tensor, get_device_tensors, load_tensor
from ttnn_moe.emu.host_traffic import HostTraffic, host_traffic
from ttnn_moe.emu.mesh import (
    ConcatMesh2dToTensor,
    ConcatMeshToTensor,
    ReplicateTensorToMesh,
    ShardTensor2dMesh,
    ShardTensorToMesh,
)
from ttnn_moe.emu.run_log import record_runs
from ttnn_moe.emu.tensor import (
    Tensor,
    allocate_tensor_on_device,
    deallocate,
    from_device,
    from_torch,
    full,
    to_device,
    to_torch,
)
from ttnn_moe.emu.types import (
    DRAM_MEMORY_CONFIG,
    L1_MEMORY_CONFIG,
    ROW_MAJOR_LAYOUT,
    TILE_LAYOUT,
    BufferType,
    CoreGrid,
    DataType,
    Layout,
    MemoryConfig,
    MeshShape,
    Shape,
    ShardOrientation,
    ShardSpec,
    TensorMemoryLayout,
    bfloat4_b,
    bfloat8_b,
    bfloat16,
    float32,
    int32,
    uint16,
    uint32,
)

__all__ = [
    "add",
    "linear",
    "matmul",
    "mul",
    "sigmoid",
    "silu",
    "topk",
    "all_gather",
    "reduce_scatter",
    "FabricNodeId",
    "Topology",
    "setup_fabric_connection",
    "reshape",
    "to_layout",
    "typecast",
    "Device",
    "MeshDevice",
    "close_device",
    "close_mesh_device",
    "open_device",
    "open_mesh_device",
    "generic_op",
    "last_run_counters",
    "HostTraffic",
    "host_traffic",
    "record_runs",
    "concat",
    "copy_host_to_device_tensor",
    "dump_tensor",
    "get_device_tensors",
    "load_tensor",
    "ConcatMesh2dToTensor",
    "ConcatMeshToTensor",
    "ReplicateTensorToMesh",
    "ShardTensor2dMesh",
    "ShardTensorToMesh",
    "Tensor",
    "allocate_tensor_on_device",
    "deallocate",
    "from_device",
    "from_torch",
    "full",
    "to_device",
    "to_torch",
    "DRAM_MEMORY_CONFIG",
    "L1_MEMORY_CONFIG",
    "ROW_MAJOR_LAYOUT",
    "TILE_LAYOUT",
    "BufferType",
    "CoreGrid",
    "DataType",
    "Layout",
    "MemoryConfig",
    "MeshShape",
    "Shape",
    "ShardOrientation",
    "ShardSpec",
    "TensorMemoryLayout",
    "bfloat4_b",
    "bfloat8_b",
    "bfloat16",
    "float32",
    "int32",
    "uint16",
    "uint32",
]

# The emulator is a launch target of the ops from now on (ttnn_moe.ops._launch.Target).
from ttnn_moe.emu.target import EmulatorTarget  # noqa: E402
from ttnn_moe.ops._launch import register_target  # noqa: E402

register_target(EmulatorTarget())
