// moe_bmm compute: one output tile at a time, accumulating x_tile(r, k) @ w_tile(k, n)
// over k in DST, then packing it to cb_out. The schedule is computed on the device by
// the reader and arrives through cb_work (read_tile_value): this core's output tile
// count, then before each column run (consecutive tiles sharing expert l and column n)
// its number of row tiles.
//
// Resident weights (common arg kResidentWeights = 1): the run's Kt weight tiles sit in cb_w for the
// whole run; every row tile's matmuls index into them (tile k of the column is cb_w
// tile k), and the column is popped only when the run ends. Streamed (0): cb_w brings
// inner_block weight tiles next to every x block, as many times as there are row tiles.
//
// x: the reader's second word before each run (x_block in moe_bmm_shared.hpp) says whether
// the run's x is streamed in blocks (as the weights above) or resident: the expert's row tiles
// sit at cb_x's front (Kt tiles each), pushed for this run or kept from the previous one, and
// row tile r's k-th tile is cb_x tile r * Kt + k. A resident block is popped when the next
// run's x is not the same block, and at the end.
//
// SwiGLU (common arg weight_halves = 2): cb_w holds the gate's tiles, then the up's (a resident
// column: up tile k is cb_w tile Kt + k; a streamed block: inner_block + j). Each x tile is
// multiplied into both DST 0 (gate) and DST 1 (up); then silu(DST 0) * DST 1 on the SFPU, in DST,
// and only that product is packed.
//
// Addend (common arg addend = 1): each output tile's sum starts from the addend's tile, which the
// reader sends through cb_addend before the tile's x and weight blocks: DST = addend, then the
// matmuls accumulate on top of it.
//
// Common runtime args (common_arg: it reads Kt, inner_block, resident_weights, weight_halves, addend)
// and the named compile-time args: cpp/ops/moe_bmm/moe_bmm_shared.hpp.
//
// conformance: kind=compute named=cb_x:0,cb_w:1,cb_work:2,cb_addend:6,cb_out:16 formats=2:uint32 label=bf16-weights
// conformance: kind=compute named=cb_x:0,cb_w:1,cb_work:2,cb_addend:6,cb_out:16 formats=1:bfloat8_b,2:uint32 fp32_dest_acc=1 math_fidelity=HiFi2 label=bfp8-weights-fp32-acc
#include <cstdint>

#include "../../../cpp/ops/moe_bmm/moe_bmm_shared.hpp"
#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"
#include "api/compute/tile_move_copy.h"

using namespace ttnn_moe::moe_bmm_shared;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t cb_w = get_named_compile_time_arg_val(named_arg::kCbW);
constexpr uint32_t cb_work = get_named_compile_time_arg_val(named_arg::kCbWork);
constexpr uint32_t cb_addend = get_named_compile_time_arg_val(named_arg::kCbAddend);
constexpr uint32_t cb_out = get_named_compile_time_arg_val(named_arg::kCbOut);
constexpr uint32_t kDst = 0;    // the product (the gate's in SwiGLU mode), and the packed result
constexpr uint32_t kDstUp = 1;  // SwiGLU: the up product

struct Args {
    uint32_t inner_tiles, inner_block;
    bool resident_weights;
    uint32_t weight_halves;
    bool addend;
};

Args read_args() {
    Args a;
    a.inner_tiles = get_common_arg_val<uint32_t>(common_arg::kInnerTiles);
    a.inner_block = get_common_arg_val<uint32_t>(common_arg::kInnerBlock);
    a.resident_weights = get_common_arg_val<uint32_t>(common_arg::kResidentWeights) != 0;
    a.weight_halves = get_common_arg_val<uint32_t>(common_arg::kWeightHalves);
    a.addend = get_common_arg_val<uint32_t>(common_arg::kAddend) != 0;
    return a;
}

// DST[h] += x tile @ weight tile of half h, for each half; `half_pages` is how far apart the
// halves' tiles sit in cb_w (Kt resident, inner_block streamed).
void matmul_halves(const Args& a, uint32_t x_tile, uint32_t w_tile, uint32_t half_pages) {
    for (uint32_t h = 0; h < a.weight_halves; ++h) matmul_tiles(cb_x, cb_w, x_tile, w_tile + h * half_pages, kDst + h);
}

// DST 0 = the addend's tile, the start of the output tile's sum; then the matmul state back.
void load_addend() {
    cb_wait_front(cb_addend, 1);
    copy_init(cb_addend);
    copy_tile(cb_addend, 0, kDst);
    cb_pop_front(cb_addend, 1);
    matmul_init(cb_x, cb_w);
}

// SwiGLU: DST 0 = silu(gate) * up, in DST; then the matmul unpack/math state back for the next tile.
void apply_swiglu() {
    silu_tile_init();
    silu_tile(kDst);
    mul_binary_tile_init();
    mul_binary_tile(kDst, kDstUp, kDst);
    matmul_init(cb_x, cb_w);
}

// The next word of the reader's schedule.
uint32_t receive_word() {
    cb_wait_front(cb_work, 1);
    const uint32_t value = read_tile_value(cb_work, 0, 0);
    cb_pop_front(cb_work, 1);
    return value;
}

// DST (+ DST 1 in SwiGLU mode) += sum over k of x_tile(r, k) @ w_tile(k, n), x resident in cb_x from
// tile x_first on.
void accumulate_resident_row_tile(const Args& a, uint32_t x_first) {
    for (uint32_t k0 = 0; k0 < a.inner_tiles; k0 += a.inner_block) {
        if (a.resident_weights) {
            for (uint32_t j = 0; j < a.inner_block; ++j) matmul_halves(a, x_first + k0 + j, k0 + j, a.inner_tiles);
        } else {
            const uint32_t block_pages = a.weight_halves * a.inner_block;
            cb_wait_front(cb_w, block_pages);
            for (uint32_t j = 0; j < a.inner_block; ++j) matmul_halves(a, x_first + k0 + j, j, a.inner_block);
            cb_pop_front(cb_w, block_pages);
        }
    }
}

// The same with x streamed in blocks: resident weights are indexed in cb_w (tile k of the column
// is cb_w tile k), streamed ones arrive next to each x block.
void accumulate_row_tile(const Args& a) {
    for (uint32_t k0 = 0; k0 < a.inner_tiles; k0 += a.inner_block) {
        cb_wait_front(cb_x, a.inner_block);
        if (a.resident_weights) {
            for (uint32_t j = 0; j < a.inner_block; ++j) matmul_halves(a, j, k0 + j, a.inner_tiles);
        } else {
            const uint32_t block_pages = a.weight_halves * a.inner_block;
            cb_wait_front(cb_w, block_pages);
            for (uint32_t j = 0; j < a.inner_block; ++j) matmul_halves(a, j, j, a.inner_block);
            cb_pop_front(cb_w, block_pages);
        }
        cb_pop_front(cb_x, a.inner_block);
    }
}

// Frees a resident expert's x, one row tile (Kt pages) at a time, as the reader pushed them:
// a row tile never straddles the end of the ring, the whole block may.
void pop_resident_rows(const Args& a, uint32_t tiles) {
    for (uint32_t done = 0; done < tiles; done += a.inner_tiles) cb_pop_front(cb_x, a.inner_tiles);
}

void pack_to_out() {
    cb_reserve_back(cb_out, 1);
    tile_regs_wait();
    pack_tile(kDst, cb_out);
    tile_regs_release();
    cb_push_back(cb_out, 1);
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_x, cb_w, cb_out);
    matmul_init(cb_x, cb_w);

    const uint32_t num_tiles = receive_word();
    uint32_t resident_x = 0;  // x tiles of the resident expert at cb_x's front
    for (uint32_t done = 0; done < num_tiles;) {
        const uint32_t run = receive_word();  // row tiles sharing this weight column
        const uint32_t block = receive_word();
        const uint32_t state = block & x_block::kStateMask;
        if (state != x_block::kKept) {
            pop_resident_rows(args, resident_x);
            resident_x = 0;
        }
        if (state == x_block::kLoaded) {
            const uint32_t pad = block >> x_block::kPadShift;
            if (pad > 0) {  // filler up to the ring's end: the block starts at the base
                cb_wait_front(cb_x, pad);
                cb_pop_front(cb_x, pad);
            }
            resident_x = ((block >> x_block::kRowsShift) & x_block::kFieldMask) * args.inner_tiles;
            cb_wait_front(cb_x, resident_x);
        }
        const uint32_t first_row = (block >> x_block::kFirstRowShift) & x_block::kFieldMask;
        const uint32_t column_pages = args.weight_halves * args.inner_tiles;
        if (args.resident_weights) cb_wait_front(cb_w, column_pages);
        for (uint32_t r = 0; r < run; ++r) {
            tile_regs_acquire();
            if (args.addend) load_addend();
            if (state == x_block::kStreamed) {
                accumulate_row_tile(args);
            } else {
                accumulate_resident_row_tile(args, (first_row + r) * args.inner_tiles);
            }
            if (args.weight_halves == kSwigluHalves) apply_swiglu();
            tile_regs_commit();
            pack_to_out();
        }
        if (args.resident_weights) cb_pop_front(cb_w, column_pages);
        done += run;
    }
    pop_resident_rows(args, resident_x);
}
