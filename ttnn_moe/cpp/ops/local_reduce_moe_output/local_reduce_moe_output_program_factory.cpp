// Program: token-stationary. Output rows are split contiguously over the cores.
// Reader: reads the counts (and offsets), scans each expert's valid map entries once
// (ascending l, i) keeping those that land in its rows, counting-sorts them by output
// row in L1 (stable, so each row's list stays in ascending l), writes each row's count of
// assignments dropped over max_assignments_per_row to row_overflow, then feeds the compute
// kernel per output row and 1024-element chunk: (y chunk, weight scalar) per assignment.
// Work per core is linear in the number of assignments plus its rows.
// Compute: prod = y * w (bcast scalar), acc = acc + prod in fp32 CBs, last sum packed to bf16.
// Writer: writes each finished chunk to the output row.
#include <algorithm>

#include "ops/common/tensor_checks.hpp"
#include "ops/local_reduce_moe_output/local_reduce_moe_output_device_operation.hpp"

namespace ttnn_moe::ops::local_reduce {

using namespace program;

namespace {
enum Cb : uint8_t {
    kCbY,          // y chunk of one assignment, bf16 (1024 elements = one element-wise "tile")
    kCbWeight,     // its weight as a bf16 scalar tile (element 0)
    kCbRowLength,  // per output row: number of assignments fed (>= 1), read with read_tile_value
    kCbProduct,    // w * y, fp32
    kCbAcc,        // running sum, fp32
    kCbOut,        // finished chunk, bf16
    kCbCounts,     // reader scratch below
    kCbOffsets,
    kCbMapSegment,
    kCbWeightSegment,
    kCbEntries,
    kCbSorted,
    kCbRowIndex,   // 3 pages of (rows per core + 1) words: count, start, dropped
    kCbStatusStage,  // one aligned word staged for each row_overflow write
};
constexpr uint32_t kChunkElements = 1024;
constexpr uint32_t kEntryWords = 3;        // (row - row_begin, y page, weight bits)
constexpr uint32_t kSortedEntryWords = 2;  // (y page, weight bits)

CBDescriptor cb(const CoreRangeSet& cores, uint8_t index, DataFormat format, uint32_t page, uint32_t pages) {
    return CBDescriptor{page * pages, cores, {CBFormatDescriptor{index, format, page, std::nullopt}}};
}
}  // namespace

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root, CoreCoord grid,
                             const Attributes& attrs) {
    const size_t num_inputs = io.size() - 2;
    const auto s = validate({io.begin(), io.begin() + num_inputs}, attrs);
    const uint32_t out_index = static_cast<uint32_t>(num_inputs);
    const uint32_t overflow_index = out_index + 1;
    const uint32_t num_cores = std::min(attrs.num_out_rows, grid.x * grid.y);
    const uint32_t max_rows_per_core = (attrs.num_out_rows + num_cores - 1) / num_cores;
    const auto selection = first_cores(grid, num_cores);
    const auto& cores = selection.ranges;
    const uint32_t num_chunks = (s.hidden + kChunkElements - 1) / kChunkElements;
    const uint32_t bf16_tile = tile_size_bytes(DataFormat::Float16_b);
    const uint32_t fp32_tile = tile_size_bytes(DataFormat::Float32);
    // A core's list holds at most rows_per_core x bound entries (the kernel drops and counts any
    // more); without a bound it must hold every map entry.
    const uint32_t row_bound = attrs.max_assignments_per_row == 0 ? s.num_entries : attrs.max_assignments_per_row;
    const uint32_t list_capacity =
        static_cast<uint32_t>(std::min<uint64_t>(s.num_entries, uint64_t{max_rows_per_core} * row_bound));

    ProgramDescriptor program;
    program.cbs = {
        cb(cores, kCbY, DataFormat::Float16_b, bf16_tile, 2),
        cb(cores, kCbWeight, DataFormat::Float16_b, bf16_tile, 2),
        cb(cores, kCbRowLength, DataFormat::UInt32, kAlignment, 2),
        cb(cores, kCbProduct, DataFormat::Float32, fp32_tile, 1),
        cb(cores, kCbAcc, DataFormat::Float32, fp32_tile, 1),
        cb(cores, kCbOut, DataFormat::Float16_b, bf16_tile, 2),
        cb(cores, kCbCounts, DataFormat::UInt32, kAlignment, s.num_local),
        cb(cores, kCbOffsets, DataFormat::UInt32, kAlignment, s.num_local),
        cb(cores, kCbMapSegment, DataFormat::UInt32, round_up(s.block_rows * 4, kAlignment), 1),
        cb(cores, kCbWeightSegment, DataFormat::Float16_b, round_up(s.block_rows * 2, kAlignment), 1),
        cb(cores, kCbEntries, DataFormat::UInt32, round_up(list_capacity * kEntryWords * 4, kAlignment), 1),
        cb(cores, kCbSorted, DataFormat::UInt32, round_up(list_capacity * kSortedEntryWords * 4, kAlignment), 1),
        cb(cores, kCbRowIndex, DataFormat::UInt32, round_up((max_rows_per_core + 1) * 4, kAlignment), 3),
        cb(cores, kCbStatusStage, DataFormat::UInt32, kAlignment, 1),
    };
    uint32_t l1_bytes = 0;
    for (const auto& c : program.cbs) l1_bytes += c.total_size;
    check_l1_budget(kOpName, l1_bytes,
                    "the assignment lists of up to " + std::to_string(list_capacity) + " entries per core (E_l=" +
                        std::to_string(s.num_local) + ", " + std::to_string(s.block_rows) +
                        " rows per map page, " + std::to_string(max_rows_per_core) + " output rows per core, " +
                        (attrs.max_assignments_per_row == 0
                             ? std::string("no max_assignments_per_row")
                             : "max_assignments_per_row=" + std::to_string(attrs.max_assignments_per_row)) +
                        ")");

    const std::vector<std::pair<std::string, uint32_t>> stream_cbs = {
        {"cb_y", kCbY}, {"cb_weight", kCbWeight}, {"cb_row_length", kCbRowLength}, {"cb_out", kCbOut}};

    KernelDescriptor reader;
    reader.kernel_source = kernels_root + "/local_reduce_moe_output/dataflow/reader_gather_assignments.cpp";
    reader.core_ranges = cores;
    for (uint32_t i = 0; i < 4; ++i) append_runtime_page_size_accessor_args(io[i], reader.compile_time_args);
    // padded mode has no offsets tensor: its accessor slot describes the counts and is never used
    append_runtime_page_size_accessor_args(io[s.grouped ? 4 : 3], reader.compile_time_args);
    append_runtime_page_size_accessor_args(io[overflow_index], reader.compile_time_args);
    reader.named_compile_time_args = stream_cbs;
    reader.named_compile_time_args.insert(reader.named_compile_time_args.end(),
                                          {{"cb_counts", kCbCounts},
                                           {"cb_offsets", kCbOffsets},
                                           {"cb_map_segment", kCbMapSegment},
                                           {"cb_weight_segment", kCbWeightSegment},
                                           {"cb_entries", kCbEntries},
                                           {"cb_sorted", kCbSorted},
                                           {"cb_row_index", kCbRowIndex},
                                           {"cb_status_stage", kCbStatusStage}});
    reader.config = ReaderConfigDescriptor{};

    KernelDescriptor compute;
    compute.kernel_source = kernels_root + "/local_reduce_moe_output/compute/weighted_sum.cpp";
    compute.core_ranges = cores;
    compute.named_compile_time_args = {{"cb_y", kCbY},           {"cb_weight", kCbWeight}, {"cb_row_length", kCbRowLength},
                                       {"cb_product", kCbProduct}, {"cb_acc", kCbAcc},       {"cb_out", kCbOut}};
    ComputeConfigDescriptor compute_config;
    compute_config.math_fidelity = attrs.math_fidelity;
    compute_config.fp32_dest_acc_en = attrs.fp32_dest_acc_en;
    compute.config = compute_config;

    KernelDescriptor writer;
    writer.kernel_source = kernels_root + "/local_reduce_moe_output/dataflow/writer_rows.cpp";
    writer.core_ranges = cores;
    append_runtime_page_size_accessor_args(io[out_index], writer.compile_time_args);
    writer.named_compile_time_args = {{"cb_out", kCbOut}};
    writer.config = WriterConfigDescriptor{};

    CachedProgram cached;
    const uint32_t offsets_tensor = s.grouped ? 4 : 3;
    for (uint32_t c = 0; c < num_cores; ++c) {
        const uint32_t begin = split_begin(attrs.num_out_rows, num_cores, c);
        const uint32_t end = split_begin(attrs.num_out_rows, num_cores, c + 1);
        for (uint32_t i = 0; i < 4; ++i) cached.address_slots.push_back({0, c, i, i});
        cached.address_slots.push_back({0, c, 4, offsets_tensor});
        cached.address_slots.push_back({0, c, 11, overflow_index});
        reader.runtime_args.emplace_back(
            selection.cores[c],
            std::vector<uint32_t>{io[0].address, io[1].address, io[2].address, io[3].address,
                                  io[offsets_tensor].address, s.grouped ? 1u : 0u, s.num_local, s.block_rows,
                                  s.hidden, begin, end, io[overflow_index].address, list_capacity, row_bound});
        compute.runtime_args.emplace_back(selection.cores[c], std::vector<uint32_t>{end - begin, num_chunks});
        cached.address_slots.push_back({2, c, 0, out_index});
        writer.runtime_args.emplace_back(selection.cores[c],
                                         std::vector<uint32_t>{io[out_index].address, s.hidden, begin, end});
    }
    program.kernels = {std::move(reader), std::move(compute), std::move(writer)};
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::local_reduce
