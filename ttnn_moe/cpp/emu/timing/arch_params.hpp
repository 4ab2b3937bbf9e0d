// The figures the device-time model runs on, one set per architecture
// (wormhole_b0.cpp, blackhole.cpp: every value there names its source, or how it
// was derived where no figure is published). Cycles are AI-clock cycles of the
// architecture; bandwidths are bytes per AI-clock cycle.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace ttnn_moe::emu::timing {

struct ArchParams {
    std::string name;  // "wormhole_b0", "blackhole"
    double clock_ghz = 1.0;

    // ---- compute (one Tensix core)
    // FPU cycles of one 32x32x32 tile matmul by math fidelity, indexed by MathFidelity's value (LoFi 0, HiFi2 2, ...).
    std::array<uint32_t, 5> matmul_tile_cycles{};
    uint32_t eltwise_tile_cycles = 0;   // FPU add/sub (and mul at LoFi) of one tile; mul scales with fidelity phases
    uint32_t datacopy_tile_cycles = 0;  // unpack-to-DST / A2D move of one tile (copy_tile, tilize, untilize)
    // SFPU cycles of one tile per op, indexed by UnaryOp (Silu, Sigmoid, Exp, Relu, Recip, Neg).
    std::array<uint32_t, 6> sfpu_tile_cycles{};
    uint32_t sfpu_binary_tile_cycles = 0;  // SFPU multiply of two DST tiles (mul_binary_tile)
    uint32_t sfpu_topk_step_cycles = 0;    // one compare-and-swap step of the bitonic top-k over a 2-tile slab
    uint32_t sfpu_fill_tile_cycles = 0;    // SFPU fill of one DST tile with a constant (fill_tile)
    double unpack_bytes_per_cycle = 0;     // one unpacker reading L1
    double pack_bytes_per_cycle = 0;       // the packers writing L1
    uint32_t compute_call_cycles = 0;      // issue cost of one compute API call on its TRISC (LLK setup, semaphores)

    // ---- data movement RISCs and the NOC
    uint32_t dataflow_call_cycles = 0;    // one dataflow API call (CB bookkeeping, barriers, waits)
    uint32_t noc_issue_cycles = 0;        // one NOC command call (read, write, multicast, atomic, inline write)
    double noc_port_bytes_per_cycle = 0;  // a core's NOC injection / absorption rate, per NOC and direction
    // Read latency (request out, first data back) by distance: same core, same column, same row, otherwise.
    std::array<uint32_t, 4> noc_read_latency_cycles{};
    uint32_t noc_write_latency_base_cycles = 0;  // write latency = base + per_hop x Manhattan hops
    uint32_t noc_write_latency_per_hop_cycles = 0;

    // ---- DRAM
    // Sustained bandwidth of the whole DRAM; the model splits it evenly over the emulated banks
    // (the emulator interleaves over 12 banks whatever the architecture).
    double dram_bytes_per_cycle = 0;
    uint32_t dram_extra_latency_cycles = 0;  // added to the NOC read latency of a DRAM read

    // ---- Ethernet / fabric, per link and direction
    double eth_bytes_per_cycle = 0;             // line rate
    uint32_t eth_packet_overhead_bytes = 0;     // per Ethernet frame (preamble, MAC header, FCS, gap)
    uint32_t eth_frame_bytes = 0;               // maximum Ethernet frame payload
    uint32_t fabric_hop_latency_1d_cycles = 0;  // per chip-to-chip hop, router forwarding included
    uint32_t fabric_hop_latency_2d_cycles = 0;
    uint32_t fabric_header_bytes_1d = 0;
    uint32_t fabric_header_bytes_2d = 0;

    // ---- host side, per op
    double dispatch_ns_cache_hit = 0;   // untraced enqueue of a cached program (op-to-op gap)
    double dispatch_ns_cache_miss = 0;  // first run: program build and upload on top of the dispatch
    double dispatch_ns_traced = 0;      // op-to-op gap in a trace replay

    // ---- what tt-perf-report compares against
    uint32_t worker_cores = 0;
    double dram_peak_gb_per_s = 0;

    uint32_t matmul_cycles(uint32_t fidelity) const { return matmul_tile_cycles.at(fidelity); }
    // Fidelity phases of an FPU multiply (LoFi 1, HiFi2 2, HiFi3 3, HiFi4 4).
    static uint32_t fidelity_phases(uint32_t fidelity) { return fidelity == 0 ? 1 : fidelity; }
    double cycles_to_ns(double cycles) const { return cycles / clock_ghz; }
};

const ArchParams& wormhole_b0_params();
const ArchParams& blackhole_params();
// By name ("wormhole_b0", "blackhole"); std::invalid_argument naming the value otherwise.
const ArchParams& arch_params(const std::string& name);
std::vector<std::string> arch_names();

}  // namespace ttnn_moe::emu::timing
