// ttnn_moe._C.ops.local_reduce_moe_output: the device operation's Python face
// (device_operation_pybind.hpp).
#include "ops/common/device_operation_pybind.hpp"
#include "ops/common/op_registry.hpp"
#include "ops/local_reduce_moe_output/local_reduce_moe_output_device_operation.hpp"
#include "ops/local_reduce_moe_output/local_reduce_moe_output_shared.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::local_reduce {
namespace {

void bind(py::module_& ops) {
    auto m = ops.def_submodule("local_reduce_moe_output", R"doc(local_reduce_moe_output's device operation.

inputs: padded [y (E_l, T, H) bfloat16, token_idx_map (E_l, T) uint32, routed_token_weights (E_l, T) bfloat16,
num_routed_tokens (E_l, 1) uint32] or grouped [y (M, H), token_idx_map (M,), routed_token_weights (M,),
num_routed_tokens, expert_offsets (E_l, 1)], then with has_used_rows num_used_rows (1,) uint32, ROW_MAJOR; outputs: (num_out_rows, H) bfloat16,
row_overflow (num_out_rows, 1) uint32 and reduce_status (1, STATUS_WORDS) uint32 indexed by StatusWord.)doc");
    namespace shared = local_reduce_moe_output_shared;
    py::enum_<shared::StatusWord>(m, "StatusWord", py::arithmetic(), "Words of the reduce_status record.")
        .value("kBadRows", shared::kBadRows)
        .value("kFirstBadExpert", shared::kFirstBadExpert)
        .value("kFirstBadIndex", shared::kFirstBadIndex)
        .value("kFirstBadRow", shared::kFirstBadRow)
        .value("kClampedCounts", shared::kClampedCounts)
        .value("kFirstClampedExpert", shared::kFirstClampedExpert)
        .value("kFirstClampedCount", shared::kFirstClampedCount)
        .value("kOverlappingBlocks", shared::kOverlappingBlocks)
        .value("kFirstOverlapExpert", shared::kFirstOverlapExpert)
        .value("kMisalignedOffsets", shared::kMisalignedOffsets)
        .value("kFirstMisalignedExpert", shared::kFirstMisalignedExpert)
        .value("kFirstMisalignedOffset", shared::kFirstMisalignedOffset)
        .value("kUsedRowsRead", shared::kUsedRowsRead)
        .value("kRowsComputed", shared::kRowsComputed);
    m.attr("OFFSET_ALIGNMENT") = shared::kOffsetAlignment;
    m.attr("STATUS_WORDS") = static_cast<uint32_t>(shared::kStatusWords);
    m.attr("NONE") = shared::kNone;
    py::class_<Attributes>(m, "Attributes")
        .def(py::init([](uint32_t num_out_rows, program::MathFidelity math_fidelity, bool fp32_dest_acc_en,
                         uint32_t max_assignments_per_row, bool has_used_rows) {
                 return Attributes{num_out_rows, math_fidelity, fp32_dest_acc_en, max_assignments_per_row,
                                   has_used_rows};
             }),
             py::kw_only(), py::arg("num_out_rows"), py::arg("math_fidelity") = program::MathFidelity::HiFi4,
             py::arg("fp32_dest_acc_en") = true, py::arg("max_assignments_per_row") = 0,
             py::arg("has_used_rows") = false)
        .def_readonly("num_out_rows", &Attributes::num_out_rows)
        .def_readonly("max_assignments_per_row", &Attributes::max_assignments_per_row)
        .def_readonly("has_used_rows", &Attributes::has_used_rows);
    bind_device_operation<Operation>(m);
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::local_reduce
