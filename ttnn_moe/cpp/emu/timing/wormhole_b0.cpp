// Wormhole B0. Q = a published figure, D = derived (the arithmetic is in the comment).
// Sources: tt-metal = github.com/tenstorrent/tt-metal tech_reports; isa =
// github.com/tenstorrent/tt-isa-documentation; npe = github.com/tenstorrent/tt-npe
// (the vendor's NoC performance estimator: its constants are the vendor's own model inputs).
#include "emu/timing/arch_params.hpp"

namespace ttnn_moe::emu::timing {

const ArchParams& wormhole_b0_params() {
    static const ArchParams p = [] {
        ArchParams a;
        a.name = "wormhole_b0";
        a.clock_ghz = 1.0;  // Q tt-metal GEMM_FLOPS.md: "At 1GHz (WH)"

        // Q GEMM_FLOPS.md "cycle_per_tile": LoFi 16, HiFi2 32, HiFi3 48, HiFi4 64. Check (D): the FPU does
        // 8x16 @ 16x16 = 2048 MAC per cycle (matrix_engine.md); 32^3 / 2048 = 16 at LoFi, one pass per phase.
        // D the same for every operand format (bf16, bfp8_b, bfp4_b): the FPU multiplies the unpacked
        // srcA/srcB registers, so a format changes only the bytes unpacked, read and sent (GEMM_FLOPS.md
        // pairs each dtype with a fidelity and gives no per-dtype rate).
        a.matmul_tile_cycles = {16, 16, 32, 48, 64};  // index 1 is unused (no MathFidelity 1); LoFi cost
        // D matrix_engine.md: eltwise add/sub/mul do 8x16 = 128 elements per cycle -> 1024 / 128 = 8 per tile.
        a.eltwise_tile_cycles = 8;
        // D the A2D datacopy moves the same 8x16 block per cycle as an eltwise op: 8 per tile.
        a.datacopy_tile_cycles = 8;
        // D isa VectorUnit.md: SFPLOAD/SFPSTORE move 32 datums per instruction, one instruction per cycle,
        // so a tile is 32 groups of (load + k ops + store) = 32 x (2 + k). k, the instruction count of the
        // routine per group (no published per-op figure): silu 30 (x * sigmoid), sigmoid 28 (exp + reciprocal),
        // exp 15 (range reduction + polynomial), relu 2, recip 12 (Newton steps), neg 1.
        a.sfpu_tile_cycles = {32 * 32, 32 * 30, 32 * 17, 32 * 4, 32 * 14, 32 * 3};
        // D same source: a binary op loads both operands, so a group is 2 loads + the multiply + the bf16
        // round-to-nearest-even (~3 instructions) + 1 store.
        a.sfpu_binary_tile_cycles = 32 * 7;
        // D same source: one step of the bitonic top-k (ckernel_sfpu_topk.h) compares every position of a
        // 2-tile slab with its partner: 64 groups of 32 datums, pairs of groups with 2 value and 2 index
        // loads, one SFPSWAP (index tracking moves the index pair too, ~2 more) and 4 stores, ~10
        // instructions a pair: 32 x 10.
        a.sfpu_topk_step_cycles = 32 * 10;
        // D same source: a fill loads its constant into a register once and stores it to each group:
        // one SFPSTORE plus the loop's address increment per 32-datum group.
        a.sfpu_fill_tile_cycles = 32 * 2;
        // Q isa L1.md: one unpacker reads up to 4 x 128 bit = 64 B per cycle.
        a.unpack_bytes_per_cycle = 64.0;
        // Q isa L1.md: 4 packers, 128 bit per cycle each = 64 B per cycle.
        a.pack_bytes_per_cycle = 64.0;
        // D not published: an LLK call programs address counters and the unpack/math/pack semaphores
        // (~10 register writes at one per cycle).
        a.compute_call_cycles = 10;

        // D not published: a dataflow API call is ~20 RISC-V instructions (CB pointer arithmetic and a
        // volatile L1 access).
        a.dataflow_call_cycles = 20;
        // D from npe's per-transfer bandwidth table (wormhole_b0.hpp `tbt`): small transfers reach
        // 128 B: 5.5, 256 B: 10.1, 512 B: 18.0 B/cycle, i.e. one transfer every 23.3, 25.3 and 28.4 cycles
        // while the wire would take 4.6-18.2: the issue interval of a NOC command, ~26 cycles (mean).
        a.noc_issue_cycles = 26;
        // Q npe wormhole_b0.hpp: worker injection rate 28.1 B/cycle (link 30, flit 32 B per cycle, isa NoC README).
        a.noc_port_bytes_per_cycle = 28.1;
        // Q npe wormhole_b0.hpp get_read_latency: same core 70, same column 154, same row 170, otherwise 270.
        a.noc_read_latency_cycles = {70, 154, 170, 270};
        // Q npe wormhole_b0.hpp: STARTUP_LATENCY 40 + CYCLES_PER_HOP 10.
        a.noc_write_latency_base_cycles = 40;
        a.noc_write_latency_per_hop_cycles = 10;

        // Q tt-metal Saturating_DRAM_bandwidth.md: the DRAM micro-benchmark reaches 267 GB/s at 12 GT/s
        // (92 % of the 288 GB/s peak); at 1 GHz that is 267 B per cycle for the whole chip.
        a.dram_bytes_per_cycle = 267.0;
        // D npe's read latencies are its figures for DRAM reads too; nothing is added.
        a.dram_extra_latency_cycles = 0;

        // Q tt-metal CCL_bandwidth.md / BasicEthernetGuide.md: 100 Gbps = 12.5 GB/s per direction per link.
        a.eth_bytes_per_cycle = 12.5;
        // Q CCL_bandwidth.md: efficiency P / (P + H + 50 x ceil((P + H) / 1500)): 50 B per 1500-B frame.
        a.eth_packet_overhead_bytes = 50;
        a.eth_frame_bytes = 1500;
        // Q CCL_bandwidth.md: per-hop latency 711 ns (1D fabric), 874 ns (2D); at 1 GHz, cycles = ns.
        a.fabric_hop_latency_1d_cycles = 711;
        a.fabric_hop_latency_2d_cycles = 874;
        // Q CCL_bandwidth.md: fabric header 48 B (1D), 80-128 B (2D); D 96 B, the emulated
        // HybridMeshPacketHeader, inside that range.
        a.fabric_header_bytes_1d = 48;
        a.fabric_header_bytes_2d = 96;

        // D GEMM_FLOPS.md: a 512^3 matmul on n150 takes 49.0 us untraced and 20.0 us traced: 29 us of
        // host dispatch per untraced op.
        a.dispatch_ns_cache_hit = 29000.0;
        // D not published: a program-cache miss creates the program and loads its kernel binaries from
        // tt-metal's JIT disk cache before dispatch; taken as 2 ms on top of a hit (order of magnitude only).
        a.dispatch_ns_cache_miss = 29000.0 + 2.0e6;
        // Q public tt-metal bring-up reports: the traced op-to-op gap is ~1 us.
        a.dispatch_ns_traced = 1000.0;

        // Q tt-perf-report's Wormhole spec: 64 worker cores (Galaxy compute grid 8x8), DRAM 288 GB/s.
        a.worker_cores = 64;
        a.dram_peak_gb_per_s = 288.0;
        return a;
    }();
    return p;
}

}  // namespace ttnn_moe::emu::timing
