#include "bindings/bindings.hpp"

namespace ttnn_moe::bindings {
void bind_numerics(pybind11::module_& m) { m.def_submodule("numerics", "Tile formats and layout conversion"); }
}  // namespace ttnn_moe::bindings
