"""tt-fabric host side for the emulator, in ttnn's shape.

    args = setup_fabric_connection(src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core)
    program.kernels[k].runtime_args  # ... append `args` to the worker core's runtime args

Same argument order as `ttnn.setup_fabric_connection`: adds the connection's two
semaphores on `worker_core` to `program_descriptor` (mutated in place) and
returns the three runtime args `WorkerToFabricEdmSender::build_from_args`
consumes. Fabric node ids come from `mesh.get_fabric_node_id(MeshCoordinate)`;
the mesh's topology (`mesh.fabric_topology = Topology.Ring`), delivery-delay
seed (`mesh.set_fabric_seed`) and link count are set on the emulated Mesh.
"""

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as _program

FabricNodeId = _emu.FabricNodeId
Topology = _emu.Topology
fabric_max_payload_size = _emu.fabric_max_payload_size


def setup_fabric_connection(src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core):
    for name, node in (("src_fabric_node_id", src_fabric_node_id), ("dst_fabric_node_id", dst_fabric_node_id)):
        if not isinstance(node, FabricNodeId):
            raise TypeError(f"{name} must be a FabricNodeId, got {node!r}")
    if not isinstance(link_idx, int) or isinstance(link_idx, bool) or link_idx < 0:
        raise ValueError(f"link_idx must be a non-negative int, got {link_idx!r}")
    if not isinstance(program_descriptor, _program.ProgramDescriptor):
        raise TypeError(f"program_descriptor must be a ProgramDescriptor, got {type(program_descriptor).__name__}")
    if not isinstance(worker_core, _program.CoreCoord):
        raise TypeError(f"worker_core must be a CoreCoord, got {worker_core!r}")
    return list(
        _emu.setup_fabric_connection(src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core)
    )
