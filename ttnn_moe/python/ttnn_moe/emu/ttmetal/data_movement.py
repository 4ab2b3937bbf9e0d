"""Data-movement kernel placement: which RISC a kernel runs on and which NOC it issues on.

ttnn's NOC enum names NOC 0 and NOC 1 after the RISC that uses each by default; tt-metal's factories
often pair them otherwise (a writer on RISCV_0 issuing on NOC 1), so both are given explicitly.
"""

from __future__ import annotations

from ttnn_moe._C import program as pd

RISCV_0, RISCV_1 = pd.DataMovementProcessor.RISCV_0, pd.DataMovementProcessor.RISCV_1
NOC_0, NOC_1 = pd.NOC.RISCV_0_default, pd.NOC.RISCV_1_default


def data_movement(processor: pd.DataMovementProcessor, noc: pd.NOC) -> pd.DataMovementConfigDescriptor:
    return pd.DataMovementConfigDescriptor(processor=processor, noc=noc)
