"""ttnn_moe._C.weights.random_normal, the random layer's generator: a function of (seed, index)
only, normal in shape (checked against torch's normal quantiles and moments)."""

import numpy as np
import pytest
import torch
from ttnn_moe._C import weights


def test_values_depend_only_on_seed_and_index():
    a = weights.random_normal(7, 10001, 1.0, "float32")
    np.testing.assert_array_equal(weights.random_normal(7, 10001, 1.0, "float32"), a)
    np.testing.assert_array_equal(weights.random_normal(7, 333, 1.0, "float32"), a[:333])  # a prefix
    assert not np.array_equal(weights.random_normal(8, 10001, 1.0, "float32"), a)


def test_bfloat16_is_the_rounded_float32_and_scale_multiplies():
    values = torch.from_numpy(weights.random_normal(3, 4096, 0.125, "float32"))
    unit = torch.from_numpy(weights.random_normal(3, 4096, 1.0, "float32"))
    assert torch.equal(values, unit * 0.125)  # a power of two: exact
    bits = torch.from_numpy(weights.random_normal(3, 4096, 0.125, "bfloat16").view(np.int16))
    assert torch.equal(bits.view(torch.bfloat16), values.bfloat16())


def test_distribution_is_standard_normal():
    z = torch.from_numpy(weights.random_normal(1, 1 << 22, 1.0, "float32")).double()
    assert abs(float(z.mean())) < 2e-3 and float(z.std()) == pytest.approx(1.0, abs=2e-3)
    normal = torch.distributions.Normal(0.0, 1.0)
    for p in (0.001, 0.05, 0.25, 0.5, 0.75, 0.95, 0.999):
        assert float(torch.quantile(z[: 1 << 20], p)) == pytest.approx(float(normal.icdf(torch.tensor(p))), abs=0.01)
    assert float(z.abs().max()) < 4.0  # the outer bins end near 3.8
    assert float((z**4).mean()) == pytest.approx(3.0, abs=0.05)  # kurtosis: normal tails, not uniform ones


def test_bad_arguments_name_the_value():
    with pytest.raises(ValueError, match="scale must be positive, got -1"):
        weights.random_normal(1, 4, -1.0)
    with pytest.raises(ValueError, match="dtype must be 'bfloat16' or 'float32', got 'int8'"):
        weights.random_normal(1, 4, 1.0, "int8")
