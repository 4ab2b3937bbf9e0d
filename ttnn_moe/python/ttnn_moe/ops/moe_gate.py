"""moe_gate: DeepSeek-V3 routing (sigmoid scores, group-limited top-k) as a device op."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from ttnn_moe import _C
from ttnn_moe.ops._arguments import require_bool, require_int
from ttnn_moe.ops._launch import launch
from ttnn_moe.ops._readback import status_records

_OP = "moe_gate"
_FLOAT32_MAX = 3.4028234663852886e38  # the kernels multiply in float32
# Words of a gate_status row, as the kernel writes them.
StatusWord = _C.ops.moe_gate.StatusWord
_INDEX_FORMATS = {"uint32": _C.program.DataFormat.UInt32, "uint16": _C.program.DataFormat.UInt16}


class GateOutput(NamedTuple):
    """Each token's K experts and weights, in the layout the dispatch and routing ops take."""

    topk_indices: Any  # (1, T, K) uint32 (or uint16) ROW_MAJOR: global expert ids, best biased score first
    topk_weights: Any  # (1, T, K) bfloat16 ROW_MAJOR
    gate_status: Any  # (ceil(T/32), 3) uint32: a row per 32-token tile, words: StatusWord


def moe_gate(
    x: Any,
    gate_weight: Any,
    e_score_correction_bias: Any,
    *,
    n_group: int,
    topk_group: int,
    top_k: int,
    routed_scaling_factor: float,
    norm_topk_prob: bool = True,
    indices_dtype: Any = "uint32",
    memory_config: Any = None,
    output_tensors: Any = None,
    strict: bool = True,
) -> GateOutput:
    """x (T, H) TILE bfloat16, gate_weight (E, H) TILE bfloat16 or float32 (nn.Linear's layout),
    e_score_correction_bias (E,) ROW_MAJOR float32 -> GateOutput of (1, T, K) tensors: the
    (B=1, S=T, K) all_to_all_dispatch_dense takes, and (T, K) for prepare_moe_routing_tensors.
    H is a multiple of 32; T and E are any (E split into n_group groups of at least 2). Contract: docs/ops/moe_gate.md.

    scores = sigmoid(x @ gate_weight^T), accumulated in fp32. Experts are chosen on scores + bias:
    the n_group equal groups of consecutive experts are ranked by the sum of their two best biased
    scores, the topk_group best are kept, and the top_k best biased scores among their experts are
    chosen, best first. Ties go to the lower group id, then the lower expert id. A weight is the
    chosen expert's unbiased score, divided by the sum of the K chosen scores when norm_topk_prob,
    times routed_scaling_factor.

    The device counts the tokens with a NaN among their biased scores (a NaN or infinity in x or the
    gate weight, or a NaN bias) in gate_status, a row per 32-token tile; such a token is still
    routed, its NaN scores ranking first. strict=True reads the record after the op (a validation
    sync, outside the hot path) and raises ValueError naming the first such token; strict=False
    reads nothing back.

    indices_dtype: uint32 (what this suite's ops take) or uint16 (what tt-metal's all_to_all_dispatch
    takes; E <= 65536), a ttnn dtype or its name.
    output_tensors: preallocated outputs in the order of GateOutput (entries may be None).
    """
    require_int(_OP, "n_group", n_group, minimum=1)
    require_int(_OP, "topk_group", topk_group, minimum=1)
    require_int(_OP, "top_k", top_k, minimum=1)
    require_bool(_OP, "norm_topk_prob", norm_topk_prob)
    require_bool(_OP, "strict", strict)
    if isinstance(routed_scaling_factor, bool) or not isinstance(routed_scaling_factor, (int, float)):
        raise TypeError(f"{_OP}: routed_scaling_factor must be a float, got {routed_scaling_factor!r}")
    if not math.isfinite(routed_scaling_factor) or not 0 < routed_scaling_factor <= _FLOAT32_MAX:
        raise ValueError(
            f"{_OP}: routed_scaling_factor must be in (0, {_FLOAT32_MAX:.6g}] (a float32), got {routed_scaling_factor}"
        )
    dtype_name = str(getattr(indices_dtype, "name", indices_dtype)).split(".")[-1].lower()
    if dtype_name not in _INDEX_FORMATS:
        raise ValueError(f"{_OP}: indices_dtype must be uint32 or uint16, got {indices_dtype!r}")
    attributes = _C.ops.moe_gate.Attributes(
        n_group=n_group,
        topk_group=topk_group,
        top_k=top_k,
        norm_topk_prob=norm_topk_prob,
        routed_scaling_factor=float(routed_scaling_factor),
        indices_format=_INDEX_FORMATS[dtype_name],
    )
    inputs = {"x": x, "gate_weight": gate_weight, "e_score_correction_bias": e_score_correction_bias}
    result = GateOutput(*launch(_OP, inputs, attributes, memory_config=memory_config, output_tensors=output_tensors))
    if strict:
        raise_on_gate_errors(result.gate_status)
    return result


def raise_on_gate_errors(gate_status: Any) -> None:
    """ValueError naming the first device and token whose biased scores hold a NaN."""
    words_per_row = int(_C.ops.moe_gate.STATUS_WORDS)
    for where, words in status_records(_OP, gate_status):
        rows = [words[i : i + words_per_row] for i in range(0, len(words), words_per_row)]
        total = sum(row[StatusWord.kNanTokens] for row in rows)
        first = next((row for row in rows if row[StatusWord.kNanTokens]), None)
        if first is not None:
            raise ValueError(
                f"{where}token {first[StatusWord.kFirstNanToken]} has a NaN score "
                f"(expert {first[StatusWord.kFirstNanExpert]}, score + bias; a NaN or infinity in x, "
                f"gate_weight or the bias) ({total} such tokens)"
            )
