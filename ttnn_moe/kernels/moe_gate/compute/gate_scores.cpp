// moe_gate compute: the sigmoid scores of a token row tile against this core's expert tiles, one at a
// time: DST = sum over k of x_tile(k) @ w_tile(e, k)^T (gate_weight is (E, H), so each of its tiles is
// transposed on unpack), accumulated in fp32 (fp32_dest_acc_en), then sigmoid on the SFPU and packed
// as an fp32 tile to cb_scores. A row tile's slot there holds all Et score tiles: this core's are
// packed first, the rest of the slot is pushed unwritten (the team's other cores write those tiles
// into the ranker's slot; a sender's writer forwards its own).
//
// Runtime args (compute_arg) and the named compile-time args: cpp/ops/moe_gate/moe_gate_shared.hpp.
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
constexpr uint32_t kDst = 0;
constexpr uint32_t kTransposeWeight = 1;

struct Args {
    uint32_t num_row_tiles, inner_tiles, num_expert_tiles, expert_tiles, inner_block;
};

Args read_args() {
    Args a;
    a.num_row_tiles = get_arg_val<uint32_t>(compute_arg::kNumRowTiles);
    a.inner_tiles = get_arg_val<uint32_t>(compute_arg::kInnerTiles);
    a.num_expert_tiles = get_arg_val<uint32_t>(compute_arg::kNumExpertTiles);
    a.expert_tiles = get_arg_val<uint32_t>(compute_arg::kExpertTiles);
    a.inner_block = get_arg_val<uint32_t>(compute_arg::kInnerBlock);
    return a;
}

// DST = x row tile @ (expert tile's weights)^T, the weights arriving in blocks along H. For the row
// tile's first expert tile x arrives in blocks as well: each block waits for its x tiles too.
void accumulate_logits(const Args& a, bool x_arriving) {
    matmul_init(cb_x, cb_w, kTransposeWeight);
    for (uint32_t k0 = 0; k0 < a.inner_tiles; k0 += a.inner_block) {
        if (x_arriving) cb_wait_front(cb_x, k0 + a.inner_block);
        cb_wait_front(cb_w, a.inner_block);
        for (uint32_t j = 0; j < a.inner_block; ++j) matmul_tiles(cb_x, cb_w, k0 + j, j, kDst);
        cb_pop_front(cb_w, a.inner_block);
    }
}

void pack_scores() {
    cb_reserve_back(cb_scores, 1);
    tile_regs_wait();
    pack_tile(kDst, cb_scores);
    tile_regs_release();
    cb_push_back(cb_scores, 1);
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    compute_kernel_hw_startup<SrcOrder::Reverse>(cb_x, cb_w, cb_scores);
    for (uint32_t r = 0; r < args.num_row_tiles; ++r) {
        for (uint32_t e = 0; e < args.num_expert_tiles; ++e) {
            tile_regs_acquire();
            accumulate_logits(args, e == 0);
            sigmoid_tile_init();
            sigmoid_tile(kDst);
            tile_regs_commit();
            pack_scores();
        }
        cb_pop_front(cb_x, args.inner_tiles);
        const uint32_t others = args.expert_tiles - args.num_expert_tiles;
        if (others > 0) {
            cb_reserve_back(cb_scores, others);
            cb_push_back(cb_scores, others);
        }
    }
}
