// Poison mode's reports (emu/poison.hpp): which byte of a read nothing wrote, and where it lives.
#include <sstream>

#include "emu/poison.hpp"
#include "emu/services.hpp"

namespace ttnn_moe::emu::services {

namespace {

std::string hex(uint64_t v) {
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}

// What holds an L1 offset of a core: a CB's ring, a semaphore, or neither.
std::string l1_owner(const CoreState& core, uint32_t offset) {
    for (uint32_t i = 0; i < params::MAX_CIRCULAR_BUFFERS; ++i) {
        const CbState& s = core.cbs[i];
        if (s.configured && offset >= s.base && offset < s.end()) {
            return "CB " + std::to_string(i) + " (ring " + hex(s.base) + " - " + hex(s.end()) + ", page " +
                   std::to_string((offset - s.base) / s.page_size) + " of " + std::to_string(s.num_pages) + ")";
        }
    }
    const uint32_t sem_end = params::L1_SEMAPHORE_BASE + params::L1_NUM_SEMAPHORES * params::L1_SEMAPHORE_STRIDE;
    if (offset >= params::L1_SEMAPHORE_BASE && offset < sem_end) {
        return "semaphore " + std::to_string((offset - params::L1_SEMAPHORE_BASE) / params::L1_SEMAPHORE_STRIDE);
    }
    return "no CB or semaphore";
}

[[noreturn]] void report(const std::string& what, uint32_t size, int64_t first, const std::string& where) {
    fail("uninitialised read: " + what + " reads " + std::to_string(size) + " bytes, byte " + std::to_string(first) +
         " of which (" + where +
         ") was never written (no host upload, NOC or fabric write, pack or kernel store reached it)");
}

}  // namespace

void check_written_l1(const CoreState& core, uint32_t offset, uint32_t size, const std::string& what) {
    if (!core.l1_shadow) return;
    const int64_t first = poison::first_unwritten(core.l1 + offset, core.l1_shadow + offset, size);
    if (first < 0) return;
    const uint32_t at = offset + static_cast<uint32_t>(first);
    report(what, size, first,
           "L1 " + hex(at) + " of core (" + std::to_string(core.lx) + ", " + std::to_string(core.ly) + ") on device " +
               std::to_string(core.device->id()) + ", in " + l1_owner(core, at));
}

void check_written_dram(const DramBuffer& buffer, uint32_t bank, uint32_t bank_addr, uint32_t size,
                        const std::string& what) {
    if (!buffer.shadow) return;
    const uint8_t* data = buffer.at(bank, bank_addr);
    const int64_t first = poison::first_unwritten(data, buffer.shadow_of(data), size);
    if (first < 0) return;
    const uint32_t at = bank_addr + static_cast<uint32_t>(first);
    const uint32_t row = (at - buffer.address) / buffer.aligned_page_size;
    const uint32_t in_page = (at - buffer.address) % buffer.aligned_page_size;
    report(what, size, first,
           "DRAM bank " + std::to_string(bank) + " address " + hex(at) + ": page " +
               std::to_string(row * params::NUM_DRAM_BANKS + bank) + ", byte " + std::to_string(in_page) +
               " of the buffer at " + hex(buffer.address) + " (" + std::to_string(buffer.num_pages) + " pages of " +
               std::to_string(buffer.page_size) + " bytes)");
}

void mark_written_l1(const CoreState& core, uint32_t offset, uint32_t size) {
    if (core.l1_shadow) poison::mark(core.l1_shadow + offset, size);
}

}  // namespace ttnn_moe::emu::services
