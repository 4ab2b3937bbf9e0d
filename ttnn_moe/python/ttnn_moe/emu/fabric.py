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
fabric_buffer_slots = _emu.fabric_buffer_slots


def _check_connection_args(src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core):
    for name, node in (("src_fabric_node_id", src_fabric_node_id), ("dst_fabric_node_id", dst_fabric_node_id)):
        if not isinstance(node, FabricNodeId):
            raise TypeError(f"{name} must be a FabricNodeId, got {node!r}")
    if not isinstance(link_idx, int) or isinstance(link_idx, bool) or link_idx < 0:
        raise ValueError(f"link_idx must be a non-negative int, got {link_idx!r}")
    if not isinstance(program_descriptor, _program.ProgramDescriptor):
        raise TypeError(f"program_descriptor must be a ProgramDescriptor, got {type(program_descriptor).__name__}")
    if not isinstance(worker_core, _program.CoreCoord):
        raise TypeError(f"worker_core must be a CoreCoord, got {worker_core!r}")


def setup_fabric_connection(src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core):
    _check_connection_args(src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core)
    return list(
        _emu.setup_fabric_connection(src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core)
    )


# FabricMuxV2Sender::build_from_args reads 11 words; these are their positions.
MUX_CLIENT_NUM_ARGS = 11
_MUX_X, _MUX_Y, _MUX_CHANNEL, _MUX_NUM_BUFFERS, _MUX_BUFFER_SIZE, _MUX_CONNECTION = range(6)
_MUX_FLOW_CONTROL_SEM, _MUX_TEARDOWN_SEM = 8, 9


def setup_fabric_mux_connection(
    src_fabric_node_id,
    dst_fabric_node_id,
    link_idx,
    program_descriptor,
    worker_core,
    *,
    mux_core,
    channel_id,
    num_buffers,
    channel_buffer_size_bytes,
):
    """The 11 runtime args of a worker's fabric mux (V2) client, in the order
    `FabricMuxV2Config::append_client_connection_rt_args` appends them: mux_x, mux_y, logical channel,
    buffer count, buffer size, channel base, connection info, handshake, flow-control semaphore id,
    teardown semaphore id, mux status. The emulator runs no mux core (the client header binds an
    emulated fabric connection to the mux's neighbour, which the clients of one mux share), so the
    channel-base word carries that connection and the mux-core L1 addresses are 0; the two semaphores
    are added on `worker_core` as on hardware. `mux_core` is the mux's NOC coordinate (a CoreCoord)."""
    if not isinstance(num_buffers, int) or not 0 < num_buffers < 256:
        raise ValueError(f"num_buffers must be an int in 1..255, got {num_buffers!r}")
    if not isinstance(channel_buffer_size_bytes, int) or channel_buffer_size_bytes <= 0:
        raise ValueError(f"channel_buffer_size_bytes must be a positive int, got {channel_buffer_size_bytes!r}")
    _check_connection_args(src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core)
    connection, teardown_sem, flow_control_sem = _emu.setup_fabric_mux_connection(
        src_fabric_node_id, dst_fabric_node_id, link_idx, program_descriptor, worker_core
    )
    args = [0] * MUX_CLIENT_NUM_ARGS
    args[_MUX_X], args[_MUX_Y] = int(mux_core.x), int(mux_core.y)
    args[_MUX_CHANNEL] = int(channel_id)
    args[_MUX_NUM_BUFFERS] = num_buffers
    args[_MUX_BUFFER_SIZE] = channel_buffer_size_bytes
    args[_MUX_CONNECTION] = connection
    args[_MUX_FLOW_CONTROL_SEM] = flow_control_sem
    args[_MUX_TEARDOWN_SEM] = teardown_sem
    return args
