// The fabric entries of the kernel services table (ttnn_moe_emu::FabricServices).
#pragma once

#include "emu/include/ttnn_moe_emu/fabric_abi.h"

namespace ttnn_moe::emu::fabric {

const ttnn_moe_emu::FabricServices* services_table();

}  // namespace ttnn_moe::emu::fabric
