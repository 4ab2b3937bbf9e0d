// The dataflow services kernels call through the ABI table: CB bookkeeping,
// NOC transfers with address decoding, bounds and alignment checks, and
// blocking waits.
#include "emu/services.hpp"

#include <cstring>
#include <sstream>

#include "emu/compute/compute_engine.hpp"
#include "emu/error.hpp"
#include "emu/fabric/services.hpp"
#include "emu/l1_pool.hpp"
#include "emu/poison.hpp"

namespace ttnn_moe::emu {

namespace {
// Read by every service call. Initial-exec: in the static TLS block, one load off the thread
// pointer; the module's default (a TLS descriptor into dynamically allocated TLS, as the module
// is loaded by dlopen) costs a call into the dynamic linker each time (some 5% of a matmul run).
// 24 bytes of the static TLS that glibc sets aside for libraries loaded later.
[[gnu::tls_model("initial-exec")]] thread_local Run* t_run = nullptr;
[[gnu::tls_model("initial-exec")]] thread_local Instance* t_inst = nullptr;
[[gnu::tls_model("initial-exec")]] thread_local ttnn_moe_emu::KernelEnv* t_env = nullptr;

std::string hex(uint64_t v) {
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}
}  // namespace

RunScope::RunScope(Run* run) : previous_run_(t_run) {
    t_run = run;
}
RunScope::~RunScope() {
    t_run = previous_run_;
    t_inst = nullptr;
    t_env = nullptr;
}
void RunScope::enter(Instance* inst) {
    t_inst = inst;
    t_env = &inst->env;
}
void RunScope::leave() {
    t_inst = nullptr;
    t_env = nullptr;
}

namespace services {

Run& run() {
    return *t_run;
}
Instance& instance() {
    return *t_inst;
}
void count_call() {
    ++t_env->api_calls;
    t_run->time().on_call(*t_inst);
}

void fail(const std::string& message) {
    throw EmuError(message);
}

void complete_pending_reads(int trid) {
    Instance& self = instance();
    auto& reads = self.pending_reads;
    size_t kept = 0;
    bool unstaged_kept = false;
    for (const auto& read : reads) {
        if (trid >= 0 && read.trid != trid) {
            unstaged_kept |= read.unstaged != nullptr;
            reads[kept++] = read;
            continue;
        }
        const uint8_t* source = read.unstaged ? read.unstaged : self.pending_read_data.data() + read.data_offset;
        std::memcpy(self.core->l1 + read.dst_offset, source, read.size);
        mark_written_l1(*self.core, read.dst_offset, read.size);
    }
    reads.resize(kept);
    // The staged bytes of reads still outstanding stay where they are until every read has landed.
    if (reads.empty()) self.pending_read_data.clear();
    self.reads_unstaged = unstaged_kept;
}

void stage_pending_reads(Instance& inst) {
    if (!inst.reads_unstaged) return;
    for (auto& read : inst.pending_reads) {
        if (!read.unstaged) continue;
        read.data_offset = inst.pending_read_data.size();
        inst.pending_read_data.insert(inst.pending_read_data.end(), read.unstaged, read.unstaged + read.size);
        read.unstaged = nullptr;
    }
    inst.reads_unstaged = false;
}

size_t pending_reads_into(uint32_t offset, uint32_t size) {
    size_t overlapping = 0;
    for (const auto& read : t_inst->pending_reads) {
        const bool overlaps = read.dst_offset < offset + size && offset < read.dst_offset + read.size;
        if (size == 0 || overlaps) ++overlapping;
    }
    return overlapping;
}

void fail_pending_reads(size_t count, const std::string& what) {
    fail(what + " while " + std::to_string(count) +
         " NOC read(s) into that memory are still outstanding (missing noc_async_read_barrier?)");
}

CbState& cb(uint32_t index) {
    Instance& inst = *t_inst;
    if (index >= params::MAX_CIRCULAR_BUFFERS || !inst.core->cbs[index].configured) {
        fail("circular buffer " + std::to_string(index) + " is not configured on this core");
    }
    CbState& s = inst.core->cbs[index];
    if ((inst.cb_views_handed >> index) & 1u) {  // the kernel holds a view of it (get_local_cb_interface)
        absorb_cb_view_writes(index, s);
        refresh_cb_view(index, s);
    }
    return s;
}

namespace {

// Parks the running kernel until the scheduler sees its condition hold.
void block(WaitKind kind) {
    Instance& inst = *t_inst;
    inst.wait = kind;
    Fiber::yield();
    // The scheduler resumes a kernel only when its condition holds (run.cpp: condition_holds).
    inst.wait = WaitKind::None;
}

void check_count(const CbState& s, uint32_t index, uint32_t n, const char* op) {
    if (n > s.num_pages) {
        fail(std::string(op) + "(cb " + std::to_string(index) + ", " + std::to_string(n) +
             " pages) can never complete: the CB holds " + std::to_string(s.num_pages) + " pages");
    }
}

}  // namespace

void cb_reserve_back(uint32_t index, uint32_t n) {
    CbState& s = cb(index);
    check_count(s, index, n, "cb_reserve_back");
    // As on the hardware, a reservation only waits for free pages and may reach around the ring end (a producer
    // that addresses its slots itself, as moe_compute's dm0 does); pushing pages past the end is the error.
    if (s.num_pages - s.filled() < n) {
        t_inst->wait_cb = index;
        t_inst->wait_count = n;
        block(WaitKind::CbBack);
    }
    t_run->time().cb_reserved(*t_inst, s, n);
}

void cb_push_back(uint32_t index, uint32_t n) {
    CbState& s = cb(index);
    if (s.wr + n * s.page_size > s.end()) {
        fail("cb_push_back(cb " + std::to_string(index) + ", " + std::to_string(n) +
             " pages) would push pages past the end of the ring (" + std::to_string(s.num_pages) +
             " pages): producers write a push's pages contiguously and must not wrap inside it");
    }
    t_run->time().cb_pushed(*t_inst, s, n);
    s.received += n;
    if (s.filled() > s.num_pages) {
        fail("cb_push_back(cb " + std::to_string(index) + ", " + std::to_string(n) +
             ") overfills the CB: " + std::to_string(s.filled()) + " of " + std::to_string(s.num_pages) +
             " pages filled (missing cb_reserve_back?)");
    }
    s.wr += n * s.page_size;
    if (s.wr == s.end()) s.wr = s.base;
    refresh_cb_view(index, s);
}

void cb_wait_front(uint32_t index, uint32_t n) {
    CbState& s = cb(index);
    check_count(s, index, n, "cb_wait_front");
    if (s.filled() < n) {
        t_inst->wait_cb = index;
        t_inst->wait_count = n;
        block(WaitKind::CbFront);
    }
    t_run->time().cb_waited(*t_inst, s, n);
}

void cb_pop_front(uint32_t index, uint32_t n) {
    CbState& s = cb(index);
    if (n > s.filled()) {
        fail("cb_pop_front(cb " + std::to_string(index) + ", " + std::to_string(n) + ") pops more than the " +
             std::to_string(s.filled()) + " filled pages (missing cb_wait_front?)");
    }
    t_run->time().cb_popped(*t_inst, s, n);
    s.acked += n;
    s.rd += n * s.page_size;
    if (s.rd > s.end()) fail("cb_pop_front(cb " + std::to_string(index) + ") moved the read pointer past the ring");
    if (s.rd == s.end()) s.rd = s.base;
    refresh_cb_view(index, s);
}

}  // namespace services

namespace {

using services::fail;

// ---------------------------------------------------------------- L1 and NOC addressing

// The L1 offset of a local address: a raw offset below L1 size, or a host
// address inside any core's L1 slot (every core has the same layout).
uint32_t l1_offset(uint64_t addr, uint32_t size, const char* what) {
    if (addr + size <= params::L1_SIZE) return static_cast<uint32_t>(addr);
    uint32_t slot = 0, offset = 0;
    if (L1Pool::instance().locate(addr, slot, offset) && static_cast<uint64_t>(offset) + size <= params::L1_SIZE) {
        return offset;
    }
    fail(std::string(what) + ": L1 address " + hex(addr) + " (+" + std::to_string(size) + " bytes) is outside L1 (" +
         std::to_string(params::L1_SIZE) + " bytes)");
}

// Where a NOC address lands.
struct Endpoint {
    bool dram = false;
    uint8_t* ptr = nullptr;
    uint64_t local = 0;  // address inside the endpoint (for alignment)
    DramBuffer* buffer = nullptr;
    CoreState* core = nullptr;  // the L1 endpoint's core
    uint32_t bank = 0;
    uint32_t bank_addr = 0;
};

Endpoint resolve(uint64_t noc_addr, uint32_t size, const char* what) {
    Run& run = services::run();
    const CoreState& self = *t_inst->core;
    const uint32_t device_field = static_cast<uint32_t>(noc_addr >> params::NOC_ADDR_DEVICE_SHIFT) & 0xfff;
    size_t d = self.device_index;
    if (device_field != 0) {
        const int idx = run.device_index_of(device_field - 1);
        if (idx < 0) {
            fail(std::string(what) + ": NOC address " + hex(noc_addr) + " targets device " +
                 std::to_string(device_field - 1) + ", which is not part of this run");
        }
        d = static_cast<size_t>(idx);
    }
    const uint32_t x = static_cast<uint32_t>(noc_addr >> params::NOC_ADDR_LOCAL_BITS) & params::NOC_COORD_MASK;
    const uint32_t y =
        static_cast<uint32_t>(noc_addr >> (params::NOC_ADDR_LOCAL_BITS + params::NOC_ADDR_NODE_ID_BITS)) &
        params::NOC_COORD_MASK;
    const uint64_t local = noc_addr & params::NOC_ADDR_LOCAL_MASK;
    Endpoint ep;
    ep.local = local;
    const int bank = Device::dram_bank_from_noc(x, y);
    if (bank >= 0) {
        ep.dram = true;
        ep.bank = static_cast<uint32_t>(bank);
        DramBuffer* buf =
            local + size <= 0xffffffffull ? run.device(d).dram().find(static_cast<uint32_t>(local), size) : nullptr;
        if (!buf) {
            fail(std::string(what) + " of " + std::to_string(size) + " bytes at DRAM bank " + std::to_string(bank) +
                 " address " + hex(local) + " is outside every allocated buffer (out of bounds)");
        }
        ep.buffer = buf;
        ep.bank_addr = static_cast<uint32_t>(local);
        ep.ptr = buf->at(ep.bank, ep.bank_addr);
        buf->note_access(size);
        return ep;
    }
    CoreState* core = run.core_at_noc(d, x, y);
    if (!core) {
        auto logical = run.device(d).logical_core_from_noc(x, y);
        if (logical) {
            fail(std::string(what) + ": NOC address " + hex(noc_addr) + " targets core (" +
                 std::to_string(logical->first) + ", " + std::to_string(logical->second) +
                 "), which runs nothing in this program");
        }
        fail(std::string(what) + ": NOC address " + hex(noc_addr) + " targets NOC (" + std::to_string(x) + ", " +
             std::to_string(y) + "), where there is no worker core or DRAM bank");
    }
    ep.ptr = core->l1 + l1_offset(local, size, what);
    ep.core = core;
    return ep;
}

void check_alignment(const Endpoint& remote, uint64_t local_addr, bool read, const char* what) {
    const uint32_t alignment = !remote.dram ? params::NOC_L1_ALIGNMENT
                               : read       ? params::NOC_DRAM_ALIGNMENT
                                            : params::NOC_DRAM_WRITE_ALIGNMENT;
    if ((remote.local & (alignment - 1)) != (local_addr & (alignment - 1))) {
        fail(std::string(what) + ": misaligned NOC transfer: " + (remote.dram ? "DRAM" : "L1") + " address " +
             hex(remote.local) + " and local L1 address " + hex(local_addr) + " differ modulo " +
             std::to_string(alignment) + " bytes");
    }
}

// Poison mode: fails when a NOC transfer's source bytes were never written; marks its destination written.
void check_source(const Endpoint& ep, uint32_t size, const std::string& what) {
    if (ep.dram) {
        services::check_written_dram(*ep.buffer, ep.bank, ep.bank_addr, size, what);
    } else {
        services::check_written_l1(*ep.core, static_cast<uint32_t>(ep.ptr - ep.core->l1), size, what);
    }
}
void mark_destination(const Endpoint& ep, uint32_t size) {
    if (ep.dram) {
        poison::mark(ep.buffer->shadow_of(ep.ptr), size);
    } else {
        services::mark_written_l1(*ep.core, static_cast<uint32_t>(ep.ptr - ep.core->l1), size);
    }
}

// NOC writes up to this size into L1 record arrival times per word (semaphores set remotely).
constexpr uint32_t kTimedWordWrite = 16;

void count_dram(Counters& c, const Endpoint& ep, uint32_t size, bool read) {
    DramBufferTraffic& t = c.dram_buffers[ep.buffer->address];
    (read ? t.bytes_read : t.bytes_written) += size;
    if (size == 0) return;
    const uint32_t page = ep.buffer->aligned_page_size;
    const uint32_t first = (ep.bank_addr - ep.buffer->address) / page;
    const uint32_t last = (ep.bank_addr + size - 1 - ep.buffer->address) / page;
    if (!read) {
        t.page_writes += last - first + 1;
        return;
    }
    const size_t pages_total = static_cast<size_t>(ep.buffer->bank_span / page) * params::NUM_DRAM_BANKS;
    if (t.page_read.size() < pages_total) t.page_read.resize(pages_total, 0);
    for (uint32_t p = first; p <= last; ++p) {
        t.page_read[static_cast<size_t>(p) * params::NUM_DRAM_BANKS + ep.bank] = 1;
        ++t.page_reads;
    }
}

// ---------------------------------------------------------------- the services

[[noreturn]] void svc_fail(const char* message) {
    fail(message);
}

[[noreturn]] void svc_arg_out_of_range(uint32_t index, uint32_t is_common) {
    const auto& env = *t_env;
    fail(std::string(is_common ? "get_common_arg_val(" : "get_arg_val(") + std::to_string(index) + ") but only " +
         std::to_string(is_common ? env.num_common_args : env.num_runtime_args) +
         (is_common ? " common runtime args are set" : " runtime args are set for this core"));
}

void svc_cb_reserve_back(uint32_t cb, uint32_t n) {
    services::count_call(), services::cb_reserve_back(cb, n);
}
void svc_cb_push_back(uint32_t cb, uint32_t n) {
    services::count_call();
    // The pushed pages must have landed; reads into the ring's other slots may still be in flight (a producer
    // pipelining its reads, as moe_compute's dm0 does with transaction ids).
    const CbState& ring = services::cb(cb);
    if (n > 0) {
        services::check_no_pending_read(ring.wr, n * ring.page_size,
                                        [cb] { return "cb_push_back(cb " + std::to_string(cb) + ")"; });
    }
    services::cb_push_back(cb, n);
    // The packer's sequential position restarts after each push.
    if (t_inst->compute) t_inst->compute->on_push_back(cb);
}
void svc_cb_wait_front(uint32_t cb, uint32_t n) {
    services::count_call(), services::cb_wait_front(cb, n);
}
void svc_cb_pop_front(uint32_t cb, uint32_t n) {
    services::count_call();
    // Popping frees the pages to the producer: a NOC write still reading them must have left.
    const CbState& ring = services::cb(cb);
    const uint32_t popped_end = ring.rd + n * ring.page_size;
    size_t in_flight = 0;
    for (const auto& [offset, size] : t_inst->unflushed_writes) {
        if (offset < popped_end && ring.rd < offset + size) ++in_flight;
    }
    if (in_flight > 0) {
        fail("cb_pop_front(cb " + std::to_string(cb) + ", " + std::to_string(n) + ") while " +
             std::to_string(in_flight) +
             " NOC write(s) from those pages are still in flight (missing noc_async_writes_flushed or "
             "noc_async_write_barrier?)");
    }
    services::cb_pop_front(cb, n);
}

uint32_t svc_cb_pages_reservable_at_back(uint32_t cb, uint32_t n) {
    const CbState& s = services::cb(cb);
    return s.num_pages - s.filled() >= n;
}
uint32_t svc_cb_pages_available_at_front(uint32_t cb, uint32_t n) {
    return services::cb(cb).filled() >= n;
}
uint32_t svc_cb_write_ptr(uint32_t cb) {
    return t_inst->core->l1_host + services::cb(cb).wr;
}
uint32_t svc_cb_read_ptr(uint32_t cb) {
    return t_inst->core->l1_host + services::cb(cb).rd;
}

void svc_cb_set_ptr(uint32_t cb, uint32_t addr, bool write) {
    CbState& s = services::cb(cb);
    const uint32_t offset = l1_offset(addr, 0, "setting a CB pointer");
    if (offset < s.base || offset >= s.end()) {
        fail("CB " + std::to_string(cb) + " pointer set to " + hex(addr) + ", outside its ring");
    }
    (write ? s.wr : s.rd) = offset;
    services::refresh_cb_view(cb, s);
}
void svc_cb_set_write_ptr(uint32_t cb, uint32_t addr) {
    svc_cb_set_ptr(cb, addr, true);
}
void svc_cb_set_read_ptr(uint32_t cb, uint32_t addr) {
    svc_cb_set_ptr(cb, addr, false);
}

uint32_t svc_cb_info(uint32_t cb, ttnn_moe_emu::CbField field) {
    using F = ttnn_moe_emu::CbField;
    if (field == F::Configured) {
        return cb < params::MAX_CIRCULAR_BUFFERS && t_inst->core->cbs[cb].configured;
    }
    const CbState& s = services::cb(cb);
    switch (field) {
        case F::PageSize:
            return s.page_size;
        case F::NumPages:
            return s.num_pages;
        case F::TotalSize:
            return s.size;
        default:
            return 0;
    }
}

// A NOC read, tagged with a transaction id (trid >= 0) or not.
void issue_noc_read(uint64_t src, uint32_t dst_local, uint32_t size, int trid) {
    services::count_call();
    CoreState& self = *t_inst->core;
    const Endpoint ep = resolve(src, size, "noc read");
    check_alignment(ep, dst_local, true, "noc read");
    if (poison::enabled()) check_source(ep, size, "noc read from " + hex(src));
    const uint32_t dst_offset = l1_offset(dst_local, size, "noc read destination");
    auto& staged = t_inst->pending_read_data;
    if (ep.dram) {
        t_inst->pending_reads.push_back({dst_offset, size, 0, trid, ep.ptr});
        t_inst->reads_unstaged = true;
    } else {
        // L1 changes under plain stores of any kernel, this one included: its bytes are taken now.
        t_inst->pending_reads.push_back({dst_offset, size, staged.size(), trid});
        staged.insert(staged.end(), ep.ptr, ep.ptr + size);
    }
    services::run().time().noc_read(*t_inst, ep.core, static_cast<int>(ep.bank), size, trid);
    Counters& c = services::run().counters_of(self);
    if (ep.dram) {
        c.noc_bytes_read_dram += size;
        count_dram(c, ep, size, true);
    } else {
        c.noc_bytes_read_l1 += size;
    }
}

void svc_noc_read(uint64_t src, uint32_t dst_local, uint32_t size) {
    issue_noc_read(src, dst_local, size, -1);
}
void svc_noc_read_with_trid(uint64_t src, uint32_t dst_local, uint32_t size, uint32_t trid) {
    issue_noc_read(src, dst_local, size, static_cast<int>(trid));
}

void svc_noc_write(uint32_t src_local, uint64_t dst, uint32_t size) {
    services::count_call();
    CoreState& self = *t_inst->core;
    const uint32_t src_offset = l1_offset(src_local, size, "noc write source");
    services::check_no_pending_read(src_offset, size, [src_local] { return "noc write from L1 " + hex(src_local); });
    if (poison::enabled()) services::check_written_l1(self, src_offset, size, "noc write from L1 " + hex(src_local));
    const uint8_t* src = self.l1 + src_offset;
    const Endpoint ep = resolve(dst, size, "noc write");
    if (ep.dram) {
        services::stage_pending_reads(*t_inst);  // a pending read of these bytes saw them before
        ep.buffer->reserve_for_write(ep.ptr, size);
    }
    check_alignment(ep, src_local, false, "noc write");
    // A small write into L1 may be a semaphore (noc_semaphore_set_remote): its words get arrival times.
    uint32_t before[kTimedWordWrite / 4] = {};
    const bool word_update = !ep.dram && size <= kTimedWordWrite && size % 4 == 0 && ep.local % 4 == 0;
    if (word_update) std::memcpy(before, ep.ptr, size);
    std::memmove(ep.ptr, src, size);
    mark_destination(ep, size);
    t_inst->unflushed_writes.emplace_back(src_offset, size);
    timing::TimeModel& time = services::run().time();
    time.noc_write(*t_inst, ep.core, static_cast<int>(ep.bank), size);
    if (word_update) {
        const auto* words = reinterpret_cast<const volatile uint32_t*>(ep.ptr);
        for (uint32_t i = 0; i < size / 4; ++i)
            time.record_word(&words[i], before[i], words[i], t_inst->time.writes_arrived);
    }
    Counters& c = services::run().counters_of(self);
    if (ep.dram) {
        c.noc_bytes_written_dram += size;
        count_dram(c, ep, size, false);
    } else {
        c.noc_bytes_written_l1 += size;
    }
}

// Multicast NOC address: [0, 36) local, [36, 42) x_end, [42, 48) y_end, [48, 54) x_start, [54, 60) y_start.
template <typename F>
void for_each_mcast_core(uint64_t mcast, uint32_t size, uint32_t num_dests, bool include_src, const char* what,
                         F&& apply) {
    Run& run = services::run();
    CoreState& self = *t_inst->core;
    const uint32_t x_end = static_cast<uint32_t>(mcast >> 36) & 0x3f;
    const uint32_t y_end = static_cast<uint32_t>(mcast >> 42) & 0x3f;
    const uint32_t x_start = static_cast<uint32_t>(mcast >> 48) & 0x3f;
    const uint32_t y_start = static_cast<uint32_t>(mcast >> 54) & 0x3f;
    const uint64_t local = mcast & params::NOC_ADDR_LOCAL_MASK;
    const uint32_t offset = l1_offset(local, size, what);
    uint32_t dests = 0;
    std::vector<CoreState*> targets;
    for (uint32_t y = std::min(y_start, y_end); y <= std::max(y_start, y_end); ++y) {
        for (uint32_t x = std::min(x_start, x_end); x <= std::max(x_start, x_end); ++x) {
            if (!run.device(self.device_index).logical_core_from_noc(x, y)) continue;
            CoreState* core = run.core_at_noc(self.device_index, x, y);
            if (core == &self && !include_src) continue;
            ++dests;
            if (!core) {
                fail(std::string(what) + ": the multicast rectangle NOC (" + std::to_string(x_start) + ", " +
                     std::to_string(y_start) + ") - (" + std::to_string(x_end) + ", " + std::to_string(y_end) +
                     ") includes a core that runs nothing in this program");
            }
            targets.push_back(core);
        }
    }
    if (dests != num_dests) {
        fail(std::string(what) + ": num_dests is " + std::to_string(num_dests) + " but the multicast rectangle has " +
             std::to_string(dests) + " destination cores");
    }
    for (CoreState* core : targets) apply(*core, offset);
}

void svc_noc_write_multicast(uint32_t src_local, uint64_t mcast, uint32_t size, uint32_t num_dests,
                             uint32_t include_src) {
    services::count_call();
    CoreState& self = *t_inst->core;
    const uint32_t src_off = l1_offset(src_local, size, "noc multicast source");
    services::check_no_pending_read(src_off, size, [src_local] { return "noc multicast from L1 " + hex(src_local); });
    if (((mcast & params::NOC_ADDR_LOCAL_MASK) & (params::NOC_L1_ALIGNMENT - 1)) !=
        (src_local & (params::NOC_L1_ALIGNMENT - 1))) {
        fail("noc multicast: misaligned NOC transfer between " + hex(src_local) + " and " +
             hex(mcast & params::NOC_ADDR_LOCAL_MASK));
    }
    if (poison::enabled()) services::check_written_l1(self, src_off, size, "noc multicast from L1 " + hex(src_local));
    Counters& c = services::run().counters_of(self);
    std::vector<std::pair<CoreState*, uint32_t>> targets;
    for_each_mcast_core(mcast, size, num_dests, include_src != 0, "noc multicast",
                        [&](CoreState& core, uint32_t off) { targets.emplace_back(&core, off); });
    std::vector<CoreState*> cores;
    timing::TimeModel& time = services::run().time();
    // Snapshot first: the source may be one of the destinations (loopback).
    const std::vector<uint8_t> data(self.l1 + src_off, self.l1 + src_off + size);
    // The source stays in flight, as a unicast write's does, until the writes are flushed.
    t_inst->unflushed_writes.emplace_back(src_off, size);
    for (const auto& [core, off] : targets) cores.push_back(core);
    time.noc_multicast(*t_inst, cores, size);
    for (const auto& [core, off] : targets) {
        uint8_t* dst = core->l1 + off;
        // A small multicast may set semaphores (noc_semaphore_set_multicast): their words get arrival times.
        const bool word_update = size <= kTimedWordWrite && size % 4 == 0 && off % 4 == 0;
        uint32_t before[kTimedWordWrite / 4] = {};
        if (word_update) std::memcpy(before, dst, size);
        std::memmove(dst, data.data(), size);
        services::mark_written_l1(*core, off, size);
        c.noc_bytes_written_l1 += size;
        if (word_update) {
            const auto* words = reinterpret_cast<const volatile uint32_t*>(dst);
            for (uint32_t i = 0; i < size / 4; ++i) {
                time.record_word(&words[i], before[i], words[i], t_inst->time.writes_arrived);
            }
        }
    }
}

uint32_t* semaphore_word(const Endpoint& ep, const char* what) {
    if (ep.dram) fail(std::string(what) + " targets DRAM; semaphores live in L1");
    if (reinterpret_cast<uintptr_t>(ep.ptr) % 4 != 0) fail(std::string(what) + ": address is not 4-byte aligned");
    return reinterpret_cast<uint32_t*>(ep.ptr);
}

void svc_noc_atomic_inc(uint64_t dst, uint32_t incr) {
    services::count_call();
    const Endpoint ep = resolve(dst, 4, "noc_semaphore_inc");
    uint32_t* word = semaphore_word(ep, "noc_semaphore_inc");
    if (poison::enabled()) check_source(ep, 4, "noc_semaphore_inc of " + hex(dst));
    const uint32_t before = *word;
    *word += incr;
    services::run().time().noc_word_update(*t_inst, *ep.core, word, before, *word);
}

void svc_noc_atomic_inc_multicast(uint64_t mcast, uint32_t incr, uint32_t num_dests) {
    services::count_call();
    for_each_mcast_core(mcast, 4, num_dests, false, "noc_semaphore_inc_multicast", [&](CoreState& core, uint32_t off) {
        if (off % 4 != 0) fail("noc_semaphore_inc_multicast: address is not 4-byte aligned");
        auto* word = reinterpret_cast<uint32_t*>(core.l1 + off);
        if (poison::enabled()) services::check_written_l1(core, off, 4, "noc_semaphore_inc_multicast");
        const uint32_t before = *word;
        *word += incr;
        services::run().time().noc_word_update(*t_inst, core, word, before, *word);
    });
}

void svc_noc_inline_write(uint64_t dst, uint32_t value, uint32_t byte_enable) {
    services::count_call();
    const Endpoint ep = resolve(dst, 4, "noc_inline_dw_write");
    if (ep.dram) {
        services::stage_pending_reads(*t_inst);
        ep.buffer->reserve_for_write(ep.ptr, 4);
    }
    uint32_t before = 0;
    std::memcpy(&before, ep.ptr, 4);
    uint8_t bytes[4];
    std::memcpy(bytes, &value, 4);
    for (int i = 0; i < 4; ++i) {
        if (byte_enable & (1u << i)) {
            ep.ptr[i] = bytes[i];
            if (poison::enabled()) mark_destination(Endpoint{ep.dram, ep.ptr + i, 0, ep.buffer, ep.core}, 1);
        }
    }
    if (ep.core && reinterpret_cast<uintptr_t>(ep.ptr) % 4 == 0) {
        const auto* word = reinterpret_cast<const volatile uint32_t*>(ep.ptr);
        services::run().time().noc_word_update(*t_inst, *ep.core, word, before, *word);
    }
    Counters& c = services::run().counters_of(*t_inst->core);
    if (ep.dram) {
        c.noc_bytes_written_dram += 4;
    } else {
        c.noc_bytes_written_l1 += 4;
    }
}

// Reads complete at a read (or full) barrier. Writes and atomics complete when issued;
// a write (or full) barrier or writes_flushed only forgets their L1 source ranges.
void svc_noc_barrier(ttnn_moe_emu::Barrier kind) {
    services::count_call();
    if (kind == ttnn_moe_emu::Barrier::Read || kind == ttnn_moe_emu::Barrier::Full) {
        services::complete_pending_reads();
    }
    if (kind == ttnn_moe_emu::Barrier::Write || kind == ttnn_moe_emu::Barrier::WritesFlushed ||
        kind == ttnn_moe_emu::Barrier::Full) {
        t_inst->unflushed_writes.clear();
    }
    using B = ttnn_moe_emu::Barrier;
    services::run().time().noc_barrier(*t_inst, kind == B::Read || kind == B::Full,
                                       kind == B::Write || kind == B::Atomic || kind == B::Full,
                                       kind == B::WritesFlushed);
}

// Lands the reads tagged `trid` only (noc_async_read_barrier_with_trid); the other reads stay outstanding.
void svc_noc_read_barrier_with_trid(uint32_t trid) {
    services::count_call();
    services::complete_pending_reads(static_cast<int>(trid));
    services::run().time().noc_read_barrier_with_trid(*t_inst, trid);
}

// The clock a local L1 wait or store moves or stamps: a compute kernel's TRISC `risc`, a data-movement kernel's one.
timing::Thread local_thread(uint32_t risc, const char* what) {
    const bool compute = t_inst->kind == KernelKind::COMPUTE;
    if (risc >= (compute ? 3u : 1u)) {
        fail(std::string(what) + ": RISC index " + std::to_string(risc) + " is out of range (" +
             (compute ? "0..2, the TRISCs of a compute kernel" : "0 in a data-movement kernel") + ")");
    }
    return static_cast<timing::Thread>(risc);
}

void svc_wait_l1_value(const volatile uint32_t* addr, uint32_t value, uint32_t at_least, uint32_t risc) {
    services::count_call();
    l1_offset(reinterpret_cast<uintptr_t>(addr), 4, "noc_semaphore_wait");
    const timing::Thread thread = local_thread(risc, "noc_semaphore_wait");
    const bool ok = at_least ? *addr >= value : *addr == value;
    Instance& inst = *t_inst;
    if (!ok) {
        inst.wait_addr = addr;
        inst.wait_value = value;
        inst.wait = at_least ? WaitKind::L1AtLeast : WaitKind::L1Equal;
        Fiber::yield();
        inst.wait = WaitKind::None;
    }
    services::run().time().semaphore_waited(inst, thread, addr, value, at_least != 0);
}

// A plain store on the device: no API call's cost, only the stamp another RISC's wait depends on.
void svc_store_l1_word(volatile uint32_t* addr, uint32_t value, uint32_t risc, uint32_t read_modify_write) {
    l1_offset(reinterpret_cast<uintptr_t>(addr), 4, "a local semaphore store");
    if (reinterpret_cast<uintptr_t>(addr) % 4 != 0) fail("a local semaphore store: address is not 4-byte aligned");
    const timing::Thread thread = local_thread(risc, "a local semaphore store");
    const uint32_t before = *addr;
    *addr = value;
    services::run().time().word_stored(*t_inst, thread, addr, before, value, read_modify_write != 0);
}

void svc_yield() {
    t_inst->wait = WaitKind::Spin;
    Fiber::yield();
}

// L1 bank b is the logical worker core (b % grid_x, b / grid_x), as the device's L1 buffers place it.
uint32_t svc_num_l1_banks() {
    const Device& dev = *t_inst->core->device;
    return dev.grid_x() * dev.grid_y();
}

uint32_t svc_l1_bank_noc_xy(uint32_t bank) {
    const Device& dev = *t_inst->core->device;
    if (bank >= dev.grid_x() * dev.grid_y()) {
        fail("L1 bank " + std::to_string(bank) + " does not exist (the device has " +
             std::to_string(dev.grid_x() * dev.grid_y()) + ")");
    }
    const NocCoord c = dev.worker_core_from_logical_core(bank % dev.grid_x(), bank / dev.grid_x());
    return (c.y << 8) | c.x;
}

ttnn_moe_emu::Services make_table() {
    ttnn_moe_emu::Services t{};
    t.abi_version = ttnn_moe_emu::ABI_VERSION;
    t.current = &t_env;
    t.fail = &svc_fail;
    t.arg_out_of_range = &svc_arg_out_of_range;
    t.cb_reserve_back = &svc_cb_reserve_back;
    t.cb_push_back = &svc_cb_push_back;
    t.cb_wait_front = &svc_cb_wait_front;
    t.cb_pop_front = &svc_cb_pop_front;
    t.cb_pages_reservable_at_back = &svc_cb_pages_reservable_at_back;
    t.cb_pages_available_at_front = &svc_cb_pages_available_at_front;
    t.cb_write_ptr = &svc_cb_write_ptr;
    t.cb_read_ptr = &svc_cb_read_ptr;
    t.cb_set_write_ptr = &svc_cb_set_write_ptr;
    t.cb_set_read_ptr = &svc_cb_set_read_ptr;
    t.cb_info = &svc_cb_info;
    t.cb_interface = &services::cb_interface;
    t.noc_read = &svc_noc_read;
    t.noc_write = &svc_noc_write;
    t.noc_write_multicast = &svc_noc_write_multicast;
    t.noc_atomic_inc = &svc_noc_atomic_inc;
    t.noc_atomic_inc_multicast = &svc_noc_atomic_inc_multicast;
    t.noc_inline_write = &svc_noc_inline_write;
    t.noc_barrier = &svc_noc_barrier;
    t.noc_read_with_trid = &svc_noc_read_with_trid;
    t.noc_read_barrier_with_trid = &svc_noc_read_barrier_with_trid;
    t.wait_l1_value = &svc_wait_l1_value;
    t.store_l1_word = &svc_store_l1_word;
    t.yield = &svc_yield;
    t.num_l1_banks = &svc_num_l1_banks;
    t.l1_bank_noc_xy = &svc_l1_bank_noc_xy;
    services::fill_compute_services(t);
    t.fabric = fabric::services_table();
    return t;
}

}  // namespace

const ttnn_moe_emu::Services* services_table() {
    thread_local const ttnn_moe_emu::Services table = make_table();
    return &table;
}

}  // namespace ttnn_moe::emu
