// all_to_all_combine_dense: every slot row a device holds goes back to its source
// device and token; each device sums what it receives in ascending source position.
//
// inputs (per device, DRAM interleaved, ROW_MAJOR):
//   reduced (capacity, H) bf16 (local_reduce_moe_output over the dispatch slots),
//   slot_source (capacity, 2) uint32, num_slots (1,) uint32 (from all_to_all_dispatch_dense)
// outputs (per device, DRAM interleaved, ROW_MAJOR):
//   output (B, S, H) or (B, S, 1, H) bf16 or float32: sum over source positions, fp32 accumulation in
//     ascending position (bitwise reproducible),
//   partials (D, B, S, H) bf16: the rows received from each position (zero rows where a
//     position sent nothing when return_partials is set, unspecified otherwise),
//   presence (D*L, B*S) uint32 scratch, (2*D*L, B*S) above one presence window of tokens: page
//     q*L + (first link of core c) is 1 where core c of position q sent token t; the second half
//     holds, laid out alike, what this device's cores send (shared::presence_pages),
//   combine_status (1, kStatusWords) uint32 (see StatusWord)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/all_to_all_combine_dense/all_to_all_combine_dense_shared.hpp"
#include "ops/common/device_operation.hpp"
#include "ops/common/dispatch_line.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops::combine_dense {

namespace shared = ttnn_moe::all_to_all_combine_dense_shared;

inline const std::string kOpName = "all_to_all_combine_dense";

struct Attributes {
    MeshGeometry mesh;
    uint32_t batch = 0;
    uint32_t seq = 0;
    program::DataFormat output_dtype = program::DataFormat::Float16_b;  // or Float32
    bool unit_dim = false;  // output (B, S, 1, H), ttnn's form, instead of (B, S, H)
    bool return_partials = false;
    uint32_t num_links = 1;
    uint32_t max_packet_payload = 0;
    auto fields() const {
        return std::tie(mesh.rows, mesh.cols, mesh.cluster_axis, mesh.topology, batch, seq, output_dtype, unit_dim,
                        return_partials, num_links, max_packet_payload);
    }
};

struct Shapes {
    uint32_t capacity, hidden;
};

Shapes validate(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);
std::vector<program::TensorArg> output_specs(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);
CachedProgram create_program(const std::vector<program::TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs,
                             program::MeshCoordinate device,
                             const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids);

// The cores the op spreads over: C = min(num_links, grid width), (0, 0) .. (C - 1, 0).
uint32_t num_cores(const Attributes& attrs, const program::DeviceLimits& limits);

// The fabric workers: the data-movement kernel on each of the C cores, the links dealt out in
// contiguous blocks (shared::core_links): a core's semaphores hold few connections.
std::vector<FabricWorker> fabric_workers(const Attributes& attrs, const program::DeviceLimits& limits);

// The device operation (device_operation.hpp): a fabric line op.
struct Operation : LineOperation<Attributes, &output_specs, &create_program, &fabric_workers> {
    static constexpr const char* name = "all_to_all_combine_dense";
};

}  // namespace ttnn_moe::ops::combine_dense
