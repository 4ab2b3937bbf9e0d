"""`ttnn_moe.attach(ttnn)`: make the MoE ops callable as `ttnn.<op>` on hardware."""

from __future__ import annotations

from typing import Any


def attach(ttnn: Any = None) -> Any:
    """Registers the hardware target for `ttnn.Tensor` and sets `ttnn.<op>` for every op in
    `ttnn_moe.ops.OPS` (`ttnn.moe_bmm`, `ttnn.prepare_moe_routing_tensors`, ...).

    `ttnn` defaults to the importable real module. Returns the module. Never run on hardware
    in this project's CI: see `ttnn_moe.hardware`.
    """
    if ttnn is None:
        import ttnn  # noqa: PLC0415  (only when the caller wants the real one)
    from ttnn_moe.hardware import HardwareTarget
    from ttnn_moe.ops import OPS, _launch

    _launch.register_target(HardwareTarget(ttnn))
    for name, op in OPS.items():
        setattr(ttnn, name, op)
    return ttnn
