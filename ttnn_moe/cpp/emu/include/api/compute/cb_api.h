// The emulator implements the compute API in one header (see ttnn_moe_emu/compute_api.h).
#pragma once
#include "ttnn_moe_emu/compute_api.h"
