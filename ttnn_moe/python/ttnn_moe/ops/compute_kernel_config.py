"""ttnn-style compute kernel configuration, and its translation into op attributes.

`WormholeComputeKernelConfig` mirrors ttnn's class of that name (same fields and
defaults); an op also accepts ttnn's own config object, or anything with these
attributes, since only the fields are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ttnn_moe import _C

MathFidelity = _C.program.MathFidelity


@dataclass(frozen=True)
class WormholeComputeKernelConfig:
    """Fields and defaults of ttnn.WormholeComputeKernelConfig (LoFi, approximate math)."""

    math_fidelity: Any = MathFidelity.LoFi
    math_approx_mode: bool = True
    fp32_dest_acc_en: bool = False
    packer_l1_acc: bool = False  # accepted for compatibility; the ops accumulate in DST


def _fidelity(value: Any) -> MathFidelity:
    """ttnn.MathFidelity, our MathFidelity, or its name ("HiFi2") -> our MathFidelity."""
    name = value if isinstance(value, str) else getattr(value, "name", None)
    if name is None or not hasattr(MathFidelity, name):
        valid = ", ".join(MathFidelity.__members__)
        raise ValueError(f"math_fidelity must be one of {valid}, got {value!r}")
    return getattr(MathFidelity, name)


def compute_attrs(config: Any) -> dict:
    """The C++ factories' compute attributes of a compute_kernel_config (None: HiFi4, bf16 DST)."""
    if config is None:
        config = WormholeComputeKernelConfig(math_fidelity=MathFidelity.HiFi4, math_approx_mode=False)
    missing = [f for f in ("math_fidelity", "fp32_dest_acc_en", "math_approx_mode") if not hasattr(config, f)]
    if missing:
        raise TypeError(f"compute_kernel_config {config!r} lacks {', '.join(missing)}")
    return {
        "math_fidelity": _fidelity(config.math_fidelity),
        "fp32_dest_acc_en": bool(config.fp32_dest_acc_en),
        "math_approx_mode": bool(config.math_approx_mode),
    }
