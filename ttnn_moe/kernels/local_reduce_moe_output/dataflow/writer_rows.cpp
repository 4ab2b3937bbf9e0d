// local_reduce_moe_output writer: writes the finished 1024-element chunks of rows
// [row_begin, row_end) of the (num_out_rows, H) output.
//
// compile-time args: 1 interleaved accessor (IsDram|RuntimePageSize): output
// Runtime args (writer_arg) and named compile-time args: local_reduce_moe_output_shared.hpp.
// conformance: kind=dataflow ct_args=130 named=cb_out:5
#include <cstdint>

#include "../../../cpp/ops/local_reduce_moe_output/local_reduce_moe_output_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::local_reduce_moe_output_shared;

namespace {

constexpr uint32_t cb_out = get_named_compile_time_arg_val(named_arg::kCbOut);

struct Args {
    uint32_t out_addr, hidden, row_begin, row_end;
};

Args read_args() {
    Args a;
    a.out_addr = get_arg_val<uint32_t>(writer_arg::kOutAddr);
    a.hidden = get_arg_val<uint32_t>(writer_arg::kHidden);
    a.row_begin = get_arg_val<uint32_t>(writer_arg::kRowBegin);
    a.row_end = get_arg_val<uint32_t>(writer_arg::kRowEnd);
    return a;
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto out = TensorAccessor(TensorAccessorArgs<0>(), args.out_addr, moe_kernel::align_up(args.hidden * 2));

    for (uint32_t row = args.row_begin; row < args.row_end; ++row) {
        for (uint32_t first = 0; first < args.hidden; first += kChunkElements) {
            const uint32_t elements = args.hidden - first < kChunkElements ? args.hidden - first : kChunkElements;
            cb_wait_front(cb_out, 1);
            noc_async_write(get_read_ptr(cb_out), out.get_noc_addr(row, first * 2), elements * 2);
            noc_async_write_barrier();
            cb_pop_front(cb_out, 1);
        }
    }
}
