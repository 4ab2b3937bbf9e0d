"""comp_pcc, max_abs_error, assert_pcc, assert_equal_exact: they must pass equal data and catch real mismatches."""

import math

import pytest
import torch
from ttnn_moe.testing import assert_equal_exact, assert_pcc, comp_pcc, max_abs_error


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def test_pcc_matches_the_textbook_formula():
    a, b = randn(1000, seed=1), randn(1000, seed=2)
    b = a + 0.5 * b
    ad, bd = a.double() - a.double().mean(), b.double() - b.double().mean()
    expected = float((ad * bd).sum() / math.sqrt(float((ad * ad).sum() * (bd * bd).sum())))
    passed, value = comp_pcc(a, b, 0.99)
    assert value == pytest.approx(expected, abs=1e-12)
    assert not passed and expected < 0.99


def test_identical_and_constant_tensors():
    a = randn(4, 8)
    assert comp_pcc(a, a.clone()) == (True, 1.0)
    assert comp_pcc(torch.zeros(5), torch.zeros(5)) == (True, 1.0)  # constant: PCC undefined, equal -> 1
    assert comp_pcc(torch.full((5,), 2.0), torch.full((5,), 3.0)) == (False, 0.0)
    assert comp_pcc(torch.zeros(5), torch.tensor([0.0, 0, 0, 0, 1e-3])) == (False, 0.0)
    assert comp_pcc(torch.zeros(0), torch.zeros(0)) == (True, 1.0)
    assert comp_pcc(a.to(torch.bfloat16), a.to(torch.bfloat16).float())[0]


def test_non_finite_values_must_match_in_place():
    a = randn(100, seed=3)
    a[7], a[9] = float("nan"), float("inf")
    b = a.clone()
    b[0] += 1e-4
    passed, value = comp_pcc(a, b)
    assert passed and 0.9999 < value < 1.0  # correlation over the finite elements
    moved = a.clone()
    moved[7], moved[8] = 0.0, float("nan")
    assert comp_pcc(a, moved) == (False, 0.0)
    flipped = a.clone()
    flipped[9] = float("-inf")
    assert comp_pcc(a, flipped) == (False, 0.0)
    assert comp_pcc(torch.full((3,), float("nan")), torch.full((3,), float("nan"))) == (True, 1.0)


def test_max_abs_error():
    a = torch.tensor([1.0, 2.0, float("nan"), float("inf")])
    assert max_abs_error(a, torch.tensor([1.5, 2.0, float("nan"), float("inf")])) == 0.5
    assert max_abs_error(a, torch.tensor([1.0, 2.0, 0.0, float("inf")])) == float("inf")
    assert max_abs_error(torch.tensor([3], dtype=torch.int32), torch.tensor([-1], dtype=torch.int32)) == 4.0
    with pytest.raises(ValueError, match=r"shapes differ: \(4,\) vs \(3,\)"):
        max_abs_error(a, a[:3])


def test_assert_pcc_reports_pcc_error_and_worst_element():
    golden = randn(16, 32, seed=4)
    got = golden + 1e-3 * randn(16, 32, seed=5)
    assert assert_pcc(golden, got, 0.999, "close") > 0.999
    got[3, 17] = 50.0
    with pytest.raises(AssertionError) as info:
        assert_pcc(golden, got, 0.999, "broken")
    message = str(info.value)
    assert message.startswith("broken: pcc 0.")
    assert "at index (3, 17)" in message and "got 50" in message
    assert f"max abs error {abs(50.0 - float(golden[3, 17])):.6g}" in message
    with pytest.raises(AssertionError, match=r"shape \(16, 31\) differs from expected \(16, 32\)"):
        assert_pcc(golden, got[:, :31])


def test_assert_equal_exact_lists_mismatches():
    expected = torch.arange(12, dtype=torch.int32).reshape(3, 4)
    assert_equal_exact(expected, expected.to(torch.uint32))  # same values, other dtype
    got = expected.clone()
    got[0, 1], got[2, 3] = 100, -5
    with pytest.raises(AssertionError) as info:
        assert_equal_exact(expected, got, "table")
    message = str(info.value)
    assert "table: 2 of 12 elements differ" in message
    assert "(0, 1): expected 1, got 100" in message and "(2, 3): expected 11, got -5" in message
    assert message.count("expected") == 2
    with pytest.raises(AssertionError, match="1 of 3 elements differ"):
        assert_equal_exact(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0000002]))
    assert_equal_exact(torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]))


def test_assert_equal_exact_lists_at_most_five():
    with pytest.raises(AssertionError) as info:
        assert_equal_exact(torch.zeros(20), torch.ones(20), "many")
    assert "20 of 20 elements differ" in str(info.value) and str(info.value).count("expected") == 5
