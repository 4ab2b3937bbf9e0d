"""What every op does with ttnn's output arguments: a preallocated output is written in place and
returned, a mismatched one is refused naming both specs, and memory_config places new outputs."""

import pytest
import torch
from emu_fixtures import emu_device_fixture
from routing_cases import expert_ids, rm, single_device_mapping
from ttnn_moe.testing import assert_equal_exact, assert_pcc

import ttnn_moe
from ttnn_moe import emu, golden

device = emu_device_fixture(grid=(2, 3))

NUM_TOKENS, HIDDEN, NUM_LOCAL, TOP_K, INTER = 40, 64, 4, 2, 32


@pytest.fixture(scope="module")
def case():
    g = torch.Generator().manual_seed(9)
    ids = expert_ids("skewed", NUM_TOKENS, TOP_K, NUM_LOCAL, seed=9)
    weights = torch.rand(NUM_TOKENS, TOP_K, generator=g).bfloat16()
    counts, tokens, token_weights, idx_map = golden.prepare_moe_routing_tensors(
        ids, weights, single_device_mapping(NUM_LOCAL)
    )
    x = torch.randn(NUM_TOKENS, HIDDEN, generator=g).bfloat16()
    w = (torch.randn(NUM_LOCAL, HIDDEN, INTER, generator=g) / HIDDEN**0.5).bfloat16()
    scattered = golden.scatter_moe_input(x, counts, tokens)  # (E_l, T, H)
    y = torch.randn(NUM_LOCAL, NUM_TOKENS, HIDDEN, generator=g).bfloat16()
    return dict(
        counts=counts, tokens=tokens, token_weights=token_weights, idx_map=idx_map, x=x, w=w, scattered=scattered, y=y
    )


def _tile(device, t, **kwargs):
    return emu.from_torch(t, dtype=emu.bfloat16, layout=emu.TILE_LAYOUT, device=device, **kwargs)


def _scatter(device, case, **kwargs):
    return ttnn_moe.scatter_moe_input(
        rm(device, case["x"], emu.bfloat16),
        rm(device, case["counts"], emu.uint32),
        rm(device, case["tokens"], emu.uint32),
        **kwargs,
    )


def _scatter_into(device, case, output_tensor):
    return _scatter(device, case, output_tensors=[output_tensor])


def _bmm_into(device, case, output_tensor):
    return _bmm(device, case, output_tensor=output_tensor)


def _bmm(device, case, **kwargs):
    return ttnn_moe.moe_bmm(
        _tile(device, case["scattered"]), _tile(device, case["w"]), rm(device, case["counts"], emu.uint32), **kwargs
    )


def _reduce(device, case, **kwargs):
    return ttnn_moe.local_reduce_moe_output(
        rm(device, case["y"], emu.bfloat16),
        rm(device, case["idx_map"], emu.uint32),
        rm(device, case["token_weights"], emu.bfloat16),
        rm(device, case["counts"], emu.uint32),
        num_out_rows=NUM_TOKENS,
        **kwargs,
    )


def _poison(device, shape, dtype, layout):
    if dtype == emu.uint32:
        return rm(device, torch.full(shape, 12345, dtype=torch.int32), dtype)
    return emu.from_torch(torch.full(shape, 7.0).bfloat16(), dtype=dtype, layout=layout, device=device)


def test_scatter_writes_a_preallocated_output(device, case):
    want = golden.scatter_moe_input(case["x"], case["counts"], case["tokens"])
    out = _poison(device, (NUM_LOCAL, NUM_TOKENS, HIDDEN), emu.bfloat16, emu.ROW_MAJOR_LAYOUT)
    assert _scatter(device, case, output_tensors=[out]).output is out
    assert_equal_exact(want, emu.to_torch(out), name="scattered into the preallocated output")


def test_moe_bmm_writes_a_preallocated_output(device, case):
    want = golden.moe_bmm(case["scattered"], case["w"], case["counts"])
    out = _poison(device, (NUM_LOCAL, NUM_TOKENS, INTER), emu.bfloat16, emu.TILE_LAYOUT)
    assert _bmm(device, case, output_tensor=out) is out
    assert_pcc(want, emu.to_torch(out).float(), pcc=0.9999, name="moe_bmm into the preallocated output")


def test_local_reduce_writes_preallocated_outputs(device, case):
    want = golden.local_reduce_moe_output(case["y"], case["idx_map"], case["token_weights"], case["counts"], NUM_TOKENS)
    out = _poison(device, (NUM_TOKENS, HIDDEN), emu.bfloat16, emu.ROW_MAJOR_LAYOUT)
    overflow = _poison(device, (NUM_TOKENS, 1), emu.uint32, emu.ROW_MAJOR_LAYOUT)
    got = _reduce(device, case, output_tensors=[out, overflow])
    assert got.output is out and got.row_overflow is overflow
    assert_pcc(want, emu.to_torch(out).float(), pcc=0.9999, name="local reduce into the preallocated output")
    assert not emu.to_torch(overflow).any(), "no row overflows: the preallocated counts must be rewritten to 0"


@pytest.mark.parametrize(
    "run, wrong, message",
    [
        (
            _scatter_into,
            ((NUM_LOCAL, NUM_TOKENS + 1, HIDDEN), emu.bfloat16, emu.ROW_MAJOR_LAYOUT),
            r"scatter_moe_input: output_tensors\[0\] is \[4, 41, 64\] bfloat16 ROW_MAJOR, the op writes \[4, 40, 64\] "
            r"bfloat16 ROW_MAJOR",
        ),
        (
            _bmm_into,
            # A ROW_MAJOR output_tensor asks for a ROW_MAJOR output; its shape must still be the op's.
            ((NUM_LOCAL, NUM_TOKENS + 1, INTER), emu.bfloat16, emu.ROW_MAJOR_LAYOUT),
            r"moe_bmm: output_tensor is \[4, 41, 32\] bfloat16 ROW_MAJOR, the op writes \[4, 40, 32\] bfloat16 "
            r"ROW_MAJOR",
        ),
    ],
)
def test_mismatched_preallocated_output_is_refused(device, case, run, wrong, message):
    with pytest.raises(ValueError, match=message):
        run(device, case, _poison(device, *wrong))


def test_too_many_preallocated_outputs_are_refused(device, case):
    with pytest.raises(ValueError, match="output_tensors has 4 entries, the op has 3 outputs"):
        _reduce(device, case, output_tensors=[None, None, None, None])


def test_preallocated_output_on_another_device_is_refused(device, case):
    other = emu.open_device(grid=(1, 1))
    try:
        elsewhere = _poison(other, (NUM_LOCAL, NUM_TOKENS, HIDDEN), emu.bfloat16, emu.ROW_MAJOR_LAYOUT)
        with pytest.raises(
            ValueError,
            match=r"scatter_moe_input: output_tensors\[0\] must be a tensor on the inputs' "
            r"device \(emulator\)",
        ):
            _scatter_into(device, case, elsewhere)
    finally:
        emu.close_device(other)


@pytest.mark.parametrize("run", [_scatter, _bmm, _reduce], ids=["scatter", "moe_bmm", "local_reduce"])
def test_memory_config_places_new_outputs(device, case, run):
    """The suite's ops keep their outputs in interleaved DRAM on the emulator; asking for L1 outputs is an
    error naming the config (on hardware the runtime allocates them, and the kernels' accessors take either)."""
    default = run(device, case)
    in_dram = run(device, case, memory_config=emu.DRAM_MEMORY_CONFIG)
    first_default = default[0] if isinstance(default, tuple) else default
    first_dram = in_dram[0] if isinstance(in_dram, tuple) else in_dram
    assert first_dram.memory_config() == emu.DRAM_MEMORY_CONFIG
    assert torch.equal(emu.to_torch(first_default), emu.to_torch(first_dram))
    with pytest.raises(NotImplementedError, match=r"buffer_type=<BufferType.L1.*is not emulated"):
        run(device, case, memory_config=emu.L1_MEMORY_CONFIG)
