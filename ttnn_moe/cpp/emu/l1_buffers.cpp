#include "emu/l1_buffers.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "emu/device_params.hpp"

namespace ttnn_moe::emu {

namespace {
uint32_t align_up(uint32_t v, uint32_t a) {
    return (v + a - 1) / a * a;
}

void check_pages(uint32_t num_pages, uint32_t page_size) {
    if (num_pages == 0 || page_size == 0) {
        throw std::invalid_argument("L1 buffer: num_pages (" + std::to_string(num_pages) + ") and page_size (" +
                                    std::to_string(page_size) + ") must be positive");
    }
}
}  // namespace

uint32_t L1Buffers::allocate_interleaved(uint32_t num_pages, uint32_t page_size) {
    check_pages(num_pages, page_size);
    L1Buffer b;
    b.page_size = page_size;
    b.aligned_page_size = align_up(page_size, params::L1_ALIGNMENT);
    b.num_pages = num_pages;
    b.num_banks = grid_x_ * grid_y_;
    const uint32_t used_banks = std::min(num_pages, b.num_banks);
    for (uint32_t bank = 0; bank < used_banks; ++bank) b.cores.emplace_back(bank % grid_x_, bank / grid_x_);
    b.span = (num_pages + b.num_banks - 1) / b.num_banks * b.aligned_page_size;
    return place(std::move(b));
}

uint32_t L1Buffers::allocate_on_core(uint32_t num_pages, uint32_t page_size, uint32_t x, uint32_t y) {
    check_pages(num_pages, page_size);
    if (x >= grid_x_ || y >= grid_y_) {
        throw std::invalid_argument("L1 buffer: core (" + std::to_string(x) + ", " + std::to_string(y) +
                                    ") is outside the " + std::to_string(grid_x_) + "x" + std::to_string(grid_y_) +
                                    " grid");
    }
    L1Buffer b;
    b.page_size = page_size;
    b.aligned_page_size = align_up(page_size, params::L1_ALIGNMENT);
    b.num_pages = num_pages;
    b.num_banks = 1;
    b.single_core = true;
    b.cores.emplace_back(x, y);
    b.span = num_pages * b.aligned_page_size;
    return place(std::move(b));
}

// The highest free range of `span` bytes below L1's end and above the CB base (first fit from the top).
uint32_t L1Buffers::place(L1Buffer b) {
    uint64_t top = params::L1_SIZE;
    for (auto it = buffers_.rbegin(); it != buffers_.rend(); ++it) {
        const uint64_t end = static_cast<uint64_t>(it->first) + it->second.span;
        if (top >= end && top - end >= b.span) break;
        top = it->first;
    }
    const uint64_t address = (top - b.span) / params::L1_ALIGNMENT * params::L1_ALIGNMENT;
    if (top < b.span || address < params::L1_CB_BASE) {
        throw std::invalid_argument("L1 buffer of " + std::to_string(b.span) +
                                    " bytes per core does not fit in the free L1");
    }
    b.address = static_cast<uint32_t>(address);
    b.bytes.assign(b.cores.size(), std::vector<uint8_t>(b.span, 0));
    const uint32_t key = b.address;
    buffers_.emplace(key, std::move(b));
    return key;
}

void L1Buffers::deallocate(uint32_t address) {
    if (buffers_.erase(address) == 0) {
        throw std::invalid_argument("no L1 buffer at address " + std::to_string(address));
    }
}

const L1Buffer& L1Buffers::at(uint32_t address) const {
    auto it = buffers_.find(address);
    if (it == buffers_.end()) throw std::invalid_argument("no L1 buffer at address " + std::to_string(address));
    return it->second;
}

void L1Buffers::write_pages(uint32_t address, const uint8_t* data, size_t nbytes) {
    L1Buffer& b = buffers_.at(at(address).address);
    if (nbytes != static_cast<size_t>(b.num_pages) * b.page_size) {
        throw std::invalid_argument("L1 buffer write of " + std::to_string(nbytes) + " bytes, the buffer holds " +
                                    std::to_string(b.num_pages) + " pages of " + std::to_string(b.page_size));
    }
    for (uint32_t page = 0; page < b.num_pages; ++page) {
        const auto [core, offset] = b.locate(page);
        std::memcpy(b.bytes[core].data() + offset, data + static_cast<size_t>(page) * b.page_size, b.page_size);
    }
}

void L1Buffers::read_pages(uint32_t address, uint8_t* data, size_t nbytes) const {
    const L1Buffer& b = at(address);
    if (nbytes != static_cast<size_t>(b.num_pages) * b.page_size) {
        throw std::invalid_argument("L1 buffer read of " + std::to_string(nbytes) + " bytes, the buffer holds " +
                                    std::to_string(b.num_pages) + " pages of " + std::to_string(b.page_size));
    }
    for (uint32_t page = 0; page < b.num_pages; ++page) {
        const auto [core, offset] = b.locate(page);
        std::memcpy(data + static_cast<size_t>(page) * b.page_size, b.bytes[core].data() + offset, b.page_size);
    }
}

}  // namespace ttnn_moe::emu
