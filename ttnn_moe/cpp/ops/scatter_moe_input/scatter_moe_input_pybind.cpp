// ttnn_moe._C.ops.scatter_moe_input: the device operation's Python face (device_operation_pybind.hpp).
#include "ops/common/device_operation_pybind.hpp"
#include "ops/common/op_registry.hpp"
#include "ops/scatter_moe_input/scatter_moe_input_device_operation.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::scatter_input {
namespace {

void bind(py::module_& ops) {
    auto m = ops.def_submodule("scatter_moe_input", R"doc(scatter_moe_input's device operation.

inputs: [x (T, H) bfloat16, num_routed_tokens (E_l, 1) uint32, routed_tokens (E_l, T) uint32], ROW_MAJOR;
output: (E_l, T, H) bfloat16 ROW_MAJOR, out[l, i] = x[routed_tokens[l, i]] for i < count_l, 0 after.)doc");
    py::class_<Operation::Attributes>(m, "Attributes", "scatter_moe_input has no attributes").def(py::init<>());
    bind_device_operation<Operation>(m);
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::scatter_input
