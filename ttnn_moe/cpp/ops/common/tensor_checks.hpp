// Host-side validation and geometry helpers shared by the routing ops. Every
// failure throws std::invalid_argument (ValueError in Python) naming the op,
// the argument and the offending value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/common/common_shared.hpp"
#include "program/program_descriptor.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops {

// Usable L1 per core for an op's circular buffers (a Wormhole core has 1464 KiB;
// firmware, kernels and tt-metal's reserved region take the rest).
inline constexpr uint32_t kL1BudgetBytes = 1024 * 1024;

std::string shape_str(const std::vector<uint32_t>& shape);
std::string format_name(program::DataFormat format);
uint32_t element_bytes(program::DataFormat format);  // row-major element size
inline uint32_t round_up(uint32_t value, uint32_t multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

// The tensor's shape with leading 1s dropped to exactly `rank` dims (ttnn-style 4-D inputs).
std::vector<uint32_t> squeeze_to_rank(const std::string& op, const std::string& name, const program::TensorArg& t,
                                      size_t rank);
void require_format(const std::string& op, const std::string& name, const program::TensorArg& t,
                    program::DataFormat format);
void require_row_major(const std::string& op, const std::string& name, const program::TensorArg& t);
void require_dram(const std::string& op, const std::string& name, const program::TensorArg& t);

// The shape (squeezed to `rank`) of an input that must be ROW_MAJOR and of `format`;
// checks in that order: rank, dtype, layout.
std::vector<uint32_t> row_major_input(const std::string& op, const std::string& name, const program::TensorArg& t,
                                      size_t rank, program::DataFormat format);
// The (1, 1, E, D) one-hot expert placement every op takes (row e has a 1 in the column of
// the device that owns expert e, devices in row-major mesh order): uint16, uint32 or int32,
// ROW_MAJOR, DRAM, D = the devices of the mesh_rows x mesh_cols mesh, E divisible by D. Returns E.
// Whether the rows really are one-hot is data, checked on the device (status records).
uint32_t expert_mapping_experts(const std::string& op, const program::TensorArg& mapping, uint32_t mesh_rows,
                                uint32_t mesh_cols);
// The shape of an (E_l, 1) uint32 ROW_MAJOR routing column (num_routed_tokens, expert_offsets).
std::vector<uint32_t> routing_column(const std::string& op, const std::string& name, const program::TensorArg& t);

// Spec of a DRAM-interleaved ROW_MAJOR output (address left 0).
program::TensorArg row_major_spec(std::vector<uint32_t> shape, program::DataFormat format);

// Compile-time args of an interleaved accessor whose page size is passed at run time
// (ArgConfig IsDram|RuntimePageSize): one constant word per tensor, so a kernel build
// serves every shape. Kernels construct TensorAccessor(args, address, page_size).
void append_runtime_page_size_accessor_args(const program::TensorArg& t, std::vector<uint32_t>& compile_time_args);

// The first `count` cores of a grid in row-major order (x fastest), as a range set.
struct CoreSelection {
    program::CoreRangeSet ranges;
    std::vector<program::CoreCoord> cores;
};
CoreSelection first_cores(program::CoreCoord grid, uint32_t count);

// Contiguous balanced split of [0, items) over `parts`: [begin, end) of part i.
inline uint32_t split_begin(uint32_t items, uint32_t parts, uint32_t i) {
    return static_cast<uint32_t>(static_cast<uint64_t>(items) * i / parts);
}

void check_l1_budget(const std::string& op, uint32_t bytes, const std::string& what);

}  // namespace ttnn_moe::ops
