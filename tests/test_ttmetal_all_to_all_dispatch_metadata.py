"""Tenstorrent's ttnn.experimental.all_to_all_dispatch_metadata (ttnn 0.81.1 kernels, unmodified) on emulated
meshes, against the torch golden of its documented semantics (ttmetal_moe_golden.dispatch_metadata).

Pure data movement: every defined value is compared exactly. A token row (global token a*T + t) that no expert
of the token sends to a device is never written (ttnn: "garbage"); the outputs start filled with a sentinel, and
the test checks that exactly the rows the golden defines were written. The gathered indices and scores land in
L1 of the drain core, where the next op of the path (moe_compute) reads them.
"""

from __future__ import annotations

import pytest
import torch
import ttmetal_moe_golden as golden
import ttnn_moe.emu as ttnn
from ttmetal_moe_cases import open_mesh, per_device, replicated
from ttnn_moe._C import emu as emu_runtime
from ttnn_moe._C import program as pd
from ttnn_moe.emu.tensor import device_shards
from ttnn_moe.emu.ttmetal.all_to_all_dispatch_metadata import (
    DispatchAlgorithm,
    WorkerMode,
    all_to_all_dispatch_metadata,
)

T, K, H = 8, 8, 64  # tokens per device, DeepSeek-V3's top-8, a small hidden size
EXPERTS_PER_DEVICE = 2
SENTINEL = -12345.0  # exactly representable in bf16, never a token value of these tests
DRAIN = (0, 0)
Topology = ttnn.Topology

pytestmark = pytest.mark.usefixtures("wheel")


def routing(kind: str, devices: int, seed: int = 0):
    """(xs [T, H] bf16, indices [T, K], scores [T, K] bf16 per device, device_of [D, E]).
    kind: 'random' (distinct experts from all but the last device's, so that device receives nothing),
    'one_expert' (every token picks expert 1, k times), 'local_replica' (expert 0 is replicated: every
    device routes it to itself; the other picks random)."""
    g = torch.Generator().manual_seed(seed)
    experts = devices * EXPERTS_PER_DEVICE
    device_of = (torch.arange(experts) // EXPERTS_PER_DEVICE).repeat(devices, 1)
    xs, indices, scores = [], [], []
    for d in range(devices):
        xs.append(torch.randn(T, H, generator=g).to(torch.bfloat16))
        if kind == "random":
            pool = max(experts - EXPERTS_PER_DEVICE, K)
            rows = [torch.randperm(pool, generator=g)[:K] for _ in range(T)]
        elif kind == "one_expert":
            rows = [torch.full((K,), 1) for _ in range(T)]
        elif kind == "local_replica":
            rows = [
                torch.cat([torch.tensor([0]), 1 + torch.randperm(experts - 1, generator=g)[: K - 1]]) for _ in range(T)
            ]
        else:
            raise ValueError(kind)
        indices.append(torch.stack(rows).to(torch.int64))
        scores.append(torch.rand(T, K, generator=g).to(torch.bfloat16))
    if kind == "local_replica":
        device_of[:, 0] = torch.arange(devices)
    return xs, indices, scores, device_of


def drain_config(rows: int):
    core = pd.CoreCoord(*DRAIN)
    spec = ttnn.ShardSpec(pd.CoreRangeSet([pd.CoreRange(core, core)]), (rows, K))
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1, spec)


def inputs(mesh, xs, indices, scores, device_of):
    """x [T, 1, 1, H] in DRAM, indices and scores [T, 1, 1, K] in L1, mapping [D, E] replicated in DRAM."""

    def l1(shards, dtype):
        return ttnn.from_torch(
            torch.cat(list(shards)),
            dtype=dtype,
            layout=ttnn.ROW_MAJOR_LAYOUT,
            device=mesh,
            memory_config=ttnn.L1_MEMORY_CONFIG,
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
        )

    x = per_device(mesh, [t.reshape(T, 1, 1, H) for t in xs], ttnn.bfloat16)
    idx = l1([t.reshape(T, 1, 1, K) for t in indices], ttnn.uint16)
    sc = l1([t.reshape(T, 1, 1, K) for t in scores], ttnn.bfloat16)
    return x, idx, sc, replicated(mesh, device_of, ttnn.uint16)


def sentinel_outputs(mesh, group: int):
    devices = mesh.get_num_devices()
    rows = T * group
    out = per_device(mesh, [torch.full((1, rows, H), SENTINEL)] * devices, ttnn.bfloat16)
    md = [
        ttnn.from_torch(
            torch.full((devices, rows, K), fill, dtype=torch.int64 if dtype == ttnn.uint16 else torch.float32),
            dtype=dtype,
            layout=ttnn.ROW_MAJOR_LAYOUT,
            device=mesh,
            memory_config=drain_config(rows),
            mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0),
        )
        for fill, dtype in ((7, ttnn.uint16), (SENTINEL, ttnn.bfloat16))
    ]
    return out, *md


def run_and_check(mesh, kind, axis, algorithm=DispatchAlgorithm.SPARSE_MCAST_SHORTEST_PATH, seed=0, **kwargs):
    rows, cols = mesh.shape
    xs, indices, scores, device_of = routing(kind, rows * cols, seed)
    group = cols if axis == 1 else rows
    outputs = sentinel_outputs(mesh, group)
    out, idx_out, sc_out = all_to_all_dispatch_metadata(
        *inputs(mesh, xs, indices, scores, device_of),
        cluster_axis=axis,
        output_tensors=outputs,
        drain_sync_tilizer_core=DRAIN,
        dispatch_algorithm=algorithm,
        **kwargs,
    )
    want = golden.dispatch_metadata(xs, indices, scores, device_of, rows, cols, axis)
    shards = zip(device_shards(out), device_shards(idx_out), device_shards(sc_out))
    for d, (got_rows, got_idx, got_sc) in enumerate(shards):
        want_rows, defined, want_idx, want_sc = want[d]
        if algorithm == DispatchAlgorithm.BROADCAST:  # every token reaches every device of its group
            defined = torch.ones_like(defined)
            want_rows = torch.cat([xs[s] for s in golden.group_of(d, rows, cols, axis)])
        got_rows = got_rows.reshape(-1, H)
        assert torch.equal(got_idx.reshape(-1, K).to(torch.int64), want_idx), f"device {d}: indices"
        assert torch.equal(got_sc.reshape(-1, K), want_sc), f"device {d}: scores"
        written = (got_rows != SENTINEL).any(dim=1)
        assert torch.equal(written, defined), f"device {d}: rows written {written.tolist()} vs {defined.tolist()}"
        assert torch.equal(got_rows[defined], want_rows[defined]), f"device {d}: token rows"
    return want


@pytest.mark.parametrize("kind", ["random", "one_expert", "local_replica"])
def test_t3k_ring_dispatch_default_algorithm(kind):
    mesh = open_mesh(1, 8, Topology.Ring)
    want = run_and_check(mesh, kind, axis=1)
    if kind == "random":  # the last device's experts are never picked: it receives no token
        assert not want[7][1].any()


@pytest.mark.parametrize("algorithm", list(DispatchAlgorithm), ids=lambda a: a.name)
def test_t3k_ring_every_dispatch_algorithm(algorithm):
    run_and_check(open_mesh(1, 8, Topology.Ring), "random", axis=1, algorithm=algorithm, seed=1)


@pytest.mark.parametrize("axis", [0, 1])
def test_2x4_dispatch_along_either_axis(axis):
    # Along axis 0 two devices form a line; along axis 1 four make a ring.
    run_and_check(open_mesh(2, 4, Topology.Ring), "random", axis=axis, seed=2)


@pytest.mark.parametrize(
    "algorithm", [DispatchAlgorithm.SPARSE_MCAST_SHORTEST_PATH, DispatchAlgorithm.SPARSE_UNICAST], ids=lambda a: a.name
)
def test_4x2_dispatch_down_a_ring_column(algorithm):
    # Along axis 0 on a Ring: NORTH / SOUTH connections, the column a ring of four.
    run_and_check(open_mesh(4, 2, Topology.Ring), "random", axis=0, algorithm=algorithm, seed=5)


def test_linear_fabric_dispatch_sparse_unicast():
    run_and_check(open_mesh(1, 4, Topology.Linear), "random", axis=1, algorithm=DispatchAlgorithm.SPARSE_UNICAST)


def test_an_axis_of_one_device_keeps_each_token_on_its_device():
    # Down the columns of a 1x4 row (tt-metal's optimized MoE on a T3K-like mesh): no neighbour, no fabric
    # connection; a device keeps the tokens that chose one of its own experts.
    run_and_check(open_mesh(1, 4, Topology.Ring), "random", axis=0, seed=4)


def test_tg_dispatch_along_rows():
    run_and_check(open_mesh(4, 8, Topology.Ring), "random", axis=1, seed=3, num_links=2)


def test_new_outputs_are_placed_as_ttnn_places_them():
    mesh = open_mesh(1, 4, Topology.Ring)
    xs, indices, scores, device_of = routing("random", 4)
    out, idx_out, sc_out = all_to_all_dispatch_metadata(
        *inputs(mesh, xs, indices, scores, device_of), cluster_axis=1, drain_sync_tilizer_core=(1, 2)
    )
    assert list(out.shape) == [1, 4 * T, H] and out.memory_config() == ttnn.DRAM_MEMORY_CONFIG
    for t, dtype in ((idx_out, ttnn.uint16), (sc_out, ttnn.bfloat16)):
        assert list(t.shape) == [1, 4 * T, K] and t.dtype == dtype
        assert [(c.x, c.y) for c in t.memory_config().shard_spec.cores()] == [(1, 2)]
    want = golden.dispatch_metadata(xs, indices, scores, device_of, 1, 4, 1)
    for d, got in enumerate(device_shards(idx_out)):
        assert torch.equal(got.reshape(-1, K).to(torch.int64), want[d][2])


def test_indices_in_dram_break_the_l1_page_stride():
    """The writer's comment: the indices must be in L1, a DRAM page of 16 bytes is read to a 16-byte stride
    that a 32-byte DRAM alignment does not keep; Wormhole's NOC rejects every second token's read."""
    mesh = open_mesh(1, 4, Topology.Ring)
    xs, indices, scores, device_of = routing("random", 4)
    x, _, sc, mapping = inputs(mesh, xs, indices, scores, device_of)
    idx = per_device(mesh, [t.reshape(T, 1, 1, K) for t in indices], ttnn.uint16)
    with pytest.raises(emu_runtime.EmulatorError, match=r"reader_all_to_all_dispatch_metadata\.cpp.*misaligned NOC"):
        all_to_all_dispatch_metadata(x, idx, sc, mapping, cluster_axis=1, drain_sync_tilizer_core=DRAIN)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"cluster_axis": None}, ValueError, "cluster_axis must be given"),
        ({"worker_mode": WorkerMode.MUX_TOKEN_SPLIT}, NotImplementedError, "only WorkerMode.DIRECT"),
        ({"shared_expert_ids": [0]}, NotImplementedError, "shared_expert_ids"),
        ({"cross_device_semaphore": object()}, NotImplementedError, "persistent mode"),
        ({"num_links": 0}, ValueError, "num_links must be a positive int, got 0"),
        ({"drain_sync_tilizer_core": None}, ValueError, "drain_sync_tilizer_core must be given"),
        ({"num_links": 9}, ValueError, "not enough worker cores 8 to send all links 9"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    mesh = open_mesh(1, 4, Topology.Ring)
    args = inputs(mesh, *routing("random", 4))
    call = {"cluster_axis": 1, "drain_sync_tilizer_core": DRAIN, **kwargs}
    with pytest.raises(error, match=message):
        all_to_all_dispatch_metadata(*args, **call)


def test_a_2d_fabric_is_refused():
    mesh = open_mesh(2, 4, Topology.Mesh)
    with pytest.raises(NotImplementedError, match=r"1D \(Linear or Ring\) fabrics"):
        all_to_all_dispatch_metadata(
            *inputs(mesh, *routing("random", 8)), cluster_axis=1, drain_sync_tilizer_core=DRAIN
        )


def test_mapping_must_have_a_row_per_device():
    mesh = open_mesh(1, 4, Topology.Ring)
    x, idx, sc, _ = inputs(mesh, *routing("random", 4))
    bad = replicated(mesh, torch.zeros(1, 8, dtype=torch.int64), ttnn.uint16)
    with pytest.raises(ValueError, match=r"\[devices, experts\] with 4 devices, got shape \[1, 8\]"):
        all_to_all_dispatch_metadata(x, idx, sc, bad, cluster_axis=1, drain_sync_tilizer_core=DRAIN)
