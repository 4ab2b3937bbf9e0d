// local_reduce_moe_output writer: writes the finished 1024-element chunks of rows
// [row_begin, row_end) of the (num_out_rows, H) output.
//
// compile-time args: 1 interleaved accessor (IsDram|RuntimePageSize): output
// named compile-time args: cb_out
// runtime args: out_addr, H, row_begin, row_end
// conformance: kind=dataflow ct_args=130 named=cb_out:5
#include <cstdint>

#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    using moe_kernel::align_up;
    const uint32_t out_addr = get_arg_val<uint32_t>(0);
    const uint32_t hidden = get_arg_val<uint32_t>(1);
    const uint32_t row_begin = get_arg_val<uint32_t>(2);
    const uint32_t row_end = get_arg_val<uint32_t>(3);

    constexpr uint32_t kChunkElements = 1024;
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");
    constexpr auto out_args = TensorAccessorArgs<0>();
    const auto out = TensorAccessor(out_args, out_addr, align_up(hidden * 2));

    for (uint32_t row = row_begin; row < row_end; ++row) {
        for (uint32_t first = 0; first < hidden; first += kChunkElements) {
            const uint32_t elements = hidden - first < kChunkElements ? hidden - first : kChunkElements;
            cb_wait_front(cb_out, 1);
            noc_async_write(get_read_ptr(cb_out), out.get_noc_addr(row, first * 2), elements * 2);
            noc_async_write_barrier();
            cb_pop_front(cb_out, 1);
        }
    }
}
