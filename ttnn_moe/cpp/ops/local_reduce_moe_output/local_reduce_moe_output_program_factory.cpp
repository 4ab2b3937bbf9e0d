// Program: token-stationary. The output rows computed (num_used_rows, read on the device, or
// num_out_rows) are split contiguously over the cores at run time.
// Reader: reads the counts (and offsets), scans each expert's valid map entries once
// (ascending l, i) keeping those that land in its rows, counting-sorts them by output
// row in L1 (stable, so each row's list stays in ascending l), writes each row's count of
// assignments dropped over max_assignments_per_row to row_overflow, then feeds the compute
// kernel per output row and 1024-element chunk: (y chunk, weight scalar) per assignment.
// Work per core is linear in the number of assignments plus its rows. The lists take the L1
// the other scratch leaves (up to what the core can need); a core whose assignments outgrow
// them scans the map again per group of rows that fits (the kernel's header tells how).
// Compute: prod = y * w (bcast scalar), acc = acc + prod in fp32 CBs, last sum packed to bf16.
// Writer: writes each finished chunk to the output row.
// The first core's reader also writes reduce_status: map entries naming no output row,
// counts past their block, overlapping grouped blocks.
#include <algorithm>
#include <cmath>

#include "ops/common/tensor_checks.hpp"
#include "ops/local_reduce_moe_output/local_reduce_moe_output_device_operation.hpp"
#include "ops/local_reduce_moe_output/local_reduce_moe_output_shared.hpp"

namespace ttnn_moe::ops::local_reduce {

using namespace program;
using namespace ttnn_moe::local_reduce_moe_output_shared;

namespace {
// CB ids (named compile-time args of the kernels; what each holds: the shared header).
enum Cb : uint8_t {
    kCbY,
    kCbWeight,
    kCbRowLength,
    kCbProduct,
    kCbAcc,
    kCbOut,
    kCbCounts,
    kCbOffsets,
    kCbMapSegment,
    kCbWeightSegment,
    kCbEntries,
    kCbSorted,
    kCbRowIndex,
    kCbStatusStage,
    kCbStatus,
    kCbRowRange,
};

CBDescriptor cb(const CoreRangeSet& cores, uint8_t index, DataFormat format, uint32_t page, uint32_t pages) {
    return CBDescriptor{page * pages, cores, {CBFormatDescriptor{index, format, page, std::nullopt}}};
}

// L1 of the two assignment lists (scan order and sorted) of `entries` entries.
uint64_t lists_bytes(uint64_t entries, uint32_t alignment) {
    const auto up = [alignment](uint64_t bytes) { return (bytes + alignment - 1) / alignment * alignment; };
    return up(entries * kEntryWords * 4) + up(entries * kSortedEntryWords * 4);
}

// Entries the lists hold: every assignment a window can keep when that fits next to the fixed
// scratch, else as many as fit, a multiple of kListGranule (so both lists fill whole aligned
// pages); at least one granule, the kernel then scans again per group of rows.
constexpr uint32_t kListGranule = 16;
uint32_t assignment_list_capacity(uint64_t most_kept, uint32_t fixed_bytes, uint32_t alignment) {
    if (fixed_bytes + lists_bytes(most_kept, alignment) <= kL1BudgetBytes) {
        return static_cast<uint32_t>(most_kept);
    }
    const uint32_t room = kL1BudgetBytes > fixed_bytes ? kL1BudgetBytes - fixed_bytes : 0;
    const uint32_t fitting = room / ((kEntryWords + kSortedEntryWords) * 4) / kListGranule * kListGranule;
    return std::max(fitting, kListGranule);
}
// Every core scans all A valid map entries, and the map sits in one DRAM page (grouped; one per
// expert padded): that bank carries cores x A x 6 bytes, while each core feeds its A x chunks /
// cores (y chunk, weight) pairs. The two balance at a core count that grows with sqrt(chunks) and
// not with A: kCoresPerRootChunk per sqrt(chunk), where Wormhole's modeled time is least for one
// chunk (TG mini prefill, 1 chunk: 16.1 us on 64 cores, 11.6 on 16, 12.4 on 32). H = 7168 (7
// chunks) gets the whole 8x8 grid.
constexpr double kCoresPerRootChunk = 24.0;
uint32_t scan_balanced_cores(uint32_t num_chunks) {
    return static_cast<uint32_t>(std::ceil(kCoresPerRootChunk * std::sqrt(static_cast<double>(num_chunks))));
}
}  // namespace

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs) {
    const size_t num_inputs = io.size() - 3;
    const auto s = validate({io.begin(), io.begin() + num_inputs}, attrs);
    const uint32_t out_index = static_cast<uint32_t>(num_inputs);
    const uint32_t overflow_index = out_index + 1;
    const uint32_t status_index = out_index + 2;
    // io tensor of each reader tensor; padded mode has no offsets tensor, and without
    // num_used_rows there is no used-rows tensor: those slots describe num_routed_tokens and are
    // never read.
    const uint32_t used_rows_index = attrs.has_used_rows ? out_index - 1 : 3u;
    const uint32_t reader_io[kNumReaderTensors] = {
        0, 1, 2, 3, s.grouped ? 4u : 3u, overflow_index, status_index, used_rows_index};
    const uint32_t num_chunks = (s.hidden + kChunkElements - 1) / kChunkElements;
    // How many rows are used is only known on the device; the cores are as many as balance the
    // scan against the feed (scan_balanced_cores), at most one per output row.
    const uint32_t num_cores =
        std::min({attrs.num_out_rows, limits.grid.x * limits.grid.y, scan_balanced_cores(num_chunks)});
    const uint32_t max_rows_per_core = (attrs.num_out_rows + num_cores - 1) / num_cores;
    const auto selection = first_cores(limits.grid, num_cores);
    const auto& cores = selection.ranges;
    const uint32_t bf16_tile = tile_size_bytes(DataFormat::Float16_b);
    const uint32_t fp32_tile = tile_size_bytes(DataFormat::Float32);
    const uint32_t window_rows = std::min(max_rows_per_core, kMaxWindowRows);
    const uint32_t segment_entries = std::min(s.block_rows, kMaxSegmentEntries);
    // A window's rows keep at most window_rows x bound entries (the kernel drops and counts any
    // more); without a bound they can receive every map entry.
    const uint32_t row_bound = attrs.max_assignments_per_row == 0 ? s.num_entries : attrs.max_assignments_per_row;
    const uint64_t most_kept = std::min<uint64_t>(s.num_entries, uint64_t{window_rows} * row_bound);

    ProgramDescriptor program;
    program.cbs = {
        cb(cores, kCbY, DataFormat::Float16_b, bf16_tile, kPairPages),
        cb(cores, kCbWeight, DataFormat::Float16_b, bf16_tile, kPairPages),
        cb(cores, kCbRowLength, DataFormat::UInt32, limits.dram_alignment, kPairPages),
        cb(cores, kCbProduct, DataFormat::Float32, fp32_tile, 1),
        cb(cores, kCbAcc, DataFormat::Float32, fp32_tile, 1),
        cb(cores, kCbOut, DataFormat::Float16_b, bf16_tile, 2),
        cb(cores, kCbCounts, DataFormat::UInt32, limits.dram_alignment, s.num_local),
        cb(cores, kCbOffsets, DataFormat::UInt32, limits.dram_alignment, s.num_local),
        cb(cores, kCbMapSegment, DataFormat::UInt32, round_up(segment_entries * 4, limits.dram_alignment), 1),
        cb(cores, kCbWeightSegment, DataFormat::Float16_b, round_up(segment_entries * 2, limits.dram_alignment), 1),
        cb(cores, kCbRowIndex, DataFormat::UInt32, round_up((window_rows + 1) * 4, limits.dram_alignment),
           kRowIndexPages),
        cb(cores, kCbStatusStage, DataFormat::UInt32, limits.dram_alignment, kOverflowStageSlots),
        cb(cores, kCbStatus, DataFormat::UInt32, round_up(kStatusWords * 4, limits.dram_alignment), 1),
        cb(cores, kCbRowRange, DataFormat::UInt32, round_up(kRangeWords * 4, limits.dram_alignment), 1),
    };
    uint32_t fixed_bytes = 0;
    for (const auto& c : program.cbs) fixed_bytes += c.total_size;
    const uint32_t list_capacity = assignment_list_capacity(most_kept, fixed_bytes, limits.dram_alignment);
    check_l1_budget(kOpName, static_cast<uint32_t>(fixed_bytes + lists_bytes(list_capacity, limits.dram_alignment)),
                    "E_l=" + std::to_string(s.num_local) + " experts and " + std::to_string(window_rows) +
                        " output rows per window with assignment lists of " + std::to_string(list_capacity) +
                        " entries");
    // The lists take CB indices kCbEntries, kCbSorted (the list stays in index order).
    program.cbs.insert(
        program.cbs.begin() + kCbEntries,
        {cb(cores, kCbEntries, DataFormat::UInt32, round_up(list_capacity * kEntryWords * 4, limits.dram_alignment), 1),
         cb(cores, kCbSorted, DataFormat::UInt32,
            round_up(list_capacity * kSortedEntryWords * 4, limits.dram_alignment), 1)});

    KernelDescriptor reader;
    reader.kernel_source = kernels_root + "/local_reduce_moe_output/dataflow/reader_gather_assignments.cpp";
    reader.core_ranges = cores;
    for (uint32_t t = 0; t < kNumReaderTensors; ++t) {
        append_runtime_page_size_accessor_args(io[reader_io[t]], reader.compile_time_args);
    }
    reader.named_compile_time_args = {
        {named_arg::kCbY, kCbY},
        {named_arg::kCbWeight, kCbWeight},
        {named_arg::kCbRowLength, kCbRowLength},
        {named_arg::kCbCounts, kCbCounts},
        {named_arg::kCbOffsets, kCbOffsets},
        {named_arg::kCbMapSegment, kCbMapSegment},
        {named_arg::kCbWeightSegment, kCbWeightSegment},
        {named_arg::kCbEntries, kCbEntries},
        {named_arg::kCbSorted, kCbSorted},
        {named_arg::kCbRowIndex, kCbRowIndex},
        {named_arg::kCbStatusStage, kCbStatusStage},
        {named_arg::kCbStatus, kCbStatus},
        {named_arg::kCbRowRange, kCbRowRange},
    };
    reader.config = ReaderConfigDescriptor{};

    KernelDescriptor compute;
    compute.kernel_source = kernels_root + "/local_reduce_moe_output/compute/weighted_sum.cpp";
    compute.core_ranges = cores;
    compute.named_compile_time_args = {
        {named_arg::kCbY, kCbY},
        {named_arg::kCbWeight, kCbWeight},
        {named_arg::kCbRowLength, kCbRowLength},
        {named_arg::kCbProduct, kCbProduct},
        {named_arg::kCbAcc, kCbAcc},
        {named_arg::kCbOut, kCbOut},
    };
    ComputeConfigDescriptor compute_config;
    compute_config.math_fidelity = attrs.math_fidelity;
    compute_config.fp32_dest_acc_en = attrs.fp32_dest_acc_en;
    compute.config = compute_config;

    KernelDescriptor writer;
    writer.kernel_source = kernels_root + "/local_reduce_moe_output/dataflow/writer_rows.cpp";
    writer.core_ranges = cores;
    append_runtime_page_size_accessor_args(io[out_index], writer.compile_time_args);
    writer.named_compile_time_args = {{named_arg::kCbOut, kCbOut}, {named_arg::kCbRowRange, kCbRowRange}};
    writer.config = WriterConfigDescriptor{};

    CachedProgram cached;
    for (uint32_t c = 0; c < num_cores; ++c) {
        std::vector<uint32_t> reader_args(reader_arg::kCount);
        for (uint32_t t = 0; t < kNumReaderTensors; ++t) {
            cached.address_slots.push_back({0, c, t, reader_io[t]});
            reader_args[t] = io[reader_io[t]].address;
        }
        reader_args[reader_arg::kGrouped] = s.grouped ? 1u : 0u;
        reader_args[reader_arg::kNumLocal] = s.num_local;
        reader_args[reader_arg::kBlockRows] = s.block_rows;
        reader_args[reader_arg::kHidden] = s.hidden;
        reader_args[reader_arg::kCore] = c;
        reader_args[reader_arg::kNumCores] = num_cores;
        reader_args[reader_arg::kHasUsedRows] = attrs.has_used_rows ? 1u : 0u;
        reader_args[reader_arg::kListCapacity] = list_capacity;
        reader_args[reader_arg::kRowBound] = row_bound;
        reader_args[reader_arg::kNumOutRows] = attrs.num_out_rows;
        reader_args[reader_arg::kReportsStatus] = c == 0 ? 1u : 0u;
        reader_args[reader_arg::kWindowRows] = window_rows;
        reader_args[reader_arg::kSegmentEntries] = segment_entries;
        reader.runtime_args.emplace_back(selection.cores[c], std::move(reader_args));

        std::vector<uint32_t> compute_args(compute_arg::kCount);
        compute_args[compute_arg::kNumChunks] = num_chunks;
        compute.runtime_args.emplace_back(selection.cores[c], std::move(compute_args));

        std::vector<uint32_t> writer_args(writer_arg::kCount);
        cached.address_slots.push_back({2, c, writer_arg::kOutAddr, out_index});
        writer_args[writer_arg::kOutAddr] = io[out_index].address;
        writer_args[writer_arg::kHidden] = s.hidden;
        writer.runtime_args.emplace_back(selection.cores[c], std::move(writer_args));
    }
    program.kernels = {std::move(reader), std::move(compute), std::move(writer)};
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::local_reduce
