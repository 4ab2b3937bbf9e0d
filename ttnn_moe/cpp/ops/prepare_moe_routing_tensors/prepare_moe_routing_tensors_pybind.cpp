#include <pybind11/stl.h>

#include "ops/common/op_registry.hpp"
#include "ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_device_operation.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::prepare_routing {
namespace {

ProgramKey key_of(const std::vector<program::TensorArg>& io, const std::string& kernels_root,
                  std::pair<uint32_t, uint32_t> grid, const Attributes& attrs) {
    ProgramKey key;
    key.add(kernels_root).add(grid.first).add(grid.second).add(attrs.num_experts).add(attrs.num_local_experts);
    for (const auto& t : io) key.add(t);
    return key;
}

void bind(py::module_& m) {
    m.def(
        "prepare_moe_routing_tensors_output_specs",
        [](const std::vector<program::TensorArg>& inputs, uint32_t num_experts, uint32_t num_local_experts) {
            return output_specs(inputs, {num_experts, num_local_experts});
        },
        py::arg("inputs"), py::arg("num_experts"), py::arg("num_local_experts"),
        R"doc(Validates the inputs and returns the output specs of prepare_moe_routing_tensors.

inputs: [selected_experts (T, K) uint32 ROW_MAJOR, routing_weights (T, K) bfloat16 ROW_MAJOR,
         expert_mapping (E,) int32 ROW_MAJOR (local slot of expert e or -1)]; leading 1s allowed.
outputs: num_routed_tokens (E_l, 1) uint32, routed_tokens (E_l, T) uint32,
         routed_token_weights (E_l, T) bfloat16, token_idx_map (E_l, T) uint32,
         routing_errors (1, 8) uint32 = [invalid ids, first bad t, k, id, dropped, first dropped slot, 0, 0];
         all ROW_MAJOR, DRAM interleaved. Raises ValueError naming the offending value.)doc");
    m.def(
        "prepare_moe_routing_tensors_program",
        [](const std::vector<program::TensorArg>& io, const std::string& kernels_root,
           std::pair<uint32_t, uint32_t> grid, uint32_t num_experts, uint32_t num_local_experts) {
            const Attributes attrs{num_experts, num_local_experts};
            return program_cache().get(key_of(io, kernels_root, grid, attrs), io, [&] {
                return create_program(io, kernels_root, {grid.first, grid.second}, attrs);
            });
        },
        py::arg("io_tensors"), py::arg("kernels_root"), py::arg("grid"), py::arg("num_experts"),
        py::arg("num_local_experts"),
        R"doc(The program of prepare_moe_routing_tensors (cached by attributes and io specs).

io_tensors: the 3 inputs then the 5 outputs of prepare_moe_routing_tensors_output_specs.
grid: (x, y) worker grid of the device. kernels_root: directory holding the op kernels.)doc");
    m.def(
        "prepare_moe_routing_tensors_cache_stats",
        [] {
            auto& c = program_cache();
            return py::dict(py::arg("hits") = c.hits(), py::arg("misses") = c.misses(), py::arg("size") = c.size());
        },
        "Program cache counters of prepare_moe_routing_tensors: hits, misses, size.");
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::prepare_routing
