// Program: the E_l * T output rows split contiguously over the cores. The reader
// reads the counts and, per expert it touches, the routed_tokens row in chunks of at most
// kMaxTokenChunkEntries entries; it gathers
// x rows (or zero-fills padding rows) into a CB; the writer streams them out. The
// first core's reader also checks every entry and writes scatter_status.
#include <algorithm>

#include "ops/common/tensor_checks.hpp"
#include "ops/scatter_moe_input/scatter_moe_input_device_operation.hpp"
#include "ops/scatter_moe_input/scatter_moe_input_shared.hpp"

namespace ttnn_moe::ops::scatter_input {

using namespace program;
using namespace ttnn_moe::scatter_moe_input_shared;

namespace {
// io tensors: x, num_routed_tokens, routed_tokens, the output, scatter_status.
constexpr uint32_t kOut = 3;
constexpr uint32_t kStatusIo = 4;
// io index of each reader tensor (ReaderTensor order).
constexpr uint32_t kReaderIo[kNumReaderTensors] = {0, 1, 2, kStatusIo};
// CB ids (named compile-time args of the kernels).
enum Cb : uint8_t { kCbRows, kCbCounts, kCbTokenRow, kCbStatus };
constexpr uint32_t kRowsInFlight = 2;  // double-buffered rows between reader and writer
}  // namespace

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits) {
    const auto s = validate({io.begin(), io.begin() + 3});
    const uint32_t total_rows = s.num_local * s.num_tokens;
    const uint32_t num_cores = std::min(total_rows, limits.grid.x * limits.grid.y);
    const auto selection = first_cores(limits.grid, num_cores);
    const auto& cores = selection.ranges;
    const uint32_t row_bytes = s.hidden * 2;
    const uint32_t row_page = round_up(row_bytes, limits.dram_alignment);
    const uint32_t chunk_entries = std::min(s.num_tokens, kMaxTokenChunkEntries);
    const uint32_t token_row_page = round_up(chunk_entries * 4, limits.dram_alignment);
    const uint32_t status_page = round_up(kStatusWords * 4, limits.dram_alignment);

    ProgramDescriptor program;
    program.cbs = {
        CBDescriptor{
            row_page * kRowsInFlight, cores, {CBFormatDescriptor{kCbRows, DataFormat::Float16_b, row_page, {}}}},
        CBDescriptor{limits.dram_alignment * s.num_local,
                     cores,
                     {CBFormatDescriptor{kCbCounts, DataFormat::UInt32, limits.dram_alignment, {}}}},
        CBDescriptor{token_row_page, cores, {CBFormatDescriptor{kCbTokenRow, DataFormat::UInt32, token_row_page, {}}}},
        CBDescriptor{status_page, cores, {CBFormatDescriptor{kCbStatus, DataFormat::UInt32, status_page, {}}}},
    };
    check_l1_budget(kOpName,
                    row_page * kRowsInFlight + limits.dram_alignment * s.num_local + token_row_page + status_page,
                    "H=" + std::to_string(s.hidden) + ", E_l=" + std::to_string(s.num_local));

    KernelDescriptor reader;
    reader.kernel_source = kernels_root + "/scatter_moe_input/dataflow/reader_gather_rows.cpp";
    reader.core_ranges = cores;
    for (uint32_t t = 0; t < kNumReaderTensors; ++t) {
        append_runtime_page_size_accessor_args(io[kReaderIo[t]], reader.compile_time_args);
    }
    reader.named_compile_time_args = {{named_arg::kCbRows, kCbRows},
                                      {named_arg::kCbCounts, kCbCounts},
                                      {named_arg::kCbTokenRow, kCbTokenRow},
                                      {named_arg::kCbStatus, kCbStatus}};
    reader.config = ReaderConfigDescriptor{};

    KernelDescriptor writer;
    writer.kernel_source = kernels_root + "/scatter_moe_input/dataflow/writer_rows.cpp";
    writer.core_ranges = cores;
    append_runtime_page_size_accessor_args(io[kOut], writer.compile_time_args);
    writer.named_compile_time_args = {{named_arg::kCbRows, kCbRows}};
    writer.config = WriterConfigDescriptor{};

    CachedProgram cached;
    for (uint32_t c = 0; c < num_cores; ++c) {
        const uint32_t begin = split_begin(total_rows, num_cores, c);
        const uint32_t end = split_begin(total_rows, num_cores, c + 1);
        std::vector<uint32_t> reader_args(reader_arg::kCount);
        for (uint32_t t = 0; t < kNumReaderTensors; ++t) {
            cached.address_slots.push_back({0, c, t, kReaderIo[t]});
            reader_args[t] = io[kReaderIo[t]].address;
        }
        reader_args[reader_arg::kNumTokens] = s.num_tokens;
        reader_args[reader_arg::kRowBytes] = row_bytes;
        reader_args[reader_arg::kNumLocal] = s.num_local;
        reader_args[reader_arg::kRowBegin] = begin;
        reader_args[reader_arg::kRowEnd] = end;
        reader_args[reader_arg::kReportsStatus] = c == 0 ? 1 : 0;
        reader_args[reader_arg::kChunkEntries] = chunk_entries;
        reader.runtime_args.emplace_back(selection.cores[c], std::move(reader_args));

        std::vector<uint32_t> writer_args(writer_arg::kCount);
        cached.address_slots.push_back({1, c, writer_arg::kOutAddr, kOut});
        writer_args[writer_arg::kOutAddr] = io[kOut].address;
        writer_args[writer_arg::kRowBytes] = row_bytes;
        writer_args[writer_arg::kRowBegin] = begin;
        writer_args[writer_arg::kRowEnd] = end;
        writer.runtime_args.emplace_back(selection.cores[c], std::move(writer_args));
    }
    program.kernels = {std::move(reader), std::move(writer)};
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::scatter_input
