#include "emu/dram.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "emu/device_params.hpp"
#include "emu/error.hpp"
#include "emu/poison.hpp"

namespace ttnn_moe::emu {

namespace {
uint64_t round_up(uint64_t v, uint64_t a) {
    return (v + a - 1) / a * a;
}
}  // namespace

DramBuffer::~DramBuffer() {
    poison::unmap_shadow(shadow, static_cast<size_t>(params::NUM_DRAM_BANKS) * bank_span);
}

uint32_t Dram::allocate(uint64_t size_bytes, uint32_t page_size) {
    if (page_size == 0) throw std::invalid_argument("DRAM allocate: page_size must be > 0, got 0");
    if (size_bytes == 0) throw std::invalid_argument("DRAM allocate: size_bytes must be > 0, got 0");
    const uint64_t num_pages = (size_bytes + page_size - 1) / page_size;
    const uint64_t aligned_page = round_up(page_size, params::DRAM_ALIGNMENT);
    const uint64_t pages_per_bank = (num_pages + params::NUM_DRAM_BANKS - 1) / params::NUM_DRAM_BANKS;
    const uint64_t span = pages_per_bank * aligned_page;
    if (span > params::DRAM_BANK_SIZE - params::DRAM_UNRESERVED_BASE) {
        throw std::invalid_argument("DRAM allocate: " + std::to_string(size_bytes) +
                                    " bytes do not fit in the 12 DRAM banks");
    }
    // First fit: walk the buffers in address order and take the first gap.
    uint64_t candidate = params::DRAM_UNRESERVED_BASE;
    for (const auto& [addr, buf] : buffers_) {
        if (candidate + span <= addr) break;
        candidate = round_up(static_cast<uint64_t>(addr) + buf->bank_span, params::DRAM_ALIGNMENT);
    }
    if (candidate + span > params::DRAM_BANK_SIZE) {
        throw EmuError("DRAM out of memory: no free range of " + std::to_string(span) + " bytes per bank for a " +
                       std::to_string(size_bytes) + "-byte buffer");
    }
    auto buf = std::make_unique<DramBuffer>();
    buf->address = static_cast<uint32_t>(candidate);
    buf->size_bytes = size_bytes;
    buf->page_size = page_size;
    buf->aligned_page_size = static_cast<uint32_t>(aligned_page);
    buf->num_pages = static_cast<uint32_t>(num_pages);
    buf->bank_span = static_cast<uint32_t>(span);
    const size_t bytes = static_cast<size_t>(params::NUM_DRAM_BANKS) * span;
    buf->memory = std::make_unique<DramStorage>(bytes);
    buf->storage = buf->memory->data();
    if (poison::enabled()) {
        buf->reserve_for_write(buf->storage, bytes);
        // In pieces, each noted: a file-backed buffer's fill stays within the resident budget.
        constexpr size_t kFillPiece = size_t{64} << 20;
        for (size_t at = 0; at < bytes; at += kFillPiece) {
            const size_t n = std::min(kFillPiece, bytes - at);
            poison::fill(buf->storage + at, n);
            buf->note_access(n);
        }
        buf->shadow = poison::map_shadow(bytes);
    }
    const uint32_t address = buf->address;
    buffers_.emplace(address, std::move(buf));
    return address;
}

void Dram::deallocate(uint32_t address) {
    if (buffers_.erase(address) == 0) {
        throw std::invalid_argument("DRAM deallocate: no buffer at address " + std::to_string(address));
    }
}

DramBuffer* Dram::find(uint32_t addr, uint32_t nbytes) {
    auto it = buffers_.upper_bound(addr);
    if (it == buffers_.begin()) return nullptr;
    --it;
    DramBuffer* buf = it->second.get();
    if (static_cast<uint64_t>(addr) + nbytes > static_cast<uint64_t>(buf->address) + buf->bank_span) return nullptr;
    return buf;
}

DramBuffer& Dram::buffer_at(uint32_t address) {
    auto it = buffers_.find(address);
    if (it == buffers_.end()) throw std::invalid_argument("no DRAM buffer at address " + std::to_string(address));
    return *it->second;
}

namespace {
// Checks a host transfer of whole pages against the buffer and returns the page count.
size_t checked_pages(const DramBuffer& buf, uint32_t page_size, size_t nbytes, const char* what) {
    if (page_size == 0) throw std::invalid_argument(std::string(what) + ": page_size must be > 0");
    if (nbytes % page_size != 0) {
        throw std::invalid_argument(std::string(what) + ": " + std::to_string(nbytes) +
                                    " bytes is not a whole number of " + std::to_string(page_size) + "-byte pages");
    }
    const size_t pages = nbytes / page_size;
    const uint64_t aligned = round_up(page_size, params::DRAM_ALIGNMENT);
    const uint64_t pages_per_bank = (pages + params::NUM_DRAM_BANKS - 1) / params::NUM_DRAM_BANKS;
    if (pages && (pages_per_bank - 1) * aligned + page_size > buf.bank_span) {
        throw std::invalid_argument(std::string(what) + ": " + std::to_string(pages) + " pages of " +
                                    std::to_string(page_size) + " bytes exceed the buffer at address " +
                                    std::to_string(buf.address) + " (" + std::to_string(buf.size_bytes) + " bytes)");
    }
    return pages;
}

// Calls visit(i, page) for pages [0, pages) of the interleaved buffer at `address`, with
// `page` its bytes in DRAM: page i sits in bank i % NUM_DRAM_BANKS at row i / NUM_DRAM_BANKS,
// rows DRAM_ALIGNMENT-aligned.
template <typename Visit>
void for_each_page(DramBuffer& buf, uint32_t address, uint32_t page_size, size_t pages, Visit visit) {
    const uint32_t aligned = static_cast<uint32_t>(round_up(page_size, params::DRAM_ALIGNMENT));
    for (size_t i = 0; i < pages; ++i) {
        const uint32_t bank = i % params::NUM_DRAM_BANKS;
        const uint32_t addr = address + static_cast<uint32_t>(i / params::NUM_DRAM_BANKS) * aligned;
        visit(i, buf.at(bank, addr));
    }
}
}  // namespace

void Dram::write_pages(uint32_t address, uint32_t page_size, const uint8_t* data, size_t nbytes) {
    DramBuffer& buf = buffer_at(address);
    const size_t pages = checked_pages(buf, page_size, nbytes, "device write");
    for_each_page(buf, address, page_size, pages, [&](size_t i, uint8_t* page) {
        buf.reserve_for_write(page, page_size);
        std::memcpy(page, data + i * page_size, page_size);
        poison::mark(buf.shadow_of(page), page_size);
        buf.note_access(page_size);
    });
}

void Dram::read_pages(uint32_t address, uint32_t page_size, uint8_t* data, size_t nbytes) {
    DramBuffer& buf = buffer_at(address);
    const size_t pages = checked_pages(buf, page_size, nbytes, "device read");
    for_each_page(buf, address, page_size, pages, [&](size_t i, const uint8_t* page) {
        std::memcpy(data + i * page_size, page, page_size);
        buf.note_access(page_size);
    });
}

uint64_t Dram::occupied_bytes() const {
    uint64_t total = 0;
    for (const auto& entry : buffers_) total += uint64_t{entry.second->bank_span} * params::NUM_DRAM_BANKS;
    return total;
}

}  // namespace ttnn_moe::emu
