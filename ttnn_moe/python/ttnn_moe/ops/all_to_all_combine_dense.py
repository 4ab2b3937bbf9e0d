"""all_to_all_combine_dense: slot rows back to their source devices, summed in fixed order."""

from __future__ import annotations

from typing import Any

from ttnn_moe import _C
from ttnn_moe.ops._mesh_launch import launch_mesh
from ttnn_moe.ops._readback import read_device_words

_OUTPUT_FORMATS = {"bfloat16": _C.program.DataFormat.Float16_b, "float32": _C.program.DataFormat.Float32}


def all_to_all_combine_dense(
    reduced: Any,
    slot_source: Any,
    num_slots: Any,
    *,
    cluster_axis: int,
    batch: int,
    seq: int,
    output_dtype: Any = "bfloat16",
    return_partials: bool = False,
    num_links: int = 1,
    topology: Any = None,
    memory_config: Any = None,
    strict: bool = True,
) -> Any:
    """Dense combine along `cluster_axis` (SPEC section 4).

    Per device: reduced (capacity, H) bfloat16 (local_reduce_moe_output over the dispatch
    slots), slot_source (capacity, 2) uint32 and num_slots (1,) uint32 from
    all_to_all_dispatch_dense. Returns per device (B, S, H) in output_dtype (bfloat16 or
    float32): the partials of the line's devices summed in ascending source position with
    fp32 accumulation (bitwise reproducible). return_partials=True returns instead the
    unsummed (D, B, S, H) bfloat16 partials, zero rows where a position sent nothing.

    num_links: fabric links per direction (1..4); slot s travels on link s % num_links.
    strict: read every device's combine_status after the op (a validation sync, outside the
    hot path) and raise ValueError on slot sources outside the line or the tokens.
    """
    dtype_name = str(getattr(output_dtype, "name", output_dtype)).split(".")[-1].lower()
    if dtype_name not in _OUTPUT_FORMATS:
        raise ValueError(f"all_to_all_combine_dense: output_dtype must be bfloat16 or float32, got {output_dtype!r}")
    for name, value, minimum in (("cluster_axis", cluster_axis, 0), ("batch", batch, 1), ("seq", seq, 1),
                                 ("num_links", num_links, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"all_to_all_combine_dense: {name} must be an int >= {minimum}, got {value!r}")
    output, partials, _presence, status = launch_mesh(
        "all_to_all_combine_dense",
        {"reduced": reduced, "slot_source": slot_source, "num_slots": num_slots},
        attrs={
            "cluster_axis": cluster_axis,
            "batch": batch,
            "seq": seq,
            "output_dtype": _OUTPUT_FORMATS[dtype_name],
            "return_partials": bool(return_partials),
            "num_links": num_links,
        },
        topology=topology,
        memory_config=memory_config,
    )
    if strict:
        for device, words in enumerate(read_device_words(status)):
            if words[0]:
                raise ValueError(f"all_to_all_combine_dense: device {device}: slot {words[1]} names a source outside "
                                 f"the line or the B*S tokens ({words[0]} bad slots)")
            if words[2]:
                raise ValueError(f"all_to_all_combine_dense: device {device}: num_slots exceeds the capacity")
    return partials if return_partials else output
