// ttnn_moe._C.ops.all_to_all_combine_dense: the device operation's Python face
// (device_operation_pybind.hpp).
#include "ops/all_to_all_combine_dense/all_to_all_combine_dense_device_operation.hpp"
#include "ops/common/device_operation_pybind.hpp"
#include "ops/common/op_registry.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::combine_dense {
namespace {

void bind(py::module_& ops) {
    auto m = ops.def_submodule("all_to_all_combine_dense", R"doc(all_to_all_combine_dense's device operation.

inputs: [reduced (capacity, H) bfloat16, slot_source (capacity, 2) uint32, num_slots (1,) uint32], ROW_MAJOR;
outputs per device: output (B, S, H) or (B, S, 1, H) bfloat16 or float32, partials (D, B, S, H) bfloat16, presence (D*L or 2*D*L,
B*S) uint32 (scratch), combine_status (1, STATUS_WORDS) uint32 indexed by StatusWord.)doc");
    py::enum_<shared::StatusWord>(m, "StatusWord", py::arithmetic(), "Words of the combine_status record.")
        .value("kBadSlots", shared::kBadSlots)
        .value("kFirstBadSlot", shared::kFirstBadSlot)
        .value("kNumSlotsClamped", shared::kNumSlotsClamped)
        .value("kNumSlotsRead", shared::kNumSlotsRead);
    m.attr("STATUS_WORDS") = shared::kStatusWords;
    m.attr("PRESENCE_WINDOW_TOKENS") = shared::kPresenceWindowTokens;
    py::class_<Attributes>(m, "Attributes")
        .def(py::init([](uint32_t cluster_axis, uint32_t batch, uint32_t seq, program::DataFormat output_dtype,
                         bool unit_dim, bool return_partials, uint32_t num_links) {
                 Attributes attributes;
                 attributes.mesh.cluster_axis = cluster_axis;
                 attributes.batch = batch;
                 attributes.seq = seq;
                 attributes.output_dtype = output_dtype;
                 attributes.unit_dim = unit_dim;
                 attributes.return_partials = return_partials;
                 attributes.num_links = num_links;
                 return attributes;
             }),
             py::kw_only(), py::arg("cluster_axis"), py::arg("batch"), py::arg("seq"),
             py::arg("output_dtype") = program::DataFormat::Float16_b, py::arg("unit_dim") = false,
             py::arg("return_partials") = false, py::arg("num_links") = 1);
    bind_device_operation<Operation>(m);
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::combine_dense
