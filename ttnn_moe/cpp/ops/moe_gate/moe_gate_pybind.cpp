// ttnn_moe._C.ops.moe_gate: the device operation's Python face (device_operation_pybind.hpp).
#include <cstring>

#include "ops/common/device_operation_pybind.hpp"
#include "ops/common/op_registry.hpp"
#include "ops/moe_gate/moe_gate_device_operation.hpp"
#include "ops/moe_gate/moe_gate_shared.hpp"

namespace py = pybind11;

namespace ttnn_moe::ops::moe_gate {
namespace {

uint32_t float_bits(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
}

void bind(py::module_& ops) {
    auto m = ops.def_submodule("moe_gate", R"doc(moe_gate's device operation.

inputs: [x (T, H) TILE bfloat16, gate_weight (E, H) TILE bfloat16|float32,
e_score_correction_bias (E,) ROW_MAJOR float32];
outputs: topk_indices (1, T, K) uint32 (or uint16: indices_format), topk_weights (1, T, K) bfloat16, ROW_MAJOR, gate_status
(ceil(T/32), STATUS_WORDS) uint32, a row per 32-token tile indexed by StatusWord.)doc");
    namespace shared = moe_gate_shared;
    py::enum_<shared::StatusWord>(m, "StatusWord", py::arithmetic(), "Words of a gate_status row.")
        .value("kNanTokens", shared::kNanTokens)
        .value("kFirstNanToken", shared::kFirstNanToken)
        .value("kFirstNanExpert", shared::kFirstNanExpert);
    m.attr("STATUS_WORDS") = static_cast<uint32_t>(shared::kStatusWords);
    m.attr("NONE") = shared::kNone;
    py::class_<Attributes>(m, "Attributes")
        .def(py::init([](uint32_t n_group, uint32_t topk_group, uint32_t top_k, bool norm_topk_prob,
                         float routed_scaling_factor, program::DataFormat indices_format) {
                 Attributes a;
                 a.n_group = n_group;
                 a.topk_group = topk_group;
                 a.top_k = top_k;
                 a.norm_topk_prob = norm_topk_prob;
                 a.routed_scaling_factor_bits = float_bits(routed_scaling_factor);
                 a.indices_format = indices_format;
                 return a;
             }),
             py::kw_only(), py::arg("n_group"), py::arg("topk_group"), py::arg("top_k"), py::arg("norm_topk_prob"),
             py::arg("routed_scaling_factor"), py::arg("indices_format") = program::DataFormat::UInt32);
    bind_device_operation<Operation>(m);
    m.attr("MAX_GROUPS") = moe_gate_shared::kMaxGroups;
    m.attr("MAX_TOP_K") = moe_gate_shared::kMaxTopK;
}

const OpBindingRegistration registration(&bind);

}  // namespace
}  // namespace ttnn_moe::ops::moe_gate
