// The per-CB descriptor arrays tt-metal's JIT generates for every kernel build (chlkc_*: tile
// dimensions, face counts, data formats by CB index), which kernels and tt-metal's kernel library
// index with a CB id. Here they name the generated emu_kernel_config.h's arrays; the emulator
// neither converts formats on unpack nor on pack, so source and destination formats are the CB's.
#pragma once

#include <cstdint>

#include "emu_kernel_config.h"

inline constexpr const auto& unpack_tile_r_dim = ttnn_moe_emu_config::cb_tile_r_dim;
inline constexpr const auto& unpack_tile_c_dim = ttnn_moe_emu_config::cb_tile_c_dim;
inline constexpr const auto& pack_tile_r_dim = ttnn_moe_emu_config::cb_tile_r_dim;
inline constexpr const auto& pack_tile_c_dim = ttnn_moe_emu_config::cb_tile_c_dim;
inline constexpr const auto& unpack_src_format = ttnn_moe_emu_config::cb_format;
inline constexpr const auto& unpack_dst_format = ttnn_moe_emu_config::cb_format;
inline constexpr const auto& pack_src_format = ttnn_moe_emu_config::cb_format;
inline constexpr const auto& pack_dst_format = ttnn_moe_emu_config::cb_format;
