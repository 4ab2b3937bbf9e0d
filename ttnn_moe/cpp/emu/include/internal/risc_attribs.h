// tt-metal's RISC-V pointer attributes (tt_l1_ptr, tt_reg_ptr): no meaning on the host, defined in
// the emulator's common header.
#pragma once
#include "ttnn_moe_emu/kernel_common.h"
