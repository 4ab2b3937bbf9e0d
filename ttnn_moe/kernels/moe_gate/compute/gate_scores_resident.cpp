// moe_gate compute, resident split: the sigmoid scores of this core's row tiles against its grid
// column's expert tiles (at most kMaxResidentExpertTiles). The column's gate weight stays in cb_w for
// the whole op, in k-block order (block b: each expert tile's inner_block tiles of that block); x
// streams through cb_x a block at a time. DST holds one score tile per expert tile over the whole of H:
// DST[e] = sum over k of x_tile(k) @ w_tile(e, k)^T (each weight tile transposed on unpack), accumulated
// in fp32 in k order, as one core scoring the tile alone does. Then sigmoid on the SFPU, and the tiles
// packed as fp32 at their expert tiles' place in the row tile's slot of Et tiles in cb_scores (the
// slot's other tiles are the other columns', read by the row tile's ranker from their cores).
//
// Runtime args (resident_compute_arg) and the named compile-time args: cpp/ops/moe_gate/moe_gate_shared.hpp.
//
// conformance: kind=compute named=cb_x:0,cb_w:1,cb_scores:2 formats=1:float32,2:float32 fp32_dest_acc=1 label=fp32-weight
// conformance: kind=compute named=cb_x:0,cb_w:1,cb_scores:2 formats=2:float32 fp32_dest_acc=1 label=bf16-weight
#include <cstdint>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/compute/cb_api.h"
#include "api/compute/common.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
#include "api/compute/reg_api.h"

using namespace ttnn_moe::moe_gate_shared;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t cb_w = get_named_compile_time_arg_val(named_arg::kCbW);
constexpr uint32_t cb_scores = get_named_compile_time_arg_val(named_arg::kCbScores);
constexpr uint32_t kTransposeWeight = 1;
constexpr bool kOutOfOrder = true;

struct Args {
    uint32_t num_row_tiles, inner_tiles, inner_block, first_expert_tile, num_expert_tiles, expert_tiles;
};

Args read_args() {
    Args a;
    a.num_row_tiles = get_arg_val<uint32_t>(resident_compute_arg::kNumRowTiles);
    a.inner_tiles = get_arg_val<uint32_t>(resident_compute_arg::kInnerTiles);
    a.inner_block = get_arg_val<uint32_t>(resident_compute_arg::kInnerBlock);
    a.first_expert_tile = get_arg_val<uint32_t>(resident_compute_arg::kFirstExpertTile);
    a.num_expert_tiles = get_arg_val<uint32_t>(resident_compute_arg::kNumExpertTiles);
    a.expert_tiles = get_arg_val<uint32_t>(resident_compute_arg::kExpertTiles);
    return a;
}

// DST[e] = the row tile's logits against expert tile e of the column. The first row tile waits for the
// weight blocks as they arrive; later ones find them all resident.
void accumulate_logits(const Args& a, bool weight_arriving) {
    matmul_init(cb_x, cb_w, kTransposeWeight);
    const uint32_t block_pages = a.num_expert_tiles * a.inner_block;
    for (uint32_t k0 = 0, b = 0; k0 < a.inner_tiles; k0 += a.inner_block, ++b) {
        cb_wait_front(cb_x, a.inner_block);
        if (weight_arriving) cb_wait_front(cb_w, (b + 1) * block_pages);
        for (uint32_t j = 0; j < a.inner_block; ++j) {
            for (uint32_t e = 0; e < a.num_expert_tiles; ++e) {
                matmul_tiles(cb_x, cb_w, j, b * block_pages + e * a.inner_block + j, e);
            }
        }
        cb_pop_front(cb_x, a.inner_block);
    }
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_x, cb_w, cb_scores);
    for (uint32_t r = 0; r < args.num_row_tiles; ++r) {
        tile_regs_acquire();
        accumulate_logits(args, r == 0);
        sigmoid_tile_init();
        for (uint32_t e = 0; e < args.num_expert_tiles; ++e) sigmoid_tile(e);
        tile_regs_commit();
        cb_reserve_back(cb_scores, args.expert_tiles);
        tile_regs_wait();
        for (uint32_t e = 0; e < args.num_expert_tiles; ++e) {
            pack_tile<kOutOfOrder>(e, cb_scores, args.first_expert_tile + e);
        }
        tile_regs_release();
        cb_push_back(cb_scores, args.expert_tiles);
    }
    if (args.num_row_tiles > 0) cb_pop_front(cb_w, args.num_expert_tiles * args.inner_tiles);
}
