// local_reduce_moe_output writer: writes the finished 1024-element chunks of this core's rows
// [begin, end) of the (num_out_rows, H) output; the reader sends the range (cb_row_range) once it
// has read how many rows are used.
// compile-time args: 1 interleaved accessor (IsDram|RuntimePageSize): output
// Runtime args (writer_arg) and named compile-time args: local_reduce_moe_output_shared.hpp.
// conformance: kind=dataflow ct_args=130 named=cb_out:5,cb_row_range:15 formats=15:uint32
#include <cstdint>

#include "../../../cpp/ops/local_reduce_moe_output/local_reduce_moe_output_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::local_reduce_moe_output_shared;

namespace {

constexpr uint32_t cb_out = get_named_compile_time_arg_val(named_arg::kCbOut);
constexpr uint32_t cb_row_range = get_named_compile_time_arg_val(named_arg::kCbRowRange);

struct Args {
    uint32_t out_addr, hidden, row_begin, row_end;
};

Args read_args() {
    Args a;
    a.out_addr = get_arg_val<uint32_t>(writer_arg::kOutAddr);
    a.hidden = get_arg_val<uint32_t>(writer_arg::kHidden);
    cb_wait_front(cb_row_range, 1);
    const volatile uint32_t* range = moe_kernel::words(get_read_ptr(cb_row_range));
    a.row_begin = range[kRangeBegin];
    a.row_end = range[kRangeEnd];
    cb_pop_front(cb_row_range, 1);
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
            noc_async_writes_flushed();  // the page may be reused once the data has left it
            cb_pop_front(cb_out, 1);
        }
    }
    noc_async_write_barrier();
}
