"""The emulator, its kernels and the ops under AddressSanitizer and UndefinedBehaviorSanitizer
(tools/sanitizers.py): a subset that runs every op at least once, on one device and on a mesh, must
be clean; and the instrumentation is live, down to the kernels the emulator compiles at run time."""

import textwrap

import pytest

from tools import sanitizers

OUT_OF_BOUNDS_KERNEL_TEST = '''
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

KERNEL = """
#include <cstdlib>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t index = get_arg_val<uint32_t>(0);
#ifdef ON_THE_HEAP
    // A size known at run time only, so just AddressSanitizer can tell the store is out of bounds.
    volatile uint32_t* slots = static_cast<uint32_t*>(std::malloc(get_arg_val<uint32_t>(1)));
    slots[index] = 1;  // 16 bytes, index 4: one past the allocation
    std::free(const_cast<uint32_t*>(slots));
#else
    volatile uint32_t slots[4] = {0, 0, 0, 0};
    slots[index] = 1;  // index 4: one past the array
#endif
}
"""

def test_kernel_writes_past_its_memory():
    import os
    dev = emu.open_device()
    core = pd.CoreCoord(0, 0)
    kernel = pd.KernelDescriptor(
        kernel_source=KERNEL,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=pd.CoreRangeSet([pd.CoreRange(core, core)]),
        runtime_args=[(core, [4, 16])],
        defines=[("ON_THE_HEAP", "1")] if os.environ.get("PROBE_HEAP") else [],
        config=pd.ReaderConfigDescriptor(),
    )
    emu.run_program(dev, pd.ProgramDescriptor(kernels=[kernel]))
'''


def test_the_sanitized_subset_is_clean():
    done = sanitizers.run(sanitizers.SANITIZED_TESTS)
    output = done.stdout + done.stderr
    assert not [mark for mark in sanitizers.REPORT_MARKS if mark in output], output[-6000:]
    assert done.returncode == 0 and " passed" in done.stdout, output[-6000:]


@pytest.mark.parametrize(
    "where, report",
    [
        ("stack", "runtime error: index 4 out of bounds for type"),  # UndefinedBehaviorSanitizer
        ("heap", "ERROR: AddressSanitizer: heap-buffer-overflow"),
    ],
)
def test_a_kernel_writing_past_its_memory_is_reported(tmp_path, monkeypatch, where, report):
    """The kernels the emulator compiles at run time are instrumented: an out-of-bounds write ends the
    run with the sanitizer's report naming it."""
    probe = tmp_path / "test_out_of_bounds_kernel.py"
    probe.write_text(textwrap.dedent(OUT_OF_BOUNDS_KERNEL_TEST))
    if where == "heap":
        monkeypatch.setenv("PROBE_HEAP", "1")
    done = sanitizers.run([str(probe)])
    assert done.returncode != 0
    assert report in done.stdout + done.stderr, (done.stdout + done.stderr)[-4000:]
