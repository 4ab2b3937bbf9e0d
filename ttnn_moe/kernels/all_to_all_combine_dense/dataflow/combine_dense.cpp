// all_to_all_combine_dense: one data-movement kernel per device (core (0, 0)).
//
// 1. Line barrier (every member runs this program before remote writes start).
// 2. Each used slot s < num_slots: slot_source[s] = (q, t); the reduced row goes to
//    partials[position, t] on the device at position q (NOC when q is this
//    device, fabric otherwise), and presence[q][t] is set in L1.
// 3. Presence row q goes to presence page `position` on device q as fused write +
//    increment packets on link 0 (once they land, so has every row sent on link 0),
//    after a flushed increment on every other link. Slot s travels on link
//    s % num_links.
// 4. After every peer's increment: for each token, feed the partials[q, t] that
//    arrived, in ascending q, to the compute kernel (sum_partials.cpp: fp32
//    accumulation) in 1024-element chunks (a zero tile when none arrived), and write
//    each chunk of the sum it returns (bf16 or fp32); with return_partials, absent
//    partial rows are written as zeros. Skipping absent partials instead of adding
//    +0.0 can differ from the golden only in the sign of a zero.
//
// compile-time args: 7 interleaved accessors (IsDram|RuntimePageSize) in io order
//   reduced, slot_source, num_slots, output, partials, presence, combine_status
// named compile-time args: cb_row, cb_partial, cb_out, cb_count, cb_presence, cb_stage,
//   cb_headers, sem_init, sem_partials
// runtime args: 7 addresses, T, H, D, position, capacity, max packet payload,
//   output_is_fp32, return_partials, presence row stride (bytes), num_links, 2*D route words,
//   then the fabric connection block.
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130 named=cb_row:0,cb_partial:1,cb_out:2,cb_count:7,cb_presence:3,cb_stage:4,cb_headers:5,sem_init:0,sem_partials:1 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130 named=cb_row:0,cb_partial:1,cb_out:2,cb_count:7,cb_presence:3,cb_stage:4,cb_headers:5,sem_init:0,sem_partials:1 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "../../common/l1_scratch.hpp"

namespace {

enum StatusWord : uint32_t { kBadSlots, kFirstBadSlot, kNumSlotsClamped, kStatusWords = 8 };
constexpr uint32_t kTileElements = 1024;  // a row chunk fed to the compute kernel as one tile

}  // namespace

void kernel_main() {
    size_t arg = 0;
    const uint32_t reduced_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t slot_source_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t num_slots_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t output_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t partials_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t presence_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t status_addr = get_arg_val<uint32_t>(arg++);
    const uint32_t num_tokens = get_arg_val<uint32_t>(arg++);
    const uint32_t hidden = get_arg_val<uint32_t>(arg++);
    const uint32_t line_size = get_arg_val<uint32_t>(arg++);
    const uint32_t position = get_arg_val<uint32_t>(arg++);
    const uint32_t capacity = get_arg_val<uint32_t>(arg++);
    const uint32_t max_payload = get_arg_val<uint32_t>(arg++);
    const bool output_is_fp32 = get_arg_val<uint32_t>(arg++) != 0;
    const bool return_partials = get_arg_val<uint32_t>(arg++) != 0;
    const uint32_t presence_stride = get_arg_val<uint32_t>(arg++);
    const uint32_t num_links = get_arg_val<uint32_t>(arg++);
    const size_t route_arg = arg;
    const size_t connection_arg = route_arg + 2 * line_size;

    constexpr uint32_t cb_row = get_named_compile_time_arg_val("cb_row");
    constexpr uint32_t cb_partial = get_named_compile_time_arg_val("cb_partial");
    constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");
    constexpr uint32_t cb_count = get_named_compile_time_arg_val("cb_count");
    constexpr uint32_t cb_presence = get_named_compile_time_arg_val("cb_presence");
    constexpr uint32_t cb_stage = get_named_compile_time_arg_val("cb_stage");
    constexpr uint32_t cb_headers = get_named_compile_time_arg_val("cb_headers");
    constexpr uint32_t sem_init = get_named_compile_time_arg_val("sem_init");
    constexpr uint32_t sem_partials = get_named_compile_time_arg_val("sem_partials");

    constexpr auto reduced_args = TensorAccessorArgs<0>();
    constexpr auto slot_source_args = TensorAccessorArgs<reduced_args.next_compile_time_args_offset()>();
    constexpr auto num_slots_args = TensorAccessorArgs<slot_source_args.next_compile_time_args_offset()>();
    constexpr auto output_args = TensorAccessorArgs<num_slots_args.next_compile_time_args_offset()>();
    constexpr auto partials_args = TensorAccessorArgs<output_args.next_compile_time_args_offset()>();
    constexpr auto presence_args = TensorAccessorArgs<partials_args.next_compile_time_args_offset()>();
    constexpr auto status_args = TensorAccessorArgs<presence_args.next_compile_time_args_offset()>();

    const uint32_t row_bytes = hidden * 2;
    const uint32_t presence_bytes = num_tokens * 4;
    // Accessors take the DRAM-aligned page size (the bank stride of the pages).
    const auto reduced = TensorAccessor(reduced_args, reduced_addr, moe_kernel::align_up(row_bytes));
    const auto slot_source = TensorAccessor(slot_source_args, slot_source_addr, moe_kernel::align_up(8));
    const auto num_slots_in = TensorAccessor(num_slots_args, num_slots_addr, moe_kernel::align_up(4));
    const auto output = TensorAccessor(output_args, output_addr, moe_kernel::align_up(output_is_fp32 ? hidden * 4 : row_bytes));
    const auto partials = TensorAccessor(partials_args, partials_addr, moe_kernel::align_up(row_bytes));
    const auto presence = TensorAccessor(presence_args, presence_addr, moe_kernel::align_up(presence_bytes));
    const auto status_out = TensorAccessor(status_args, status_addr, moe_kernel::align_up(kStatusWords * 4));

    const uint32_t row_l1 = moe_scratch::reserve(cb_row, row_bytes);
    const uint32_t presence_l1 = moe_scratch::reserve(cb_presence, line_size * presence_stride);
    const uint32_t stage_l1 = moe_scratch::reserve(cb_stage, kStatusWords * 4);
    const uint32_t headers_l1 = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
    volatile uint32_t* stage = reinterpret_cast<volatile uint32_t*>(stage_l1);
    auto presence_row = [&](uint32_t q) {
        return reinterpret_cast<volatile uint32_t*>(presence_l1 + q * presence_stride);
    };

    moe_fabric::FabricLine line(line_size, position, num_links, route_arg, headers_l1, max_payload);
    line.open(connection_arg);
    uint32_t status[kStatusWords] = {0, 0xFFFFFFFFu, 0, 0, 0, 0, 0, 0};

    noc_async_read(num_slots_in.get_noc_addr(0), stage_l1, 4);
    noc_async_read_barrier();
    uint32_t num_slots = stage[0];
    if (num_slots > capacity) {
        num_slots = capacity;
        status[kNumSlotsClamped] = 1;
    }
    for (uint32_t q = 0; q < line_size; ++q) {
        for (uint32_t t = 0; t < num_tokens; ++t) presence_row(q)[t] = 0;
    }

    moe_fabric::line_barrier(line, sem_init);

    // 2. Every used slot row back to its source.
    for (uint32_t s = 0; s < num_slots; ++s) {
        noc_async_read(slot_source.get_noc_addr(s), stage_l1, 8);
        noc_async_read_barrier();
        const uint32_t q = stage[0];
        const uint32_t t = stage[1];
        if (q >= line_size || t >= num_tokens) {
            if (status[kBadSlots]++ == 0) status[kFirstBadSlot] = s;
            continue;
        }
        noc_async_read(reduced.get_noc_addr(s), row_l1, row_bytes);
        noc_async_read_barrier();
        const uint64_t dst = partials.get_noc_addr(position * num_tokens + t);
        if (q == position) {
            noc_async_write(row_l1, dst, row_bytes);
        } else {
            line.write(q, row_l1, dst, row_bytes, s % num_links);  // slots take turns on the links
        }
        presence_row(q)[t] = 1;
        noc_async_writes_flushed();  // row_l1 is refilled by the next slot
    }

    // 3. Presence rows, then "done" to every peer.
    const uint64_t presence_page = presence.get_noc_addr(position);
    const uint64_t sem_partials_noc = get_noc_addr(get_semaphore(sem_partials));
    for (uint32_t q = 0; q < line_size; ++q) {
        const uint32_t row = presence_l1 + q * presence_stride;
        if (q == position) {
            noc_async_write(row, presence_page, presence_bytes);
        } else {
            for (uint32_t link = 1; link < num_links; ++link) line.atomic_inc(q, sem_partials_noc, link);
            line.write_and_signal(q, row, presence_page, presence_bytes, sem_partials_noc);
        }
    }
    noc_async_write_barrier();
    moe_fabric::wait_for_line(line, sem_partials, line.packets_for(presence_bytes) + num_links - 1);

    // 4. Feed the received partials to the compute kernel, token by token: their count,
    //    then for each 1024-element chunk the partials in ascending source position (one
    //    zero tile when no position sent the token); write back each sum it produces.
    for (uint32_t q = 0; q < line_size; ++q) {
        noc_async_read(presence.get_noc_addr(q), presence_l1 + q * presence_stride, presence_bytes);
    }
    noc_async_read_barrier();
    moe_kernel::fill_words(row_l1, row_bytes / 4, 0);  // a zero row, for absent partials
    const uint32_t out_element_bytes = output_is_fp32 ? 4 : 2;
    for (uint32_t t = 0; t < num_tokens; ++t) {
        uint32_t present = 0;
        for (uint32_t q = 0; q < line_size; ++q) {
            if (presence_row(q)[t] != 0) {
                ++present;
            } else if (return_partials) {
                noc_async_write(row_l1, partials.get_noc_addr(q * num_tokens + t), row_bytes);
            }
        }
        cb_reserve_back(cb_count, 1);  // one 32-byte page per token, read by the compute kernel
        reinterpret_cast<volatile uint32_t*>(get_write_ptr(cb_count))[0] = present > 0 ? present : 1;
        cb_push_back(cb_count, 1);
        for (uint32_t chunk = 0; chunk * kTileElements < hidden; ++chunk) {
            const uint32_t elements = hidden - chunk * kTileElements < kTileElements ? hidden - chunk * kTileElements
                                                                                      : kTileElements;
            if (present == 0) {
                cb_reserve_back(cb_partial, 1);
                moe_kernel::fill_words(get_write_ptr(cb_partial), kTileElements / 2, 0);
                cb_push_back(cb_partial, 1);
            }
            for (uint32_t q = 0; q < line_size; ++q) {
                if (presence_row(q)[t] == 0) continue;
                cb_reserve_back(cb_partial, 1);
                noc_async_read(partials.get_noc_addr(q * num_tokens + t, chunk * kTileElements * 2),
                               get_write_ptr(cb_partial), elements * 2);
                noc_async_read_barrier();
                cb_push_back(cb_partial, 1);
            }
            cb_wait_front(cb_out, 1);
            noc_async_write(get_read_ptr(cb_out), output.get_noc_addr(t, chunk * kTileElements * out_element_bytes),
                            elements * out_element_bytes);
            noc_async_writes_flushed();
            cb_pop_front(cb_out, 1);
        }
    }

    for (uint32_t w = 0; w < kStatusWords; ++w) stage[w] = status[w];
    noc_async_write(stage_l1, status_out.get_noc_addr(0), kStatusWords * 4);
    noc_async_write_barrier();
    line.close();
}
