// DPRINT compiles and prints nothing in the emulator: both tt-metal's format form, DPRINT("x = {}\n", x),
// and the stream form of older kernels, DPRINT << x, are accepted and discarded.
#pragma once

#include <cstdint>

namespace ttnn_moe_emu {
struct NullPrint {
    template <typename T>
    constexpr const NullPrint& operator<<(const T&) const {
        return *this;
    }
    template <typename... Args>
    constexpr const NullPrint& operator()(const Args&...) const {
        return *this;
    }
};
inline constexpr NullPrint null_print{};
}  // namespace ttnn_moe_emu

// The value wrappers and tile slices kernels hand to DPRINT (device_print.h, dprint_tile.h,
// hostdevcommon/dprint_common.h); nothing reads them.
struct bf16_t {
    uint16_t val;
    bf16_t(uint16_t val) : val(val) {}
};
struct SliceRange {
    uint8_t h0, h1, hs, w0, w1, ws;
};
struct TileSlice {
    template <typename... Options>
    TileSlice(uint8_t, int, const SliceRange&, Options...) {}
};

#define DPRINT ttnn_moe_emu::null_print
#define DPRINT_UNPACK(...)
#define DPRINT_MATH(...)
#define DPRINT_PACK(...)
#define DPRINT_DATA0(...)
#define DPRINT_DATA1(...)
#define ENDL() '\n'
#define SETW(x) (x)
#define SETPRECISION(x) (x)
#define HEX() 0
#define DEC() 0
#define FIXED() 0
