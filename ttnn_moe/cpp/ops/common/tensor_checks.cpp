#include "ops/common/tensor_checks.hpp"

#include <stdexcept>

namespace ttnn_moe::ops {

using program::DataFormat;

std::string shape_str(const std::vector<uint32_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

std::string format_name(DataFormat format) {
    switch (format) {
        case DataFormat::Float32:
            return "float32";
        case DataFormat::Float16_b:
            return "bfloat16";
        case DataFormat::Bfp8_b:
            return "bfloat8_b";
        case DataFormat::Bfp4_b:
            return "bfloat4_b";
        case DataFormat::UInt32:
            return "uint32";
        case DataFormat::Int32:
            return "int32";
        case DataFormat::UInt16:
            return "uint16";
        case DataFormat::UInt8:
            return "uint8";
        default:
            return "DataFormat(" + std::to_string(static_cast<int>(format)) + ")";
    }
}

uint32_t element_bytes(DataFormat format) {
    switch (format) {
        case DataFormat::Float32:
        case DataFormat::UInt32:
        case DataFormat::Int32:
            return 4;
        case DataFormat::Float16_b:
        case DataFormat::Float16:
        case DataFormat::UInt16:
            return 2;
        case DataFormat::UInt8:
        case DataFormat::Int8:
            return 1;
        default:
            throw std::invalid_argument(format_name(format) + " has no row-major element size");
    }
}

std::vector<uint32_t> squeeze_to_rank(const std::string& op, const std::string& name, const program::TensorArg& t,
                                      size_t rank) {
    std::vector<uint32_t> shape = t.shape;
    while (shape.size() > rank && shape.front() == 1) shape.erase(shape.begin());
    if (shape.size() != rank) {
        throw std::invalid_argument(op + ": " + name + " must have rank " + std::to_string(rank) +
                                    " (leading 1s allowed), got shape " + shape_str(t.shape));
    }
    for (auto d : shape) {
        if (d == 0) throw std::invalid_argument(op + ": " + name + " has an empty dim: " + shape_str(t.shape));
    }
    return shape;
}

void require_format(const std::string& op, const std::string& name, const program::TensorArg& t, DataFormat format) {
    if (t.dtype != format) {
        throw std::invalid_argument(op + ": " + name + " must be " + format_name(format) + ", got " +
                                    format_name(t.dtype));
    }
}

void require_row_major(const std::string& op, const std::string& name, const program::TensorArg& t) {
    if (t.layout != program::Layout::ROW_MAJOR) {
        throw std::invalid_argument(op + ": " + name + " must be ROW_MAJOR_LAYOUT, got TILE_LAYOUT");
    }
}

void require_dram(const std::string& op, const std::string& name, const program::TensorArg& t) {
    if (!t.is_dram) throw std::invalid_argument(op + ": " + name + " must be DRAM interleaved, got L1");
}

std::vector<uint32_t> row_major_input(const std::string& op, const std::string& name, const program::TensorArg& t,
                                      size_t rank, DataFormat format) {
    auto shape = squeeze_to_rank(op, name, t, rank);
    require_format(op, name, t, format);
    require_row_major(op, name, t);
    return shape;
}

uint32_t expert_mapping_experts(const std::string& op, const program::TensorArg& mapping, uint32_t mesh_rows,
                                uint32_t mesh_cols) {
    const uint32_t num_devices = mesh_rows * mesh_cols;
    const auto shape = squeeze_to_rank(op, "expert_mapping (1, 1, E, num_devices)", mapping, 2);
    if (mapping.dtype != DataFormat::UInt16 && mapping.dtype != DataFormat::UInt32 &&
        mapping.dtype != DataFormat::Int32) {
        throw std::invalid_argument(op + ": expert_mapping must be uint16, uint32 or int32, got " +
                                    format_name(mapping.dtype));
    }
    require_row_major(op, "expert_mapping", mapping);
    require_dram(op, "expert_mapping", mapping);
    if (shape[1] != num_devices) {
        throw std::invalid_argument(op + ": expert_mapping " + shape_str(mapping.shape) + " covers " +
                                    std::to_string(shape[1]) + " devices, the " + std::to_string(mesh_rows) + "x" +
                                    std::to_string(mesh_cols) + " mesh has " + std::to_string(num_devices));
    }
    if (shape[0] % num_devices) {
        throw std::invalid_argument(op + ": E = " + std::to_string(shape[0]) + " experts are not divisible by the " +
                                    std::to_string(num_devices) + " devices of the mesh");
    }
    return shape[0];
}

std::vector<uint32_t> routing_column(const std::string& op, const std::string& name, const program::TensorArg& t) {
    auto shape = row_major_input(op, name, t, 2, DataFormat::UInt32);
    if (shape[1] != 1) throw std::invalid_argument(op + ": " + name + " must be (E_l, 1), got " + shape_str(t.shape));
    return shape;
}

program::TensorArg row_major_spec(std::vector<uint32_t> shape, DataFormat format) {
    program::TensorArg spec;
    uint32_t rows = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) rows *= shape[i];
    spec.page_size = shape.back() * element_bytes(format);
    spec.num_pages = rows;
    spec.shape = std::move(shape);
    spec.dtype = format;
    spec.layout = program::Layout::ROW_MAJOR;
    spec.is_dram = true;
    return spec;
}

void append_runtime_page_size_accessor_args(const program::TensorArg& t, std::vector<uint32_t>& compile_time_args) {
    // tensor_accessor::ArgConfig bits (hostdevcommon/tensor_accessor/arg_config.hpp, 0.81.1).
    constexpr uint32_t kIsDram = 1u << 1;
    constexpr uint32_t kRuntimePageSize = 1u << 7;
    compile_time_args.push_back((t.is_dram ? kIsDram : 0u) | kRuntimePageSize);
}

CoreSelection first_cores(program::CoreCoord grid, uint32_t count) {
    CoreSelection sel;
    const uint32_t full_rows = count / grid.x;
    const uint32_t rest = count % grid.x;
    if (full_rows > 0) sel.ranges.ranges.push_back({{0, 0}, {grid.x - 1, full_rows - 1}});
    if (rest > 0) sel.ranges.ranges.push_back({{0, full_rows}, {rest - 1, full_rows}});
    for (uint32_t i = 0; i < count; ++i) sel.cores.push_back({i % grid.x, i / grid.x});
    return sel;
}

void check_l1_budget(const std::string& op, uint32_t bytes, const std::string& what) {
    if (bytes > kL1BudgetBytes) {
        throw std::invalid_argument(op + ": needs " + std::to_string(bytes) + " bytes of L1 per core for " + what +
                                    ", more than the " + std::to_string(kL1BudgetBytes) + " available");
    }
}

}  // namespace ttnn_moe::ops
