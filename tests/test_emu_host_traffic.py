"""host_traffic counts what the emulator's front end does on the host (host built-ins that compute,
reads of device tensors) and nothing else; record_runs lists device program launches."""

import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_device_fixture

device = emu_device_fixture(grid=(2, 2))


def test_host_built_ins_and_device_reads_are_counted(device):
    a = ttnn.from_torch(torch.randn(32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    before = ttnn.host_traffic()
    product = ttnn.matmul(a, a)  # one host computation reading both operands
    assert ttnn.host_traffic() - before == ttnn.HostTraffic(host_computations=1, device_reads=2)
    before = ttnn.host_traffic()
    ttnn.to_torch(product)
    host_copy = ttnn.from_device(product)
    ttnn.to_torch(host_copy)  # a host tensor: nothing to read from a device
    traffic = ttnn.host_traffic() - before
    assert traffic == ttnn.HostTraffic(device_reads=2)
    assert [kind for _, kind, _ in traffic.events] == ["device_reads", "device_reads"]


def test_uploads_and_device_programs_are_not_host_work(device):
    before = ttnn.host_traffic()
    x = ttnn.from_torch(torch.randn(64, 64), dtype=ttnn.bfloat16, device=device)
    with ttnn.record_runs() as runs:
        ttnn.to_layout(ttnn.to_layout(x, ttnn.TILE_LAYOUT), ttnn.ROW_MAJOR_LAYOUT)
    assert ttnn.host_traffic() - before == ttnn.HostTraffic()
    assert len(runs) == 2 and all(run["tiles_packed"] == 4 for run in runs)
