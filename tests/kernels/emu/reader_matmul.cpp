// For each output tile t in [start, start + count) of C = A @ B (tile grid
// Mt x Nt, inner Kt), streams A(mt, k) into CB "cb_a" and B(k, nt) into CB
// "cb_b" for k = 0..Kt-1. Compile-time args: TensorAccessorArgs of A, then of B.
// Runtime args: A address, B address, Kt, Nt, start, count.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
#include "api/tensor/noc_traits.h"

void kernel_main() {
    const uint32_t a_addr = get_arg_val<uint32_t>(0);
    const uint32_t b_addr = get_arg_val<uint32_t>(1);
    const uint32_t Kt = get_arg_val<uint32_t>(2);
    const uint32_t Nt = get_arg_val<uint32_t>(3);
    const uint32_t start = get_arg_val<uint32_t>(4);
    const uint32_t count = get_arg_val<uint32_t>(5);

    constexpr auto a_args = TensorAccessorArgs<0>();
    constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
    DataflowBuffer cb_a(get_named_compile_time_arg_val("cb_a"));
    DataflowBuffer cb_b(get_named_compile_time_arg_val("cb_b"));
    const auto a = TensorAccessor(a_args, a_addr);
    const auto b = TensorAccessor(b_args, b_addr);
    const Noc noc;

    for (uint32_t t = start; t < start + count; ++t) {
        const uint32_t mt = t / Nt;
        const uint32_t nt = t % Nt;
        for (uint32_t k = 0; k < Kt; ++k) {
            cb_a.reserve_back(1);
            noc.async_read(a, cb_a, cb_a.get_tile_size(), {.page_id = mt * Kt + k}, {});
            cb_b.reserve_back(1);
            noc.async_read(b, cb_b, cb_b.get_tile_size(), {.page_id = k * Nt + nt}, {});
            noc.async_read_barrier();
            cb_a.push_back(1);
            cb_b.push_back(1);
        }
    }
}
