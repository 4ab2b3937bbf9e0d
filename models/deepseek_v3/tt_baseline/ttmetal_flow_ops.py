"""The tt-metal ops the classic flow calls, each resolved once: the backend's device program where it
has one (`ttnn_api.ttmetal_ops()`; on hardware every op), else the layer's host stand-in
(`host_standins`). `host_steps` lists, in call order, the ops that ran as stand-ins. The configuration
types the flow's matmuls take come from the same place."""

from __future__ import annotations

from models.deepseek_v3.tt.ttnn_api import ttmetal_ops
from models.deepseek_v3.tt_baseline.host_standins import HostStandIns

# The ops of the flow that no backend may lack: tt-metal's MoE ops and its layout glue.
FLOW_OPS = (
    "all_to_all_dispatch",
    "moe_expert_token_remap",
    "sparse_matmul",
    "linear",
    "mul",
    "add",
    "all_to_all_combine",
    "repeat",
    "permute",
    "sum",
)
CONFIG_TYPES = (
    "MatmulMultiCoreReuseMultiCast1DProgramConfig",
    "WormholeComputeKernelConfig",
    "MathFidelity",
    "CoreCoord",
)


class TtMetalFlowOps:
    def __init__(self):
        device_ops = ttmetal_ops()
        stand_ins = HostStandIns()
        self.on_device = {name for name in FLOW_OPS if hasattr(device_ops, name)}
        self.host_steps: list[str] = []
        for name in CONFIG_TYPES:
            setattr(self, name, getattr(device_ops, name))
        for name in FLOW_OPS:
            if name in self.on_device:
                setattr(self, name, getattr(device_ops, name))
            elif hasattr(stand_ins, name):
                setattr(self, name, self._counted(name, getattr(stand_ins, name)))
            else:
                raise NotImplementedError(
                    f"ttnn.{name} has neither a device program on this backend nor a host stand-in"
                )

    def _counted(self, name: str, stand_in):
        def run(*args, **kwargs):
            self.host_steps.append(name)
            return stand_in(*args, **kwargs)

        return run
