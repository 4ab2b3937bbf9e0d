// reduce_scatter over a line of the mesh, writer of one direction's worker (reduce_scatter_line.hpp
// has the algorithm, the chunking and the runtime args). A worker that sends is a client of its
// link's fabric mux for its direction (FabricMuxV2Sender), which the link's other workers of that
// direction share; every packet goes one hop, to the next member.
//
// 1. Handshake: a worker that sends increments sem_barrier of its opposite-direction counterpart
//    on the member it sends to (the worker that sends back to it) and waits for that worker's
//    increment, so both members run this program before partials flow.
// 2. Per sent slice and page: the page cb_sum holds (the reader's input page at the member that
//    starts the direction, else the compute kernel's sum) goes to the same staging page of the
//    next member as fused write + increment packets on its sem_arrived.
// 3. A member that receives (or a line of one): the pages of its own slice (cb_sum) go to the
//    output; a middle member's forward worker then increments the backward worker's
//    sem_forward_done by each chunk's pages, after they have landed.
//
// Compile-time args: TensorAccessorArgs of the staging tensor, then of the output.
// Named: cb_sum, cb_headers (one packet header), sem_barrier, sem_arrived, sem_forward_done,
// granularity.
// conformance: kind=dataflow ct_args=130,130 named=cb_sum:2,cb_headers:3,sem_barrier:0,sem_arrived:1,sem_forward_done:2,granularity:8 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130 named=cb_sum:2,cb_headers:3,sem_barrier:0,sem_arrived:1,sem_forward_done:2,granularity:8 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstddef>
#include <cstdint>

#include "../../../cpp/ops/common/common_shared.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "api/dataflow/dataflow_api.h"
#include "reduce_scatter_line.hpp"
#include "tt_metal/fabric/hw/inc/tt_fabric_mux_v2_sender.hpp"
#if defined(FABRIC_2D)
#include "tt_metal/fabric/hw/inc/mesh/api.h"
#else
#include "tt_metal/fabric/hw/inc/linear/api.h"
#endif

namespace {

constexpr uint32_t cb_sum = get_named_compile_time_arg_val("cb_sum");
constexpr uint32_t cb_headers = get_named_compile_time_arg_val("cb_headers");
constexpr uint32_t sem_barrier = get_named_compile_time_arg_val("sem_barrier");
constexpr uint32_t sem_arrived = get_named_compile_time_arg_val("sem_arrived");
constexpr uint32_t sem_forward_done = get_named_compile_time_arg_val("sem_forward_done");
constexpr uint32_t granularity = get_named_compile_time_arg_val("granularity");

constexpr auto kStagingArgs = TensorAccessorArgs<0>();
constexpr auto kOutputArgs = TensorAccessorArgs<kStagingArgs.next_compile_time_args_offset()>();

using MuxSender = tt::tt_fabric::FabricMuxV2Sender<>;

// One-hop packets to the next member of the worker's direction through its mux channel.
class NextMember {
public:
    NextMember(MuxSender& mux, uint32_t header_l1, uint32_t node, uint32_t max_payload)
        : mux_(mux),
          header_(reinterpret_cast<volatile PACKET_HEADER_TYPE*>(header_l1)),
          node_(node),
          max_payload_(max_payload) {}

    // `bytes` from L1 to `dst_noc_addr` there, each packet a fused write + increment of `sem_noc_addr`.
    void write_and_signal(uint32_t src_l1, uint64_t dst_noc_addr, uint32_t bytes, uint64_t sem_noc_addr) {
        for (uint32_t done = 0; done < bytes; done += max_payload_) {
            const uint32_t size = bytes - done < max_payload_ ? bytes - done : max_payload_;
            const tt::tt_fabric::NocUnicastAtomicIncFusedCommandHeader command(dst_noc_addr + done, sem_noc_addr, 1,
                                                                               true);
#if defined(FABRIC_2D)
            tt::tt_fabric::mesh::experimental::fabric_unicast_noc_fused_unicast_with_atomic_inc(
                &mux_, header_, chip_id(), mesh_id(), src_l1 + done, size, command);
#else
            tt::tt_fabric::linear::experimental::fabric_unicast_noc_fused_unicast_with_atomic_inc(
                &mux_, header_, src_l1 + done, size, command, 1);
#endif
            noc_async_writes_flushed();
        }
    }

    void atomic_inc(uint64_t sem_noc_addr) {
        const tt::tt_fabric::NocUnicastAtomicIncCommandHeader command(sem_noc_addr, 1, true);
#if defined(FABRIC_2D)
        tt::tt_fabric::mesh::experimental::fabric_unicast_noc_unicast_atomic_inc(&mux_, header_, chip_id(), mesh_id(),
                                                                                 command);
#else
        tt::tt_fabric::linear::experimental::fabric_unicast_noc_unicast_atomic_inc(&mux_, header_, command, 1);
#endif
        noc_async_writes_flushed();
    }

private:
    [[maybe_unused]] uint8_t chip_id() const {
        return static_cast<uint8_t>(node_ & ((1u << ttnn_moe::common_shared::kMeshIdShift) - 1));
    }
    [[maybe_unused]] uint16_t mesh_id() const {
        return static_cast<uint16_t>(node_ >> ttnn_moe::common_shared::kMeshIdShift);
    }

    MuxSender& mux_;
    volatile PACKET_HEADER_TYPE* header_;
    uint32_t node_;
    uint32_t max_payload_;
};

void handshake(const moe_rs_line::Args& a, NextMember& next) {
    const uint32_t sem_l1 = get_semaphore(sem_barrier);
    next.atomic_inc(get_noc_addr(a.opposite_x, a.opposite_y, sem_l1));
    noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem_l1), 1);
}

template <typename Staging>
void send_partials(const moe_rs_line::Args& a, NextMember& next, const Staging& staging) {
    const uint64_t sem_noc = get_noc_addr(get_semaphore(sem_arrived));
    for (uint32_t i = 0; i < a.targets(); ++i) {
        const uint32_t d = a.slice(i);
        for (uint32_t k = a.first; k < a.first + a.count; k += granularity) {
            cb_wait_front(cb_sum, granularity);
            const uint32_t l1 = get_read_ptr(cb_sum);
            for (uint32_t j = 0; j < a.chunk_pages(k, granularity); ++j) {
                next.write_and_signal(l1 + j * a.page_bytes, staging.get_noc_addr(a.staging_page(k + j, d)),
                                      a.page_bytes, sem_noc);
            }
            cb_pop_front(cb_sum, granularity);
        }
    }
}

template <typename Output>
void write_own_slice(const moe_rs_line::Args& a, const Output& output) {
    const bool signal_backward = a.forward() && a.middle();
    const uint64_t done_noc = get_noc_addr(a.opposite_x, a.opposite_y, get_semaphore(sem_forward_done));
    for (uint32_t k = a.first; k < a.first + a.count; k += granularity) {
        const uint32_t n = a.chunk_pages(k, granularity);
        cb_wait_front(cb_sum, granularity);
        const uint32_t l1 = get_read_ptr(cb_sum);
        for (uint32_t j = 0; j < n; ++j) {
            noc_async_write(l1 + j * a.page_bytes, output.get_noc_addr(k + j), a.page_bytes);
        }
        if (signal_backward) {
            noc_async_write_barrier();
            noc_semaphore_inc(done_noc, n);
        } else {
            noc_async_writes_flushed();
        }
        cb_pop_front(cb_sum, granularity);
    }
    noc_async_write_barrier();
    noc_async_atomic_barrier();
}

}  // namespace

void kernel_main() {
    const moe_rs_line::Args a = moe_rs_line::read_args();
    const auto staging = TensorAccessor(kStagingArgs, a.staging, a.page_bytes);
    const auto output = TensorAccessor(kOutputArgs, a.output, a.page_bytes);
    if (a.targets() > 0) {
        size_t mux_arg = moe_rs_line::kMuxArg;
        MuxSender mux = MuxSender::build_from_args(mux_arg);
        mux.open();
        const uint32_t header_l1 = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
        NextMember next(mux, header_l1, get_arg_val<uint32_t>(moe_rs_line::kNextNodeArg), a.max_payload);
        handshake(a, next);
        send_partials(a, next, staging);
        mux.close();
    }
    if (!a.first_in_direction() || a.copies_own_slice()) write_own_slice(a, output);
}
