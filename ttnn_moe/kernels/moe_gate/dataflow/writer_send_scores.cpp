// moe_gate sender: on a core of a team that does not rank, reads the team's row tile of x into cb_x
// (gate_x_row_tile.hpp); then the score tiles its compute kernel packed for it go to the same
// cb_scores slot of the team's ranker (writer_topk.cpp), at their expert tiles' place, and are
// counted on the ranker's sem_scores_in.
//
// Compile-time args: TensorAccessorArgs of x. Runtime args (sender_arg) and the named compile-time
// args: cpp/ops/moe_gate/moe_gate_shared.hpp.
//
// conformance: kind=dataflow ct_args=2,2048 named=cb_x:0,cb_scores:2,sem_scores_in:0 formats=2:float32
#include <cstdint>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/dataflow/dataflow_api.h"
#include "gate_x_row_tile.hpp"

using namespace ttnn_moe::moe_gate_shared;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t cb_scores = get_named_compile_time_arg_val(named_arg::kCbScores);
constexpr auto kXArgs = TensorAccessorArgs<0>();
constexpr uint32_t sem_scores_in = get_named_compile_time_arg_val(named_arg::kSemScoresIn);

struct Args {
    uint32_t x_addr, row_tile, inner_tiles, inner_block, ranker_noc_x, ranker_noc_y, first_expert_tile,
        num_expert_tiles, expert_tiles;
};

Args read_args() {
    Args a;
    a.x_addr = get_arg_val<uint32_t>(sender_arg::kXAddr);
    a.row_tile = get_arg_val<uint32_t>(sender_arg::kRowTile);
    a.inner_tiles = get_arg_val<uint32_t>(sender_arg::kInnerTiles);
    a.inner_block = get_arg_val<uint32_t>(sender_arg::kInnerBlock);
    a.ranker_noc_x = get_arg_val<uint32_t>(sender_arg::kRankerNocX);
    a.ranker_noc_y = get_arg_val<uint32_t>(sender_arg::kRankerNocY);
    a.first_expert_tile = get_arg_val<uint32_t>(sender_arg::kFirstExpertTile);
    a.num_expert_tiles = get_arg_val<uint32_t>(sender_arg::kNumExpertTiles);
    a.expert_tiles = get_arg_val<uint32_t>(sender_arg::kExpertTiles);
    return a;
}

}  // namespace

void kernel_main() {
    const Args a = read_args();
    moe_gate::read_x_row_tile(cb_x, TensorAccessor(kXArgs, a.x_addr), a.row_tile, a.inner_tiles, a.inner_block);
    const uint32_t tile_bytes = get_tile_size(cb_scores);
    cb_wait_front(cb_scores, a.expert_tiles);
    // Same CB geometry and the same pushes on both cores: this slot's address is the ranker's too.
    const uint32_t slot = get_read_ptr(cb_scores);
    noc_async_write(slot, get_noc_addr(a.ranker_noc_x, a.ranker_noc_y, slot + a.first_expert_tile * tile_bytes),
                    a.num_expert_tiles * tile_bytes);
    noc_async_write_barrier();  // the tiles have landed before the ranker counts them
    noc_semaphore_inc(get_noc_addr(a.ranker_noc_x, a.ranker_noc_y, get_semaphore(sem_scores_in)), 1);
    noc_async_atomic_barrier();
    cb_pop_front(cb_scores, a.expert_tiles);
}
