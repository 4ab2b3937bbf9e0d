// Compile-time args of a TensorAccessor, as tt-metal's host
// TensorAccessorArgs(buffer).append_to(compile_time_args) produces them for an
// interleaved buffer: the ArgConfig word (IsDram = 1 << 1) and the aligned page size.
// (Interim copy until the emulator branch's version of this header is merged.)
#pragma once

#include <cstdint>
#include <vector>

#include "program/tensor_arg.hpp"

namespace ttnn_moe::program {

inline void append_tensor_accessor_args(const TensorArg& tensor, std::vector<uint32_t>& compile_time_args) {
    constexpr uint32_t kIsDram = 1u << 1;
    constexpr uint32_t kDramAlignment = 32;
    constexpr uint32_t kL1Alignment = 16;
    const uint32_t alignment = tensor.is_dram ? kDramAlignment : kL1Alignment;
    compile_time_args.push_back(tensor.is_dram ? kIsDram : 0u);
    compile_time_args.push_back((tensor.page_size + alignment - 1) / alignment * alignment);
}

}  // namespace ttnn_moe::program
