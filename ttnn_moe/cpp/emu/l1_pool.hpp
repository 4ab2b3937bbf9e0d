// Per-core L1 memories at host addresses below 4 GiB. Kernels keep L1
// addresses (CB pointers, semaphores) in uint32_t and cast them to pointers,
// so every L1 a running program uses must be addressable with 32 bits. One
// region is reserved once per process and cut into slots (L1 size + a guard
// gap); a program run takes slots for its cores and gives them back zeroed.
#pragma once

#include <cstdint>
#include <vector>

namespace ttnn_moe::emu {

class L1Pool {
public:
    static L1Pool& instance();

    // Slot indices for `count` cores; throws EmuError when the pool is too small.
    std::vector<uint32_t> acquire(uint32_t count);
    // Returns slots; their memory reads as zero when next acquired.
    void release(const std::vector<uint32_t>& slots);

    uint8_t* slot_base(uint32_t slot) const { return base_ + static_cast<uint64_t>(slot) * stride_; }
    // Poison mode: the shadow of a slot's L1 (emu/poison.hpp), clear when acquired.
    uint8_t* shadow(uint32_t slot);
    uint32_t num_slots() const { return num_slots_; }
    uint32_t num_free() const { return static_cast<uint32_t>(free_.size()); }

    // Maps a host address inside the pool to (slot, L1 offset); false when outside any slot's L1.
    bool locate(uint64_t host_addr, uint32_t& slot, uint32_t& offset) const;

private:
    L1Pool();
    uint8_t* base_ = nullptr;
    uint64_t stride_ = 0;
    uint32_t num_slots_ = 0;
    uint8_t* shadows_ = nullptr;  // num_slots_ * L1 size, mapped on first use
    std::vector<uint32_t> free_;  // a stack: lowest slot index on top
};

}  // namespace ttnn_moe::emu
