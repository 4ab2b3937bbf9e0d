"""TtMoE.forward runs entirely on the emulated devices: between the input upload and the output
read-back nothing is computed on the host and no device tensor is read back (ttnn_moe.emu's
host_traffic), every step is a device program (record_runs), and the layer still matches the
fp32 reference."""

import pytest
import torch
from ttnn_moe.testing import assert_pcc

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.pcc_floors import LAYER_PCC_FLOOR
from models.deepseek_v3.reference import reference_moe
from models.deepseek_v3.tt import TtMoE, input_to_mesh, output_to_torch
from models.deepseek_v3.weights import random_moe_state_dict
from ttnn_moe import emu

CONFIG = DeepseekV3MoEConfig.mini()
TOKENS_PER_ROW = 32


@pytest.fixture(scope="module")
def weights():
    return random_moe_state_dict(CONFIG, seed=41)


@pytest.mark.parametrize("mesh_shape", [(1, 8), (2, 4), (4, 8), (8, 8)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_forward_does_no_host_work_and_matches_the_reference(weights, mesh_shape):
    rows, cols = mesh_shape
    x = torch.randn(TOKENS_PER_ROW * rows, CONFIG.hidden_size, generator=torch.Generator().manual_seed(rows))
    x = x.bfloat16().float()
    mesh_device = emu.open_mesh_device(emu.MeshShape(rows, cols))
    try:
        moe = TtMoE(weights, CONFIG, mesh_device, expert_dtype=emu.bfloat16)
        x_mesh = input_to_mesh(x, mesh_device)
        before = emu.host_traffic()
        with emu.record_runs() as runs:
            y_mesh = moe(x_mesh)
        traffic = emu.host_traffic() - before
        y = output_to_torch(y_mesh)
    finally:
        emu.close_mesh_device(mesh_device)
    assert traffic == emu.HostTraffic(), f"host work inside forward: {traffic.events}"
    # all_gather, gate, to_layout, dispatch, 2 routed moe_bmm (ROW_MAJOR tokens in, ROW_MAJOR expert
    # rows out), local reduce, combine, shared SwiGLU, shared down projection (adding the ROW_MAJOR
    # combined rows), reduce_scatter.
    assert len(runs) == 11
    assert all(len(run["devices"]) == rows * cols for run in runs)
    assert runs[0]["fabric"]["bytes"] > 0 and runs[-1]["fabric"]["bytes"] > 0  # the collectives
    assert_pcc(reference_moe(x, weights, CONFIG), y, LAYER_PCC_FLOOR["bfloat16"], f"TtMoE on {rows}x{cols}")
