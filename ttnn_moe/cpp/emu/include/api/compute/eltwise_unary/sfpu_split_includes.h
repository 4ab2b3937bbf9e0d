// In tt-metal each SFPU_OP_*_INCLUDE define pulls in one op family's header.
// The emulator declares every emulated op in one header, whatever is defined.
#pragma once
#include "ttnn_moe_emu/compute_api.h"
