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

// Fills the compute entries of the table (compute_services.cpp).
void fill_compute_services(ttnn_moe_emu::Services& table);

}  // namespace ttnn_moe::emu::services
