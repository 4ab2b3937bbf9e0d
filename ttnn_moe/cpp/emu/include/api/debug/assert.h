// ASSERT is checked by the emulator and fails the run naming kernel and core.
#pragma once

#include "ttnn_moe_emu/kernel_common.h"

#define EMU_STRINGIFY_(x) #x
#define EMU_STRINGIFY(x) EMU_STRINGIFY_(x)
#define ASSERT(condition, ...)                                                                            \
    do {                                                                                                  \
        if (!(condition))                                                                                 \
            ttnn_moe_emu::fail("ASSERT failed: " #condition " at " __FILE__ ":" EMU_STRINGIFY(__LINE__)); \
    } while (0)
