// ttnn_moe._C.ops.all_to_all_dispatch_dense: the device operation's Python face
// (device_operation_pybind.hpp).
#include "ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_device_operation.hpp"
#include "ops/common/device_operation_pybind.hpp"
#include "ops/common/op_registry.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::dispatch_dense {
namespace {

void bind(py::module_& ops) {
    auto m = ops.def_submodule("all_to_all_dispatch_dense", R"doc(all_to_all_dispatch_dense's device operation.

inputs: [x (B, S, H) bfloat16, topk_indices (B, S, K) uint32, topk_weights (B, S, K) bfloat16,
expert_mapping (1, 1, E, num_devices)], ROW_MAJOR; outputs per device: tokens (capacity, H), num_routed_tokens
(E_l, 1), expert_offsets (E_l, 1), token_idx_map (capacity,), routed_token_weights (capacity,), slot_source
(capacity, 2), num_slots (1,), dispatch_status (1, STATUS_WORDS) indexed by StatusWord, and two scratch buffers
(routing counts and lists).)doc");
    py::enum_<shared::StatusWord>(m, "StatusWord", py::arithmetic(), "Words of the dispatch_status record.")
        .value("kDroppedRows", shared::kDroppedRows)
        .value("kNeededRows", shared::kNeededRows)
        .value("kInvalidIds", shared::kInvalidIds)
        .value("kFirstInvalidToken", shared::kFirstInvalidToken)
        .value("kFirstInvalidK", shared::kFirstInvalidK)
        .value("kFirstInvalidId", shared::kFirstInvalidId)
        .value("kMappingErrors", shared::kMappingErrors)
        .value("kFirstBadExpert", shared::kFirstBadExpert);
    m.attr("STATUS_WORDS") = shared::kStatusWords;
    py::class_<Attributes>(m, "Attributes")
        .def(py::init([](uint32_t cluster_axis, uint32_t capacity, uint32_t num_links) {
                 Attributes attributes;
                 attributes.mesh.cluster_axis = cluster_axis;
                 attributes.capacity = capacity;
                 attributes.num_links = num_links;
                 return attributes;
             }),
             py::kw_only(), py::arg("cluster_axis"), py::arg("capacity") = 0, py::arg("num_links") = 1);
    bind_device_operation<Operation>(m);
    m.def("default_capacity", &default_capacity, py::kw_only(), py::arg("tokens_per_device"), py::arg("top_k"),
          py::arg("line_size"), py::arg("local_experts"),
          "Rows per device that always suffice when a token's experts are distinct.");
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::dispatch_dense
