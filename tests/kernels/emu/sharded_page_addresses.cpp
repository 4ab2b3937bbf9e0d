// conformance: kind=dataflow ct_args=1,2048,2,4,2,4,1,2,16974082,33751554
// Reports where a TensorAccessor over the tensor its compile-time args (from 0) describe puts pages 0 .. n - 1:
// per page the NOC x, NOC y and local address (three words), written to DRAM bank 0.
// Runtime args: DRAM bank address, the tensor's base address, n (at most 20).
#include "api/dataflow/dataflow_api.h"

void kernel_main() {
    const uint32_t bank_addr = get_arg_val<uint32_t>(0);
    const uint32_t base = get_arg_val<uint32_t>(1);
    const uint32_t pages = get_arg_val<uint32_t>(2);
    constexpr auto args = TensorAccessorArgs<0>();
    const auto accessor = TensorAccessor(args, base);
    volatile tt_l1_ptr uint32_t* words = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
    for (uint32_t i = 0; i < 64; ++i) words[i] = 0;
    for (uint32_t p = 0; p < pages; ++p) {
        const uint64_t noc_addr = accessor.get_noc_addr(p);
        words[3 * p] = (noc_addr >> NOC_ADDR_LOCAL_BITS) & 0x3f;
        words[3 * p + 1] = (noc_addr >> (NOC_ADDR_LOCAL_BITS + NOC_ADDR_NODE_ID_BITS)) & 0x3f;
        words[3 * p + 2] = static_cast<uint32_t>(noc_addr & 0xffffffff);
    }
    noc_async_write(get_write_ptr(0), get_noc_addr_from_bank_id<true>(0, bank_addr), 256);
    noc_async_write_barrier();
}
