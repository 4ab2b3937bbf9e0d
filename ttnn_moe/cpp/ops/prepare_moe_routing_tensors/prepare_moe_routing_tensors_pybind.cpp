// ttnn_moe._C.ops.prepare_moe_routing_tensors: the device operation's Python face
// (device_operation_pybind.hpp).
#include "ops/common/device_operation_pybind.hpp"
#include "ops/common/op_registry.hpp"
#include "ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_device_operation.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::prepare_routing {
namespace {

void bind(py::module_& ops) {
    auto m = ops.def_submodule("prepare_moe_routing_tensors", R"doc(prepare_moe_routing_tensors' device operation.

inputs: [selected_experts (T, K) uint32, routing_weights (T, K) bfloat16, expert_mapping], ROW_MAJOR;
outputs: num_routed_tokens (E_l, 1) uint32, routed_tokens (E_l, T) uint32, routed_token_weights (E_l, T)
bfloat16, token_idx_map (E_l, T) uint32, routing_status (1, 8) uint32.)doc");
    py::class_<Attributes>(m, "Attributes")
        .def(py::init([](uint32_t num_experts, uint32_t num_local_experts) {
                 return Attributes{num_experts, num_local_experts};
             }),
             py::kw_only(), py::arg("num_experts"), py::arg("num_local_experts"))
        .def_readonly("num_experts", &Attributes::num_experts)
        .def_readonly("num_local_experts", &Attributes::num_local_experts);
    bind_device_operation<Operation>(m);
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::prepare_routing
