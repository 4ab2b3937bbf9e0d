"""Host built-ins, not kernels: matmul, linear, add, mul, silu, sigmoid, topk.

Each reads its inputs from the device, computes with torch on the host in fp32
(int64 for integer dtypes) device by device, and writes the result back as a new
tensor on the same device or mesh, rounded to the output dtype. Every call is counted
in host_traffic. They take ttnn's
signatures so model code runs unchanged; they model what ttnn computes, not how
or how fast. Options that only steer hardware kernels (compute_kernel_config,
program_config, core_grid) are accepted and have no effect here.
"""

from __future__ import annotations

from typing import Optional, Union

import torch

from ttnn_moe.emu.host import check_tensor, compute_values, place_like, same_device
from ttnn_moe.emu.host_traffic import host_builtin
from ttnn_moe.emu.pages import padded_shape
from ttnn_moe.emu.tensor import Tensor
from ttnn_moe.emu.types import DataType, Layout, MemoryConfig, float32, uint16, uint32

_ACTIVATIONS = {
    None: lambda x: x,
    "silu": torch.nn.functional.silu,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
}


def _check_float(t: Tensor, op: str) -> None:
    if t.dtype.is_integer:
        raise TypeError(f"{op} needs a floating-point tensor, got {t.dtype.name}")


def _check_tile(t: Tensor, op: str, name: str) -> None:
    if t.layout is not Layout.TILE:
        raise ValueError(f"{op}: {name} must be in TILE_LAYOUT (as ttnn requires), got {t.layout.name}")


def _matmul_values(a: Tensor, b: Tensor, transpose_a: bool, transpose_b: bool, op: str) -> list[torch.Tensor]:
    for t, name in ((a, "input_tensor_a"), (b, "input_tensor_b")):
        check_tensor(t, name)
        _check_float(t, op)
        _check_tile(t, op, name)
    same_device(a, b)
    results = []
    for x, w in zip(compute_values(a), compute_values(b)):
        x = x.transpose(-1, -2) if transpose_a else x
        w = w.transpose(-1, -2) if transpose_b else w
        if x.shape[-1] != w.shape[-2]:
            raise ValueError(f"{op}: inner dims differ: {list(x.shape)} @ {list(w.shape)}")
        results.append(x @ w)
    return results


@host_builtin
def matmul(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
    compute_kernel_config=None,
    program_config=None,
    core_grid=None,
) -> Tensor:
    """Host built-in, not a kernel: a @ b (torch broadcasting over leading dims), fp32 math, TILE output."""
    out = _matmul_values(input_tensor_a, input_tensor_b, transpose_a, transpose_b, "matmul")
    return place_like(out, input_tensor_a, dtype=dtype, layout=Layout.TILE, memory_config=memory_config)


@host_builtin
def linear(
    input_tensor_a: Tensor,
    input_tensor_b: Tensor,
    *,
    bias: Optional[Tensor] = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
    activation: Optional[str] = None,
    compute_kernel_config=None,
    program_config=None,
    core_grid=None,
) -> Tensor:
    """Host built-in, not a kernel: activation(a @ b + bias), fp32 math, TILE output.

    activation: None, "silu", "relu" or "sigmoid".
    """
    if activation not in _ACTIVATIONS:
        raise ValueError(f"linear: activation must be one of {list(_ACTIVATIONS)}, got {activation!r}")
    out = _matmul_values(input_tensor_a, input_tensor_b, transpose_a, transpose_b, "linear")
    if bias is not None:
        check_tensor(bias, "bias")
        _check_float(bias, "linear")
        same_device(input_tensor_a, bias)
        out = [y + b for y, b in zip(out, compute_values(bias))]
    out = [_ACTIVATIONS[activation](y) for y in out]
    return place_like(out, input_tensor_a, dtype=dtype, layout=Layout.TILE, memory_config=memory_config)


def _binary(op_name: str, fn, a: Tensor, b: Union[Tensor, int, float], dtype, memory_config) -> Tensor:
    check_tensor(a, "input_tensor_a")
    if isinstance(b, Tensor):
        same_device(a, b)
        if a.dtype.is_integer != b.dtype.is_integer:
            raise TypeError(f"{op_name}: cannot mix {a.dtype.name} and {b.dtype.name}")
        try:
            out = [fn(x, y) for x, y in zip(compute_values(a), compute_values(b))]
        except RuntimeError as e:  # torch's broadcasting error
            raise ValueError(f"{op_name}: shapes {list(a.shape)} and {list(b.shape)} do not broadcast") from e
    elif isinstance(b, (int, float)) and not isinstance(b, bool):
        out = [fn(x, b) for x in compute_values(a)]
    else:
        raise TypeError(f"{op_name}: input_tensor_b must be a Tensor or a number, got {type(b).__name__}")
    return place_like(out, a, dtype=dtype, memory_config=memory_config)


@host_builtin
def add(
    input_tensor_a: Tensor,
    input_tensor_b,
    *,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
) -> Tensor:
    """Host built-in, not a kernel: a + b with torch broadcasting (b may be a number)."""
    return _binary("add", torch.add, input_tensor_a, input_tensor_b, dtype, memory_config)


@host_builtin
def mul(
    input_tensor_a: Tensor,
    input_tensor_b,
    *,
    memory_config: Optional[MemoryConfig] = None,
    dtype: Optional[DataType] = None,
) -> Tensor:
    """Host built-in, not a kernel: a * b with torch broadcasting (b may be a number)."""
    return _binary("mul", torch.mul, input_tensor_a, input_tensor_b, dtype, memory_config)


def _unary(op_name: str, fn, t: Tensor, memory_config) -> Tensor:
    check_tensor(t, "input_tensor")
    _check_float(t, op_name)
    return place_like([fn(x) for x in compute_values(t)], t, memory_config=memory_config)


@host_builtin
def silu(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """Host built-in, not a kernel: x * sigmoid(x) in fp32."""
    return _unary("silu", torch.nn.functional.silu, input_tensor, memory_config)


@host_builtin
def sigmoid(input_tensor: Tensor, *, memory_config: Optional[MemoryConfig] = None) -> Tensor:
    """Host built-in, not a kernel: 1 / (1 + exp(-x)) in fp32."""
    return _unary("sigmoid", torch.sigmoid, input_tensor, memory_config)


@host_builtin
def topk(
    input_tensor: Tensor,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,
    *,
    memory_config: Optional[MemoryConfig] = None,
) -> tuple[Tensor, Tensor]:
    """Host built-in, not a kernel: the k largest (or smallest) values along dim and their indices.

    Ties go to the lowest index (a stable sort), so results are deterministic. As in
    ttnn, both outputs are TILE; values keep the input dtype; indices are uint16,
    or uint32 when the input is float32 or the tile-padded dim exceeds 65536.
    """
    check_tensor(input_tensor, "input_tensor")
    _check_float(input_tensor, "topk")
    rank = len(input_tensor.shape)
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise ValueError(f"topk: dim {dim!r} is out of range for shape {list(input_tensor.shape)}")
    size = input_tensor.shape[dim]
    if not isinstance(k, int) or not 1 <= k <= size:
        raise ValueError(f"topk: k must be in [1, {size}], got {k!r}")
    tile_padded = padded_shape(input_tensor.shape, Layout.TILE)[dim]
    index_dtype = uint32 if input_tensor.dtype is float32 or tile_padded > 65536 else uint16
    values, indices = [], []
    for x in compute_values(input_tensor):
        # `sorted=False` still returns them sorted: any order is allowed then.
        v, i = torch.sort(x, dim=dim, descending=largest, stable=True)
        values.append(v.narrow(dim, 0, k))
        indices.append(i.narrow(dim, 0, k))
    return (
        place_like(values, input_tensor, layout=Layout.TILE, memory_config=memory_config),
        place_like(indices, input_tensor, dtype=index_dtype, layout=Layout.TILE, memory_config=memory_config),
    )
