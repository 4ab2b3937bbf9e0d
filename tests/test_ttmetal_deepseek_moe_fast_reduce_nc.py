"""Tenstorrent's deepseek_moe_fast_reduce_nc (ttnn 0.81.1 reader / reduce / writer kernels, unmodified) on the
emulator (ttnn_moe.emu.ttmetal.deepseek_moe_fast_reduce_nc), against torch.

Exactness: with the op's default compute config (fp32 DST accumulation) every output element is the fp32 sum of
its bf16 inputs in order along the reduced dim, rounded once to bf16: the golden accumulates in that order, and
bf16 outputs are compared bit for bit; PCC against the float64 sum shows what that rounding costs. bfloat8_b
shares an exponent per 16 values, so its outputs are held to PCC and to a bound of the block format's step.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal import deepseek_moe_fast_reduce_nc as fr

pytestmark = pytest.mark.usefixtures("wheel")


def pcc(got: torch.Tensor, want: torch.Tensor) -> float:
    return float(np.corrcoef(got.flatten().double().numpy(), want.flatten().double().numpy())[0, 1])


def ordered_fp32_sum(x: torch.Tensor, dim: int) -> torch.Tensor:
    """The sum over dim as the device accumulates it: fp32, element 0 first."""
    acc = torch.zeros_like(x.select(dim, 0), dtype=torch.float32)
    for j in range(x.shape[dim]):
        acc = acc + x.select(dim, j).float()
    return acc.unsqueeze(dim)


def run(x: torch.Tensor, dim: int, split_size: int, dtype=ttnn.bfloat16, device=None, **kwargs):
    device = device or ttnn.open_device()
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    return t, fr.deepseek_moe_fast_reduce_nc(t, dim, split_size=split_size, **kwargs)


def check_bf16(x: torch.Tensor, dim: int, split_size: int, outputs) -> None:
    want = ordered_fp32_sum(x, dim)
    assert len(outputs) == x.shape[-1] // split_size
    for s, out in enumerate(outputs):
        got = ttnn.to_torch(out).float()
        piece = want[..., s * split_size : (s + 1) * split_size]
        assert list(got.shape) == list(piece.shape)
        assert torch.equal(got, piece.bfloat16().float()), (
            f"output {s}: {(got != piece.bfloat16().float()).sum()} differ"
        )
        exact = x.double().sum(dim, keepdim=True)[..., s * split_size : (s + 1) * split_size]
        assert pcc(got, exact) > 0.99999


@pytest.mark.parametrize(
    "shape, dim, split_size",
    [
        ((8, 1, 32, 512), 0, 64),  # decode: K = 8 expert slots, eight splits of two tiles
        ((2, 3, 64, 256), 1, 128),  # the reduced dim in the middle (granularity 3)
        ((4, 1, 64, 2560), 0, 320),  # 160 output tiles: 32 cores take 3, 32 take 2
        ((7, 1, 32, 256), 0, 32),  # a prime reduced size (granularity 7), eight one-tile splits
        ((11, 1, 32, 128), 0, 128),  # no divisor up to 8: granularity 1, one output
    ],
)
def test_bf16_sum_is_the_ordered_fp32_sum_rounded_once(shape, dim, split_size):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(sum(shape))) * 4).bfloat16()
    _, outputs = run(x, dim, split_size)
    check_bf16(x, dim, split_size, outputs)


def test_reads_each_input_tile_once_and_packs_each_output_tile_once():
    x = torch.randn(8, 1, 32, 512, generator=torch.Generator().manual_seed(3)).bfloat16()
    _, outputs = run(x, 0, 64)
    counters = ttnn.last_run_counters()
    assert counters["tiles_packed"] == 16
    assert counters["noc_bytes_read_dram"] == 8 * 16 * 2048
    assert counters["noc_bytes_written_dram"] == 16 * 2048


def test_l1_input_and_outputs():
    x = torch.randn(8, 1, 32, 256, generator=torch.Generator().manual_seed(5)).bfloat16()
    device = ttnn.open_device()
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device,
                        memory_config=ttnn.L1_MEMORY_CONFIG)  # fmt: skip
    outputs = fr.deepseek_moe_fast_reduce_nc(t, 0, split_size=32, output_memory_config=ttnn.L1_MEMORY_CONFIG)
    assert all(o.memory_config().buffer_type == ttnn.BufferType.L1 for o in outputs)
    check_bf16(x, 0, 32, outputs)


def test_bfloat8_b_within_the_block_format_step():
    x = torch.randn(8, 1, 32, 256, generator=torch.Generator().manual_seed(9)).bfloat16()
    t, outputs = run(x, 0, 128, dtype=ttnn.bfloat8_b)
    quantized = ttnn.to_torch(t).float()  # the values the device holds
    want = quantized.double().sum(0, keepdim=True)
    got = torch.cat([ttnn.to_torch(o).float() for o in outputs], dim=-1)
    assert pcc(got, want) > 0.9999
    # bfloat8_b keeps 7 mantissa bits under a shared exponent: an error of at most one step of the largest
    # value of each 16-value row segment.
    segment_max = want.abs().reshape(-1, 16).amax(dim=1, keepdim=True)
    assert ((got.double() - want).abs().reshape(-1, 16) <= segment_max / 64).all()


def test_every_device_of_a_tg_mesh_reduces_its_own_shard():
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(4, 8))
    x = torch.randn(32 * 4, 1, 32, 256, generator=torch.Generator().manual_seed(11)).bfloat16()
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh,
                        mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))  # fmt: skip
    outputs = fr.deepseek_moe_fast_reduce_nc(t, 0, split_size=32)
    per_device = [device_shards(o) for o in outputs]
    for d in range(32):
        want = ordered_fp32_sum(x[4 * d : 4 * d + 4], 0).bfloat16().float()
        got = torch.cat([per_device[s][d].float() for s in range(8)], dim=-1)
        assert torch.equal(got, want), f"device {d}"


@pytest.mark.parametrize(
    "shape, dim, split_size, kwargs, message",
    [
        ((8, 1, 32, 256), 2, 32, {}, "dim must be between 0 and 1"),
        ((8, 32, 256), -3, 48, {}, "width 256 must divide into 5 tile-aligned outputs"),
        ((8, 1, 32, 256), 0, 0, {}, "split_size must be a positive int, got 0"),
        ((32, 256), 0, 32, {}, "rank must be greater than 2, got 2"),
        ((8, 1, 32, 256), 0, 32,
         {"output_memory_config": ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1)},
         "is sharded"),
    ],
)  # fmt: skip
def test_rejects_bad_arguments_naming_them(shape, dim, split_size, kwargs, message):
    with pytest.raises(ValueError, match=message):
        run(torch.zeros(shape).bfloat16(), dim, split_size, **kwargs)
