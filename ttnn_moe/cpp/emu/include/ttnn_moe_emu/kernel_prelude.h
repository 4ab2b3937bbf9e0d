// First include of every emulated kernel build (see the JIT's generated wrapper).
#pragma once

#include "api/debug/dprint.h"
#include "ttnn_moe_emu/ilp32.h"
#include "ttnn_moe_emu/kernel_common.h"
#include "ttnn_moe_emu/llk_descriptors.h"
