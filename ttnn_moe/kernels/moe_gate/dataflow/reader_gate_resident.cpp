// moe_gate reader, resident split (RISC-V 1 / NOC 1): first this grid column's gate weight into cb_w,
// where it stays; then the ranking of the row tiles of this core's grid row that fall to its column.
//
// Weight: the column's first core reads it from DRAM in k-block order (block b: each of the column's
// expert tiles' inner_block tiles of that block; gate_weight is (E, H), so expert tile e's tiles are
// pages e * H/32 on), multicasts each block into the same place of cb_w on the column's other cores and
// then sets their sem_weight_blocks to the blocks sent so far; they push each block once it is counted.
// cb_w holds the whole column, so no block waits for room and each weight tile leaves DRAM once.
//
// Ranking: row tile q of the grid row (its q-th) falls to column q % split_cols. Every core's compute
// kernel pushes a slot of Et score tiles per row tile, its own at their place, and every core of the
// row pushes the same slots, so a slot has the same address on all of them. On the ranking core:
// wait for its own tiles, wait until sem_scores_in counts the row's other cores, clear it, read their
// tiles into its slot, increment their sem_scores_taken, rank (gate_topk.hpp). On the others:
// increment the ranker's sem_scores_in once their tiles are packed, wait for sem_scores_taken, clear
// it, free the slot. The ranker clears its count before it frees the others, so a count never mixes
// two row tiles.
//
// Compile-time args: four interleaved accessors (IsDram|RuntimePageSize): bias, topk_indices,
// topk_weights, gate_status; then the TensorAccessorArgs of gate_weight. Runtime args (resident_arg,
// routing_arg) and the named compile-time args: cpp/ops/moe_gate/moe_gate_shared.hpp.
//
// conformance: kind=dataflow ct_args=130,130,130,130,2,4096 named=cb_w:1,cb_scores:2,cb_bias:3,cb_biased:4,cb_indices:5,cb_weights:6,cb_status:7,sem_scores_in:0,sem_scores_taken:4,sem_weight_blocks:3 formats=1:float32,2:float32,3:float32,4:float32,5:uint32,7:uint32 label=fp32-weight
// conformance: kind=dataflow ct_args=130,130,130,130,2,2048 named=cb_w:1,cb_scores:2,cb_bias:3,cb_biased:4,cb_indices:5,cb_weights:6,cb_status:7,sem_scores_in:0,sem_scores_taken:4,sem_weight_blocks:3 formats=2:float32,3:float32,4:float32,5:uint32,7:uint32 label=bf16-weight
#include <cstdint>
#include <tuple>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/dataflow/dataflow_api.h"
#include "gate_multicast.hpp"
#include "gate_topk.hpp"

using namespace ttnn_moe::moe_gate_shared;

namespace {

constexpr uint32_t cb_w = get_named_compile_time_arg_val(named_arg::kCbW);
constexpr uint32_t cb_scores = get_named_compile_time_arg_val(named_arg::kCbScores);
constexpr uint32_t cb_bias = get_named_compile_time_arg_val(named_arg::kCbBias);
constexpr uint32_t cb_biased = get_named_compile_time_arg_val(named_arg::kCbBiased);
constexpr uint32_t cb_indices = get_named_compile_time_arg_val(named_arg::kCbIndices);
constexpr uint32_t cb_weights = get_named_compile_time_arg_val(named_arg::kCbWeights);
constexpr uint32_t cb_status = get_named_compile_time_arg_val(named_arg::kCbStatus);
constexpr uint32_t sem_scores_in = get_named_compile_time_arg_val(named_arg::kSemScoresIn);
constexpr uint32_t sem_scores_taken = get_named_compile_time_arg_val(named_arg::kSemScoresTaken);
constexpr uint32_t sem_weight_blocks = get_named_compile_time_arg_val(named_arg::kSemWeightBlocks);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<5, 0>();
constexpr uint32_t kBiasTensor = 0, kIndicesTensor = 1, kWeightsTensor = 2, kStatusTensor = 3, kWeightTensor = 4;

struct Args {
    uint32_t w_addr, inner_tiles, inner_block, first_expert_tile, num_expert_tiles;
    bool is_weight_sender;
    moe_gate::Receivers column;
    uint32_t first_row_tile, num_row_tiles, split_cols, split_col, row_noc_y;
};

Args read_args() {
    Args a;
    a.w_addr = get_arg_val<uint32_t>(resident_arg::kGateWeightAddr);
    a.inner_tiles = get_arg_val<uint32_t>(resident_arg::kInnerTiles);
    a.inner_block = get_arg_val<uint32_t>(resident_arg::kInnerBlock);
    a.first_expert_tile = get_arg_val<uint32_t>(resident_arg::kFirstExpertTile);
    a.num_expert_tiles = get_arg_val<uint32_t>(resident_arg::kNumExpertTiles);
    a.is_weight_sender = get_arg_val<uint32_t>(resident_arg::kIsWeightSender) != 0;
    const uint32_t column_x = get_arg_val<uint32_t>(resident_arg::kColumnNocX);
    a.column = {column_x, get_arg_val<uint32_t>(resident_arg::kColumnStartNocY), column_x,
                get_arg_val<uint32_t>(resident_arg::kColumnEndNocY),
                get_arg_val<uint32_t>(resident_arg::kWeightReceivers)};
    a.first_row_tile = get_arg_val<uint32_t>(resident_arg::kFirstRowTile);
    a.num_row_tiles = get_arg_val<uint32_t>(resident_arg::kNumRowTiles);
    a.split_cols = get_arg_val<uint32_t>(resident_arg::kSplitCols);
    a.split_col = get_arg_val<uint32_t>(resident_arg::kSplitCol);
    a.row_noc_y = get_arg_val<uint32_t>(resident_arg::kRowNocY);
    return a;
}

uint32_t column_noc_x(uint32_t col) {
    return get_arg_val<uint32_t>(resident_arg::kColumnNocXs + col);
}

// First expert tile of split column `col`: the Et tiles in contiguous, balanced ranges over the columns
// (the factory's split_begin).
uint32_t column_first_expert_tile(uint32_t expert_tiles, uint32_t cols, uint32_t col) {
    return static_cast<uint32_t>(static_cast<uint64_t>(expert_tiles) * col / cols);
}

void load_weight(const Args& a) {
    const auto w = TensorAccessor(std::get<kWeightTensor>(kTensorArgs), a.w_addr);
    const uint32_t tile_bytes = get_tile_size(cb_w);
    const uint32_t block_pages = a.num_expert_tiles * a.inner_block;
    auto* blocks = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_weight_blocks));
    for (uint32_t k0 = 0, b = 1; k0 < a.inner_tiles; k0 += a.inner_block, ++b) {
        cb_reserve_back(cb_w, block_pages);
        const uint32_t l1 = get_write_ptr(cb_w);
        if (a.is_weight_sender) {
            for (uint32_t e = 0; e < a.num_expert_tiles; ++e) {
                const uint32_t first_page = (a.first_expert_tile + e) * a.inner_tiles + k0;
                for (uint32_t j = 0; j < a.inner_block; ++j) {
                    noc_async_read(w.get_noc_addr(first_page + j), l1 + (e * a.inner_block + j) * tile_bytes,
                                   tile_bytes);
                }
            }
            noc_async_read_barrier();
            if (a.column.count > 0) {
                noc_async_write_multicast(l1, a.column.addr(l1), block_pages * tile_bytes, a.column.count);
                noc_semaphore_set(blocks, b);
                noc_semaphore_set_multicast(get_semaphore(sem_weight_blocks),
                                            a.column.addr(get_semaphore(sem_weight_blocks)), a.column.count);
            }
        } else {
            noc_semaphore_wait_min(blocks, b);
        }
        cb_push_back(cb_w, block_pages);
    }
}

}  // namespace

void kernel_main() {
    const Args a = read_args();
    const moe_gate::Routing routing = moe_gate::read_routing(resident_arg::kRouting);
    const auto bias_in = TensorAccessor(std::get<kBiasTensor>(kTensorArgs), routing.bias_addr, routing.bias_page);
    const auto indices =
        TensorAccessor(std::get<kIndicesTensor>(kTensorArgs), routing.indices_addr, routing.indices_page);
    const auto weights =
        TensorAccessor(std::get<kWeightsTensor>(kTensorArgs), routing.weights_addr, routing.weights_page);
    const auto status = TensorAccessor(std::get<kStatusTensor>(kTensorArgs), routing.status_addr, routing.status_page);

    load_weight(a);
    const moe_gate::TopkScratch scratch =
        moe_gate::reserve_topk_scratch(routing, bias_in, cb_bias, cb_biased, cb_indices, cb_weights, cb_status);
    const uint32_t expert_tiles = (routing.num_experts + kTileRows - 1) / kTileRows;
    const uint32_t tile_bytes = get_tile_size(cb_scores);
    auto* scores_in = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_scores_in));
    auto* taken = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_scores_taken));
    for (uint32_t q = 0; q < a.num_row_tiles; ++q) {
        const uint32_t ranker = q % a.split_cols;
        cb_wait_front(cb_scores, expert_tiles);
        const uint32_t slot = get_read_ptr(cb_scores);
        if (ranker == a.split_col) {
            noc_semaphore_wait(scores_in, a.split_cols - 1);
            noc_semaphore_set(scores_in, 0);
            for (uint32_t c = 0; c < a.split_cols; ++c) {
                if (c == a.split_col) continue;
                const uint32_t first = column_first_expert_tile(expert_tiles, a.split_cols, c);
                const uint32_t count = column_first_expert_tile(expert_tiles, a.split_cols, c + 1) - first;
                const uint32_t l1 = slot + first * tile_bytes;
                noc_async_read(get_noc_addr(column_noc_x(c), a.row_noc_y, l1), l1, count * tile_bytes);
            }
            noc_async_read_barrier();
            for (uint32_t c = 0; c < a.split_cols; ++c) {
                if (c != a.split_col)
                    noc_semaphore_inc(get_noc_addr(column_noc_x(c), a.row_noc_y, get_semaphore(sem_scores_taken)), 1);
            }
            moe_gate::rank_row_tile(routing, scratch, a.first_row_tile + q, slot, indices, weights, status);
        } else {
            noc_semaphore_inc(get_noc_addr(column_noc_x(ranker), a.row_noc_y, get_semaphore(sem_scores_in)), 1);
            noc_semaphore_wait(taken, 1);
            noc_semaphore_set(taken, 0);
        }
        cb_pop_front(cb_scores, expert_tiles);
    }
    noc_async_write_barrier();
    noc_async_atomic_barrier();
}
