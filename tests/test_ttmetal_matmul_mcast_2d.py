"""ttnn.matmul with a MatmulMultiCoreReuseMultiCastProgramConfig as tt-metal 0.81.1 builds it (the 2D-multicast
program, Metal 2.0 kernels unmodified from the wheel) on the emulator.

Results against torch in fp32 on the operands as the device holds them (PCC and max error by format), and every
kernel's named values, arg order, binding ids, processor, NOC and defines against what the real 0.81.1 runtime
generated for the same calls on a mock n150 (tests/data/ttmetal_matmul_mcast_2d_builds.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import ttnn_moe.emu as ttnn
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal import matmul as mm
from ttnn_moe.emu.ttmetal.matmul_config import MatmulMultiCoreReuseMultiCastProgramConfig, WormholeComputeKernelConfig
from ttnn_moe.emu.ttmetal.matmul_mcast_1d import MatmulShape, Operand
from ttnn_moe.emu.ttmetal.matmul_mcast_2d import mcast_2d_program
from ttnn_moe.testing import assert_pcc

RECORDED = json.loads((Path(__file__).parent / "data" / "ttmetal_matmul_mcast_2d_builds.json").read_text())["cases"]
PROCESSOR = {"RISCV_0": "brisc", "RISCV_1": "ncrisc"}
FORMATS = {"bfloat16": pd.DataFormat.Float16_b, "bfloat8_b": pd.DataFormat.Bfp8_b}


@pytest.fixture(scope="module")
def device():
    dev = ttnn.open_device(grid=(8, 8))
    yield dev
    ttnn.close_device(dev)


def config(in0_block_w, subblock, per_core, block=(None, None)):
    return MatmulMultiCoreReuseMultiCastProgramConfig(
        compute_with_storage_grid_size=(8, 8),
        in0_block_w=in0_block_w,
        out_subblock_h=subblock[0],
        out_subblock_w=subblock[1],
        per_core_M=per_core[0],
        per_core_N=per_core[1],
        out_block_h=block[0],
        out_block_w=block[1],
    )


def randn(shape, seed, scale=1.0):
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale).bfloat16().float()


def on_device(t, device, dtype):
    return ttnn.from_torch(t, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)


def held(t, device, dtype):
    """`t` as the device holds it in `dtype` (block-float formats round on the way in)."""
    return ttnn.to_torch(on_device(t, device, dtype)).float()


# (M, K, N, dtype, fidelity, in0_block_w, subblock, per-core block, out block, PCC): each case covers a layout
# of the program: the NOC split of the receivers, padded last row and column, one column (no in0 multicast),
# one row (no in1 multicast), output blocks smaller than the per-core block, block-float output.
CASES = {
    "4x3 cores, receivers on both NOCs": (96, 256, 128, ttnn.bfloat16, "HiFi4", 2, (1, 1), (1, 1), None, 0.99995),
    "padded last row and column, bfloat8_b": (320, 256, 224, ttnn.bfloat8_b, "LoFi", 2, (2, 2), (4, 2), None, 0.9998),
    "one column of cores": (64, 128, 64, ttnn.bfloat16, "HiFi2", 1, (1, 1), (1, 2), None, 0.99995),
    "one row of cores, bfloat4_b": (64, 192, 256, ttnn.bfloat4_b, "LoFi", 3, (2, 2), (2, 2), None, 0.985),
    "two output blocks per core": (128, 128, 256, ttnn.bfloat16, "HiFi2", 2, (1, 2), (2, 4), (2, 2), 0.99995),
}


@pytest.mark.parametrize("case", CASES)
def test_matmul_matches_torch(wheel, device, case):
    m, k, n, dtype, fidelity, in0_block_w, subblock, per_core, block, pcc = CASES[case]
    x, w = randn((1, 1, m, k), 1), randn((1, 1, k, n), 2, 0.1)
    program_config = config(in0_block_w, subblock, per_core, block or (None, None))
    compute = WormholeComputeKernelConfig(math_fidelity=fidelity, packer_l1_acc=True)
    out = mm.matmul(
        on_device(x, device, dtype),
        on_device(w, device, dtype),
        program_config=program_config,
        compute_kernel_config=compute,
        dtype=dtype,
    )
    assert out.dtype == dtype and list(out.shape) == [1, 1, m, n]
    golden = held(x, device, dtype) @ held(w, device, dtype)
    got = ttnn.to_torch(out).float()
    assert_pcc(golden, got, pcc, case)
    tolerance = {ttnn.bfloat16: 0.015, ttnn.bfloat8_b: 0.03, ttnn.bfloat4_b: 0.2}[dtype]
    assert (got - golden).abs().max() <= tolerance * golden.abs().max(), case


def recorded_program(device, case: str) -> pd.ProgramDescriptor:
    m, k, n, fmt, fidelity, in0_block_w, subblock, per_core = {
        "square": (512, 512, 512, "bfloat16", "HiFi4", 2, (1, 2), (2, 2)),
        "ragged": (320, 256, 224, "bfloat8_b", "LoFi", 2, (2, 2), (4, 2)),
        "one_column": (64, 128, 64, "bfloat16", "HiFi2", 1, (1, 1), (1, 2)),
    }[case]
    data_format = FORMATS[fmt]
    page = pd.tile_size_bytes(data_format)
    return mcast_2d_program(
        device,
        MatmulShape(Mt=m // 32, Kt=k // 32, Nt=n // 32, batchA=1, batchB=1),
        config(in0_block_w, subblock, per_core),
        WormholeComputeKernelConfig(math_fidelity=fidelity, packer_l1_acc=True),
        Operand(0x1000, data_format, page),
        Operand(0x2000, data_format, page),
        Operand(0x3000, data_format, page),
    )


def kernel_key(kernel: pd.KernelDescriptor) -> str:
    name = Path(kernel.kernel_source).stem
    return name if kernel.is_compute() else f"{name}@noc{int(kernel.config.noc)}"


@pytest.mark.parametrize("case", RECORDED)
def test_every_kernel_gets_what_the_real_runtime_gave_it(wheel, device, case):
    program = recorded_program(device, case)
    recorded = RECORDED[case]
    assert sorted(kernel_key(k) for k in program.kernels) == sorted(recorded)
    cb_formats = {f.buffer_index: int(f.data_format) for cb in program.cbs for f in cb.format_descriptors}
    for kernel in program.kernels:
        key = kernel_key(kernel)
        want, got = recorded[key], kernel.bindings
        name = f"{case} {key}"
        assert dict(got.compile_time_values) == want["compile_time_values"], name
        assert list(got.runtime_args) == want["runtime_args"], name
        assert dict(got.dataflow_buffers) == want["dataflow_buffers"], name
        assert dict(got.semaphores) == want["semaphores"], name
        assert {t.name: [t.accessor_cta_offset, t.address_crta_index] for t in got.tensors} == want["tensors"], name
        assert dict(kernel.defines) == want["defines"], name
        if want["processor"] == "compute":
            assert kernel.is_compute(), name
            formats = {buffer: cb_formats[index] for buffer, index in got.dataflow_buffers}
            assert formats == want["dataflow_buffer_formats"], name
        else:
            assert PROCESSOR[kernel.config.processor.name] == want["processor"], name


def test_the_noc_split_puts_each_core_on_its_side(wheel, device):
    """8x8 cores: columns 1-4 receive on the default NOCs, 5-7 (below the top row) on the other ones."""
    program = recorded_program(device, "square")
    cores = {kernel_key(k): {(c.x, c.y) for r in k.core_ranges.ranges for c in _cores(r)} for k in program.kernels}
    right = {(x, y) for x in range(5, 8) for y in range(1, 8)}
    assert cores["reader_bmm_tile_layout_in0_receiver_metal2@noc0"] == right
    assert cores["reader_bmm_tile_layout_in1_receiver_writer_padding_metal2@noc1"] == right
    assert cores["reader_bmm_tile_layout_in0_receiver_metal2@noc1"] == {
        (x, y) for x in range(1, 8) for y in range(8) if (x, y) not in right
    }
    assert cores["reader_bmm_tile_layout_in0_sender_padding_metal2@noc1"] == {(0, y) for y in range(8)}
    assert cores["reader_bmm_tile_layout_in1_sender_writer_padding_metal2@noc0"] == {(x, 0) for x in range(8)}


def _cores(core_range):
    return [
        pd.CoreCoord(x, y)
        for y in range(core_range.start.y, core_range.end.y + 1)
        for x in range(core_range.start.x, core_range.end.x + 1)
    ]


def test_a_grid_too_small_is_refused_naming_the_sizes(wheel, device):
    x, w = randn((1, 1, 320, 64), 3), randn((1, 1, 64, 64), 4)
    with pytest.raises(ValueError, match=r"needs 2x10 cores.*Mt 10 / per_core_M 1.*8x8"):
        mm.matmul(
            on_device(x, device, ttnn.bfloat16),
            on_device(w, device, ttnn.bfloat16),
            program_config=config(2, (1, 1), (1, 1)),
        )


def test_transpose_mcast_is_refused(wheel, device):
    x, w = randn((1, 1, 64, 64), 5), randn((1, 1, 64, 64), 6)
    transposed = MatmulMultiCoreReuseMultiCastProgramConfig(
        compute_with_storage_grid_size=(8, 8),
        in0_block_w=2,
        out_subblock_h=1,
        out_subblock_w=1,
        per_core_M=1,
        per_core_N=1,
        transpose_mcast=True,
    )
    with pytest.raises(ValueError, match="transpose_mcast"):
        mm.matmul(on_device(x, device, ttnn.bfloat16), on_device(w, device, ttnn.bfloat16), program_config=transposed)


def test_a_per_core_block_taller_than_the_matrix_is_refused(wheel, device):
    x, w = randn((1, 1, 64, 64), 7), randn((1, 1, 64, 64), 8)
    with pytest.raises(ValueError, match=r"Mt \(2\) is smaller than per_core_M \(3\)"):
        mm.matmul(
            on_device(x, device, ttnn.bfloat16),
            on_device(w, device, ttnn.bfloat16),
            program_config=config(2, (1, 1), (3, 2)),
        )
