// scatter_moe_input writer: streams rows [row_begin, row_end) from cb_rows to the output.
//
// compile-time args: 1 interleaved accessor (IsDram|RuntimePageSize): output (E_l, T, H)
// Runtime args (writer_arg) and named compile-time args: scatter_moe_input_shared.hpp.
// conformance: kind=dataflow ct_args=130 named=cb_rows:0
#include <cstdint>

#include "../../../cpp/ops/scatter_moe_input/scatter_moe_input_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::scatter_moe_input_shared;

namespace {

constexpr uint32_t cb_rows = get_named_compile_time_arg_val(named_arg::kCbRows);

struct Args {
    uint32_t out_addr, row_bytes, row_begin, row_end;
};

Args read_args() {
    Args a;
    a.out_addr = get_arg_val<uint32_t>(writer_arg::kOutAddr);
    a.row_bytes = get_arg_val<uint32_t>(writer_arg::kRowBytes);
    a.row_begin = get_arg_val<uint32_t>(writer_arg::kRowBegin);
    a.row_end = get_arg_val<uint32_t>(writer_arg::kRowEnd);
    return a;
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto out = TensorAccessor(TensorAccessorArgs<0>(), args.out_addr, moe_kernel::align_up(args.row_bytes));

    for (uint32_t row = args.row_begin; row < args.row_end; ++row) {
        cb_wait_front(cb_rows, 1);
        noc_async_write(get_read_ptr(cb_rows), out.get_noc_addr(row), args.row_bytes);
        noc_async_write_barrier();
        cb_pop_front(cb_rows, 1);
    }
}
