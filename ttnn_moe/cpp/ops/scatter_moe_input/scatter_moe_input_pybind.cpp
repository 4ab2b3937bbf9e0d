#include <pybind11/stl.h>

#include "ops/common/op_registry.hpp"
#include "ops/scatter_moe_input/scatter_moe_input_device_operation.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::scatter_input {
namespace {

void bind(py::module_& m) {
    m.def("scatter_moe_input_output_specs", &output_specs, py::arg("inputs"),
          R"doc(Validates the inputs and returns the output spec of scatter_moe_input.

inputs: [x (T, H) bfloat16 ROW_MAJOR, num_routed_tokens (E_l, 1) uint32 ROW_MAJOR,
         routed_tokens (E_l, T) uint32 ROW_MAJOR]; leading 1s allowed.
output: (E_l, T, H) bfloat16 ROW_MAJOR, out[l, i] = x[routed_tokens[l, i]] for i < count_l, 0 after.
Raises ValueError naming the offending value.)doc");
    m.def(
        "scatter_moe_input_program",
        [](const std::vector<program::TensorArg>& io, const std::string& kernels_root,
           std::pair<uint32_t, uint32_t> grid) {
            ProgramKey key;
            key.add(kernels_root).add(grid.first).add(grid.second);
            for (const auto& t : io) key.add(t);
            return program_cache().get(key, io, [&] { return create_program(io, kernels_root, {grid.first, grid.second}); });
        },
        py::arg("io_tensors"), py::arg("kernels_root"), py::arg("grid"),
        R"doc(The program of scatter_moe_input (cached by io specs and grid).

io_tensors: x, num_routed_tokens, routed_tokens, output. grid: (x, y) worker grid.)doc");
    m.def(
        "scatter_moe_input_cache_stats",
        [] {
            auto& c = program_cache();
            return py::dict(py::arg("hits") = c.hits(), py::arg("misses") = c.misses(), py::arg("size") = c.size());
        },
        "Program cache counters of scatter_moe_input: hits, misses, size.");
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::scatter_input
