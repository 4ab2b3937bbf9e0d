// moe_gate writer: reads this core's row tiles of x into cb_x (gate_x_row_tile.hpp; the next one
// while the current one is ranked) and computes DeepSeek-V3's group-limited top-k of every token of
// them, on the scores the compute kernels packed (fp32 tiles, ceil(E/32) per row tile; columns past
// E unused), then the token's K expert ids (uint32 or uint16) and weights to its rows of topk_indices and
// topk_weights, and per row tile its gate_status row (the tokens with a NaN among their biased
// scores; such a token is still routed, NaN ranking first).
// In a team of several cores (which has one row tile) this core ranks: its own score tiles come from
// its compute kernel, the team's senders (writer_send_scores.cpp) write theirs into the same cb_scores
// slot and count them on sem_scores_in.
//
// Per token: biased = score + bias; a group's score is the sum of its two best biased scores; the
// topk_group best groups are kept; the K best biased scores among their experts are chosen, in
// descending order; weight = unbiased score / (sum of the K scores when normalising) * scaling.
// Every ranking compares order-preserving integer keys of the fp32 values and scans ids upwards
// with a strict "greater", so ties go to the lower group id and the lower expert id.
//
// Compile-time args: four interleaved accessors (IsDram|RuntimePageSize): bias, topk_indices,
// topk_weights, gate_status; then the TensorAccessorArgs of x. Runtime args (writer_arg) and the
// named compile-time args: cpp/ops/moe_gate/moe_gate_shared.hpp.
//
// conformance: kind=dataflow ct_args=130,130,130,130,2,2048 named=cb_x:0,cb_scores:2,cb_bias:3,cb_biased:4,cb_indices:5,cb_weights:6,cb_status:7,sem_scores_in:0 formats=2:float32,3:float32,4:float32,5:uint32,7:uint32
#include <cstdint>
#include <tuple>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/dataflow/dataflow_api.h"
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
constexpr uint32_t kFaceDim = 16;
constexpr uint32_t kTileBytes = kTileRows * kTileRows * sizeof(float);

struct Args {
    uint32_t x_addr, inner_tiles, inner_block, bias_addr, indices_addr, weights_addr, status_addr, bias_page,
        indices_page, weights_page, status_page;
    uint32_t first_row_tile, num_row_tiles, num_tokens, num_experts, num_groups, topk_groups, top_k, num_senders,
        index_bytes;
    bool normalize;
    float scaling;
};

union FloatBits {
    float f;
    uint32_t u;
};

float from_bits(uint32_t u) {
    FloatBits b;
    b.u = u;
    return b.f;
}

uint32_t to_bits(float f) {
    FloatBits b;
    b.f = f;
    return b.u;
}

Args read_args() {
    Args a;
    a.x_addr = get_arg_val<uint32_t>(writer_arg::kXAddr);
    a.inner_tiles = get_arg_val<uint32_t>(writer_arg::kInnerTiles);
    a.inner_block = get_arg_val<uint32_t>(writer_arg::kInnerBlock);
    a.bias_addr = get_arg_val<uint32_t>(writer_arg::kBiasAddr);
    a.indices_addr = get_arg_val<uint32_t>(writer_arg::kIndicesAddr);
    a.weights_addr = get_arg_val<uint32_t>(writer_arg::kWeightsAddr);
    a.bias_page = get_arg_val<uint32_t>(writer_arg::kBiasPageBytes);
    a.indices_page = get_arg_val<uint32_t>(writer_arg::kIndicesPageBytes);
    a.weights_page = get_arg_val<uint32_t>(writer_arg::kWeightsPageBytes);
    a.status_addr = get_arg_val<uint32_t>(writer_arg::kStatusAddr);
    a.status_page = get_arg_val<uint32_t>(writer_arg::kStatusPageBytes);
    a.first_row_tile = get_arg_val<uint32_t>(writer_arg::kFirstRowTile);
    a.num_row_tiles = get_arg_val<uint32_t>(writer_arg::kNumRowTiles);
    a.num_tokens = get_arg_val<uint32_t>(writer_arg::kNumTokens);
    a.num_experts = get_arg_val<uint32_t>(writer_arg::kNumExperts);
    a.num_groups = get_arg_val<uint32_t>(writer_arg::kNumGroups);
    a.topk_groups = get_arg_val<uint32_t>(writer_arg::kTopkGroups);
    a.top_k = get_arg_val<uint32_t>(writer_arg::kTopK);
    a.normalize = get_arg_val<uint32_t>(writer_arg::kNormalize) != 0;
    a.scaling = from_bits(get_arg_val<uint32_t>(writer_arg::kScalingBits));
    a.num_senders = get_arg_val<uint32_t>(writer_arg::kNumSenders);
    a.index_bytes = get_arg_val<uint32_t>(writer_arg::kIndexBytes);
    return a;
}

// An unsigned key that orders like the fp32 value (-0 and +0 equal); 0 is below every number.
uint32_t order_key(float value) {
    uint32_t u = to_bits(value);
    if (u == 0x80000000u) u = 0;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// fp32 -> bfloat16 bits, round to nearest even.
uint16_t to_bf16(float value) {
    const uint32_t u = to_bits(value);
    return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Score of (token row r, expert e) in the row tile's score tiles (faces of 16x16, row-major).
float score_at(uint32_t scores_l1, uint32_t r, uint32_t e) {
    const uint32_t c = e % kTileRows;
    const uint32_t face = (r / kFaceDim) * 2 + c / kFaceDim;
    const uint32_t index = face * kFaceDim * kFaceDim + (r % kFaceDim) * kFaceDim + c % kFaceDim;
    return reinterpret_cast<volatile float*>(scores_l1 + (e / kTileRows) * kTileBytes)[index];
}

bool is_nan(float value) {
    return (to_bits(value) & 0x7FFFFFFFu) > 0x7F800000u;
}

// Keys of the biased scores of token row r into `keys`; returns the bit mask of the kept groups.
// nan_expert: the first expert whose biased score is NaN, or kNone.
uint32_t keep_best_groups(const Args& a, uint32_t scores_l1, uint32_t r, const float* bias, uint32_t* keys,
                          uint32_t& nan_expert) {
    nan_expert = kNone;
    const uint32_t per_group = a.num_experts / a.num_groups;
    uint32_t group_keys[kMaxGroups];
    for (uint32_t g = 0; g < a.num_groups; ++g) {
        uint32_t key1 = 0, key2 = 0;
        float best1 = 0.0f, best2 = 0.0f;
        for (uint32_t e = g * per_group; e < (g + 1) * per_group; ++e) {
            const float biased = score_at(scores_l1, r, e) + bias[e];
            if (nan_expert == kNone && is_nan(biased)) nan_expert = e;
            const uint32_t key = order_key(biased);
            keys[e] = key;
            if (key > key1) {
                key2 = key1, best2 = best1;
                key1 = key, best1 = biased;
            } else if (key > key2) {
                key2 = key, best2 = biased;
            }
        }
        group_keys[g] = order_key(best1 + best2);
    }
    uint32_t kept = 0;
    for (uint32_t i = 0; i < a.topk_groups; ++i) {
        uint32_t best = a.num_groups;
        for (uint32_t g = 0; g < a.num_groups; ++g) {
            if (!(kept >> g & 1u) && (best == a.num_groups || group_keys[g] > group_keys[best])) best = g;
        }
        kept |= 1u << best;
    }
    return kept;
}

// The K best keys among the kept groups' experts, best first; each chosen key is cleared to 0.
void choose_experts(const Args& a, uint32_t kept, uint32_t* keys, volatile uint32_t* chosen) {
    const uint32_t per_group = a.num_experts / a.num_groups;
    for (uint32_t k = 0; k < a.top_k; ++k) {
        uint32_t best = a.num_experts;
        for (uint32_t g = 0; g < a.num_groups; ++g) {
            if (!(kept >> g & 1u)) continue;
            for (uint32_t e = g * per_group; e < (g + 1) * per_group; ++e) {
                if (keys[e] != 0 && (best == a.num_experts || keys[e] > keys[best])) best = e;
            }
        }
        chosen[k] = best;
        keys[best] = 0;
    }
}

// The chosen experts' unbiased scores, normalised (in k order) when asked, times the scaling.
void weigh_experts(const Args& a, uint32_t scores_l1, uint32_t r, volatile uint32_t* chosen,
                   volatile uint16_t* weights) {
    float total = 0.0f;
    for (uint32_t k = 0; k < a.top_k; ++k) total += score_at(scores_l1, r, chosen[k]);
    for (uint32_t k = 0; k < a.top_k; ++k) {
        const float score = score_at(scores_l1, r, chosen[k]);
        weights[k] = to_bf16((a.normalize ? score / total : score) * a.scaling);
    }
}

template <typename Indices, typename Weights, typename Status>
void write_rows(const Args& a, uint32_t row_tile, uint32_t rows, uint32_t indices_l1, uint32_t weights_l1,
                uint32_t status_l1, const Indices& indices, const Weights& weights, const Status& status) {
    const uint32_t first_token = row_tile * kTileRows;
    for (uint32_t r = 0; r < rows; ++r) {
        noc_async_write(indices_l1 + r * a.indices_page, indices.get_noc_addr(first_token + r),
                        a.top_k * a.index_bytes);
        noc_async_write(weights_l1 + r * a.weights_page, weights.get_noc_addr(first_token + r), a.top_k * 2);
    }
    noc_async_write(status_l1, status.get_noc_addr(row_tile), kStatusWords * 4);
    noc_async_write_barrier();  // the staging rows are refilled by the next row tile
}

}  // namespace

void kernel_main() {
    const Args a = read_args();
    const auto bias_in = TensorAccessor(std::get<kBiasTensor>(kTensorArgs), a.bias_addr, a.bias_page);
    const auto indices = TensorAccessor(std::get<kIndicesTensor>(kTensorArgs), a.indices_addr, a.indices_page);
    const auto weights = TensorAccessor(std::get<kWeightsTensor>(kTensorArgs), a.weights_addr, a.weights_page);
    const auto status = TensorAccessor(std::get<kStatusTensor>(kTensorArgs), a.status_addr, a.status_page);
    const auto x = TensorAccessor(std::get<kXTensor>(kTensorArgs), a.x_addr);

    // L1 scratch, reserved once: the bias, one token's keys, 32 staged rows of each output.
    cb_reserve_back(cb_bias, 1);
    cb_reserve_back(cb_biased, 1);
    cb_reserve_back(cb_indices, 1);
    cb_reserve_back(cb_weights, 1);
    cb_reserve_back(cb_status, 1);
    const float* bias = reinterpret_cast<const float*>(get_write_ptr(cb_bias));
    uint32_t* keys = reinterpret_cast<uint32_t*>(get_write_ptr(cb_biased));
    const uint32_t indices_l1 = get_write_ptr(cb_indices), weights_l1 = get_write_ptr(cb_weights);
    // uint16 ids: a token's are chosen as uint32 past the 32 staged rows, then narrowed into its row.
    volatile uint32_t* wide_ids = reinterpret_cast<volatile uint32_t*>(indices_l1 + kTileRows * a.indices_page);
    volatile uint32_t* status_row = reinterpret_cast<volatile uint32_t*>(get_write_ptr(cb_status));
    noc_async_read(bias_in.get_noc_addr(0), get_write_ptr(cb_bias), a.num_experts * 4);
    noc_async_read_barrier();

    if (a.num_row_tiles > 0) moe_gate::read_x_row_tile(cb_x, x, a.first_row_tile, a.inner_tiles, a.inner_block);
    for (uint32_t i = 0; i < a.num_row_tiles; ++i) {
        // The next row tile's x as soon as the compute kernel frees cb_x (when it has scored this one).
        if (i + 1 < a.num_row_tiles) {
            moe_gate::read_x_row_tile(cb_x, x, a.first_row_tile + i + 1, a.inner_tiles, a.inner_block);
        }
        const uint32_t row_tile = a.first_row_tile + i;
        const uint32_t first_token = row_tile * kTileRows;
        const uint32_t rows = a.num_tokens - first_token < kTileRows ? a.num_tokens - first_token : kTileRows;
        const uint32_t expert_tiles = (a.num_experts + kTileRows - 1) / kTileRows;
        cb_wait_front(cb_scores, expert_tiles);
        // The senders' tiles of the team's one row tile in this slot.
        noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_scores_in)), a.num_senders);
        const uint32_t scores_l1 = get_read_ptr(cb_scores);
        uint32_t nan_tokens = 0, first_nan_token = kNone, first_nan_expert = kNone;
        for (uint32_t r = 0; r < rows; ++r) {
            const uint32_t staged_row = indices_l1 + r * a.indices_page;
            volatile uint32_t* chosen =
                a.index_bytes == 4 ? reinterpret_cast<volatile uint32_t*>(staged_row) : wide_ids;
            uint32_t nan_expert = kNone;
            const uint32_t kept = keep_best_groups(a, scores_l1, r, bias, keys, nan_expert);
            if (nan_expert != kNone && nan_tokens++ == 0) {
                first_nan_token = first_token + r;
                first_nan_expert = nan_expert;
            }
            choose_experts(a, kept, keys, chosen);
            weigh_experts(a, scores_l1, r, chosen,
                          reinterpret_cast<volatile uint16_t*>(weights_l1 + r * a.weights_page));
            if (a.index_bytes == 2) {
                volatile uint16_t* narrow = reinterpret_cast<volatile uint16_t*>(staged_row);
                for (uint32_t k = 0; k < a.top_k; ++k) narrow[k] = static_cast<uint16_t>(chosen[k]);
            }
        }
        cb_pop_front(cb_scores, expert_tiles);
        status_row[kNanTokens] = nan_tokens;
        status_row[kFirstNanToken] = first_nan_token;
        status_row[kFirstNanExpert] = first_nan_expert;
        write_rows(a, row_tile, rows, indices_l1, weights_l1, get_write_ptr(cb_status), indices, weights, status);
    }
}
