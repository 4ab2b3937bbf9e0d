"""A mesh program holds an emulated L1 slot for every core that takes part in it on every device, those holding
L1 buffers included; when the mesh's cores outnumber the free slots, the devices its fabric connections join run
together, one such group at a time (one device at a time when they do not talk)."""

import torch
from ttnn_moe._C import emu as emulator
from ttnn_moe.emu.tensor import from_shards

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


def test_a_fabric_program_past_the_free_l1_slots_runs_by_the_groups_its_connections_join():
    """all_gather along axis 0 of an 8x8 mesh talks within each column: with an L1 tensor on every core the mesh's
    4096 cores outnumber the slots, and the columns (8 devices, 512 cores) run one at a time, with the same output,
    counters and modeled time as the mesh run at once."""
    mesh = emu.open_mesh_device(emu.MeshShape(8, 8))
    try:
        x = [torch.randn(32, 64).bfloat16().float() for _ in range(64)]
        shards = from_shards(x, emu.bfloat16, emu.TILE_LAYOUT, mesh)
        with emu.record_runs() as at_once:
            emu.all_gather(shards, 0, cluster_axis=0)
        resident = emu.from_torch(
            torch.zeros(64 * 32, 32), dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=mesh,
            memory_config=emu.L1_MEMORY_CONFIG,
        )  # fmt: skip
        assert 64 * 64 > emulator.runtime_state()["l1_slots_free"]
        with emu.record_runs() as grouped:
            gathered = emu.all_gather(shards, 0, cluster_axis=0)
        for d, got in enumerate(emu.get_device_tensors(gathered)):
            column = d % 8
            assert torch.equal(emu.to_torch(got), torch.cat([x[r * 8 + column] for r in range(8)]))
        assert len(at_once) == len(grouped) == 1
        first, second = at_once[0]["devices"], grouped[0]["devices"]
        assert first.keys() == second.keys()
        for device in first:
            assert first[device]["timing"]["duration_cycles"] == second[device]["timing"]["duration_cycles"]
        del resident
    finally:
        emu.close_mesh_device(mesh)
