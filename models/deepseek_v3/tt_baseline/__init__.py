"""tt-metal's classic and optimized DeepSeek-V3 MoE flows written against the ttnn API (Tenstorrent's own ops), as the
baseline our `TtMoE` is measured against. Same weights, config, mesh, gate and layout as `TtMoE`."""

from models.deepseek_v3.tt_baseline.moe import PATHS, TtMoEBaseline

__all__ = ["PATHS", "TtMoEBaseline"]
