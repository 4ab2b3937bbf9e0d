// ttnn_moe._C.ops.moe_bmm: the device operation's Python face (device_operation_pybind.hpp).
#include "ops/common/device_operation_pybind.hpp"
#include "ops/common/op_registry.hpp"
#include "ops/moe_bmm/moe_bmm_device_operation.hpp"
#include "ops/moe_bmm/moe_bmm_shared.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::moe_bmm {
namespace {

void bind(py::module_& ops) {
    auto m = ops.def_submodule("moe_bmm", R"doc(moe_bmm's device operation.

inputs: padded [x (E_l, T, Kd) TILE or ROW_MAJOR bfloat16, w (E_l, Kd, N) TILE bfloat16|bfloat8_b|bfloat4_b,
num_routed_tokens (E_l, 1) ROW_MAJOR uint32] or grouped [x (M, Kd), w, num_routed_tokens,
expert_offsets (E_l, 1) ROW_MAJOR uint32];
outputs: padded (E_l, T, N), grouped (M, N), bfloat16 in output_layout (ROW_MAJOR: only counted rows written);
bmm_status (1, STATUS_WORDS) ROW_MAJOR uint32
indexed by StatusWord. With Activation.SWIGLU, w is (E_l, Kd, 2N) with gate and up column tiles alternating,
and the output keeps N columns. with_addend: one more input shaped like the output (TILE bfloat16) is added to
the product.)doc");
    py::enum_<Activation>(m, "Activation")
        .value("NONE", Activation::None, "out = x @ w")
        .value("SWIGLU", Activation::Swiglu, "w interleaves gate and up column tiles; out = silu(x @ gate) * (x @ up)");
    py::class_<Attributes>(m, "Attributes")
        .def(py::init([](program::MathFidelity math_fidelity, bool fp32_dest_acc_en, bool math_approx_mode,
                         Activation activation, bool with_addend, program::Layout output_layout) {
                 Attributes attributes;
                 attributes.compute = {math_fidelity, fp32_dest_acc_en, math_approx_mode};
                 attributes.activation = activation;
                 attributes.with_addend = with_addend;
                 attributes.output_layout = output_layout;
                 return attributes;
             }),
             py::kw_only(), py::arg("math_fidelity") = program::MathFidelity::HiFi4,
             py::arg("fp32_dest_acc_en") = false, py::arg("math_approx_mode") = false,
             py::arg("activation") = Activation::None, py::arg("with_addend") = false,
             py::arg("output_layout") = program::Layout::TILE);
    bind_device_operation<Operation>(m);
    m.attr("TILE_ROWS") = ttnn_moe::moe_bmm_shared::kTileRows;
    namespace shared = ttnn_moe::moe_bmm_shared;
    py::enum_<shared::StatusWord>(m, "StatusWord", py::arithmetic(), "Words of the bmm_status record.")
        .value("kClampedCounts", shared::kClampedCounts)
        .value("kFirstClampedExpert", shared::kFirstClampedExpert)
        .value("kFirstClampedCount", shared::kFirstClampedCount)
        .value("kMisalignedOffsets", shared::kMisalignedOffsets)
        .value("kFirstMisalignedExpert", shared::kFirstMisalignedExpert)
        .value("kFirstMisalignedOffset", shared::kFirstMisalignedOffset)
        .value("kOverlappingBlocks", shared::kOverlappingBlocks)
        .value("kFirstOverlapExpert", shared::kFirstOverlapExpert);
    m.attr("STATUS_WORDS") = static_cast<uint32_t>(shared::kStatusWords);
    m.attr("NONE") = shared::kNone;
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::moe_bmm
