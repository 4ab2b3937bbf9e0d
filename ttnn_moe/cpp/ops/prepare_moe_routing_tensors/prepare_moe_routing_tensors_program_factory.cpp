// Program: local experts split over the first min(E_l, cores) cores; every core reads the
// mapping, scans all (T, K) ids in order (linear work per core) and writes the table rows of
// its experts. Core 0 also counts invalid ids, overflowing assignments and mapping errors.
// A core keeps its rows whole in L1 when they fit; longer rows are built in column windows,
// each written to DRAM as soon as it fills (the scan fills a row front to back).
#include <algorithm>

#include "ops/common/tensor_checks.hpp"
#include "ops/prepare_moe_routing_tensors/prepare_moe_routing_tensors_device_operation.hpp"

namespace ttnn_moe::ops::prepare_routing {

using namespace program;
using namespace prepare_moe_routing_tensors_shared;

namespace {
constexpr uint32_t kChunkRows = 32;  // (t, k) rows and mapping rows fetched per DRAM batch

// Circular buffers, used as L1 scratch by the one data-movement kernel.
enum Cb : uint8_t {
    kCbMappingRows,
    kCbSlotTable,
    kCbIds,
    kCbWeights,
    kCbTokens,
    kCbTokenWeights,
    kCbCounters,
    kCbStatus,
    kCbStage,
};

CBDescriptor scratch_cb(const CoreRangeSet& cores, Cb index, DataFormat format, uint32_t page, uint32_t pages) {
    return CBDescriptor{page * pages, cores, {CBFormatDescriptor{index, format, page, std::nullopt}}};
}

// L1 of one column window of `columns` in a slot's two table rows (routed_tokens, weights).
uint32_t window_bytes(uint32_t columns, uint32_t alignment) {
    return round_up(columns * 4, alignment) + round_up(columns * 2, alignment);
}

// Table columns each slot keeps in L1: the whole row (T) when the core's rows fit next to the
// fixed scratch, else the widest multiple of kWindowColumnMultiple that fits (at least one).
uint32_t window_columns(uint32_t num_tokens, uint32_t slots, uint32_t fixed_bytes, uint32_t alignment) {
    const uint32_t room = kL1BudgetBytes > fixed_bytes ? kL1BudgetBytes - fixed_bytes : 0;
    if (uint64_t{slots} * window_bytes(num_tokens, alignment) <= room) return num_tokens;
    const uint32_t fitting = room / slots / 6 / kWindowColumnMultiple * kWindowColumnMultiple;
    return std::max(fitting, kWindowColumnMultiple);
}
}  // namespace

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs, uint32_t device_index) {
    const Shapes s = validate({io.begin(), io.begin() + kNumRoutedTokens}, attrs);
    const uint32_t num_local = s.num_local_experts;
    const uint32_t num_cores = std::min(num_local, limits.grid.x * limits.grid.y);
    const uint32_t max_slots_per_core = (num_local + num_cores - 1) / num_cores;
    const auto selection = first_cores(limits.grid, num_cores);
    const auto& cores = selection.ranges;

    const uint32_t chunk_rows = std::min(kChunkRows, std::max(s.num_tokens, s.num_experts));

    ProgramDescriptor program;
    program.cbs = {
        scratch_cb(cores, kCbMappingRows, DataFormat::UInt32,
                   round_up(attrs.num_devices() * s.mapping_element_bytes, limits.dram_alignment), chunk_rows),
        scratch_cb(cores, kCbSlotTable, DataFormat::UInt32, round_up(s.num_experts * 4, limits.dram_alignment), 1),
        scratch_cb(cores, kCbIds, DataFormat::UInt32, round_up(s.top_k * 4, limits.dram_alignment), chunk_rows),
        scratch_cb(cores, kCbWeights, DataFormat::Float16_b, round_up(s.top_k * 2, limits.dram_alignment), chunk_rows),
        scratch_cb(cores, kCbCounters, DataFormat::UInt32, round_up(num_local * 4, limits.dram_alignment), 1),
        scratch_cb(cores, kCbStatus, DataFormat::UInt32, kStatusWords * 4, 1),
        scratch_cb(cores, kCbStage, DataFormat::UInt32, limits.dram_alignment, 1),
    };
    uint32_t fixed_bytes = 0;
    for (const auto& cb : program.cbs) fixed_bytes += cb.total_size;
    const uint32_t columns = window_columns(s.num_tokens, max_slots_per_core, fixed_bytes, limits.dram_alignment);
    // The windows take CB indices kCbTokens, kCbTokenWeights (the list stays in index order).
    program.cbs.insert(program.cbs.begin() + kCbTokens,
                       {scratch_cb(cores, kCbTokens, DataFormat::UInt32, round_up(columns * 4, limits.dram_alignment),
                                   max_slots_per_core),
                        scratch_cb(cores, kCbTokenWeights, DataFormat::Float16_b,
                                   round_up(columns * 2, limits.dram_alignment), max_slots_per_core)});
    check_l1_budget(kOpName, fixed_bytes + max_slots_per_core * window_bytes(columns, limits.dram_alignment),
                    "E=" + std::to_string(s.num_experts) + ", K=" + std::to_string(s.top_k) + ", " +
                        std::to_string(max_slots_per_core) + " local experts per core in windows of " +
                        std::to_string(columns) + " columns");

    KernelDescriptor kernel;
    kernel.kernel_source = kernels_root + "/prepare_moe_routing_tensors/dataflow/route_assignments.cpp";
    kernel.core_ranges = cores;
    for (uint32_t i = 0; i < kNumIo; ++i) append_runtime_page_size_accessor_args(io[i], kernel.compile_time_args);
    kernel.named_compile_time_args = {
        {named_arg::kCbMappingRows, kCbMappingRows},
        {named_arg::kCbSlotTable, kCbSlotTable},
        {named_arg::kCbIds, kCbIds},
        {named_arg::kCbWeights, kCbWeights},
        {named_arg::kCbTokens, kCbTokens},
        {named_arg::kCbTokenWeights, kCbTokenWeights},
        {named_arg::kCbCounters, kCbCounters},
        {named_arg::kCbStatus, kCbStatus},
        {named_arg::kCbStage, kCbStage},
    };
    kernel.config = ReaderConfigDescriptor{};

    CachedProgram cached;
    for (uint32_t c = 0; c < num_cores; ++c) {
        std::vector<uint32_t> args(dataflow_arg::kCount);
        for (uint32_t i = 0; i < kNumIo; ++i) {
            cached.address_slots.push_back({0, c, i, i});
            args[i] = io[i].address;
        }
        args[dataflow_arg::kNumTokens] = s.num_tokens;
        args[dataflow_arg::kTopK] = s.top_k;
        args[dataflow_arg::kNumExperts] = s.num_experts;
        args[dataflow_arg::kNumLocalExperts] = num_local;
        args[dataflow_arg::kSlotBegin] = split_begin(num_local, num_cores, c);
        args[dataflow_arg::kSlotEnd] = split_begin(num_local, num_cores, c + 1);
        args[dataflow_arg::kReportsStatus] = c == 0 ? 1 : 0;
        args[dataflow_arg::kChunkRows] = chunk_rows;
        args[dataflow_arg::kDeviceIndex] = device_index;
        args[dataflow_arg::kNumDevices] = attrs.num_devices();
        args[dataflow_arg::kMappingElementBytes] = s.mapping_element_bytes;
        args[dataflow_arg::kWindowColumns] = columns;
        kernel.runtime_args.emplace_back(selection.cores[c], std::move(args));
    }
    program.kernels.push_back(std::move(kernel));
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::prepare_routing
