// moe_gate writer of a team's ranker: reads this core's row tiles of x into cb_x (gate_x_row_tile.hpp;
// the next one while the current one is ranked) and ranks every token of them (gate_topk.hpp) on the
// scores the compute kernels packed.
// In a team of several cores (which has one row tile) this core ranks: its own score tiles come from
// its compute kernel, the team's senders (writer_send_scores.cpp) write theirs into the same cb_scores
// slot and count them on sem_scores_in.
//
// Compile-time args: four interleaved accessors (IsDram|RuntimePageSize): bias, topk_indices,
// topk_weights, gate_status; then the TensorAccessorArgs of x. Runtime args (writer_arg, routing_arg)
// and the named compile-time args: cpp/ops/moe_gate/moe_gate_shared.hpp.
//
// conformance: kind=dataflow ct_args=130,130,130,130,2,2048 named=cb_x:0,cb_scores:2,cb_bias:3,cb_biased:4,cb_indices:5,cb_weights:6,cb_status:7,sem_scores_in:0 formats=2:float32,3:float32,4:float32,5:uint32,7:uint32
#include <cstdint>
#include <tuple>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/dataflow/dataflow_api.h"
#include "gate_topk.hpp"
#include "gate_x_row_tile.hpp"

using namespace ttnn_moe::moe_gate_shared;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t cb_scores = get_named_compile_time_arg_val(named_arg::kCbScores);
constexpr uint32_t cb_bias = get_named_compile_time_arg_val(named_arg::kCbBias);
constexpr uint32_t cb_biased = get_named_compile_time_arg_val(named_arg::kCbBiased);
constexpr uint32_t cb_indices = get_named_compile_time_arg_val(named_arg::kCbIndices);
constexpr uint32_t cb_weights = get_named_compile_time_arg_val(named_arg::kCbWeights);
constexpr uint32_t cb_status = get_named_compile_time_arg_val(named_arg::kCbStatus);
constexpr uint32_t sem_scores_in = get_named_compile_time_arg_val(named_arg::kSemScoresIn);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<5, 0>();
constexpr uint32_t kBiasTensor = 0, kIndicesTensor = 1, kWeightsTensor = 2, kStatusTensor = 3, kXTensor = 4;

}  // namespace

void kernel_main() {
    const uint32_t x_addr = get_arg_val<uint32_t>(writer_arg::kXAddr);
    const uint32_t inner_tiles = get_arg_val<uint32_t>(writer_arg::kInnerTiles);
    const uint32_t inner_block = get_arg_val<uint32_t>(writer_arg::kInnerBlock);
    const uint32_t first_row_tile = get_arg_val<uint32_t>(writer_arg::kFirstRowTile);
    const uint32_t num_row_tiles = get_arg_val<uint32_t>(writer_arg::kNumRowTiles);
    const uint32_t num_senders = get_arg_val<uint32_t>(writer_arg::kNumSenders);
    const moe_gate::Routing a = moe_gate::read_routing(writer_arg::kRouting);
    const auto bias_in = TensorAccessor(std::get<kBiasTensor>(kTensorArgs), a.bias_addr, a.bias_page);
    const auto indices = TensorAccessor(std::get<kIndicesTensor>(kTensorArgs), a.indices_addr, a.indices_page);
    const auto weights = TensorAccessor(std::get<kWeightsTensor>(kTensorArgs), a.weights_addr, a.weights_page);
    const auto status = TensorAccessor(std::get<kStatusTensor>(kTensorArgs), a.status_addr, a.status_page);
    const auto x = TensorAccessor(std::get<kXTensor>(kTensorArgs), x_addr);
    const moe_gate::TopkScratch scratch =
        moe_gate::reserve_topk_scratch(a, bias_in, cb_bias, cb_biased, cb_indices, cb_weights, cb_status);

    const uint32_t expert_tiles = (a.num_experts + kTileRows - 1) / kTileRows;
    if (num_row_tiles > 0) moe_gate::read_x_row_tile(cb_x, x, first_row_tile, inner_tiles, inner_block);
    for (uint32_t i = 0; i < num_row_tiles; ++i) {
        // The next row tile's x as soon as the compute kernel frees cb_x (when it has scored this one).
        if (i + 1 < num_row_tiles) moe_gate::read_x_row_tile(cb_x, x, first_row_tile + i + 1, inner_tiles, inner_block);
        cb_wait_front(cb_scores, expert_tiles);
        // The senders' tiles of the team's one row tile in this slot.
        noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_scores_in)), num_senders);
        moe_gate::rank_row_tile(a, scratch, first_row_tile + i, get_read_ptr(cb_scores), indices, weights, status);
        cb_pop_front(cb_scores, expert_tiles);
    }
}
