// The per-kernel headers a Metal 2.0 kernel includes implicitly: kernel_args_generated.h (the
// `args::` accessors and get_vararg) and kernel_bindings_generated.h (the `dfb::`, `sem::` and
// `tensor::` tokens), generated from the kernel's KernelBindingsDescriptor.
#pragma once

#include <string>

#include "program/program_descriptor.hpp"

namespace ttnn_moe::emu {

std::string kernel_args_header(const program::KernelBindingsDescriptor& bindings);
std::string kernel_bindings_header(const program::KernelBindingsDescriptor& bindings);

}  // namespace ttnn_moe::emu
