// Reads pages [start, start + count) of an interleaved tensor, one at a time and in
// order, into cb_pages for a compute kernel (one page per CB page).
//
// Compile-time args: the tensor's TensorAccessorArgs; named: cb_pages.
// Runtime args: address, page bytes, start page, page count.
// conformance: kind=dataflow ct_args=130 named=cb_pages:0
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace {

constexpr uint32_t cb_pages = get_named_compile_time_arg_val("cb_pages");

struct Args {
    uint32_t address, page_bytes, start, count;
};

Args read_args() {
    Args a;
    a.address = get_arg_val<uint32_t>(0);
    a.page_bytes = get_arg_val<uint32_t>(1);
    a.start = get_arg_val<uint32_t>(2);
    a.count = get_arg_val<uint32_t>(3);
    return a;
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto source = TensorAccessor(TensorAccessorArgs<0>(), args.address, args.page_bytes);
    for (uint32_t page = args.start; page < args.start + args.count; ++page) {
        cb_reserve_back(cb_pages, 1);
        noc_async_read(source.get_noc_addr(page), get_write_ptr(cb_pages), args.page_bytes);
        noc_async_read_barrier();
        cb_push_back(cb_pages, 1);
    }
}
