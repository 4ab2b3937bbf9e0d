"""The fabric mux (V2) client (tt::tt_fabric::FabricMuxV2Sender) on the emulated fabric: its packets arrive as a
fabric connection's do, its free slots are the channel's buffer count less the packets in flight, and the host's
setup_fabric_mux_connection lays out the 11 runtime args in the order the client reads them. Also the
circular-buffer shard contents (the L1 shard a CB aliases, CBDescriptor.add_shard)."""

import numpy as np
import pytest
from emu_programs import cb, core_set, kernel
from fabric_programs import CORE, HEADER_BYTES, KERNELS, dram_buffer, mesh_program, node, read_u32
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.fabric import MUX_CLIENT_NUM_ARGS, setup_fabric_connection, setup_fabric_mux_connection

MUX_CORE = pd.CoreCoord(1, 1)


def mux_programs(mesh, src, dst, n_bytes, num_buffers, max_packet=1024, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 2**32, n_bytes // 4, dtype=np.uint32)
    programs, outputs = {}, {}
    for chip in (src, dst):
        device = mesh.devices()[chip]
        outputs[chip] = dram_buffer(device, n_bytes + 32)
        dram_in = dram_buffer(device, n_bytes, data if chip == src else None)
        cores = core_set(0, 0)
        program = pd.ProgramDescriptor(
            kernels=[],
            cbs=[
                cb(0, 1, n_bytes, cores),
                cb(1, 1, HEADER_BYTES, cores),
                cb(2, 1, n_bytes, cores),
                cb(3, 1, 32, cores),
            ],
            semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
        )
        args = [int(chip == src), int(chip == dst), abs(dst - src), n_bytes, max_packet, dram_in, outputs[chip]]
        if chip == src:
            args += setup_fabric_mux_connection(
                node(mesh, src), node(mesh, src + 1), 0, program, CORE, mux_core=MUX_CORE, channel_id=0,
                num_buffers=num_buffers, channel_buffer_size_bytes=max_packet + HEADER_BYTES,
            )  # fmt: skip
        program.kernels = [
            kernel(str(KERNELS / "mux_v2_unicast.cpp"), cores, pd.WriterConfigDescriptor(), runtime_args=[(CORE, args)])
        ]
        programs[chip] = program
    return mesh_program(mesh, programs), data, outputs


@pytest.mark.parametrize("num_buffers, capacity", [(20, 8), (3, 3)])
def test_mux_client_delivers_and_reports_its_channel_capacity(num_buffers, capacity):
    mesh = emu.Mesh(1, 4, grid=(1, 1))
    program, data, outputs = mux_programs(mesh, 0, 2, 4096, num_buffers)
    counters = emu.run_mesh_program(mesh, program)
    got = read_u32(mesh.devices()[2], outputs[2], 4096 + 32)
    assert np.array_equal(got[:1024], data)
    sender = read_u32(mesh.devices()[0], outputs[0], 4096 + 32)
    # free slots at open = min(channel buffers, the emulated connection's slots); all free again after draining
    assert sender[1024:1026].tolist() == [capacity, capacity]
    assert counters["fabric"]["packets"] == 4 + 1


def test_mux_client_args_are_the_fabric_connection_in_the_channel_base_word():
    program = pd.ProgramDescriptor(kernels=[], cbs=[], semaphores=[])
    mesh = emu.Mesh(1, 2, grid=(1, 1))
    args = setup_fabric_mux_connection(
        node(mesh, 0), node(mesh, 1), 1, program, CORE, mux_core=pd.CoreCoord(3, 4), channel_id=5, num_buffers=6,
        channel_buffer_size_bytes=4160,
    )  # fmt: skip
    mux = emu.setup_fabric_mux_connection(node(mesh, 0), node(mesh, 1), 1, pd.ProgramDescriptor(), CORE)
    direct = setup_fabric_connection(node(mesh, 0), node(mesh, 1), 1, pd.ProgramDescriptor(), CORE)
    assert len(args) == MUX_CLIENT_NUM_ARGS
    # mux x, y, channel, buffers, buffer size, channel base (= the connection), connection info, handshake,
    # flow-control semaphore, teardown semaphore, mux status
    assert args == [3, 4, 5, 6, 4160, mux[0], 0, 0, mux[2], mux[1], 0]
    assert mux[1:] == direct[1:] and mux[0] != direct[0]  # the same semaphores, a mux client's channel
    assert sorted(s.id for s in program.semaphores) == [0, 1]
    with pytest.raises(ValueError, match="num_buffers"):
        setup_fabric_mux_connection(
            node(mesh, 0), node(mesh, 1), 0, program, CORE, mux_core=MUX_CORE, channel_id=0, num_buffers=0,
            channel_buffer_size_bytes=64,
        )  # fmt: skip


def test_clients_of_one_mux_share_its_link_and_direction():
    mesh = emu.Mesh(1, 2, grid=(2, 1))
    rng = np.random.default_rng(3)
    data = {x: rng.integers(0, 2**32, 256, dtype=np.uint32) for x in (0, 1)}
    programs, outputs = {}, {}
    for chip in (0, 1):
        device = mesh.devices()[chip]
        outputs[chip] = {x: dram_buffer(device, 1024 + 32) for x in (0, 1)}
        cores = core_set(0, 0, 1, 0)
        program = pd.ProgramDescriptor(
            kernels=[],
            cbs=[cb(0, 1, 1024, cores), cb(1, 1, HEADER_BYTES, cores), cb(2, 1, 1024, cores), cb(3, 1, 32, cores)],
            semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
        )
        runtime_args = []
        for x in (0, 1):
            core = pd.CoreCoord(x, 0)
            dram_in = dram_buffer(device, 1024, data[x] if chip == 0 else None)
            args = [int(chip == 0), int(chip == 1), 1, 1024, 512, dram_in, outputs[chip][x]]
            if chip == 0:  # both workers are clients of the same mux (link 0 EAST), open at once
                args += setup_fabric_mux_connection(
                    node(mesh, 0), node(mesh, 1), 0, program, core, mux_core=MUX_CORE, channel_id=x, num_buffers=4,
                    channel_buffer_size_bytes=512 + HEADER_BYTES,
                )  # fmt: skip
            runtime_args.append((core, args))
        program.kernels = [
            kernel(str(KERNELS / "mux_v2_unicast.cpp"), cores, pd.WriterConfigDescriptor(), runtime_args=runtime_args)
        ]
        programs[chip] = program
    emu.run_mesh_program(mesh, mesh_program(mesh, programs))
    for x in (0, 1):
        assert np.array_equal(read_u32(mesh.devices()[1], outputs[1][x], 1024)[:256], data[x])


def _shard_program(dram_address, n_bytes, shard: bytes, shard_core=pd.CoreCoord(0, 0)):
    cores = core_set(0, 0)
    data_cb = cb(0, 1, 256, cores)
    data_cb.add_shard(shard_core, shard)
    return pd.ProgramDescriptor(
        kernels=[
            kernel(
                str(KERNELS.parent / "emu" / "write_raw.cpp"),
                cores,
                pd.WriterConfigDescriptor(),
                runtime_args=[(pd.CoreCoord(0, 0), [dram_address, n_bytes, 0])],
            )
        ],
        cbs=[data_cb],
    )


def test_a_cb_shard_is_in_l1_when_the_program_starts():
    dev = emu.open_device()
    out = dev.allocate(256, 256)
    shard = np.random.default_rng(5).integers(0, 2**32, 64, dtype=np.uint32)
    program = _shard_program(out, 256, shard.tobytes())
    assert program.cbs[0].shard_cores == [pd.CoreCoord(0, 0)]
    emu.set_poison(True)
    try:
        emu.run_program(dev, program)  # poison mode: the shard's bytes count as written
    finally:
        emu.set_poison(False)
    assert np.array_equal(read_u32(dev, out, 256), shard)


def test_a_cb_shard_larger_than_its_cb_or_off_its_cores_is_refused():
    dev = emu.open_device()
    out = dev.allocate(256, 256)
    with pytest.raises(
        ValueError, match=r"circular buffer 0 shard on core \(0, 0\): 272 bytes exceed its total_size 256"
    ):
        emu.run_program(dev, _shard_program(out, 256, bytes(272)))
    with pytest.raises(ValueError, match=r"shard on core \(1, 0\): core is not in its range"):
        emu.run_program(dev, _shard_program(out, 256, bytes(16), pd.CoreCoord(1, 0)))
