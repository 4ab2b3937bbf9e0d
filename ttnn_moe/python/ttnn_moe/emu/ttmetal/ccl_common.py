"""What tt-metal 0.81.1's CCL host helpers compute, for the MoE fabric ops on an emulated mesh.

Written from the behaviour of ttnn's `ccl/common/host/moe_utils.cpp` (get_neighbors,
get_linearized_index, get_num_links), `ccl_common.cpp` (get_usable_topology) and the
work-split helpers the dispatch / combine / remap factories call, so the program
descriptions here get the same fabric connections, core placement and defines.

A GlobalSemaphore (an L1 word at one address on every worker core of every device,
zero at creation) is a program semaphore here: each device's program declares it
with the same id before any fabric connection (setup_fabric_connection takes the
lowest free ids after it), so its L1 offset is the same everywhere and starts at 0,
as emulated L1 is zeroed for every run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu import fabric as emu_fabric
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.ttmetal.wheel import kernel_include_dirs, wheel_root

EAST, WEST, NORTH, SOUTH = 0, 1, 2, 3  # tt::tt_fabric::eth_chan_directions, the DIRECTIONS define's order
L1_ALIGNMENT = 16  # hal::get_l1_alignment() on Wormhole (the emulated device)
CLIENT_INTERFACE_SIZE = 3280  # hostdevcommon/fabric_common.h


@dataclass(frozen=True)
class MeshView:
    """The mesh as a factory sees it: shape and the fabric node id of every device, row-major."""

    rows: int
    cols: int
    mesh_ids: tuple[int, ...]
    chip_ids: tuple[int, ...]
    num_links: int
    fabric_topology: object  # emu Topology

    @property
    def num_devices(self) -> int:
        return self.rows * self.cols

    def dispatch_devices(self, axis: int | None) -> int:
        return self.num_devices if axis is None else (self.rows if axis == 0 else self.cols)


def mesh_view(mesh: MeshDevice) -> MeshView:
    if not isinstance(mesh, MeshDevice):
        raise ValueError(f"the MoE fabric ops need tensors on an emulated MeshDevice, got them on {mesh!r}")
    rows, cols = (int(v) for v in mesh.shape)
    nodes = [mesh.get_fabric_node_id(pd.MeshCoordinate(r, c)) for r in range(rows) for c in range(cols)]
    return MeshView(
        rows,
        cols,
        tuple(int(n.mesh_id) for n in nodes),
        tuple(int(n.chip_id) for n in nodes),
        int(mesh.chip_mesh.fabric_num_links),
        mesh.fabric_topology,
    )


def check_axis(op: str, axis, required: bool = False) -> int | None:
    if axis is None:
        if required:
            raise ValueError(f"{op}: cluster_axis must be given (0 or 1), got None")
        return None
    if isinstance(axis, bool) or axis not in (0, 1):
        raise ValueError(f"{op}: cluster_axis must be 0, 1 or None, got {axis!r}")
    return int(axis)


def usable_topology(view: MeshView, topology, axis: int | None):
    """get_usable_topology: a Ring on an axis of 2 devices (or over the whole mesh without wrap) is a Line."""
    Topology = emu_fabric.Topology
    chosen = view.fabric_topology if topology is None else topology
    if chosen not in (Topology.Linear, Topology.Ring, Topology.Mesh):
        raise ValueError(f"topology must be ttnn.Topology.Linear, Ring or Mesh (or None), got {topology!r}")
    if chosen == Topology.Ring:
        sizes = [view.dispatch_devices(axis)] if axis is not None else [view.rows, view.cols]
        if any(size <= 2 for size in sizes):
            return Topology.Linear
    return chosen


def topology_value(topology) -> int:
    """tt::tt_fabric::Topology's numeric value, as the factories pass it in a compile-time arg."""
    return int(topology.value)


def neighbors(view: MeshView, row: int, col: int, topology, axis: int | None):
    """get_neighbors: the adjacent devices (East, West along a row; North, South along a column; a Ring
    wraps) in that order, and the DIRECTIONS flags [E, W, N, S]."""
    wrap = topology == emu_fabric.Topology.Ring
    found: list[tuple[int, int]] = []
    directions = [False, False, False, False]

    def add(direction: int, r: int, c: int) -> None:
        if wrap:
            r, c = r % view.rows, c % view.cols
        elif not (0 <= r < view.rows and 0 <= c < view.cols):
            return
        found.append((r, c))
        directions[direction] = True

    for a in [axis] if axis is not None else [1, 0]:
        if a == 1:
            add(EAST, row, col + 1)
            add(WEST, row, col - 1)
        else:
            add(NORTH, row - 1, col)
            add(SOUTH, row + 1, col)
    # An axis of one device has no neighbour and needs no fabric connection (each device is its own group).
    if not found and not (axis is not None and view.dispatch_devices(axis) == 1):
        raise ValueError(f"device ({row}, {col}) of a {view.rows}x{view.cols} mesh has no neighbor along axis {axis}")
    return found, directions


def max_packet_bytes() -> int:
    """bit_floor(get_tt_fabric_channel_buffer_size_bytes()) for bfloat16: the emulated channel holds a header and
    a payload of at most fabric_max_payload_size (a power of two) bytes."""
    return int(emu_fabric.fabric_max_payload_size)


def stringify(values) -> str:
    """A C++ brace initializer of the values (bools as true/false), as the factories' defines hold them."""
    return "{" + ", ".join(("true" if v else "false") if isinstance(v, bool) else str(int(v)) for v in values) + "}"


def div_up(a: int, b: int) -> int:
    return -(-a // b)


def align(value: int, alignment: int) -> int:
    return div_up(value, alignment) * alignment


def sender_cores(mesh: MeshDevice, num_cores: int) -> list[pd.CoreCoord]:
    """num_cores_to_corerangeset_in_subcoregrids from (0, 0), row-wise over the worker grid."""
    grid = mesh.compute_with_storage_grid_size()
    if num_cores > grid.x * grid.y:
        raise ValueError(f"{num_cores} links need {num_cores} worker cores, the grid has {grid.x * grid.y}")
    return [pd.CoreCoord(i % grid.x, i // grid.x) for i in range(num_cores)]


def core_range_set(cores: list[pd.CoreCoord]) -> pd.CoreRangeSet:
    return pd.CoreRangeSet([pd.CoreRange(c, c) for c in cores])


def global_semaphore(program: pd.ProgramDescriptor, cores: pd.CoreRangeSet) -> int:
    """A zero-initialised L1 word at one offset on every core and device (see the module docstring)."""
    sem_id = len(program.semaphores)
    program.semaphores = [*program.semaphores, pd.SemaphoreDescriptor(sem_id, pd.CoreType.WORKER, cores, 0)]
    return int(_emu.semaphore_l1_address(sem_id))


def cb(index: int, total_size: int, page_size: int, cores: pd.CoreRangeSet, data_format) -> pd.CBDescriptor:
    return pd.CBDescriptor(total_size, cores, [pd.CBFormatDescriptor(index, data_format, page_size)])


def kernel_path(relative: str) -> str:
    """Absolute path of a kernel the factory names relative to the wheel's root (`ttnn/cpp/ttnn/...`)."""
    path = wheel_root() / relative
    if not path.is_file():
        raise FileNotFoundError(f"the ttnn wheel at {wheel_root()} has no {relative}")
    return str(path)


def use_kernel_includes() -> None:
    """Kernel include dirs as tt-metal's JIT has them for these kernels: use_wheel's (wheel.kernel_include_dirs)
    plus `ttnn/`, through which the CCL helpers include
    `cpp/ttnn/operations/...`, and the wheel's root (the experimental CCL kernels include
    `ttnn/cpp/ttnn/operations/...`)."""
    root: Path = wheel_root()
    wanted = [*kernel_include_dirs(root), str(root / "ttnn"), str(root)]
    if list(_emu.kernel_include_dirs()) != wanted:
        _emu.set_kernel_include_dirs(wanted)


def tensor_accessor_args(tensor) -> list[int]:
    """TensorAccessorArgs(buffer).append_to(...) of an interleaved (DRAM or L1) tensor."""
    return list(_emu.tensor_accessor_args(tensor.page_size, bool(tensor.to_arg().is_dram)))


def neighbor_connection_args(
    mesh: MeshDevice, row: int, col: int, neighbor_coords, link: int, program, core
) -> list[int]:
    """The writer's runtime args for one fabric connection per neighbour (in `neighbor_coords` order) on `link`,
    as the CCL factories append them after the writer's own args."""
    src_node = mesh.get_fabric_node_id(pd.MeshCoordinate(row, col))
    args: list[int] = []
    for r, c in neighbor_coords:
        dst_node = mesh.get_fabric_node_id(pd.MeshCoordinate(r, c))
        args += emu_fabric.setup_fabric_connection(src_node, dst_node, link, program, core)
    return args


def routing_plane_connection_args(
    mesh: MeshDevice, row: int, col: int, neighbor_coords, directions, link: int, program, core
) -> list[int]:
    """append_routing_plane_connection_manager_rt_args on a 1D fabric: per neighbour (in `neighbor_coords` order)
    its eth direction (EAST, WEST, NORTH or SOUTH, as `directions` gives it) as the connection's tag, then the
    connection's args on `link`."""
    src_node = mesh.get_fabric_node_id(pd.MeshCoordinate(row, col))
    args: list[int] = []
    for (r, c), direction in zip(neighbor_coords, directions, strict=True):
        dst_node = mesh.get_fabric_node_id(pd.MeshCoordinate(r, c))
        args += [direction, *emu_fabric.setup_fabric_connection(src_node, dst_node, link, program, core)]
    return args


def reader_writer_kernels(
    reader: str, writer: str, grid: pd.CoreRangeSet, reader_args: tuple, writer_args: tuple
) -> list[pd.KernelDescriptor]:
    """The CCL factories' kernel pair on `grid`: the reader on RISCV_1 / NOC 1, the writer on RISCV_0 / NOC 0.
    Each `*_args` is (compile_time_args, runtime_args, defines)."""

    def kernel(path: str, args: tuple, processor, noc) -> pd.KernelDescriptor:
        compile_time_args, runtime_args, defines = args
        return pd.KernelDescriptor(
            kernel_source=kernel_path(path),
            core_ranges=grid,
            compile_time_args=compile_time_args,
            defines=defines,
            runtime_args=runtime_args,
            config=pd.DataMovementConfigDescriptor(processor, noc),
        )

    return [
        kernel(reader, reader_args, pd.DataMovementProcessor.RISCV_1, pd.NOC.RISCV_1_default),
        kernel(writer, writer_args, pd.DataMovementProcessor.RISCV_0, pd.NOC.RISCV_0_default),
    ]


def per_device_programs(rows: int, cols: int, build: Callable[[int, int], object]) -> pd.MeshProgramDescriptor:
    """A mesh program of one device program per coordinate: build(row, col) -> ProgramDescriptor
    (the factories specialise every device's program by its position)."""
    programs = []
    for row in range(rows):
        for col in range(cols):
            coord = pd.MeshCoordinate(row, col)
            programs.append((pd.MeshCoordinateRange(coord, coord), build(row, col)))
    return pd.MeshProgramDescriptor(programs)
