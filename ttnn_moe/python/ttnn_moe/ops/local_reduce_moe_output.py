"""local_reduce_moe_output: weighted sum of expert outputs back into token (or slot) rows."""

from __future__ import annotations

from typing import Any, NamedTuple

from ttnn_moe import _C
from ttnn_moe.ops._arguments import require_bool, require_int
from ttnn_moe.ops._launch import launch
from ttnn_moe.ops._readback import read_device_words, status_records
from ttnn_moe.ops.compute_kernel_config import MathFidelity, WormholeComputeKernelConfig, compute_attrs

_OP = "local_reduce_moe_output"
# Words of the reduce_status record, as the kernel writes them.
StatusWord = _C.ops.local_reduce_moe_output.StatusWord
_OFFSET_ALIGNMENT = _C.ops.local_reduce_moe_output.OFFSET_ALIGNMENT
_NONE = _C.ops.local_reduce_moe_output.NONE  # a status word with no value (kUsedRowsRead: no num_used_rows)
# fp32 accumulation unless the caller's config says otherwise.
_DEFAULT_CONFIG = WormholeComputeKernelConfig(
    math_fidelity=MathFidelity.HiFi4, math_approx_mode=False, fp32_dest_acc_en=True
)


class LocalReduceOutput(NamedTuple):
    output: Any  # (num_out_rows, H) bfloat16 ROW_MAJOR
    row_overflow: Any  # (num_out_rows, 1) uint32: assignments of each row dropped past max_assignments_per_row
    reduce_status: Any  # (1, 14) uint32, words: StatusWord


def local_reduce_moe_output(
    y: Any,
    token_idx_map: Any,
    routed_token_weights: Any,
    num_routed_tokens: Any,
    *,
    num_out_rows: int,
    expert_offsets: Any = None,
    num_used_rows: Any = None,
    max_assignments_per_row: int | None = None,
    memory_config: Any = None,
    compute_kernel_config: Any = None,
    output_tensors: Any = None,
    strict: bool = True,
) -> LocalReduceOutput:
    """out[r] = sum over valid assignments (l, i) with token_idx_map[l, i] == r of weight * y[l, i].

    padded : y (E_l, T, H) bfloat16 ROW_MAJOR, token_idx_map (E_l, T) uint32,
             routed_token_weights (E_l, T) bfloat16, num_routed_tokens (E_l, 1) uint32
    grouped: y (M, H), token_idx_map (M,), routed_token_weights (M,), num_routed_tokens (E_l, 1),
             expert_offsets (E_l, 1) uint32 (multiples of 32)
    -> LocalReduceOutput(output (num_out_rows, H) bfloat16 ROW_MAJOR, row_overflow (num_out_rows, 1)
    uint32, reduce_status (1, 14) uint32). Entry (l, i) is valid iff i < num_routed_tokens[l].
    Contract: docs/ops/local_reduce_moe_output.md.

    num_used_rows: (1,) uint32 device tensor (e.g. dispatch's num_slots): only output rows
    [0, min(num_used_rows, num_out_rows)) are computed and written, the count read on the device;
    the rows after it (and their row_overflow words) keep whatever they held. None: every row.

    Token-stationary: the rows computed are split over the cores on the device; each core builds
    the inverse index of its rows there (work linear in the number of assignments). Sums run in
    ascending l with fp32 accumulation (compute_kernel_config.fp32_dest_acc_en, default True),
    so results are bitwise reproducible.

    max_assignments_per_row: most assignments one output row receives (the top-k K: a token or
    slot row gets one per choice). Each core's L1 assignment list is then sized rows_per_core x K
    instead of every map entry (None), which lets large grouped maps fit in L1. A row receiving
    more keeps its first K (ascending l, i); the rest are dropped on the device and counted in
    row_overflow (0 for every row that fits; all 0 without a bound).
    The device counts in reduce_status what it cannot sum: valid entries whose token_idx_map row
    is >= num_out_rows (summed nowhere), counts past the entries of their block (the rest are not
    read), grouped blocks that overlap a lower expert's (their rows would be summed twice) and
    grouped offsets that are not multiples of 32 (those blocks are not read); with num_used_rows,
    entries naming a row at or past it count as outside, and a count past num_out_rows is an error.
    output_tensors: preallocated outputs in the order of LocalReduceOutput (entries may be None).
    strict: read reduce_status and, with a bound, row_overflow after the op (a validation sync,
    outside the hot path) and raise ValueError naming the first bad entry, count, block or row;
    strict=False leaves them on the device.
    """
    require_int(_OP, "num_out_rows", num_out_rows, minimum=1)
    require_bool(_OP, "strict", strict)
    if max_assignments_per_row is not None:
        require_int(_OP, "max_assignments_per_row", max_assignments_per_row, minimum=1)
    compute = compute_attrs(compute_kernel_config or _DEFAULT_CONFIG)
    inputs = {
        "y": y,
        "token_idx_map": token_idx_map,
        "routed_token_weights": routed_token_weights,
        "num_routed_tokens": num_routed_tokens,
    }
    if expert_offsets is not None:
        inputs["expert_offsets"] = expert_offsets
    if num_used_rows is not None:
        inputs["num_used_rows"] = num_used_rows
    attributes = _C.ops.local_reduce_moe_output.Attributes(
        num_out_rows=num_out_rows,
        math_fidelity=compute["math_fidelity"],
        fp32_dest_acc_en=compute["fp32_dest_acc_en"],
        max_assignments_per_row=max_assignments_per_row or 0,
        has_used_rows=num_used_rows is not None,
    )
    result = LocalReduceOutput(
        *launch(_OP, inputs, attributes, memory_config=memory_config, output_tensors=output_tensors)
    )
    if strict:
        raise_on_reduce_errors(result.reduce_status, num_out_rows=num_out_rows, grouped=expert_offsets is not None)
        if max_assignments_per_row is not None:  # without a bound no row can overflow
            raise_on_row_overflow(result.row_overflow, result.reduce_status, max_assignments_per_row)
    return result


def raise_on_reduce_errors(reduce_status: Any, *, num_out_rows: int, grouped: bool) -> None:
    """ValueError naming the first device with num_used_rows past num_out_rows, a map row past the
    rows computed, a count past its block or overlapping grouped blocks."""
    for where, words in status_records(_OP, reduce_status):
        used = words[StatusWord.kUsedRowsRead]
        if used != _NONE and used > num_out_rows:
            raise ValueError(f"{where}num_used_rows = {used} exceeds num_out_rows={num_out_rows}")
        if words[StatusWord.kBadRows]:
            expert, index = words[StatusWord.kFirstBadExpert], words[StatusWord.kFirstBadIndex]
            entry = f"token_idx_map[{index}] (expert {expert})" if grouped else f"token_idx_map[{expert}, {index}]"
            rows = f"num_out_rows={num_out_rows}" if used == _NONE else f"num_used_rows={used}"
            raise ValueError(
                f"{where}{entry} = {words[StatusWord.kFirstBadRow]} is outside [0, {rows}) "
                f"({words[StatusWord.kBadRows]} such entries, summed nowhere)"
            )
        if words[StatusWord.kClampedCounts]:
            raise ValueError(
                f"{where}num_routed_tokens[{words[StatusWord.kFirstClampedExpert]}] = "
                f"{words[StatusWord.kFirstClampedCount]} runs past the entries of its block "
                f"({words[StatusWord.kClampedCounts]} such experts)"
            )
        if words[StatusWord.kMisalignedOffsets]:
            expert, offset = words[StatusWord.kFirstMisalignedExpert], words[StatusWord.kFirstMisalignedOffset]
            raise ValueError(
                f"{where}expert_offsets[{expert}] = {offset} is not a multiple of {_OFFSET_ALIGNMENT}"
                f" ({words[StatusWord.kMisalignedOffsets]} such experts with tokens, their blocks not read)"
            )
        if words[StatusWord.kOverlappingBlocks]:
            raise ValueError(
                f"{where}expert_offsets: the block of expert {words[StatusWord.kFirstOverlapExpert]} overlaps a lower "
                f"expert's ({words[StatusWord.kOverlappingBlocks]} such experts)"
            )


def raise_on_row_overflow(row_overflow: Any, reduce_status: Any, max_assignments_per_row: int | None) -> None:
    """ValueError naming the first row (on any device) that received more than the bound; only the
    rows computed (reduce_status) are looked at, the others' words were not written."""
    computed = [words[StatusWord.kRowsComputed] for words in read_device_words(reduce_status)]
    for device, dropped in enumerate(read_device_words(row_overflow)):
        rows = [r for r, n in enumerate(dropped[: computed[device]]) if n]
        if rows:
            r = rows[0]
            raise ValueError(
                f"{_OP}: output row {r} (device {device}) receives {max_assignments_per_row} + "
                f"{dropped[r]} assignments, more than max_assignments_per_row={max_assignments_per_row}; "
                f"{sum(dropped)} dropped over {len(rows)} rows"
            )
