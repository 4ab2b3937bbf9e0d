"""A mesh program holds an emulated L1 slot for every core that takes part in it on every device, those holding
L1 buffers included; when the mesh's cores outnumber the free slots, its devices run one at a time."""

import torch
from ttnn_moe._C import emu as emulator

from ttnn_moe import emu


def test_a_mesh_program_past_the_free_l1_slots_through_its_l1_buffers_runs_device_by_device():
    # 8x8 devices, each with an L1 tensor of one page per core (64 cores): 4096 cores hold L1 buffers, more than the
    # emulator's slots, while the conversion's own kernels take far fewer.
    mesh = emu.open_mesh_device(emu.MeshShape(8, 8))
    try:
        assert 64 * 64 > emulator.runtime_state()["l1_slots_free"]
        resident = emu.from_torch(
            torch.zeros(64 * 32, 32), dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=mesh,
            memory_config=emu.L1_MEMORY_CONFIG,
        )  # fmt: skip
        x = torch.randn(64, 96).bfloat16().float()
        tiled = emu.from_torch(x, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=mesh)
        rows = emu.to_layout(tiled, emu.ROW_MAJOR_LAYOUT)
        for device_rows in emu.get_device_tensors(rows):
            assert torch.equal(emu.to_torch(device_rows), x)
        assert torch.equal(emu.to_torch(emu.get_device_tensors(resident)[63]), torch.zeros(64 * 32, 32))
    finally:
        emu.close_mesh_device(mesh)
