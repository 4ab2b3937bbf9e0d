#include "ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_device_operation.hpp"

#include <stdexcept>

#include "ops/common/tensor_checks.hpp"

namespace ttnn_moe::ops::prepare_routing {

using program::DataFormat;
using program::TensorArg;
using namespace prepare_moe_routing_tensors_shared;

Shapes validate(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    if (inputs.size() != 3) {
        throw std::invalid_argument(kOpName + ": expects 3 inputs, got " + std::to_string(inputs.size()));
    }
    const auto& ids = inputs[kSelectedExperts];
    const auto& weights = inputs[kRoutingWeights];
    const auto& mapping = inputs[kExpertMapping];
    const auto ids_shape = row_major_input(kOpName, "selected_experts", ids, 2, DataFormat::UInt32);
    const auto weights_shape = row_major_input(kOpName, "routing_weights", weights, 2, DataFormat::Float16_b);
    if (weights_shape != ids_shape) {
        throw std::invalid_argument(kOpName + ": routing_weights " + shape_str(weights.shape) +
                                    " must have the shape of selected_experts " + shape_str(ids.shape));
    }
    require_dram(kOpName, "selected_experts", ids);
    require_dram(kOpName, "routing_weights", weights);
    if (attrs.num_devices() == 0) throw std::invalid_argument(kOpName + ": the mesh has no devices");
    const uint32_t num_experts = expert_mapping_experts(kOpName, mapping, attrs.mesh_rows, attrs.mesh_cols);
    return {ids_shape[0], ids_shape[1], num_experts, num_experts / attrs.num_devices(), element_bytes(mapping.dtype)};
}

std::vector<TensorArg> output_specs(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    const Shapes s = validate(inputs, attrs);
    return {
        row_major_spec({s.num_local_experts, 1}, DataFormat::UInt32),
        row_major_spec({s.num_local_experts, s.num_tokens}, DataFormat::UInt32),
        row_major_spec({s.num_local_experts, s.num_tokens}, DataFormat::Float16_b),
        row_major_spec({s.num_local_experts, s.num_tokens}, DataFormat::UInt32),
        row_major_spec({1, kStatusWords}, DataFormat::UInt32),
    };
}

}  // namespace ttnn_moe::ops::prepare_routing
