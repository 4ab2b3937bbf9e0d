"""The ops' L1 scratch follows the device's DRAM alignment (Wormhole 32 B, Blackhole 64 B), read from the
device into DeviceLimits, as their kernels' NOC_DRAM_READ_ALIGNMENT_BYTES does on that device."""

import pytest
import torch
import ttnn_moe.emu as emu
from emu_fixtures import emu_device_fixture
from routing_cases import rm, single_device_mapping

import ttnn_moe
from ttnn_moe import _C

device = emu_device_fixture(grid=(2, 2))


def limits_with_alignment(device, dram_alignment):
    emulated = device.device_limits()
    return _C.program.DeviceLimits(
        grid=emulated.grid,
        l1_bytes_per_core=emulated.l1_bytes_per_core,
        max_cbs_per_core=emulated.max_cbs_per_core,
        max_semaphores_per_core=emulated.max_semaphores_per_core,
        dram_alignment=dram_alignment,
    )


def round_up(value, multiple):
    return (value + multiple - 1) // multiple * multiple


def prepare_cb_pages(device, num_tokens, top_k, num_experts, dram_alignment):
    """Page size of every circular buffer of prepare_moe_routing_tensors' program for this device."""
    ids = torch.zeros(num_tokens, top_k, dtype=torch.int32)
    inputs = [
        rm(device, ids, emu.uint32).to_arg(),
        rm(device, ids.to(torch.bfloat16), emu.bfloat16).to_arg(),
        rm(device, single_device_mapping(num_experts), emu.int32).to_arg(),
    ]
    op = _C.ops.prepare_moe_routing_tensors
    context = _C.ops.MeshContext(
        kernels_root=str(ttnn_moe.paths.kernels_dir()), device=limits_with_alignment(device, dram_alignment)
    )
    attributes = op.Attributes()
    outputs = op.output_specs(attributes, inputs, context)
    ((_, program),) = op.program(attributes, inputs + list(outputs), context).mesh_programs
    return {f.buffer_index: f.page_size for cb in program.cbs for f in cb.format_descriptors}


@pytest.mark.parametrize("dram_alignment", [32, 64])
def test_scratch_pages_are_strided_by_the_devices_dram_alignment(device, dram_alignment):
    num_tokens, top_k, num_experts = 33, 3, 5  # 132 B token rows, 12 B id rows, 20 B slot table
    pages = prepare_cb_pages(device, num_tokens, top_k, num_experts, dram_alignment)
    for raw in (num_tokens * 4, top_k * 4, num_experts * 4):  # slots DRAM pages are read into
        assert round_up(raw, dram_alignment) in pages.values(), (raw, pages)
    other = 64 if dram_alignment == 32 else 32  # the token table's slot: 160 B at 32, 192 B at 64
    assert round_up(num_tokens * 4, other) not in pages.values(), pages


def test_device_limits_refuse_an_alignment_that_is_not_a_power_of_two(device):
    with pytest.raises(ValueError, match="dram_alignment must be a power of two, got 48"):
        limits_with_alignment(device, 48)
