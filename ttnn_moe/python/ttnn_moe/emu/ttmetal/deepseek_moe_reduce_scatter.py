"""ttnn.experimental.deepseek_moe_reduce_scatter (tt-metal 0.81.1) on an emulated mesh, with its own kernels.

The last step of tt-metal's optimized DeepSeek-V3 decode path: every device of a ring of 8 along `cluster_axis`
holds the eight slices (on the last dim) of its partial MoE output, one tile high; ring device r ends with slice
r summed over the ring:

    out = deepseek_moe_reduce_scatter(input_tensors, output_memory_config, dim=-1, num_links=..., cluster_axis=...,
                                      topology=ttnn.Topology.Ring, input_shards=InputShards(width, cores))

`deepseek_moe_reduce_scatter_program` builds what the factory (deepseek_moe_reduce_scatter_program_factory.cpp)
builds on each device: the inputs are ND-sharded in L1 on the last dim, shard i on core i; each shard's core is a
worker, of link i // 2 and direction i % 2 (0 backward, 1 forward; an odd shard count adds a core, so every link
has a worker of each direction for the pre-op barrier). CBs c_0..c_7 alias the eight input slices' shards,
c_8..c_15 the op's eight intermediate tensors (the same spec), c_16 the reduced pages. Over 8 steps a worker's
writer sends its shard of slice (ring index - 1 - i) (forward; backward + 1 + i) to the same core of the next
device: step 0 its own input, later the compute kernel's sum of its input and what arrived, two tiles per fused
scatter write + semaphore increment into the neighbour's intermediate CB (the intermediate's sharded
TensorAccessor); the reader releases pages as the increments arrive; the last step's sum is its own slice,
written to the output. Both directions of a ring run at once on different shards.

Emulator differences, each stated where it is made: the emulator holds no tensor sharded over several cores, so
the inputs are interleaved tensors whose shard layout is given by `input_shards` (the shard width and the cores
their NdShardSpec names) and whose pages are put in the aliasing CBs when the program starts; the intermediates
are those CBs (their L1 address is what the writer's accessors get); the op's two global semaphores are program
semaphores on the workers; outputs are interleaved (DRAM or L1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ttnn_moe._C import emu as _emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu import fabric as emu_fabric
from ttnn_moe.emu.device import MeshDevice
from ttnn_moe.emu.generic_op import generic_op, last_run_counters
from ttnn_moe.emu.pages import to_pages
from ttnn_moe.emu.tensor import Tensor, allocate_tensor_on_device, device_shards
from ttnn_moe.emu.ttmetal import ccl_common as ccl
from ttnn_moe.emu.ttmetal.profiling import record_op
from ttnn_moe.emu.types import TILE_LAYOUT, BufferType, TensorMemoryLayout, bfloat16

_OP = "deepseek_moe_reduce_scatter"
_KERNELS = "ttnn/cpp/ttnn/operations/experimental/ccl/deepseek_moe_reduce_scatter/device/kernels"
READER = f"{_KERNELS}/deepseek_moe_reduce_scatter_reader.cpp"
WRITER = f"{_KERNELS}/deepseek_moe_reduce_scatter_writer.cpp"
REDUCE = f"{_KERNELS}/deepseek_moe_reduce_scatter_reduction.cpp"
RING_SIZE = 8  # the kernels' slice CB tables are 8 long
DIRECTIONS_PER_LINK = 2
TILE_GRANULARITY = 2  # the writer sends two tiles per fused scatter write
INPUT_CBS = tuple(range(0, 8))
INTERMEDIATE_CBS = tuple(range(8, 16))
COMPUTE_CB = 16
TILE = 32
# The factory's extra core for an odd shard count, by the number of links used (on the shard grid it expects).
SUPPLEMENTAL_CORES = ((2, 5), (3, 5), (6, 5), (7, 5))


@dataclass(frozen=True)
class InputShards:
    """The ND shard spec the inputs carry on a device: shards of `width` elements of the last dim (one tile high),
    shard i on cores[i]."""

    width: int
    cores: tuple[pd.CoreCoord, ...]


@dataclass(frozen=True)
class RingShape:
    """What the factory derives from the inputs."""

    pages_per_slice: int
    pages_per_shard: int
    page_size: int
    num_shards: int
    links: int  # clamped_num_links: the links the shards need

    @property
    def shard_bytes(self) -> int:
        return self.pages_per_shard * self.page_size


def worker_cores(grid: tuple[int, int], shard_cores: Sequence[pd.CoreCoord], links: int) -> list[pd.CoreCoord]:
    """The shard cores, plus (odd shard count) the factory's supplemental core for `links` links or else the first
    free core of the grid, row by row."""
    cores = list(shard_cores)
    if len(cores) % 2 == 0:
        return cores
    taken = {(c.x, c.y) for c in cores}
    preferred = SUPPLEMENTAL_CORES[links - 1]
    if preferred not in taken and preferred[0] < grid[0] and preferred[1] < grid[1]:
        return [*cores, pd.CoreCoord(*preferred)]
    for y in range(grid[1]):
        for x in range(grid[0]):
            if (x, y) not in taken:
                return [*cores, pd.CoreCoord(x, y)]
    raise ValueError(f"{_OP}: requires an even number of worker cores, and the grid has no core left")


def _sharded_l1_accessor_args(shape: RingShape, rank: int, bank_noc: Sequence[pd.CoreCoord]) -> list[int]:
    """TensorAccessorArgs of an intermediate tensor (0.81.1 encoding, all compile-time): L1-sharded, its aligned
    page size, rank, bank count, tensor and shard shapes in pages (one page high, pages along the last dim) and the
    banks' NOC coordinates, two to a word."""
    tensor_pages = [1] * (rank - 1) + [shape.pages_per_slice]
    shard_pages = [1] * (rank - 1) + [shape.pages_per_shard]
    coords = [(c.x << 8) | c.y for c in bank_noc]
    packed = [coords[i] | ((coords[i + 1] << 16) if i + 1 < len(coords) else 0) for i in range(0, len(coords), 2)]
    sharded = 1
    return [sharded, ccl.align(shape.page_size, ccl.L1_ALIGNMENT), rank, len(bank_noc), *tensor_pages, *shard_pages,
            *packed]  # fmt: skip


def _ring_index(row: int, col: int, axis: int) -> int:
    return col if axis == 1 else row


def _neighbours(view: ccl.MeshView, row: int, col: int, axis: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(forward, backward): the next and previous device along the ring of `axis`."""
    if axis == 1:
        return (row, (col + 1) % view.cols), (row, (col - 1) % view.cols)
    return ((row + 1) % view.rows, col), ((row - 1) % view.rows, col)


def deepseek_moe_reduce_scatter_program(
    mesh: MeshDevice,
    inputs: Sequence[Tensor],
    output: Tensor,
    shape: RingShape,
    shard_cores: Sequence[pd.CoreCoord],
    *,
    axis: int,
) -> pd.MeshProgramDescriptor:
    view = ccl.mesh_view(mesh)
    grid = mesh.compute_with_storage_grid_size()
    workers = worker_cores((grid.x, grid.y), shard_cores, shape.links)
    dtype = inputs[0].dtype
    rank = len(inputs[0].padded_shape)
    # Each device's pages of each input slice, cut into shards.
    pages = [[to_pages(t, dtype, TILE_LAYOUT).tobytes() for t in device_shards(x)] for x in inputs]
    return ccl.per_device_programs(
        view.rows,
        view.cols,
        lambda row, col: _device_program(
            mesh, view, row, col, [p[row * view.cols + col] for p in pages], output, shape, workers, rank, axis
        ),
    )


def _device_program(mesh, view, row, col, slice_pages, output, shape: RingShape, workers, rank, axis):
    ring_index = _ring_index(row, col, axis)
    fmt = output.dtype.data_format
    grid = ccl.core_range_set(workers)
    noc = [mesh.get_devices()[0].worker_core_from_logical_core(c) for c in workers]

    cbs = []
    for k, index in enumerate(INPUT_CBS):
        cb = ccl.cb(index, shape.shard_bytes, shape.page_size, grid, fmt)
        # The CB aliases input slice k's shard on each shard core (the emulator puts the shard's pages there).
        for i in range(shape.num_shards):
            cb.add_shard(workers[i], slice_pages[k][i * shape.shard_bytes : (i + 1) * shape.shard_bytes])
        cbs.append(cb)
    cbs += [ccl.cb(index, shape.shard_bytes, shape.page_size, grid, fmt) for index in INTERMEDIATE_CBS]
    cbs.append(ccl.cb(COMPUTE_CB, 2 * TILE_GRANULARITY * shape.page_size, shape.page_size, grid, fmt))
    # The intermediate tensors are their CBs: the writer addresses intermediate k at CB c_(8 + k)'s L1 offset.
    first = len(INPUT_CBS)
    intermediate_addresses = list(_emu.cb_l1_addresses([cb.total_size for cb in cbs]))[first : first + RING_SIZE]
    program = pd.ProgramDescriptor(kernels=[], semaphores=[], cbs=cbs)
    op_semaphore = ccl.global_semaphore(program, grid)
    pre_op_barrier = ccl.global_semaphore(program, grid)

    slice_cbs = [*INPUT_CBS, *INTERMEDIATE_CBS]
    reader_ct = [ring_index, RING_SIZE, TILE_GRANULARITY, *slice_cbs]
    intermediate_args = _sharded_l1_accessor_args(shape, rank, noc[: shape.num_shards])
    writer_ct = [ring_index, RING_SIZE, shape.page_size, TILE_GRANULARITY, *INPUT_CBS, COMPUTE_CB]
    writer_ct += intermediate_args * RING_SIZE + ccl.tensor_accessor_args(output)
    reduce_ct = [ring_index, RING_SIZE, TILE_GRANULARITY, *slice_cbs, COMPUTE_CB]

    forward, backward = _neighbours(view, row, col, axis)
    forward_tag, backward_tag = (ccl.EAST, ccl.WEST) if axis == 1 else (ccl.SOUTH, ccl.NORTH)
    reader_rt, writer_rt, reduce_rt = [], [], []
    for link in range(shape.links):
        for direction in range(DIRECTIONS_PER_LINK):
            worker = link * DIRECTIONS_PER_LINK + direction
            opposite = link * DIRECTIONS_PER_LINK + (direction + 1) % DIRECTIONS_PER_LINK
            core = workers[worker]
            start = shape.pages_per_shard * worker
            end = min(shape.pages_per_shard * (worker + 1), shape.pages_per_slice)
            reader_rt.append((core, [op_semaphore, direction, start, end]))
            neighbour, tag = (forward, forward_tag) if direction else (backward, backward_tag)
            writer_rt.append((core, [
                *intermediate_addresses, output.buffer_address(), noc[worker].x, noc[worker].y, op_semaphore,
                noc[opposite].x, noc[opposite].y, pre_op_barrier, direction, start, end,
                *ccl.routing_plane_connection_args(mesh, row, col, [neighbour], [tag], link, program, core),
            ]))  # fmt: skip
            reduce_rt.append((core, [start, end, direction]))

    def kernel(path, ct, rt, config, defines=()):
        return pd.KernelDescriptor(
            kernel_source=ccl.kernel_path(path), core_ranges=grid, compile_time_args=ct, defines=list(defines),
            runtime_args=rt, config=config,
        )  # fmt: skip

    program.kernels = [
        kernel(READER, reader_ct, reader_rt, pd.ReaderConfigDescriptor()),
        kernel(WRITER, writer_ct, writer_rt, pd.WriterConfigDescriptor(), [("API_TYPE_Linear", "1")]),
        kernel(REDUCE, reduce_ct, reduce_rt, pd.ComputeConfigDescriptor()),
    ]
    return program


def _check_inputs(input_tensors, input_shards) -> tuple[MeshDevice, RingShape]:
    if not isinstance(input_tensors, (list, tuple)) or len(input_tensors) != RING_SIZE:
        count = len(input_tensors) if isinstance(input_tensors, (list, tuple)) else type(input_tensors).__name__
        raise ValueError(f"{_OP}: requires {RING_SIZE} input tensors, but has {count}")
    first = input_tensors[0]
    if not all(isinstance(t, Tensor) for t in input_tensors):
        raise TypeError(f"{_OP}: the inputs must be emulator Tensors")
    if first.layout != TILE_LAYOUT or first.dtype != bfloat16:
        raise ValueError(f"{_OP}: requires bfloat16 TILE_LAYOUT inputs, got {first.dtype} {first.layout!r}")
    shape = [int(v) for v in first.padded_shape]
    for i, t in enumerate(input_tensors[1:], start=1):
        if [int(v) for v in t.padded_shape] != shape or t.dtype != first.dtype or t.layout != first.layout:
            raise ValueError(f"{_OP}: input {i} differs from input 0 (all inputs must have the same spec)")
    height = 1
    for v in shape[:-1]:
        height *= v
    if height != TILE:
        raise ValueError(
            f"{_OP}: requires the collapsed upper dims to be the height of a single tile, but has {height}"
        )
    if not isinstance(input_shards, InputShards):
        raise ValueError(f"{_OP}: input_shards (the inputs' shard width and cores) is required, got {input_shards!r}")
    width = shape[-1]
    if input_shards.width <= 0 or input_shards.width % TILE or width % input_shards.width:
        raise ValueError(f"{_OP}: shard width {input_shards.width} must be a multiple of 32 dividing {width}")
    pages_per_shard = input_shards.width // TILE
    if pages_per_shard % 2:
        raise ValueError(f"{_OP}: requires shards have an even number pages, got {pages_per_shard}")
    num_shards = width // input_shards.width
    cores = list(input_shards.cores)
    if len(cores) < num_shards or len({(c.x, c.y) for c in cores[:num_shards]}) != num_shards:
        raise ValueError(f"{_OP}: requires each of the {num_shards} shards to be located on a different core")
    links = ccl.div_up(num_shards, DIRECTIONS_PER_LINK)
    ring = RingShape(width // TILE, pages_per_shard, int(first.page_size), num_shards, links)
    return first.device(), ring


def deepseek_moe_reduce_scatter(
    input_tensors: Sequence[Tensor],
    output_memory_config,
    dim: int,
    *,
    num_links: int | None = None,
    cluster_axis: int | None = None,
    topology=None,
    input_shards: InputShards | None = None,
) -> Tensor:
    """ttnn.experimental.deepseek_moe_reduce_scatter's signature (0.81.1) plus `input_shards`; see the module
    docstring."""
    mesh, ring = _check_inputs(input_tensors, input_shards)
    view = ccl.mesh_view(mesh)
    axis = ccl.check_axis(_OP, cluster_axis)
    rank = len(input_tensors[0].padded_shape)
    if isinstance(dim, bool) or not isinstance(dim, int) or dim % rank != rank - 1:
        raise ValueError(f"{_OP}: only supports scattering on the last dim, but has dim {dim}")
    devices = view.dispatch_devices(axis)
    if devices != RING_SIZE:
        raise ValueError(f"{_OP}: is hardcoded for {RING_SIZE} devices, but has {devices} along cluster_axis {axis}")
    if axis is None:
        raise ValueError(f"{_OP}: the emulated op rings along one mesh axis: give cluster_axis 0 or 1")
    usable = ccl.usable_topology(view, topology, axis)
    if usable != emu_fabric.Topology.Ring:
        raise ValueError(f"{_OP}: is hardcoded for Topology.Ring, but has usable topology {usable!r}")
    links = view.num_links if num_links is None else num_links
    if ring.links > links:
        raise ValueError(f"{_OP}: {links} links available, but {ring.links} requested ({ring.num_shards} shards)")
    if ring.links > view.num_links:
        raise ValueError(f"{_OP}: the shards need {ring.links} links, the mesh has {view.num_links}")
    if output_memory_config.memory_layout is not TensorMemoryLayout.INTERLEAVED:
        raise ValueError(f"{_OP}: output_memory_config {output_memory_config} is sharded; the emulator holds "
                         "interleaved outputs only (DRAM or L1)")  # fmt: skip
    if output_memory_config.buffer_type not in (BufferType.DRAM, BufferType.L1):
        raise ValueError(f"{_OP}: output_memory_config {output_memory_config} is neither DRAM nor L1")
    first = input_tensors[0]
    output = allocate_tensor_on_device(list(first.shape), first.dtype, TILE_LAYOUT, mesh, output_memory_config)
    ccl.use_kernel_includes()
    program = deepseek_moe_reduce_scatter_program(
        mesh, input_tensors, output, ring, input_shards.cores[: ring.num_shards], axis=axis
    )
    generic_op([*input_tensors, output], program)
    record_op(_OP, list(input_tensors), [output], program, last_run_counters())
    return output
