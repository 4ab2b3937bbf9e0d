"""Kernel conformance: our kernels parsed against the real tt-metal 0.81.1 device headers."""
