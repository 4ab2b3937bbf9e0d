"""Every bad input of the bad-input table (docs/bad_inputs.md): one Case per row.

A case calls the real op on emulator tensors with one mistake a caller can make. Either the op
refuses it before running (`error` with `message`, a substring naming the argument and its value),
or only the device can see it: then `counted` is the status record's words with strict=False
({field of the result: {word: value on every device}}), and strict mode raises `error` with
`message` after the op. The table in the docs is rendered from this list (tests/test_bad_inputs.py
checks the two agree), so it cannot drift from what the ops do.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import torch
from ttnn_moe.emu.tensor import device_shards, from_shards

import ttnn_moe
from ttnn_moe import emu

T, K, E, H = 4, 2, 4, 32  # single device: tokens, top-k, experts (all local), hidden
B, S, D = 1, 4, 2  # mesh ops: batch, sequence, devices of the 1x2 line
NONE = 0xFFFFFFFF


@dataclasses.dataclass(frozen=True)
class Env:
    device: Any  # a single emulated device
    mesh: Any  # a 1x2 emulated mesh


@dataclasses.dataclass(frozen=True)
class Case:
    op: str
    bad_input: str
    call: Callable[[Env, bool], Any]  # (env, strict) -> the op's result
    error: type[Exception]
    message: str
    counted: dict[str, dict[str, int | tuple[int, ...]]] | None = None  # a tuple: one value per device

    def outcome(self) -> str:
        """The table's "what happens" cell."""
        raised = f"{self.error.__name__}: {self.message}"
        if self.counted is None:
            return raised
        words = "; ".join(
            f"{field} " + ", ".join(f"{word}={value}" for word, value in values.items())
            for field, values in self.counted.items()
        )
        return f"counted: {words}; strict: {raised}"


def _rm(device: Any, t: torch.Tensor, dtype: Any) -> Any:
    return emu.from_torch(t, dtype=dtype, layout=emu.ROW_MAJOR_LAYOUT, device=device)


def _tile(device: Any, t: torch.Tensor, dtype: Any = emu.bfloat16) -> Any:
    return emu.from_torch(t, dtype=dtype, layout=emu.TILE_LAYOUT, device=device)


def _ints(rows: list) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.int64)


# A valid routing of T tokens over E local experts, and its tables (every expert gets 2 tokens).
IDS = [[0, 1], [1, 2], [2, 3], [3, 0]]
COUNTS = [[2], [2], [2], [2]]
TOKENS = [[0, 3, 0, 0], [0, 1, 0, 0], [1, 2, 0, 0], [2, 3, 0, 0]]


def prepare(env: Env, strict: bool, **given: Any) -> Any:
    d = env.device
    args = {
        "selected_experts": _rm(d, _ints(IDS), emu.uint32),
        "routing_weights": _rm(d, torch.ones(T, K).bfloat16(), emu.bfloat16),
        "expert_mapping": _rm(d, torch.ones(1, 1, E, 1, dtype=torch.int32), emu.int32),
    }
    args.update({k: v(d) if callable(v) else v for k, v in given.items() if k in args})
    kwargs = {k: v for k, v in given.items() if k not in args}
    return ttnn_moe.prepare_moe_routing_tensors(*args.values(), strict=strict, **kwargs)


def prepare_on_mesh(env: Env, strict: bool, owner: list[int]) -> Any:
    """prepare on the 1x2 mesh with expert e placed on device owner[e]."""
    mapping = torch.zeros(1, 1, E, D, dtype=torch.int32)
    mapping[0, 0, torch.arange(E), torch.tensor(owner)] = 1
    replicate = lambda t, dtype: from_shards([t] * D, dtype, emu.ROW_MAJOR_LAYOUT, env.mesh)  # noqa: E731
    return ttnn_moe.prepare_moe_routing_tensors(
        replicate(_ints(IDS), emu.uint32),
        replicate(torch.ones(T, K).bfloat16(), emu.bfloat16),
        replicate(mapping, emu.int32),
        strict=strict,
    )


def scatter(env: Env, strict: bool, **given: Any) -> Any:
    d = env.device
    args = {
        "x": _rm(d, torch.ones(T, H).bfloat16(), emu.bfloat16),
        "num_routed_tokens": _rm(d, _ints(COUNTS), emu.uint32),
        "routed_tokens": _rm(d, _ints(TOKENS), emu.uint32),
    }
    args.update({k: v(d) if callable(v) else v for k, v in given.items() if k in args})
    kwargs = {k: v for k, v in given.items() if k not in args}
    return ttnn_moe.scatter_moe_input(*args.values(), strict=strict, **kwargs)


GROUPED_OFFSETS = [[0], [32], [64], [96]]


def bmm(env: Env, strict: bool, **given: Any) -> Any:
    d = env.device
    grouped = "expert_offsets" in given
    args = {
        "x": _tile(d, torch.ones(128, H) if grouped else torch.ones(E, T, H)),
        "w": _tile(d, torch.ones(E, H, 32)),
        "num_routed_tokens": _rm(d, _ints(COUNTS), emu.uint32),
    }
    args.update({k: v(d) if callable(v) else v for k, v in given.items() if k in args})
    kwargs = {k: (v(d) if callable(v) else v) for k, v in given.items() if k not in args}
    kwargs.setdefault("return_status", strict is False)  # strict=False rows read bmm_status
    return ttnn_moe.moe_bmm(*args.values(), strict=strict, **kwargs)


def reduce(env: Env, strict: bool, **given: Any) -> Any:
    d = env.device
    grouped = "expert_offsets" in given
    entries = (128,) if grouped else (E, T)
    args = {
        "y": _rm(d, torch.ones(*entries, H).bfloat16(), emu.bfloat16),
        "token_idx_map": _rm(d, torch.zeros(entries, dtype=torch.int32), emu.uint32),
        "routed_token_weights": _rm(d, torch.ones(entries).bfloat16(), emu.bfloat16),
        "num_routed_tokens": _rm(d, _ints(COUNTS), emu.uint32),
    }
    args.update({k: v(d) if callable(v) else v for k, v in given.items() if k in args})
    kwargs = {"num_out_rows": T, **{k: (v(d) if callable(v) else v) for k, v in given.items() if k not in args}}
    return ttnn_moe.local_reduce_moe_output(*args.values(), strict=strict, **kwargs)


def _mesh_ids(ids: list) -> list[torch.Tensor]:
    return [_ints(ids).reshape(B, S, K)] * D


def dispatch(env: Env, strict: bool, *, ids: list | None = None, mapping: torch.Tensor | None = None, **given: Any):
    m = env.mesh
    args = {
        "x": from_shards([torch.ones(B, S, H).bfloat16()] * D, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, m),
        "topk_indices": from_shards(_mesh_ids(ids or IDS), emu.uint32, emu.ROW_MAJOR_LAYOUT, m),
        "topk_weights": from_shards([torch.ones(B, S, K).bfloat16()] * D, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, m),
        "expert_mapping": from_shards(
            [ttnn_moe.expert_mapping(E, D) if mapping is None else mapping] * D, emu.int32, emu.ROW_MAJOR_LAYOUT, m
        ),
    }
    args.update({k: v(m) if callable(v) else v for k, v in given.items() if k in args})
    kwargs = {"cluster_axis": 1, **{k: v for k, v in given.items() if k not in args}}
    return ttnn_moe.all_to_all_dispatch_dense(*args.values(), strict=strict, **kwargs)


def combine(env: Env, strict: bool, *, bad_source: int | None = None, **given: Any) -> Any:
    handle = dispatch(env, True).handle
    if bad_source is not None:  # slot 0 of every device names a line position past the line
        shards = [s.clone() for s in device_shards(handle.slot_source)]
        for shard in shards:
            shard[0, 0] = bad_source
        bad = from_shards(shards, emu.uint32, emu.ROW_MAJOR_LAYOUT, env.mesh)
        handle = dataclasses.replace(handle, slot_source=bad)
    reduced = from_shards([torch.ones(handle.capacity, H).bfloat16()] * D, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, env.mesh)
    args = {"reduced": reduced, "handle": handle}
    args.update({k: v(env.mesh) if callable(v) else v for k, v in given.items() if k in args})
    kwargs = {k: v for k, v in given.items() if k not in args}
    return ttnn_moe.all_to_all_combine_dense(*args.values(), strict=strict, **kwargs)


GATE_KW = {"n_group": 2, "topk_group": 1, "top_k": 2, "routed_scaling_factor": 2.5}


def gate(env: Env, strict: bool, **given: Any) -> Any:
    d = env.device
    args = {
        "x": _tile(d, torch.ones(T, 64)),
        "gate_weight": _tile(d, torch.ones(8, 64)),
        "e_score_correction_bias": _rm(d, torch.zeros(8), emu.float32),
    }
    args.update({k: v(d) if callable(v) else v for k, v in given.items() if k in args})
    kwargs = {**GATE_KW, "strict": strict, **{k: v for k, v in given.items() if k not in args}}
    return ttnn_moe.moe_gate(*args.values(), **kwargs)


def _with(t: torch.Tensor, index: tuple[int, ...], value: float) -> torch.Tensor:
    t = t.clone()
    t[index] = value
    return t


def _u32(rows: list) -> Callable[[Any], Any]:
    return lambda d: _rm(d, _ints(rows), emu.uint32)


def _status(field: str, **words: int | tuple[int, ...]) -> dict[str, dict[str, int | tuple[int, ...]]]:
    return {field: words}


_P = "prepare_moe_routing_tensors"
_SC = "scatter_moe_input"
_BMM = "moe_bmm"
_LR = "local_reduce_moe_output"
_DI = "all_to_all_dispatch_dense"
_CO = "all_to_all_combine_dense"
_G = "moe_gate"
_U32_RANGE = "[1, 4294967295]"

CASES: list[Case] = [
    # prepare_moe_routing_tensors
    Case(
        _P,
        "selected_experts a torch.Tensor",
        lambda e, s: prepare(e, s, selected_experts=_ints(IDS)),
        TypeError,
        "prepare_moe_routing_tensors: selected_experts is a torch.Tensor, expected a device tensor",
    ),
    Case(
        _P,
        "selected_experts float32",
        lambda e, s: prepare(e, s, selected_experts=lambda d: _rm(d, torch.zeros(T, K), emu.float32)),
        ValueError,
        "selected_experts must be uint32, got float32",
    ),
    Case(
        _P,
        "selected_experts int32",
        lambda e, s: prepare(e, s, selected_experts=lambda d: _rm(d, _ints(IDS), emu.int32)),
        ValueError,
        "selected_experts must be uint32, got int32",
    ),
    Case(
        _P,
        "selected_experts TILE",
        lambda e, s: prepare(e, s, selected_experts=lambda d: _tile(d, _ints(IDS), emu.uint32)),
        ValueError,
        "selected_experts must be ROW_MAJOR_LAYOUT, got TILE_LAYOUT",
    ),
    Case(
        _P,
        "selected_experts rank 3",
        lambda e, s: prepare(e, s, selected_experts=_u32([IDS, IDS])),
        ValueError,
        "selected_experts must have rank 2 (leading 1s allowed), got shape (2, 4, 2)",
    ),
    Case(
        _P,
        "routing_weights (T, K+1)",
        lambda e, s: prepare(e, s, routing_weights=lambda d: _rm(d, torch.ones(T, 3).bfloat16(), emu.bfloat16)),
        ValueError,
        "routing_weights (4, 3) must have the shape of selected_experts (4, 2)",
    ),
    Case(
        _P,
        "routing_weights float32",
        lambda e, s: prepare(e, s, routing_weights=lambda d: _rm(d, torch.ones(T, K), emu.float32)),
        ValueError,
        "routing_weights must be bfloat16, got float32",
    ),
    Case(
        _P,
        "expert_mapping float32",
        lambda e, s: prepare(e, s, expert_mapping=lambda d: _rm(d, torch.ones(1, 1, E, 1), emu.float32)),
        ValueError,
        "expert_mapping must be uint16, uint32 or int32, got float32",
    ),
    Case(
        _P,
        "expert_mapping for 2 devices on 1",
        lambda e, s: prepare(e, s, expert_mapping=lambda d: _rm(d, ttnn_moe.expert_mapping(E, 2), emu.int32)),
        ValueError,
        "expert_mapping (1, 1, 4, 2) covers 2 devices, the 1x1 mesh has 1",
    ),
    Case(
        _P,
        "routing_weights on another device",
        lambda e, s: prepare(
            e,
            s,
            routing_weights=from_shards([torch.ones(T, K).bfloat16()] * D, emu.bfloat16, emu.ROW_MAJOR_LAYOUT, e.mesh),
        ),
        ValueError,
        "prepare_moe_routing_tensors: routing_weights is on emu.MeshDevice(1x2, grid=(1, 1)), "
        "selected_experts on emu.Device(id=0, grid=(2, 2)): all inputs must be on one device or mesh",
    ),
    Case(
        _P,
        "strict=1",
        lambda e, s: prepare(e, 1),
        TypeError,
        "prepare_moe_routing_tensors: strict must be a bool, got 1",
    ),
    Case(
        _P,
        "output_tensors=5",
        lambda e, s: prepare(e, s, output_tensors=5),
        TypeError,
        "prepare_moe_routing_tensors: output_tensors must be a list of tensors (or None entries), got 5",
    ),
    Case(
        _P,
        "output_tensors[0] of the wrong shape",
        lambda e, s: prepare(e, s, output_tensors=[_rm(e.device, torch.zeros(3, 1, dtype=torch.int32), emu.uint32)]),
        ValueError,
        "output_tensors[0] is [3, 1] uint32 ROW_MAJOR, the op writes [4, 1] uint32 ROW_MAJOR",
    ),
    Case(
        _P,
        "expert id >= E",
        lambda e, s: prepare(e, s, selected_experts=_u32([[0, 1], [1, 9], [2, 3], [3, 0]])),
        ValueError,
        "expert id 9 at (t, k) = (1, 1) is outside [0, 4) (1 invalid ids in total)",
        _status("routing_status", num_invalid_ids=1, first_invalid_t=1, first_invalid_k=1, first_invalid_id=9),
    ),
    Case(
        _P,
        "expert id 0xFFFFFFFF",
        lambda e, s: prepare(e, s, selected_experts=_u32([[0, 1], [1, 2], [2, 3], [NONE, 0]])),
        ValueError,
        "expert id 4294967295 at (t, k) = (3, 0) is outside [0, 4)",
        _status("routing_status", num_invalid_ids=1, first_invalid_t=3, first_invalid_k=0, first_invalid_id=NONE),
    ),
    Case(
        _P,
        "expert_mapping row of zeros",
        lambda e, s: prepare(
            e,
            s,
            expert_mapping=lambda d: _rm(
                d, torch.tensor([1, 1, 0, 1], dtype=torch.int32).reshape(1, 1, E, 1), emu.int32
            ),
        ),
        ValueError,
        "first row that is not one-hot: expert 2, 2 errors",
        _status("routing_status", mapping_errors=2, first_bad_expert=2),
    ),
    Case(
        _P,
        "expert_mapping entry 2",
        lambda e, s: prepare(
            e,
            s,
            expert_mapping=lambda d: _rm(
                d, torch.tensor([1, 2, 1, 1], dtype=torch.int32).reshape(1, 1, E, 1), emu.int32
            ),
        ),
        ValueError,
        "first row that is not one-hot: expert 1, 2 errors",
        _status("routing_status", mapping_errors=2, first_bad_expert=1),
    ),
    Case(
        _P,
        "a device given 3 of E=4 experts on a 1x2 mesh (E_l = 2)",
        lambda e, s: prepare_on_mesh(e, s, [0, 0, 0, 1]),
        ValueError,
        "device 0: expert_mapping is not one-hot with E/num_devices experts per device (first row that is not "
        "one-hot: none, but this device's expert count is wrong, 1 errors)",
        _status("routing_status", mapping_errors=1, first_bad_expert=NONE),
    ),
    Case(
        _P,
        "every token picks expert 0 twice (2T assignments, T columns)",
        lambda e, s: prepare(e, s, selected_experts=_u32([[0, 0]] * T)),
        ValueError,
        "local expert 0 receives more assignments than the routing tables have columns "
        "(a token selected it more than once); 4 dropped",
        _status("routing_status", num_dropped=4, first_dropped_slot=0),
    ),
    # scatter_moe_input
    Case(
        _SC,
        "x float32",
        lambda e, s: scatter(e, s, x=lambda d: _rm(d, torch.ones(T, H), emu.float32)),
        ValueError,
        "scatter_moe_input: x must be bfloat16, got float32",
    ),
    Case(
        _SC,
        "x rank 3",
        lambda e, s: scatter(e, s, x=lambda d: _rm(d, torch.ones(2, T, H).bfloat16(), emu.bfloat16)),
        ValueError,
        "x must have rank 2 (leading 1s allowed), got shape (2, 4, 32)",
    ),
    Case(
        _SC,
        "num_routed_tokens (E_l, 2)",
        lambda e, s: scatter(e, s, num_routed_tokens=_u32([[1, 1]] * E)),
        ValueError,
        "num_routed_tokens must be (E_l, 1), got (4, 2)",
    ),
    Case(
        _SC,
        "num_routed_tokens int32",
        lambda e, s: scatter(e, s, num_routed_tokens=lambda d: _rm(d, _ints(COUNTS), emu.int32)),
        ValueError,
        "num_routed_tokens must be uint32, got int32",
    ),
    Case(
        _SC,
        "routed_tokens (E_l, T+1)",
        lambda e, s: scatter(e, s, routed_tokens=_u32([[0] * 5] * E)),
        ValueError,
        "routed_tokens (4, 5) must be (E_l, T) = (4, 4) from num_routed_tokens and x",
    ),
    Case(
        _SC,
        "strict='no'",
        lambda e, s: scatter(e, "no"),
        TypeError,
        "scatter_moe_input: strict must be a bool, got 'no'",
    ),
    Case(
        _SC,
        "routed token id >= T",
        lambda e, s: scatter(e, s, routed_tokens=_u32([[0, 3, 0, 0], [0, 7, 0, 0], [1, 2, 0, 0], [2, 3, 0, 0]])),
        ValueError,
        "scatter_moe_input: routed_tokens[1, 1] = 7 is outside [0, 4) (1 such entries, their rows are zero)",
        _status("scatter_status", kBadTokens=1, kFirstBadExpert=1, kFirstBadIndex=1, kFirstBadToken=7),
    ),
    Case(
        _SC,
        "count > T",
        lambda e, s: scatter(e, s, num_routed_tokens=_u32([[2], [2], [9], [2]])),
        ValueError,
        "scatter_moe_input: num_routed_tokens[2] = 9 exceeds T = 4 (1 such experts)",
        _status("scatter_status", kClampedCounts=1, kFirstClampedExpert=2, kFirstClampedCount=9),
    ),
    # moe_bmm
    Case(
        _BMM,
        "x ROW_MAJOR float32",  # a ROW_MAJOR x is read as it is, so it must be bfloat16 like a TILE one
        lambda e, s: bmm(e, s, x=lambda d: _rm(d, torch.ones(E, T, H), emu.float32)),
        ValueError,
        "moe_bmm: x must be bfloat16, got float32",
    ),
    Case(
        _BMM,
        "w ROW_MAJOR",
        lambda e, s: bmm(e, s, w=lambda d: _rm(d, torch.ones(E, H, 32).bfloat16(), emu.bfloat16)),
        ValueError,
        "moe_bmm: w must be in TILE layout, got ROW_MAJOR",
    ),
    Case(
        _BMM,
        "output_layout 'rows'",
        lambda e, s: bmm(e, s, output_layout="rows"),
        ValueError,
        "moe_bmm: output_layout must be TILE or ROW_MAJOR, got 'rows'",
    ),
    Case(
        _BMM,
        "w float32",
        lambda e, s: bmm(e, s, w=lambda d: _tile(d, torch.ones(E, H, 32), emu.float32)),
        ValueError,
        "moe_bmm: w must be bfloat16 or bfloat8_b or bfloat4_b, got float32",
    ),
    Case(
        _BMM,
        "w for 2 of 4 experts",
        lambda e, s: bmm(e, s, w=lambda d: _tile(d, torch.ones(2, H, 32))),
        ValueError,
        "moe_bmm: x has 4 experts (shape (4, 4, 32)), w has 2",
    ),
    Case(
        _BMM,
        "num_routed_tokens int32",
        lambda e, s: bmm(e, s, num_routed_tokens=lambda d: _rm(d, _ints(COUNTS), emu.int32)),
        ValueError,
        "moe_bmm: num_routed_tokens must be uint32, got int32",
    ),
    Case(
        _BMM,
        "compute_kernel_config=5",
        lambda e, s: bmm(e, s, compute_kernel_config=5),
        TypeError,
        "compute_kernel_config 5 lacks math_fidelity, fp32_dest_acc_en, math_approx_mode",
    ),
    Case(_BMM, "strict='no'", lambda e, s: bmm(e, "no"), TypeError, "moe_bmm: strict must be a bool, got 'no'"),
    Case(
        _BMM,
        "return_status=1",
        lambda e, s: bmm(e, s, return_status=1),
        TypeError,
        "moe_bmm: return_status must be a bool, got 1",
    ),
    Case(
        _BMM,
        "count > T",
        lambda e, s: bmm(e, s, num_routed_tokens=_u32([[2], [9], [2], [2]])),
        ValueError,
        "moe_bmm: num_routed_tokens[1] = 9 exceeds T = 4",
        _status("bmm_status", kClampedCounts=1, kFirstClampedExpert=1, kFirstClampedCount=9),
    ),
    Case(
        _BMM,
        "grouped offset not a multiple of 32",
        lambda e, s: bmm(e, s, expert_offsets=_u32([[0], [32], [65], [96]])),
        ValueError,
        "moe_bmm: expert_offsets[2] = 65 is not a multiple of 32",
        _status("bmm_status", kMisalignedOffsets=1, kFirstMisalignedExpert=2, kFirstMisalignedOffset=65),
    ),
    Case(
        _BMM,
        "grouped block past M",
        lambda e, s: bmm(e, s, num_routed_tokens=_u32([[2], [2], [2], [40]]), expert_offsets=_u32(GROUPED_OFFSETS)),
        ValueError,
        "moe_bmm: expert 3 rows [96, 136) (expert_offsets[3] = 96, num_routed_tokens[3] = 40) exceed M = 128",
        _status("bmm_status", kClampedCounts=1, kFirstClampedExpert=3, kFirstClampedCount=40),
    ),
    Case(
        _BMM,
        "grouped blocks overlap",
        lambda e, s: bmm(e, s, num_routed_tokens=_u32([[40], [2], [2], [2]]), expert_offsets=_u32(GROUPED_OFFSETS)),
        ValueError,
        "moe_bmm: expert 1 rows from expert_offsets[1] = 32 overlap expert 0's rows ending at 40",
        _status("bmm_status", kOverlappingBlocks=1, kFirstOverlapExpert=1),
    ),
    # local_reduce_moe_output
    Case(
        _LR,
        "num_out_rows=2**32",
        lambda e, s: reduce(e, s, num_out_rows=2**32),
        ValueError,
        f"local_reduce_moe_output: num_out_rows must be in {_U32_RANGE}, got 4294967296",
    ),
    Case(
        _LR,
        "num_out_rows=0",
        lambda e, s: reduce(e, s, num_out_rows=0),
        ValueError,
        f"local_reduce_moe_output: num_out_rows must be in {_U32_RANGE}, got 0",
    ),
    Case(
        _LR,
        "num_out_rows=-1",
        lambda e, s: reduce(e, s, num_out_rows=-1),
        ValueError,
        f"local_reduce_moe_output: num_out_rows must be in {_U32_RANGE}, got -1",
    ),
    Case(
        _LR,
        "num_out_rows=True",
        lambda e, s: reduce(e, s, num_out_rows=True),
        TypeError,
        "local_reduce_moe_output: num_out_rows must be an int, got True",
    ),
    Case(
        _LR,
        "num_out_rows=4.0",
        lambda e, s: reduce(e, s, num_out_rows=4.0),
        TypeError,
        "local_reduce_moe_output: num_out_rows must be an int, got 4.0",
    ),
    Case(
        _LR,
        "max_assignments_per_row=0",
        lambda e, s: reduce(e, s, max_assignments_per_row=0),
        ValueError,
        f"local_reduce_moe_output: max_assignments_per_row must be in {_U32_RANGE}, got 0",
    ),
    Case(
        _LR,
        "strict='x'",
        lambda e, s: reduce(e, "x"),
        TypeError,
        "local_reduce_moe_output: strict must be a bool, got 'x'",
    ),
    Case(
        _LR,
        "y float32",
        lambda e, s: reduce(e, s, y=lambda d: _rm(d, torch.ones(E, T, H), emu.float32)),
        ValueError,
        "local_reduce_moe_output: y must be bfloat16, got float32",
    ),
    Case(
        _LR,
        "token_idx_map (E_l, T+1)",
        lambda e, s: reduce(e, s, token_idx_map=_u32([[0] * 5] * E)),
        ValueError,
        "local_reduce_moe_output: token_idx_map (4, 5) must match y's leading dims (4, 4)",
    ),
    Case(
        _LR,
        "routed_token_weights float32",
        lambda e, s: reduce(e, s, routed_token_weights=lambda d: _rm(d, torch.ones(E, T), emu.float32)),
        ValueError,
        "local_reduce_moe_output: routed_token_weights must be bfloat16, got float32",
    ),
    Case(
        _LR,
        "token_idx_map entry >= num_out_rows",
        lambda e, s: reduce(e, s, token_idx_map=_u32([[0, 1, 0, 0], [0, 1, 0, 0], [3, 5, 0, 0], [0, 1, 0, 0]])),
        ValueError,
        "local_reduce_moe_output: token_idx_map[2, 1] = 5 is outside [0, num_out_rows=4) "
        "(1 such entries, summed nowhere)",
        _status("reduce_status", kBadRows=1, kFirstBadExpert=2, kFirstBadIndex=1, kFirstBadRow=5),
    ),
    Case(
        _LR,
        "count > T",
        lambda e, s: reduce(e, s, num_routed_tokens=_u32([[2], [2], [2], [5]])),
        ValueError,
        "local_reduce_moe_output: num_routed_tokens[3] = 5 runs past the entries of its block (1 such experts)",
        _status("reduce_status", kClampedCounts=1, kFirstClampedExpert=3, kFirstClampedCount=5),
    ),
    Case(
        _LR,
        "grouped offset past M",
        lambda e, s: reduce(e, s, expert_offsets=_u32([[0], [32], [64], [128]])),
        ValueError,
        "local_reduce_moe_output: num_routed_tokens[3] = 2 runs past the entries of its block (1 such experts)",
        _status("reduce_status", kClampedCounts=1, kFirstClampedExpert=3, kFirstClampedCount=2),
    ),
    Case(
        _LR,
        "grouped offset not a multiple of 32",
        lambda e, s: reduce(e, s, expert_offsets=_u32([[0], [40], [64], [96]])),
        ValueError,
        "local_reduce_moe_output: expert_offsets[1] = 40 is not a multiple of 32 "
        "(1 such experts with tokens, their blocks not read)",
        _status("reduce_status", kMisalignedOffsets=1, kFirstMisalignedExpert=1, kFirstMisalignedOffset=40),
    ),
    Case(
        _LR,
        "grouped blocks overlap",
        lambda e, s: reduce(e, s, num_routed_tokens=_u32([[40], [2], [2], [2]]), expert_offsets=_u32(GROUPED_OFFSETS)),
        ValueError,
        "local_reduce_moe_output: expert_offsets: the block of expert 1 overlaps a lower expert's (1 such experts)",
        _status("reduce_status", kOverlappingBlocks=1, kFirstOverlapExpert=1),
    ),
    Case(
        _LR,
        "a row receives more than max_assignments_per_row",
        lambda e, s: reduce(e, s, max_assignments_per_row=1),
        ValueError,
        "local_reduce_moe_output: output row 0 (device 0) receives 1 + 7 assignments, "
        "more than max_assignments_per_row=1; 7 dropped over 1 rows",
        {"row_overflow": {"row 0": 7}},
    ),
    Case(
        _LR,
        "num_used_rows > num_out_rows",
        lambda e, s: reduce(e, s, num_used_rows=_u32([9])),
        ValueError,
        "local_reduce_moe_output: num_used_rows = 9 exceeds num_out_rows=4",
        _status("reduce_status", kUsedRowsRead=9),
    ),
    Case(
        _LR,
        "token_idx_map entry >= num_used_rows",
        lambda e, s: reduce(
            e, s, token_idx_map=_u32([[0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]), num_used_rows=_u32([2])
        ),
        ValueError,
        "local_reduce_moe_output: token_idx_map[1, 1] = 2 is outside [0, num_used_rows=2) "
        "(1 such entries, summed nowhere)",
        _status("reduce_status", kBadRows=1, kFirstBadExpert=1, kFirstBadIndex=1, kFirstBadRow=2, kUsedRowsRead=2),
    ),
    # all_to_all_dispatch_dense (1x2 mesh, cluster_axis 1)
    Case(
        _DI,
        "cluster_axis=2",
        lambda e, s: dispatch(e, s, cluster_axis=2),
        ValueError,
        "all_to_all_dispatch_dense: cluster_axis must be in [0, 1], got 2",
    ),
    Case(
        _DI,
        "cluster_axis=True",
        lambda e, s: dispatch(e, s, cluster_axis=True),
        TypeError,
        "all_to_all_dispatch_dense: cluster_axis must be an int, got True",
    ),
    Case(
        _DI,
        "capacity=2**32",
        lambda e, s: dispatch(e, s, capacity=2**32),
        ValueError,
        f"all_to_all_dispatch_dense: capacity must be in {_U32_RANGE}, got 4294967296",
    ),
    Case(
        _DI,
        "capacity=33",
        lambda e, s: dispatch(e, s, capacity=33),
        ValueError,
        "all_to_all_dispatch_dense: capacity 33 must be a multiple of 32",
    ),
    Case(
        _DI,
        "num_links=0",
        lambda e, s: dispatch(e, s, num_links=0),
        ValueError,
        f"all_to_all_dispatch_dense: num_links must be in {_U32_RANGE}, got 0",
    ),
    Case(
        _DI,
        "topology='Star'",
        lambda e, s: dispatch(e, s, topology="Star"),
        ValueError,
        "all_to_all_dispatch_dense: topology must be one of ['Linear', 'Mesh', 'Ring'], got 'Star'",
    ),
    Case(
        _DI,
        "strict=1",
        lambda e, s: dispatch(e, 1),
        TypeError,
        "all_to_all_dispatch_dense: strict must be a bool, got 1",
    ),
    Case(
        _DI,
        "topk_weights float32",
        lambda e, s: dispatch(
            e, s, topk_weights=lambda m: from_shards([torch.ones(B, S, K)] * D, emu.float32, emu.ROW_MAJOR_LAYOUT, m)
        ),
        ValueError,
        "all_to_all_dispatch_dense: topk_weights must be bfloat16, got float32",
    ),
    Case(
        _DI,
        "expert id >= E",
        lambda e, s: dispatch(e, s, ids=[[0, 1], [1, 2], [2, 6], [3, 0]]),
        ValueError,
        "all_to_all_dispatch_dense: device 0: expert id 6 at token 2, k 1 is outside [0, E) "
        "(1 invalid ids on that device)",
        _status("dispatch_status", kInvalidIds=1, kFirstInvalidToken=2, kFirstInvalidK=1, kFirstInvalidId=6),
    ),
    Case(
        _DI,
        "expert_mapping row of zeros",
        lambda e, s: dispatch(
            e, s, mapping=torch.tensor([[1, 0], [0, 0], [0, 1], [0, 1]], dtype=torch.int32).reshape(1, 1, E, D)
        ),
        ValueError,
        "all_to_all_dispatch_dense: device 0: expert_mapping is not one-hot with E/num_devices experts per device "
        "(first bad expert 1, 2 errors)",
        _status("dispatch_status", kMappingErrors=(2, 1), kFirstBadExpert=1),
    ),
    Case(
        _DI,
        "capacity=32 where device 0 needs 2 blocks of 32",
        lambda e, s: dispatch(e, s, capacity=32, ids=[[0, 1]] * S),
        ValueError,
        "all_to_all_dispatch_dense: device 0: dispatch needs 64 rows but capacity is smaller; 8 rows did not fit",
        _status("dispatch_status", kNeededRows=(64, 0), kDroppedRows=(8, 0)),
    ),
    # all_to_all_combine_dense
    Case(
        _CO,
        "handle not a DispatchHandle",
        lambda e, s: combine(e, s, handle="h"),
        TypeError,
        "all_to_all_combine_dense: handle must be the DispatchHandle all_to_all_dispatch_dense returned, got str",
    ),
    Case(
        _CO,
        "output_dtype int8",
        lambda e, s: combine(e, s, output_dtype="int8"),
        ValueError,
        "all_to_all_combine_dense: output_dtype must be bfloat16 or float32, got 'int8'",
    ),
    Case(
        _CO,
        "strict='y'",
        lambda e, s: combine(e, "y"),
        TypeError,
        "all_to_all_combine_dense: strict must be a bool, got 'y'",
    ),
    Case(
        _CO,
        "slot source position past the line",
        lambda e, s: combine(e, s, bad_source=7),
        ValueError,
        "all_to_all_combine_dense: device 0: slot 0 names a source outside the line or the B*S tokens (1 bad slots)",
        _status("combine_status", kBadSlots=1, kFirstBadSlot=0),
    ),
    # moe_gate
    Case(
        _G,
        "n_group=2**32",
        lambda e, s: gate(e, s, n_group=2**32),
        ValueError,
        f"moe_gate: n_group must be in {_U32_RANGE}, got 4294967296",
    ),
    Case(
        _G, "top_k=0", lambda e, s: gate(e, s, top_k=0), ValueError, f"moe_gate: top_k must be in {_U32_RANGE}, got 0"
    ),
    Case(_G, "top_k=2.0", lambda e, s: gate(e, s, top_k=2.0), TypeError, "moe_gate: top_k must be an int, got 2.0"),
    Case(
        _G,
        "topk_group > n_group",
        lambda e, s: gate(e, s, topk_group=3),
        ValueError,
        "moe_gate: topk_group must be in [1, n_group=2], got 3",
    ),
    Case(
        _G,
        "top_k past the kept groups' experts",
        lambda e, s: gate(e, s, top_k=5),
        ValueError,
        "moe_gate: top_k must be in [1, 4] (4 experts in the kept groups",
    ),
    Case(
        _G,
        "n_group not dividing E",
        lambda e, s: gate(e, s, n_group=3, topk_group=1, top_k=1),
        ValueError,
        "moe_gate: E=8 experts do not split into n_group=3 equal groups",
    ),
    Case(
        _G,
        "norm_topk_prob=1",
        lambda e, s: gate(e, s, norm_topk_prob=1),
        TypeError,
        "moe_gate: norm_topk_prob must be a bool, got 1",
    ),
    Case(
        _G,
        "routed_scaling_factor='2'",
        lambda e, s: gate(e, s, routed_scaling_factor="2"),
        TypeError,
        "moe_gate: routed_scaling_factor must be a float, got '2'",
    ),
    Case(
        _G,
        "routed_scaling_factor=nan",
        lambda e, s: gate(e, s, routed_scaling_factor=float("nan")),
        ValueError,
        "moe_gate: routed_scaling_factor must be in (0, 3.40282e+38] (a float32), got nan",
    ),
    Case(
        _G,
        "routed_scaling_factor=1e39 (past float32)",
        lambda e, s: gate(e, s, routed_scaling_factor=1e39),
        ValueError,
        "moe_gate: routed_scaling_factor must be in (0, 3.40282e+38] (a float32), got 1e+39",
    ),
    Case(
        _G,
        "indices_dtype=int32",
        lambda e, s: gate(e, s, indices_dtype="int32"),
        ValueError,
        "moe_gate: indices_dtype must be uint32 or uint16, got 'int32'",
    ),
    Case(
        _G,
        "x ROW_MAJOR",
        lambda e, s: gate(e, s, x=lambda d: _rm(d, torch.ones(T, 64).bfloat16(), emu.bfloat16)),
        ValueError,
        "moe_gate: x must be in TILE layout, got ROW_MAJOR",
    ),
    Case(
        _G,
        "H not a multiple of 32",
        lambda e, s: gate(
            e, s, x=lambda d: _tile(d, torch.ones(T, 48)), gate_weight=lambda d: _tile(d, torch.ones(8, 48))
        ),
        ValueError,
        "moe_gate: H (x.shape[-1]) must be a positive multiple of 32, got 48",
    ),
    Case(
        _G,
        "gate_weight (E, H/2)",
        lambda e, s: gate(e, s, gate_weight=lambda d: _tile(d, torch.ones(8, 32))),
        ValueError,
        "moe_gate: gate_weight (8, 32) must be (E, H) with H=64 as in x (4, 64)",
    ),
    Case(
        _G,
        "e_score_correction_bias bfloat16",
        lambda e, s: gate(e, s, e_score_correction_bias=lambda d: _rm(d, torch.zeros(8), emu.bfloat16)),
        ValueError,
        "moe_gate: e_score_correction_bias must be float32, got bfloat16",
    ),
    Case(
        _G,
        "e_score_correction_bias (E-1,)",
        lambda e, s: gate(e, s, e_score_correction_bias=lambda d: _rm(d, torch.zeros(7), emu.float32)),
        ValueError,
        "moe_gate: e_score_correction_bias (7,) must have E=8 entries, one per row of gate_weight",
    ),
    Case(
        _G,
        "x[2, 5] NaN (every score of token 2 NaN)",
        lambda e, s: gate(e, s, x=lambda d: _tile(d, _with(torch.ones(T, 64), (2, 5), float("nan")))),
        ValueError,
        "moe_gate: token 2 has a NaN score (expert 0, score + bias; a NaN or infinity in x, gate_weight or the bias)"
        " (1 such tokens)",
        counted=_status("gate_status", kNanTokens=1, kFirstNanToken=2, kFirstNanExpert=0),
    ),
    Case(
        _G,
        "x[1, 0] = inf, x[1, 1] = -inf (inf - inf in token 1's dot products)",
        lambda e, s: gate(
            e, s, x=lambda d: _tile(d, _with(_with(torch.ones(T, 64), (1, 0), float("inf")), (1, 1), float("-inf")))
        ),
        ValueError,
        "moe_gate: token 1 has a NaN score (expert 0",
        counted=_status("gate_status", kNanTokens=1, kFirstNanToken=1, kFirstNanExpert=0),
    ),
    Case(
        _G,
        "e_score_correction_bias[5] NaN",
        lambda e, s: gate(
            e, s, e_score_correction_bias=lambda d: _rm(d, _with(torch.zeros(8), (5,), float("nan")), emu.float32)
        ),
        ValueError,
        "moe_gate: token 0 has a NaN score (expert 5, score + bias; a NaN or infinity in x, gate_weight or the bias)"
        " (4 such tokens)",
        counted=_status("gate_status", kNanTokens=4, kFirstNanToken=0, kFirstNanExpert=5),
    ),
]
