// What the time model reports for one device's program run: per core and RISC the
// kernel's span and its waits, per Ethernet link direction its traffic, all in cycles
// of the architecture's AI clock (kernels start at cycle 0 of the run).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ttnn_moe::emu::timing {

enum class WaitKind : uint8_t { CbWaitFront, CbReserveBack, Semaphore, ReadBarrier, WriteBarrier, FabricSlot, Dst };
constexpr size_t kWaitKinds = 7;
const char* wait_kind_name(WaitKind kind);

struct WaitSpan {
    uint64_t start = 0;
    uint64_t end = 0;
    WaitKind kind = WaitKind::CbWaitFront;
};

// One RISC of one core: BRISC, NCRISC, TRISC0 (unpack), TRISC1 (math), TRISC2 (pack).
struct RiscSpan {
    uint32_t core_x = 0;  // logical coordinates
    uint32_t core_y = 0;
    std::string risc;
    std::string kernel;
    uint64_t start = 0;
    uint64_t end = 0;
    uint64_t wait_cycles[kWaitKinds] = {};  // by WaitKind
    std::vector<WaitSpan> waits;            // the first kMaxWaitSpans waits of at least one cycle
    uint64_t waits_not_listed = 0;
    static constexpr size_t kMaxWaitSpans = 32;
};

struct LinkSpan {
    uint32_t from_chip = 0;
    uint32_t to_chip = 0;
    uint32_t link = 0;
    uint64_t packets = 0;
    uint64_t wire_bytes = 0;  // headers and Ethernet framing included
    // Cycles the link spends transmitting: the sum of every packet's wire time (wire bytes / line
    // rate, per packet rounded up), never the time a packet waits for the link or a buffer slot.
    uint64_t busy_cycles = 0;
    uint64_t first_start = 0;
    uint64_t last_end = 0;      // the last packet's tail leaves the link
    uint64_t last_arrival = 0;  // and reaches the next router, one hop latency later
};

struct DeviceTiming {
    std::string arch;
    double clock_ghz = 0;
    uint64_t duration_cycles = 0;  // the last RISC's end: the device kernel duration
    std::vector<RiscSpan> riscs;
    std::vector<LinkSpan> links;  // links whose traffic this device sent
    // Cumulative (a device's counters over many runs): the sum of the runs' durations.
    uint64_t total_cycles = 0;

    // Cumulative counters keep the summed durations only, not every run's spans.
    void add(const DeviceTiming& other) { total_cycles += other.total_cycles; }
};

}  // namespace ttnn_moe::emu::timing
