#include "bindings/bindings.hpp"

namespace ttnn_moe::bindings {
void bind_ops(pybind11::module_& m) { m.def_submodule("ops", "MoE op program factories"); }
}  // namespace ttnn_moe::bindings
