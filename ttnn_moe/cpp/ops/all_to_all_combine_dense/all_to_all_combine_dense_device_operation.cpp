#include "ops/all_to_all_combine_dense/all_to_all_combine_dense_device_operation.hpp"

#include <stdexcept>

#include "ops/common/tensor_checks.hpp"

namespace ttnn_moe::ops::combine_dense {

using program::DataFormat;
using program::TensorArg;

namespace {
[[noreturn]] void fail(const std::string& what) {
    throw std::invalid_argument(kOpName + ": " + what);
}
}  // namespace

Shapes validate(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    if (inputs.size() != 3) {
        fail("expects 3 inputs (reduced, slot_source, num_slots), got " + std::to_string(inputs.size()));
    }
    validate_geometry(kOpName, attrs.mesh);
    const auto& reduced = inputs[0];
    const auto& slot_source = inputs[1];
    const auto& num_slots = inputs[2];
    const auto reduced_shape = squeeze_to_rank(kOpName, "reduced (capacity, H)", reduced, 2);
    require_format(kOpName, "reduced", reduced, DataFormat::Float16_b);
    const auto source_shape = squeeze_to_rank(kOpName, "slot_source (capacity, 2)", slot_source, 2);
    require_format(kOpName, "slot_source", slot_source, DataFormat::UInt32);
    const auto slots_shape = squeeze_to_rank(kOpName, "num_slots (1,)", num_slots, 1);
    require_format(kOpName, "num_slots", num_slots, DataFormat::UInt32);
    for (const auto& [name, t] : {std::pair<const char*, const TensorArg*>{"reduced", &reduced},
                                  {"slot_source", &slot_source},
                                  {"num_slots", &num_slots}}) {
        require_row_major(kOpName, name, *t);
        require_dram(kOpName, name, *t);
    }
    if (source_shape[0] != reduced_shape[0] || source_shape[1] != 2) {
        fail("slot_source " + shape_str(slot_source.shape) +
             " must be (capacity, 2) with capacity = " + std::to_string(reduced_shape[0]) + " (the rows of reduced)");
    }
    if (slots_shape[0] != 1) fail("num_slots must hold one value, got shape " + shape_str(num_slots.shape));
    if (reduced_shape[1] % 16) {
        fail("H = " + std::to_string(reduced_shape[1]) + " must be a multiple of 16 (32-byte rows)");
    }
    if (attrs.batch == 0 || attrs.seq == 0) {
        fail("batch and seq must be positive, got (" + std::to_string(attrs.batch) + ", " + std::to_string(attrs.seq) +
             ")");
    }
    if (attrs.output_dtype != DataFormat::Float16_b && attrs.output_dtype != DataFormat::Float32) {
        fail("output dtype must be bfloat16 or float32, got " + format_name(attrs.output_dtype));
    }
    validate_num_links(kOpName, attrs.num_links);
    if (attrs.max_packet_payload < common_shared::kPacketPayloadAlignment ||
        attrs.max_packet_payload % common_shared::kPacketPayloadAlignment) {
        fail("max_packet_payload must be a positive multiple of " +
             std::to_string(common_shared::kPacketPayloadAlignment) + ", got " +
             std::to_string(attrs.max_packet_payload));
    }
    return {reduced_shape[0], reduced_shape[1]};
}

std::vector<TensorArg> output_specs(const std::vector<TensorArg>& inputs, const Attributes& attrs) {
    const Shapes s = validate(inputs, attrs);
    const uint32_t line = attrs.mesh.line_size();
    return {
        attrs.unit_dim ? row_major_spec({attrs.batch, attrs.seq, 1, s.hidden}, attrs.output_dtype)
                       : row_major_spec({attrs.batch, attrs.seq, s.hidden}, attrs.output_dtype),
        row_major_spec({line, attrs.batch, attrs.seq, s.hidden}, DataFormat::Float16_b),
        row_major_spec(
            {shared::presence_pages(line, attrs.num_links, attrs.batch * attrs.seq), attrs.batch * attrs.seq},
            DataFormat::UInt32),
        row_major_spec({1, shared::kStatusWords}, DataFormat::UInt32),
    };
}

}  // namespace ttnn_moe::ops::combine_dense
