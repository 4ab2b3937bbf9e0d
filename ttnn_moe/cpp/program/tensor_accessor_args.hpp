// Host side of TensorAccessorArgs: the compile-time args tt-metal 0.81.1's
// TensorAccessorArgs(buffer).append_to(compile_time_args) produces for an
// interleaved buffer, so program factories build identical kernels for the
// emulator and for hardware: [ArgsConfig bits (IsDram = 2), aligned page size].
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "program/tensor_arg.hpp"

namespace ttnn_moe::program {

inline constexpr uint32_t TENSOR_ACCESSOR_IS_DRAM = 1u << 1;

// Page size rounded up to the allocator alignment of the buffer's memory, as its device
// reports it (the target fills TensorArg::alignment).
inline uint32_t aligned_page_size(const TensorArg& tensor) {
    const uint32_t a = tensor.alignment;
    if (a == 0 || (a & (a - 1)) != 0) {
        throw std::invalid_argument(
            "TensorArg.alignment must be the buffer's allocator alignment (a power of two), got " + std::to_string(a));
    }
    return (tensor.page_size + a - 1) / a * a;
}

// Appends the interleaved tensor's accessor args (2 words) to compile_time_args.
inline void append_tensor_accessor_args(const TensorArg& tensor, std::vector<uint32_t>& compile_time_args) {
    compile_time_args.push_back(tensor.is_dram ? TENSOR_ACCESSOR_IS_DRAM : 0u);
    compile_time_args.push_back(aligned_page_size(tensor));
}

}  // namespace ttnn_moe::program
