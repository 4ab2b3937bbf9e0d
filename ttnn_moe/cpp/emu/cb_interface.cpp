// get_local_cb_interface: each kernel gets its own LocalCBInterface per CB, as
// each RISC-V of a Tensix core has its own copy in its local memory. The
// runtime's CbState stays the source of truth: the view is rewritten from it
// after every CB call of the kernel, and a read/write pointer the kernel moved
// in the view is applied to the ring before the next one.
#include <string>

#include "emu/services.hpp"

namespace ttnn_moe::emu::services {

namespace {

// TRISC sees CB addresses and sizes in 16-byte units (tt-metal's cb_addr_shift).
uint32_t addr_shift(const Instance& inst) {
    return inst.kind == KernelKind::COMPUTE ? 4 : 0;
}

bool handed(const Instance& inst, uint32_t cb) {
    return (inst.cb_views_handed >> cb) & 1u;
}

[[noreturn]] void unsupported_write(uint32_t cb, const char* field) {
    fail(std::string("the kernel wrote ") + field + " of get_local_cb_interface(" + std::to_string(cb) +
         "): only fifo_rd_ptr and fifo_wr_ptr can be moved in the emulator");
}

// The L1 offset a pointer value of the view names, checked to lie in the ring.
uint32_t ring_offset(const Instance& inst, uint32_t cb, const CbState& s, uint32_t value, const char* field) {
    const uint64_t host = static_cast<uint64_t>(value) << addr_shift(inst);
    const uint64_t base = static_cast<uint64_t>(inst.core->l1_host) + s.base;
    if (host < base || host > base + s.size) {
        fail(std::string("the kernel set ") + field + " of get_local_cb_interface(" + std::to_string(cb) +
             ") outside the CB's ring");
    }
    // The limit itself is the start again (the wrap the real cb_push_back / cb_pop_front make).
    return host == base + s.size ? s.base : static_cast<uint32_t>(host - inst.core->l1_host);
}

}  // namespace

void refresh_cb_view(uint32_t cb, const CbState& s) {
    Instance& inst = instance();
    if (!handed(inst, cb)) return;
    const uint32_t shift = addr_shift(inst);
    const uint32_t start = inst.core->l1_host + s.base;
    ttnn_moe_emu::CbInterface& v = inst.cb_views[cb];
    v.fifo_size = s.size >> shift;
    v.fifo_limit = (start + s.size) >> shift;
    v.fifo_page_size = s.page_size >> shift;
    v.fifo_num_pages = s.num_pages;
    v.fifo_rd_ptr = (inst.core->l1_host + s.rd) >> shift;
    v.fifo_wr_ptr = (inst.core->l1_host + s.wr) >> shift;
    v.tiles_acked = static_cast<uint16_t>(s.acked);
    v.tiles_received = static_cast<uint16_t>(s.received);
    v.fifo_wr_tile_ptr = 0;
    inst.cb_views_written[cb] = v;
}

void absorb_cb_view_writes(uint32_t cb, CbState& s) {
    Instance& inst = instance();
    if (!handed(inst, cb)) return;
    const ttnn_moe_emu::CbInterface& v = inst.cb_views[cb];
    const ttnn_moe_emu::CbInterface& w = inst.cb_views_written[cb];
    if (v.fifo_size != w.fifo_size) unsupported_write(cb, "fifo_size");
    if (v.fifo_limit != w.fifo_limit) unsupported_write(cb, "fifo_limit");
    if (v.fifo_page_size != w.fifo_page_size) unsupported_write(cb, "fifo_page_size");
    if (v.fifo_num_pages != w.fifo_num_pages) unsupported_write(cb, "fifo_num_pages");
    if (v.tiles_acked_received_init != w.tiles_acked_received_init) unsupported_write(cb, "tiles_acked/received");
    if (v.fifo_rd_ptr != w.fifo_rd_ptr) s.rd = ring_offset(inst, cb, s, v.fifo_rd_ptr, "fifo_rd_ptr");
    if (v.fifo_wr_ptr != w.fifo_wr_ptr) s.wr = ring_offset(inst, cb, s, v.fifo_wr_ptr, "fifo_wr_ptr");
}

ttnn_moe_emu::CbInterface* cb_interface(uint32_t index) {
    CbState& s = cb(index);  // absorbs and refreshes a view handed out before
    Instance& inst = instance();
    if (!handed(inst, index)) {
        inst.cb_views_handed |= 1u << index;
        refresh_cb_view(index, s);
    }
    return &inst.cb_views[index];
}

}  // namespace ttnn_moe::emu::services
