#include "ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_device_operation.hpp"

#include <stdexcept>

#include "ops/common/tensor_checks.hpp"

namespace ttnn_moe::ops::prepare_routing {

using program::DataFormat;
using program::TensorArg;

Shapes validate(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    if (inputs.size() != 3) {
        throw std::invalid_argument(kOpName + ": expects 3 inputs, got " + std::to_string(inputs.size()));
    }
    const auto& ids = inputs[0];
    const auto& weights = inputs[1];
    const auto& mapping = inputs[2];
    const auto ids_shape = row_major_input(kOpName, "selected_experts", ids, 2, DataFormat::UInt32);
    const auto weights_shape = row_major_input(kOpName, "routing_weights", weights, 2, DataFormat::Float16_b);
    if (weights_shape != ids_shape) {
        throw std::invalid_argument(kOpName + ": routing_weights " + shape_str(weights.shape) +
                                    " must have the shape of selected_experts " + shape_str(ids.shape));
    }
    const auto mapping_shape = row_major_input(kOpName, "expert_mapping", mapping, 1, DataFormat::Int32);
    for (const auto* t : {&ids, &weights, &mapping}) require_dram(kOpName, "every input", *t);
    if (attrs.num_experts == 0) throw std::invalid_argument(kOpName + ": num_experts must be positive, got 0");
    if (mapping_shape[0] != attrs.num_experts) {
        throw std::invalid_argument(kOpName + ": expert_mapping " + shape_str(mapping.shape) + " must have " +
                                    std::to_string(attrs.num_experts) + " entries (num_experts)");
    }
    if (attrs.num_local_experts == 0 || attrs.num_local_experts > attrs.num_experts) {
        throw std::invalid_argument(kOpName + ": num_local_experts must be in [1, " +
                                    std::to_string(attrs.num_experts) + "], got " +
                                    std::to_string(attrs.num_local_experts));
    }
    return {ids_shape[0], ids_shape[1]};
}

std::vector<TensorArg> output_specs(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    const auto [num_tokens, top_k] = validate(inputs, attrs);
    const uint32_t local = attrs.num_local_experts;
    return {
        row_major_spec({local, 1}, DataFormat::UInt32),
        row_major_spec({local, num_tokens}, DataFormat::UInt32),
        row_major_spec({local, num_tokens}, DataFormat::Float16_b),
        row_major_spec({local, num_tokens}, DataFormat::UInt32),
        row_major_spec({1, kErrorWords}, DataFormat::UInt32),
    };
}

}  // namespace ttnn_moe::ops::prepare_routing
