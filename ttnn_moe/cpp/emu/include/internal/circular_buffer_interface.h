// get_local_cb_interface(cb): the kernel's LocalCBInterface of a CB, as in
// tt-metal 0.81.1 (internal/circular_buffer_interface.h). The runtime keeps it
// current after each CB call of this kernel; moving fifo_rd_ptr / fifo_wr_ptr
// in it moves the CB's pointers, other writes are reported as not emulated.
#pragma once

#include <cstdint>

#include "ttnn_moe_emu/kernel_common.h"

using LocalCBInterface = ttnn_moe_emu::CbInterface;

// TRISC addresses CBs in 16-byte units (CIRCULAR_BUFFER_COMPUTE_ADDR_SHIFT).
#if defined(COMPILE_FOR_TRISC)
constexpr uint32_t cb_addr_shift = 4;
#else
constexpr uint32_t cb_addr_shift = 0;
#endif

FORCE_INLINE LocalCBInterface& get_local_cb_interface(uint32_t cb_id) {
    return *ttnn_moe_emu::services->cb_interface(cb_id);
}
