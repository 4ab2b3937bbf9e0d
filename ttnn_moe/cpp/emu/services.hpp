// Access to the running kernel for the service implementations.
#pragma once

#include <string>

#include "emu/run_state.hpp"

namespace ttnn_moe::emu::services {

Run& run();
Instance& instance();
// Throws EmuError(message); the scheduler prefixes kernel and core.
[[noreturn]] void fail(const std::string& message);
// The configured CB `cb` of the running kernel's core (throws when not configured).
CbState& cb(uint32_t cb);
// Counts one API call of the running kernel (its core's busy counter).
void count_call();

// CB bookkeeping shared by dataflow and compute services.
void cb_reserve_back(uint32_t cb, uint32_t n);
void cb_push_back(uint32_t cb, uint32_t n);
void cb_wait_front(uint32_t cb, uint32_t n);
void cb_pop_front(uint32_t cb, uint32_t n);

// get_local_cb_interface (cb_interface.cpp): the running kernel's view of a CB,
// refreshed from the ring after each CB call; pointer moves the kernel made in
// it are applied to the ring first (absorb), other writes are rejected.
ttnn_moe_emu::CbInterface* cb_interface(uint32_t cb);
void absorb_cb_view_writes(uint32_t cb, CbState& state);
void refresh_cb_view(uint32_t cb, const CbState& state);

// Outstanding NOC reads of the running kernel (services.cpp): complete them (read
// barrier), or fail naming `what` when one lands in [offset, offset + size) or,
// with size 0, when any is outstanding at all. The check runs on every CB push and NOC
// write: callers on those paths pass `what` as a callable, called only to name a failure.
// Lands the outstanding NOC reads in L1: all of them, or (trid >= 0) those tagged with that transaction id.
void complete_pending_reads(int trid = -1);
// Takes the bytes of inst's pending DRAM reads now (Instance::PendingRead): before DRAM can change
// under them, i.e. when the kernel parks or issues a NOC write to DRAM.
void stage_pending_reads(Instance& inst);
size_t pending_reads_into(uint32_t offset, uint32_t size);
[[noreturn]] void fail_pending_reads(size_t count, const std::string& what);
template <typename What>
void check_no_pending_read(uint32_t offset, uint32_t size, What&& what) {
    if (const size_t count = pending_reads_into(offset, size)) fail_pending_reads(count, what());
}
inline void check_no_pending_read(uint32_t offset, uint32_t size, const char* what) {
    if (const size_t count = pending_reads_into(offset, size)) fail_pending_reads(count, what);
}

// Poison mode (emu/poison.hpp, poison_checks.cpp): `what` reads [offset, offset + size) of a
// core's L1, or `size` bytes at a DRAM buffer's bank address; fails naming the first byte nothing
// wrote, its address and the CB, semaphore or buffer holding it. No-ops on untracked memory.
void check_written_l1(const CoreState& core, uint32_t offset, uint32_t size, const std::string& what);
void check_written_dram(const DramBuffer& buffer, uint32_t bank, uint32_t bank_addr, uint32_t size,
                        const std::string& what);
void mark_written_l1(const CoreState& core, uint32_t offset, uint32_t size);

// Fills the compute entries of the table (compute_services.cpp).
void fill_compute_services(ttnn_moe_emu::Services& table);

}  // namespace ttnn_moe::emu::services
