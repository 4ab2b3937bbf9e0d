// tt::CBIndex, the CB ids kernels name (tt-metal 0.81.1 hostdevcommon/kernel_structs.h):
// c_i == i. Wormhole configures 32 of them; the enum spans the 64 of the largest architecture.
#pragma once

#include <cstdint>

namespace tt {

enum CBIndex : std::uint8_t {
    c_0 = 0, c_1 = 1, c_2 = 2, c_3 = 3, c_4 = 4, c_5 = 5, c_6 = 6, c_7 = 7,
    c_8 = 8, c_9 = 9, c_10 = 10, c_11 = 11, c_12 = 12, c_13 = 13, c_14 = 14, c_15 = 15,
    c_16 = 16, c_17 = 17, c_18 = 18, c_19 = 19, c_20 = 20, c_21 = 21, c_22 = 22, c_23 = 23,
    c_24 = 24, c_25 = 25, c_26 = 26, c_27 = 27, c_28 = 28, c_29 = 29, c_30 = 30, c_31 = 31,
    c_32 = 32, c_33 = 33, c_34 = 34, c_35 = 35, c_36 = 36, c_37 = 37, c_38 = 38, c_39 = 39,
    c_40 = 40, c_41 = 41, c_42 = 42, c_43 = 43, c_44 = 44, c_45 = 45, c_46 = 46, c_47 = 47,
    c_48 = 48, c_49 = 49, c_50 = 50, c_51 = 51, c_52 = 52, c_53 = 53, c_54 = 54, c_55 = 55,
    c_56 = 56, c_57 = 57, c_58 = 58, c_59 = 59, c_60 = 60, c_61 = 61, c_62 = 62, c_63 = 63,
};

}  // namespace tt
