#include "ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_device_operation.hpp"

#include <algorithm>
#include <stdexcept>

#include "ops/common/tensor_checks.hpp"

namespace ttnn_moe::ops::dispatch_dense {

using program::DataFormat;
using program::TensorArg;

namespace {
using shared::kTile;

[[noreturn]] void fail(const std::string& what) {
    throw std::invalid_argument(kOpName + ": " + what);
}

// (B, S, last) of a per-token input given as (B, S, last) or ttnn's (B, S, 1, last); leading 1s allowed.
std::vector<uint32_t> per_token_shape(const std::string& name, const std::string& last, const TensorArg& t) {
    std::vector<uint32_t> shape = t.shape;
    if (shape.size() >= 4 && shape[shape.size() - 2] == 1) shape.erase(shape.end() - 2);
    while (shape.size() > 3 && shape.front() == 1) shape.erase(shape.begin());
    if (shape.size() != 3) {
        fail(name + " must be (B, S, " + last + ") or (B, S, 1, " + last + "), got " + shape_str(t.shape));
    }
    return shape;
}
}  // namespace

uint32_t default_capacity(uint32_t tokens_per_device, uint32_t top_k, uint32_t line_size, uint32_t local_experts) {
    const uint64_t rows = uint64_t{line_size} * tokens_per_device * std::min(top_k, local_experts);
    return static_cast<uint32_t>((rows + kTile - 1) / kTile * kTile + uint64_t{kTile} * local_experts);
}

Shapes validate(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    if (inputs.size() != 4)
        fail("expects 4 inputs (x, topk_indices, topk_weights, expert_mapping), got " + std::to_string(inputs.size()));
    validate_geometry(kOpName, attrs.mesh);
    const auto& x = inputs[0];
    const auto& ids = inputs[1];
    const auto& weights = inputs[2];
    const auto& mapping = inputs[3];
    const auto x_shape = per_token_shape("x", "H", x);
    require_format(kOpName, "x", x, DataFormat::Float16_b);
    const auto ids_shape = per_token_shape("topk_indices", "K", ids);
    require_format(kOpName, "topk_indices", ids, DataFormat::UInt32);
    const auto weights_shape = per_token_shape("topk_weights", "K", weights);
    require_format(kOpName, "topk_weights", weights, DataFormat::Float16_b);
    const uint32_t num_experts = expert_mapping_experts(kOpName, mapping, attrs.mesh.rows, attrs.mesh.cols);
    for (const auto& [name, t] :
         {std::pair<const char*, const TensorArg*>{"x", &x}, {"topk_indices", &ids}, {"topk_weights", &weights}}) {
        require_row_major(kOpName, name, *t);
        require_dram(kOpName, name, *t);
    }
    if (ids_shape[0] != x_shape[0] || ids_shape[1] != x_shape[1]) {
        fail("topk_indices " + shape_str(ids.shape) + " must match x " + shape_str(x.shape) + " in (B, S)");
    }
    if (weights_shape != ids_shape) {
        fail("topk_weights " + shape_str(weights.shape) + " must have the shape of topk_indices " +
             shape_str(ids.shape));
    }
    if (ids_shape[2] > shared::kMaxTopK) {
        fail("K = " + std::to_string(ids_shape[2]) + " exceeds the supported top-k of " +
             std::to_string(shared::kMaxTopK));
    }
    const uint32_t hidden = x_shape[2];
    if (hidden % 16) fail("H = " + std::to_string(hidden) + " must be a multiple of 16 (32-byte rows)");
    const uint32_t num_devices = attrs.mesh.num_devices();
    if (num_experts > shared::kMaxExperts) {
        fail("E = " + std::to_string(num_experts) + " exceeds the " + std::to_string(shared::kMaxExperts) +
             " experts a routing-list entry can name");
    }
    validate_num_links(kOpName, attrs.num_links);
    if (attrs.max_packet_payload < common_shared::kPacketPayloadAlignment ||
        attrs.max_packet_payload % common_shared::kPacketPayloadAlignment) {
        fail("max_packet_payload must be a positive multiple of " +
             std::to_string(common_shared::kPacketPayloadAlignment) + ", got " +
             std::to_string(attrs.max_packet_payload));
    }
    Shapes s{x_shape[0],     x_shape[1],
             hidden,         ids_shape[2],
             num_experts,    num_experts / num_devices,
             attrs.capacity, element_bytes(mapping.dtype)};
    if (s.capacity == 0) s.capacity = default_capacity(s.tokens(), s.top_k, attrs.mesh.line_size(), s.local_experts);
    if (s.capacity % kTile) {
        fail("capacity " + std::to_string(s.capacity) + " must be a multiple of " + std::to_string(kTile) +
             " (expert blocks are tile-aligned)");
    }
    return s;
}

std::vector<TensorArg> output_specs(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    const Shapes s = validate(inputs, attrs);
    return {
        row_major_spec({s.capacity, s.hidden}, DataFormat::Float16_b),
        row_major_spec({s.local_experts, 1}, DataFormat::UInt32),
        row_major_spec({s.local_experts, 1}, DataFormat::UInt32),
        row_major_spec({s.capacity}, DataFormat::UInt32),
        row_major_spec({s.capacity}, DataFormat::Float16_b),
        row_major_spec({s.capacity, 2}, DataFormat::UInt32),
        row_major_spec({1}, DataFormat::UInt32),
        row_major_spec({1, shared::kStatusWords}, DataFormat::UInt32),
        row_major_spec({attrs.mesh.line_size(), s.num_experts}, DataFormat::UInt32),
        row_major_spec({attrs.mesh.line_size(), shared::kListEntryBytes / 4 * s.tokens() * s.top_k},
                       DataFormat::UInt32),
    };
}

}  // namespace ttnn_moe::ops::dispatch_dense
