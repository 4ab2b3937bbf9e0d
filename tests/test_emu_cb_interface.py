"""get_local_cb_interface on the emulator: each kernel's LocalCBInterface view of a CB.

Expected values follow tt-metal 0.81.1's circular_buffer_interface.h: byte
addresses on the data movement processors, 16-byte units on TRISC
(cb_addr_shift = 4), fifo_limit = start + size, and pointers that move with
push/pop and wrap at the limit.
"""

import numpy as np
import pytest
from emu_programs import cb, core_set
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

PAGE, PAGES = 64, 4  # the CB under test: tt::CBIndex::c_3, 4 pages of 64 B
CB_RECORD = 5  # one 256 B page the kernels fill with 32-bit records
RECORD_BYTES = 256

# Writes the record page to DRAM page 0 of the output (runtime arg 0).
WRITE_RECORDS = """
    const auto out = TensorAccessor(TensorAccessorArgs<0>(), get_arg_val<uint32_t>(0));
    noc_async_write(get_read_ptr(CB_RECORD), out.get_noc_addr(0), RECORD_BYTES);
    noc_async_write_barrier();
"""
PRELUDE = f"""
    #include "api/dataflow/dataflow_api.h"
    #include "ckernel.h"
    constexpr uint32_t CB_RECORD = {CB_RECORD};
    constexpr uint32_t RECORD_BYTES = {RECORD_BYTES};
"""


def source_kernel(code, config, runtime_args=(), compile_time_args=()):
    cores = core_set(0, 0)
    return pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=cores,
        config=config,
        compile_time_args=list(compile_time_args),
        runtime_args=[(pd.CoreCoord(0, 0), list(runtime_args))],
    )


def run(kernels):
    """Runs the kernels on core (0, 0) with the two CBs; returns the 64 records as uint32."""
    dev = emu.open_device()
    out = dev.allocate(RECORD_BYTES, RECORD_BYTES)
    cbs = [cb(3, PAGES, PAGE, core_set(0, 0)), cb(CB_RECORD, 1, RECORD_BYTES, core_set(0, 0))]
    program = pd.ProgramDescriptor(kernels=[k(out) for k in kernels], cbs=cbs)
    emu.run_program(dev, program)
    return dev.read(out, RECORD_BYTES, RECORD_BYTES).view(np.uint32)


def dataflow(body):
    code = PRELUDE + "void kernel_main() {\n" + body + "\n}\n"
    return lambda out: source_kernel(code, pd.WriterConfigDescriptor(), [out], emu.tensor_accessor_args(RECORD_BYTES))


def test_dataflow_view_follows_push_pop_wrap_and_moves_the_read_pointer():
    body = """
        cb_reserve_back(CB_RECORD, 1);
        volatile uint32_t* r = reinterpret_cast<volatile uint32_t*>(get_write_ptr(CB_RECORD));
        LocalCBInterface& v = get_local_cb_interface(tt::CBIndex::c_3);  // held across the calls below
        const uint32_t start = v.fifo_rd_ptr;
        r[0] = v.fifo_size;
        r[1] = v.fifo_limit - start;
        r[2] = v.fifo_page_size;
        r[3] = v.fifo_num_pages;
        r[4] = v.fifo_wr_ptr == get_write_ptr(tt::CBIndex::c_3) && start == get_read_ptr(tt::CBIndex::c_3);
        cb_reserve_back(tt::CBIndex::c_3, 3);
        cb_push_back(tt::CBIndex::c_3, 3);
        r[5] = v.fifo_wr_ptr - start;
        r[6] = v.tiles_received;
        cb_wait_front(tt::CBIndex::c_3, 3);
        cb_pop_front(tt::CBIndex::c_3, 2);
        r[7] = v.fifo_rd_ptr - start;
        r[8] = v.tiles_acked;
        cb_reserve_back(tt::CBIndex::c_3, 1);
        cb_push_back(tt::CBIndex::c_3, 1);
        r[9] = v.fifo_wr_ptr == start;  // wrapped at the limit
        // Rewind the read pointer through the view, as kernels that re-read a CB do.
        v.fifo_rd_ptr -= 2 * v.fifo_page_size;
        r[10] = get_read_ptr(tt::CBIndex::c_3) == start;
        r[11] = ckernel::load_blocking(&r[0]);
        cb_push_back(CB_RECORD, 1);
    """
    records = run([dataflow(body + WRITE_RECORDS)])
    size = PAGE * PAGES
    want = [size, size, PAGE, PAGES, 1, 3 * PAGE, 3, 2 * PAGE, 2, 1, 1, size]
    np.testing.assert_array_equal(records[: len(want)], want)


def test_compute_view_is_in_16_byte_units_and_addresses_l1():
    # The compute kernel writes its records through the record CB's shifted write pointer, as TRISC code does.
    compute = """
        #include "api/compute/common.h"
        void kernel_main() {
            cb_reserve_back(5, 1);
            const LocalCBInterface& rec = get_local_cb_interface(5);
            volatile uint32_t* r = reinterpret_cast<volatile uint32_t*>(uintptr_t{rec.fifo_wr_ptr} << cb_addr_shift);
            const LocalCBInterface& v = get_local_cb_interface(tt::CBIndex::c_3);
            r[0] = cb_addr_shift;
            r[1] = v.fifo_size;
            r[2] = v.fifo_page_size;
            r[3] = v.fifo_limit - v.fifo_rd_ptr;
            r[4] = v.fifo_num_pages;
            cb_push_back(5, 1);
        }
    """
    writer = PRELUDE + "void kernel_main() {\n    cb_wait_front(CB_RECORD, 1);\n" + WRITE_RECORDS + "}\n"
    records = run(
        [
            lambda out: source_kernel(compute, pd.ComputeConfigDescriptor()),
            lambda out: source_kernel(
                writer, pd.WriterConfigDescriptor(), [out], emu.tensor_accessor_args(RECORD_BYTES)
            ),
        ]
    )
    size = PAGE * PAGES
    np.testing.assert_array_equal(records[:5], [4, size // 16, PAGE // 16, size // 16, PAGES])


@pytest.mark.parametrize(
    "write, message",
    [
        ("v.fifo_size = 128;", r"wrote fifo_size of get_local_cb_interface\(3\)"),
        ("v.tiles_acked = 1;", r"wrote tiles_acked/received of get_local_cb_interface\(3\)"),
        ("v.fifo_rd_ptr = v.fifo_limit + 64;", r"set fifo_rd_ptr of get_local_cb_interface\(3\) outside"),
    ],
)
def test_writes_the_emulator_cannot_honour_are_errors(write, message):
    body = f"""
        LocalCBInterface& v = get_local_cb_interface(3);
        {write}
        cb_reserve_back(3, 1);
    """
    with pytest.raises(emu.EmulatorError, match=message):
        run([dataflow(body)])
