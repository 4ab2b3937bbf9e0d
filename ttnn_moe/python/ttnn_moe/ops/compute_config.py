"""ttnn-style compute_kernel_config -> the fields our program factories take."""

from __future__ import annotations

from typing import Any

from ttnn_moe._C import program as _program


def fidelity_and_fp32_acc(compute_kernel_config: Any, *, default_fp32_acc: bool) -> tuple[Any, bool]:
    """(math_fidelity, fp32_dest_acc_en) of a WormholeComputeKernelConfig-like object (None: HiFi4, default acc).

    math_fidelity may be ours (`_C.program.MathFidelity`) or any enum/str named LoFi/HiFi2/HiFi3/HiFi4.
    """
    if compute_kernel_config is None:
        return _program.MathFidelity.HiFi4, default_fp32_acc
    fidelity = getattr(compute_kernel_config, "math_fidelity", _program.MathFidelity.HiFi4)
    name = str(getattr(fidelity, "name", fidelity)).split(".")[-1]
    if not hasattr(_program.MathFidelity, name) or name.startswith("_"):
        raise ValueError(f"compute_kernel_config.math_fidelity must be LoFi, HiFi2, HiFi3 or HiFi4, got {fidelity!r}")
    fp32_acc = getattr(compute_kernel_config, "fp32_dest_acc_en", default_fp32_acc)
    return getattr(_program.MathFidelity, name), bool(fp32_acc)
