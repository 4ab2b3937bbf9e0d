// moe_gate: DeepSeek-V3 routing (noaux_tc) of every token on the device.
//
// inputs : x (T, H) TILE bfloat16, gate_weight (E, H) TILE bfloat16|float32 (nn.Linear layout),
//          e_score_correction_bias (E,) ROW_MAJOR float32; all DRAM interleaved
// outputs: topk_indices (1, T, K) uint32, topk_weights (1, T, K) bfloat16, ROW_MAJOR, and the
//          gate_status record (ceil(T/32), 3) uint32 (moe_gate_shared::StatusWord); the first two are the
//          (B=1, S=T, K) all_to_all_dispatch_dense takes, and (T, K) for prepare_moe_routing_tensors
//          (leading 1s are dropped there)
// scores = sigmoid(x @ gate_weight^T) in fp32; experts chosen on scores + bias within the
// topk_group best of n_group groups (a group's score: the sum of its two best biased scores);
// weights = the chosen experts' unbiased scores, normalised when norm_topk_prob, times
// routed_scaling_factor. Ties go to the lower group id, then the lower expert id.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "ops/common/device_operation.hpp"
#include "program/program_descriptor.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops::moe_gate {

inline const std::string kOpName = "moe_gate";

struct Attributes {
    uint32_t n_group = 1;
    uint32_t topk_group = 1;
    uint32_t top_k = 1;
    bool norm_topk_prob = true;
    uint32_t routed_scaling_factor_bits = 0x3F800000u;  // fp32 bits (1.0): the cache key holds integers
    // topk_indices' format: UInt32, or UInt16 (what tt-metal's all_to_all_dispatch takes)
    program::DataFormat indices_format = program::DataFormat::UInt32;
    // Filled from the mesh context:
    program::CoreCoord grid{8, 8};
    std::string kernels_dir;
    auto fields() const {
        return std::tie(n_group, topk_group, top_k, norm_topk_prob, routed_scaling_factor_bits, indices_format, grid.x,
                        grid.y, kernels_dir);
    }
};

// Sizes of a validated problem.
struct Dims {
    uint32_t num_tokens = 0;    // T
    uint32_t hidden = 0;        // H
    uint32_t num_experts = 0;   // E
    uint32_t row_tiles = 0;     // ceil(T / 32)
    uint32_t inner_tiles = 0;   // H / 32
    uint32_t expert_tiles = 0;  // ceil(E / 32)
    uint32_t inner_block = 0;   // tiles per CB push along H: the largest divisor of H/32 up to 32 that fits L1
    program::DataFormat weight_format = program::DataFormat::Float16_b;
    // The resident split (moe_gate_shared.hpp) when it runs: split_rows x split_cols cores, each holding at
    // most column_expert_tiles expert tiles' weight in L1. 0 x 0: teams.
    uint32_t split_rows = 0;
    uint32_t split_cols = 0;
    uint32_t column_expert_tiles = 0;
    bool resident() const { return split_cols > 0; }
};

// Checks ranks, shapes, dtypes, layouts, the routing attributes and the L1 budget; throws
// std::invalid_argument naming the offending value. inputs: x, gate_weight, e_score_correction_bias.
Dims validate(const Attributes& attributes, const std::vector<program::TensorArg>& inputs);

// CB indices (named compile-time args of the kernels).
enum Cb : uint8_t { kCbX, kCbW, kCbScores, kCbBias, kCbBiased, kCbIndices, kCbWeights, kCbStatus };
// Semaphore ids (named compile-time args): the gather of a row tile's score tiles on its ranker, and the
// resident split's multicasts of x and the gate weight.
enum Semaphore : uint8_t { kSemScoresIn, kSemXReady, kSemXValid, kSemWeightBlocks, kSemScoresTaken };

// The circular buffers of every core (validation checks their L1 total, the factory creates them).
struct CircularBuffer {
    uint8_t index;
    program::DataFormat format;
    uint32_t page_size;
    uint32_t pages;
};
std::vector<CircularBuffer> circular_buffers(const Dims& dims, const Attributes& attributes);

// io = the 3 inputs then the 3 outputs (moe_gate_shared::Io). `device` gives the NOC coordinates of
// the cores when a row tile's expert tiles are spread over several.
CachedProgram create_program(const Attributes& attributes, const std::vector<program::TensorArg>& io,
                             const program::DeviceLimits& device);

// The device operation (device_operation.hpp): one program for every device, each routing its own x.
struct Operation {
    static constexpr const char* name = "moe_gate";
    static constexpr Placement placement = Placement::kSameProgramEverywhere;
    using Attributes = moe_gate::Attributes;
    static Attributes with_context(Attributes attributes, const MeshContext& context) {
        return with_grid_and_kernels(attributes, context);
    }
    static std::vector<program::TensorArg> output_specs(const Attributes& attributes,
                                                        const std::vector<program::TensorArg>& inputs);
    static CachedProgram create_program(const Attributes& attributes, const std::vector<program::TensorArg>& io,
                                        const MeshContext& context, program::MeshCoordinate) {
        return moe_gate::create_program(attributes, io, context.device);
    }
};

}  // namespace ttnn_moe::ops::moe_gate
