// The SFPU fill (api/compute/eltwise_unary/fill.h): every element of a DST tile set to one value, as
// tt-metal's zero fill of an output (SFPU_OP_CHAIN fill_tile_bitcast(0, 0x0u)) uses it. fill_tile_int is
// not emulated: a kernel that calls it fails to build.
#pragma once
#include <bit>

#include "ttnn_moe_emu/compute_api.h"

ALWI void fill_tile_init() {}
// The fp32 value `param0`.
ALWI void fill_tile(uint32_t idst, float param0) {
    emu_detail::svc().fill_tile(idst, std::bit_cast<uint32_t>(param0));
}
// The fp32 value whose bits are `param0`.
ALWI void fill_tile_bitcast(uint32_t idst, uint32_t param0) {
    emu_detail::svc().fill_tile(idst, param0);
}
