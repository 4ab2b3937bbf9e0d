"""Model implementations built on the ttnn_moe ops."""
