// Runtime args and core identity, shared by dataflow and compute kernels.
#pragma once

#include <cstdint>
#include <cstring>

#include "ttnn_moe_emu/kernel_common.h"

static FORCE_INLINE uintptr_t get_arg_addr(int arg_idx) {
    const auto& env = ttnn_moe_emu::env();
    if (arg_idx < 0 || static_cast<uint32_t>(arg_idx) >= env.num_runtime_args) {
        ttnn_moe_emu::services->arg_out_of_range(static_cast<uint32_t>(arg_idx), 0);
    }
    return reinterpret_cast<uintptr_t>(env.runtime_args + arg_idx);
}

static FORCE_INLINE uintptr_t get_common_arg_addr(int arg_idx) {
    const auto& env = ttnn_moe_emu::env();
    if (arg_idx < 0 || static_cast<uint32_t>(arg_idx) >= env.num_common_args) {
        ttnn_moe_emu::services->arg_out_of_range(static_cast<uint32_t>(arg_idx), 1);
    }
    return reinterpret_cast<uintptr_t>(env.common_args + arg_idx);
}

template <typename T>
FORCE_INLINE T get_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "only 4-byte args are supported");
    T value;
    std::memcpy(&value, reinterpret_cast<const void*>(get_arg_addr(arg_idx)), 4);
    return value;
}

template <typename T>
FORCE_INLINE T get_common_arg_val(int arg_idx) {
    static_assert(sizeof(T) == 4, "only 4-byte args are supported");
    T value;
    std::memcpy(&value, reinterpret_cast<const void*>(get_common_arg_addr(arg_idx)), 4);
    return value;
}

inline uint8_t get_absolute_logical_x() {
    return static_cast<uint8_t>(ttnn_moe_emu::env().logical_x);
}
inline uint8_t get_absolute_logical_y() {
    return static_cast<uint8_t>(ttnn_moe_emu::env().logical_y);
}
inline uint8_t get_relative_logical_x() {
    return get_absolute_logical_x();
}
inline uint8_t get_relative_logical_y() {
    return get_absolute_logical_y();
}
