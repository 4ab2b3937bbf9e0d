// ttnn_moe._C.ops.scatter_moe_input: the device operation's Python face (device_operation_pybind.hpp).
#include "ops/common/device_operation_pybind.hpp"
#include "ops/common/op_registry.hpp"
#include "ops/scatter_moe_input/scatter_moe_input_device_operation.hpp"
#include "ops/scatter_moe_input/scatter_moe_input_shared.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::scatter_input {
namespace {

void bind(py::module_& ops) {
    auto m = ops.def_submodule("scatter_moe_input", R"doc(scatter_moe_input's device operation.

inputs: [x (T, H) bfloat16, num_routed_tokens (E_l, 1) uint32, routed_tokens (E_l, T) uint32], ROW_MAJOR;
outputs: (E_l, T, H) bfloat16 ROW_MAJOR, out[l, i] = x[routed_tokens[l, i]] for i < count_l, 0 after;
scatter_status (1, STATUS_WORDS) uint32 indexed by StatusWord.)doc");
    namespace shared = scatter_moe_input_shared;
    py::enum_<shared::StatusWord>(m, "StatusWord", py::arithmetic(), "Words of the scatter_status record.")
        .value("kBadTokens", shared::kBadTokens)
        .value("kFirstBadExpert", shared::kFirstBadExpert)
        .value("kFirstBadIndex", shared::kFirstBadIndex)
        .value("kFirstBadToken", shared::kFirstBadToken)
        .value("kClampedCounts", shared::kClampedCounts)
        .value("kFirstClampedExpert", shared::kFirstClampedExpert)
        .value("kFirstClampedCount", shared::kFirstClampedCount);
    m.attr("STATUS_WORDS") = static_cast<uint32_t>(shared::kStatusWords);
    m.attr("NONE") = shared::kNone;
    py::class_<Operation::Attributes>(m, "Attributes", "scatter_moe_input has no attributes").def(py::init<>());
    bind_device_operation<Operation>(m);
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::scatter_input
