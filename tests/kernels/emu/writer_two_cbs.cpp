// conformance: kind=dataflow ct_args=2,2048 named=cb_first:16,cb_second:17
// Writes `first` pages from CB "cb_first", then `second` pages from CB "cb_second", to pages
// 0 .. first + second - 1 of an interleaved DRAM tensor.
// Compile-time args: TensorAccessorArgs at 0. Runtime args: dst address, first, second.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void write_from(uint32_t cb_id, uint32_t first_page, uint32_t pages, uint32_t dst_addr) {
    constexpr auto dst_args = TensorAccessorArgs<0>();
    const uint32_t page_bytes = dst_args.get_aligned_page_size();
    const auto dst = TensorAccessor(dst_args, dst_addr, page_bytes);
    cb_wait_front(cb_id, pages);
    for (uint32_t i = 0; i < pages; ++i) {
        noc_async_write(get_read_ptr(cb_id) + i * page_bytes, get_noc_addr(first_page + i, dst), page_bytes);
    }
    noc_async_write_barrier();
    cb_pop_front(cb_id, pages);
}

void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t second = get_arg_val<uint32_t>(2);
    write_from(get_named_compile_time_arg_val("cb_first"), 0, first, dst_addr);
    if (second > 0) write_from(get_named_compile_time_arg_val("cb_second"), first, second, dst_addr);
}
