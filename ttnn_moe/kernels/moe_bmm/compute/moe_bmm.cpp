// moe_bmm compute: the reader's segments (moe_bmm_work_split.hpp), one at a time. The schedule
// arrives through cb_work (read_tile_value): one word per segment (rows | cols <<
// segment_word::kColsShift), then 0.
//
// A segment's output tiles are accumulated over Kt in k blocks of inner_block tiles. For each
// block the reader pushes the segment's x rows (cb_x: row_block x inner_block pages, row r's k-th
// tile at r * inner_block + k) and then, column by column, that column's weight block (cb_w:
// inner_block tiles, k step k's at k * weight_halves; SwiGLU: the gate's, then the up's). For each
// column, for each row tile:
// DST = the tile's partial sum (nothing in the first block: acquire zeroes DST; the addend's tile
// with an addend), += the block's matmuls, then either spilled to cb_partial (bf16 like the
// 16-bit DST, fp32 with fp32_dest_acc_en: the spill and the reload change no bit) or, after the
// last block, finished and packed to cb_out. cb_partial is a FIFO in the same order in every
// block, so each tile pops exactly what it pushed one block before.
//
// SwiGLU (common arg weight_halves = 2): each x tile is multiplied into DST 0 (gate) and DST 1
// (up) by one matmul_block step (one x tile unpacked for both), both spilled between blocks; after the last block silu(DST 0) * DST 1 on the SFPU, in DST,
// and only that product is packed.
//
// Every segment's first x block is in slot 0 of cb_x's two, and its first weight block in slot 0 of
// cb_w's two (the reader multicasts x and weight blocks to the same slot of every core sharing them):
// when the blocks so far are odd, the reader pushes an unread block first, which this kernel pops
// unread.
//
// Row-major x (common arg row_major_x = 1): the reader's blocks arrive in cb_x_rows as one strip per
// row tile (32 rows x inner_block * 32 elements), and each block is tilized strip by strip into cb_x
// (one block, which this kernel both fills and eats) before its matmuls. cb_x_rows holds one block
// (the reader fills the next while the matmuls run), so there is no ring to align.
// Row-major addend (common arg row_major_addend = 1): before a segment's first k block the reader's
// strips (cb_addend_rows, up to kAddendStripTiles column tiles of one row tile each) are tilized into
// cb_addend, the segment's tile (r, c) at index r * cols + c, and each tile's sum starts from its tile
// there; the block needs them column by column, a strip holds a row tile's columns. Every segment pushes
// output_block pages (those past its tiles unread), so each starts at the front of the ring.
// Row-major output (common arg row_major_out = 1): in the last k block the packer untilizes each
// finished tile into cb_out (pack_untilize_dest: 32 rows of 32 elements), which the writer writes
// row by row.
//
// Common runtime args (common_arg: Nt, Kt, inner_block, row_block, output_block, weight_halves, addend,
// row_major_x, row_major_out, row_major_addend) and the named compile-time args:
// cpp/ops/moe_bmm/moe_bmm_shared.hpp.
//
// conformance: kind=compute named=cb_x:0,cb_x_rows:8,cb_w:1,cb_work:2,cb_addend:6,cb_addend_rows:9,cb_out:16,cb_partial:24 formats=2:uint32 label=bf16-weights
// conformance: kind=compute named=cb_x:0,cb_x_rows:8,cb_w:1,cb_work:2,cb_addend:6,cb_addend_rows:9,cb_out:16,cb_partial:24 formats=1:bfloat8_b,2:uint32,24:float32 fp32_dest_acc=1 math_fidelity=HiFi2 label=bfp8-weights-fp32-acc
#include <cstdint>

#include "../../../cpp/ops/moe_bmm/moe_bmm_shared.hpp"
#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/pack_untilize.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/reg_api.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/tilize.h"

using namespace ttnn_moe::moe_bmm_shared;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t cb_x_rows = get_named_compile_time_arg_val(named_arg::kCbXRows);
constexpr uint32_t cb_w = get_named_compile_time_arg_val(named_arg::kCbW);
constexpr uint32_t cb_work = get_named_compile_time_arg_val(named_arg::kCbWork);
constexpr uint32_t cb_addend = get_named_compile_time_arg_val(named_arg::kCbAddend);
constexpr uint32_t cb_addend_rows = get_named_compile_time_arg_val(named_arg::kCbAddendRows);
constexpr uint32_t cb_out = get_named_compile_time_arg_val(named_arg::kCbOut);
constexpr uint32_t cb_partial = get_named_compile_time_arg_val(named_arg::kCbPartial);
constexpr uint32_t kDst = 0;    // the product (the gate's in SwiGLU mode), and the packed result
constexpr uint32_t kDstUp = 1;  // SwiGLU: the up product

struct Args {
    uint32_t col_tiles, inner_tiles, inner_block, row_block, output_block, weight_halves;
    bool addend, row_major_x, row_major_out, row_major_addend;
};

Args read_args() {
    Args a;
    a.col_tiles = get_common_arg_val<uint32_t>(common_arg::kColTiles);
    a.inner_tiles = get_common_arg_val<uint32_t>(common_arg::kInnerTiles);
    a.inner_block = get_common_arg_val<uint32_t>(common_arg::kInnerBlock);
    a.row_block = get_common_arg_val<uint32_t>(common_arg::kRowBlock);
    a.output_block = get_common_arg_val<uint32_t>(common_arg::kOutputBlock);
    a.weight_halves = get_common_arg_val<uint32_t>(common_arg::kWeightHalves);
    a.addend = get_common_arg_val<uint32_t>(common_arg::kAddend) != 0;
    a.row_major_x = get_common_arg_val<uint32_t>(common_arg::kRowMajorX) != 0;
    a.row_major_out = get_common_arg_val<uint32_t>(common_arg::kRowMajorOut) != 0;
    a.row_major_addend = get_common_arg_val<uint32_t>(common_arg::kRowMajorAddend) != 0;
    return a;
}

// The unpacker and the math engine in block-matmul mode: one row tile of x times the weight_halves
// tiles of a k step (the gate's and the up's side by side in SwiGLU mode).
void init_matmul(const Args& a) {
    matmul_block_init(cb_x, cb_w, 0, a.weight_halves, 1, a.inner_block);
}

// DST 0 = the addend's tile, the start of the output tile's sum; then the matmul state back. The
// reader's next tile (a TILE addend), or the segment's tile `index` tilized before the block.
void load_addend(const Args& a, uint32_t index) {
    if (!a.row_major_addend) cb_wait_front(cb_addend, 1);
    copy_init(cb_addend);
    copy_tile(cb_addend, a.row_major_addend ? index : 0, kDst);
    if (!a.row_major_addend) cb_pop_front(cb_addend, 1);
    init_matmul(a);
}

// Row-major addend: the segment's rows x cols addend tiles into cb_addend, tilized strip by strip in
// the reader's order (row tile by row tile, strips of up to kAddendStripTiles columns), then the rest
// of output_block pushed unread; cb_addend holds them all at the front until the first block is done.
void tilize_addend(const Args& a, uint32_t rows, uint32_t cols) {
    const uint32_t strip = a.col_tiles < kAddendStripTiles ? a.col_tiles : kAddendStripTiles;
    for (uint32_t r = 0; r < rows; ++r) {
        for (uint32_t c0 = 0; c0 < cols; c0 += strip) {
            const uint32_t width = cols - c0 < strip ? cols - c0 : strip;
            cb_wait_front(cb_addend_rows, strip);
            cb_reserve_back(cb_addend, width);
            tilize_init(cb_addend_rows, width, cb_addend);
            tilize_block(cb_addend_rows, width, cb_addend);
            tilize_uninit(cb_addend_rows, cb_addend);
            cb_push_back(cb_addend, width);
            cb_pop_front(cb_addend_rows, strip);
        }
    }
    const uint32_t unread = a.output_block - rows * cols;
    if (unread > 0) {
        cb_reserve_back(cb_addend, unread);
        cb_push_back(cb_addend, unread);
    }
    cb_wait_front(cb_addend, a.output_block);
    init_matmul(a);
}

// DST h = the tile's partial sum of half h, as spilled one block before; then the matmul state back.
void reload_partials(const Args& a) {
    cb_wait_front(cb_partial, a.weight_halves);
    reconfig_data_format_srca(cb_partial);
    copy_init(cb_partial);
    for (uint32_t h = 0; h < a.weight_halves; ++h) copy_tile(cb_partial, h, kDst + h);
    cb_pop_front(cb_partial, a.weight_halves);
    reconfig_data_format_srca(cb_w);
    init_matmul(a);
}

// DST h += sum over the block's k of x(row, k) @ w_h(k, column): one block-matmul step per k, the
// weight block holding k step by k step the tiles of every half side by side, so each x tile is
// unpacked once for the gate and the up product.
void accumulate_block(const Args& a, uint32_t row) {
    for (uint32_t k = 0; k < a.inner_block; ++k) {
        matmul_block(cb_x, cb_w, row * a.inner_block + k, k * a.weight_halves, kDst, false, a.weight_halves, 1,
                     a.inner_block);
    }
}

// SwiGLU: DST 0 = silu(gate) * up, in DST; then the matmul unpack/math state back for the next tile.
void apply_swiglu(const Args& a) {
    silu_tile_init();
    silu_tile(kDst);
    mul_binary_tile_init();
    mul_binary_tile(kDst, kDstUp, kDst);
    init_matmul(a);
}

// The next word of the reader's schedule.
uint32_t receive_word() {
    cb_wait_front(cb_work, 1);
    const uint32_t value = read_tile_value(cb_work, 0, 0);
    cb_pop_front(cb_work, 1);
    return value;
}

// Packs DST 0 .. pages - 1 to `cb` in one push.
void pack_to(uint32_t cb, uint32_t pages) {
    cb_reserve_back(cb, pages);
    tile_regs_wait();
    pack_reconfig_data_format(cb);
    for (uint32_t h = 0; h < pages; ++h) pack_tile(kDst + h, cb);
    tile_regs_release();
    cb_push_back(cb, pages);
}

// Packs DST 0 to cb_out as 32 rows of 32 elements (pack_untilize_dest_init before, uninit after).
void pack_rows_to_out() {
    cb_reserve_back(cb_out, 1);
    tile_regs_wait();
    pack_untilize_dest<1>(cb_out);
    tile_regs_release();
    cb_push_back(cb_out, 1);
}

// The CB the reader's x blocks arrive in: cb_x, or cb_x_rows when x is row-major.
uint32_t x_in(const Args& a) {
    return a.row_major_x ? cb_x_rows : cb_x;
}

// Pops the unread block the reader pushes to start the next segment in slot 0 of cb_x (cb_x_rows
// has one slot: nothing to align).
void align_x_ring(const Args& a, uint32_t& x_blocks) {
    if (a.row_major_x || x_blocks % 2 == 0) return;
    cb_wait_front(x_in(a), a.row_block * a.inner_block);
    cb_pop_front(x_in(a), a.row_block * a.inner_block);
    ++x_blocks;
}

// Pops the unread weight block the reader pushes to start the next segment in slot 0 of cb_w.
void align_w_ring(const Args& a, uint32_t& w_blocks) {
    if (w_blocks % 2 == 0) return;
    cb_wait_front(cb_w, a.weight_halves * a.inner_block);
    cb_pop_front(cb_w, a.weight_halves * a.inner_block);
    ++w_blocks;
}

// Row-major x: the reader's block of row strips (one per row tile) becomes the block of x tiles in
// cb_x, strip by strip; strips past the segment's rows are popped and their cb_x pages pushed unread,
// so that each block fills cb_x exactly and the matmuls' indices never wrap.
void tilize_x_block(const Args& a, uint32_t rows) {
    tilize_init(cb_x_rows, a.inner_block, cb_x);
    for (uint32_t r = 0; r < a.row_block; ++r) {
        cb_wait_front(cb_x_rows, a.inner_block);
        cb_reserve_back(cb_x, a.inner_block);
        if (r < rows) tilize_block(cb_x_rows, a.inner_block, cb_x);
        cb_push_back(cb_x, a.inner_block);
        cb_pop_front(cb_x_rows, a.inner_block);
    }
    tilize_uninit(cb_x_rows, cb_x);
    init_matmul(a);
}

// One segment of `rows` row tiles by `cols` columns; x_blocks and w_blocks count the x and weight
// blocks consumed.
void compute_segment(const Args& a, uint32_t rows, uint32_t cols, uint32_t& x_blocks, uint32_t& w_blocks) {
    const uint32_t x_pages = a.row_block * a.inner_block;
    const uint32_t w_pages = a.weight_halves * a.inner_block;
    align_x_ring(a, x_blocks);
    align_w_ring(a, w_blocks);
    for (uint32_t k0 = 0; k0 < a.inner_tiles; k0 += a.inner_block, ++x_blocks) {
        const bool first = k0 == 0, last = k0 + a.inner_block == a.inner_tiles;
        if (a.row_major_x) tilize_x_block(a, rows);
        if (first && a.row_major_addend) tilize_addend(a, rows, cols);
        cb_wait_front(cb_x, x_pages);
        if (last && a.row_major_out) pack_untilize_dest_init<1>(cb_out);
        for (uint32_t c = 0; c < cols; ++c) {
            cb_wait_front(cb_w, w_pages);
            for (uint32_t r = 0; r < rows; ++r) {
                tile_regs_acquire();
                if (!first) {
                    reload_partials(a);
                } else if (a.addend) {
                    load_addend(a, r * cols + c);
                }
                accumulate_block(a, r);
                if (last && a.weight_halves == kSwigluHalves) apply_swiglu(a);
                tile_regs_commit();
                if (last && a.row_major_out) {
                    pack_rows_to_out();
                } else if (last) {
                    pack_to(cb_out, 1);
                } else {
                    pack_to(cb_partial, a.weight_halves);
                }
            }
            cb_pop_front(cb_w, w_pages);
            ++w_blocks;
        }
        if (last && a.row_major_out) pack_untilize_uninit(cb_out);
        if (first && a.row_major_addend) cb_pop_front(cb_addend, a.output_block);
        cb_pop_front(cb_x, x_pages);
    }
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_x, cb_w, cb_out);
    init_matmul(args);
    uint32_t x_blocks = 0, w_blocks = 0;
    for (uint32_t word = receive_word(); word != 0; word = receive_word()) {
        compute_segment(args, word & segment_word::kFieldMask, word >> segment_word::kColsShift, x_blocks, w_blocks);
    }
}
