#pragma once
#include <pybind11/pybind11.h>

namespace ttnn_moe::bindings {
// Program-description types (ttnn_moe._C.program).
void bind_program(pybind11::module_& m);
// Tile formats and host layout conversion (ttnn_moe._C.numerics).
void bind_numerics(pybind11::module_& m);
// The Tensix emulator (ttnn_moe._C.emu).
void bind_emu(pybind11::module_& m);
// The MoE ops' program factories (ttnn_moe._C.ops).
void bind_ops(pybind11::module_& m);
}  // namespace ttnn_moe::bindings
