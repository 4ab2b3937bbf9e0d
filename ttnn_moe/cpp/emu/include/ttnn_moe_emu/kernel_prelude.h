// First include of every emulated kernel build (see the JIT's generated wrapper).
#pragma once

#include "ttnn_moe_emu/kernel_common.h"
#include "api/debug/dprint.h"
