// to_layout ROW_MAJOR -> TILE, reader: for each tile row of its rectangle and each block of
// `block` tile columns of it, the 32 row segments of that strip go to cb_rows as 32 rows x
// (block * 32) elements, row-major (tilize_block's input). Rows past the matrix and
// columns past its width are zeros: the tile padding.
//
// Pages of the row-major source: one per matrix row, `batch` matrices of `rows` rows.
// Compile-time args: the source's TensorAccessorArgs; named: cb_rows.
// Runtime args: source address, aligned page bytes, element bytes, rows, width (elements),
// tile rows per matrix, the rectangle: first tile row (over all matrices), tile-row count, first
// tile column, tile-column count; block (tile columns per strip, divides the column count).
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

void zero_bytes(uint32_t l1, uint32_t bytes) {
    volatile uint8_t* p = reinterpret_cast<volatile uint8_t*>(l1);
    for (uint32_t i = 0; i < bytes; ++i) p[i] = 0;
}

// One strip: rows [32 * tr, 32 * tr + 32) of matrix `matrix`, columns [col, col + block * 32).
template <typename Accessor>
void read_strip(const Args& a, const Accessor& source, uint32_t matrix, uint32_t tr, uint32_t col) {
    const uint32_t strip_bytes = a.block * kTileDim * a.element_bytes;
    const uint32_t present = a.width - col < a.block * kTileDim ? a.width - col : a.block * kTileDim;
    const uint32_t present_bytes = present * a.element_bytes;
    cb_reserve_back(cb_rows, a.block);
    const uint32_t l1 = get_write_ptr(cb_rows);
    for (uint32_t r = 0; r < kTileDim; ++r) {
        const uint32_t row = tr * kTileDim + r;
        const uint32_t dst = l1 + r * strip_bytes;
        if (row >= a.rows) {
            zero_bytes(dst, strip_bytes);
            continue;
        }
        noc_async_read(source.get_noc_addr(matrix * a.rows + row, col * a.element_bytes), dst, present_bytes);
        if (present_bytes < strip_bytes) zero_bytes(dst + present_bytes, strip_bytes - present_bytes);
    }
    noc_async_read_barrier();
    cb_push_back(cb_rows, a.block);
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    const auto source = TensorAccessor(TensorAccessorArgs<0>(), args.address, args.page_bytes);
    for (uint32_t g = args.first_row; g < args.first_row + args.row_count; ++g) {
        for (uint32_t tc = args.first_col; tc < args.first_col + args.col_count; tc += args.block) {
            read_strip(args, source, g / args.tile_rows, g % args.tile_rows, tc * kTileDim);
        }
    }
}
