// Program of moe_bmm: reader, compute and writer kernels on every core of the grid.
// Everything that varies with the problem (sizes, addresses, the core's index) is a
// runtime arg, so one build of each kernel serves every shape; the compile-time args
// are the CB ids and the tensors' accessor descriptions (w's fixes its page size, the format's
// tile; x's, the addend's and the output's take theirs at run time, a tile or a row).
#include <stdexcept>
#include <string>

#include "ops/common/tensor_checks.hpp"
#include "ops/moe_bmm/moe_bmm_device_operation.hpp"
#include "ops/moe_bmm/moe_bmm_layout.hpp"
#include "ops/moe_bmm/moe_bmm_shared.hpp"
#include "program/tensor_accessor_args.hpp"

namespace ttnn_moe::ops::moe_bmm {

using namespace ttnn_moe::moe_bmm_shared;

namespace {

using program::CBDescriptor;
using program::CBFormatDescriptor;
using program::ComputeConfigDescriptor;
using program::CoreRangeSet;
using program::KernelDescriptor;
using program::TensorArg;

// Common runtime args of every kernel, `count` of them: the shape (common_arg), then
// room for the kernel's addresses, which the launch fills in (address slots).
std::vector<uint32_t> common_args(const Dims& dims, uint32_t count) {
    std::vector<uint32_t> args(count);
    args[common_arg::kNumExperts] = dims.num_experts;
    args[common_arg::kGrouped] = dims.grouped ? 1u : 0u;
    args[common_arg::kRows] = dims.rows;
    args[common_arg::kRowTiles] = dims.row_tiles;
    args[common_arg::kSlotBytes] = kRoutingSlotBytes;
    args[common_arg::kInnerTiles] = dims.inner_tiles;
    args[common_arg::kColTiles] = dims.col_tiles;
    args[common_arg::kInnerBlock] = dims.inner_block;
    args[common_arg::kRowBlock] = dims.row_block;
    args[common_arg::kOutputBlock] = dims.output_block;
    args[common_arg::kWeightHalves] = dims.weight_halves;
    args[common_arg::kAddend] = dims.addend ? 1u : 0u;
    args[common_arg::kRowMajorX] = dims.row_major_x ? 1u : 0u;
    args[common_arg::kRowMajorOut] = dims.row_major_out ? 1u : 0u;
    args[common_arg::kRowMajorAddend] = dims.row_major_addend ? 1u : 0u;
    return args;
}

// Per-core runtime args of the dataflow kernels (core_arg), cores in row-major order.
std::vector<std::pair<program::CoreCoord, std::vector<uint32_t>>> core_index_args(const CoreRangeSet& cores) {
    const auto list = cores.cores();
    std::vector<std::pair<program::CoreCoord, std::vector<uint32_t>>> args;
    args.reserve(list.size());
    for (uint32_t i = 0; i < list.size(); ++i) {
        std::vector<uint32_t> core(core_arg::kCount);
        core[core_arg::kCoreIndex] = i;
        core[core_arg::kNumCores] = static_cast<uint32_t>(list.size());
        args.push_back({list[i], std::move(core)});
    }
    return args;
}

// The reader's common args: the shape, its address slots, x's and the addend's page sizes (`addend` is x
// when there is none), the grid's size and the NOC coordinates of its columns and rows (reader_common_arg).
std::vector<uint32_t> reader_common_args(const Dims& dims, const TensorArg& x, const TensorArg& addend,
                                         const program::CoreCoord& grid, const program::DeviceLimits& device) {
    std::vector<uint32_t> args = common_args(dims, reader_common_arg::kCount);
    args[reader_common_arg::kXPageBytes] = program::aligned_page_size(x);
    args[reader_common_arg::kAddendPageBytes] = program::aligned_page_size(addend);
    args[reader_common_arg::kGridCols] = grid.x;
    args[reader_common_arg::kGridRows] = grid.y;
    // The NOC x of a column and y of a row are the same for every core of it on every chip.
    for (uint32_t x = 0; x < grid.x; ++x) args.push_back(device.noc_core("moe_bmm", {x, 0}).x);
    for (uint32_t y = 0; y < grid.y; ++y) args.push_back(device.noc_core("moe_bmm", {0, y}).y);
    return args;
}

std::string kernel_path(const Attributes& attributes, const char* relative) {
    return attributes.kernels_dir + "/moe_bmm/" + relative;
}

}  // namespace

CachedProgram create_program(const Attributes& attributes, const Inputs& inputs, const TensorArg& output,
                             const TensorArg& status, const program::DeviceLimits& device) {
    const Dims dims = validate(attributes, inputs);
    const CoreRangeSet cores{{{{0, 0}, {attributes.grid.x - 1, attributes.grid.y - 1}}}};

    // io tensor order of the launch: x, w, num_routed_tokens, [expert_offsets,] [addend,] output,
    // bmm_status.
    const uint32_t x_index = 0, w_index = 1, counts_index = 2;
    const uint32_t offsets_index = 3;
    const uint32_t addend_index = dims.grouped ? 4 : 3;
    const uint32_t output_index = addend_index + (dims.addend ? 1 : 0);
    const uint32_t status_index = output_index + 1;

    CachedProgram cached;
    auto& program = cached.program;
    for (const auto& cb : circular_buffers(dims, inputs.w.dtype)) {
        program.cbs.push_back(CBDescriptor{
            cb.page_size * cb.pages, cores, {CBFormatDescriptor{cb.index, cb.format, cb.page_size, std::nullopt}}});
    }

    for (const uint32_t id : {kSemXReady, kSemXValid, kSemWReady, kSemWValid}) {
        program.semaphores.push_back(program::SemaphoreDescriptor{id, program::CoreType::WORKER, cores, 0});
    }

    KernelDescriptor reader;
    reader.kernel_source = kernel_path(attributes, "dataflow/reader_moe_bmm.cpp");
    reader.core_ranges = cores;
    append_runtime_page_size_accessor_args(inputs.x, reader.compile_time_args);
    program::append_tensor_accessor_args(inputs.w, reader.compile_time_args);
    program::append_tensor_accessor_args(inputs.num_routed_tokens, reader.compile_time_args);
    const TensorArg& addend = inputs.addend ? *inputs.addend : inputs.x;  // the accessor's args either way
    append_runtime_page_size_accessor_args(addend, reader.compile_time_args);
    reader.named_compile_time_args = {{named_arg::kCbX, kCbX},
                                      {named_arg::kCbXRows, kCbXRows},
                                      {named_arg::kCbW, kCbW},
                                      {named_arg::kCbWork, kCbWork},
                                      {named_arg::kCbRouting, kCbRoutingReader},
                                      {named_arg::kCbAddend, kCbAddend},
                                      {named_arg::kCbAddendRows, kCbAddendRows},
                                      {named_arg::kSemXReady, kSemXReady},
                                      {named_arg::kSemXValid, kSemXValid},
                                      {named_arg::kSemWReady, kSemWReady},
                                      {named_arg::kSemWValid, kSemWValid}};
    reader.common_runtime_args = reader_common_args(dims, inputs.x, addend, attributes.grid, device);
    reader.runtime_args = core_index_args(cores);
    reader.config = program::ReaderConfigDescriptor{};

    KernelDescriptor writer;
    writer.kernel_source = kernel_path(attributes, "dataflow/writer_moe_bmm.cpp");
    writer.core_ranges = cores;
    program::append_tensor_accessor_args(inputs.num_routed_tokens, writer.compile_time_args);
    append_runtime_page_size_accessor_args(output, writer.compile_time_args);
    program::append_tensor_accessor_args(status, writer.compile_time_args);
    writer.named_compile_time_args = {{named_arg::kCbOut, kCbOut},
                                      {named_arg::kCbZero, kCbZero},
                                      {named_arg::kCbRouting, kCbRoutingWriter},
                                      {named_arg::kCbStatus, kCbStatus}};
    writer.common_runtime_args = common_args(dims, writer_common_arg::kCount);
    writer.common_runtime_args[writer_common_arg::kOutPageBytes] = program::aligned_page_size(output);
    writer.runtime_args = core_index_args(cores);
    writer.config = program::WriterConfigDescriptor{};

    KernelDescriptor compute;
    compute.kernel_source = kernel_path(attributes, "compute/moe_bmm.cpp");
    compute.core_ranges = cores;
    compute.named_compile_time_args = {{named_arg::kCbX, kCbX},           {named_arg::kCbXRows, kCbXRows},
                                       {named_arg::kCbW, kCbW},           {named_arg::kCbWork, kCbWork},
                                       {named_arg::kCbAddend, kCbAddend}, {named_arg::kCbAddendRows, kCbAddendRows},
                                       {named_arg::kCbOut, kCbOut},       {named_arg::kCbPartial, kCbPartial}};
    compute.common_runtime_args = common_args(dims, common_arg::kCount);
    ComputeConfigDescriptor compute_config;
    compute_config.math_fidelity = attributes.compute.math_fidelity;
    compute_config.fp32_dest_acc_en = attributes.compute.fp32_dest_acc_en;
    compute_config.math_approx_mode = attributes.compute.math_approx_mode;
    if (dims.fp32_partials) {
        // fp32 partial sums reload into DST unpacked straight to it: through srcA they would lose
        // mantissa bits on hardware.
        compute_config.unpack_to_dest_mode.assign(kNumCircularBuffers, program::UnpackToDestMode::Default);
        compute_config.unpack_to_dest_mode[kCbPartial] = program::UnpackToDestMode::UnpackToDestFp32;
    }
    compute.config = compute_config;

    program.kernels = {std::move(reader), std::move(writer), std::move(compute)};
    const uint32_t reader_kernel = 0, writer_kernel = 1;

    auto common_slot = [](uint32_t kernel, uint32_t arg, uint32_t tensor) {
        return AddressSlot{kernel, AddressSlot::kCommonArgs, arg, tensor};
    };
    cached.address_slots = {
        common_slot(reader_kernel, reader_common_arg::kXAddr, x_index),
        common_slot(reader_kernel, reader_common_arg::kWAddr, w_index),
        common_slot(reader_kernel, reader_common_arg::kCountsAddr, counts_index),
        common_slot(writer_kernel, writer_common_arg::kOutAddr, output_index),
        common_slot(writer_kernel, writer_common_arg::kCountsAddr, counts_index),
        common_slot(writer_kernel, writer_common_arg::kStatusAddr, status_index),
    };
    if (dims.grouped) {
        cached.address_slots.push_back(common_slot(reader_kernel, reader_common_arg::kOffsetsAddr, offsets_index));
        cached.address_slots.push_back(common_slot(writer_kernel, writer_common_arg::kOffsetsAddr, offsets_index));
    }
    if (dims.addend) {
        cached.address_slots.push_back(common_slot(reader_kernel, reader_common_arg::kAddendAddr, addend_index));
        cached.address_slots.push_back(common_slot(writer_kernel, writer_common_arg::kAddendAddr, addend_index));
    }
    return cached;
}

}  // namespace ttnn_moe::ops::moe_bmm
