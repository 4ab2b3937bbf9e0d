"""Property tests of the single-device pipeline prepare -> scatter -> moe_bmm -> local_reduce.

Hypothesis draws routings of any shape: T, E and K, experts no token picks and an expert every
token picks, skew towards one expert, a token picking one expert twice, ids outside [0, E). For
each, every op runs on the emulator and is checked against its golden (ttnn_moe.golden), and:
every (t, k) assignment is delivered exactly once or counted (as an invalid id or as dropped),
and a second run of the whole pipeline is bitwise identical.

Profiles (tests/conftest.py): "ci" by default, bounded for CI; `pytest --hypothesis-profile=long`
runs many more examples.
"""

from dataclasses import dataclass

import pytest
import torch
from hypothesis import event, given
from hypothesis import strategies as st
from ttnn_moe.ops._readback import read_device_words
from ttnn_moe.ops.local_reduce_moe_output import StatusWord as ReduceWord
from ttnn_moe.testing import assert_equal_exact, assert_pcc, max_abs_error

import ttnn_moe
from ttnn_moe import _C, emu, golden

HIDDEN, WIDTH = 32, 32  # x (T, HIDDEN); experts map HIDDEN -> WIDTH
ROUTING_WORD = _C.ops.prepare_moe_routing_tensors.StatusWord
INVALID_IDS = [lambda e: e, lambda e: e + 7, lambda e: 0xFFFFFFFF]


@dataclass(frozen=True)
class Routing:
    ids: torch.Tensor  # (T, K) int64 (uint32 values; some may be >= E)
    num_experts: int
    seed: int  # of the weights, x and the expert weights


@st.composite
def routings(draw) -> Routing:
    num_tokens = draw(st.integers(1, 40))
    num_experts = draw(st.integers(1, 10))
    top_k = draw(st.integers(1, 4))
    # Experts outside the pool get no token; the first pool expert may be hot (skew) or picked by all.
    pool = draw(st.lists(st.integers(0, num_experts - 1), min_size=1, max_size=num_experts, unique=True))
    skew = draw(st.integers(0, 8))
    invalid = [make(num_experts) for make in draw(st.lists(st.sampled_from(INVALID_IDS), max_size=2))]
    choices = [pool[0]] * skew + pool + invalid
    distinct = draw(st.booleans()) and len(set(choices)) >= top_k
    row = st.lists(st.sampled_from(choices), min_size=top_k, max_size=top_k, unique=distinct)
    rows = draw(st.lists(row, min_size=num_tokens, max_size=num_tokens))
    if draw(st.booleans()):  # an expert every token picks
        hot = pool[0]
        rows = [[hot] + ([c for c in r if c != hot] if distinct else r)[: top_k - 1] for r in rows]
    ids = torch.tensor(rows, dtype=torch.int64)
    return Routing(ids, num_experts, draw(st.integers(0, 2**31 - 1)))


def expected_tables(ids: torch.Tensor, num_experts: int):
    """The routing tables by a plain loop: per expert its (t, k) assignments in (t, k) order, the
    first T kept; and the counts of invalid ids and dropped assignments."""
    num_tokens = ids.shape[0]
    lists = [[] for _ in range(num_experts)]
    invalid = 0
    for t, row in enumerate(ids.tolist()):
        for k, e in enumerate(row):
            if 0 <= e < num_experts:
                lists[e].append((t, k))
            else:
                invalid += 1
    dropped = sum(max(0, len(a) - num_tokens) for a in lists)
    return [a[:num_tokens] for a in lists], invalid, dropped


@pytest.fixture(scope="module")
def device():
    dev = emu.open_device(grid=(2, 2))
    yield dev
    emu.close_device(dev)


def _rm(device, t, dtype):
    return emu.from_torch(t, dtype=dtype, layout=emu.ROW_MAJOR_LAYOUT, device=device)


def _inputs(routing: Routing):
    g = torch.Generator().manual_seed(routing.seed)
    num_tokens, top_k = routing.ids.shape
    weights = torch.rand(num_tokens, top_k, generator=g).bfloat16()
    x = torch.randn(num_tokens, HIDDEN, generator=g).bfloat16()
    w = (torch.randn(routing.num_experts, HIDDEN, WIDTH, generator=g) / HIDDEN**0.5).bfloat16()
    return weights, x, w


def run_pipeline(device, routing: Routing, weights, x, w):
    """Every op with strict=False (nothing read back between them); all outputs and records on the host."""
    mapping = torch.ones(1, 1, routing.num_experts, 1, dtype=torch.int32)
    tables = ttnn_moe.prepare_moe_routing_tensors(
        _rm(device, routing.ids, emu.uint32),
        _rm(device, weights, emu.bfloat16),
        _rm(device, mapping, emu.int32),
        strict=False,
    )
    scattered = ttnn_moe.scatter_moe_input(
        _rm(device, x, emu.bfloat16), tables.num_routed_tokens, tables.routed_tokens, strict=False
    )
    tiles = emu.to_layout(scattered.output, emu.TILE_LAYOUT)
    w_tiles = emu.from_torch(w, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=device)
    expert_out = ttnn_moe.moe_bmm(tiles, w_tiles, tables.num_routed_tokens, strict=False, return_status=True)
    reduced = ttnn_moe.local_reduce_moe_output(
        emu.to_layout(expert_out.output, emu.ROW_MAJOR_LAYOUT),
        tables.token_idx_map,
        tables.routed_token_weights,
        tables.num_routed_tokens,
        num_out_rows=routing.ids.shape[0],
        strict=False,
    )
    host = {name: emu.to_torch(getattr(tables, name)) for name in tables._fields}
    host["scattered"] = emu.to_torch(scattered.output)
    host["expert_out"] = emu.to_torch(expert_out.output)
    host["reduced"] = emu.to_torch(reduced.output)
    records = {
        "routing_status": read_device_words(tables.routing_status)[0],
        "scatter_status": read_device_words(scattered.scatter_status)[0],
        "bmm_status": read_device_words(expert_out.bmm_status)[0],
        "reduce_status": read_device_words(reduced.reduce_status)[0],
        "row_overflow": read_device_words(reduced.row_overflow)[0],
    }
    return host, records


def _reports_nothing(words: list[int]) -> bool:
    return all(w in (0, 0xFFFFFFFF) for w in words)


def _close(want: torch.Tensor, got: torch.Tensor, name: str) -> None:
    assert_pcc(want, got.float(), 0.9999, name=name)
    bound = 0.02 * (1.0 + float(want.abs().max()))  # bf16 output: a few ulps of the largest value
    assert max_abs_error(want, got.float()) <= bound, name


@given(routing=routings())
def test_pipeline_matches_goldens_and_accounts_for_every_assignment(device, routing):
    weights, x, w = _inputs(routing)
    host, records = run_pipeline(device, routing, weights, x, w)
    num_tokens, top_k = routing.ids.shape
    kept, invalid, dropped = expected_tables(routing.ids, routing.num_experts)
    event(f"invalid ids: {invalid > 0}")
    event(f"dropped assignments: {dropped > 0}")
    event(f"experts without tokens: {any(not a for a in kept)}")
    event(f"an expert every token picks: {any(len({t for t, _ in a}) == num_tokens for a in kept)}")

    # prepare: each valid assignment is in its expert's row once, or counted as dropped.
    status = records["routing_status"]
    assert status[ROUTING_WORD.num_invalid_ids] == invalid
    assert status[ROUTING_WORD.num_dropped] == dropped
    assert status[ROUTING_WORD.mapping_errors] == 0
    counts = host["num_routed_tokens"].reshape(-1).to(torch.int64)
    assert counts.tolist() == [len(a) for a in kept]
    assert int(counts.sum()) + dropped + invalid == num_tokens * top_k
    for e, assignments in enumerate(kept):
        row = host["routed_tokens"][e].to(torch.int64).tolist()
        assert row == [t for t, _ in assignments] + [0] * (num_tokens - len(assignments)), f"expert {e}"
        want_weights = torch.tensor([float(weights[t, k]) for t, k in assignments], dtype=torch.bfloat16)
        assert_equal_exact(want_weights, host["routed_token_weights"][e, : len(assignments)], name=f"weights {e}")
    assert_equal_exact(host["routed_tokens"], host["token_idx_map"], name="token_idx_map")
    if dropped == 0:  # the golden refuses an expert with more than T assignments
        want = golden.prepare_moe_routing_tensors(
            routing.ids, weights, torch.ones(1, 1, routing.num_experts, 1, dtype=torch.int32), strict=False
        )
        for name, tensor in zip(("num_routed_tokens", "routed_tokens", "routed_token_weights"), want):
            assert_equal_exact(tensor, host[name], name=name)

    # scatter, moe_bmm, local_reduce against their goldens on the device's own tables.
    counts_2d = host["num_routed_tokens"].to(torch.int64)
    want_scattered = golden.scatter_moe_input(x, counts_2d, host["routed_tokens"].to(torch.int64))
    assert_equal_exact(want_scattered, host["scattered"], name="scattered")
    _close(golden.moe_bmm(want_scattered, w, counts_2d), host["expert_out"], "moe_bmm")
    want_reduced = golden.local_reduce_moe_output(
        host["expert_out"], host["token_idx_map"], host["routed_token_weights"], counts_2d, num_tokens
    )
    _close(want_reduced, host["reduced"], "local_reduce")
    # End to end: every kept assignment's weighted expert output, summed per token.
    end_to_end = torch.zeros(num_tokens, WIDTH)
    for e, assignments in enumerate(kept):
        for t, k in assignments:
            end_to_end[t] += weights[t, k].float() * (x[t].float() @ w[e].float())
    assert_pcc(end_to_end, host["reduced"].float(), 0.999, name="pipeline")

    # The tables prepare wrote are valid, so the later ops have nothing to report; the local
    # reduce's kRowsComputed is no report but the rows it computed: every token's.
    reduce_status = records["reduce_status"]
    assert reduce_status[ReduceWord.kRowsComputed] == num_tokens
    records["reduce_status"] = [w for i, w in enumerate(reduce_status) if i != ReduceWord.kRowsComputed]
    for name in ("scatter_status", "bmm_status", "reduce_status", "row_overflow"):
        assert _reports_nothing(records[name]), f"{name} = {records[name]}"


@given(routing=routings())
def test_pipeline_is_bitwise_reproducible(device, routing):
    inputs = _inputs(routing)
    first, first_records = run_pipeline(device, routing, *inputs)
    second, second_records = run_pipeline(device, routing, *inputs)
    assert first_records == second_records
    for name, tensor in first.items():
        assert torch.equal(tensor, second[name]), name
