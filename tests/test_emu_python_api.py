"""ttnn_moe.emu tensors on one device: round trips per dtype x layout, the DRAM page bytes
against an independent formulation of the tilized layout, TensorArgs, and bad input."""

import math

import numpy as np
import pytest
import torch
import ttnn_moe.emu as ttnn
from emu_fixtures import emu_device_fixture

EXACT_DTYPES = [ttnn.bfloat16, ttnn.float32, ttnn.uint32, ttnn.uint16, ttnn.int32]
LAYOUTS = [ttnn.ROW_MAJOR_LAYOUT, ttnn.TILE_LAYOUT]
# Shapes with dims that are not multiples of 32, ranks 1 to 4.
SHAPES = [(70,), (33, 45), (2, 3, 20, 70), (64, 32)]


device = emu_device_fixture(device_id=0, grid=(8, 8))


def _bits(t: torch.Tensor) -> torch.Tensor:
    """Integer bit patterns of a tensor (so NaN, -0.0 and uint32 compare exactly)."""
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[t.element_size()]).to(torch.int64)


def _sample(dtype, shape, seed=0):
    """Values of dtype covering its range and special values, in ttnn's input torch dtype."""
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    if dtype is ttnn.bfloat16 or dtype is ttnn.float32:
        values = torch.randn(n, generator=g) * 100
        special = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-40, -3e-39, 3.0e38])
        if dtype is ttnn.float32:
            special = torch.cat([special, torch.tensor([1e-45, -1.17e-38])])  # float32 subnormals
        values[: min(n, special.numel())] = special[: min(n, special.numel())]
        torch_dtype = torch.bfloat16 if dtype is ttnn.bfloat16 else torch.float32
        return values.to(torch_dtype).reshape(shape)
    low, high = dtype.min_value, dtype.max_value
    values = torch.randint(low, high + 1, (n,), generator=g, dtype=torch.int64)
    values[: min(n, 3)] = torch.tensor([low, high, 0])[: min(n, 3)]
    return values.reshape(shape)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda l: l.name)
@pytest.mark.parametrize("dtype", EXACT_DTYPES, ids=lambda d: d.name)
def test_round_trip_is_bit_exact(device, dtype, layout, shape):
    x = _sample(dtype, shape)
    t = ttnn.from_torch(x, dtype=dtype, layout=layout, device=device)
    assert t.shape == shape and t.dtype is dtype and t.layout is layout
    y = ttnn.to_torch(t)
    assert y.dtype == dtype.torch_dtype
    assert y.shape == x.shape  # padding is invisible
    if dtype.is_integer:
        assert torch.equal(y.to(torch.int64), x)
    else:
        assert torch.equal(_bits(y), _bits(x))


def test_to_torch_dtypes_follow_ttnn():
    # ttnn 0.81.1 exports UINT32 as torch.uint32, UINT16 as torch.uint16, BFLOAT8_B/BFLOAT4_B as float32.
    assert ttnn.uint32.torch_dtype == torch.uint32
    assert ttnn.uint16.torch_dtype == torch.uint16
    assert ttnn.int32.torch_dtype == torch.int32
    assert ttnn.bfloat8_b.torch_dtype == torch.float32
    assert ttnn.bfloat4_b.torch_dtype == torch.float32


def test_float32_to_bfloat16_rounds_to_nearest_even(device):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(40, 50, generator=g) * 1000
    # Exact ties between two bf16 values: to the even neighbour (down, up, down for a negative, up).
    ties = torch.tensor([0x3F808000, 0x3F818000, 0xBF808000, 0x3F80C000], dtype=torch.int64)
    x[0, :4] = ties.to(torch.int32).view(torch.float32)
    t = ttnn.from_torch(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    stored = ttnn.to_torch(t)
    assert (_bits(stored[0, :4]) & 0xFFFF).tolist() == [0x3F80, 0x3F82, 0xBF80, 0x3F81]
    assert torch.equal(_bits(stored), _bits(x.to(torch.bfloat16)))  # torch's conversion as the golden


def test_dtype_inference_like_ttnn(device):
    cases = {
        torch.float32: ttnn.float32,
        torch.bfloat16: ttnn.bfloat16,
        torch.int64: ttnn.uint32,
        torch.int32: ttnn.int32,
        torch.int16: ttnn.uint16,
    }
    for torch_dtype, expected in cases.items():
        t = ttnn.from_torch(torch.ones(2, 3, dtype=torch_dtype), device=device)
        assert t.dtype is expected
        assert t.layout is ttnn.ROW_MAJOR_LAYOUT


def test_host_tensor_round_trip_and_to_device(device):
    x = torch.arange(35 * 3, dtype=torch.int64).reshape(35, 3)
    host = ttnn.from_torch(x, dtype=ttnn.uint32, layout=ttnn.TILE_LAYOUT)
    assert host.device() is None
    assert torch.equal(ttnn.to_torch(host).to(torch.int64), x)
    on_device = ttnn.to_device(host, device)
    assert torch.equal(ttnn.to_torch(on_device).to(torch.int64), x)
    back = ttnn.from_device(on_device)
    assert back.device() is None and torch.equal(ttnn.to_torch(back).to(torch.int64), x)


# --- DRAM pages against independent formulations ---------------------------------------------------


def _expected_tile_pages(values: np.ndarray) -> np.ndarray:
    """(B, H, W) element values -> tile pages, by the position formula of each element:
    tile = row-major tile index over the padded matrix, batch-major; inside a tile the face
    (TL, TR, BL, BR) then the row-major position in the 16x16 face. Padding stays zero."""
    b, h, w = values.shape
    ht, wt = -(-h // 32), -(-w // 32)
    out = np.zeros(b * ht * wt * 1024, dtype=values.dtype)
    bi, r, c = np.meshgrid(np.arange(b), np.arange(h), np.arange(w), indexing="ij")
    tile = bi * ht * wt + (r // 32) * wt + c // 32
    face = ((r % 32) // 16) * 2 + (c % 32) // 16
    out[tile * 1024 + face * 256 + (r % 16) * 16 + c % 16] = values
    return out.view(np.uint8)


@pytest.mark.parametrize(
    "dtype", [ttnn.bfloat16, ttnn.float32, ttnn.uint32, ttnn.int32, ttnn.uint16], ids=lambda d: d.name
)
def test_tile_pages_in_dram_match_independent_tilize(device, dtype):
    shape = (2, 45, 70)
    x = _sample(dtype, shape, seed=3)
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    chip = device.chips[0]
    raw = chip.read(t.buffer_address(), t.page_size, t.nbytes)
    np_dtype = {
        ttnn.bfloat16: np.uint16,
        ttnn.float32: np.uint32,
        ttnn.uint32: np.uint32,
        ttnn.int32: np.uint32,
        ttnn.uint16: np.uint16,
    }[dtype]
    if dtype.is_integer:
        element_values = (x & (2 ** (8 * dtype.element_bytes) - 1)).numpy().astype(np_dtype)
    else:
        element_values = _bits(x).numpy().astype(np.int64).astype(np_dtype)
    assert np.array_equal(raw, _expected_tile_pages(element_values))
    assert t.num_pages == 2 * 2 * 3 and t.page_size == 1024 * dtype.element_bytes


def test_row_major_pages_are_rows(device):
    x = torch.arange(3 * 5 * 7, dtype=torch.int32).reshape(3, 5, 7)
    t = ttnn.from_torch(x, dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)
    assert t.page_size == 7 * 4 and t.num_pages == 15
    raw = device.chips[0].read(t.buffer_address(), t.page_size, t.nbytes)
    for row in (0, 7, 14):
        page = raw[row * 28 : (row + 1) * 28].view(np.int32)
        assert page.tolist() == list(range(row * 7, row * 7 + 7))


def test_to_arg_describes_the_buffer(device):
    t = ttnn.from_torch(torch.zeros(3, 40, 70), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    arg = t.to_arg()
    assert list(arg.shape) == [3, 40, 70]
    assert arg.dtype == ttnn.bfloat16.data_format
    assert int(arg.layout) == int(ttnn.TILE_LAYOUT)
    assert arg.address == t.buffer_address()
    assert arg.page_size == 2048
    assert arg.num_pages == 3 * 2 * 3
    assert arg.is_dram


def test_deallocate_frees_the_buffer(device):
    a = ttnn.allocate_tensor_on_device((64, 64), ttnn.float32, ttnn.TILE_LAYOUT, device)
    address = a.buffer_address()
    ttnn.deallocate(a)
    assert not a.is_allocated()
    with pytest.raises(RuntimeError, match="deallocated"):
        ttnn.to_torch(a)
    b = ttnn.allocate_tensor_on_device((64, 64), ttnn.float32, ttnn.TILE_LAYOUT, device)
    assert b.buffer_address() == address  # first fit reuses the freed range


def test_garbage_collected_tensor_frees_its_buffer(device):
    a = ttnn.allocate_tensor_on_device((1, 32), ttnn.float32, ttnn.TILE_LAYOUT, device)
    address = a.buffer_address()
    del a
    b = ttnn.allocate_tensor_on_device((1, 32), ttnn.float32, ttnn.TILE_LAYOUT, device)
    assert b.buffer_address() == address


# --- bad input --------------------------------------------------------------------------------------


def test_bad_dtype_and_layout_are_type_errors(device):
    x = torch.zeros(4, 4)
    with pytest.raises(TypeError, match="torch.float32"):
        ttnn.from_torch(x, dtype=torch.float32, device=device)
    with pytest.raises(TypeError, match="'TILE'"):
        ttnn.from_torch(x, dtype=ttnn.float32, layout="TILE", device=device)
    with pytest.raises(TypeError, match="float64"):
        ttnn.from_torch(x.double(), device=device)  # no dtype to infer from float64
    with pytest.raises(TypeError, match="list"):
        ttnn.from_torch([1.0, 2.0], device=device)


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b], ids=lambda d: d.name)
def test_block_floats_require_tile_layout(device, dtype):
    assert ttnn.from_torch(torch.zeros(32, 32), dtype=dtype, device=device).layout is ttnn.TILE_LAYOUT
    with pytest.raises(ValueError, match=f"{dtype.name}.*ROW_MAJOR"):
        ttnn.from_torch(torch.zeros(32, 32), dtype=dtype, layout=ttnn.ROW_MAJOR_LAYOUT, device=device)


@pytest.mark.parametrize("shape", [(), (1, 2, 3, 4, 5), (4, 0)], ids=str)
def test_bad_shapes(device, shape):
    with pytest.raises(ValueError, match=r"shape"):
        ttnn.from_torch(torch.zeros(shape), dtype=ttnn.float32, device=device)


def test_integer_range_is_checked(device):
    x = torch.tensor([[1, -5, 3]])
    with pytest.raises(ValueError, match=r"-5 at index \[0, 1\].*uint32"):
        ttnn.from_torch(x, dtype=ttnn.uint32, device=device)
    with pytest.raises(ValueError, match="70000.*uint16"):
        ttnn.from_torch(torch.tensor([70000]), dtype=ttnn.uint16, device=device)
    with pytest.raises(ValueError, match="non-finite"):
        ttnn.from_torch(torch.tensor([float("nan")]), dtype=ttnn.int32, device=device)


def test_l1_interleaved_tensors_round_trip(device):
    values = torch.arange(4, dtype=torch.float32)
    t = ttnn.from_torch(values, dtype=ttnn.float32, device=device, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert t.memory_config() == ttnn.L1_MEMORY_CONFIG
    assert torch.equal(ttnn.to_torch(t), values)


def test_host_tensor_has_no_buffer():
    t = ttnn.from_torch(torch.zeros(4), dtype=ttnn.float32)
    with pytest.raises(ValueError, match="host tensor"):
        t.to_arg()


def test_closed_device_refuses_tensors():
    dev = ttnn.open_device(device_id=1)
    t = ttnn.from_torch(torch.zeros(4), dtype=ttnn.float32, device=dev)
    ttnn.close_device(dev)
    with pytest.raises(RuntimeError, match="closed"):
        ttnn.to_torch(t)
    with pytest.raises(RuntimeError, match="closed"):
        ttnn.from_torch(torch.zeros(4), dtype=ttnn.float32, device=dev)


# --- bfloat8_b, bfloat4_b: one shared exponent per 16 values of a face row ----------------------------

# dtype, magnitude bits, tile bytes (64 shared exponents + 1024 codes of 8 or 4 bits)
BLOCK_FLOATS = [(ttnn.bfloat8_b, 7, 1088), (ttnn.bfloat4_b, 3, 576)]


def _blocks_of_16(x: torch.Tensor) -> torch.Tensor:
    """(..., rows, cols) -> (..., rows, cols/16 rounded up, 16): the values sharing one exponent
    (16 consecutive columns of a row inside a face), zero-padded like the tile."""
    pad = (-x.shape[-1]) % 16
    return torch.nn.functional.pad(x, (0, pad)).reshape(*x.shape[:-1], -1, 16)


@pytest.mark.parametrize("dtype, bits, tile_bytes", BLOCK_FLOATS, ids=lambda v: getattr(v, "name", v))
def test_block_float_values_on_the_grid_round_trip_exactly(device, dtype, bits, tile_bytes):
    # Per block: exponent e, magnitudes k * 2^(e-(bits-1)) with |k| < 2^bits and one |k| >= 2^(bits-1)
    # so that 2^e is the block's largest power of two: every value is representable.
    g = torch.Generator().manual_seed(5)
    top = 2**bits
    e = torch.randint(-30, 30, (64, 4, 1), generator=g).double()
    k = torch.randint(-top + 1, top, (64, 4, 16), generator=g).double()
    k[..., 0] = torch.randint(top // 2, top, (64, 4), generator=g).double()
    x = (k * torch.pow(2.0, e - (bits - 1))).reshape(64, 64).float()
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    assert t.page_size == tile_bytes and t.num_pages == 4
    y = ttnn.to_torch(t)
    assert y.dtype == torch.float32
    assert torch.equal(y, x)


@pytest.mark.parametrize("dtype, bits, tile_bytes", BLOCK_FLOATS, ids=lambda v: getattr(v, "name", v))
def test_block_float_error_is_within_one_step_of_the_shared_exponent(device, dtype, bits, tile_bytes):
    g = torch.Generator().manual_seed(6)
    scale = torch.pow(2.0, torch.randint(-12, 12, (2, 45, 1), generator=g).float())
    x = torch.randn(2, 45, 70, generator=g) * scale
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=device)
    y = ttnn.to_torch(t)
    assert y.shape == x.shape  # padding is invisible
    xb, yb = _blocks_of_16(x.double()), _blocks_of_16(y.double())
    shared_exponent = torch.floor(torch.log2(xb.abs().amax(dim=-1, keepdim=True)))
    step = torch.pow(2.0, shared_exponent - (bits - 1))  # `bits` magnitude bits below the shared exponent
    assert ((yb - xb).abs() <= step).all()
    assert ((yb - xb).abs() > 0).any()  # it does quantize


@pytest.mark.parametrize("dtype", [ttnn.bfloat8_b, ttnn.bfloat4_b], ids=lambda d: d.name)
def test_block_float_zeros_and_mesh_replication(dtype):
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2), grid=(1, 1))
    x = torch.zeros(40, 40)
    x[3, 5] = 1.5
    t = ttnn.from_torch(x, dtype=dtype, layout=ttnn.TILE_LAYOUT, device=mesh)
    back = ttnn.to_torch(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0))
    assert torch.equal(back, torch.cat([x, x]))


def test_non_contiguous_input(device):
    x = (torch.randn(40, 50, generator=torch.Generator().manual_seed(8)) * 100).to(torch.bfloat16)
    view = x.T[::2]  # strided, transposed
    t = ttnn.from_torch(view, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=device)
    assert torch.equal(ttnn.to_torch(t), view)


@pytest.mark.parametrize(
    "dtype, layout, value",
    [(ttnn.uint32, ttnn.ROW_MAJOR_LAYOUT, 48), (ttnn.bfloat16, ttnn.TILE_LAYOUT, -1.5), (ttnn.int32, None, -7)],
)
def test_full_fills_a_device_tensor(device, dtype, layout, value):
    t = ttnn.full(ttnn.Shape([2, 33]), value, dtype=dtype, layout=layout, device=device)
    assert (list(t.shape), t.dtype, t.layout) == ([2, 33], dtype, layout or ttnn.ROW_MAJOR_LAYOUT)
    assert torch.equal(ttnn.to_torch(t).to(torch.float64), torch.full((2, 33), float(value), dtype=torch.float64))


def test_full_defaults_to_bfloat16_and_checks_the_range(device):
    assert ttnn.full([1, 1], 2.0, device=device).dtype == ttnn.bfloat16
    with pytest.raises(ValueError, match="uint32"):
        ttnn.full([1, 1], -1, dtype=ttnn.uint32, device=device)
