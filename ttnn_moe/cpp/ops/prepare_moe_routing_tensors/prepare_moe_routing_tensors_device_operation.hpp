// prepare_moe_routing_tensors: per-local-expert tables of the (token, k) assignments.
//
// inputs : selected_experts (T, K) uint32 RM, routing_weights (T, K) bf16 RM, expert_mapping (E,) int32 RM
// outputs: num_routed_tokens (E_l, 1) uint32, routed_tokens (E_l, T) uint32, routed_token_weights (E_l, T) bf16,
//          token_idx_map (E_l, T) uint32, routing_errors (1, 8) uint32 (all ROW_MAJOR, DRAM interleaved)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/common/device_operation.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops::prepare_routing {

inline const std::string kOpName = "prepare_moe_routing_tensors";

struct Attributes {
    uint32_t num_experts = 0;        // E: ids outside [0, E) are invalid
    uint32_t num_local_experts = 0;  // E_l: rows of the tables
    auto fields() const { return std::tie(num_experts, num_local_experts); }
};

// Words of the routing_errors record the kernel writes (core 0 scans every id).
enum ErrorWord : uint32_t {
    kNumInvalidIds = 0,  // ids outside [0, E)
    kFirstInvalidT = 1,  // first bad (t, k) in row-major order, 0xFFFFFFFF if none
    kFirstInvalidK = 2,
    kFirstInvalidId = 3,
    kNumDropped = 4,      // assignments past the T columns of a local expert (duplicate ids only)
    kFirstDroppedSlot = 5,
    kErrorWords = 8,
};

struct Shapes {
    uint32_t num_tokens;  // T
    uint32_t top_k;       // K
};

// Validates the inputs against the attributes; returns T and K.
Shapes validate(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);
std::vector<program::TensorArg> output_specs(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);

// io = the 3 inputs then the 5 outputs, in the orders above.
CachedProgram create_program(const std::vector<program::TensorArg>& io, const std::string& kernels_root,
                             program::CoreCoord grid, const Attributes& attrs);

// The device operation (device_operation.hpp): one program everywhere.
struct Operation {
    static constexpr const char* name = "prepare_moe_routing_tensors";
    static constexpr Placement placement = Placement::kSameProgramEverywhere;
    using Attributes = prepare_routing::Attributes;
    static Attributes with_context(Attributes attributes, const MeshContext&) { return attributes; }
    static std::vector<program::TensorArg> output_specs(const Attributes& attributes,
                                                        const std::vector<program::TensorArg>& inputs) {
        return prepare_routing::output_specs(inputs, attributes);
    }
    static CachedProgram create_program(const Attributes& attributes, const std::vector<program::TensorArg>& io,
                                        const MeshContext& context, program::MeshCoordinate) {
        return prepare_routing::create_program(io, context.kernels_root, context.grid, attributes);
    }
};

}  // namespace ttnn_moe::ops::prepare_routing
