"""The demo end to end, in-process: runs, logs, passes the PCC bar; refuses what it should."""

import pytest
import torch

from models.deepseek_v3 import demo
from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.pcc_floors import LAYER_PCC_FLOOR


def test_main_passes_and_logs_stages_histogram_counters_and_pcc(capsys):
    assert demo.main(["--mesh", "t3k", "--tokens", "8", "--seed", "3"]) == 0
    log = capsys.readouterr().err
    for text in (
        "dispatch.tokens",
        "reduce_scatter",
        "tokens per expert",
        "idle experts",
        "PCC mesh vs reference_moe",
        "emulator: tile matmuls",
        "ratio 1.00",
        "kernel builds",
        "emulator: fabric",
        "the layer as device ops (11 ops, 11 mesh program launches)",
        "host work inside forward: 0 host computations, 0 device-to-host reads",
    ):
        assert text in log
    pcc_line = next(line for line in log.splitlines() if "PCC mesh vs reference_moe" in line)
    assert float(pcc_line.split("reference_moe: ")[1].split()[0]) >= LAYER_PCC_FLOOR["bfloat16"]


def test_run_demo_returns_pcc_load_and_shapes():
    result = demo.run_demo(mesh="tg", tokens=16, seed=1)
    assert result.passed and result.pcc >= LAYER_PCC_FLOOR["bfloat16"]
    assert result.counters.tile_matmuls > 0
    assert result.expert_load.shape == (256,)
    assert int(result.expert_load.sum()) == 16 * 8  # every token reaches its 8 experts exactly once
    assert result.stage_shapes["input"] == [(4, 32)] * 32
    assert result.stage_shapes["reduce_scatter"] == [(4, 32)] * 32
    names = [op.name for op in result.device_ops]
    assert names[0].startswith("ttnn.all_gather") and names[-1].startswith("ttnn.reduce_scatter")
    assert sum(name.startswith("ttnn.to_layout") for name in names) == 1 and len(names) == 11
    assert all(op.device_programs == 32 for op in result.device_ops)
    # The op list accounts for every tile matmul and fabric byte of the forward pass.
    assert sum(op.tile_matmuls for op in result.device_ops) == result.counters.tile_matmuls
    assert sum(op.fabric_bytes for op in result.device_ops) == result.counters.fabric_bytes
    # all_gather: each of the 32 devices sends its (4, 32) slice (one tile) to the 7 others of its row.
    assert result.device_ops[0].fabric_bytes == 32 * 7 * 2048


def test_refuses_full_config_without_allow_large(capsys):
    assert demo.main(["--config", "full"]) == 2
    assert "--allow-large" in capsys.readouterr().err
    assert demo.weight_bytes(DeepseekV3MoEConfig()) > 20 * 2**30


def test_rejects_tokens_not_divisible_by_rows(capsys):
    assert demo.main(["--mesh", "quad", "--tokens", "20"]) == 2
    assert "--tokens 20" in capsys.readouterr().err


def test_expert_load_maps_device_counts_to_global_experts():
    # 4 experts on 2 devices: device 0 owns experts 0, 1; device 1 owns experts 2, 3.
    counts = [torch.tensor([[3], [0]], dtype=torch.int32), torch.tensor([[1], [5]], dtype=torch.int32)]
    assert demo.expert_load_from_dispatch(counts, 4).tolist() == [3, 0, 1, 5]


@pytest.mark.parametrize("expert_dtype", ["bfloat8_b", "bfloat4_b"])
def test_block_float_experts_pass_their_floor(capsys, expert_dtype):
    assert demo.main(["--mesh", "t3k", "--tokens", "8", "--expert-dtype", expert_dtype]) == 0
    log = capsys.readouterr().err
    assert f"experts {expert_dtype}" in log
    assert f"bar {LAYER_PCC_FLOOR[expert_dtype]}" in log


def test_the_hardware_backend_without_the_real_ttnn_stops_with_one_clear_line():
    """`demo.sh --backend hardware` where the real ttnn cannot be imported (no wheel for this Python):
    one line saying what is needed, no traceback."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run(
        [sys.executable, "-m", "models.deepseek_v3.demo", "--mesh", "t3k"],
        cwd=Path(__file__).resolve().parents[1],
        env=dict(os.environ, TTNN_MOE_BACKEND="hardware"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "demo: TTNN_MOE_BACKEND=hardware needs the real ttnn 0.81.1 with torch (Python 3.10 or 3.12, tt-metal's "
        "environment on a Tenstorrent machine) and ttnn_moe built there: No module named 'ttnn'"
    ]


def test_a_large_layer_converts_once_then_loads_from_the_weight_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TTNN_MOE_WEIGHT_CACHE", str(tmp_path))
    monkeypatch.setattr(demo, "LARGE_WEIGHT_BYTES", 0)  # the mini layer counts as large here
    first = demo.run_demo("t3k", "mini", tokens=8, allow_large=True)
    files = sorted(p.name for p in tmp_path.rglob("*.tensor"))
    assert len(files) == 2 * 8, files  # w1_w3 and w2 of each of the 8 devices

    def no_conversion(*args, **kwargs):
        raise AssertionError("the second run converted experts instead of loading them")

    monkeypatch.setattr(demo, "expert_shard_from_state_dict", lambda *a, **k: no_conversion)
    second = demo.run_demo("t3k", "mini", tokens=8, allow_large=True)
    assert second.pcc == first.pcc and torch.equal(second.expert_load, first.expert_load)
