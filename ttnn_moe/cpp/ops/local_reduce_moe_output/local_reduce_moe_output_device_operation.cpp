#include "ops/local_reduce_moe_output/local_reduce_moe_output_device_operation.hpp"

#include <stdexcept>

#include "ops/common/tensor_checks.hpp"
#include "ops/local_reduce_moe_output/local_reduce_moe_output_shared.hpp"

namespace ttnn_moe::ops::local_reduce {

using program::DataFormat;
using program::TensorArg;

Shapes validate(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    const size_t routing_inputs = inputs.size() - (attrs.has_used_rows ? 1 : 0);
    if (inputs.size() < 4 || (routing_inputs != 4 && routing_inputs != 5)) {
        throw std::invalid_argument(kOpName + ": expects 4 inputs (padded) or 5 (grouped, with expert_offsets)" +
                                    (attrs.has_used_rows ? " and num_used_rows" : std::string()) + ", got " +
                                    std::to_string(inputs.size()));
    }
    const bool grouped = routing_inputs == 5;
    const auto& y = inputs[0];
    const auto& idx_map = inputs[1];
    const auto& weights = inputs[2];
    const auto y_shape =
        squeeze_to_rank(kOpName, grouped ? "y (grouped: (M, H))" : "y (padded: (E_l, T, H))", y, grouped ? 2 : 3);
    require_format(kOpName, "y", y, DataFormat::Float16_b);
    require_row_major(kOpName, "y", y);
    const std::vector<uint32_t> entries_shape(y_shape.begin(), y_shape.end() - 1);
    const auto map_shape = row_major_input(kOpName, "token_idx_map", idx_map, entries_shape.size(), DataFormat::UInt32);
    const auto weights_shape =
        row_major_input(kOpName, "routed_token_weights", weights, entries_shape.size(), DataFormat::Float16_b);
    for (const auto& [shape, name] : {std::pair{map_shape, "token_idx_map"}, {weights_shape, "routed_token_weights"}}) {
        if (shape != entries_shape) {
            throw std::invalid_argument(kOpName + ": " + name + " " + shape_str(shape) +
                                        " must match y's leading dims " + shape_str(entries_shape));
        }
    }
    const auto counts_shape = routing_column(kOpName, "num_routed_tokens", inputs[3]);
    if (grouped) {
        const auto offsets_shape = routing_column(kOpName, "expert_offsets", inputs[4]);
        if (offsets_shape != counts_shape) {
            throw std::invalid_argument(kOpName + ": expert_offsets " + shape_str(inputs[4].shape) +
                                        " must match num_routed_tokens " + shape_str(inputs[3].shape));
        }
    } else if (counts_shape[0] != y_shape[0]) {
        throw std::invalid_argument(kOpName + ": num_routed_tokens has " + std::to_string(counts_shape[0]) +
                                    " experts, y " + shape_str(y.shape) + " has " + std::to_string(y_shape[0]));
    }
    if (attrs.has_used_rows) {
        // One count: (1,), leading 1s allowed.
        row_major_input(kOpName, "num_used_rows (1,)", inputs.back(), 1, DataFormat::UInt32);
        if (inputs.back().shape.back() != 1) {
            throw std::invalid_argument(kOpName + ": num_used_rows must hold one count, got shape " +
                                        shape_str(inputs.back().shape));
        }
    }
    for (const auto& t : inputs) require_dram(kOpName, "every input", t);
    if (attrs.num_out_rows == 0) throw std::invalid_argument(kOpName + ": num_out_rows must be positive, got 0");
    const uint32_t block_rows = grouped ? y_shape[0] : y_shape[1];
    const uint32_t num_entries = grouped ? y_shape[0] : y_shape[0] * y_shape[1];
    return {grouped, counts_shape[0], block_rows, y_shape.back(), num_entries};
}

std::vector<TensorArg> output_specs(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    const auto s = validate(inputs, attrs);
    return {row_major_spec({attrs.num_out_rows, s.hidden}, DataFormat::Float16_b),
            row_major_spec({attrs.num_out_rows, 1}, DataFormat::UInt32),
            row_major_spec({1, local_reduce_moe_output_shared::kStatusWords}, DataFormat::UInt32)};
}

}  // namespace ttnn_moe::ops::local_reduce
