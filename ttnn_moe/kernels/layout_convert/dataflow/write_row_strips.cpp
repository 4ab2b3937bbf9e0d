// to_layout TILE -> ROW_MAJOR, writer: for each tile row of its rectangle and each block of
// `block` tile columns of it, cb_rows holds 32 rows x (block * 32) elements (untilize_block's
// output); the rows and columns inside the matrix go to their row-major pages, the
// tile padding is dropped.
//
// Pages of the row-major destination: one per matrix row, `batch` matrices of `rows` rows.
// Compile-time args: the destination's TensorAccessorArgs; named: cb_rows.
// Runtime args: as read_row_strips.cpp, with the destination's address and page bytes.
// conformance: kind=dataflow ct_args=130 named=cb_rows:0
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace {

constexpr uint32_t cb_rows = get_named_compile_time_arg_val("cb_rows");
constexpr uint32_t kTileDim = 32;

struct Args {
    uint32_t address, page_bytes, element_bytes, rows, width, tile_rows, first_row, row_count, first_col, col_count,
        block;
};

Args read_args() {
    Args a;
    a.address = get_arg_val<uint32_t>(0);
    a.page_bytes = get_arg_val<uint32_t>(1);
    a.element_bytes = get_arg_val<uint32_t>(2);
    a.rows = get_arg_val<uint32_t>(3);
    a.width = get_arg_val<uint32_t>(4);
    a.tile_rows = get_arg_val<uint32_t>(5);
    a.first_row = get_arg_val<uint32_t>(6);
    a.row_count = get_arg_val<uint32_t>(7);
    a.first_col = get_arg_val<uint32_t>(8);
    a.col_count = get_arg_val<uint32_t>(9);
    a.block = get_arg_val<uint32_t>(10);
    return a;
}

template <typename Accessor>
void write_strip(const Args& a, const Accessor& destination, uint32_t matrix, uint32_t tr, uint32_t col) {
    const uint32_t strip_bytes = a.block * kTileDim * a.element_bytes;
    const uint32_t present = a.width - col < a.block * kTileDim ? a.width - col : a.block * kTileDim;
    cb_wait_front(cb_rows, a.block);
    const uint32_t l1 = get_read_ptr(cb_rows);
    for (uint32_t r = 0; r < kTileDim && tr * kTileDim + r < a.rows; ++r) {
        const uint64_t dst = destination.get_noc_addr(matrix * a.rows + tr * kTileDim + r, col * a.element_bytes);
        noc_async_write(l1 + r * strip_bytes, dst, present * a.element_bytes);
    }
    noc_async_write_barrier();
    cb_pop_front(cb_rows, a.block);
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto destination = TensorAccessor(TensorAccessorArgs<0>(), args.address, args.page_bytes);
    for (uint32_t g = args.first_row; g < args.first_row + args.row_count; ++g) {
        for (uint32_t tc = args.first_col; tc < args.first_col + args.col_count; tc += args.block) {
            write_strip(args, destination, g / args.tile_rows, g % args.tile_rows, tc * kTileDim);
        }
    }
}
