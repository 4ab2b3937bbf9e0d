"""Test and development tooling; not part of what a ttnn_moe user imports."""
