"""Accuracy helpers for comparing a device result with its golden or reference.

`comp_pcc` and `max_abs_error` measure (the demo reports the layer's accuracy with them);
`assert_pcc` and `assert_equal_exact` turn a comparison into an AssertionError that lists what
differs, for tests and for callers checking a model's output. Plain torch, no test framework.
"""

from __future__ import annotations

import torch

_MAX_LISTED_MISMATCHES = 5


def _as_float64(t: torch.Tensor, name: str) -> torch.Tensor:
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    return t.detach().to(torch.float64).reshape(-1)


def _check_shapes(a: torch.Tensor, b: torch.Tensor, name: str) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise AssertionError(f"{name}: shape {tuple(b.shape)} differs from expected {tuple(a.shape)}")


def _same_value(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Elementwise equality where NaN equals NaN (and inf equals inf of the same sign)."""
    return (a == b) | (torch.isnan(a) & torch.isnan(b))


def _abs_errors(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """|a - b| per element of flat float64 tensors; 0 where equal (NaN == NaN), inf where one side
    is non-finite and the other differs."""
    err = (a - b).abs()
    err[torch.isnan(err) | torch.isinf(a) | torch.isinf(b)] = float("inf")
    err[_same_value(a, b)] = 0.0
    return err


def comp_pcc(golden: torch.Tensor, calculated: torch.Tensor, pcc: float = 0.9999) -> tuple[bool, float]:
    """Pearson correlation of the two tensors (float64) and whether it reaches `pcc`.

    Identical tensors give 1.0. NaN/inf must sit at the same places with the same values, else 0.0;
    the correlation is taken over the finite elements. A constant side has no defined correlation:
    1.0 if both sides are equal, else 0.0.
    """
    a, b = _as_float64(golden, "golden"), _as_float64(calculated, "calculated")
    if a.shape != b.shape:
        raise ValueError(f"comp_pcc: shapes differ: golden {tuple(golden.shape)}, calculated {tuple(calculated.shape)}")
    if bool(_same_value(a, b).all()):
        return True, 1.0
    finite_a, finite_b = torch.isfinite(a), torch.isfinite(b)
    if not torch.equal(finite_a, finite_b) or not bool(_same_value(a[~finite_a], b[~finite_b]).all()):
        return False, 0.0
    a, b = a[finite_a], b[finite_b]
    da, db = a - a.mean(), b - b.mean()
    denom = torch.sqrt((da * da).sum() * (db * db).sum())
    if denom == 0:  # one side constant (both equal was handled above)
        return False, 0.0
    value = float((da * db).sum() / denom)
    return value >= pcc, value


def max_abs_error(a: torch.Tensor, b: torch.Tensor) -> float:
    """Largest |a - b| (float64); equal non-finite values count 0, mismatched ones inf."""
    fa, fb = _as_float64(a, "a"), _as_float64(b, "b")
    if fa.shape != fb.shape:
        raise ValueError(f"max_abs_error: shapes differ: {tuple(a.shape)} vs {tuple(b.shape)}")
    return float(_abs_errors(fa, fb).max()) if fa.numel() else 0.0


def assert_pcc(golden: torch.Tensor, got: torch.Tensor, pcc: float = 0.9999, name: str = "tensor") -> float:
    """AssertionError unless PCC(golden, got) >= pcc; the message gives the PCC, the max abs error
    and where the worst element is. Returns the PCC."""
    _check_shapes(golden, got, name)
    passed, value = comp_pcc(golden, got, pcc)
    if passed:
        return value
    a, b = _as_float64(golden, "golden"), _as_float64(got, "got")
    err = _abs_errors(a, b)
    flat = int(err.argmax())
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), golden.shape))
    raise AssertionError(
        f"{name}: pcc {value:.6f} < {pcc}; max abs error {float(err[flat]):.6g} at index {index} "
        f"(golden {float(a[flat]):.6g}, got {float(b[flat]):.6g})"
    )


def assert_equal_exact(expected: torch.Tensor, got: torch.Tensor, name: str = "tensor") -> None:
    """AssertionError unless every element is equal (NaN equals NaN). Values are compared, so int32
    and uint32 tables holding the same numbers are equal; the message lists the mismatch count and
    the first few (index, expected, got)."""
    _check_shapes(expected, got, name)
    floating = expected.dtype.is_floating_point or got.dtype.is_floating_point
    cast = torch.float64 if floating else torch.int64
    a, b = expected.detach().to(cast).reshape(-1), got.detach().to(cast).reshape(-1)
    mismatch = (~_same_value(a, b)).nonzero()[:, 0]
    if mismatch.numel() == 0:
        return
    listed = []
    for flat in mismatch[:_MAX_LISTED_MISMATCHES].tolist():
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), expected.shape))
        listed.append(f"{index}: expected {a[flat].item()}, got {b[flat].item()}")
    raise AssertionError(f"{name}: {mismatch.numel()} of {a.numel()} elements differ; first: " + "; ".join(listed))
