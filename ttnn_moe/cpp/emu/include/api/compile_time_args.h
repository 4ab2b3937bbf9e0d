// Compile-time args as tt-metal passes them: -DKERNEL_COMPILE_TIME_ARGS=v0,v1,...
// and -DKERNEL_COMPILE_TIME_ARG_MAP={"name",v},...
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

#include "ttnn_moe_emu/kernel_common.h"

template <class T, class... Ts>
constexpr std::array<T, sizeof...(Ts)> make_array(Ts... values) {
    return {T(values)...};
}

#ifndef KERNEL_COMPILE_TIME_ARGS
#define KERNEL_COMPILE_TIME_ARGS
#endif

constexpr auto kernel_compile_time_args = make_array<std::uint32_t>(KERNEL_COMPILE_TIME_ARGS);

template <uint32_t Idx>
constexpr uint32_t get_ct_arg() {
    static_assert(Idx < kernel_compile_time_args.size(), "compile-time arg index out of range");
    return kernel_compile_time_args[Idx];
}

#define get_compile_time_arg_val(arg_idx) get_ct_arg<arg_idx>()

#ifdef KERNEL_COMPILE_TIME_ARG_MAP
namespace ttnn_moe_emu {
inline constexpr std::pair<std::string_view, uint32_t> named_compile_time_args[] = {KERNEL_COMPILE_TIME_ARG_MAP};
}

constexpr uint32_t get_named_ct_arg(std::string_view name) {
    for (const auto& [arg_name, value] : ttnn_moe_emu::named_compile_time_args) {
        if (arg_name == name) return value;
    }
    // Not constant-evaluable: an unknown name fails the build where the kernel asks for it.
    throw "unknown named compile-time argument";
}

constexpr uint32_t get_named_compile_time_arg_val(std::string_view name) {
    return get_named_ct_arg(name);
}
#endif
