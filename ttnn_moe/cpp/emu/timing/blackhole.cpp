// Blackhole. Q = a published figure, D = derived; sources as in wormhole_b0.cpp. The Tensix
// core (FPU, SFPU, unpack/pack) is taken to cost the same cycles as Wormhole's: the matmul
// figures are published as the same per-cycle rate, the others are not published for Blackhole.
#include "emu/timing/arch_params.hpp"

namespace ttnn_moe::emu::timing {

const ArchParams& blackhole_params() {
    static const ArchParams p = [] {
        ArchParams a = wormhole_b0_params();  // the Tensix core figures (see the file comment)
        a.name = "blackhole";
        a.clock_ghz = 1.35;  // Q GEMM_FLOPS.md: "At 1.35GHz (BH)"
        // Q GEMM_FLOPS.md: the FPU does the same 8x16x16 per cycle (5.4 TFLOPS per core at LoFi = 4096 flop
        // x 1.35 GHz), so the cycles per tile are Wormhole's.

        // D not published here: the NOC port and latencies are taken as Wormhole's, in cycles.

        // Q Blackhole specifications: 8 GDDR6 channels, 512 GB/s peak; D x 0.92, the efficiency Wormhole's
        // DRAM micro-benchmark reaches (Saturating_DRAM_bandwidth.md), / 1.35 GHz = 349 B per cycle.
        a.dram_bytes_per_cycle = 512.0 * 0.92 / 1.35;

        // Q CCL_bandwidth.md: 400 Gbps links currently run at half speed, 25 GB/s per direction;
        // D / 1.35 GHz = 18.5 B per cycle.
        a.eth_bytes_per_cycle = 25.0 / 1.35;
        // Q CCL_bandwidth.md: per-hop latency 515 ns (1D), 619 ns (2D); D x 1.35 cycles per ns.
        a.fabric_hop_latency_1d_cycles = 695;  // 515 x 1.35
        a.fabric_hop_latency_2d_cycles = 836;  // 619 x 1.35

        // D host dispatch is host work: taken as Wormhole's.

        // Q tt-perf-report's Blackhole spec: 130 worker cores, DRAM 512 GB/s.
        a.worker_cores = 130;
        a.dram_peak_gb_per_s = 512.0;
        return a;
    }();
    return p;
}

}  // namespace ttnn_moe::emu::timing
