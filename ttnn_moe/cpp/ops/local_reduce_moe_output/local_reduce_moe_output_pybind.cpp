#include <pybind11/stl.h>

#include <optional>
#include <stdexcept>

#include "ops/common/op_registry.hpp"
#include "ops/local_reduce_moe_output/local_reduce_moe_output_device_operation.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::local_reduce {
namespace {

// None -> 0 (no bound); an explicit bound must be positive.
uint32_t row_bound_attr(const std::optional<uint32_t>& max_assignments_per_row) {
    if (max_assignments_per_row && *max_assignments_per_row == 0) {
        throw std::invalid_argument(kOpName + ": max_assignments_per_row must be a positive int or None, got 0");
    }
    return max_assignments_per_row.value_or(0);
}

void bind(py::module_& m) {
    m.def(
        "local_reduce_moe_output_output_specs",
        [](const std::vector<program::TensorArg>& inputs, uint32_t num_out_rows, program::MathFidelity math_fidelity,
           bool fp32_dest_acc_en, std::optional<uint32_t> max_assignments_per_row) {
            return output_specs(inputs,
                                {num_out_rows, math_fidelity, fp32_dest_acc_en, row_bound_attr(max_assignments_per_row)});
        },
        py::arg("inputs"), py::arg("num_out_rows"), py::arg("math_fidelity") = program::MathFidelity::HiFi4,
        py::arg("fp32_dest_acc_en") = true, py::arg("max_assignments_per_row") = py::none(),
        R"doc(Validates the inputs and returns the output spec of local_reduce_moe_output.

padded inputs : [y (E_l, T, H) bfloat16 ROW_MAJOR, token_idx_map (E_l, T) uint32 ROW_MAJOR,
                 routed_token_weights (E_l, T) bfloat16 ROW_MAJOR, num_routed_tokens (E_l, 1) uint32 ROW_MAJOR]
grouped inputs: [y (M, H), token_idx_map (M,), routed_token_weights (M,), num_routed_tokens (E_l, 1),
                 expert_offsets (E_l, 1) uint32, multiples of 32]
outputs: (num_out_rows, H) bfloat16 ROW_MAJOR, row_overflow (num_out_rows, 1) uint32 ROW_MAJOR.
Raises ValueError naming the offending value.)doc");
    m.def(
        "local_reduce_moe_output_program",
        [](const std::vector<program::TensorArg>& io, const std::string& kernels_root,
           std::pair<uint32_t, uint32_t> grid, uint32_t num_out_rows, program::MathFidelity math_fidelity,
           bool fp32_dest_acc_en, std::optional<uint32_t> max_assignments_per_row) {
            const Attributes attrs{num_out_rows, math_fidelity, fp32_dest_acc_en,
                                   row_bound_attr(max_assignments_per_row)};
            ProgramKey key;
            key.add(kernels_root).add(grid.first).add(grid.second).add(num_out_rows);
            key.add(static_cast<uint64_t>(math_fidelity)).add(fp32_dest_acc_en ? 1 : 0);
            key.add(attrs.max_assignments_per_row);
            for (const auto& t : io) key.add(t);
            return program_cache().get(key, io, [&] {
                return create_program(io, kernels_root, {grid.first, grid.second}, attrs);
            });
        },
        py::arg("io_tensors"), py::arg("kernels_root"), py::arg("grid"), py::arg("num_out_rows"),
        py::arg("math_fidelity") = program::MathFidelity::HiFi4, py::arg("fp32_dest_acc_en") = true,
        py::arg("max_assignments_per_row") = py::none(),
        R"doc(The program of local_reduce_moe_output (cached by attributes, io specs and grid).

io_tensors: the 4 (padded) or 5 (grouped) inputs, then the output and row_overflow. grid: (x, y) worker grid.)doc");
    m.def(
        "local_reduce_moe_output_cache_stats",
        [] {
            auto& c = program_cache();
            return py::dict(py::arg("hits") = c.hits(), py::arg("misses") = c.misses(), py::arg("size") = c.size());
        },
        "Program cache counters of local_reduce_moe_output: hits, misses, size.");
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::local_reduce
