"""Per-device programs for the fabric tests (kernels in tests/kernels/fabric)."""

from pathlib import Path

import numpy as np
from emu_programs import cb, core_set, kernel
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.fabric import setup_fabric_connection

KERNELS = Path(__file__).resolve().parent / "kernels" / "fabric"
CORE = pd.CoreCoord(0, 0)
HEADER_BYTES = 128  # room for either packet header (64 B in 1D, 96 B in 2D)


def coord(mesh, chip):
    return pd.MeshCoordinate(chip // mesh.shape[1], chip % mesh.shape[1])


def node(mesh, chip):
    return mesh.get_fabric_node_id(coord(mesh, chip))


def mesh_program(mesh, programs):
    """programs: {chip: ProgramDescriptor}, one device each."""
    return pd.MeshProgramDescriptor(
        [(pd.MeshCoordinateRange(coord(mesh, c), coord(mesh, c)), p) for c, p in sorted(programs.items())]
    )


def device_program(mesh, chip, source, cbs, args, connect_to=None, link=0):
    """One writer kernel on core (0, 0) with semaphore 0 and, if connect_to, a fabric connection appended to args."""
    cores = core_set(0, 0)
    program = pd.ProgramDescriptor(
        kernels=[], cbs=cbs, semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)]
    )
    args = list(args)
    if connect_to is not None:
        args += setup_fabric_connection(node(mesh, chip), node(mesh, connect_to), link, program, CORE)
    program.kernels = [kernel(str(KERNELS / source), cores, pd.WriterConfigDescriptor(), runtime_args=[(CORE, args)])]
    return program


def dram_buffer(device, n_bytes, data=None):
    """One-page DRAM buffer (bank 0) of n_bytes, optionally filled."""
    address = device.allocate(n_bytes, n_bytes)
    if data is not None:
        device.write(address, n_bytes, np.ascontiguousarray(data).view(np.uint8))
    return address


def read_u32(device, address, n_bytes):
    return device.read(address, n_bytes, n_bytes).view(np.uint32)


def unicast_programs(mesh, sends, n_bytes, seed=0, max_packet=None, expect=None):
    """sends: {src chip: (dst chip, route)}; route is hops (1D) or the destination chip (2D).
    expect: {chip: increments its receiver waits for} where not the number of senders to it.
    Returns (mesh program, inputs {chip: uint32 array}, output addresses {chip: address})."""
    max_packet = max_packet or emu.fabric_max_payload_size
    rng = np.random.default_rng(seed)
    receivers = {}
    for src, (dst, _) in sends.items():
        receivers[dst] = receivers.get(dst, 0) + 1
    programs, inputs, outputs = {}, {}, {}
    for chip in sorted(set(sends) | set(receivers)):
        device = mesh.devices()[chip]
        inputs[chip] = rng.integers(0, 2**32, n_bytes // 4, dtype=np.uint32)
        dram_in = dram_buffer(device, n_bytes, inputs[chip])
        outputs[chip] = dram_buffer(device, n_bytes)
        dst, route = sends.get(chip, (None, 0))
        args = [
            int(dst is not None),
            int(chip in receivers),
            route,
            n_bytes,
            max_packet,
            dram_in,
            outputs[chip],
            (expect or {}).get(chip, receivers.get(chip, 0)),
        ]
        cbs = [
            cb(0, 1, n_bytes, core_set(0, 0)),
            cb(1, 1, HEADER_BYTES, core_set(0, 0)),
            cb(2, 1, n_bytes, core_set(0, 0)),
        ]
        programs[chip] = device_program(mesh, chip, "unicast.cpp", cbs, args, connect_to=dst)
    return mesh_program(mesh, programs), inputs, outputs
