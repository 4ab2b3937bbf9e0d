"""Suite-wide test settings.

torch's intra-op thread pool spins while it waits for its workers. The tests
use small tensors, and CI shares few cores between processes, so a second
torch thread only waits: one thread per process runs the suite many times faster.
"""

import torch

torch.set_num_threads(1)


def pytest_terminal_summary(terminalreporter):
    """Reports how many kernels this run had to build (a warm disk cache builds none)."""
    from ttnn_moe._C import emu

    stats = emu.jit_stats()
    terminalreporter.write_line(
        f"emulator kernel builds: {stats['builds']} compiled, {stats['cache_hits']} from the disk cache"
    )
