"""Device APIs the emulator gained for tt-metal's CCL kernels: 1D chip multicast of fabric atomic
increments, writes and scatter writes, 1D sparse multicast (a hop mask), header payload sizes rounded
up to the L1 alignment, and Wormhole's NOC alignment rules (DRAM reads 32 B, DRAM writes 16 B) with
circular buffers placed at the DRAM alignment."""

import numpy as np
import pytest
from emu_programs import cb, core_set, kernel
from fabric_programs import HEADER_BYTES, KERNELS, device_program, dram_buffer, mesh_program, read_u32
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

EMU_KERNELS = KERNELS.parent / "emu"


def multicast_programs(mesh, sender, start, range_, tail_hops, tail_inc, expect):
    """Chip `sender` multicasts +1 to `range_` chips from `start` hops EAST, then adds `tail_inc` on the chip
    `tail_hops` away; chip c waits for expect[c] and writes its semaphore to DRAM."""
    programs, outputs = {}, {}
    for chip in range(mesh.shape[1]):
        device = mesh.devices()[chip]
        outputs[chip] = dram_buffer(device, 32)
        send = chip == sender
        args = [int(send), start, range_, tail_hops, tail_inc, expect.get(chip, 0), outputs[chip]]
        cbs = [cb(0, 1, HEADER_BYTES, core_set(0, 0)), cb(1, 1, 32, core_set(0, 0))]
        programs[chip] = device_program(
            mesh, chip, "line_multicast.cpp", cbs, args, connect_to=sender + 1 if send else None
        )
    return mesh_program(mesh, programs), outputs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_line_multicast_increments_every_chip_of_its_range_and_no_other(seed):
    mesh = emu.Mesh(1, 5, grid=(1, 1))
    mesh.set_fabric_seed(seed)
    # chip 0 multicasts to chips 2 and 3 (start 2, range 2), then adds 5 on chip 4 (4 hops).
    program, outputs = multicast_programs(mesh, 0, 2, 2, 4, 5, {1: 0, 2: 1, 3: 1, 4: 5})
    counters = emu.run_mesh_program(mesh, program)
    values = {chip: int(read_u32(mesh.devices()[chip], outputs[chip], 32)[0]) for chip in range(1, 5)}
    assert values == {1: 0, 2: 1, 3: 1, 4: 5}
    flows = {(f["dst"], f["type"]) for f in counters["fabric"]["flows"]}
    assert {(2, "atomic_inc"), (3, "atomic_inc"), (4, "atomic_inc")} == flows


def test_line_multicast_past_the_end_of_the_line_is_an_error():
    mesh = emu.Mesh(1, 3, grid=(1, 1))
    program, _ = multicast_programs(mesh, 0, 1, 3, 1, 1, {})
    with pytest.raises(emu.EmulatorError, match=r"line_multicast\.cpp.*3 hops EAST from chip 0 .*leave"):
        emu.run_mesh_program(mesh, program)


def sparse_scatter_programs(mesh, hop_mask, start, range_, last_hop, payload, chunk):
    """Chip 0 writes `payload` to the chips of `hop_mask` (sparse multicast EAST), scatters it over two buffers
    (`chunk` bytes, the rest) of the chips `start` .. `start + range_ - 1` hops away, then increments every chip
    1 .. last_hop hops away; each receiver dumps its three landing buffers to DRAM."""
    n_bytes = payload.nbytes
    programs, outputs = {}, {}
    for chip in range(mesh.shape[1]):
        device = mesh.devices()[chip]
        send = chip == 0
        dram_in = dram_buffer(device, n_bytes, payload if send else None)
        outputs[chip] = dram_buffer(device, 3 * n_bytes)
        args = [int(send), hop_mask, start, range_, last_hop, n_bytes, chunk, dram_in, outputs[chip]]
        cores = core_set(0, 0)
        cbs = [cb(0, 1, n_bytes, cores), cb(1, 1, HEADER_BYTES, cores)] + [cb(i, 1, n_bytes, cores) for i in (2, 3, 4)]
        programs[chip] = device_program(mesh, chip, "sparse_scatter.cpp", cbs, args, connect_to=1 if send else None)
    return mesh_program(mesh, programs), outputs


@pytest.mark.parametrize("seed", [1, 2])
def test_sparse_multicast_reaches_the_masked_hops_and_scatter_cuts_the_payload(seed):
    mesh = emu.Mesh(1, 6, grid=(1, 1))
    mesh.set_fabric_seed(seed)
    payload = np.random.default_rng(seed).integers(0, 2**32, 16, dtype=np.uint32)  # 64 bytes
    # Sparse mask 0b10101: chips 1, 3 and 5. Scatter to chips 2 and 3: 16 bytes, then the other 48.
    program, outputs = sparse_scatter_programs(mesh, 0b10101, 2, 2, 5, payload, 16)
    counters = emu.run_mesh_program(mesh, program)
    for chip in range(1, 6):
        got = read_u32(mesh.devices()[chip], outputs[chip], 3 * payload.nbytes).reshape(3, 16)
        want = np.zeros((3, 16), dtype=np.uint32)
        if chip in (1, 3, 5):
            want[0] = payload
        if chip in (2, 3):
            want[1, :4] = payload[:4]
            want[2, :12] = payload[4:]
        np.testing.assert_array_equal(got, want, err_msg=f"chip {chip}")
    flows = sorted((f["dst"], f["type"], f["bytes"]) for f in counters["fabric"]["flows"])
    want_flows = [(c, "write", 64) for c in (1, 3, 5)] + [(c, "scatter_write", 64) for c in (2, 3)]
    want_flows += [(c, "atomic_inc", 0) for c in range(1, 6)]
    assert flows == sorted(want_flows)


def test_sparse_multicast_past_the_end_of_the_line_is_an_error():
    mesh = emu.Mesh(1, 4, grid=(1, 1))
    payload = np.arange(16, dtype=np.uint32)
    program, _ = sparse_scatter_programs(mesh, 0b1001, 1, 1, 3, payload, 16)  # bit 3: 4 hops from chip 0
    with pytest.raises(emu.EmulatorError, match=r"sparse_scatter\.cpp.*4 hops EAST from chip 0 .*leave"):
        emu.run_mesh_program(mesh, program)


def test_scatter_chunks_longer_than_the_payload_are_an_error():
    mesh = emu.Mesh(1, 3, grid=(1, 1))
    payload = np.arange(16, dtype=np.uint32)
    program, _ = sparse_scatter_programs(mesh, 0b1, 1, 1, 2, payload, 80)
    with pytest.raises(emu.EmulatorError, match=r"scatter chunks of 80 bytes before the last one exceed the payload"):
        emu.run_mesh_program(mesh, program)


def _raw_write_program(dram_address, n_bytes, l1_offset):
    """write_raw.cpp: writes n_bytes of CB 0 starting at l1_offset to DRAM bank 0 at dram_address."""
    cores = core_set(0, 0)
    return pd.ProgramDescriptor(
        kernels=[
            kernel(
                str(EMU_KERNELS / "write_raw.cpp"),
                cores,
                pd.WriterConfigDescriptor(),
                runtime_args=[(pd.CoreCoord(0, 0), [dram_address, n_bytes, l1_offset])],
            )
        ],
        cbs=[cb(0, 1, 256, cores)],
    )


def test_dram_writes_need_16_byte_alignment_reads_32():
    dev = emu.open_device()
    buf = dev.allocate(12 * 256, 256)
    emu.run_program(dev, _raw_write_program(buf + 16, 32, 16))  # 16 mod 32 on both sides: a legal write
    with pytest.raises(emu.EmulatorError, match=r"write_raw\.cpp.*misaligned NOC transfer.*16 bytes"):
        emu.run_program(dev, _raw_write_program(buf + 8, 32, 0))


def test_circular_buffers_start_at_the_dram_alignment():
    dev = emu.open_device()
    cores = core_set(0, 0)
    out = dev.allocate(12 * 32, 32)
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                str(EMU_KERNELS / "cb_addresses.cpp"),
                cores,
                pd.WriterConfigDescriptor(),
                runtime_args=[(pd.CoreCoord(0, 0), [out])],
            )
        ],
        # 16-byte CBs: packed at the L1 alignment they would sit 16 bytes apart
        cbs=[cb(i, 1, 16, cores, pd.DataFormat.UInt16) for i in range(4)],
    )
    emu.run_program(dev, program)
    addresses = dev.read(out, 32, 32).view(np.uint32)[:4]
    assert all(int(a) % 32 == 0 for a in addresses), [hex(int(a)) for a in addresses]
    assert len(set(int(a) for a in addresses)) == 4
