#include "emu/timing/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include "emu/device.hpp"
#include "emu/run_state.hpp"

namespace ttnn_moe::emu::timing {

namespace {
std::mutex g_arch_mutex;
const ArchParams* g_arch = nullptr;

const char* risc_name(KernelKind kind, size_t thread) {
    if (kind == KernelKind::BRISC) return "BRISC";
    if (kind == KernelKind::NCRISC) return "NCRISC";
    static const char* const trisc[] = {"TRISC0", "TRISC1", "TRISC2"};
    return trisc[thread];
}
}  // namespace

const char* wait_kind_name(WaitKind kind) {
    switch (kind) {
        case WaitKind::CbWaitFront:
            return "cb_wait_front";
        case WaitKind::CbReserveBack:
            return "cb_reserve_back";
        case WaitKind::Semaphore:
            return "semaphore_wait";
        case WaitKind::ReadBarrier:
            return "noc_read_barrier";
        case WaitKind::WriteBarrier:
            return "noc_write_barrier";
        case WaitKind::FabricSlot:
            return "fabric_slot";
        case WaitKind::Dst:
            return "dst_wait";
    }
    return "wait";
}

void set_arch(const std::string& name) {
    const ArchParams& params = arch_params(name);
    std::lock_guard<std::mutex> lock(g_arch_mutex);
    g_arch = &params;
}

const ArchParams& current_arch() {
    std::lock_guard<std::mutex> lock(g_arch_mutex);
    return g_arch ? *g_arch : wormhole_b0_params();
}

TimeModel::TimeModel(std::vector<uint32_t> device_ids, size_t num_cores)
    : arch_(&current_arch()),
      device_ids_(std::move(device_ids)),
      cb_stamps_(num_cores * params::MAX_CIRCULAR_BUFFERS),
      ports_(num_cores),
      dram_banks_(device_ids_.size()) {}

// ---------------------------------------------------------------- helpers

Thread TimeModel::consumer_thread(const Instance& inst) {
    return kUnpack;  // dataflow kernels have one clock, [0]; compute consumes on unpack (TRISC0)
}

Thread TimeModel::producer_thread(const Instance& inst) {
    return inst.kind == KernelKind::COMPUTE ? kPack : kData;
}

void TimeModel::wait_until(Instance& inst, Thread thread, uint64_t time, WaitKind kind) {
    uint64_t& clock = inst.time.clock[thread];
    if (time <= clock) return;
    RiscSpan& span = inst.time.spans[thread];
    span.wait_cycles[static_cast<size_t>(kind)] += time - clock;
    if (span.waits.size() < RiscSpan::kMaxWaitSpans) {
        span.waits.push_back({clock, time, kind});
    } else {
        ++span.waits_not_listed;
    }
    clock = time;
}

uint64_t TimeModel::transfer_cycles(uint64_t bytes, double rate) const {
    return bytes == 0 ? 0 : static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) / rate));
}

TimeModel::CbStamps& TimeModel::stamps(const Instance& inst, const CbState& cb) {
    const CoreState& core = *inst.core;
    CbStamps& s = cb_stamps_[core.index * params::MAX_CIRCULAR_BUFFERS + static_cast<size_t>(&cb - core.cbs.data())];
    if (s.pushed.size() != cb.num_pages) {
        s.pushed.assign(cb.num_pages, 0);
        s.popped.assign(cb.num_pages, 0);
    }
    return s;
}

Timeline& TimeModel::port(const CoreState& core, uint32_t noc, bool inbound) {
    return ports_[core.index][noc * 2 + (inbound ? 1 : 0)];
}

Timeline& TimeModel::dram_bank(size_t device, int bank) {
    auto& banks = dram_banks_[device];
    if (banks.size() <= static_cast<size_t>(bank)) banks.resize(static_cast<size_t>(bank) + 1);
    return banks[static_cast<size_t>(bank)];
}

uint32_t TimeModel::read_latency(const CoreState& self, uint32_t x, uint32_t y) const {
    const auto& l = arch_->noc_read_latency_cycles;
    if (x == self.noc.x && y == self.noc.y) return l[0];
    if (x == self.noc.x) return l[1];
    if (y == self.noc.y) return l[2];
    return l[3];
}

uint32_t TimeModel::write_latency(const CoreState& self, uint32_t x, uint32_t y) const {
    const uint32_t hops = static_cast<uint32_t>(std::abs(static_cast<int>(x) - static_cast<int>(self.noc.x)) +
                                                std::abs(static_cast<int>(y) - static_cast<int>(self.noc.y)));
    return arch_->noc_write_latency_base_cycles + arch_->noc_write_latency_per_hop_cycles * hops;
}

// ---------------------------------------------------------------- calls and CBs

void TimeModel::on_call(Instance& inst) {
    if (inst.kind != KernelKind::COMPUTE) inst.time.clock[kData] += arch_->dataflow_call_cycles;
}

void TimeModel::issue_noc_command(Instance& inst) {
    if (arch_->noc_issue_cycles > arch_->dataflow_call_cycles) {
        inst.time.clock[kData] += arch_->noc_issue_cycles - arch_->dataflow_call_cycles;
    }
}

void TimeModel::cb_reserved(Instance& inst, const CbState& cb, uint32_t pages) {
    if (pages == 0) return;
    CbStamps& s = stamps(inst, cb);
    // The last page of the reservation reuses the slot its predecessor num_pages back was popped from.
    const uint64_t last = static_cast<uint64_t>(cb.received) + pages - 1;
    if (last < cb.num_pages) return;  // first use of the slot: free from the start
    wait_until(inst, producer_thread(inst), s.popped[last % cb.num_pages], WaitKind::CbReserveBack);
}

void TimeModel::cb_pushed(Instance& inst, const CbState& cb, uint32_t pages) {
    CbStamps& s = stamps(inst, cb);
    const uint64_t now = inst.time.clock[producer_thread(inst)];
    for (uint32_t i = 0; i < pages; ++i) s.pushed[(static_cast<uint64_t>(cb.received) + i) % cb.num_pages] = now;
}

void TimeModel::cb_waited(Instance& inst, const CbState& cb, uint32_t pages) {
    if (pages == 0) return;
    CbStamps& s = stamps(inst, cb);
    const uint64_t last = static_cast<uint64_t>(cb.acked) + pages - 1;
    wait_until(inst, consumer_thread(inst), s.pushed[last % cb.num_pages], WaitKind::CbWaitFront);
}

void TimeModel::cb_popped(Instance& inst, const CbState& cb, uint32_t pages) {
    CbStamps& s = stamps(inst, cb);
    const uint64_t now = inst.time.clock[consumer_thread(inst)];
    for (uint32_t i = 0; i < pages; ++i) s.popped[(static_cast<uint64_t>(cb.acked) + i) % cb.num_pages] = now;
}

// ---------------------------------------------------------------- NOC

void TimeModel::noc_read(Instance& inst, const CoreState* remote, int bank, uint32_t bytes, int trid) {
    issue_noc_command(inst);
    KernelTime& t = inst.time;
    const CoreState& self = *inst.core;
    Timeline* resources[2] = {&port(self, t.noc, true), nullptr};
    double rate = arch_->noc_port_bytes_per_cycle;
    uint32_t latency = 0;
    if (remote) {
        resources[1] = &port(*remote, t.noc, false);
        latency = read_latency(self, remote->noc.x, remote->noc.y);
    } else {
        resources[1] = &dram_bank(self.device_index, bank);
        const NocCoord at = Device::dram_bank_noc(static_cast<uint32_t>(bank));
        latency = read_latency(self, at.x, at.y) + arch_->dram_extra_latency_cycles;
        rate = std::min(rate, arch_->dram_bytes_per_cycle / params::NUM_DRAM_BANKS);
    }
    const uint64_t duration = transfer_cycles(bytes, rate);
    const uint64_t start = earliest_common(t.clock[kData], duration, resources, 2);
    for (Timeline* r : resources) r->reserve(start, duration);
    t.reads_done = std::max(t.reads_done, start + duration + latency);
    if (trid >= 0) t.trid_reads_done[trid] = std::max(t.trid_reads_done[trid], start + duration + latency);
}

void TimeModel::noc_write(Instance& inst, const CoreState* remote, int bank, uint32_t bytes) {
    issue_noc_command(inst);
    KernelTime& t = inst.time;
    const CoreState& self = *inst.core;
    Timeline* resources[2] = {&port(self, t.noc, false), nullptr};
    double rate = arch_->noc_port_bytes_per_cycle;
    uint32_t latency = 0;
    if (remote) {
        resources[1] = &port(*remote, t.noc, true);
        latency = write_latency(self, remote->noc.x, remote->noc.y);
    } else {
        resources[1] = &dram_bank(self.device_index, bank);
        const NocCoord at = Device::dram_bank_noc(static_cast<uint32_t>(bank));
        latency = write_latency(self, at.x, at.y);
        rate = std::min(rate, arch_->dram_bytes_per_cycle / params::NUM_DRAM_BANKS);
    }
    const uint64_t duration = transfer_cycles(bytes, rate);
    const uint64_t start = earliest_common(std::max(t.clock[kData], t.posted_order), duration, resources, 2);
    for (Timeline* r : resources) r->reserve(start, duration);
    t.writes_left = std::max(t.writes_left, start + duration);
    t.writes_arrived = std::max(t.writes_arrived, start + duration + latency);
    t.posted_order = start;  // writes on one NOC leave in issue order
}

void TimeModel::noc_multicast(Instance& inst, const std::vector<CoreState*>& targets, uint32_t bytes) {
    issue_noc_command(inst);
    KernelTime& t = inst.time;
    const CoreState& self = *inst.core;
    std::vector<Timeline*> resources{&port(self, t.noc, false)};
    uint32_t latency = 0;
    for (const CoreState* core : targets) {
        resources.push_back(&port(*core, t.noc, true));
        latency = std::max(latency, write_latency(self, core->noc.x, core->noc.y));
    }
    const uint64_t duration = transfer_cycles(bytes, arch_->noc_port_bytes_per_cycle);
    const uint64_t start =
        earliest_common(std::max(t.clock[kData], t.posted_order), duration, resources.data(), resources.size());
    for (Timeline* r : resources) r->reserve(start, duration);
    t.writes_left = std::max(t.writes_left, start + duration);
    t.writes_arrived = std::max(t.writes_arrived, start + duration + latency);
    t.posted_order = start;
}

void TimeModel::noc_word_update(Instance& inst, const CoreState& remote, const volatile uint32_t* word, uint32_t before,
                                uint32_t after) {
    issue_noc_command(inst);
    KernelTime& t = inst.time;
    // Posted after the writes before it on the same NOC: it cannot overtake them.
    const uint64_t issue = std::max(t.clock[kData], t.posted_order);
    const uint64_t arrival = std::max(issue + write_latency(*inst.core, remote.noc.x, remote.noc.y), t.writes_arrived);
    t.writes_arrived = std::max(t.writes_arrived, arrival);
    record_word(word, before, after, arrival);
}

void TimeModel::record_word(const volatile uint32_t* word, uint32_t before, uint32_t after, uint64_t arrival) {
    auto& events = words_[word].events;
    // A kernel stored into the word by pointer since the last recorded update: a new history.
    if (!events.empty() && events.back().first != before) events.clear();
    const uint64_t latest = events.empty() ? arrival : std::max(arrival, events.back().second);
    events.emplace_back(after, latest);
}

void TimeModel::noc_barrier(Instance& inst, bool reads, bool writes_arrived, bool writes_left) {
    KernelTime& t = inst.time;
    if (reads) wait_until(inst, kData, t.reads_done, WaitKind::ReadBarrier);
    if (writes_arrived) wait_until(inst, kData, t.writes_arrived, WaitKind::WriteBarrier);
    if (writes_left) wait_until(inst, kData, t.writes_left, WaitKind::WriteBarrier);
}

void TimeModel::noc_read_barrier_with_trid(Instance& inst, uint32_t trid) {
    wait_until(inst, kData, inst.time.trid_reads_done[trid], WaitKind::ReadBarrier);
}

void TimeModel::word_stored(Instance& inst, Thread thread, const volatile uint32_t* word, uint32_t before,
                            uint32_t after, bool read_modify_write) {
    const uint64_t now = inst.time.clock[thread];
    if (read_modify_write) {
        record_word(word, before, after, now);
        return;
    }
    auto& events = words_[word].events;
    events.clear();
    events.emplace_back(after, now);
}

void TimeModel::semaphore_waited(Instance& inst, Thread thread, const volatile uint32_t* word, uint32_t value,
                                 bool at_least) {
    const auto it = words_.find(word);
    if (it == words_.end() || it->second.events.empty()) return;
    const auto& events = it->second.events;
    const uint32_t now = *word;
    if (events.back().first != now) return;  // stored by pointer since: no known dependency
    auto holds = [&](uint32_t v) { return at_least ? v >= value : v == value; };
    // The update that made the condition true: the earliest of the trailing run of events after which it holds.
    size_t first = events.size() - 1;
    while (first > 0 && holds(events[first - 1].first)) --first;
    wait_until(inst, thread, events[first].second, WaitKind::Semaphore);
}

// ---------------------------------------------------------------- compute

void TimeModel::unpack_math(Instance& inst, uint64_t unpack_bytes, uint64_t math_cycles) {
    auto& clock = inst.time.clock;
    clock[kUnpack] += arch_->compute_call_cycles + transfer_cycles(unpack_bytes, arch_->unpack_bytes_per_cycle);
    // Math starts once its operands are unpacked (srcA/srcB handshake).
    clock[kMath] = std::max(clock[kMath] + arch_->compute_call_cycles, clock[kUnpack]) + math_cycles;
}

void TimeModel::math_only(Instance& inst, uint64_t math_cycles) {
    inst.time.clock[kMath] += arch_->compute_call_cycles + math_cycles;
}

void TimeModel::sfpu(Instance& inst, bool pack_thread, uint64_t sfpu_cycles) {
    inst.time.clock[pack_thread ? kPack : kMath] += arch_->compute_call_cycles + sfpu_cycles;
}

void TimeModel::pack(Instance& inst, uint64_t bytes) {
    inst.time.clock[kPack] += arch_->compute_call_cycles + transfer_cycles(bytes, arch_->pack_bytes_per_cycle);
}

void TimeModel::dst_acquire(Instance& inst, bool full_sync) {
    KernelTime& t = inst.time;
    // Half sync: two DST halves, math takes the one the pack released two acquires ago.
    const uint64_t released = full_sync ? t.dst_released[(t.acquires + 1) % 2] : t.dst_released[t.acquires % 2];
    if (t.acquires >= (full_sync ? 1u : 2u)) wait_until(inst, kMath, released, WaitKind::Dst);
    ++t.acquires;
}

void TimeModel::dst_commit(Instance& inst) {
    inst.time.committed = inst.time.clock[kMath];
}

void TimeModel::dst_wait(Instance& inst) {
    wait_until(inst, kPack, inst.time.committed, WaitKind::Dst);
}

void TimeModel::dst_release(Instance& inst) {
    KernelTime& t = inst.time;
    t.dst_released[(t.acquires + 1) % 2] = t.clock[kPack];
}

// ---------------------------------------------------------------- fabric

uint64_t TimeModel::fabric_send(Instance& inst, uint32_t conn, const std::vector<uint32_t>& route, uint32_t link,
                                uint32_t payload, bool mesh_2d) {
    KernelTime& t = inst.time;
    const ArchParams& a = *arch_;
    const uint64_t packet = payload + (mesh_2d ? a.fabric_header_bytes_2d : a.fabric_header_bytes_1d);
    const uint64_t frames = (packet + a.eth_frame_bytes - 1) / a.eth_frame_bytes;
    const uint64_t wire = packet + frames * a.eth_packet_overhead_bytes;
    const uint64_t on_link = transfer_cycles(wire, a.eth_bytes_per_cycle);
    const uint64_t hop_latency = mesh_2d ? a.fabric_hop_latency_2d_cycles : a.fabric_hop_latency_1d_cycles;

    // One of the connection's buffer slots must be free: the packet 8 sends back has left the first link.
    auto& departures = departures_[conn];
    if (departures.size() >= ttnn_moe_emu::FABRIC_BUFFER_SLOTS) {
        wait_until(inst, kData, departures[departures.size() - ttnn_moe_emu::FABRIC_BUFFER_SLOTS],
                   WaitKind::FabricSlot);
    }
    // The worker writes header and payload into the router's buffer over its NOC.
    Timeline& out = port(*inst.core, t.noc, false);
    const uint64_t push = transfer_cycles(packet, a.noc_port_bytes_per_cycle);
    const uint64_t push_start = out.earliest(t.clock[kData], push);
    out.reserve(push_start, push);
    t.clock[kData] = push_start + push;

    uint64_t ready = t.clock[kData];
    uint64_t start = ready;
    for (size_t h = 0; h + 1 < route.size(); ++h) {
        const LinkKey key{route[h], route[h + 1], link};
        Timeline& line = links_[key];
        start = line.earliest(ready, on_link);
        line.reserve(start, on_link);
        LinkSpan& span = link_spans_[key];
        // The emulator may hand packets to the model out of model-time order (a later packet can take an
        // earlier gap): the first start is the smallest, not the first one seen.
        if (span.packets == 0) {
            span.first_start = start;
            link_sender_[key] = inst.core->device_index;
        }
        span.first_start = std::min(span.first_start, start);
        span.packets += 1;
        span.wire_bytes += wire;
        span.busy_cycles += on_link;
        span.last_end = std::max(span.last_end, start + on_link);
        span.last_arrival = std::max(span.last_arrival, start + on_link + hop_latency);
        if (h == 0) departures.push_back(start + on_link);
        ready = start + hop_latency;  // the head reaches the next router
    }
    return start + on_link + hop_latency;
}

// ---------------------------------------------------------------- results

std::vector<DeviceTiming> TimeModel::finish(const std::vector<std::unique_ptr<Instance>>& instances) {
    std::vector<DeviceTiming> out(device_ids_.size());
    for (auto& d : out) {
        d.arch = arch_->name;
        d.clock_ghz = arch_->clock_ghz;
    }
    for (const auto& owned : instances) {
        Instance& inst = *owned;
        DeviceTiming& d = out[inst.core->device_index];
        const size_t threads = inst.kind == KernelKind::COMPUTE ? 3 : 1;
        for (size_t th = 0; th < threads; ++th) {
            RiscSpan span = std::move(inst.time.spans[th]);
            span.core_x = inst.core->lx;
            span.core_y = inst.core->ly;
            span.risc = risc_name(inst.kind, th);
            span.kernel = inst.name;
            span.start = 0;
            span.end = inst.time.clock[th];
            d.duration_cycles = std::max(d.duration_cycles, span.end);
            d.riscs.push_back(std::move(span));
        }
    }
    // A link is reported by the device it leaves, or by its sender when that chip runs no program.
    for (const auto& [key, span] : link_spans_) {
        const auto from = std::get<0>(key);
        size_t owner = link_sender_.at(key);
        for (size_t i = 0; i < device_ids_.size(); ++i) {
            if (device_ids_[i] == from) owner = i;
        }
        LinkSpan s = span;
        s.from_chip = from;
        s.to_chip = std::get<1>(key);
        s.link = std::get<2>(key);
        out[owner].links.push_back(s);
        // The op is done when its packets have landed, whether or not a kernel waits for them.
        out[owner].duration_cycles = std::max(out[owner].duration_cycles, s.last_arrival);
    }
    for (auto& d : out) d.total_cycles = d.duration_cycles;
    return out;
}

}  // namespace ttnn_moe::emu::timing
