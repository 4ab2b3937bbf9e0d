"""prepare_moe_routing_tensors / count_invalid_expert_ids against a per-assignment Python loop."""

import pytest
import torch
from ttnn_moe.golden import count_invalid_expert_ids, prepare_moe_routing_tensors
from ttnn_moe.testing import assert_equal_exact


def owned_experts(mapping, device_index):
    """Experts of the mapping column `device_index`, ascending: the device's local slots in order."""
    return [e for e, row in enumerate(mapping.reshape(-1, mapping.shape[-1]).tolist()) if row[device_index] == 1]


def loop_routing_tables(selected, weights, mapping, device_index):
    """Reference: walk (t, k) in order, append each routed assignment to its expert's list."""
    sel, w = selected.tolist(), weights.float().tolist()
    owned = owned_experts(mapping, device_index)
    lists = {e: [] for e in owned}
    for t, row in enumerate(sel):
        for k, e in enumerate(row):
            if e in lists:
                lists[e].append((t, w[t][k]))
    num_tokens, num_local = len(sel), len(owned)
    counts = torch.tensor([[len(lists[e])] for e in owned], dtype=torch.int32).reshape(num_local, 1)
    tokens = torch.zeros(num_local, num_tokens, dtype=torch.int32)
    wts = torch.zeros(num_local, num_tokens, dtype=torch.float32)
    for slot, e in enumerate(owned):
        for i, (t, wt) in enumerate(lists[e]):
            tokens[slot, i] = t
            wts[slot, i] = wt
    return counts, tokens, wts


def check_against_loop(selected, weights, mapping, device_index=0, strict=True):
    got = prepare_moe_routing_tensors(selected, weights, mapping, device_index=device_index, strict=strict)
    counts, tokens, wts = loop_routing_tables(selected, weights, mapping, device_index)
    assert [t.dtype for t in got] == [torch.int32, torch.int32, torch.bfloat16, torch.int32]
    assert_equal_exact(counts, got[0], "num_routed_tokens")
    assert_equal_exact(tokens, got[1], "routed_tokens")
    assert_equal_exact(wts, got[2], "routed_token_weights")  # bf16 -> fp32 is exact: bits kept
    assert_equal_exact(tokens, got[3], "token_idx_map")
    return got


def single_device(num_experts):
    return torch.ones(1, 1, num_experts, 1, dtype=torch.int32)


def mapping_owning(num_experts, owned, num_devices):
    """One-hot mapping with `owned` on device 0 and the other experts dealt round-robin to devices 1..D-1."""
    mapping = torch.zeros(1, 1, num_experts, num_devices, dtype=torch.int32)
    others = [e for e in range(num_experts) if e not in owned]
    for e in owned:
        mapping[0, 0, e, 0] = 1
    for i, e in enumerate(others):
        mapping[0, 0, e, 1 + i % (num_devices - 1)] = 1
    return mapping


def random_routing(num_tokens, top_k, num_experts, seed, distinct=True):
    gen = torch.Generator().manual_seed(seed)
    if distinct:
        sel = torch.stack([torch.randperm(num_experts, generator=gen)[:top_k] for _ in range(num_tokens)])
    else:
        sel = torch.randint(0, num_experts, (num_tokens, top_k), generator=gen)
    weights = torch.rand(num_tokens, top_k, generator=gen).to(torch.bfloat16)
    return sel, weights


@pytest.mark.parametrize("num_tokens", [1, 31, 32, 100])
@pytest.mark.parametrize("top_k", [1, 4, 8])
def test_matches_loop_on_random_routing(num_tokens, top_k):
    num_experts = 16
    sel, weights = random_routing(num_tokens, top_k, num_experts, seed=num_tokens * 10 + top_k)
    check_against_loop(sel, weights, mapping_owning(num_experts, [1, 4, 5, 9], 4))
    check_against_loop(sel, weights, single_device(num_experts))
    shuffled = torch.zeros(1, 1, num_experts, 4, dtype=torch.int32)
    shuffled[
        0, 0, torch.arange(num_experts), torch.randperm(num_experts, generator=torch.Generator().manual_seed(1)) % 4
    ] = 1
    for device_index in range(4):
        check_against_loop(sel, weights, shuffled, device_index)


def test_expert_with_no_tokens_gets_empty_row():
    sel = torch.tensor([[0, 2], [2, 0], [0, 2]])
    weights = torch.rand(3, 2).to(torch.bfloat16)
    counts, tokens, wts, _ = check_against_loop(sel, weights, mapping_owning(6, [0, 1, 2], 2))
    assert counts[:, 0].tolist() == [3, 0, 3]
    assert tokens[1].tolist() == [0, 0, 0] and wts[1].float().tolist() == [0.0, 0.0, 0.0]


def test_every_token_on_one_expert():
    num_tokens = 100
    sel = torch.full((num_tokens, 1), 5)
    weights = torch.rand(num_tokens, 1).to(torch.bfloat16)
    counts, tokens, _, _ = check_against_loop(sel, weights, mapping_owning(9, [2, 5, 7], 3))
    assert counts[:, 0].tolist() == [0, num_tokens, 0]  # expert 5 has slot 1
    assert tokens[1].tolist() == list(range(num_tokens))


def test_token_choosing_same_expert_twice_lists_both_in_k_order():
    sel = torch.tensor([[3, 1, 3], [1, 1, 0], [3, 0, 2]])
    weights = torch.tensor([[0.5, 0.25, 0.125], [1.0, 2.0, 4.0], [8.0, 16.0, 32.0]]).to(torch.bfloat16)
    counts, tokens, wts, _ = check_against_loop(sel, weights, mapping_owning(4, [1, 3], 2))
    assert counts[:, 0].tolist() == [3, 3]
    assert tokens.tolist() == [[0, 1, 1], [0, 0, 2]]
    assert wts.float().tolist() == [[0.25, 1.0, 2.0], [0.5, 0.125, 8.0]]


def test_more_assignments_than_table_columns_raises():
    sel = torch.tensor([[2, 2]])
    weights = torch.ones(1, 2, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="local expert 2 receives 2 assignments"):
        prepare_moe_routing_tensors(sel, weights, single_device(4))


def test_bad_ids_strict_names_first_bad_assignment():
    sel, weights = random_routing(6, 3, 8, seed=1)
    sel[2, 1] = 8
    sel[4, 0] = 200
    with pytest.raises(ValueError, match=r"expert id 8 at \(t, k\) = \(2, 1\)"):
        prepare_moe_routing_tensors(sel, weights, single_device(8))


def test_bad_ids_non_strict_are_skipped_and_counted():
    sel, weights = random_routing(40, 4, 8, seed=2, distinct=False)
    sel[0, 0], sel[7, 3], sel[39, 1] = 8, 1000, -1
    assert count_invalid_expert_ids(sel, 8) == 3
    got = check_against_loop(sel, weights, mapping_owning(8, [0, 3, 6, 7], 2), strict=False)
    valid_local = sum(1 for e in sel.reshape(-1).tolist() if e in (0, 3, 6, 7))
    assert int(got[0].sum()) == valid_local


def test_uint32_ids_above_int32_range_are_invalid():
    sel = torch.tensor([[1, 3_000_000_000]], dtype=torch.int64).to(torch.uint32)
    weights = torch.ones(1, 2, dtype=torch.bfloat16)
    assert count_invalid_expert_ids(sel, 4) == 1
    with pytest.raises(ValueError, match="3000000000"):
        prepare_moe_routing_tensors(sel, weights, single_device(4))
    counts = prepare_moe_routing_tensors(sel, weights, single_device(4), strict=False)[0]
    assert counts[:, 0].tolist() == [0, 1, 0, 0]


def test_accepts_ttnn_4d_shapes_and_any_int_dtype():
    sel, weights = random_routing(31, 4, 16, seed=3)
    mapping = mapping_owning(16, [0, 2, 11, 12], 4)
    flat = prepare_moe_routing_tensors(sel, weights, mapping.reshape(16, 4))
    padded = prepare_moe_routing_tensors(
        sel.to(torch.uint32).reshape(1, 1, 31, 4), weights.reshape(1, 1, 31, 4), mapping.to(torch.uint8)
    )
    for a, b, name in zip(flat, padded, ["counts", "tokens", "weights", "idx"]):
        assert_equal_exact(a, b, name)


def _with_mapping(change):
    mapping = mapping_owning(4, [0, 1], 2)
    change(mapping)
    return mapping


@pytest.mark.parametrize(
    "sel, weights, mapping, device_index, error, pattern",
    [
        (torch.zeros(2, 3, 4, dtype=torch.int64), None, None, 0, ValueError, r"shape \(2, 3, 4\)"),
        (torch.zeros(4, 2), None, None, 0, TypeError, "integer dtype, got torch.float32"),
        (None, torch.zeros(4, 2), None, 0, TypeError, "bfloat16, got torch.float32"),
        (None, torch.zeros(4, 3, dtype=torch.bfloat16), None, 0, ValueError, r"\(4, 2\), got \(4, 3\)"),
        (None, None, _with_mapping(lambda m: m[0, 0, 2].fill_(1)), 0, ValueError, "expert 2 is placed on 2 devices"),
        (
            None,
            None,
            _with_mapping(lambda m: m[0, 0, 3, 1].fill_(2)),
            0,
            ValueError,
            r"expert_mapping\[3, 1\] = 2: entries must be 0 or 1",
        ),
        (
            None,
            None,
            mapping_owning(4, [0, 1, 2], 2),
            1,
            ValueError,
            r"places 3 experts on device 0; every device must hold E / D = 4 / 2",
        ),
        (None, None, None, 2, ValueError, r"device_index 2 is outside \[0, 2\)"),
        (None, None, mapping_owning(4, [0, 1], 2).float(), 0, TypeError, "expert_mapping must have an integer dtype"),
    ],
)
def test_bad_inputs_raise_with_the_value(sel, weights, mapping, device_index, error, pattern):
    sel = torch.zeros(4, 2, dtype=torch.int64) if sel is None else sel
    weights = torch.zeros(4, 2, dtype=torch.bfloat16) if weights is None else weights
    mapping = mapping_owning(4, [0, 1], 2) if mapping is None else mapping
    with pytest.raises(error, match=pattern):
        prepare_moe_routing_tensors(sel, weights, mapping, device_index=device_index)
