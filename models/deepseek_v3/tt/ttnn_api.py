"""The one place the model gets its `ttnn` from.

Every model file imports `ttnn` (the tensor API: tensors, mesh mappers, collectives, matmul,
eltwise ops) and `ttnn_moe` (our MoE ops) from here, so the backend they run on is chosen in
one place, by $TTNN_MOE_BACKEND when the model is first imported:
- `emulator` (default): the Tensix emulator's module, which has ttnn's API;
- `hardware`: the real `ttnn` (0.81.1, Python 3.10 / 3.12), with the MoE ops attached as
  `ttnn.<op>`. Never run on silicon in this project's CI.
"""

import os

import ttnn_moe

BACKENDS = ("emulator", "hardware")


def _resolve(backend: str):
    if backend == "emulator":
        from ttnn_moe import emu  # noqa: PLC0415

        return emu
    if backend == "hardware":
        try:
            import ttnn as real  # noqa: PLC0415
        except ImportError as missing:
            raise RuntimeError(
                f"TTNN_MOE_BACKEND=hardware needs the real ttnn 0.81.1 with torch (Python 3.10 or 3.12, "
                f"tt-metal's environment on a Tenstorrent machine) and ttnn_moe built there: {missing}"
            ) from missing
        return ttnn_moe.attach(real)
    raise ValueError(f"TTNN_MOE_BACKEND must be one of {BACKENDS}, got {backend!r}")


def ttmetal_ops():
    """Tenstorrent's own ttnn ops that run as device programs on this backend, as attributes: on
    hardware the real `ttnn` (all of them); in the emulator the ones `ttnn_moe.emu.ttmetal` builds from
    the 0.81.1 wheel's program factories and kernels (the wheel is fetched into the cache on first use).
    Model code asks `hasattr(ttmetal_ops(), name)` before using one."""
    if BACKEND == "hardware":
        return ttnn
    from types import SimpleNamespace  # noqa: PLC0415

    from ttnn_moe._C import program  # noqa: PLC0415
    from ttnn_moe.emu import ttmetal  # noqa: PLC0415
    from ttnn_moe.emu.ttmetal import (  # noqa: PLC0415
        all_to_all_combine,
        all_to_all_dispatch,
        eltwise_binary,
        matmul,
        matmul_config,
        moe_expert_token_remap,
        permute,
        reduce_nc,
        repeat,
        sparse_matmul,
    )

    from tools.tt_wheel import ensure_ttnn_wheel  # noqa: PLC0415

    ttmetal.use_wheel(ensure_ttnn_wheel())
    return SimpleNamespace(
        mul=eltwise_binary.mul,
        add=eltwise_binary.add,
        all_to_all_dispatch=all_to_all_dispatch.all_to_all_dispatch,
        all_to_all_combine=all_to_all_combine.all_to_all_combine,
        moe_expert_token_remap=moe_expert_token_remap.moe_expert_token_remap,
        sparse_matmul=sparse_matmul.sparse_matmul,
        matmul=matmul.matmul,
        linear=matmul.linear,
        repeat=repeat.repeat,
        permute=permute.permute,
        sum=reduce_nc.reduce_sum,
        # The configuration types those matmuls take, named as ttnn's.
        MatmulMultiCoreReuseMultiCast1DProgramConfig=matmul_config.MatmulMultiCoreReuseMultiCast1DProgramConfig,
        WormholeComputeKernelConfig=matmul_config.WormholeComputeKernelConfig,
        MathFidelity=program.MathFidelity,
        CoreCoord=program.CoreCoord,
    )


BACKEND = os.environ.get("TTNN_MOE_BACKEND", "emulator")
ttnn = _resolve(BACKEND)
# The emulator's own instruments beyond ttnn's API (host_traffic, record_runs); None on hardware.
emulator = ttnn if BACKEND == "emulator" else None

__all__ = ["BACKEND", "emulator", "ttmetal_ops", "ttnn", "ttnn_moe"]
