// Program of all_to_all_combine_dense on one device, spread over S cores: the senders (0, 0) ..
// (C - 1, 0), C = min(num_links, grid width), each with its own block of the fabric links, and up
// to kMaxSumCores in all (the first cores of the grid, row by row) that sum. On every sender a
// data-movement kernel sends its share of the used slot rows to (source position, token) of the
// partials buffer on their source devices and tells each peer which tokens it sent (one presence
// page per peer and sender); once every sender's received rows have landed, every core feeds the
// partials of its share of the tokens, in ascending source position, to a compute kernel that sums
// them with fp32 accumulation, and writes the sums back; a partial reader on the core's other
// data-movement RISC reads half of them.
#include <algorithm>

#include "ops/all_to_all_combine_dense/all_to_all_combine_dense_device_operation.hpp"
#include "ops/common/tensor_checks.hpp"

namespace ttnn_moe::ops::combine_dense {

using namespace program;
using namespace shared;

namespace {
// CB ids (named compile-time args of the kernels).
enum Cb : uint8_t {
    kCbRow,
    kCbPartial,
    kCbOut,
    kCbPresence,
    kCbStage,
    kCbHeaders,
    kCbAcc,
    kCbCount,
    kCbStatus,
};
// Semaphore ids on the kernels' cores.
enum Semaphore : uint32_t {
    kSemInit = 0,
    kSemPartials = 1,
    kSemWindowsMerged = 2,
    kSemWindowsRead = 3,
    kSemReady = 4,
};
// Kernel indices in the program.
enum Kernel : uint32_t { kDataflowKernel, kSumKernel, kReaderKernel };

}  // namespace

uint32_t num_cores(const Attributes& attrs, const program::DeviceLimits& limits) {
    return std::max(1u, std::min(attrs.num_links, limits.grid.x));
}

namespace {
// S: the senders and the cores that only sum, kMaxSumCores at most as far as the grid reaches.
uint32_t num_sum_cores(const Attributes& attrs, const program::DeviceLimits& limits) {
    return std::max(num_cores(attrs, limits), std::min(kMaxSumCores, limits.grid.x * limits.grid.y));
}
}  // namespace

std::vector<FabricWorker> fabric_workers(const Attributes& attrs, const program::DeviceLimits& limits) {
    const uint32_t cores = num_cores(attrs, limits);
    std::vector<FabricWorker> workers;
    for (uint32_t c = 0; c < cores; ++c) {
        workers.push_back({kDataflowKernel,
                           {c, 0},
                           core_first_link(c, attrs.num_links, cores),
                           core_links(c, attrs.num_links, cores),
                           attrs.mesh});
    }
    return workers;
}

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs, MeshCoordinate device,
                             const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids) {
    validate_line_program_inputs(kOpName, io.size(), kNumIo, limits.grid);
    const Shapes s = validate({io.begin(), io.begin() + 3}, attrs);
    const MeshGeometry& mesh = attrs.mesh;
    const DispatchLine line = dispatch_line(mesh, device);
    const uint32_t line_size = mesh.line_size();
    const uint32_t tokens = attrs.batch * attrs.seq;
    const uint32_t presence_stride =
        round_up(presence_row_words(tokens, limits.dram_alignment) * 4, limits.dram_alignment);
    const uint32_t chunks = (s.hidden + kTileElements - 1) / kTileElements;
    // A token's partial row chunks, line_size pages per chunk.
    const uint32_t token_block_bytes = line_size * chunks * kTileElements * 2;

    const uint32_t num_c = num_cores(attrs, limits);
    const uint32_t num_s = num_sum_cores(attrs, limits);
    const uint32_t merge_pages = presence_merge_pages(line_size, num_c, presence_stride);
    const CoreSelection selection = first_cores(limits.grid, num_s);  // the senders first: (c, 0), c < C
    const CoreRangeSet& cores = selection.ranges;
    ProgramDescriptor program;
    program.cbs = {
        // 2 x kRowsPerRead reduced rows: kRowsPerRead are read while the others are sent
        scratch_cb(cores, kCbRow, DataFormat::Float16_b,
                   2 * kRowsPerRead * round_up(s.hidden * 2, limits.dram_alignment)),
        // partial rows fed to the compute kernel, two tokens' worth at most (one where L1 is short,
        // below); its fp32 accumulator (a row) and two tokens' summed chunks (one is written out
        // while the next is summed)
        CBDescriptor{2 * token_block_bytes,
                     cores,
                     {CBFormatDescriptor{kCbPartial, DataFormat::Float16_b, kTileElements * 2, std::nullopt}}},
        CBDescriptor{chunks * kTileElements * 4,
                     cores,
                     {CBFormatDescriptor{kCbAcc, DataFormat::Float32, kTileElements * 4, std::nullopt}}},
        CBDescriptor{2 * chunks * kTileElements * element_bytes(attrs.output_dtype),
                     cores,
                     {CBFormatDescriptor{kCbOut, attrs.output_dtype, kTileElements * element_bytes(attrs.output_dtype),
                                         std::nullopt}}},
        // D presence rows of a window of tokens, and the page windows read in at a time to be merged
        scratch_cb(cores, kCbPresence, DataFormat::UInt32, (line_size + merge_pages) * presence_stride),
        scratch_cb(cores, kCbStage, DataFormat::UInt32, std::max(kStageBytes, kSlotBatch * limits.dram_alignment)),
        scratch_cb(cores, kCbHeaders, DataFormat::UInt32, kHeaderSlotBytes),
        // partials of each next token, read by the compute kernel (read_tile_value): one page more
        // than the tokens a batch of rows can span, so the reader never waits on it with a batch open
        scratch_cb(cores, kCbCount, DataFormat::UInt32, (kReadBatchRows + 1) * common_shared::kScratchPageBytes),
        // every core's status record, merged by core 0
        scratch_cb(cores, kCbStatus, DataFormat::UInt32, num_c * kStageBytes),
    };
    uint32_t l1_bytes = 0;
    for (const auto& cb : program.cbs) l1_bytes += cb.total_size;
    if (l1_bytes > kL1BudgetBytes) {
        // Long lines at a large H (32 devices at H = 7168): one token's block, each token's reads then
        // waiting for the previous token's sum.
        for (auto& cb : program.cbs) {
            if (cb.format_descriptors.front().buffer_index == kCbPartial) cb.total_size = token_block_bytes;
        }
        l1_bytes -= token_block_bytes;
    }
    uint32_t partial_ring_rows = 0;  // partial rows cb_partial holds
    for (const auto& cb : program.cbs) {
        if (cb.format_descriptors.front().buffer_index == kCbPartial)
            partial_ring_rows = cb.total_size / (chunks * kTileElements * 2);
    }
    check_l1_budget(
        kOpName, l1_bytes,
        "T=" + std::to_string(tokens) + ", H=" + std::to_string(s.hidden) + ", D=" + std::to_string(line_size));
    for (uint32_t id : {kSemInit, kSemPartials, kSemWindowsMerged, kSemWindowsRead, kSemReady}) {
        program.semaphores.push_back(SemaphoreDescriptor{id, CoreType::WORKER, cores, 0});
    }

    KernelDescriptor kernel;
    kernel.kernel_source = kernels_root + "/all_to_all_combine_dense/dataflow/combine_dense.cpp";
    kernel.core_ranges = cores;
    for (uint32_t i = 0; i < kNumIo; ++i) append_runtime_page_size_accessor_args(io[i], kernel.compile_time_args);
    kernel.named_compile_time_args = {
        {named_arg::kCbRow, kCbRow},
        {named_arg::kCbPartial, kCbPartial},
        {named_arg::kCbOut, kCbOut},
        {named_arg::kCbCount, kCbCount},
        {named_arg::kCbPresence, kCbPresence},
        {named_arg::kCbStage, kCbStage},
        {named_arg::kCbHeaders, kCbHeaders},
        {named_arg::kSemInit, kSemInit},
        {named_arg::kSemPartials, kSemPartials},
        {named_arg::kSemWindowsMerged, kSemWindowsMerged},
        {named_arg::kSemWindowsRead, kSemWindowsRead},
        {named_arg::kCbStatus, kCbStatus},
        {named_arg::kSemReady, kSemReady},
    };
    kernel.config = WriterConfigDescriptor{};

    // The partial reader on the other data-movement RISC (and NOC).
    KernelDescriptor reader;
    reader.kernel_source = kernels_root + "/all_to_all_combine_dense/dataflow/read_partials.cpp";
    reader.core_ranges = cores;
    append_runtime_page_size_accessor_args(io[kPartials], reader.compile_time_args);
    reader.named_compile_time_args = {{named_arg::kCbPartial, kCbPartial},
                                      {named_arg::kCbCount, kCbCount},
                                      {named_arg::kCbPresence, kCbPresence},
                                      {named_arg::kSemWindowsMerged, kSemWindowsMerged},
                                      {named_arg::kSemWindowsRead, kSemWindowsRead}};
    reader.config = ReaderConfigDescriptor{};
    for (uint32_t c = 0; c < num_s; ++c) {
        std::vector<uint32_t> reader_args(reader_arg::kCount);
        reader_args[reader_arg::kPartialsAddress] = io[kPartials].address;
        reader_args[reader_arg::kNumTokens] = tokens;
        reader_args[reader_arg::kFirstToken] = share_start(c, tokens, num_s);
        reader_args[reader_arg::kEndToken] = share_start(c + 1, tokens, num_s);
        reader_args[reader_arg::kHidden] = s.hidden;
        reader_args[reader_arg::kLineSize] = line_size;
        reader_args[reader_arg::kPresenceStride] = presence_stride;
        reader_args[reader_arg::kPartialRows] = partial_ring_rows;
        reader.runtime_args.emplace_back(selection.cores[c], std::move(reader_args));
    }

    KernelDescriptor sum;
    sum.kernel_source = kernels_root + "/all_to_all_combine_dense/compute/sum_partials.cpp";
    sum.core_ranges = cores;
    sum.named_compile_time_args = {{named_arg::kCbPartial, kCbPartial},
                                   {named_arg::kCbAcc, kCbAcc},
                                   {named_arg::kCbOut, kCbOut},
                                   {named_arg::kCbCount, kCbCount}};
    ComputeConfigDescriptor sum_config;
    sum_config.math_fidelity = MathFidelity::HiFi4;
    sum_config.fp32_dest_acc_en = true;
    sum.config = sum_config;
    for (uint32_t c = 0; c < num_s; ++c) {
        std::vector<uint32_t> sum_args(compute_arg::kCount);
        sum_args[compute_arg::kNumTokens] = share_start(c + 1, tokens, num_s) - share_start(c, tokens, num_s);
        sum_args[compute_arg::kNumChunks] = chunks;
        sum.runtime_args.emplace_back(selection.cores[c], std::move(sum_args));
    }

    CachedProgram cached;
    for (uint32_t c = 0; c < num_s; ++c) {
        std::vector<uint32_t> args(dataflow_arg::kRoutes);
        for (uint32_t i = 0; i < kNumIo; ++i) {
            cached.address_slots.push_back({kDataflowKernel, c, i, i});
            args[i] = io[i].address;
        }
        args[dataflow_arg::kNumTokens] = tokens;
        args[dataflow_arg::kHidden] = s.hidden;
        args[dataflow_arg::kLineSize] = line_size;
        args[dataflow_arg::kPosition] = line.position;
        args[dataflow_arg::kCapacity] = s.capacity;
        args[dataflow_arg::kMaxPacketPayload] = attrs.max_packet_payload;
        args[dataflow_arg::kOutputIsFp32] = attrs.output_dtype == DataFormat::Float32 ? 1u : 0u;
        args[dataflow_arg::kReturnPartials] = attrs.return_partials ? 1u : 0u;
        args[dataflow_arg::kPresenceStride] = presence_stride;
        args[dataflow_arg::kPresenceMergePages] = merge_pages;
        args[dataflow_arg::kNumLinks] = attrs.num_links;
        args[dataflow_arg::kCore] = c;
        args[dataflow_arg::kNumCores] = num_c;
        args[dataflow_arg::kNumSumCores] = num_s;
        append_route_args(mesh, line, fabric_node_ids, args);
        for (uint32_t other = 0; other < num_s; ++other) {
            const CoreCoord noc = num_s > 1 ? limits.noc_core(kOpName, selection.cores[other]) : CoreCoord{0, 0};
            args.push_back(noc.x);
            args.push_back(noc.y);
        }
        kernel.runtime_args.emplace_back(selection.cores[c], std::move(args));
        cached.address_slots.push_back({kReaderKernel, c, reader_arg::kPartialsAddress, kPartials});
    }
    program.kernels.push_back(std::move(kernel));
    program.kernels.push_back(std::move(sum));
    program.kernels.push_back(std::move(reader));
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::combine_dense
