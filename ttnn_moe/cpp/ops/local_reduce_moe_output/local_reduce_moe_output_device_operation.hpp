// local_reduce_moe_output: out[r] = sum over valid assignments (l, i) with token_idx_map == r of
// weight * y, summed in ascending l (then i), bf16 out with fp32 accumulation.
//
// padded : y (E_l, T, H) bf16 RM, token_idx_map (E_l, T) uint32, routed_token_weights (E_l, T) bf16,
//          num_routed_tokens (E_l, 1) uint32
// grouped: y (M, H), token_idx_map (M,), routed_token_weights (M,), num_routed_tokens (E_l, 1),
//          expert_offsets (E_l, 1) uint32 (multiples of 32)
// then, with has_used_rows, num_used_rows (1,) uint32: only output rows [0, num_used_rows) are
//          computed and written (the count is read on the device)
// outputs: (num_out_rows, H) bf16 RM; row_overflow (num_out_rows, 1) uint32 RM = assignments of each
//          row dropped for exceeding max_assignments_per_row (all 0 when every row fits);
//          reduce_status (1, kStatusWords) uint32 RM (local_reduce_moe_output_shared::StatusWord)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/common/device_operation.hpp"
#include "program/program_descriptor.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops::local_reduce {

inline const std::string kOpName = "local_reduce_moe_output";

struct Attributes {
    uint32_t num_out_rows = 0;
    program::MathFidelity math_fidelity = program::MathFidelity::HiFi4;
    bool fp32_dest_acc_en = true;
    // Most assignments one output row can receive (top-k K: one per choice); 0 = no bound, the
    // per-core assignment list is then sized for every entry of the map.
    uint32_t max_assignments_per_row = 0;
    // The last input is num_used_rows: rows at or past it are neither computed nor written.
    bool has_used_rows = false;
    auto fields() const {
        return std::tie(num_out_rows, math_fidelity, fp32_dest_acc_en, max_assignments_per_row, has_used_rows);
    }
};

struct Shapes {
    bool grouped;
    uint32_t num_local;    // E_l
    uint32_t block_rows;   // T (padded) or M (grouped): entries per map page
    uint32_t hidden;       // H
    uint32_t num_entries;  // E_l * T or M: most assignments there can be
};

Shapes validate(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);
std::vector<program::TensorArg> output_specs(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);
// io = the 4 (padded) or 5 (grouped) inputs, num_used_rows (has_used_rows), then the output,
// row_overflow and reduce_status.
CachedProgram create_program(const std::vector<program::TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs);

// The device operation (device_operation.hpp): one program everywhere.
struct Operation {
    static constexpr const char* name = "local_reduce_moe_output";
    static constexpr Placement placement = Placement::kSameProgramEverywhere;
    using Attributes = local_reduce::Attributes;
    static Attributes with_context(Attributes attributes, const MeshContext&) { return attributes; }
    static std::vector<program::TensorArg> output_specs(const Attributes& attributes,
                                                        const std::vector<program::TensorArg>& inputs) {
        return local_reduce::output_specs(inputs, attributes);
    }
    static CachedProgram create_program(const Attributes& attributes, const std::vector<program::TensorArg>& io,
                                        const MeshContext& context, program::MeshCoordinate) {
        return local_reduce::create_program(io, context.kernels_root, context.device, attributes);
    }
};

}  // namespace ttnn_moe::ops::local_reduce
