#include "emu/l1_pool.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <string>

#include "emu/device_params.hpp"
#include "emu/error.hpp"
#include "emu/poison.hpp"

namespace ttnn_moe::emu {

namespace {
// L1 rounded up to 1.5 MiB: the 88 KiB after each L1 stay unmapped as a guard.
constexpr uint64_t SLOT_STRIDE = 0x180000;

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

struct Candidate {
    uint64_t address;
    uint64_t size;
};
}  // namespace

L1Pool& L1Pool::instance() {
    static L1Pool pool;
    return pool;
}

L1Pool::L1Pool() {
    // Largest first; all below 4 GiB. The region is reserved inaccessible and
    // each slot's L1 made read-write, so the gaps fault on overruns. 256 MiB .. 4 GiB holds 2560 slots: a TG
    // mesh program on 80 cores per device (moe_compute's shared buffer spans the grid). Under AddressSanitizer
    // everything from 0x7fff8000 up is its shadow memory: 256 MiB .. 1.75 GiB is the largest region left there
    // (1024 slots, a TG mesh program on 32 cores per device).
    const Candidate candidates[] = {
        {0x10000000ull, 0xF0000000ull}, {0x40000000ull, 0xC0000000ull}, {0x80000000ull, 0x80000000ull},
        {0x10000000ull, 0x60000000ull}, {0x40000000ull, 0x40000000ull}, {0x20000000ull, 0x20000000ull},
        {0xC0000000ull, 0x40000000ull},
    };
    for (const auto& c : candidates) {
        void* p = mmap(reinterpret_cast<void*>(c.address), c.size, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == MAP_FAILED) continue;
        if (reinterpret_cast<uint64_t>(p) != c.address) {  // old kernels treat the flag as a hint
            munmap(p, c.size);
            continue;
        }
        base_ = static_cast<uint8_t*>(p);
        stride_ = SLOT_STRIDE;
        num_slots_ = static_cast<uint32_t>(c.size / SLOT_STRIDE);
        break;
    }
    if (!base_) {
        void* p =
            mmap(nullptr, 0x40000000ull, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_32BIT, -1, 0);
        if (p == MAP_FAILED) throw EmuError("cannot reserve L1 memory below 4 GiB for the emulated cores");
        base_ = static_cast<uint8_t*>(p);
        stride_ = SLOT_STRIDE;
        num_slots_ = static_cast<uint32_t>(0x40000000ull / SLOT_STRIDE);
    }
    for (uint32_t i = 0; i < num_slots_; ++i) {
        if (mprotect(slot_base(i), params::L1_SIZE, PROT_READ | PROT_WRITE) != 0) {
            throw EmuError("cannot make emulated L1 memory accessible");
        }
    }
    for (uint32_t i = num_slots_; i-- > 0;) free_.push_back(i);
}

std::vector<uint32_t> L1Pool::acquire(uint32_t count) {
    if (count > free_.size()) {
        throw EmuError("the program needs L1 for " + std::to_string(count) + " cores but only " +
                       std::to_string(free_.size()) + " of " + std::to_string(num_slots_) +
                       " emulated L1 slots are free");
    }
    std::vector<uint32_t> slots(free_.end() - count, free_.end());
    free_.resize(free_.size() - count);
    return slots;
}

void L1Pool::release(const std::vector<uint32_t>& slots) {
    // Drops the pages: untouched memory costs nothing, the next user reads zeros. One call per run
    // of neighbouring slots (a run's slots mostly are; the inaccessible gaps between them hold no pages):
    // each call stops the other threads of the process to flush their TLBs.
    std::vector<uint32_t> sorted(slots);
    std::sort(sorted.begin(), sorted.end());
    for (size_t first = 0; first < sorted.size();) {
        size_t last = first;
        while (last + 1 < sorted.size() && sorted[last + 1] == sorted[last] + 1) ++last;
        const size_t count = last - first + 1;
        madvise(slot_base(sorted[first]), (count - 1) * stride_ + params::L1_SIZE, MADV_DONTNEED);
        if (shadows_) madvise(shadow(sorted[first]), count * params::L1_SIZE, MADV_DONTNEED);  // no gaps
        first = last + 1;
    }
    for (auto it = slots.rbegin(); it != slots.rend(); ++it) free_.push_back(*it);
}

uint8_t* L1Pool::shadow(uint32_t slot) {
    if (!shadows_) shadows_ = poison::map_shadow(static_cast<size_t>(num_slots_) * params::L1_SIZE);
    return shadows_ + static_cast<size_t>(slot) * params::L1_SIZE;
}

bool L1Pool::locate(uint64_t host_addr, uint32_t& slot, uint32_t& offset) const {
    const uint64_t base = reinterpret_cast<uint64_t>(base_);
    if (host_addr < base || host_addr >= base + stride_ * num_slots_) return false;
    slot = static_cast<uint32_t>((host_addr - base) / stride_);
    offset = static_cast<uint32_t>((host_addr - base) % stride_);
    return offset < params::L1_SIZE;
}

}  // namespace ttnn_moe::emu
