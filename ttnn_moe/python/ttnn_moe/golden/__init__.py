"""Torch references (fp32 math) of every ttnn_moe op; the device ops are tested against these.

Routing index outputs are torch.int32 holding the device's uint32 values; routing weights stay
bf16 bit for bit. Mesh ops take and return per-device lists in row-major device order.
"""

from ttnn_moe.golden.block_float import round_to_block_float
from ttnn_moe.golden.collectives import all_gather, reduce_scatter
from ttnn_moe.golden.combine import all_to_all_combine_dense
from ttnn_moe.golden.dispatch import DispatchOutput, all_to_all_dispatch_dense, default_dispatch_capacity
from ttnn_moe.golden.experts import local_reduce_moe_output, moe_bmm, scatter_moe_input
from ttnn_moe.golden.gate import moe_gate
from ttnn_moe.golden.mesh import axis_groups, expert_owners, group_of, local_expert_slots
from ttnn_moe.golden.routing import count_invalid_expert_ids, prepare_moe_routing_tensors

__all__ = [
    "DispatchOutput",
    "all_gather",
    "all_to_all_combine_dense",
    "all_to_all_dispatch_dense",
    "axis_groups",
    "count_invalid_expert_ids",
    "default_dispatch_capacity",
    "expert_owners",
    "group_of",
    "local_expert_slots",
    "local_reduce_moe_output",
    "moe_bmm",
    "moe_gate",
    "prepare_moe_routing_tensors",
    "reduce_scatter",
    "round_to_block_float",
    "scatter_moe_input",
]
