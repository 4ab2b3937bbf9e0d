#include "ops/scatter_moe_input/scatter_moe_input_device_operation.hpp"

#include <stdexcept>

#include "ops/common/tensor_checks.hpp"
#include "ops/scatter_moe_input/scatter_moe_input_shared.hpp"

namespace ttnn_moe::ops::scatter_input {

using program::DataFormat;
using program::TensorArg;

Shapes validate(const std::vector<TensorArg>& inputs) {
    if (inputs.size() != 3) {
        throw std::invalid_argument(kOpName + ": expects 3 inputs, got " + std::to_string(inputs.size()));
    }
    const auto& x = inputs[0];
    const auto& counts = inputs[1];
    const auto& tokens = inputs[2];
    const auto x_shape = row_major_input(kOpName, "x", x, 2, DataFormat::Float16_b);
    const auto counts_shape = routing_column(kOpName, "num_routed_tokens", counts);
    const auto tokens_shape = row_major_input(kOpName, "routed_tokens", tokens, 2, DataFormat::UInt32);
    if (tokens_shape[0] != counts_shape[0] || tokens_shape[1] != x_shape[0]) {
        throw std::invalid_argument(kOpName + ": routed_tokens " + shape_str(tokens.shape) + " must be (E_l, T) = (" +
                                    std::to_string(counts_shape[0]) + ", " + std::to_string(x_shape[0]) +
                                    ") from num_routed_tokens and x");
    }
    for (const auto* t : {&x, &counts, &tokens}) require_dram(kOpName, "every input", *t);
    return {x_shape[0], x_shape[1], counts_shape[0]};
}

std::vector<TensorArg> output_specs(const std::vector<TensorArg>& inputs) {
    const auto s = validate(inputs);
    return {row_major_spec({s.num_local, s.num_tokens, s.hidden}, DataFormat::Float16_b),
            row_major_spec({1, scatter_moe_input_shared::kStatusWords}, DataFormat::UInt32)};
}

}  // namespace ttnn_moe::ops::scatter_input
