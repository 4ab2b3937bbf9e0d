"""How tt-metal's factories spread units of work (tiles, blocks) over a rectangular core grid."""

from __future__ import annotations

from ttnn_moe._C import program as pd


def grid_cores(grid: tuple[int, int], row_major: bool = True) -> list[pd.CoreCoord]:
    """Every core of a grid_x by grid_y grid anchored at (0, 0), row by row (row_major) or column by column."""
    grid_x, grid_y = grid
    if row_major:
        return [pd.CoreCoord(i % grid_x, i // grid_x) for i in range(grid_x * grid_y)]
    return [pd.CoreCoord(i // grid_y, i % grid_y) for i in range(grid_x * grid_y)]


def split_work_to_cores(
    grid: tuple[int, int], units: int, row_major: bool = True
) -> list[tuple[pd.CoreCoord, int, int]]:
    """tt-metal's split_work_to_cores: [(core, units, first unit)] for the cores that get work.

    The first `units % cores` cores (core group 1) take one unit more than the rest (group 2); cores are
    taken in `grid_cores` order.
    """
    if units < 0:
        raise ValueError(f"units must be >= 0, got {units}")
    cores = grid_cores(grid, row_major)[: min(units, grid[0] * grid[1])]
    if not cores:
        return []
    base, extra = divmod(units, len(cores))
    split, start = [], 0
    for i, core in enumerate(cores):
        n = base + (1 if i < extra else 0)
        split.append((core, n, start))
        start += n
    return split


def core_range_set(cores: list[pd.CoreCoord]) -> pd.CoreRangeSet:
    return pd.CoreRangeSet([pd.CoreRange(c, c) for c in cores])
