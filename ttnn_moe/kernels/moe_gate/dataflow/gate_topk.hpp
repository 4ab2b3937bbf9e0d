// moe_gate: DeepSeek-V3's group-limited top-k of a row tile's tokens, on the scores the compute kernels
// packed (fp32 tiles, ceil(E/32) per row tile; columns past E unused), then each token's K expert ids
// (uint32 or uint16) and weights to its rows of topk_indices and topk_weights, and the row tile's
// gate_status row (the tokens with a NaN among their biased scores; such a token is still routed, NaN
// ranking first). Run by the kernel that ranks a row tile: writer_topk.cpp (teams) or
// reader_gate_resident.cpp (the resident split).
//
// Per token: biased = score + bias; a group's score is the sum of its two best biased scores; the
// topk_group best groups are kept; the K best biased scores among their experts are chosen, in
// descending order; weight = unbiased score / (sum of the K scores when normalising) * scaling.
// Every ranking compares order-preserving integer keys of the fp32 values and scans ids upwards
// with a strict "greater", so ties go to the lower group id and the lower expert id.
//
// The ranking kernel's runtime args hold routing_arg from `base` on; its accessors of bias, topk_indices,
// topk_weights and gate_status are interleaved (IsDram|RuntimePageSize) with the runtime page sizes.
#pragma once

#include <cstdint>

#include "../../../cpp/ops/moe_gate/moe_gate_shared.hpp"
#include "api/dataflow/dataflow_api.h"

namespace moe_gate {

using namespace ttnn_moe::moe_gate_shared;

inline constexpr uint32_t kFaceDim = 16;
inline constexpr uint32_t kScoreTileBytes = kTileRows * kTileRows * sizeof(float);

struct Routing {
    uint32_t bias_addr, indices_addr, weights_addr, status_addr, bias_page, indices_page, weights_page, status_page;
    uint32_t num_tokens, num_experts, num_groups, topk_groups, top_k, index_bytes;
    bool normalize;
    float scaling;
};

union FloatBits {
    float f;
    uint32_t u;
};

inline float from_bits(uint32_t u) {
    FloatBits b;
    b.u = u;
    return b.f;
}

inline uint32_t to_bits(float f) {
    FloatBits b;
    b.f = f;
    return b.u;
}

inline Routing read_routing(uint32_t base) {
    Routing a;
    a.bias_addr = get_arg_val<uint32_t>(base + routing_arg::kBiasAddr);
    a.indices_addr = get_arg_val<uint32_t>(base + routing_arg::kIndicesAddr);
    a.weights_addr = get_arg_val<uint32_t>(base + routing_arg::kWeightsAddr);
    a.bias_page = get_arg_val<uint32_t>(base + routing_arg::kBiasPageBytes);
    a.indices_page = get_arg_val<uint32_t>(base + routing_arg::kIndicesPageBytes);
    a.weights_page = get_arg_val<uint32_t>(base + routing_arg::kWeightsPageBytes);
    a.status_addr = get_arg_val<uint32_t>(base + routing_arg::kStatusAddr);
    a.status_page = get_arg_val<uint32_t>(base + routing_arg::kStatusPageBytes);
    a.num_tokens = get_arg_val<uint32_t>(base + routing_arg::kNumTokens);
    a.num_experts = get_arg_val<uint32_t>(base + routing_arg::kNumExperts);
    a.num_groups = get_arg_val<uint32_t>(base + routing_arg::kNumGroups);
    a.topk_groups = get_arg_val<uint32_t>(base + routing_arg::kTopkGroups);
    a.top_k = get_arg_val<uint32_t>(base + routing_arg::kTopK);
    a.normalize = get_arg_val<uint32_t>(base + routing_arg::kNormalize) != 0;
    a.scaling = from_bits(get_arg_val<uint32_t>(base + routing_arg::kScalingBits));
    a.index_bytes = get_arg_val<uint32_t>(base + routing_arg::kIndexBytes);
    return a;
}

// An unsigned key that orders like the fp32 value (-0 and +0 equal); 0 is below every number.
inline uint32_t order_key(float value) {
    uint32_t u = to_bits(value);
    if (u == 0x80000000u) u = 0;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// fp32 -> bfloat16 bits, round to nearest even.
inline uint16_t to_bf16(float value) {
    const uint32_t u = to_bits(value);
    return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// Score of (token row r, expert e) in the row tile's score tiles (faces of 16x16, row-major).
inline float score_at(uint32_t scores_l1, uint32_t r, uint32_t e) {
    const uint32_t c = e % kTileRows;
    const uint32_t face = (r / kFaceDim) * 2 + c / kFaceDim;
    const uint32_t index = face * kFaceDim * kFaceDim + (r % kFaceDim) * kFaceDim + c % kFaceDim;
    return reinterpret_cast<volatile float*>(scores_l1 + (e / kTileRows) * kScoreTileBytes)[index];
}

inline bool is_nan(float value) {
    return (to_bits(value) & 0x7FFFFFFFu) > 0x7F800000u;
}

// Keys of the biased scores of token row r into `keys`; returns the bit mask of the kept groups.
// nan_expert: the first expert whose biased score is NaN, or kNone.
inline uint32_t keep_best_groups(const Routing& a, uint32_t scores_l1, uint32_t r, const float* bias, uint32_t* keys,
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
inline void choose_experts(const Routing& a, uint32_t kept, uint32_t* keys, volatile uint32_t* chosen) {
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
inline void weigh_experts(const Routing& a, uint32_t scores_l1, uint32_t r, volatile uint32_t* chosen,
                          volatile uint16_t* weights) {
    float total = 0.0f;
    for (uint32_t k = 0; k < a.top_k; ++k) total += score_at(scores_l1, r, chosen[k]);
    for (uint32_t k = 0; k < a.top_k; ++k) {
        const float score = score_at(scores_l1, r, chosen[k]);
        weights[k] = to_bf16((a.normalize ? score / total : score) * a.scaling);
    }
}

// L1 scratch of the ranking, reserved once: the bias, one token's keys, 32 staged rows of each output
// and the row tile's status row.
struct TopkScratch {
    const float* bias;
    uint32_t* keys;
    uint32_t indices_l1, weights_l1, status_l1;
};

// Reserves the scratch and reads the bias (E fp32) into it.
template <typename Bias>
TopkScratch reserve_topk_scratch(const Routing& a, const Bias& bias_in, uint32_t cb_bias, uint32_t cb_biased,
                                 uint32_t cb_indices, uint32_t cb_weights, uint32_t cb_status) {
    cb_reserve_back(cb_bias, 1);
    cb_reserve_back(cb_biased, 1);
    cb_reserve_back(cb_indices, 1);
    cb_reserve_back(cb_weights, 1);
    cb_reserve_back(cb_status, 1);
    TopkScratch s;
    s.bias = reinterpret_cast<const float*>(get_write_ptr(cb_bias));
    s.keys = reinterpret_cast<uint32_t*>(get_write_ptr(cb_biased));
    s.indices_l1 = get_write_ptr(cb_indices);
    s.weights_l1 = get_write_ptr(cb_weights);
    s.status_l1 = get_write_ptr(cb_status);
    noc_async_read(bias_in.get_noc_addr(0), get_write_ptr(cb_bias), a.num_experts * 4);
    noc_async_read_barrier();
    return s;
}

// Ranks the tokens of row tile `row_tile`, whose Et score tiles are at `scores_l1`, and writes their rows
// of the outputs and the row tile's gate_status row.
template <typename Indices, typename Weights, typename Status>
void rank_row_tile(const Routing& a, const TopkScratch& s, uint32_t row_tile, uint32_t scores_l1,
                   const Indices& indices, const Weights& weights, const Status& status) {
    const uint32_t first_token = row_tile * kTileRows;
    const uint32_t rows = a.num_tokens - first_token < kTileRows ? a.num_tokens - first_token : kTileRows;
    // uint16 ids: a token's are chosen as uint32 past the 32 staged rows, then narrowed into its row.
    volatile uint32_t* wide_ids = reinterpret_cast<volatile uint32_t*>(s.indices_l1 + kTileRows * a.indices_page);
    uint32_t nan_tokens = 0, first_nan_token = kNone, first_nan_expert = kNone;
    for (uint32_t r = 0; r < rows; ++r) {
        const uint32_t staged_row = s.indices_l1 + r * a.indices_page;
        volatile uint32_t* chosen = a.index_bytes == 4 ? reinterpret_cast<volatile uint32_t*>(staged_row) : wide_ids;
        uint32_t nan_expert = kNone;
        const uint32_t kept = keep_best_groups(a, scores_l1, r, s.bias, s.keys, nan_expert);
        if (nan_expert != kNone && nan_tokens++ == 0) {
            first_nan_token = first_token + r;
            first_nan_expert = nan_expert;
        }
        choose_experts(a, kept, s.keys, chosen);
        weigh_experts(a, scores_l1, r, chosen, reinterpret_cast<volatile uint16_t*>(s.weights_l1 + r * a.weights_page));
        if (a.index_bytes == 2) {
            volatile uint16_t* narrow = reinterpret_cast<volatile uint16_t*>(staged_row);
            for (uint32_t k = 0; k < a.top_k; ++k) narrow[k] = static_cast<uint16_t>(chosen[k]);
        }
    }
    volatile uint32_t* status_row = reinterpret_cast<volatile uint32_t*>(s.status_l1);
    status_row[kNanTokens] = nan_tokens;
    status_row[kFirstNanToken] = first_nan_token;
    status_row[kFirstNanExpert] = first_nan_expert;
    for (uint32_t r = 0; r < rows; ++r) {
        noc_async_write(s.indices_l1 + r * a.indices_page, indices.get_noc_addr(first_token + r),
                        a.top_k * a.index_bytes);
        noc_async_write(s.weights_l1 + r * a.weights_page, weights.get_noc_addr(first_token + r), a.top_k * 2);
    }
    noc_async_write(s.status_l1, status.get_noc_addr(row_tile), kStatusWords * 4);
    noc_async_write_barrier();  // the staging rows are refilled by the next row tile
}

}  // namespace moe_gate
