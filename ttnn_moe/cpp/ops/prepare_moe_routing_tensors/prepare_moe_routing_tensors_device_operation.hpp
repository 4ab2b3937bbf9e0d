// prepare_moe_routing_tensors: per-local-expert tables of the (token, k) assignments.
//
// inputs : selected_experts (T, K) uint32 RM, routing_weights (T, K) bf16 RM,
//          expert_mapping (1, 1, E, D) one-hot uint16/uint32/int32 RM
// outputs: num_routed_tokens (E_l, 1) uint32, routed_tokens (E_l, T) uint32, routed_token_weights (E_l, T) bf16,
//          token_idx_map (E_l, T) uint32, routing_status (1, 8) uint32 (all ROW_MAJOR, DRAM interleaved)
// E_l = E / D; device d's local experts are the experts of column d in ascending id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/common/device_operation.hpp"
#include "ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_shared.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops::prepare_routing {

inline const std::string kOpName = "prepare_moe_routing_tensors";

struct Attributes {
    uint32_t mesh_rows = 0;  // the mesh the op runs on (from the mesh context): D = rows * cols
    uint32_t mesh_cols = 0;
    uint32_t num_devices() const { return mesh_rows * mesh_cols; }
    auto fields() const { return std::tie(mesh_rows, mesh_cols); }
};

struct Shapes {
    uint32_t num_tokens;         // T
    uint32_t top_k;              // K
    uint32_t num_experts;        // E
    uint32_t num_local_experts;  // E_l
    uint32_t mapping_element_bytes;
};

// Validates the inputs against the attributes.
Shapes validate(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);
std::vector<program::TensorArg> output_specs(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);

// io = the 3 inputs then the 5 outputs (prepare_moe_routing_tensors_shared::Io); the program of
// the device at row-major index `device_index`.
CachedProgram create_program(const std::vector<program::TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs, uint32_t device_index);

// The device operation (device_operation.hpp): one program per device, which differ in the
// column of expert_mapping they read.
struct Operation {
    static constexpr const char* name = "prepare_moe_routing_tensors";
    static constexpr Placement placement = Placement::kPerDevice;
    using Attributes = prepare_routing::Attributes;
    static Attributes with_context(Attributes attributes, const MeshContext& context) {
        attributes.mesh_rows = context.rows;
        attributes.mesh_cols = context.cols;
        return attributes;
    }
    static std::vector<program::TensorArg> output_specs(const Attributes& attributes,
                                                        const std::vector<program::TensorArg>& inputs) {
        return prepare_routing::output_specs(inputs, attributes);
    }
    static CachedProgram create_program(const Attributes& attributes, const std::vector<program::TensorArg>& io,
                                        const MeshContext& context, program::MeshCoordinate device) {
        return prepare_routing::create_program(io, context.kernels_root, context.device, attributes,
                                               device.row * context.cols + device.col);
    }
};

}  // namespace ttnn_moe::ops::prepare_routing
