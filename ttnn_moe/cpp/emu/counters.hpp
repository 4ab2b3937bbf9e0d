// What the emulator counts, per program run and cumulatively per device.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "emu/fabric/traffic.hpp"
#include "emu/timing/device_timing.hpp"

namespace ttnn_moe::emu {

// Traffic on one DRAM buffer (keyed by its address in Counters::dram_buffers).
struct DramBufferTraffic {
    std::vector<uint8_t> page_read;  // 1 where the page (interleaved index) was read at least once
    uint64_t page_reads = 0;         // page reads, a page read twice counts twice
    uint64_t bytes_read = 0;
    uint64_t page_writes = 0;  // page writes, a page written twice (or in two pieces) counts twice
    uint64_t bytes_written = 0;

    uint64_t unique_pages_read() const;
    void add(const DramBufferTraffic& other);
};

struct Counters {
    uint64_t tile_matmuls = 0;
    uint64_t tiles_packed = 0;
    uint64_t noc_bytes_read_dram = 0;
    uint64_t noc_bytes_read_l1 = 0;
    uint64_t noc_bytes_written_dram = 0;
    uint64_t noc_bytes_written_l1 = 0;
    uint64_t kernel_builds = 0;  // JIT builds (cache misses) the run needed
    uint64_t kernel_cache_hits = 0;
    std::map<uint32_t, DramBufferTraffic> dram_buffers;           // by buffer address
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> core_busy;  // logical (x, y) -> API calls
    fabric::FabricTraffic fabric;                                 // packets this device sent (emu/fabric/traffic.hpp)
    timing::DeviceTiming timing;                                  // modeled device time (emu/timing)

    void add(const Counters& other);
};

}  // namespace ttnn_moe::emu
