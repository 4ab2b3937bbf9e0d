// all_to_all_dispatch_dense: every device of a dispatch line receives, packed by
// local expert into tile-aligned blocks, the token rows its line routes to it.
//
// inputs (per device, DRAM interleaved, ROW_MAJOR):
//   x (B, S, H) bf16, topk_indices (B, S, K) uint32, topk_weights (B, S, K) bf16,
//   expert_mapping (1, 1, E, N) uint16/uint32/int32 one-hot (expert -> device, row-major index)
// outputs (per device, DRAM interleaved, ROW_MAJOR):
//   tokens (capacity, H) bf16, num_routed_tokens (E_l, 1) uint32, expert_offsets (E_l, 1) uint32,
//   token_idx_map (capacity,) uint32, routed_token_weights (capacity,) bf16,
//   slot_source (capacity, 2) uint32, num_slots (1,) uint32,
//   dispatch_status (1, kStatusWords) uint32 (see StatusWord),
//   routing_counts (D, E) uint32: scratch receiving every line member's assignments per line expert,
//   routing_lists (D, 2*T*K) uint32: scratch receiving each member's (token, expert, weight)
//     list of its assignments to this device's experts
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "ops/common/device_operation.hpp"
#include "ops/common/dispatch_line.hpp"
#include "program/tensor_arg.hpp"

namespace ttnn_moe::ops::dispatch_dense {

namespace shared = ttnn_moe::all_to_all_dispatch_dense_shared;

inline const std::string kOpName = "all_to_all_dispatch_dense";

struct Attributes {
    MeshGeometry mesh;
    uint32_t capacity = 0;            // rows per device; 0 = the worst case (default_capacity)
    uint32_t num_links = 1;           // fabric links per direction, one row-sending core each
    uint32_t max_packet_payload = 0;  // bytes per fabric packet payload (the fabric's channel buffer)
    auto fields() const {
        return std::tie(mesh.rows, mesh.cols, mesh.cluster_axis, mesh.topology, capacity, num_links,
                        max_packet_payload);
    }
};

struct Shapes {
    uint32_t batch, seq, hidden, top_k, num_experts, local_experts, capacity;
    uint32_t mapping_element_bytes;
    uint32_t tokens() const { return batch * seq; }
};

// Rows that always suffice with distinct experts per token (the default; docs/ops/all_to_all_dispatch_dense.md).
uint32_t default_capacity(uint32_t tokens_per_device, uint32_t top_k, uint32_t line_size, uint32_t local_experts);

Shapes validate(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);
std::vector<program::TensorArg> output_specs(const std::vector<program::TensorArg>& inputs, const Attributes& attrs);

// io = the 4 inputs then the 10 outputs. One program per device; the dispatch kernel's
// runtime args end where the fabric connection block [has_forward][args][has_backward][args]
// is appended by the target's setup_fabric_connection.
CachedProgram create_program(const std::vector<program::TensorArg>& io, const std::string& kernels_root,
                             const program::DeviceLimits& limits, const Attributes& attrs,
                             program::MeshCoordinate device,
                             const std::vector<std::pair<uint32_t, uint32_t>>& fabric_node_ids);

// The fabric workers: the main kernel on core (0, 0) and row sender s on core (s, 0), s < C =
// min(num_links, grid width), the links dealt out in contiguous blocks (shared::sender_links): a
// core's semaphores hold few connections.
std::vector<FabricWorker> fabric_workers(const Attributes& attrs, const program::DeviceLimits& limits);

// The device operation (device_operation.hpp): a fabric line op.
struct Operation : LineOperation<Attributes, &output_specs, &create_program, &fabric_workers> {
    static constexpr const char* name = "all_to_all_dispatch_dense";
};

}  // namespace ttnn_moe::ops::dispatch_dense
