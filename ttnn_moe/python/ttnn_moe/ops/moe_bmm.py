"""moe_bmm: per-expert matmul of the routed rows (gate, up and down projections of MoE experts)."""

from __future__ import annotations

from typing import Any, NamedTuple

from ttnn_moe import _C
from ttnn_moe.ops._arguments import require_bool
from ttnn_moe.ops._launch import launch, output_specs
from ttnn_moe.ops._readback import read_device_words
from ttnn_moe.ops.compute_kernel_config import compute_attrs

_TILE = _C.ops.moe_bmm.TILE_ROWS  # expert_offsets are multiples of it
# Words of the bmm_status record, as the kernels write them.
StatusWord = _C.ops.moe_bmm.StatusWord


class MoeBmmOutput(NamedTuple):
    output: Any  # (E_l, T, N) or (M, N) bfloat16, TILE or ROW_MAJOR (output_layout)
    bmm_status: Any  # (1, 8) uint32, words: StatusWord


_ACTIVATIONS = {None: _C.ops.moe_bmm.Activation.NONE, "swiglu": _C.ops.moe_bmm.Activation.SWIGLU}
_LAYOUTS = _C.program.Layout.__members__  # by name: ttnn's, the emulator's and ours share ROW_MAJOR, TILE


def moe_bmm(
    x: Any,
    w: Any,
    num_routed_tokens: Any,
    *,
    expert_offsets: Any = None,
    activation: str | None = None,
    addend: Any = None,
    output_layout: Any = None,
    memory_config: Any = None,
    compute_kernel_config: Any = None,
    output_tensor: Any = None,
    strict: bool = True,
    return_status: bool = False,
) -> Any:
    """out[l, rows] = x[l, rows] @ w[l] over the first count_l rows of every local expert l.

    padded:  x (E_l, T, Kd) bfloat16, w (E_l, Kd, N) TILE bfloat16, bfloat8_b or bfloat4_b,
             num_routed_tokens (E_l, 1) ROW_MAJOR uint32             -> (E_l, T, N) bfloat16
    grouped (expert_offsets given): x (M, Kd) bfloat16 packed by expert, expert l's
             rows at [expert_offsets[l], expert_offsets[l] + count_l), offsets (E_l, 1)
             ROW_MAJOR uint32 and multiples of 32                    -> (M, N) bfloat16
    Kd and N are multiples of 32. Contract: docs/ops/moe_bmm.md.

    x is TILE or ROW_MAJOR: row-major rows are read for the active row tiles only and tilized by
    the compute kernel. output_layout (ttnn's TILE_LAYOUT / ROW_MAJOR_LAYOUT; None: the layout of
    output_tensor if given, else TILE) ROW_MAJOR makes the compute kernel untilize what it packs and
    the writer write only the rows each expert has (rows past count_l are never written, in both
    modes: no zero rows, no addend rows).

    activation="swiglu": w is (E_l, Kd, 2N), the gate and up weights interleaved per column
    tile (`ttnn_moe.interleave_gate_up`), and out = silu(x @ w_gate) * (x @ w_up), still
    (.., N): one launch, each x tile read once for both products, only the product written.

    addend: a TILE or ROW_MAJOR bfloat16 tensor shaped like the output (leading 1s allowed);
    out = x @ w + addend, the sum starting from the addend's tile in DST (so adding it costs no
    extra pass over the output). A ROW_MAJOR addend is read as row strips and tilized by the
    compute kernel (bit for bit the TILE addend's result). In padded mode the inactive row tiles
    get the addend's values (a TILE addend only: a ROW_MAJOR one needs grouped mode or a ROW_MAJOR
    output); in grouped mode they stay unwritten. Not with activation="swiglu".

    Output-stationary: only the active output tiles, ceil(count_l / 32) row tiles times
    N/32 column tiles of each expert, are computed, split evenly over the device's core
    grid by the kernels from the counts in device memory; an expert without tokens costs
    nothing and its weights are never read.

    Weight reads: each weight block a core reads serves all the rows of its row block (up to
    8 row tiles of an expert); the cores computing the same columns in an expert's other row
    blocks get it by the same DRAM read and a multicast (weight rounds, docs/ops/moe_bmm.md):
    the shared expert at prefill reads every weight tile once. Weights stream through L1 in k
    blocks, so any Kd fits.

    Output contract (TILE output):
    - rows of an active row tile past count_l are exactly 0 (the kernel clears the x rows
      there before the matmul, whatever x holds);
    - padded mode: every other row of each expert's T range is 0 (zero tiles are written);
    - grouped mode: rows outside the active row tiles [off_l, off_l + 32*ceil(count_l/32))
      are not written (like the dispatch buffer it consumes, nothing reads them).
    ROW_MAJOR output: only the counted rows [off_l, off_l + count_l) (padded: [l*T, l*T + count_l))
    are written; every other row is left as it was.

    compute_kernel_config: ttnn-style (math_fidelity, fp32_dest_acc_en, math_approx_mode;
    packer_l1_acc is ignored). None means HiFi4 with bfloat16 DST accumulation.
    output_tensor: a preallocated output of the shape, dtype and layout above.
    strict: reads num_routed_tokens (and expert_offsets) back to check them (offsets multiples
    of 32, blocks inside x) and raises ValueError naming the bad value. That read is a
    validation sync outside the op; pass strict=False on the hot path, where the kernels
    clamp bad counts to the tensors instead of raising, and count what they could not compute
    as given in the (1, 8) uint32 bmm_status record: counts past their block (only its rows are
    computed), grouped offsets that are not multiples of 32 (computed from the row tile they fall
    in) and grouped blocks overlapping a lower expert's (both write the shared rows).
    return_status: return MoeBmmOutput(output, bmm_status) instead of the output alone.
    """
    require_bool("moe_bmm", "strict", strict)
    require_bool("moe_bmm", "return_status", return_status)
    if activation not in _ACTIVATIONS:
        raise ValueError(f"moe_bmm: activation must be None or 'swiglu', got {activation!r}")
    layout = _output_layout(output_layout, output_tensor)
    inputs = {"x": x, "w": w, "num_routed_tokens": num_routed_tokens}
    if expert_offsets is not None:
        inputs["expert_offsets"] = expert_offsets
    if addend is not None:
        inputs["addend"] = addend
    attributes = _C.ops.moe_bmm.Attributes(
        **compute_attrs(compute_kernel_config),
        activation=_ACTIVATIONS[activation],
        with_addend=addend is not None,
        output_layout=layout,
    )
    if strict:
        # Shapes, dtypes and layouts first, so the read-back below only sees valid tensors.
        output_specs("moe_bmm", inputs, attributes)
        _check_routing(x, num_routed_tokens, expert_offsets)
    result = MoeBmmOutput(
        *launch("moe_bmm", inputs, attributes, memory_config=memory_config, output_tensor=output_tensor)
    )
    return result if return_status else result.output


def _output_layout(output_layout: Any, output_tensor: Any) -> Any:
    """The output's layout from output_layout, else from output_tensor, else TILE."""
    if output_layout is None:
        return (
            _LAYOUTS["TILE"] if output_tensor is None else _layout_named(output_tensor.layout, "output_tensor.layout")
        )
    layout = _layout_named(output_layout, "output_layout")
    if output_tensor is not None and _layout_named(output_tensor.layout, "output_tensor.layout") != layout:
        raise ValueError(f"moe_bmm: output_layout is {layout.name} but output_tensor is {output_tensor.layout.name}")
    return layout


def _layout_named(layout: Any, what: str) -> Any:
    name = getattr(layout, "name", None)
    if name not in _LAYOUTS:
        raise ValueError(f"moe_bmm: {what} must be TILE or ROW_MAJOR, got {layout!r}")
    return _LAYOUTS[name]


def _check_routing(x: Any, num_routed_tokens: Any, expert_offsets: Any) -> None:
    rows = int(x.shape[-2])
    for device, counts in enumerate(read_device_words(num_routed_tokens)):
        where = f" on device {device}" if device else ""
        if expert_offsets is None:
            for l, count in enumerate(counts):
                if count > rows:
                    raise ValueError(f"moe_bmm: num_routed_tokens[{l}] = {count}{where} exceeds T = {rows}")
            continue
        offsets = read_device_words(expert_offsets)[device]
        for l, (offset, count) in enumerate(zip(offsets, counts)):
            if offset % _TILE:
                raise ValueError(f"moe_bmm: expert_offsets[{l}] = {offset}{where} is not a multiple of {_TILE}")
            if count > 0 and offset + count > rows:
                raise ValueError(
                    f"moe_bmm: expert {l} rows [{offset}, {offset + count}) (expert_offsets[{l}] = {offset}, "
                    f"num_routed_tokens[{l}] = {count}){where} exceed M = {rows}"
                )
        _check_disjoint(offsets, counts, where)


def _check_disjoint(offsets: list[int], counts: list[int], where: str) -> None:
    """Grouped blocks own their rows: two experts writing one output row would race."""
    blocks = sorted((offset, offset + count, l) for l, (offset, count) in enumerate(zip(offsets, counts)) if count)
    for (_, end, lower), (begin, _, upper) in zip(blocks, blocks[1:]):
        if begin < end:
            raise ValueError(
                f"moe_bmm: expert {upper} rows from expert_offsets[{upper}] = {begin}{where} overlap expert "
                f"{lower}'s rows ending at {end}"
            )
