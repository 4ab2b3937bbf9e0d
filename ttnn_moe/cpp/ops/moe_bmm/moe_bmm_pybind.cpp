// Python face of moe_bmm's program factory (ttnn_moe._C.ops), in the convention of
// every op: <op>_output_specs(inputs, **attrs) and <op>_program(io, kernels_root, grid, **attrs).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "ops/common/op_registry.hpp"
#include "ops/moe_bmm/moe_bmm_device_operation.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::moe_bmm {

namespace {

using program::TensorArg;

// inputs: [x, w, num_routed_tokens] (padded) or [x, w, num_routed_tokens, expert_offsets] (grouped).
Inputs inputs_from(const std::vector<TensorArg>& inputs) {
    if (inputs.size() != 3 && inputs.size() != 4) {
        throw std::invalid_argument("moe_bmm: expected 3 inputs (x, w, num_routed_tokens) or 4 (+ expert_offsets), got " +
                                    std::to_string(inputs.size()));
    }
    Inputs in{inputs[0], inputs[1], inputs[2], std::nullopt};
    if (inputs.size() == 4) in.expert_offsets = inputs[3];
    return in;
}

Attributes attributes_from(std::string kernels_root, std::pair<uint32_t, uint32_t> grid,
                           program::MathFidelity math_fidelity, bool fp32_dest_acc_en, bool math_approx_mode) {
    return Attributes{{grid.first, grid.second}, {math_fidelity, fp32_dest_acc_en, math_approx_mode},
                      std::move(kernels_root)};
}

TensorArg output_arg(const OutputSpec& spec) {
    TensorArg out;
    out.shape = spec.shape;
    out.dtype = spec.dtype;
    out.layout = spec.layout;
    out.page_size = program::tile_size_bytes(spec.dtype);
    const uint32_t rows = spec.shape[spec.shape.size() - 2], cols = spec.shape.back();
    uint32_t pages = ((rows + 31) / 32) * ((cols + 31) / 32);
    for (size_t i = 0; i + 2 < spec.shape.size(); ++i) pages *= spec.shape[i];
    out.num_pages = pages;
    return out;
}

void bind(py::module_& m) {
    m.def(
        "moe_bmm_output_specs",
        [](const std::vector<TensorArg>& inputs, program::MathFidelity math_fidelity, bool fp32_dest_acc_en,
           bool math_approx_mode) {
            const auto attrs = attributes_from("", {1, 1}, math_fidelity, fp32_dest_acc_en, math_approx_mode);
            return std::vector<TensorArg>{output_arg(output_spec(attrs, inputs_from(inputs)))};
        },
        py::arg("inputs"), py::arg("math_fidelity") = program::MathFidelity::HiFi4,
        py::arg("fp32_dest_acc_en") = false, py::arg("math_approx_mode") = false,
        R"doc(Validates moe_bmm's inputs and returns the output spec (address 0).

inputs: padded  [x (E_l, T, Kd) TILE bfloat16, w (E_l, Kd, N) TILE bfloat16|bfloat8_b,
                 num_routed_tokens (E_l, 1) ROW_MAJOR uint32]
        grouped [x (M, Kd) TILE bfloat16, w, num_routed_tokens,
                 expert_offsets (E_l, 1) ROW_MAJOR uint32, multiples of 32]
Kd and N must be multiples of 32. Returns [out]: padded (E_l, T, N), grouped (M, N),
TILE bfloat16. Raises ValueError naming the offending value.)doc");

    m.def(
        "moe_bmm_program",
        [](const std::vector<TensorArg>& io, const std::string& kernels_root, std::pair<uint32_t, uint32_t> grid,
           program::MathFidelity math_fidelity, bool fp32_dest_acc_en, bool math_approx_mode) {
            if (io.size() < 4) {
                throw std::invalid_argument("moe_bmm: io tensors are the inputs then the output, got " +
                                            std::to_string(io.size()) + " tensors");
            }
            const std::vector<TensorArg> inputs(io.begin(), io.end() - 1);
            const auto attrs = attributes_from(kernels_root, grid, math_fidelity, fp32_dest_acc_en, math_approx_mode);
            return program_for(attrs, inputs_from(inputs), io.back());
        },
        py::arg("io_tensors"), py::arg("kernels_root"), py::arg("grid"),
        py::arg("math_fidelity") = program::MathFidelity::HiFi4, py::arg("fp32_dest_acc_en") = false,
        py::arg("math_approx_mode") = false,
        R"doc(The moe_bmm program for io_tensors = inputs (as for moe_bmm_output_specs) + [out].

The active output tiles (ceil(count_l / 32) * N/32 of expert l) are split evenly over the
grid (x, y) by the kernels themselves, from the counts in device memory. Programs are
cached by shapes, dtypes, layouts, grid and compute config; a hit only rewrites the
buffer addresses.)doc");

    m.def(
        "moe_bmm_program_cache_info",
        [] {
            py::dict d;
            d["hits"] = program_cache().hits();
            d["misses"] = program_cache().misses();
            d["entries"] = program_cache().size();
            return d;
        },
        "Hits, misses and entries of moe_bmm's program cache.");
    m.def("moe_bmm_program_cache_clear", [] { program_cache().clear(); }, "Empties moe_bmm's program cache.");
}

const OpBindingRegistration registration(&bind);

}  // namespace

}  // namespace ttnn_moe::ops::moe_bmm
