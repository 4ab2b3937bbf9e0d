"""scatter_moe_input, moe_bmm, local_reduce_moe_output against naive loops, and the whole
single-device experts pipeline against a sort-based formulation and a direct per-token loop."""

import pytest
import torch
import torch.nn.functional as F
from ttnn_moe.golden import local_reduce_moe_output, moe_bmm, prepare_moe_routing_tensors, scatter_moe_input
from ttnn_moe.testing import assert_equal_exact, assert_pcc


def gen(seed):
    return torch.Generator().manual_seed(seed)


def random_tables(num_local, num_tokens, counts, seed):
    """Arbitrary (not necessarily sorted) routing tables with garbage in the padding."""
    g = gen(seed)
    tokens = torch.randint(0, num_tokens, (num_local, num_tokens), generator=g, dtype=torch.int32)
    weights = torch.rand(num_local, num_tokens, generator=g).to(torch.bfloat16)
    return torch.tensor(counts, dtype=torch.int32).reshape(num_local, 1), tokens, weights


# ---- scatter_moe_input ----


@pytest.mark.parametrize("num_tokens, counts", [(1, [1, 0, 1]), (31, [31, 0, 7]), (100, [3, 100, 0])])
def test_scatter_matches_loop(num_tokens, counts):
    x = torch.randn(num_tokens, 64, generator=gen(num_tokens)).to(torch.bfloat16)
    num_routed, tokens, _ = random_tables(3, num_tokens, counts, seed=num_tokens)
    got = scatter_moe_input(x, num_routed, tokens)
    expected = torch.zeros(3, num_tokens, 64, dtype=torch.bfloat16)
    for l, count in enumerate(counts):
        for i in range(count):
            expected[l, i] = x[int(tokens[l, i])]
    assert got.dtype == torch.bfloat16
    assert_equal_exact(expected, got, "scatter")


def test_scatter_rejects_bad_tables():
    x = torch.randn(8, 32)
    tokens = torch.zeros(2, 8, dtype=torch.int32)
    tokens[1, 2] = 8
    with pytest.raises(ValueError, match=r"routed_tokens\[1, 2\] = 8"):
        scatter_moe_input(x, torch.tensor([[1], [3]]), tokens)
    with pytest.raises(ValueError, match=r"num_routed_tokens\[0\] = 9"):
        scatter_moe_input(x, torch.tensor([[9], [0]]), tokens)
    with pytest.raises(ValueError, match=r"routed_tokens \(E_l, T\) must have shape \(2, 8\)"):
        scatter_moe_input(x, torch.tensor([[1], [0]]), tokens[:, :4])
    with pytest.raises(TypeError, match="x must have a floating dtype"):
        scatter_moe_input(x.to(torch.int32), torch.tensor([[1], [0]]), tokens)


# ---- moe_bmm ----


def loop_bmm_rows(x_rows, w):
    """One output row at a time, float64."""
    return torch.stack([x_rows[i].double() @ w.double() for i in range(x_rows.shape[0])]) if len(x_rows) else None


@pytest.mark.parametrize("num_tokens, counts", [(1, [0, 1]), (31, [31, 5]), (100, [0, 100]), (64, [33, 0])])
def test_bmm_padded_matches_row_loop(num_tokens, counts):
    g = gen(num_tokens)
    x = torch.randn(2, num_tokens, 64, generator=g).to(torch.bfloat16)
    w = torch.randn(2, 64, 96, generator=g).to(torch.bfloat16)
    got = moe_bmm(x, w, torch.tensor([[c] for c in counts], dtype=torch.int32))
    assert got.dtype == torch.float32 and got.shape == (2, num_tokens, 96)
    for l, count in enumerate(counts):
        if count:
            torch.testing.assert_close(got[l, :count].double(), loop_bmm_rows(x[l, :count], w[l]), rtol=1e-5, atol=1e-4)
        assert_equal_exact(torch.zeros(num_tokens - count, 96), got[l, count:], f"rows past count of expert {l}")


def test_bmm_grouped_matches_row_loop():
    g = gen(7)
    counts, offsets = [40, 0, 1, 32], [0, 64, 64, 96]
    x = torch.randn(160, 64, generator=g).to(torch.bfloat16)  # padding rows hold garbage on purpose
    w = torch.randn(4, 64, 32, generator=g).to(torch.bfloat16)
    got = moe_bmm(
        x, w, torch.tensor(counts).reshape(4, 1), expert_offsets=torch.tensor(offsets, dtype=torch.int32).reshape(4, 1)
    )
    expected = torch.zeros(160, 32, dtype=torch.float64)
    for l, (off, count) in enumerate(zip(offsets, counts)):
        for row in range(off, off + count):
            expected[row] = x[row].double() @ w[l].double()
    torch.testing.assert_close(got.double(), expected, rtol=1e-5, atol=1e-4)
    active = torch.zeros(160, dtype=torch.bool)
    for off, count in zip(offsets, counts):
        active[off : off + count] = True
    assert_equal_exact(torch.zeros(int((~active).sum()), 32), got[~active], "inactive rows")


def test_bmm_accepts_4d_padded_input():
    x, w = torch.randn(1, 2, 32, 32), torch.randn(2, 32, 64)
    counts = torch.tensor([[3], [32]])
    assert_equal_exact(moe_bmm(x[0], w, counts), moe_bmm(x, w.reshape(1, 2, 32, 64), counts), "4-D vs 3-D")


@pytest.mark.parametrize(
    "x, w, counts, offsets, error, pattern",
    [
        (torch.randn(2, 32, 64), torch.randn(2, 32, 64), [[1], [1]], None, ValueError, "inner dims differ"),
        (torch.randn(3, 32, 64), torch.randn(2, 64, 32), [[1], [1]], None, ValueError, "x has 3 experts, w has 2"),
        (torch.randn(2, 32, 64), torch.randn(2, 64, 32), [[1]], None, ValueError, "num_routed_tokens has 1 experts"),
        (torch.randn(2, 32, 64), torch.randn(2, 64, 32), [[1], [33]], None, ValueError, r"\[1\] = 33 is outside"),
        (torch.randn(2, 32, 64), torch.randn(2, 64, 32).int(), [[1], [1]], None, TypeError, "w must have a floating"),
        (torch.randn(32, 64), torch.randn(2, 64, 32), [[1], [1]], None, ValueError, "must be 3-D"),
        (torch.randn(96, 64), torch.randn(2, 64, 32), [[1], [1]], [[0], [16]], ValueError, r"\[1\] = 16 must be"),
        (torch.randn(96, 64), torch.randn(2, 64, 32), [[40], [1]], [[0], [32]], ValueError, "blocks overlap"),
        (torch.randn(96, 64), torch.randn(2, 64, 32), [[1], [33]], [[0], [64]], ValueError, r"rows \[64, 97\)"),
        (torch.randn(96, 64), torch.randn(2, 64, 32), [[1], [1]], [[0]], ValueError, r"expert_offsets must have shape"),
    ],
)
def test_bmm_bad_inputs_raise(x, w, counts, offsets, error, pattern):
    offsets = None if offsets is None else torch.tensor(offsets)
    with pytest.raises(error, match=pattern):
        moe_bmm(x, w, torch.tensor(counts), expert_offsets=offsets)


# ---- local_reduce_moe_output ----


def loop_reduce(entries, num_out_rows, hidden):
    """entries: (dest, weight, row) in the contract's order; fp32 accumulation one entry at a time."""
    out = torch.zeros(num_out_rows, hidden, dtype=torch.float32)
    for dest, weight, row in entries:
        out[dest] = out[dest] + weight.float() * row.float()
    return out


@pytest.mark.parametrize("num_tokens, counts", [(1, [1, 1, 0]), (31, [31, 2, 17]), (100, [100, 0, 64])])
def test_local_reduce_padded_is_bitwise_the_ordered_loop(num_tokens, counts):
    num_routed, idx, weights = random_tables(3, num_tokens, counts, seed=num_tokens + 1)
    y = torch.randn(3, num_tokens, 64, generator=gen(num_tokens)) * 10
    got = local_reduce_moe_output(y, idx, weights, num_routed, num_tokens)
    entries = [(int(idx[l, i]), weights[l, i], y[l, i]) for l in range(3) for i in range(counts[l])]
    assert got.dtype == torch.float32
    assert_equal_exact(loop_reduce(entries, num_tokens, 64), got, "local reduce (padded)")


def test_local_reduce_grouped_is_bitwise_the_ordered_loop():
    g = gen(11)
    counts, offsets, num_rows, num_slots = [5, 0, 40, 1], [96, 32, 0, 64], 128, 20
    valid_rows = [r for l in range(4) for r in range(offsets[l], offsets[l] + counts[l])]  # (l, row) order
    y = torch.randn(num_rows, 64, generator=g).to(torch.bfloat16)
    weights = torch.rand(num_rows, generator=g).to(torch.bfloat16)
    idx = torch.full((num_rows,), 1000, dtype=torch.int32)  # out of range: padding rows must be ignored
    idx[valid_rows] = torch.randint(0, num_slots, (len(valid_rows),), generator=g, dtype=torch.int32)
    num_routed, expert_offsets = torch.tensor(counts).reshape(4, 1), torch.tensor(offsets).reshape(4, 1)
    got = local_reduce_moe_output(y, idx, weights, num_routed, num_slots, expert_offsets=expert_offsets)
    entries = [(int(idx[r]), weights[r], y[r]) for r in valid_rows]
    assert_equal_exact(loop_reduce(entries, num_slots, 64), got, "local reduce (grouped)")

    idx[65] = 20  # expert 3 now owns rows [64, 66)
    with pytest.raises(ValueError, match=r"token_idx_map\[65\] = 20 is outside \[0, 20\)"):
        num_routed = torch.tensor([[5], [0], [40], [2]])
        local_reduce_moe_output(y, idx, weights, num_routed, num_slots, expert_offsets=expert_offsets)


def test_local_reduce_bad_index_names_it():
    idx = torch.zeros(2, 4, dtype=torch.int32)
    idx[1, 2] = 4
    args = (torch.randn(2, 4, 32), idx, torch.ones(2, 4, dtype=torch.bfloat16), torch.tensor([[4], [3]]))
    with pytest.raises(ValueError, match=r"token_idx_map\[1, 2\] = 4 is outside \[0, 4\)"):
        local_reduce_moe_output(*args, 4)
    local_reduce_moe_output(*args[:3], torch.tensor([[4], [2]]), 4)  # entry (1, 2) is padding now
    with pytest.raises(ValueError, match="num_out_rows must be positive, got 0"):
        local_reduce_moe_output(*args, 0)
    with pytest.raises(ValueError, match=r"routed_token_weights must have shape \(2, 4\)"):
        local_reduce_moe_output(args[0], idx, torch.ones(2, 3), args[3], 8)
    with pytest.raises(TypeError, match="token_idx_map must have an integer dtype"):
        local_reduce_moe_output(args[0], idx.float(), args[2], args[3], 8)


# ---- the pipeline prepare -> scatter -> moe_bmm -> local_reduce ----


def swiglu_weights(num_experts, hidden, inter, seed):
    g = gen(seed)
    w1 = (torch.randn(num_experts, hidden, inter, generator=g) / hidden**0.5).to(torch.bfloat16)
    w3 = (torch.randn(num_experts, hidden, inter, generator=g) / hidden**0.5).to(torch.bfloat16)
    w2 = (torch.randn(num_experts, inter, hidden, generator=g) / inter**0.5).to(torch.bfloat16)
    return w1, w3, w2


def pipeline_with_goldens(x, sel, weights, mapping, owned, w1, w3, w2):
    """The device flow on device 0 of `mapping`; its local experts are `owned` in ascending id."""
    owned = sorted(owned)
    counts, tokens, wts, idx = prepare_moe_routing_tensors(sel, weights, mapping, device_index=0)
    xs = scatter_moe_input(x, counts, tokens)
    gate = moe_bmm(xs, w1[owned], counts)
    up = moe_bmm(xs, w3[owned], counts)
    down = moe_bmm(F.silu(gate) * up, w2[owned], counts)
    return local_reduce_moe_output(down, idx, wts, counts, x.shape[0])


def sort_based_moe(x, sel, weights, owned, w1, w3, w2):
    """Formulation used by training stacks: argsort the flat expert ids, gather, one matmul per
    expert on its contiguous slice, weight, and scatter-add back to token order."""
    num_tokens, top_k = sel.shape
    flat_e = sel.reshape(-1)
    is_local = torch.isin(flat_e, torch.tensor(owned))
    order = torch.argsort(flat_e, stable=True)
    order = order[is_local[order]]
    token_of = order // top_k
    sorted_e = flat_e[order]
    xg = x.float()[token_of]
    experts, sizes = torch.unique_consecutive(sorted_e, return_counts=True)
    outs = []
    for e, chunk in zip(experts.tolist(), xg.split(sizes.tolist())):
        outs.append((F.silu(chunk @ w1[e].float()) * (chunk @ w3[e].float())) @ w2[e].float())
    y = torch.cat(outs) if outs else torch.zeros(0, x.shape[1])
    y = y * weights.reshape(-1)[order].float()[:, None]
    return torch.zeros(num_tokens, x.shape[1]).index_add_(0, token_of, y)


def direct_per_token(x, sel, weights, owned, w1, w3, w2):
    out = torch.zeros(x.shape[0], x.shape[1], dtype=torch.float64)
    for t in range(sel.shape[0]):
        xt = x[t].double()
        for k in range(sel.shape[1]):
            e = int(sel[t, k])
            if e in owned:
                h = F.silu(xt @ w1[e].double()) * (xt @ w3[e].double())
                out[t] += float(weights[t, k]) * (h @ w2[e].double())
    return out


@pytest.mark.parametrize(
    "num_tokens, owned, skew",
    [
        (1, [0, 1, 2, 3, 4, 5, 6, 7], "random"),
        (31, [6, 1], "random"),
        (100, [2, 5], "random"),
        (100, [0, 4], "one_expert"),
        (64, [1, 3, 5, 7], "repeats"),
    ],
)
def test_pipeline_matches_sort_based_and_direct(num_tokens, owned, skew):
    num_experts, top_k, hidden, inter = 8, 4, 64, 32
    g = gen(num_tokens + len(owned))
    x = torch.randn(num_tokens, hidden, generator=g).to(torch.bfloat16)
    if skew == "one_expert":  # every token on expert 4; local expert 0 gets none
        sel = torch.stack([torch.tensor([4, 1, 2, 3]) for _ in range(num_tokens)])
    elif skew == "repeats":  # tokens may select one expert several times
        sel = torch.randint(0, num_experts, (num_tokens, top_k), generator=g)
        sel[:, 1] = sel[:, 0]
    else:
        sel = torch.stack([torch.randperm(num_experts, generator=g)[:top_k] for _ in range(num_tokens)])
    weights = torch.rand(num_tokens, top_k, generator=g).to(torch.bfloat16)
    num_devices = num_experts // len(owned)  # device 0 holds `owned`, the others the rest
    others = [e for e in range(num_experts) if e not in owned]
    mapping = torch.zeros(1, 1, num_experts, num_devices, dtype=torch.int32)
    for device, experts in enumerate([owned] + [others[i :: num_devices - 1] for i in range(num_devices - 1)]):
        mapping[0, 0, experts, device] = 1
    w1, w3, w2 = swiglu_weights(num_experts, hidden, inter, seed=num_tokens)

    got = pipeline_with_goldens(x, sel, weights, mapping, owned, w1, w3, w2)
    sort_based = sort_based_moe(x, sel, weights, owned, w1, w3, w2)
    direct = direct_per_token(x, sel, weights, owned, w1, w3, w2)
    assert got.shape == (num_tokens, hidden) and got.dtype == torch.float32
    assert_pcc(direct, got, 0.99999, "pipeline vs direct")
    assert_pcc(sort_based, got, 0.99999, "pipeline vs sort-based")
    torch.testing.assert_close(got.double(), direct, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(got, sort_based, rtol=1e-4, atol=1e-4)
    untouched = torch.tensor([all(int(e) not in owned for e in row) for row in sel])
    assert_equal_exact(torch.zeros(int(untouched.sum()), hidden), got[untouched], "tokens with no local expert")
