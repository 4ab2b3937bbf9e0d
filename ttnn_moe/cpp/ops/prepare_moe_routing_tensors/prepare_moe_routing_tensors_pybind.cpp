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

inputs: [selected_experts (T, K) uint32, routing_weights (T, K) bfloat16,
expert_mapping (1, 1, E, D) one-hot], ROW_MAJOR;
outputs: num_routed_tokens (E_l, 1) uint32, routed_tokens (E_l, T) uint32, routed_token_weights (E_l, T)
bfloat16, token_idx_map (E_l, T) uint32, routing_status (1, 8) uint32.)doc");
    // D comes from the mesh the op runs on.
    py::class_<Attributes>(m, "Attributes")
        .def(py::init<>())
        .def_readonly("mesh_rows", &Attributes::mesh_rows)
        .def_readonly("mesh_cols", &Attributes::mesh_cols);
    using namespace prepare_moe_routing_tensors_shared;
    py::enum_<StatusWord>(m, "StatusWord", "Word indices of the (1, 8) routing_status record.")
        .value("num_invalid_ids", kNumInvalidIds)
        .value("first_invalid_t", kFirstInvalidT)
        .value("first_invalid_k", kFirstInvalidK)
        .value("first_invalid_id", kFirstInvalidId)
        .value("num_dropped", kNumDropped)
        .value("first_dropped_slot", kFirstDroppedSlot)
        .value("mapping_errors", kMappingErrors)
        .value("first_bad_expert", kFirstBadExpert);
    m.attr("STATUS_WORDS") = static_cast<uint32_t>(kStatusWords);
    m.attr("NONE") = kNone;
    bind_device_operation<Operation>(m);
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::prepare_routing
