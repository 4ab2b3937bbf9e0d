// scatter_moe_input: x (T, H) bf16 RM, num_routed_tokens (E_l, 1) uint32 RM, routed_tokens (E_l, T) uint32 RM
//   -> (E_l, T, H) bf16 RM with out[l, i] = x[routed_tokens[l, i]] for i < count_l, zero rows after.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/common/device_operation.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops::scatter_input {

inline const std::string kOpName = "scatter_moe_input";

struct Shapes {
    uint32_t num_tokens;  // T
    uint32_t hidden;      // H
    uint32_t num_local;   // E_l
};

Shapes validate(const std::vector<program::TensorArg>& inputs);
std::vector<program::TensorArg> output_specs(const std::vector<program::TensorArg>& inputs);
// io = x, num_routed_tokens, routed_tokens, output.
CachedProgram create_program(const std::vector<program::TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits);

// The device operation (device_operation.hpp): no attributes, one program everywhere.
struct Operation {
    static constexpr const char* name = "scatter_moe_input";
    static constexpr Placement placement = Placement::kSameProgramEverywhere;
    struct Attributes {
        auto fields() const { return std::tuple<>(); }
    };
    static Attributes with_context(Attributes attributes, const MeshContext&) { return attributes; }
    static std::vector<program::TensorArg> output_specs(const Attributes&,
                                                        const std::vector<program::TensorArg>& inputs) {
        return scatter_input::output_specs(inputs);
    }
    static CachedProgram create_program(const Attributes&, const std::vector<program::TensorArg>& io,
                                        const MeshContext& context, program::MeshCoordinate) {
        return scatter_input::create_program(io, context.kernels_root, context.device);
    }
};

}  // namespace ttnn_moe::ops::scatter_input
