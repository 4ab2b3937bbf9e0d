// conformance: kind=dataflow
// A NOC read of a DRAM page whose bytes change before the read barrier: the read must deliver the
// bytes as they were when it was issued. Runtime args: role, DRAM bank-0 address of the page,
// DRAM bank-0 address for the result, peer noc x, peer noc y.
// Role 0: read the page into CB 0, overwrite the page itself (a NOC write of CB 1, filled with
//   0x5A), then the read barrier; the read's bytes go to the result page.
// Role 1: read the page into CB 0, let the peer (role 2) overwrite it while this kernel waits on
//   its semaphore 0, then the read barrier; the read's bytes go to the result page.
// Role 2: wait for semaphore 0, overwrite the page with 0x5A, signal the peer's semaphore 0.
#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace {
constexpr uint32_t kPage = 64;

void overwrite_page(uint32_t bank_addr) {
    cb_reserve_back(1, 1);
    auto* bytes = reinterpret_cast<volatile uint8_t*>(get_write_ptr(1));
    for (uint32_t i = 0; i < kPage; ++i) bytes[i] = 0x5A;
    noc_async_write(get_write_ptr(1), get_noc_addr_from_bank_id<true>(0, bank_addr), kPage);
    noc_async_write_barrier();
}
}  // namespace

void kernel_main() {
    const uint32_t role = get_arg_val<uint32_t>(0);
    const uint32_t bank_addr = get_arg_val<uint32_t>(1);
    const uint32_t out_addr = get_arg_val<uint32_t>(2);
    const uint32_t peer_x = get_arg_val<uint32_t>(3);
    const uint32_t peer_y = get_arg_val<uint32_t>(4);
    auto* signal = reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
    if (role == 2) {
        noc_semaphore_wait(signal, 1);
        overwrite_page(bank_addr);
        noc_semaphore_inc(get_noc_addr(peer_x, peer_y, get_semaphore(0)), 1);
        return;
    }
    cb_reserve_back(0, 1);
    const uint32_t page = get_write_ptr(0);
    noc_async_read(get_noc_addr_from_bank_id<true>(0, bank_addr), page, kPage);
    if (role == 0) {
        overwrite_page(bank_addr);
    } else {
        noc_semaphore_inc(get_noc_addr(peer_x, peer_y, get_semaphore(0)), 1);
        noc_semaphore_wait(signal, 1);
    }
    noc_async_read_barrier();
    noc_async_write(page, get_noc_addr_from_bank_id<true>(0, out_addr), kPage);
    noc_async_write_barrier();
}
