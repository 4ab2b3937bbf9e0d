"""The 1D-multicast matmul programs we describe give every kernel what the real ttnn 0.81.1 runtime gave it.

tests/data/ttmetal_matmul_recorded_builds.json holds, per kernel, what the real runtime's JIT generated
for a DeepSeek-V3 w1 sparse_matmul and a dense matmul on a mock Wormhole n150 (its provenance field says
how): the named compile-time values, the named runtime args in order, the dataflow buffer ids, the
processor, NOC and defines. Our descriptions of the same calls must match them exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import ttnn_moe.emu as ttnn
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal.matmul_config import (
    MatmulMultiCoreReuseMultiCast1DProgramConfig,
    WormholeComputeKernelConfig,
    mcast_in0_1d_config,
)
from ttnn_moe.emu.ttmetal.matmul_mcast_1d import MatmulShape, Operand, Sparsity, mcast_in0_program
from ttnn_moe.emu.ttmetal.wheel import use_wheel

from tools.tt_wheel import ensure_ttnn_wheel

RECORDED = json.loads((Path(__file__).parent / "data" / "ttmetal_matmul_recorded_builds.json").read_text())["cases"]
BF16 = pd.DataFormat.Float16_b
TILE_BYTES = 2048
PROCESSOR = {"RISCV_0": "brisc", "RISCV_1": "ncrisc"}


@pytest.fixture(scope="module")
def device():
    use_wheel(ensure_ttnn_wheel())
    dev = ttnn.open_device(grid=(8, 8))
    yield dev
    ttnn.close_device(dev)
    use_wheel(None)


def operand(address: int, page: int = TILE_BYTES) -> Operand:
    return Operand(address, BF16, page)


def sparse_w1(device) -> pd.ProgramDescriptor:
    config = MatmulMultiCoreReuseMultiCast1DProgramConfig(
        compute_with_storage_grid_size=(8, 8),
        in0_block_w=2,
        out_subblock_h=1,
        out_subblock_w=1,
        out_block_h=1,
        out_block_w=1,
        per_core_M=1,
        per_core_N=1,
    )
    sparsity = Sparsity(
        tensor=Operand(0x4000, BF16, 32),
        bcast_A=True,
        get_batch_from_reader=False,
        num_batch_compute=3,
        compact_output=True,
    )
    return mcast_in0_program(
        device,
        MatmulShape(Mt=1, Kt=224, Nt=64, batchA=2, batchB=8),
        config,
        WormholeComputeKernelConfig(math_fidelity="LoFi", packer_l1_acc=True),
        operand(0x1000),
        operand(0x2000),
        operand(0x3000),
        sparsity,
    )


def dense_matmul(device) -> pd.ProgramDescriptor:
    config = mcast_in0_1d_config(1, 224, 2048, (8, 8))
    compute = WormholeComputeKernelConfig(math_fidelity="HiFi2", packer_l1_acc=True)
    shape = MatmulShape(Mt=1, Kt=224, Nt=64, batchA=1, batchB=1)
    return mcast_in0_program(device, shape, config, compute, operand(0x1000), operand(0x2000), operand(0x3000))


def kernel_name(kernel: pd.KernelDescriptor) -> str:
    return Path(kernel.kernel_source).stem


@pytest.mark.parametrize("case, build", [("sparse_w1", sparse_w1), ("dense_matmul", dense_matmul)])
def test_every_kernel_gets_what_the_real_runtime_gave_it(device, case, build):
    program = build(device)
    recorded = RECORDED[case]
    assert sorted(kernel_name(k) for k in program.kernels) == sorted(recorded)
    for kernel in program.kernels:
        want, got = recorded[kernel_name(kernel)], kernel.bindings
        name = f"{case} {kernel_name(kernel)}"
        assert dict(got.compile_time_values) == want["compile_time_values"], name
        assert list(got.runtime_args) == want["runtime_args"], name
        assert dict(got.dataflow_buffers) == want["dataflow_buffers"], name
        assert dict(kernel.defines) == want["defines"], name
        if want["processor"] == "compute":
            assert kernel.is_compute(), name
        else:
            assert PROCESSOR[kernel.config.processor.name] == want["processor"], name
            assert int(kernel.config.noc) == want["noc"], name
