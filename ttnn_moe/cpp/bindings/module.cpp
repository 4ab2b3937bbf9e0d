// ttnn_moe._C: one module, one binding function per component.
#include <pybind11/pybind11.h>

#include "bindings/bindings.hpp"

PYBIND11_MODULE(_C, m) {
    m.doc() = "ttnn_moe native extension: program descriptions, the Tensix emulator and the MoE ops";
    ttnn_moe::bindings::bind_program(m);
    ttnn_moe::bindings::bind_numerics(m);
    ttnn_moe::bindings::bind_emu(m);
    ttnn_moe::bindings::bind_ops(m);
    ttnn_moe::bindings::bind_weights(m);
}
