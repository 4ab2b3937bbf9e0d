"""Calibration cases of the device-time model: small programs run on the emulator whose modeled
figure is compared with a published Wormhole measurement, all with the one parameter set
(emu/timing/wormhole_b0.cpp). Each case names its source. Ratio = modeled / published."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.fabric import setup_fabric_connection

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tools package (the ttnn wheel's kernels)


@dataclass
class Case:
    name: str
    unit: str
    published: float
    modeled: float
    source: str
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.modeled / self.published


def _cores(*xy: tuple[int, int]) -> pd.CoreRangeSet:
    return pd.CoreRangeSet([pd.CoreRange(pd.CoreCoord(*c), pd.CoreCoord(*c)) for c in xy])


def _kernel(code: str, cores, config, runtime_args=()) -> pd.KernelDescriptor:
    return pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=cores,
        runtime_args=list(runtime_args),
        config=config,
    )


def _cb(index: int, pages: int, page_size: int, cores, fmt=pd.DataFormat.Float16_b) -> pd.CBDescriptor:
    return pd.CBDescriptor(
        total_size=pages * page_size,
        core_ranges=cores,
        format_descriptors=[pd.CBFormatDescriptor(buffer_index=index, data_format=fmt, page_size=page_size)],
    )


# ---------------------------------------------------------------- NOC: back-to-back transfers of one size

_NOC_STREAM = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t n = get_arg_val<uint32_t>(0);
    const uint32_t bytes = get_arg_val<uint32_t>(1);
    const uint32_t write = get_arg_val<uint32_t>(2);
    const uint32_t buf = get_write_ptr(0);
    const uint64_t peer = get_noc_addr(my_x[0], my_y[0], buf + 65536);
    for (uint32_t i = 0; i < n; ++i) {
        if (write) noc_async_write(buf, peer, bytes); else noc_async_read(peer, buf, bytes);
    }
    noc_async_read_barrier();
    noc_async_write_barrier();
}
"""


def noc_bandwidth(bytes_per_transfer: int, write: bool, n: int = 512) -> float:
    """B/cycle of one RISC issuing n transfers of one size back to back (its own L1 as the peer)."""
    cores = _cores((0, 0))
    program = pd.ProgramDescriptor(
        kernels=[
            _kernel(
                _NOC_STREAM,
                cores,
                pd.ReaderConfigDescriptor(),
                [(pd.CoreCoord(0, 0), [n, bytes_per_transfer, int(write)])],
            )
        ],
        cbs=[_cb(0, 1, 65536 + 8192, cores)],
    )
    timing = emu.run_program(emu.open_device(), program)["timing"]
    return n * bytes_per_transfer / timing["duration_cycles"]


# ---------------------------------------------------------------- DRAM: one reader per bank

_DRAM_STREAM = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t bank = get_arg_val<uint32_t>(1);
    const uint32_t n = get_arg_val<uint32_t>(2);
    const uint32_t bytes = get_arg_val<uint32_t>(3);
    const uint32_t buf = get_write_ptr(0);
    for (uint32_t i = 0; i < n; ++i) {
        noc_async_read(get_noc_addr_from_bank_id<true>(bank, addr + i * bytes), buf, bytes);
    }
    noc_async_read_barrier();
}
"""


def dram_bandwidth_gb_s(n: int = 64, bytes_per_read: int = 8192) -> float:
    """Aggregate GB/s of 12 readers, reader i streaming from DRAM bank i (the micro-benchmark's recipe)."""
    device = emu.open_device()
    params = emu.timing_params()
    addr = device.allocate(12 * n * bytes_per_read, n * bytes_per_read)  # page i in bank i
    readers = [(i % 6, i // 6) for i in range(12)]
    cores = _cores(*readers)
    args = [(pd.CoreCoord(*c), [addr, bank, n, bytes_per_read]) for bank, c in enumerate(readers)]
    program = pd.ProgramDescriptor(
        kernels=[_kernel(_DRAM_STREAM, cores, pd.ReaderConfigDescriptor(), args)],
        cbs=[_cb(0, 1, bytes_per_read, cores)],
    )
    timing = emu.run_program(device, program)["timing"]
    return 12 * n * bytes_per_read / timing["duration_cycles"] * params["clock_ghz"]


# ---------------------------------------------------------------- compute: a block matmul loop on one core

_MATMUL_BLOCK = """
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
void kernel_main() {
    constexpr uint32_t rt = 2, ct = 4, kt = 4;
    const uint32_t blocks = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(0, 1, 16);
    matmul_block_init(0, 1, 0, ct, rt, kt);
    cb_reserve_back(0, rt * kt); cb_push_back(0, rt * kt);
    cb_reserve_back(1, kt * ct); cb_push_back(1, kt * ct);
    cb_wait_front(0, rt * kt); cb_wait_front(1, kt * ct);
    for (uint32_t b = 0; b < blocks; ++b) {
        tile_regs_acquire();
        for (uint32_t k = 0; k < kt; ++k) matmul_block(0, 1, k, k * ct, 0, 0, ct, rt, kt);
        tile_regs_commit();
        cb_reserve_back(16, rt * ct);
        tile_regs_wait();
        for (uint32_t i = 0; i < rt * ct; ++i) pack_tile(i, 16);
        tile_regs_release();
        cb_push_back(16, rt * ct);
    }
}
"""
# The writer side: frees each output block as a writer would (no NOC traffic).
_DRAIN = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t blocks = get_arg_val<uint32_t>(0);
    for (uint32_t b = 0; b < blocks; ++b) { cb_wait_front(16, 8); cb_pop_front(16, 8); }
}
"""
_TILE_BYTES = {pd.DataFormat.Float16_b: 2048, pd.DataFormat.Bfp8_b: 1088}


def matmul_cycles_per_tile(fidelity: pd.MathFidelity, fmt: pd.DataFormat, blocks: int = 32) -> float:
    """Cycles per 32x32x32 tile matmul of a 2x4-subblock, 4-deep block matmul kept in L1."""
    cores = _cores((0, 0))
    tile = _TILE_BYTES[fmt]
    program = pd.ProgramDescriptor(
        kernels=[
            _kernel(
                _MATMUL_BLOCK,
                cores,
                pd.ComputeConfigDescriptor(math_fidelity=fidelity),
                [(pd.CoreCoord(0, 0), [blocks])],
            ),
            _kernel(_DRAIN, cores, pd.WriterConfigDescriptor(), [(pd.CoreCoord(0, 0), [blocks])]),
        ],
        cbs=[_cb(0, 8, tile, cores, fmt), _cb(1, 16, tile, cores, fmt), _cb(16, 16, 2048, cores)],
    )
    timing = emu.run_program(emu.open_device(), program)["timing"]
    return timing["duration_cycles"] / (blocks * 2 * 4 * 4)


# ---------------------------------------------------------------- DRAM-bound decode matmul (DRAM-sharded recipe)

# A DRAM-sharded decode matmul of ours, built on Saturating_DRAM_bandwidth.md's recipe: 12 worker
# cores, core i reading only its weight shard from DRAM bank i. Two readers per core (BRISC even
# blocks into CB 1, NCRISC odd blocks into CB 2) keep a block in flight while the other waits for its
# barrier: the job of the transaction IDs in Tenstorrent's reader. in0 (32 x K) is resident in L1, as
# after Tenstorrent's in0 multicast; the output block goes back to the core's bank.
_SHARD_READER = """
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    const uint32_t addr = get_arg_val<uint32_t>(0);
    const uint32_t bank = get_arg_val<uint32_t>(1);
    const uint32_t blocks = get_arg_val<uint32_t>(2);
    const uint32_t block_bytes = get_arg_val<uint32_t>(3);
    const uint32_t block_tiles = get_arg_val<uint32_t>(4);
    const uint32_t parity = get_arg_val<uint32_t>(5);
    const uint32_t out_tiles = get_arg_val<uint32_t>(6);
    const uint32_t cb = 1 + parity;
    for (uint32_t b = parity; b < blocks; b += 2) {
        cb_reserve_back(cb, block_tiles);
        const uint32_t l1 = get_write_ptr(cb);
        for (uint32_t off = 0; off < block_bytes; off += 8192) {
            const uint32_t n = block_bytes - off < 8192 ? block_bytes - off : 8192;
            noc_async_read(get_noc_addr_from_bank_id<true>(bank, addr + b * block_bytes + off), l1 + off, n);
        }
        noc_async_read_barrier();
        cb_push_back(cb, block_tiles);
    }
    if (parity == 0) {
        cb_wait_front(16, out_tiles);
        noc_async_write(get_read_ptr(16), get_noc_addr_from_bank_id<true>(bank, addr + blocks * block_bytes),
                        out_tiles * 2048);
        noc_async_write_barrier();
        cb_pop_front(16, out_tiles);
    }
}
"""
_SHARD_MATMUL = """
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/matmul.h"
#include "api/compute/pack.h"
void kernel_main() {
    const uint32_t kt = get_arg_val<uint32_t>(0);
    const uint32_t kb = get_arg_val<uint32_t>(1);
    const uint32_t nw = get_arg_val<uint32_t>(2);
    compute_kernel_hw_startup(0, 1, 16);
    matmul_block_init(0, 1, 0, nw, 1, kb);
    cb_reserve_back(0, kt); cb_push_back(0, kt);
    cb_wait_front(0, kt);
    tile_regs_acquire();
    for (uint32_t b = 0; b * kb < kt; ++b) {
        const uint32_t cb = 1 + b % 2;
        cb_wait_front(cb, kb * nw);
        for (uint32_t k = 0; k < kb; ++k) matmul_block(0, cb, b * kb + k, k * nw, 0, 0, nw, 1, kb);
        cb_pop_front(cb, kb * nw);
    }
    tile_regs_commit();
    cb_reserve_back(16, nw);
    tile_regs_wait();
    for (uint32_t i = 0; i < nw; ++i) pack_tile(i, 16);
    tile_regs_release();
    cb_push_back(16, nw);
}
"""


def dram_sharded_matmul_gb_s(k: int = 2048, n: int = 3072, k_block: int = 8) -> float:
    """Weight GB/s of a 32 x k x n matmul (bfp8_b weights, HiFi2) over 12 cores, one DRAM bank each."""
    device = emu.open_device()
    params = emu.timing_params()
    bfp8 = _TILE_BYTES[pd.DataFormat.Bfp8_b]
    kt, nw = k // 32, n // 32 // 12
    block_tiles = k_block * nw
    blocks = kt // k_block
    shard = kt * nw * bfp8 + nw * 2048  # the core's weight shard, then its output block
    addr = device.allocate(12 * shard, shard)  # page i in bank i
    cores_xy = [(i % 6, i // 6) for i in range(12)]
    cores = _cores(*cores_xy)
    reader_args = [
        [
            (pd.CoreCoord(*c), [addr, bank, blocks, block_tiles * bfp8, block_tiles, parity, nw])
            for bank, c in enumerate(cores_xy)
        ]
        for parity in (0, 1)
    ]
    program = pd.ProgramDescriptor(
        kernels=[
            _kernel(_SHARD_READER, cores, pd.WriterConfigDescriptor(), reader_args[0]),
            _kernel(_SHARD_READER, cores, pd.ReaderConfigDescriptor(), reader_args[1]),
            _kernel(
                _SHARD_MATMUL,
                cores,
                pd.ComputeConfigDescriptor(math_fidelity=pd.MathFidelity.HiFi2),
                [(pd.CoreCoord(*c), [kt, k_block, nw]) for c in cores_xy],
            ),
        ],
        cbs=[
            _cb(0, kt, 2048, cores),
            _cb(1, 2 * block_tiles, bfp8, cores, pd.DataFormat.Bfp8_b),
            _cb(2, 2 * block_tiles, bfp8, cores, pd.DataFormat.Bfp8_b),
            _cb(16, nw, 2048, cores),
        ],
    )
    timing = emu.run_program(device, program)["timing"]
    return 12 * kt * nw * bfp8 / timing["duration_cycles"] * params["clock_ghz"]


# ---------------------------------------------------------------- multi-core matmul: Tenstorrent's 2D-multicast program

# GEMM_FLOPS.md's manually tuned N150 runs (tt-metal tests/ttnn/unit_tests/benchmarks/test_benchmark.py,
# test_matmul_2d_host_perf): per-core shape (416, 320, 320) scaled by the 8x8 grid, in0 and the output in
# interleaved DRAM, in0_block_w_div 1 and one output block per core: in0_block_w = K / 8 / 32, per-core
# blocks M / 8 / 32 x N / 8 / 32 tiles, the first subblock of tt-metal's list that divides them; packer L1
# accumulation, output in the input's format.
# Published: the report's device-based utilization, ideal cycles / TRISC1 (math) kernel duration in the device
# profiler's cycles, ideal cycles = M K N / 32^3 x cycle_per_tile / 64 cores. In AI-clock cycles like the
# model, so TFLOPS = 2 M K N / (ideal cycles / utilization at 1 GHz). The report's host-timed TFLOPS of the same
# traced runs (a hundred back-to-back matmuls) are 1.30-1.36x lower than the device cycles at 1 GHz give: the
# host figure assumes the nominal 1 GHz (the benchmark's note: the device clock may throttle), and its ratio to
# the device cycles implies 0.74-0.77 GHz in these runs; it is shown beside each case. (tt-metal's plotting
# script config_utils.py prefers the host-based figure, saying the device-based one "has calculation errors",
# without saying which.)
GEMM_REPORT = (
    "tt-metal tech_reports/GEMM_FLOPS/GEMM_FLOPS.md, N150 manually tuned, 8x8, DRAM in0/in1/out, traced: device-based "
    "utilization x peak; program: tt-metal 0.81.1's matmul_multicore_reuse_mcast_2d with the wheel's kernels"
)
GEMM_CYCLES_PER_TILE = {"LoFi": 16, "HiFi2": 32, "HiFi4": 64}  # GEMM_FLOPS.md's ideal cycle_per_tile
GEMM_CASES = (
    # (M, K, N, dtype, fidelity, the report's device-based utilization %, its traced host-timed TFLOPS)
    (3328, 2560, 2560, "bfloat16", "HiFi4", 89.40, 43.21),
    (3328, 2560, 2560, "bfloat8_b", "HiFi2", 85.09, 85.63),
    (3328, 2560, 2560, "bfloat4_b", "LoFi", 81.62, 163.92),
)


def gemm_report_device_tflops(m: int, k: int, n: int, fidelity: str, utilization_percent: float) -> float:
    ideal_cycles = m * k * n / 32**3 * GEMM_CYCLES_PER_TILE[fidelity] / 64
    return 2 * m * k * n / (ideal_cycles / (utilization_percent / 100)) / 1e3  # at 1 GHz: / 1e9 s, / 1e12 flop


def mcast_2d_matmul_tflops(m: int, k: int, n: int, dtype_name: str, fidelity: str) -> float:
    """2MKN / modeled device kernel duration of tt-metal's 2D-multicast matmul on the 8x8 grid, the GEMM
    report's config for the shape (its benchmark's recipe above)."""
    import ttnn_moe.emu as ttnn  # noqa: PLC0415
    from ttnn_moe.emu.ttmetal import matmul as tt_matmul  # noqa: PLC0415
    from ttnn_moe.emu.ttmetal import use_wheel  # noqa: PLC0415
    from ttnn_moe.emu.ttmetal.matmul_config import (  # noqa: PLC0415
        MatmulMultiCoreReuseMultiCastProgramConfig,
        WormholeComputeKernelConfig,
        subblock_hw,
    )

    from tools.tt_wheel import ensure_ttnn_wheel  # noqa: PLC0415

    use_wheel(ensure_ttnn_wheel())
    per_core_M, per_core_N = m // 8 // 32, n // 8 // 32
    out_subblock_h, out_subblock_w = subblock_hw(per_core_M, per_core_N)
    config = MatmulMultiCoreReuseMultiCastProgramConfig(
        compute_with_storage_grid_size=(8, 8),
        in0_block_w=k // 8 // 32,
        out_subblock_h=out_subblock_h,
        out_subblock_w=out_subblock_w,
        per_core_M=per_core_M,
        per_core_N=per_core_N,
    )
    compute = WormholeComputeKernelConfig(math_fidelity=fidelity, math_approx_mode=True, packer_l1_acc=True)
    dtype = getattr(ttnn, dtype_name)
    device = ttnn.open_device(grid=(8, 8))
    try:
        a, b = (
            ttnn.allocate_tensor_on_device(shape, dtype, ttnn.TILE_LAYOUT, device, ttnn.DRAM_MEMORY_CONFIG)
            for shape in ([1, 1, m, k], [1, 1, k, n])
        )
        tt_matmul.matmul(a, b, program_config=config, compute_kernel_config=compute, dtype=dtype)
        cycles = ttnn.last_run_counters()["timing"]["duration_cycles"]
    finally:
        ttnn.close_device(device)
    seconds = cycles / (emu.timing_params()["clock_ghz"] * 1e9)
    return 2 * m * k * n / seconds / 1e12


# ---------------------------------------------------------------- Ethernet: a stream over one link

_FABRIC_STREAM = """
#include "api/dataflow/dataflow_api.h"
#include "tt_metal/fabric/hw/inc/edm_fabric/edm_fabric_worker_adapters.hpp"
#include "tt_metal/fabric/hw/inc/linear/api.h"
void kernel_main() {
    size_t arg = 0;
    const uint32_t send = get_arg_val<uint32_t>(arg++);
    const uint32_t packets = get_arg_val<uint32_t>(arg++);
    const uint32_t bytes = get_arg_val<uint32_t>(arg++);
    const uint32_t buf = get_write_ptr(0);
    auto* header = reinterpret_cast<volatile PACKET_HEADER_TYPE*>(get_write_ptr(1));
    const uint32_t sem = get_semaphore(0);
    if (send) {
        auto sender = tt::tt_fabric::WorkerToFabricEdmSender::build_from_args<ProgrammableCoreType::TENSIX>(arg);
        sender.open();
        for (uint32_t i = 0; i < packets; ++i) {
            tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader cmd(
                get_noc_addr(my_x[0], my_y[0], buf), get_noc_addr(my_x[0], my_y[0], sem), 1, true);
            tt::tt_fabric::linear::experimental::fabric_unicast_noc_fused_unicast_with_atomic_inc(
                &sender, header, buf, bytes, cmd, 1);
            noc_async_writes_flushed();
        }
        sender.close();
    } else {
        noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(sem), packets);
    }
}
"""


def fabric_stream(packets: int, payload: int) -> dict:
    """Chip 0 streams `packets` fused write + increment packets to chip 1 of a 1x2 line; the run's timing."""
    mesh = emu.Mesh(1, 2, grid=(1, 1))
    core = pd.CoreCoord(0, 0)
    cores = _cores((0, 0))
    programs = []
    for chip in (0, 1):
        program = pd.ProgramDescriptor(
            kernels=[],
            cbs=[_cb(0, 1, payload, cores), _cb(1, 1, 128, cores)],
            semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
        )
        args = [int(chip == 0), packets, payload]
        if chip == 0:
            node = [mesh.get_fabric_node_id(pd.MeshCoordinate(0, c)) for c in (0, 1)]
            args += setup_fabric_connection(node[0], node[1], 0, program, core)
        program.kernels = [_kernel(_FABRIC_STREAM, cores, pd.WriterConfigDescriptor(), [(core, args)])]
        coord = pd.MeshCoordinate(0, chip)
        programs.append((pd.MeshCoordinateRange(coord, coord), program))
    return emu.run_mesh_program(mesh, pd.MeshProgramDescriptor(programs))


def link_bandwidth_gb_s(packets: int = 64, payload: int = 4096) -> float:
    params = emu.timing_params()
    (link,) = fabric_stream(packets, payload)["devices"][0]["timing"]["links"]
    return packets * payload / (link["last_end"] - link["first_start"]) * params["clock_ghz"]


# ---------------------------------------------------------------- all_gather on a 1x8 line


def line_all_gather_us(gathered_bytes: int, line: int = 8) -> float:
    """Modeled device time (slowest device) of ttnn_moe's line all_gather (kernels/ccl_line) on a
    1 x `line` mesh: bf16 tiles in DRAM, `gathered_bytes` in the output, one fabric link."""
    import torch  # noqa: PLC0415
    import ttnn_moe.emu as ttnn  # noqa: PLC0415

    mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, line), grid=(2, 2))
    try:
        tiles = gathered_bytes // line // 2048
        shard = torch.zeros(32, 32 * tiles, dtype=torch.bfloat16)
        x = ttnn.from_torch(
            shard,
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=mesh,
            mesh_mapper=ttnn.ReplicateTensorToMesh(mesh),
        )
        ttnn.all_gather(x, 0, cluster_axis=1, num_links=1)  # the published figures' link count
        devices = ttnn.last_run_counters()["devices"]
    finally:
        ttnn.close_mesh_device(mesh)
    clock = emu.timing_params()["clock_ghz"]
    return max(d["timing"]["duration_cycles"] for d in devices.values()) / clock / 1e3


# ---------------------------------------------------------------- the table


def calibration_cases() -> list[Case]:
    emu.set_timing_arch("wormhole_b0")
    params = emu.timing_params()
    npe = "tt-npe wormhole_b0.hpp per-transfer bandwidth table"
    cases = [
        Case(f"NOC read {size} B transfers, one RISC", "B/cycle", published, noc_bandwidth(size, False), npe)
        for size, published in ((128, 5.5), (256, 10.1), (512, 18.0), (1024, 27.4), (2048, 30.0), (8192, 30.0))
    ]
    cases.append(Case("NOC write 2048 B transfers, one RISC", "B/cycle", 30.0, noc_bandwidth(2048, True), npe))
    cases.append(
        Case(
            "DRAM read, one reader per bank (12), 8 KB reads",
            "GB/s",
            267.0,
            dram_bandwidth_gb_s(),
            "Saturating_DRAM_bandwidth.md: DRAM micro-benchmark at 12 GT/s",
            "the DRAM parameter is this figure: checks the transfer model reaches it",
        )
    )
    for fidelity, fmt, label in (
        (pd.MathFidelity.HiFi4, pd.DataFormat.Float16_b, "bf16 HiFi4"),
        (pd.MathFidelity.HiFi2, pd.DataFormat.Float16_b, "bf16 HiFi2"),
        (pd.MathFidelity.HiFi2, pd.DataFormat.Bfp8_b, "bfp8 HiFi2"),
        (pd.MathFidelity.LoFi, pd.DataFormat.Bfp8_b, "bfp8 LoFi"),
    ):
        ideal = params["matmul_tile_cycles"][fidelity.name]
        cases.append(
            Case(
                f"single-core block matmul {label}",
                "cycles/tile",
                ideal / 0.93,
                matmul_cycles_per_tile(fidelity, fmt),
                "GEMM_FLOPS.md: ideal cycle_per_tile / 93 % (Wormhole's best measured utilization)",
            )
        )
    cases.append(
        Case(
            "DRAM-sharded decode matmul 32x2048x3072 bfp8 HiFi2",
            "GB/s",
            249.5,
            dram_sharded_matmul_gb_s(),
            "tt-metal tech_reports/Saturating_DRAM_bandwidth/Saturating_DRAM_bandwidth.md: Llama3-70 decode "
            "DRAM-sharded matmuls 239-260 GB/s at 12 GT/s (midpoint); program: ours on the report's recipe "
            "(12 cores, one bank each), not Tenstorrent's kernels",
            "weight bytes / device time; Tenstorrent's reader needs transaction-ID reads the emulator lacks",
        )
    )
    for m, k, n, dtype, fidelity, utilization, host_tflops in GEMM_CASES:
        published = gemm_report_device_tflops(m, k, n, fidelity, utilization)
        cases.append(
            Case(
                f"multi-core matmul, 8x8 grid, {m}x{k}x{n}, {dtype}, {fidelity}",
                "TFLOPS",
                published,
                mcast_2d_matmul_tflops(m, k, n, dtype, fidelity),
                GEMM_REPORT,
                f"device-based utilization {utilization}%; the traced host-timed figure is {host_tflops} TFLOPS, "
                f"the same device cycles at {host_tflops / published:.2f} GHz",
            )
        )
    for gathered, published in ((1 << 20, 101.28), (4 << 20, 331.93)):
        cases.append(
            Case(
                f"all_gather 1x8 line, {gathered >> 10} KiB gathered, bf16 DRAM",
                "us",
                published,
                line_all_gather_us(gathered),
                "tt-metal tech_reports/CCLs/results/FULL_wormhole_b0_bfloat16_6144.md: ttnn.all_gather, line, "
                "DRAM, n=8, 1 link; program: ours (kernels/ccl_line)",
                "bandwidth regime only: at 256 KiB and below the model falls under 0.75, lacking the op's fixed "
                "per-call cost (published fit: 4.47 us + 1.91 us per hop, SUMMARY_wormhole_b0_bfloat16_6144.md)",
            )
        )
    cases.append(
        Case(
            "Ethernet link, 4 KB fused-write packets, one direction",
            "GB/s",
            11.8,
            link_bandwidth_gb_s(),
            "CCL SUMMARY_wormhole_b0: all_gather line asymptote, 1 link",
        )
    )
    hop = params["fabric_hop_latency_1d_cycles"] / params["clock_ghz"]
    one, three = (hop_latency_run(h) for h in (1, 3))
    cases.append(
        Case(
            "fabric per-hop latency (3-hop minus 1-hop arrival / 2)",
            "ns",
            711.0,
            (three - one) / 2 / params["clock_ghz"],
            "CCL_bandwidth.md: 711 ns per hop, 1D fabric",
            f"the hop parameter is this figure ({hop:.0f} ns): checks the route model adds one per hop",
        )
    )
    return cases


def hop_latency_run(hops: int) -> int:
    """The receiver's modeled end when one small packet travels `hops` chips along a 1x4 line."""
    mesh = emu.Mesh(1, 4, grid=(1, 1))
    core = pd.CoreCoord(0, 0)
    cores = _cores((0, 0))
    programs = []
    for chip in (0, hops):
        program = pd.ProgramDescriptor(
            kernels=[],
            cbs=[_cb(0, 1, 64, cores), _cb(1, 1, 128, cores)],
            semaphores=[pd.SemaphoreDescriptor(id=0, core_ranges=cores, initial_value=0)],
        )
        args = [int(chip == 0), 1, 64]
        if chip == 0:
            node = [mesh.get_fabric_node_id(pd.MeshCoordinate(0, c)) for c in (0, 1)]
            args += setup_fabric_connection(node[0], node[1], 0, program, core)
        code = _FABRIC_STREAM.replace("buf, bytes, cmd, 1);", "buf, bytes, cmd, HOPS);").replace(
            "void kernel_main", f"constexpr uint8_t HOPS = {hops};\nvoid kernel_main"
        )
        program.kernels = [_kernel(code, cores, pd.WriterConfigDescriptor(), [(core, args)])]
        coord = pd.MeshCoordinate(0, chip)
        programs.append((pd.MeshCoordinateRange(coord, coord), program))
    counters = emu.run_mesh_program(mesh, pd.MeshProgramDescriptor(programs))
    return counters["devices"][hops]["timing"]["duration_cycles"]


def within_target(case: Case) -> bool:
    return 0.75 <= case.ratio <= 1.33 and math.isfinite(case.ratio)
