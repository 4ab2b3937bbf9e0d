"""Suite-wide test settings.

torch's intra-op thread pool spins while it waits for its workers. The tests
use small tensors, and CI shares few cores between processes, so a second
torch thread only waits: one thread per process runs the suite many times faster.
"""

import pytest
import torch
from hypothesis import HealthCheck, settings

torch.set_num_threads(1)


def pytest_terminal_summary(terminalreporter):
    """Reports how many kernels this run had to build (a warm disk cache builds none)."""
    from ttnn_moe._C import emu

    stats = emu.jit_stats()
    terminalreporter.write_line(
        f"emulator kernel builds: {stats['builds']} compiled, {stats['cache_hits']} from the disk cache"
    )


# Property tests (hypothesis): a bounded, repeatable profile for CI by default; the "long" one
# with `pytest --hypothesis-profile=long`. No example database is written into the work tree.
settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=2000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("ci")


@pytest.fixture(scope="module")
def wheel():
    """The unpacked ttnn 0.81.1 wheel, set as the source of Tenstorrent's kernels
    (ttnn_moe.emu.ttmetal) for the module's tests; a module may define its own."""
    from ttnn_moe.emu.ttmetal.wheel import use_wheel

    from tools.tt_wheel import ensure_ttnn_wheel

    root = ensure_ttnn_wheel()
    use_wheel(root)
    yield root
    use_wheel(None)
