"""api/remote_circular_buffer.h: global (remote) circular buffers are not emulated, but a kernel that
includes the header builds and runs, and one that calls into it ends the run naming the call."""

import numpy as np
import pytest
from emu_programs import cb, core_set
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

PAGE = 32


def run(body: str) -> np.ndarray:
    """Runs `body` on core (0, 0) after writing 7 to CB 0's page; returns that page."""
    code = f"""
        #include "api/dataflow/dataflow_api.h"
        #include "api/remote_circular_buffer.h"
        void kernel_main() {{
            cb_reserve_back(0, 1);
            reinterpret_cast<volatile uint32_t*>(get_write_ptr(0))[0] = 7;
            {body}
            const auto out = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0));
            noc_async_write(get_write_ptr(0), out.get_noc_addr(0), {PAGE});
            noc_async_write_barrier();
        }}
    """
    dev = emu.open_device()
    out = dev.allocate(PAGE, PAGE)
    kernel = pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=core_set(0, 0),
        config=pd.WriterConfigDescriptor(),
        compile_time_args=emu.tensor_accessor_args(PAGE),
        runtime_args=[(pd.CoreCoord(0, 0), [out])],
    )
    emu.run_program(dev, pd.ProgramDescriptor(kernels=[kernel], cbs=[cb(0, 1, PAGE, core_set(0, 0))]))
    return dev.read(out, PAGE, PAGE).view(np.uint32)


def test_a_kernel_that_includes_the_header_runs():
    assert run("")[0] == 7


@pytest.mark.parametrize(
    "call",
    [
        "experimental::remote_cb_wait_front(31, 1)",
        "experimental::remote_cb_pop_front(31, 1)",
        "experimental::update_remote_cb_config_in_l1(31)",
    ],
)
def test_a_remote_cb_call_ends_the_run_naming_it(call):
    name = call.split("(")[0]
    with pytest.raises(emu.EmulatorError, match=rf"{name}: remote \(global\) circular buffers are not emulated"):
        run(call + ";")
