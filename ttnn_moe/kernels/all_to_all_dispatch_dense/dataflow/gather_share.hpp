// The first reads of all_to_all_dispatch_dense, shared by the row senders (core c of C reads share
// c): expert_mapping rows (one page each), and this device's topk ids and weights (two pages a
// token). Each core gathers its share into the main core's L1 over the NOC: per expert the device
// its mapping row marks (kNone when the row is not one-hot), per token its ids (uint32) and weights
// (bf16) where the main kernel (dispatch_dense.cpp) keeps them (its L1, or their DRAM copy when the
// tables stream), so the small reads of the whole device go out from C cores at once.
#pragma once

#include <cstdint>

#include "../../../cpp/ops/all_to_all_dispatch_dense/all_to_all_dispatch_dense_shared.hpp"
#include "../../common/dataflow/expert_mapping.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "finish_share.hpp"

namespace gather_share {

using namespace ttnn_moe::all_to_all_dispatch_dense_shared;

struct Where {
    uint32_t core, num_cores;
    uint32_t num_experts, num_devices, mapping_element_bytes, num_tokens, top_k;
    uint32_t main_x, main_y;
    uint32_t devices;               // on the main core: E words
    uint64_t own_ids, own_weights;  // NOC addresses of T x K words, T x K halves
    uint32_t mapping;               // kMappingBatchRows DRAM-aligned rows
    uint32_t stage;                 // kStageSlots slots of kStageBytes
    uint32_t out;                   // kGatherBytes: a batch's block before it is written
};

// Where in `out` a block for NOC address `dst` is built: at the same offset modulo 16 (NOC writes
// need it; the low bits of a NOC address are those of the local address).
inline uint32_t build_at(uint32_t out, uint64_t dst) {
    return out + static_cast<uint32_t>(dst % 16);
}

template <typename Mapping, typename Ids, typename Weights>
void read_share(const Where& w, const Mapping& mapping, const Ids& ids_in, const Weights& weights_in) {
    const uint32_t row_bytes = w.num_devices * w.mapping_element_bytes;
    const uint32_t row_stride = moe_kernel::align_up(row_bytes);
    const uint32_t first_expert = finish_share::share_start(w.core, w.num_experts, w.num_cores);
    const uint32_t end_expert = finish_share::share_start(w.core + 1, w.num_experts, w.num_cores);
    for (uint32_t first = first_expert; first < end_expert; first += kMappingBatchRows) {
        const uint32_t rows = end_expert - first < kMappingBatchRows ? end_expert - first : kMappingBatchRows;
        for (uint32_t r = 0; r < rows; ++r) {
            noc_async_read(mapping.get_noc_addr(first + r), w.mapping + r * row_stride, row_bytes);
        }
        noc_async_read_barrier();
        const uint64_t dst = get_noc_addr(w.main_x, w.main_y, w.devices + first * 4);
        const uint32_t build = build_at(w.out, dst);
        for (uint32_t r = 0; r < rows; ++r) {
            const uint32_t device =
                moe_mapping::owner_of_row(w.mapping + r * row_stride, w.num_devices, w.mapping_element_bytes);
            moe_kernel::words(build)[r] = device == moe_mapping::kNotOneHot ? kNone : device;
        }
        noc_async_write(build, dst, rows * 4);
        noc_async_write_barrier();
    }

    const uint32_t first_token = finish_share::share_start(w.core, w.num_tokens, w.num_cores);
    const uint32_t end_token = finish_share::share_start(w.core + 1, w.num_tokens, w.num_cores);
    const uint32_t k = w.top_k;
    for (uint32_t first = first_token; first < end_token; first += kTokenBatch) {
        const uint32_t batch = end_token - first < kTokenBatch ? end_token - first : kTokenBatch;
        for (uint32_t i = 0; i < batch; ++i) {
            noc_async_read(ids_in.get_noc_addr(first + i), w.stage + 2 * i * kStageBytes, k * 4);
            noc_async_read(weights_in.get_noc_addr(first + i), w.stage + (2 * i + 1) * kStageBytes, k * 2);
        }
        noc_async_read_barrier();
        const uint64_t ids_dst = w.own_ids + first * k * 4;
        const uint64_t weights_dst = w.own_weights + first * k * 2;
        const uint32_t ids_build = build_at(w.out, ids_dst);
        const uint32_t weights_build = build_at(w.out + kGatherIdsBytes, weights_dst);
        for (uint32_t i = 0; i < batch; ++i) {
            for (uint32_t j = 0; j < k; ++j) {
                moe_kernel::words(ids_build)[i * k + j] = moe_kernel::words(w.stage + 2 * i * kStageBytes)[j];
                moe_kernel::halves(weights_build)[i * k + j] =
                    moe_kernel::halves(w.stage + (2 * i + 1) * kStageBytes)[j];
            }
        }
        noc_async_write(ids_build, ids_dst, batch * k * 4);
        noc_async_write(weights_build, weights_dst, batch * k * 2);
        noc_async_write_barrier();
    }
}

}  // namespace gather_share
