// L1 buffers of one device (L1-resident tensors). Two layouts, as tt-metal
// places them: interleaved over the worker cores (page i on L1 bank i % banks,
// bank b the logical core (b % grid_x, b / grid_x), at address + (i / banks)
// aligned pages) and a single-core shard (every page on one core, back to back
// at the aligned page size). A buffer takes one address range on all its cores,
// allocated downwards from the end of L1 (circular buffers grow upwards from
// L1_CB_BASE; a program whose CBs reach a buffer on one of its cores fails).
// The bytes live here between programs: a run copies them into the L1 of its
// cores and back when its kernels are done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace ttnn_moe::emu {

struct L1Buffer {
    uint32_t address = 0;
    uint32_t page_size = 0;
    uint32_t aligned_page_size = 0;  // page_size rounded up to the L1 alignment
    uint32_t num_pages = 0;
    uint32_t span = 0;       // bytes of the range on each of its cores
    uint32_t num_banks = 0;  // interleaved: worker cores of the grid; a shard: 1
    bool single_core = false;
    std::vector<std::pair<uint32_t, uint32_t>> cores;  // logical (x, y) of bank 0, 1, ...
    std::vector<std::vector<uint8_t>> bytes;           // per core, `span` bytes

    // (core index, offset in the core's range) of page `page`.
    std::pair<size_t, uint32_t> locate(uint32_t page) const {
        return {page % num_banks, (page / num_banks) * aligned_page_size};
    }
};

class L1Buffers {
public:
    L1Buffers(uint32_t grid_x, uint32_t grid_y) : grid_x_(grid_x), grid_y_(grid_y) {}

    // Interleaved over every worker core; returns the address.
    uint32_t allocate_interleaved(uint32_t num_pages, uint32_t page_size);
    // Every page on logical core (x, y); returns the address.
    uint32_t allocate_on_core(uint32_t num_pages, uint32_t page_size, uint32_t x, uint32_t y);
    void deallocate(uint32_t address);

    // Host pages in order <-> the buffer's layout.
    void write_pages(uint32_t address, const uint8_t* data, size_t nbytes);
    void read_pages(uint32_t address, uint8_t* data, size_t nbytes) const;

    const std::map<uint32_t, L1Buffer>& buffers() const { return buffers_; }
    std::map<uint32_t, L1Buffer>& buffers() { return buffers_; }

private:
    uint32_t place(L1Buffer buffer);
    const L1Buffer& at(uint32_t address) const;

    uint32_t grid_x_;
    uint32_t grid_y_;
    std::map<uint32_t, L1Buffer> buffers_;  // by address
};

}  // namespace ttnn_moe::emu
