#pragma once
#include <pybind11/pybind11.h>

#include "emu/fabric/traffic.hpp"

namespace ttnn_moe::bindings {
// Program-description types (ttnn_moe._C.program).
void bind_program(pybind11::module_& m);
// Host layout conversion of tile pages, used by the emulator's tensors (ttnn_moe._C.numerics).
void bind_numerics(pybind11::module_& m);
// The Tensix emulator (ttnn_moe._C.emu).
void bind_emu(pybind11::module_& m);
// The emulated tt-fabric, added to ttnn_moe._C.emu by bind_emu (bind_fabric.cpp).
void bind_fabric(pybind11::module_& emu_module);
pybind11::dict fabric_traffic_to_dict(const ttnn_moe::emu::fabric::FabricTraffic& traffic);
// The MoE ops' program factories (ttnn_moe._C.ops).
void bind_ops(pybind11::module_& m);
// Synthetic model weights (ttnn_moe._C.weights).
void bind_weights(pybind11::module_& m);
}  // namespace ttnn_moe::bindings
