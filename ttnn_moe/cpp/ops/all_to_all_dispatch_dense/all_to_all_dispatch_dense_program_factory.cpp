// Program of all_to_all_dispatch_dense on one device: a main data-movement kernel on
// core (0, 0) that exchanges per-expert assignment counts over the fabric, derives
// the line's packing plan from them (identical on every member), sends the rows of its
// share of the tokens once per remote destination device plus the list of its assignments
// there, fans received rows out to the token's other expert blocks and writes the
// metadata tensors. Row senders on cores (1, 0) .. (C - 1, 0), C = min(num_links, grid width),
// send the other shares of the token rows once the plan is laid out; the links are dealt out
// over the C cores. CBs serve as the
// kernels' L1 scratch.
#include <algorithm>

#include "ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_device_operation.hpp"
#include "ops/common/tensor_checks.hpp"

namespace ttnn_moe::ops::dispatch_dense {

using namespace program;
using namespace shared;

namespace {
// CB ids of the kernel's L1 scratch (named compile-time args).
enum Cb : uint8_t {
    kCbRow,
    kCbOwn,
    kCbCounts,
    kCbList,
    kCbMapping,
    kCbTables,
    kCbIdxImage,
    kCbWeightImage,
    kCbStage,
    kCbHeaders,
    kCbZeroRow,
    kCbSendPlan,
    kCbFinish,
    kCbSlotImage,
    kCbFanout,
    kCbGather,
    kCbCopy,
};
// Semaphore ids on the main core, and on the other cores of the first row.
enum Semaphore : uint32_t {
    kSemPlan = 0,
    kSemCounts = 1,
    kSemLists = 2,
    kSemPayload = 3,
    kSemGathered = 4,
    kSemTablesCopied = 5
};
enum FirstRowSemaphore : uint32_t { kSemGo = 0 };
// On the first row's cores past the row senders and on the second row's (their padding writers' start flag).
enum PaddingSemaphore : uint32_t { kSemPaddingGo = 1 };
// Kernel indices in the program; the gather-only kernel follows the last of them present.
enum Kernel : uint32_t { kMainKernel, kPaddingKernel, kSenderKernel };

// The tables' L1 on the main core: whole (T tokens of ids and weights, whole lists, `capacity` rows
// of images, every slot and fan-out copy) or streamed through windows (kStreamed in the shared
// header), whose size does not depend on T or the capacity.
struct TableWindows {
    bool streamed;
    uint32_t own_tokens, list_entries, image_rows, slot_image_bytes, fanout_bytes;

    static TableWindows whole(const Shapes& s) {
        return {false, s.tokens(), s.tokens() * s.top_k, s.capacity, s.capacity * 8, s.capacity * 8};
    }
    static TableWindows streaming(const Shapes& s, const Attributes& attrs, const program::DeviceLimits& limits) {
        return {true,
                std::min(s.tokens(), own_window_tokens(s.top_k)),
                std::min(s.tokens() * s.top_k, list_window_entries(attrs.max_packet_payload)),
                std::min(s.capacity, kRowWindowRows),
                kSlotWindow * limits.dram_alignment,
                kFanoutWindow * 8};
    }
};

// C: one core per link, as far as the first row of the worker grid reaches.
uint32_t num_row_senders(const Attributes& attrs, const program::DeviceLimits& limits) {
    return std::max(1u, std::min(attrs.num_links, limits.grid.x));
}

// Padding writer w: core (w, 0) of the first row, then (w - W, 1) of the second.
CoreCoord padding_writer_core(uint32_t writer, uint32_t grid_width) {
    return {writer % grid_width, writer / grid_width};
}

CoreRangeSet sender_cores(uint32_t num_senders) {
    return CoreRangeSet{{CoreRange{CoreCoord{1, 0}, CoreCoord{num_senders - 1, 0}}}};
}

// The row senders' kernel on cores (1, 0) .. (L - 1, 0) (each gets its fabric connections appended).
KernelDescriptor sender_kernel(const std::vector<TensorArg>& io, const std::string& kernels_root,
                               const program::DeviceLimits& limits, const Attributes& attrs, const Shapes& s,
                               const DispatchLine& line, const TableWindows& windows,
                               const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids) {
    const uint32_t num_senders = num_row_senders(attrs, limits);
    KernelDescriptor sender;
    sender.kernel_source = kernels_root + "/all_to_all_dispatch_dense/dataflow/send_rows.cpp";
    sender.core_ranges = sender_cores(num_senders);
    for (uint32_t i : {kX, kIds, kTokens, kSlotSource, kMapping, kWeights, kRoutingLists}) {
        append_runtime_page_size_accessor_args(io[i], sender.compile_time_args);
    }
    sender.named_compile_time_args = {
        {named_arg::kCbRow, kCbRow},         {named_arg::kCbStage, kCbStage},
        {named_arg::kCbHeaders, kCbHeaders}, {named_arg::kCbSendPlan, kCbSendPlan},
        {named_arg::kSemGo, kSemGo},         {named_arg::kSemPayload, kSemPayload},
        {named_arg::kCbFinish, kCbFinish},   {named_arg::kCbMapping, kCbMapping},
        {named_arg::kCbGather, kCbGather},   {named_arg::kSemGathered, kSemGathered},
        {named_arg::kCbTables, kCbTables},   {named_arg::kCbOwn, kCbOwn},
    };
    sender.config = WriterConfigDescriptor{};
    const CoreCoord main_noc = limits.noc_core(kOpName, {0, 0});
    for (uint32_t index = 1; index < num_senders; ++index) {
        std::vector<uint32_t> args(sender_arg::kRoutes);
        args[sender_arg::kXAddress] = io[kX].address;
        args[sender_arg::kIdsAddress] = io[kIds].address;
        args[sender_arg::kTokensAddress] = io[kTokens].address;
        args[sender_arg::kSlotSourceAddress] = io[kSlotSource].address;
        args[sender_arg::kMappingAddress] = io[kMapping].address;
        args[sender_arg::kWeightsAddress] = io[kWeights].address;
        args[sender_arg::kNumDevices] = attrs.mesh.num_devices();
        args[sender_arg::kMappingElementBytes] = s.mapping_element_bytes;
        args[sender_arg::kSender] = index;
        args[sender_arg::kNumSenders] = num_senders;
        args[sender_arg::kNumLinks] = sender_links(index, attrs.num_links, num_senders);
        args[sender_arg::kNumTokens] = s.tokens();
        args[sender_arg::kTopK] = s.top_k;
        args[sender_arg::kHidden] = s.hidden;
        args[sender_arg::kNumExperts] = s.num_experts;
        args[sender_arg::kLineSize] = attrs.mesh.line_size();
        args[sender_arg::kPosition] = line.position;
        args[sender_arg::kMaxPacketPayload] = attrs.max_packet_payload;
        args[sender_arg::kMainNocX] = main_noc.x;
        args[sender_arg::kMainNocY] = main_noc.y;
        args[sender_arg::kRoutingListsAddress] = io[kRoutingLists].address;
        args[sender_arg::kOwnCopied] = windows.own_tokens < s.tokens();
        args[sender_arg::kNumGatherCores] = limits.grid.x;
        append_route_args(attrs.mesh, line, fabric_node_ids, args);
        sender.runtime_args.emplace_back(CoreCoord{index, 0}, std::move(args));
    }
    return sender;
}

// The gather-only kernel on cores (C, 0) .. (G - 1, 0): their shares of the first reads and of the
// last writes.
KernelDescriptor gather_kernel(const std::vector<TensorArg>& io, const std::string& kernels_root,
                               const program::DeviceLimits& limits, const Attributes& attrs, const Shapes& s,
                               const DispatchLine& line, const TableWindows& windows, uint32_t num_senders) {
    KernelDescriptor gather;
    gather.kernel_source = kernels_root + "/all_to_all_dispatch_dense/dataflow/gather_reads.cpp";
    gather.core_ranges = CoreRangeSet{{CoreRange{CoreCoord{num_senders, 0}, CoreCoord{limits.grid.x - 1, 0}}}};
    for (uint32_t i : {kMapping, kIds, kWeights, kRoutingLists, kTokens, kSlotSource}) {
        append_runtime_page_size_accessor_args(io[i], gather.compile_time_args);
    }
    gather.named_compile_time_args = {
        {named_arg::kCbMapping, kCbMapping}, {named_arg::kCbGather, kCbGather}, {named_arg::kCbStage, kCbStage},
        {named_arg::kCbTables, kCbTables},   {named_arg::kCbOwn, kCbOwn},       {named_arg::kSemGathered, kSemGathered},
        {named_arg::kCbRow, kCbRow},         {named_arg::kCbFinish, kCbFinish}, {named_arg::kSemGo, kSemGo},
    };
    gather.config = WriterConfigDescriptor{};
    const CoreCoord main_noc = limits.noc_core(kOpName, {0, 0});
    for (uint32_t core = num_senders; core < limits.grid.x; ++core) {
        std::vector<uint32_t> args(gather_arg::kCount);
        args[gather_arg::kMappingAddress] = io[kMapping].address;
        args[gather_arg::kIdsAddress] = io[kIds].address;
        args[gather_arg::kWeightsAddress] = io[kWeights].address;
        args[gather_arg::kTokensAddress] = io[kTokens].address;
        args[gather_arg::kSlotSourceAddress] = io[kSlotSource].address;
        args[gather_arg::kRoutingListsAddress] = io[kRoutingLists].address;
        args[gather_arg::kOwnCopied] = windows.own_tokens < s.tokens();
        args[gather_arg::kCore] = core;
        args[gather_arg::kNumCores] = limits.grid.x;
        args[gather_arg::kNumTokens] = s.tokens();
        args[gather_arg::kTopK] = s.top_k;
        args[gather_arg::kNumExperts] = s.num_experts;
        args[gather_arg::kNumDevices] = attrs.mesh.num_devices();
        args[gather_arg::kMappingElementBytes] = s.mapping_element_bytes;
        args[gather_arg::kPosition] = line.position;
        args[gather_arg::kMainNocX] = main_noc.x;
        args[gather_arg::kMainNocY] = main_noc.y;
        args[gather_arg::kHidden] = s.hidden;
        args[gather_arg::kLineSize] = attrs.mesh.line_size();
        gather.runtime_args.emplace_back(CoreCoord{core, 0}, std::move(args));
    }
    return gather;
}

}  // namespace

std::vector<FabricWorker> fabric_workers(const Attributes& attrs, const program::DeviceLimits& limits) {
    const uint32_t num_senders = num_row_senders(attrs, limits);
    std::vector<FabricWorker> workers;
    for (uint32_t sender = 0; sender < num_senders; ++sender) {
        workers.push_back({sender == 0 ? kMainKernel : kSenderKernel,
                           {sender, 0},
                           sender_first_link(sender, attrs.num_links, num_senders),
                           sender_links(sender, attrs.num_links, num_senders),
                           attrs.mesh});
    }
    return workers;
}

CachedProgram create_program(const std::vector<TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs, MeshCoordinate device,
                             const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids) {
    validate_line_program_inputs(kOpName, io.size(), kNumIo, limits.grid);
    const Shapes s = validate({io.begin(), io.begin() + 4}, attrs);
    const MeshGeometry& mesh = attrs.mesh;
    const DispatchLine line = dispatch_line(mesh, device);
    const uint32_t line_size = mesh.line_size();

    const CoreCoord core{0, 0};
    const CoreRangeSet cores{{CoreRange{core, core}}};
    const uint32_t num_senders = num_row_senders(attrs, limits);
    // The main core and the row senders: CBs they share sit at one address on all of them.
    const CoreRangeSet all_senders{{CoreRange{core, CoreCoord{num_senders - 1, 0}}}};
    // The padding writers: the grid's first two rows (the padding rows' DRAM writes bound decode).
    const uint32_t num_padding_writers = limits.grid.x * std::min(limits.grid.y, 2u);
    const CoreRangeSet padding_cores{
        {CoreRange{core, CoreCoord{limits.grid.x - 1, num_padding_writers / limits.grid.x - 1}}}};
    // The first reads and the last writes are shared by the whole first row: the senders, then
    // gather-only cores (and its padding writers share the fan-out copies).
    const uint32_t num_gather_cores = limits.grid.x;
    const CoreRangeSet gather_cores{{CoreRange{core, CoreCoord{num_gather_cores - 1, 0}}}};
    // The tables whole in L1 when they fit the budget beside the rest, else streamed.
    TableWindows windows = TableWindows::whole(s);
    ProgramDescriptor program;
    auto lay_out_cbs = [&]() {
        program.cbs = {
            // two token rows: one is read while the other is sent or copied
            scratch_cb(gather_cores, kCbRow, DataFormat::Float16_b, 2 * round_up(s.hidden * 2, limits.dram_alignment)),
            scratch_cb(gather_cores, kCbOwn, DataFormat::UInt32, windows.own_tokens * s.top_k * kOwnEntryBytes),
            scratch_cb(cores, kCbCounts, DataFormat::UInt32,
                       line_size * round_up(s.num_experts * 4, limits.dram_alignment)),
            scratch_cb(cores, kCbList, DataFormat::UInt32, windows.list_entries * kListEntryBytes),
            scratch_cb(
                gather_cores, kCbMapping, DataFormat::UInt32,
                kMappingBatchRows * round_up(mesh.num_devices() * s.mapping_element_bytes, limits.dram_alignment)),
            scratch_cb(padding_cores, kCbTables, DataFormat::UInt32, kPlanTables * s.num_experts * 4),
            scratch_cb(cores, kCbIdxImage, DataFormat::UInt32, windows.image_rows * 4),
            scratch_cb(cores, kCbWeightImage, DataFormat::Float16_b, windows.image_rows * 2),
            scratch_cb(gather_cores, kCbStage, DataFormat::UInt32, kStageSlots * kStageBytes),
            scratch_cb(all_senders, kCbHeaders, DataFormat::UInt32, kHeaderSlotBytes),
            // the padding writers' zero row
            scratch_cb(padding_cores, kCbZeroRow, DataFormat::Float16_b, round_up(s.hidden * 2, limits.dram_alignment)),
            scratch_cb(all_senders, kCbSendPlan, DataFormat::UInt32,
                       (kSendPlanFixedTables + num_senders) * s.num_experts * 4),
            scratch_cb(gather_cores, kCbFinish, DataFormat::UInt32, kFinishBytes),
            scratch_cb(gather_cores, kCbGather, DataFormat::UInt32, kGatherBytes),
            // the used slots' slot_source entries and the fan-out copies (whole: for the senders' last writes)
            scratch_cb(cores, kCbSlotImage, DataFormat::UInt32, windows.slot_image_bytes),
            scratch_cb(cores, kCbFanout, DataFormat::UInt32, windows.fanout_bytes),
            // the padding writers' finish block and two row buffers for their share of the fan-out copies
            scratch_cb(
                gather_cores, kCbCopy, DataFormat::UInt32,
                round_up(kFinishBytes, limits.dram_alignment) + 2 * round_up(s.hidden * 2, limits.dram_alignment)),
        };
    };
    auto l1_bytes = [&]() {
        uint32_t bytes = 0;
        for (const auto& cb : program.cbs) bytes += cb.total_size;
        return bytes;
    };
    lay_out_cbs();
    if (l1_bytes() > kL1BudgetBytes) {
        windows = TableWindows::streaming(s, attrs, limits);
        lay_out_cbs();
    }
    check_l1_budget(kOpName, l1_bytes(),
                    "E=" + std::to_string(s.num_experts) + ", capacity=" + std::to_string(s.capacity) +
                        ", T=" + std::to_string(s.tokens()) + ", K=" + std::to_string(s.top_k) +
                        ", H=" + std::to_string(s.hidden) + ", D=" + std::to_string(line_size));
    for (uint32_t id : {kSemPlan, kSemCounts, kSemLists, kSemPayload}) {
        program.semaphores.push_back(SemaphoreDescriptor{id, CoreType::WORKER, cores, 0});
    }
    if (num_gather_cores > 1) {
        const CoreRangeSet others{{CoreRange{CoreCoord{1, 0}, CoreCoord{num_gather_cores - 1, 0}}}};
        program.semaphores.push_back(SemaphoreDescriptor{kSemGo, CoreType::WORKER, others, 0});
    }
    if (num_gather_cores > 1) {
        program.semaphores.push_back(SemaphoreDescriptor{kSemGathered, CoreType::WORKER, cores, 0});
    }
    if (num_padding_writers > 1) {
        program.semaphores.push_back(SemaphoreDescriptor{kSemTablesCopied, CoreType::WORKER, cores, 0});
    }
    if (num_padding_writers > num_senders) {
        CoreRangeSet padding_only;
        if (num_gather_cores > num_senders) {
            padding_only.ranges.push_back(CoreRange{CoreCoord{num_senders, 0}, CoreCoord{num_gather_cores - 1, 0}});
        }
        if (num_padding_writers > num_gather_cores) {
            padding_only.ranges.push_back(CoreRange{CoreCoord{0, 1}, CoreCoord{limits.grid.x - 1, 1}});
        }
        program.semaphores.push_back(SemaphoreDescriptor{kSemPaddingGo, CoreType::WORKER, padding_only, 0});
    }

    KernelDescriptor kernel;
    kernel.kernel_source = kernels_root + "/all_to_all_dispatch_dense/dataflow/dispatch_dense.cpp";
    kernel.core_ranges = cores;
    for (uint32_t i = 0; i < kNumIo; ++i) append_runtime_page_size_accessor_args(io[i], kernel.compile_time_args);
    kernel.named_compile_time_args = {
        {named_arg::kCbRow, kCbRow},
        {named_arg::kCbOwn, kCbOwn},
        {named_arg::kCbCounts, kCbCounts},
        {named_arg::kCbList, kCbList},
        {named_arg::kCbMapping, kCbMapping},
        {named_arg::kCbTables, kCbTables},
        {named_arg::kCbIdxImage, kCbIdxImage},
        {named_arg::kCbWeightImage, kCbWeightImage},
        {named_arg::kCbStage, kCbStage},
        {named_arg::kCbHeaders, kCbHeaders},
        {named_arg::kSemPlan, kSemPlan},
        {named_arg::kSemCounts, kSemCounts},
        {named_arg::kSemLists, kSemLists},
        {named_arg::kSemPayload, kSemPayload},
        {named_arg::kCbSendPlan, kCbSendPlan},
        {named_arg::kSemGo, kSemGo},
        {named_arg::kCbFinish, kCbFinish},
        {named_arg::kCbSlotImage, kCbSlotImage},
        {named_arg::kCbFanout, kCbFanout},
        {named_arg::kCbGather, kCbGather},
        {named_arg::kSemGathered, kSemGathered},
    };
    kernel.config = WriterConfigDescriptor{};

    // The padding writers on the other data-movement RISC (and NOC) of the first two rows' cores.
    KernelDescriptor padding;
    padding.kernel_source = kernels_root + "/all_to_all_dispatch_dense/dataflow/write_padding.cpp";
    padding.core_ranges = padding_cores;
    append_runtime_page_size_accessor_args(io[kTokens], padding.compile_time_args);
    padding.named_compile_time_args = {{named_arg::kCbTables, kCbTables},
                                       {named_arg::kCbZeroRow, kCbZeroRow},
                                       {named_arg::kSemPlan, kSemPlan},
                                       {named_arg::kSemGo, kSemGo},
                                       {named_arg::kSemPaddingGo, kSemPaddingGo},
                                       {named_arg::kSemTablesCopied, kSemTablesCopied},
                                       {named_arg::kCbCopy, kCbCopy},
                                       {named_arg::kCbFinish, kCbFinish}};
    padding.config = ReaderConfigDescriptor{};
    const CoreCoord main_noc = limits.noc_core(kOpName, core);
    for (uint32_t writer = 0; writer < num_padding_writers; ++writer) {
        std::vector<uint32_t> padding_args(padding_arg::kCount);
        padding_args[padding_arg::kTokensAddress] = io[kTokens].address;
        padding_args[padding_arg::kHidden] = s.hidden;
        padding_args[padding_arg::kNumExperts] = s.num_experts;
        padding_args[padding_arg::kLocalExperts] = s.local_experts;
        padding_args[padding_arg::kLineSize] = line_size;
        padding_args[padding_arg::kPosition] = line.position;
        padding_args[padding_arg::kWriter] = writer;
        padding_args[padding_arg::kNumWriters] = num_padding_writers;
        padding_args[padding_arg::kNumSenders] = num_senders;
        padding_args[padding_arg::kMainNocX] = main_noc.x;
        padding_args[padding_arg::kMainNocY] = main_noc.y;
        padding_args[padding_arg::kFirstRowWriters] = num_gather_cores;
        for (uint32_t other = num_senders; writer == 0 && other < num_padding_writers; ++other) {
            const CoreCoord noc = limits.noc_core(kOpName, padding_writer_core(other, limits.grid.x));
            padding_args.push_back(noc.x);
            padding_args.push_back(noc.y);
        }
        padding.runtime_args.emplace_back(padding_writer_core(writer, limits.grid.x), std::move(padding_args));
    }

    CachedProgram cached;
    std::vector<uint32_t> args(dataflow_arg::kLineDevices);
    for (uint32_t i = 0; i < kNumIo; ++i) {
        cached.address_slots.push_back({0, 0, i, i});
        args[i] = io[i].address;
    }
    args[dataflow_arg::kNumTokens] = s.tokens();
    args[dataflow_arg::kTopK] = s.top_k;
    args[dataflow_arg::kHidden] = s.hidden;
    args[dataflow_arg::kNumExperts] = s.num_experts;
    args[dataflow_arg::kLocalExperts] = s.local_experts;
    args[dataflow_arg::kNumDevices] = mesh.num_devices();
    args[dataflow_arg::kLineSize] = line_size;
    args[dataflow_arg::kPosition] = line.position;
    args[dataflow_arg::kCapacity] = s.capacity;
    args[dataflow_arg::kMaxPacketPayload] = attrs.max_packet_payload;
    args[dataflow_arg::kMappingElementBytes] = s.mapping_element_bytes;
    args[dataflow_arg::kNumLinks] = attrs.num_links;
    args[dataflow_arg::kNumSenders] = num_senders;
    args[dataflow_arg::kStreamed] = windows.streamed;
    args[dataflow_arg::kOwnWindow] = windows.own_tokens;
    args[dataflow_arg::kListWindow] = windows.list_entries;
    args[dataflow_arg::kRowWindow] = windows.image_rows;
    args[dataflow_arg::kNumGatherCores] = num_gather_cores;
    args.insert(args.end(), line.device_indices.begin(), line.device_indices.end());
    append_route_args(mesh, line, fabric_node_ids, args);
    for (uint32_t other = 1; other < num_gather_cores; ++other) {
        const CoreCoord noc = limits.noc_core(kOpName, {other, 0});
        args.push_back(noc.x);
        args.push_back(noc.y);
    }
    kernel.runtime_args.emplace_back(core, std::move(args));
    program.kernels.push_back(std::move(kernel));
    for (uint32_t writer = 0; writer < num_padding_writers; ++writer) {
        cached.address_slots.push_back({kPaddingKernel, writer, padding_arg::kTokensAddress, kTokens});
    }
    program.kernels.push_back(std::move(padding));
    if (num_senders > 1) {
        program.kernels.push_back(sender_kernel(io, kernels_root, limits, attrs, s, line, windows, fabric_node_ids));
        for (uint32_t sender = 1; sender < num_senders; ++sender) {
            for (const auto& [arg, tensor] : {std::pair{sender_arg::kXAddress, kX},
                                              {sender_arg::kIdsAddress, kIds},
                                              {sender_arg::kTokensAddress, kTokens},
                                              {sender_arg::kSlotSourceAddress, kSlotSource},
                                              {sender_arg::kMappingAddress, kMapping},
                                              {sender_arg::kWeightsAddress, kWeights},
                                              {sender_arg::kRoutingListsAddress, kRoutingLists}}) {
                cached.address_slots.push_back({kSenderKernel, sender - 1, arg, tensor});
            }
        }
    }
    if (num_gather_cores > num_senders) {
        const uint32_t gather_kernel_index = program.kernels.size();
        program.kernels.push_back(gather_kernel(io, kernels_root, limits, attrs, s, line, windows, num_senders));
        for (uint32_t core = num_senders; core < num_gather_cores; ++core) {
            for (const auto& [arg, tensor] : {std::pair{gather_arg::kMappingAddress, kMapping},
                                              {gather_arg::kIdsAddress, kIds},
                                              {gather_arg::kWeightsAddress, kWeights},
                                              {gather_arg::kTokensAddress, kTokens},
                                              {gather_arg::kSlotSourceAddress, kSlotSource},
                                              {gather_arg::kRoutingListsAddress, kRoutingLists}}) {
                cached.address_slots.push_back({gather_kernel_index, core - num_senders, arg, tensor});
            }
        }
    }
    cached.program = std::move(program);
    return cached;
}

}  // namespace ttnn_moe::ops::dispatch_dense
