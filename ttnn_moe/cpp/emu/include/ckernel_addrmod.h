// tt-llk's ckernel_addrmod.h: address modifiers (addr_mod_t, ADDR_MOD_0..7), from the emulator's LLK layer
// (ttnn_moe_emu/sfpu_llk.h: a modifier with an increment fails when set), and the raw instructions that use them.
#pragma once
#include "ttnn_moe_emu/sfpu_llk.h"
#include "ttnn_moe_emu/sfpu_raw.h"
