// scatter_moe_input writer: streams rows [row_begin, row_end) from cb_rows to the output.
//
// compile-time args: 1 interleaved accessor (IsDram|RuntimePageSize): output (E_l, T, H)
// named compile-time args: cb_rows
// runtime args: out_addr, row_bytes (H * 2), row_begin, row_end
// conformance: kind=dataflow ct_args=130 named=cb_rows:0
#include <cstdint>

#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    using moe_kernel::align_up;
    const uint32_t out_addr = get_arg_val<uint32_t>(0);
    const uint32_t row_bytes = get_arg_val<uint32_t>(1);
    const uint32_t row_begin = get_arg_val<uint32_t>(2);
    const uint32_t row_end = get_arg_val<uint32_t>(3);

    constexpr uint32_t cb_rows = get_named_compile_time_arg_val("cb_rows");
    constexpr auto out_args = TensorAccessorArgs<0>();
    const auto out = TensorAccessor(out_args, out_addr, align_up(row_bytes));

    for (uint32_t row = row_begin; row < row_end; ++row) {
        cb_wait_front(cb_rows, 1);
        noc_async_write(get_read_ptr(cb_rows), out.get_noc_addr(row), row_bytes);
        noc_async_write_barrier();
        cb_pop_front(cb_rows, 1);
    }
}
