// The part of the LLK's ckernel.h that kernels use: load_blocking, a load
// that completes before the next instruction issues (Tenstorrent's helpers use
// it to drain L1 stores; memory is coherent on the host, so it is a plain
// volatile load), and the mailboxes between a core's RISC-Vs.
//
// Mailboxes: a data-movement kernel sends words to the TRISCs
// (mailbox_write(UnpackThreadId / MathThreadId / PackThreadId, word)), each
// TRISC receives them in order (mailbox_read(BriscThreadId)); a reader waits
// for a word, a writer while L1_MAILBOX_DEPTH words are unread. The three
// TRISCs run as one context here, so the compute kernel's reads take turns:
// the first from UNPACK's mailbox, the next from MATH's, then PACK's, as a
// kernel reads under UNPACK(...), MATH(...), PACK(...) in that order. The
// other directions are not emulated.
#pragma once

#include <cstdint>

#include "ckernel_defs.h"
#include "ttnn_moe_emu/kernel_common.h"

namespace ckernel {

template <typename T>
inline T load_blocking(volatile T* ptr) {
    static_assert(sizeof(T) == sizeof(std::uint16_t) || sizeof(T) == sizeof(std::uint32_t),
                  "load_blocking: operand must be 16-bit or 32-bit");
    return *ptr;
}

namespace emu_mailbox {
// This core's mailbox words in L1 (zeroed when a program starts).
inline volatile std::uint32_t* words() {
    return reinterpret_cast<volatile std::uint32_t*>(static_cast<std::uintptr_t>(ttnn_moe_emu::env().l1_base) +
                                                     ttnn_moe_emu::L1_MAILBOX_BASE);
}
// The mailbox of TRISC `thread` (UnpackThreadId, MathThreadId or PackThreadId).
inline volatile std::uint32_t* of_trisc(std::uint32_t thread) {
    return words() + 1 + (thread - UnpackThreadId) * ttnn_moe_emu::L1_MAILBOX_WORDS;
}
}  // namespace emu_mailbox

inline void mailbox_write(const std::uint8_t thread, const std::uint32_t data) {
#ifdef COMPILE_FOR_TRISC
    ttnn_moe_emu::fail("mailbox_write from a compute kernel is not emulated");
#else
    if (thread < UnpackThreadId || thread > PackThreadId) {
        ttnn_moe_emu::fail("mailbox_write from a data-movement kernel: only the TRISC mailboxes are emulated");
    }
    volatile std::uint32_t* box = emu_mailbox::of_trisc(thread);  // [writes, reads, data...]
    const std::uint32_t writes = box[0];
    if (writes - box[1] >= ttnn_moe_emu::L1_MAILBOX_DEPTH) {
        ttnn_moe_emu::services->wait_l1_value(&box[1], writes - ttnn_moe_emu::L1_MAILBOX_DEPTH + 1, 1, 0);
    }
    box[2 + writes % ttnn_moe_emu::L1_MAILBOX_DEPTH] = data;
    ttnn_moe_emu::services->store_l1_word(&box[0], writes + 1, 0, 0);
#endif
}

[[nodiscard]] inline std::uint32_t mailbox_read(const std::uint8_t thread) {
#ifndef COMPILE_FOR_TRISC
    ttnn_moe_emu::fail("mailbox_read in a data-movement kernel is not emulated");
#else
    if (thread != BriscThreadId) ttnn_moe_emu::fail("mailbox_read: only the data-movement kernel's words are emulated");
    volatile std::uint32_t* turn = emu_mailbox::words();
    const std::uint32_t trisc = *turn % 3;  // 0 UNPACK, 1 MATH, 2 PACK: the reader, whose clock waits
    volatile std::uint32_t* box = emu_mailbox::of_trisc(UnpackThreadId + trisc);
    *turn = *turn + 1;
    const std::uint32_t reads = box[1];
    ttnn_moe_emu::services->wait_l1_value(&box[0], reads + 1, 1, trisc);
    const std::uint32_t data = box[2 + reads % ttnn_moe_emu::L1_MAILBOX_DEPTH];
    ttnn_moe_emu::services->store_l1_word(&box[1], reads + 1, trisc, 0);
    return data;
#endif
}

}  // namespace ckernel
