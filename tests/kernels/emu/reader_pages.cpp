// Reads pages [start, start + count) of an interleaved DRAM tensor into CB
// "cb_out", `block` pages per reservation (object API).
// Compile-time args: TensorAccessorArgs at 0. Runtime args: src address, start page, page count, block.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"

void kernel_main() {
    const uint32_t src_addr = get_arg_val<uint32_t>(0);
    const uint32_t start = get_arg_val<uint32_t>(1);
    const uint32_t count = get_arg_val<uint32_t>(2);
    const uint32_t block = get_arg_val<uint32_t>(3);

    constexpr auto src_args = TensorAccessorArgs<0>();
    constexpr uint32_t cb_id = get_named_compile_time_arg_val("cb_out");
    DataflowBuffer cb(cb_id);
    const uint32_t page_bytes = cb.get_entry_size();
    const auto src = TensorAccessor(src_args, src_addr, page_bytes);
    const Noc noc;

    for (uint32_t page = start; page < start + count; page += block) {
        cb.reserve_back(block);
        for (uint32_t i = 0; i < block; ++i) {
            noc.async_read(src, cb, page_bytes, {.page_id = page + i}, {.offset_bytes = i * page_bytes});
        }
        noc.async_read_barrier();
        cb.push_back(block);
    }
}
