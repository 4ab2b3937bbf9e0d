// DPRINT compiles and prints nothing in the emulator.
#pragma once

#include <cstdint>

namespace ttnn_moe_emu {
struct NullPrint {
    template <typename T>
    constexpr const NullPrint& operator<<(const T&) const {
        return *this;
    }
};
inline constexpr NullPrint null_print{};
}  // namespace ttnn_moe_emu

#define DPRINT ttnn_moe_emu::null_print
#define DPRINT_UNPACK(x)
#define DPRINT_MATH(x)
#define DPRINT_PACK(x)
#define DPRINT_DATA0(x)
#define DPRINT_DATA1(x)
#define ENDL() '\n'
#define SETW(x) (x)
#define SETPRECISION(x) (x)
#define HEX() 0
#define DEC() 0
#define FIXED() 0
