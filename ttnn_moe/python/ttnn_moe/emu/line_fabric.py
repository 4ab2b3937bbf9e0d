"""A mesh line as our fabric kernels see it (kernels/common/dataflow/fabric_line.hpp).

A line is the devices that share one mesh coordinate: cluster_axis 0 is a mesh column
(positions are rows), 1 a mesh row (positions are columns). A worker reaches position q
through its connection towards q (forward: higher positions); on a Ring the shorter
way round, ties forward. The route words and the connection block are the runtime args
`FabricLine` reads.
"""

from __future__ import annotations

from ttnn_moe._C import program as _program
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.fabric import Topology, setup_fabric_connection

# kernels/cpp common_shared.hpp: route word layout.
_FORWARD, _BACKWARD, _LOCAL = 1, 2, 0
_HOPS_SHIFT = 8
_MESH_ID_SHIFT = 16
MAX_LINE_DEVICES = 32
MAX_LINKS = 4


def line_groups(mesh_shape, cluster_axis) -> list[list[int]]:
    """Device indices (row-major) of each line of the axis, each in position order."""
    rows, cols = mesh_shape
    if cluster_axis == 0:
        return [[r * cols + c for r in range(rows)] for c in range(cols)]
    if cluster_axis == 1:
        return [[r * cols + c for c in range(cols)] for r in range(rows)]
    raise ValueError(f"cluster_axis must be 0 or 1 for a line, got {cluster_axis!r}")


def _route(position: int, q: int, size: int, ring: bool) -> tuple[int, int]:
    if q == position:
        return _LOCAL, 0
    if ring:
        forward_hops = (q - position) % size
        return (_FORWARD, forward_hops) if forward_hops <= size - forward_hops else (_BACKWARD, size - forward_hops)
    return (_FORWARD, q - position) if q > position else (_BACKWARD, position - q)


class MeshLine:
    """One device's line: its position, the members, and the fabric args of a worker core."""

    def __init__(self, mesh: MeshDevice, members: list[int], position: int):
        self.mesh = mesh
        self.members = members
        self.position = position
        self.size = len(members)
        self._ring = mesh.fabric_topology == Topology.Ring

    def coord(self, device_index: int) -> _program.MeshCoordinate:
        return _program.MeshCoordinate(device_index // self.mesh.shape[1], device_index % self.mesh.shape[1])

    def fabric_node(self, q: int):
        """The fabric node id of the member at position q."""
        return self.mesh.get_fabric_node_id(self.coord(self.members[q]))

    def node_word(self, q: int) -> int:
        """Position q's fabric node as a route word carries it (chip id | mesh id << 16)."""
        node = self.fabric_node(q)
        return int(node.chip_id) | int(node.mesh_id) << _MESH_ID_SHIFT

    def route_words(self) -> list[int]:
        words = []
        for q in range(self.size):
            direction, hops = _route(self.position, q, self.size, self._ring)
            words += [direction | hops << _HOPS_SHIFT, self.node_word(q)]
        return words

    def connection_args(self, program: _program.ProgramDescriptor, core: _program.CoreCoord, link: int) -> list[int]:
        """[has_forward][3 args][has_backward][3 args] for `core` on `link`; adds the connections'
        semaphores to `program` (call after declaring its own)."""
        directions = {_route(self.position, q, self.size, self._ring)[0] for q in range(self.size)}
        me = self.mesh.get_fabric_node_id(self.coord(self.members[self.position]))
        args = []
        for direction, step in ((_FORWARD, 1), (_BACKWARD, -1)):
            if direction not in directions:
                args.append(0)
                continue
            neighbor = self.members[(self.position + step) % self.size]
            there = self.mesh.get_fabric_node_id(self.coord(neighbor))
            args += [1] + setup_fabric_connection(me, there, link, program, core)
        return args


def mesh_lines(mesh: MeshDevice, cluster_axis: int) -> list[MeshLine]:
    """The line of every device of the mesh (row-major)."""
    lines: list = [None] * mesh.get_num_devices()
    for group in line_groups(mesh.shape, cluster_axis):
        if len(group) > MAX_LINE_DEVICES:
            raise ValueError(f"a line of {len(group)} devices exceeds the supported {MAX_LINE_DEVICES}")
        for position, device_index in enumerate(group):
            lines[device_index] = MeshLine(mesh, group, position)
    return lines
