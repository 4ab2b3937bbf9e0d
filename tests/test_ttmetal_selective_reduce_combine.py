"""Tenstorrent's selective_reduce_combine (ttnn 0.81.1 reader.cpp / writer.cpp, unmodified) on emulated meshes,
against the torch golden of its documented semantics (ttmetal_selective_combine_golden).

Pure data movement of bfloat16 rows: the whole output of every device is compared exactly (rows no expert
sends stay at the zeros the output starts with).
"""

from __future__ import annotations

import pytest
import torch
import ttmetal_selective_combine_golden as golden
import ttnn_moe.emu as ttnn
from ttmetal_moe_cases import open_mesh, per_device
from ttnn_moe._C import program as pd
from ttnn_moe.emu import fabric
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal import selective_reduce_combine as src

Topology = ttnn.Topology
K = 4
WORKERS = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(3, 1))])
MUX = pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 2), pd.CoreCoord(3, 3))])

pytestmark = pytest.mark.usefixtures("wheel")


def run_combine(mesh, chosen, contributions, *, axis, tokens, hidden, experts, tp=2, dp=2, links=2, **kwargs):
    rows, cols = mesh.shape
    segments = src.data_parallel_split(hidden * 2, int(fabric.fabric_max_payload_size), dp)
    shape = src.CombineShape(tokens, cols if axis != 0 else rows, experts // (rows * cols), K, hidden, max(tp, 1),
                             tuple(segments))  # fmt: skip
    stride = 2 * shape.local_experts + 4  # token, k and score per local expert, 12 bytes of padding
    inputs = src.dense_inputs_from_routing(contributions, chosen, shape, stride)
    dtypes = {"dense_input": ttnn.bfloat16}
    names = ("dense_input", "dense_activations", "dense_token_maps", "dense_token_counts")
    tensors = [per_device(mesh, [inputs[n]], dtypes.get(n, ttnn.uint32)) for n in names]
    return src.selective_reduce_combine(
        *tensors,
        hidden,
        tokens,
        1,
        K,
        experts,
        axis,
        num_links=links,
        token_parallel_core_dim=tp,
        data_parallel_core_dim=dp,
        worker_cores=WORKERS,
        **{"mux_core_range_set": MUX, **kwargs},
    )


def check(out, contributions, chosen, rows, cols, axis):
    want = golden.combine_golden(contributions, chosen, rows, cols, axis, K)
    for d, got in enumerate(device_shards(out)):
        assert torch.equal(got, want[d]), f"device {d}: {(got != want[d]).any(dim=-1).nonzero().tolist()} differ"


@pytest.mark.parametrize(
    "rows, cols, axis, topology",
    [(1, 4, 1, Topology.Linear), (2, 4, 1, Topology.Linear), (2, 4, 0, Topology.Linear), (1, 4, 1, Topology.Ring)],
)
def test_random_routing_matches_golden(rows, cols, axis, topology):
    mesh = open_mesh(rows, cols, topology)
    group = cols if axis == 1 else rows
    tokens, hidden, experts = 8 * group, 96, 4 * rows * cols
    g = torch.Generator().manual_seed(rows * 100 + cols * 10 + axis)
    chosen = golden.random_routing(rows, cols, axis, tokens, experts, K, g)
    contributions = torch.randn(rows * cols, experts // (rows * cols), tokens, hidden, generator=g).bfloat16()
    out = run_combine(mesh, chosen, contributions, axis=axis, tokens=tokens, hidden=hidden, experts=experts,
                      topology=topology)  # fmt: skip
    check(out, contributions, chosen, rows, cols, axis)


def test_all_tokens_on_one_expert_and_empty_experts():
    rows, cols, axis = 1, 4, 1
    mesh = open_mesh(rows, cols, Topology.Linear)
    tokens, hidden, experts = 16, 64, 8
    chosen = golden.single_expert_routing(rows, cols, axis, tokens, experts, K, expert=1, slot=2)
    contributions = torch.randn(4, 2, tokens, hidden, generator=torch.Generator().manual_seed(7)).bfloat16()
    out = run_combine(mesh, chosen, contributions, axis=axis, tokens=tokens, hidden=hidden, experts=experts)
    check(out, contributions, chosen, rows, cols, axis)


def test_rejects_2d_fabric_and_a_split_that_drops_part_of_the_token():
    mesh = open_mesh(1, 4, Topology.Mesh)
    chosen = golden.single_expert_routing(1, 4, 1, 8, 8, K, expert=0, slot=0)
    contributions = torch.zeros(4, 2, 8, 64).bfloat16()
    with pytest.raises(ValueError, match="topology must be Linear or Ring"):
        run_combine(mesh, chosen, contributions, axis=1, tokens=8, hidden=64, experts=8)
    with pytest.raises(ValueError, match="needs 3 segments"):
        src.data_parallel_split(3 * 4096, 4096, 2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"axis": None}, "cluster_axis must be given"),
        ({"links": 3}, "4 worker cores do not split evenly over num_links 3"),
        ({"tp": 3}, "16 tokens must divide by token_parallel_core_dim 3"),
        ({"mux_core_range_set": pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(0, 0), pd.CoreCoord(3, 0))])},
         r"mux cores \[\(0, 0\), \(1, 0\), \(2, 0\), \(3, 0\)\] are also worker cores"),
    ],
)  # fmt: skip
def test_rejects_bad_arguments_naming_them(kwargs, message):
    mesh = open_mesh(1, 4, Topology.Linear)
    chosen = golden.single_expert_routing(1, 4, 1, 16, 8, K, expert=0, slot=0)
    contributions = torch.zeros(4, 2, 16, 64).bfloat16()
    args = {"axis": 1, "tokens": 16, "hidden": 64, "experts": 8, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_combine(mesh, chosen, contributions, **args)
