// Adds a constant to every uint32 of pages [start, start + count) of an interleaved
// DRAM tensor and writes them to the same pages of another tensor: read a page into
// L1, add in place, write it out.
// Compile-time args: TensorAccessorArgs of src at 0, then of dst; named "cb_scratch"
// (a one-page CB used only as L1 scratch memory).
// Runtime args: src address, dst address, start page, page count, addend, page bytes.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t dst_addr = get_arg_val<uint32_t>(1);
    const uint32_t start = get_arg_val<uint32_t>(2);
    const uint32_t count = get_arg_val<uint32_t>(3);
    const uint32_t addend = get_arg_val<uint32_t>(4);
    const uint32_t page_bytes = get_arg_val<uint32_t>(5);

    constexpr auto src_args = TensorAccessorArgs<0>();
    constexpr auto dst_args = TensorAccessorArgs<src_args.next_compile_time_args_offset()>();
    constexpr uint32_t cb_scratch = get_named_compile_time_arg_val("cb_scratch");
    const auto src = TensorAccessor(src_args, src_addr, page_bytes);
    const auto dst = TensorAccessor(dst_args, dst_addr, page_bytes);
    const uint32_t l1 = get_write_ptr(cb_scratch);
    volatile uint32_t* values = reinterpret_cast<volatile uint32_t*>(l1);

    for (uint32_t page = start; page < start + count; ++page) {
        noc_async_read(get_noc_addr(page, src), l1, page_bytes);
        noc_async_read_barrier();
        for (uint32_t i = 0; i < page_bytes / sizeof(uint32_t); ++i) values[i] = values[i] + addend;
        noc_async_write(l1, get_noc_addr(page, dst), page_bytes);
        noc_async_write_barrier();
    }
}
