#include "emu/counters.hpp"

#include <algorithm>

namespace ttnn_moe::emu {

uint64_t DramBufferTraffic::unique_pages_read() const {
    return static_cast<uint64_t>(std::count(page_read.begin(), page_read.end(), uint8_t{1}));
}

void DramBufferTraffic::add(const DramBufferTraffic& other) {
    if (page_read.size() < other.page_read.size()) page_read.resize(other.page_read.size(), 0);
    for (size_t i = 0; i < other.page_read.size(); ++i) page_read[i] |= other.page_read[i];
    page_reads += other.page_reads;
    page_writes += other.page_writes;
    bytes_read += other.bytes_read;
    bytes_written += other.bytes_written;
}

void Counters::add(const Counters& other) {
    tile_matmuls += other.tile_matmuls;
    tiles_packed += other.tiles_packed;
    noc_bytes_read_dram += other.noc_bytes_read_dram;
    noc_bytes_read_l1 += other.noc_bytes_read_l1;
    noc_bytes_written_dram += other.noc_bytes_written_dram;
    noc_bytes_written_l1 += other.noc_bytes_written_l1;
    kernel_builds += other.kernel_builds;
    kernel_cache_hits += other.kernel_cache_hits;
    for (const auto& [addr, traffic] : other.dram_buffers) dram_buffers[addr].add(traffic);
    for (const auto& [core, n] : other.core_busy) core_busy[core] += n;
    fabric.add(other.fabric);
    timing.add(other.timing);
}

}  // namespace ttnn_moe::emu
