"""The MoE device ops, ttnn-style: each takes and returns device tensors.

Every op runs through `ttnn_moe.ops._launch.launch` (C++ validation and output specs,
the cached mesh program, `generic_op`), so the same function runs on emulator tensors
and, after `ttnn_moe.attach(ttnn)`, on ttnn tensors. Each op's contract is its
docstring and docs/ops/<op>.md.
"""

from collections.abc import Callable

from ttnn_moe.ops.all_to_all_combine_dense import (
    CombineOutput,
    all_to_all_combine_dense,
    all_to_all_combine_dense_partials,
)
from ttnn_moe.ops.all_to_all_dispatch_dense import DispatchDenseOutput, DispatchHandle, all_to_all_dispatch_dense
from ttnn_moe.ops.expert_mapping import expert_mapping
from ttnn_moe.ops.local_reduce_moe_output import LocalReduceOutput, local_reduce_moe_output
from ttnn_moe.ops.moe_bmm import moe_bmm
from ttnn_moe.ops.moe_gate import GateOutput, moe_gate
from ttnn_moe.ops.prepare_moe_routing_tensors import RoutingTensors, prepare_moe_routing_tensors
from ttnn_moe.ops.scatter_moe_input import ScatterOutput, scatter_moe_input
from ttnn_moe.ops.swiglu_weights import interleave_gate_up

# name -> op function; `ttnn_moe.attach` sets each of these on the ttnn module.
OPS: dict[str, Callable] = {
    "moe_gate": moe_gate,
    "prepare_moe_routing_tensors": prepare_moe_routing_tensors,
    "scatter_moe_input": scatter_moe_input,
    "moe_bmm": moe_bmm,
    "local_reduce_moe_output": local_reduce_moe_output,
    "all_to_all_dispatch_dense": all_to_all_dispatch_dense,
    "all_to_all_combine_dense": all_to_all_combine_dense,
}

__all__ = [
    "OPS",
    *OPS,
    "CombineOutput",
    "DispatchDenseOutput",
    "DispatchHandle",
    "GateOutput",
    "LocalReduceOutput",
    "RoutingTensors",
    "ScatterOutput",
    "all_to_all_combine_dense_partials",
    "expert_mapping",
    "interleave_gate_up",
]
