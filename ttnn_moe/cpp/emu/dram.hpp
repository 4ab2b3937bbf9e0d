// DRAM of one emulated device: 12 banks, a first-fit allocator over the bank
// address space, and interleaved buffers (page i in bank i % 12 at bank
// address base + (i / 12) * aligned_page_size). A buffer occupies the same
// bank-address range in every bank; its backing memory (emu/dram_storage.hpp) is
// reserved with MAP_NORESERVE and committed only where written, or, for a large
// buffer, a memory-mapped file whose pages the kernel can write back and drop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "emu/dram_storage.hpp"

namespace ttnn_moe::emu {

struct DramBuffer {
    uint32_t address = 0;     // bank address of page 0 (same in every bank)
    uint64_t size_bytes = 0;  // requested size
    uint32_t page_size = 0;
    uint32_t aligned_page_size = 0;  // page_size rounded up to the DRAM alignment
    uint32_t num_pages = 0;
    uint32_t bank_span = 0;               // bytes this buffer occupies in each bank
    std::unique_ptr<DramStorage> memory;  // NUM_DRAM_BANKS * bank_span bytes, bank-major
    uint8_t* storage = nullptr;           // memory->data()
    uint8_t* shadow = nullptr;            // poison mode: a byte per storage byte, set where written (emu/poison.hpp)

    DramBuffer() = default;
    DramBuffer(const DramBuffer&) = delete;
    DramBuffer& operator=(const DramBuffer&) = delete;
    ~DramBuffer();

    // Host pointer of bank address `addr` in `bank` (addr inside this buffer's span).
    uint8_t* at(uint32_t bank, uint32_t addr) const {
        return storage + static_cast<size_t>(bank) * bank_span + (addr - address);
    }
    // Counts bytes a transfer moves to or from this buffer (bounds the resident pages of large buffers).
    void note_access(size_t bytes) const { memory->note_access(bytes); }
    // Before `bytes` at storage pointer `p` are written (reserves a backing file's blocks).
    void reserve_for_write(const uint8_t* p, size_t bytes) const { memory->reserve_for_write(p - storage, bytes); }
    // The shadow of a storage pointer, or nullptr when the buffer is not tracked.
    uint8_t* shadow_of(const uint8_t* p) const { return shadow ? shadow + (p - storage) : nullptr; }
};

class Dram {
public:
    // Allocates an interleaved buffer of ceil(size / page_size) pages; returns its address.
    uint32_t allocate(uint64_t size_bytes, uint32_t page_size);
    void deallocate(uint32_t address);

    // The buffer holding [addr, addr + nbytes) in a bank, or nullptr.
    DramBuffer* find(uint32_t addr, uint32_t nbytes);
    DramBuffer& buffer_at(uint32_t address);  // throws std::invalid_argument if none starts there

    // Host pages in order <-> interleaved layout with `page_size`-byte pages.
    void write_pages(uint32_t address, uint32_t page_size, const uint8_t* data, size_t nbytes);
    void read_pages(uint32_t address, uint32_t page_size, uint8_t* data, size_t nbytes);

    size_t num_buffers() const { return buffers_.size(); }
    // Bytes the live buffers occupy in the banks (what a leak of device tensors grows).
    uint64_t occupied_bytes() const;

private:
    std::map<uint32_t, std::unique_ptr<DramBuffer>> buffers_;  // by address
};

}  // namespace ttnn_moe::emu
