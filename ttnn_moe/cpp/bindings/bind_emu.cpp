#include "bindings/bindings.hpp"

namespace ttnn_moe::bindings {
void bind_emu(pybind11::module_& m) { m.def_submodule("emu", "The Tensix emulator"); }
}  // namespace ttnn_moe::bindings
