// Writes pages [start, start + count) of an interleaved DRAM tensor from CB
// "cb_in", one page at a time (free-function API).
// Compile-time args: TensorAccessorArgs at 0. Runtime args: dst address, start page, page count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t dst_addr = get_arg_val<uint32_t>(0);
    const uint32_t start = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);

    constexpr auto dst_args = TensorAccessorArgs<0>();
    constexpr uint32_t cb_id = get_named_compile_time_arg_val("cb_in");
    const uint32_t page_bytes = dst_args.get_aligned_page_size();
    const auto dst = TensorAccessor(dst_args, dst_addr, page_bytes);

    for (uint32_t page = start; page < start + count; ++page) {
        cb_wait_front(cb_id, 1);
        noc_async_write(get_read_ptr(cb_id), get_noc_addr(page, dst), page_bytes);
        noc_async_write_barrier();
        cb_pop_front(cb_id, 1);
    }
}
