// conformance: kind=dataflow ct_args=2,2048 named=cb_first:0,cb_second:1
// Reads the first `first` pages of an interleaved DRAM tensor into CB "cb_first" and the next `second`
// pages into CB "cb_second" (a value CB and an integer CB of the same page size).
// Compile-time args: TensorAccessorArgs at 0. Runtime args: src address, first, second.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void read_into(uint32_t cb_id, uint32_t first_page, uint32_t pages, uint32_t src_addr) {
    constexpr auto src_args = TensorAccessorArgs<0>();
    const uint32_t page_bytes = src_args.get_aligned_page_size();
    const auto src = TensorAccessor(src_args, src_addr, page_bytes);
    cb_reserve_back(cb_id, pages);
    for (uint32_t i = 0; i < pages; ++i) {
        noc_async_read(get_noc_addr(first_page + i, src), get_write_ptr(cb_id) + i * page_bytes, page_bytes);
    }
    noc_async_read_barrier();
    cb_push_back(cb_id, pages);
}

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t first = get_arg_val<uint32_t>(1);
    const uint32_t second = get_arg_val<uint32_t>(2);
    read_into(get_named_compile_time_arg_val("cb_first"), 0, first, src_addr);
    if (second > 0) read_into(get_named_compile_time_arg_val("cb_second"), first, second, src_addr);
}
