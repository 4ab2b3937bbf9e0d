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


def ttmetal_optimized_ops():
    """The ttnn.experimental ops of tt-metal's optimized MoE decode flow, as attributes, from the emulator's
    descriptions of their factories (`ttnn_moe.emu.ttmetal`; moe_compute by its path: LocalOutput for a dispatch
    axis of one device, FullCcl else), plus the host placement of moe_compute's ring weights
    (`place_moe_compute_weights(mesh, device_experts)`, device d's experts taken one at a time from
    `device_experts(d)`) and its refusals before any weight is placed: of an intermediate size
    (`check_moe_compute_intermediate_size`) and of a FullCcl mesh and token count (`check_moe_compute_full_ccl`).
    Not on hardware: moe_compute's weights are placed by the emulator's preparation, and tt-metal's own model runs
    that flow there."""
    if BACKEND == "hardware":
        raise NotImplementedError(
            "the optimized tt-metal flow is described for the emulator only (moe_compute's ring weights are placed by "
            "the emulator's host preparation); on hardware tt-metal's own model runs it"
        )
    from types import SimpleNamespace  # noqa: PLC0415

    from ttnn_moe.emu.ttmetal import (  # noqa: PLC0415
        all_to_all_dispatch_metadata,
        deepseek_grouped_gate,
        deepseek_moe_fast_reduce_nc,
        deepseek_moe_reduce_scatter,
        moe_compute,
    )

    ttmetal_ops()  # fetches the wheel and points the emulator at it
    return SimpleNamespace(
        deepseek_grouped_gate=deepseek_grouped_gate.deepseek_grouped_gate,
        all_to_all_dispatch_metadata=all_to_all_dispatch_metadata.all_to_all_dispatch_metadata,
        DispatchAlgorithm=all_to_all_dispatch_metadata.DispatchAlgorithm,
        moe_compute_local_output=moe_compute.moe_compute_local_output,
        moe_compute_full_ccl=moe_compute.moe_compute_full_ccl,
        place_moe_compute_weights=moe_compute.place_expert_weights,
        check_moe_compute_intermediate_size=moe_compute.check_intermediate_size,
        check_moe_compute_full_ccl=moe_compute.check_full_ccl_mesh,
        deepseek_moe_fast_reduce_nc=deepseek_moe_fast_reduce_nc.deepseek_moe_fast_reduce_nc,
        deepseek_moe_reduce_scatter=deepseek_moe_reduce_scatter.deepseek_moe_reduce_scatter,
        # The shard layout of deepseek_moe_reduce_scatter's inputs (the emulator holds them interleaved).
        ReduceScatterInputShards=deepseek_moe_reduce_scatter.InputShards,
    )


BACKEND = os.environ.get("TTNN_MOE_BACKEND", "emulator")
ttnn = _resolve(BACKEND)
# The emulator's own instruments beyond ttnn's API (host_traffic, record_runs); None on hardware.
emulator = ttnn if BACKEND == "emulator" else None

__all__ = ["BACKEND", "emulator", "ttmetal_ops", "ttmetal_optimized_ops", "ttnn", "ttnn_moe"]
