// Writes what a compute kernel produces in cb_pages to a rectangle of an interleaved tensor's
// pages, seen as a grid of rows of `row_pages` pages (a TILE tensor's tile rows), row by row,
// `batch` pages behind one write barrier.
//
// Compile-time args: the tensor's TensorAccessorArgs; named: cb_pages.
// Runtime args: address, page bytes, the page grid's row length, the rectangle (first row, rows,
// first column, columns) and batch (pages behind one barrier, divides the columns).
// conformance: kind=dataflow ct_args=130 named=cb_pages:0
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace {

constexpr uint32_t cb_pages = get_named_compile_time_arg_val("cb_pages");

struct Args {
    uint32_t address, page_bytes, row_pages, first_row, rows, first_col, cols, batch;
};

Args read_args() {
    Args a;
    a.address = get_arg_val<uint32_t>(0);
    a.page_bytes = get_arg_val<uint32_t>(1);
    a.row_pages = get_arg_val<uint32_t>(2);
    a.first_row = get_arg_val<uint32_t>(3);
    a.rows = get_arg_val<uint32_t>(4);
    a.first_col = get_arg_val<uint32_t>(5);
    a.cols = get_arg_val<uint32_t>(6);
    a.batch = get_arg_val<uint32_t>(7);
    return a;
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto destination = TensorAccessor(TensorAccessorArgs<0>(), args.address, args.page_bytes);
    for (uint32_t row = args.first_row; row < args.first_row + args.rows; ++row) {
        for (uint32_t col = args.first_col; col < args.first_col + args.cols; col += args.batch) {
            cb_wait_front(cb_pages, args.batch);
            const uint32_t l1 = get_read_ptr(cb_pages);
            for (uint32_t i = 0; i < args.batch; ++i) {
                noc_async_write(l1 + i * args.page_bytes, destination.get_noc_addr(row * args.row_pages + col + i),
                                args.page_bytes);
            }
            noc_async_write_barrier();
            cb_pop_front(cb_pages, args.batch);
        }
    }
}
