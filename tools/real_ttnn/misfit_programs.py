"""Programs that do not fit a device, one per limit, sized from the device's own DeviceLimits.

tt-metal 0.81.1 checks some limits only after the kernel compile (a kernel on a core outside
the grid, a circular buffer larger than L1 both reach the compile), so ttnn_moe checks every
program before launch (`ttnn_moe._C.program.check_program_fits`). Used by the emulator tests and
by the real-runtime runner, which needs no torch.
"""

from __future__ import annotations

from ttnn_moe._C import program as pd
from ttnn_moe.paths import kernels_dir

KERNEL = str(kernels_dir() / "scatter_moe_input" / "dataflow" / "reader_gather_rows.cpp")


def _program(core: pd.CoreCoord, *, cb_bytes: int = 2048, cb_index: int = 0, semaphore_id: int = 0):
    cores = pd.CoreRangeSet([pd.CoreRange(core, core)])
    kernel = pd.KernelDescriptor(kernel_source=KERNEL, core_ranges=cores, config=pd.ReaderConfigDescriptor())
    cb_format = pd.CBFormatDescriptor(buffer_index=cb_index, data_format=pd.DataFormat.UInt32, page_size=2048)
    cb = pd.CBDescriptor(total_size=cb_bytes, core_ranges=cores, format_descriptors=[cb_format])
    semaphore = pd.SemaphoreDescriptor(id=semaphore_id, core_ranges=cores, initial_value=0)
    return pd.ProgramDescriptor(kernels=[kernel], semaphores=[semaphore], cbs=[cb])


def misfit_programs(limits: pd.DeviceLimits) -> dict[str, tuple[pd.ProgramDescriptor, str]]:
    """name -> (a program one limit rejects, the words its rejection must contain)."""
    outside = pd.CoreCoord(limits.grid.x + 12, limits.grid.y + 12)
    grid = f"{limits.grid.x}x{limits.grid.y}"
    origin = pd.CoreCoord(0, 0)
    past_l1 = (limits.l1_bytes_per_core // 2048 + 1) * 2048
    return {
        "core_outside_grid": (
            _program(outside),
            f"placed on core ({outside.x}, {outside.y}), outside the device's {grid} worker grid",
        ),
        "cb_past_l1": (
            _program(origin, cb_bytes=past_l1),
            f"circular buffers of {past_l1} B on core (0, 0) exceed the {limits.l1_bytes_per_core} B of L1",
        ),
        "cb_index_past_limit": (
            _program(origin, cb_index=limits.max_cbs_per_core),
            f"circular buffer index {limits.max_cbs_per_core} is past the device's {limits.max_cbs_per_core}",
        ),
        "semaphore_past_limit": (
            _program(origin, semaphore_id=limits.max_semaphores_per_core),
            f"semaphore id {limits.max_semaphores_per_core} is past the device's {limits.max_semaphores_per_core}",
        ),
    }
