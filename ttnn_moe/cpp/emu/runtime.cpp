#include "emu/runtime.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>

#include "emu/device_params.hpp"
#include "emu/error.hpp"
#include "emu/fabric/connection_args.hpp"
#include "emu/fiber.hpp"
#include "emu/jit.hpp"
#include "emu/l1_pool.hpp"
#include "emu/poison.hpp"
#include "emu/run_state.hpp"
#include "emu/services.hpp"

namespace ttnn_moe::emu {

using program::CBDescriptor;
using program::ComputeConfigDescriptor;
using program::CoreCoord;
using program::KernelDescriptor;
using program::ProgramDescriptor;

namespace {

std::string hex(uint64_t v) {
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}

std::string core_name(const CoreState& core) {
    return "core (" + std::to_string(core.lx) + ", " + std::to_string(core.ly) + ")";
}

// Processor a kernel runs on, as tt-metal assigns it.
KernelKind kind_of(const KernelDescriptor& k, uint32_t& noc_index) {
    using program::DataMovementProcessor;
    if (k.is_compute()) {
        noc_index = 0;
        return KernelKind::COMPUTE;
    }
    if (std::holds_alternative<program::ReaderConfigDescriptor>(k.config)) {
        noc_index = 1;  // ReaderDataMovementConfig: RISCV_1 on NOC 1
        return KernelKind::NCRISC;
    }
    if (std::holds_alternative<program::WriterConfigDescriptor>(k.config)) {
        noc_index = 0;  // WriterDataMovementConfig: RISCV_0 on NOC 0
        return KernelKind::BRISC;
    }
    const auto& dm = std::get<program::DataMovementConfigDescriptor>(k.config);
    noc_index = static_cast<uint32_t>(dm.noc) & 1u;
    return dm.processor == DataMovementProcessor::RISCV_0 ? KernelKind::BRISC : KernelKind::NCRISC;
}

std::string kernel_name_of(const KernelDescriptor& k, size_t index) {
    if (k.source_type == KernelDescriptor::SourceType::SOURCE_CODE) {
        return "<source code of kernel " + std::to_string(index) + ">";
    }
    return k.kernel_source;
}

void check_in_grid(const Device& dev, const program::CoreRangeSet& set, const std::string& what) {
    for (const auto& r : set.ranges) {
        if (r.start.x > r.end.x || r.start.y > r.end.y || r.end.x >= dev.grid_x() || r.end.y >= dev.grid_y()) {
            throw std::invalid_argument(what + ": core range (" + std::to_string(r.start.x) + ", " +
                                        std::to_string(r.start.y) + ") - (" + std::to_string(r.end.x) + ", " +
                                        std::to_string(r.end.y) + ") is not inside the " +
                                        std::to_string(dev.grid_x()) + "x" + std::to_string(dev.grid_y()) +
                                        " grid of device " + std::to_string(dev.id()));
        }
    }
}

// The cores of a device that take part in its program, each holding an L1 slot while it runs: those of a kernel,
// a circular buffer or a semaphore, and those holding L1 buffers (kernels reach those buffers over the NOC); in
// (y, x) order.
std::vector<CoreCoord> cores_taking_part(const DeviceProgram& program) {
    const Device& dev = *program.device;
    const ProgramDescriptor& p = *program.program;
    std::map<std::pair<uint32_t, uint32_t>, bool> used;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
        check_in_grid(dev, p.kernels[i].core_ranges, "kernel " + kernel_name_of(p.kernels[i], i));
        for (const auto& c : p.kernels[i].core_ranges.cores()) used[{c.y, c.x}] = true;
    }
    for (size_t i = 0; i < p.cbs.size(); ++i) {
        check_in_grid(dev, p.cbs[i].core_ranges, "circular buffer descriptor " + std::to_string(i));
        for (const auto& c : p.cbs[i].core_ranges.cores()) used[{c.y, c.x}] = true;
    }
    for (const auto& s : p.semaphores) {
        check_in_grid(dev, s.core_ranges, "semaphore " + std::to_string(s.id));
        for (const auto& c : s.core_ranges.cores()) used[{c.y, c.x}] = true;
    }
    for (const auto& [address, buffer] : program.device->l1_buffers().buffers()) {
        for (const auto& [x, y] : buffer.cores) used[{y, x}] = true;
    }
    std::vector<CoreCoord> cores;
    for (const auto& [yx, _] : used) cores.push_back({yx.second, yx.first});
    return cores;
}

// The devices of `programs` that reach each other over the fabric, as their kernels' runtime args say (each fabric
// connection names its chip and the neighbour it sends to; a line's or ring's connections join all its devices):
// groups of indices into `programs`, each in program order, the groups in the order of their first member. A device
// with no connection is a group of its own.
std::vector<std::vector<size_t>> fabric_groups(const std::vector<DeviceProgram>& programs) {
    std::map<uint32_t, size_t> index_of;  // device id (= fabric chip id) -> index
    for (size_t i = 0; i < programs.size(); ++i) index_of[programs[i].device->id()] = i;
    std::vector<size_t> parent(programs.size());
    std::iota(parent.begin(), parent.end(), size_t{0});
    const auto root = [&parent](size_t i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
    };
    const auto join = [&](uint32_t arg) {
        const auto channel = fabric::decode_channel_arg(arg);
        if (!channel) return;
        const auto src = index_of.find(channel->src_chip), dst = index_of.find(channel->dst_chip);
        if (src != index_of.end() && dst != index_of.end()) parent[root(src->second)] = root(dst->second);
    };
    for (const auto& p : programs) {
        for (const auto& kernel : p.program->kernels) {
            for (const auto& [core, args] : kernel.runtime_args) std::for_each(args.begin(), args.end(), join);
            std::for_each(kernel.common_runtime_args.begin(), kernel.common_runtime_args.end(), join);
        }
    }
    std::vector<std::vector<size_t>> groups;
    std::map<size_t, size_t> group_of_root;
    for (size_t i = 0; i < programs.size(); ++i) {
        const auto [it, added] = group_of_root.try_emplace(root(i), groups.size());
        if (added) groups.emplace_back();
        groups[it->second].push_back(i);
    }
    return groups;
}

}  // namespace

// ---------------------------------------------------------------- setup

Run::Run(const std::vector<DeviceProgram>& programs) {
    for (size_t d = 0; d < programs.size(); ++d) {
        if (!programs[d].device || !programs[d].program) throw std::invalid_argument("run: null device or program");
        for (size_t e = 0; e < d; ++e) {
            if (programs[e].device->id() == programs[d].device->id()) {
                throw std::invalid_argument("run: two programs for device " + std::to_string(programs[d].device->id()));
            }
        }
        devices_.push_back(programs[d].device);
        counters_.emplace_back();
        cores_by_noc_.emplace_back(64 * 64, nullptr);
    }
    // Cores of every device, then their L1 slots.
    std::vector<std::vector<CoreCoord>> device_cores(programs.size());
    size_t total = 0;
    for (size_t d = 0; d < programs.size(); ++d) {
        device_cores[d] = cores_taking_part(programs[d]);
        total += device_cores[d].size();
    }
    slots_ = L1Pool::instance().acquire(static_cast<uint32_t>(total));
    size_t next_slot = 0;
    for (size_t d = 0; d < programs.size(); ++d) {
        Device& dev = *programs[d].device;
        const size_t first_core = cores_.size();
        for (const auto& c : device_cores[d]) {
            auto core = std::make_unique<CoreState>();
            core->device = &dev;
            core->device_index = d;
            core->index = cores_.size();
            core->lx = c.x;
            core->ly = c.y;
            core->noc = dev.worker_core_from_logical_core(c.x, c.y);
            core->slot = slots_[next_slot++];
            core->l1 = L1Pool::instance().slot_base(core->slot);
            core->l1_host = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(core->l1));
            cores_by_noc_[d][core->noc.y * 64 + core->noc.x] = core.get();
            cores_.push_back(std::move(core));
        }
        setup_cbs(d, *programs[d].program);
        if (poison::enabled()) {
            // What a program may touch: semaphores, mailboxes and its CBs, all below the CB top.
            for (size_t i = first_core; i < cores_.size(); ++i) {
                CoreState& core = *cores_[i];
                core.l1_shadow = L1Pool::instance().shadow(core.slot);
                poison::fill(core.l1, core.cb_top);
            }
        }
        load_cb_shards(d, *programs[d].program);
        load_l1_buffers(d);
        setup_semaphores(d, *programs[d].program);
        setup_packet_header_pools(d);
        setup_kernels(d, *programs[d].program);
    }
    load_kernels();
    fabric_ = std::make_unique<fabric::FabricRun>(*this);
    std::vector<uint32_t> device_ids;
    for (const Device* dev : devices_) device_ids.push_back(dev->id());
    time_ = std::make_unique<timing::TimeModel>(std::move(device_ids), cores_.size());
}

Run::~Run() {
    L1Pool::instance().release(slots_);
}

CoreState* Run::core_at(size_t device_index, uint32_t x, uint32_t y) {
    const Device& dev = *devices_[device_index];
    const NocCoord noc = dev.worker_core_from_logical_core(x, y);
    return cores_by_noc_[device_index][noc.y * 64 + noc.x];
}

void Run::setup_cbs(size_t d, const ProgramDescriptor& p) {
    for (size_t i = 0; i < p.cbs.size(); ++i) {
        const CBDescriptor& cb = p.cbs[i];
        if (cb.format_descriptors.empty()) {
            throw std::invalid_argument("circular buffer descriptor " + std::to_string(i) +
                                        " has no format descriptor");
        }
        for (const auto& f : cb.format_descriptors) {
            if (f.buffer_index >= params::MAX_CIRCULAR_BUFFERS) {
                throw std::invalid_argument("circular buffer index " + std::to_string(f.buffer_index) +
                                            " is out of range (max " +
                                            std::to_string(params::MAX_CIRCULAR_BUFFERS - 1) + ")");
            }
            if (f.page_size == 0 || cb.total_size % f.page_size != 0) {
                throw std::invalid_argument("circular buffer " + std::to_string(f.buffer_index) + ": total_size " +
                                            std::to_string(cb.total_size) + " is not a multiple of page_size " +
                                            std::to_string(f.page_size));
            }
        }
        const auto cores = cb.core_ranges.cores();
        // The same address on every core of the range (kernels address remote CBs by their local address).
        uint32_t address = params::L1_CB_BASE;
        for (const auto& c : cores) address = std::max(address, core_at(d, c.x, c.y)->cb_top);
        // tt-metal aligns every CB base to the DRAM alignment, so DRAM pages read into a CB are aligned.
        address = (address + params::DRAM_ALIGNMENT - 1) / params::DRAM_ALIGNMENT * params::DRAM_ALIGNMENT;
        for (const auto& c : cores) {
            CoreState& core = *core_at(d, c.x, c.y);
            for (const auto& f : cb.format_descriptors) {
                CbState& s = core.cbs[f.buffer_index];
                if (s.configured) {
                    throw std::invalid_argument("circular buffer " + std::to_string(f.buffer_index) +
                                                " is configured twice on " + core_name(core));
                }
                s.configured = true;
                s.base = address;
                s.size = cb.total_size;
                s.page_size = f.page_size;
                s.num_pages = cb.total_size / f.page_size;
                s.rd = s.wr = address;
                s.format = f.data_format;
                if (f.tile) {
                    s.tile_height = f.tile->height;
                    s.tile_width = f.tile->width;
                }
            }
            core.cb_top = address + cb.total_size;
            core.cb_allocations.push_back({cb.format_descriptors.front().buffer_index, address, cb.total_size});
            if (static_cast<uint64_t>(address) + cb.total_size > params::L1_SIZE) {
                std::string list;
                for (const auto& a : core.cb_allocations) {
                    list += "\n  CB " + std::to_string(a.index) + ": " + std::to_string(a.size) + " bytes at " +
                            hex(a.address);
                }
                throw EmuError("L1 overflow on device " + std::to_string(devices_[d]->id()) + " " + core_name(core) +
                               ": circular buffers end at " + hex(static_cast<uint64_t>(address) + cb.total_size) +
                               " but L1 has " + std::to_string(params::L1_SIZE) + " bytes (" + hex(params::L1_SIZE) +
                               ")" + list);
            }
        }
    }
}

void Run::load_cb_shards(size_t d, const ProgramDescriptor& p) {
    for (const CBDescriptor& cb : p.cbs) {
        const uint8_t index = cb.format_descriptors.front().buffer_index;
        for (const auto& shard : cb.shard_contents) {
            const std::string where = "circular buffer " + std::to_string(index) + " shard on core (" +
                                      std::to_string(shard.core.x) + ", " + std::to_string(shard.core.y) + ")";
            if (!cb.core_ranges.contains(shard.core)) throw std::invalid_argument(where + ": core is not in its range");
            if (shard.bytes.size() > cb.total_size) {
                throw std::invalid_argument(where + ": " + std::to_string(shard.bytes.size()) +
                                            " bytes exceed its total_size " + std::to_string(cb.total_size));
            }
            CoreState& core = *core_at(d, shard.core.x, shard.core.y);
            const uint32_t base = core.cbs[index].base;
            std::memcpy(core.l1 + base, shard.bytes.data(), shard.bytes.size());
            services::mark_written_l1(core, base, static_cast<uint32_t>(shard.bytes.size()));
        }
    }
}

void Run::load_l1_buffers(size_t d) {
    for (auto& [address, buffer] : devices_[d]->l1_buffers().buffers()) {
        for (size_t i = 0; i < buffer.cores.size(); ++i) {
            CoreState& core = *core_at(d, buffer.cores[i].first, buffer.cores[i].second);
            if (core.cb_top > address) {
                throw EmuError("L1 overflow on device " + std::to_string(devices_[d]->id()) + " " + core_name(core) +
                               ": circular buffers end at " + hex(core.cb_top) + ", above the L1 buffer at " +
                               hex(address) + " (" + std::to_string(buffer.span) + " bytes)");
            }
            std::memcpy(core.l1 + address, buffer.bytes[i].data(), buffer.span);
            if (core.l1_shadow) poison::mark(core.l1_shadow + address, buffer.span);
            l1_buffer_copies_.push_back({&core, &buffer.bytes[i], address});
        }
    }
}

void Run::setup_packet_header_pools(size_t d) {
    // Every data-movement kernel starts with an empty pool (its allocation state zero, whatever L1 held).
    constexpr uint32_t state_bytes = params::L1_PACKET_HEADER_POOL_END - params::L1_PACKET_HEADER_POOL_STATE_BASE;
    for (auto& core : cores_) {
        if (core->device_index != d) continue;
        std::memset(core->l1 + params::L1_PACKET_HEADER_POOL_STATE_BASE, 0, state_bytes);
        if (core->l1_shadow) poison::mark(core->l1_shadow + params::L1_PACKET_HEADER_POOL_STATE_BASE, state_bytes);
    }
}

void Run::setup_semaphores(size_t d, const ProgramDescriptor& p) {
    for (const auto& s : p.semaphores) {
        if (s.id >= params::L1_NUM_SEMAPHORES) {
            throw std::invalid_argument("semaphore id " + std::to_string(s.id) + " is out of range (max " +
                                        std::to_string(params::L1_NUM_SEMAPHORES - 1) + ")");
        }
        for (const auto& c : s.core_ranges.cores()) {
            CoreState& core = *core_at(d, c.x, c.y);
            auto* word =
                reinterpret_cast<uint32_t*>(core.l1 + params::L1_SEMAPHORE_BASE + s.id * params::L1_SEMAPHORE_STRIDE);
            *word = s.initial_value;
            if (core.l1_shadow)
                poison::mark(core.l1_shadow + params::L1_SEMAPHORE_BASE + s.id * params::L1_SEMAPHORE_STRIDE, 4);
        }
    }
}

void Run::setup_kernels(size_t d, const ProgramDescriptor& p) {
    for (size_t i = 0; i < p.kernels.size(); ++i) {
        const KernelDescriptor& k = p.kernels[i];
        if (k.source_type == KernelDescriptor::SourceType::FILE_PATH &&
            !std::filesystem::is_regular_file(k.kernel_source)) {
            throw std::invalid_argument("kernel source not found: " + k.kernel_source);
        }
        uint32_t noc_index = 0;
        const KernelKind kind = kind_of(k, noc_index);
        for (const auto& c : k.core_ranges.cores()) {
            CoreState& core = *core_at(d, c.x, c.y);
            const auto slot = static_cast<size_t>(kind);
            if (core.processor_used[slot]) {
                throw std::invalid_argument("two kernels on the " + std::string(kernel_kind_name(kind)) +
                                            " processor of " + core_name(core) + " (second: " + kernel_name_of(k, i) +
                                            ")");
            }
            core.processor_used[slot] = true;
            auto inst = std::make_unique<Instance>();
            inst->name = kernel_name_of(k, i);
            inst->kind = kind;
            inst->core = &core;
            inst->desc = &k;
            if (const auto* args = k.runtime_args_of(c)) inst->runtime_args = *args;
            inst->env.runtime_args = inst->runtime_args.data();
            inst->env.num_runtime_args = static_cast<uint32_t>(inst->runtime_args.size());
            inst->env.common_args = k.common_runtime_args.data();
            inst->env.num_common_args = static_cast<uint32_t>(k.common_runtime_args.size());
            inst->env.noc_x[0] = inst->env.noc_x[1] = static_cast<uint8_t>(core.noc.x);
            inst->env.noc_y[0] = inst->env.noc_y[1] = static_cast<uint8_t>(core.noc.y);
            inst->env.logical_x = core.lx;
            inst->env.logical_y = core.ly;
            inst->env.l1_base = core.l1_host;
            inst->time.noc = noc_index;

            KernelBuildSpec spec;
            spec.source = k.kernel_source;
            spec.source_is_code = k.source_type == KernelDescriptor::SourceType::SOURCE_CODE;
            spec.kind = kind;
            spec.noc_index = noc_index;
            spec.compile_time_args = k.compile_time_args;
            spec.named_compile_time_args = k.named_compile_time_args;
            spec.defines = k.defines;
            spec.bindings = k.bindings;
            if (const auto& mesh = core.device->fabric()) {
                for (auto& define : mesh->routing_defines()) spec.defines.push_back(std::move(define));
            }
            for (size_t cb = 0; cb < params::MAX_CIRCULAR_BUFFERS; ++cb) {
                const CbState& s = core.cbs[cb];
                if (s.configured) spec.cbs[cb] = {s.format, s.page_size, s.tile_height, s.tile_width};
            }
            if (const auto* cc = std::get_if<ComputeConfigDescriptor>(&k.config)) spec.compute = *cc;
            inst->spec_index = add_spec(std::move(spec));
            instances_.push_back(std::move(inst));
        }
    }
}

size_t Run::add_spec(KernelBuildSpec spec) {
    for (size_t i = 0; i < specs_.size(); ++i) {
        const KernelBuildSpec& s = specs_[i];
        if (s.source == spec.source && s.source_is_code == spec.source_is_code && s.kind == spec.kind &&
            s.noc_index == spec.noc_index && s.compile_time_args == spec.compile_time_args &&
            s.named_compile_time_args == spec.named_compile_time_args && s.defines == spec.defines &&
            s.cbs == spec.cbs && s.compute == spec.compute && s.bindings == spec.bindings) {
            return i;
        }
    }
    specs_.push_back(std::move(spec));
    return specs_.size() - 1;
}

void Run::load_kernels() {
    JitStats stats;
    const std::vector<KernelEntry> entries = KernelJit::instance().load(specs_, stats);
    for (auto& inst : instances_) inst->entry = entries[inst->spec_index];
    // The run's builds are reported once, on the first device.
    if (!counters_.empty()) {
        counters_[0].kernel_builds += stats.builds;
        counters_[0].kernel_cache_hits += stats.cache_hits;
    }
}

// ---------------------------------------------------------------- execution

std::vector<Counters> Run::execute() {
    const ttnn_moe_emu::Services* table = services_table();
    for (auto& inst : instances_) {
        Instance* self = inst.get();
        if (self->kind == KernelKind::COMPUTE) attach_compute(*self);
        self->fiber = std::make_unique<Fiber>([self, table]() {
            self->entry(table);
            services::check_no_pending_read(0, 0, "kernel_main returned");
        });
    }
    RunScope scope(this);
    size_t unfinished = instances_.size();
    uint64_t idle_spin_passes = 0;
    while (unfinished > 0) {
        bool progress = false;
        bool all_spinning = true;
        for (auto& owned : instances_) {
            Instance& inst = *owned;
            if (inst.fiber->finished()) continue;
            if (!condition_holds(inst)) continue;
            const bool was_spinning = inst.wait == WaitKind::Spin;
            inst.wait = WaitKind::None;
            scope.enter(&inst);
            inst.fiber->resume();
            scope.leave();
            services::stage_pending_reads(inst);  // other kernels and fabric deliveries may write DRAM now
            if (inst.fiber->error()) rethrow_from(inst);
            if (inst.fiber->finished()) --unfinished;
            progress = true;
            if (!(was_spinning && inst.wait == WaitKind::Spin)) all_spinning = false;
        }
        const bool delivered = fabric_->advance(!progress);
        if (!progress && !delivered) throw EmuError(deadlock_report());
        // Kernels only re-polling L1 (no API progress) for this long wait for something that never comes.
        idle_spin_passes = all_spinning && !delivered ? idle_spin_passes + 1 : 0;
        if (idle_spin_passes > 2'000'000) throw EmuError(deadlock_report());
    }
    fabric_->finish();
    // L1 buffers keep what the kernels left in them.
    for (const L1BufferCopy& copy : l1_buffer_copies_) {
        std::memcpy(copy.bytes->data(), copy.core->l1 + copy.address, copy.bytes->size());
    }
    std::vector<timing::DeviceTiming> timings = time_->finish(instances_);
    for (size_t d = 0; d < counters_.size(); ++d) counters_[d].timing = std::move(timings[d]);
    for (auto& inst : instances_) {
        CoreState& core = *inst->core;
        counters_[core.device_index].core_busy[{core.lx, core.ly}] += inst->env.api_calls;
        if (inst->compute) collect_compute_counters(*inst);
    }
    return counters_;
}

bool Run::condition_holds(const Instance& inst) const {
    switch (inst.wait) {
        case WaitKind::None:
        case WaitKind::Spin:
            return true;
        case WaitKind::CbFront: {
            const CbState& s = inst.core->cbs[inst.wait_cb];
            return s.filled() >= inst.wait_count;
        }
        case WaitKind::CbBack: {
            const CbState& s = inst.core->cbs[inst.wait_cb];
            return s.num_pages - s.filled() >= inst.wait_count;
        }
        case WaitKind::L1Equal:
            return *inst.wait_addr == inst.wait_value;
        case WaitKind::L1AtLeast:
            return *inst.wait_addr >= inst.wait_value;
        case WaitKind::FabricSlot:
            return fabric_->slot_free(inst.wait_value);
    }
    return true;
}

std::string Run::describe(const Instance& inst) const {
    return "kernel " + inst.name + " [" + kernel_kind_name(inst.kind) + "] on device " +
           std::to_string(inst.core->device->id()) + " " + core_name(*inst.core);
}

std::string Run::deadlock_report() const {
    std::string out = "deadlock: no kernel can make progress; blocked kernels:";
    for (const auto& owned : instances_) {
        const Instance& inst = *owned;
        if (inst.fiber->finished()) continue;
        out += "\n  " + describe(inst) + ": ";
        switch (inst.wait) {
            case WaitKind::CbFront: {
                const CbState& s = inst.core->cbs[inst.wait_cb];
                out += "cb_wait_front(cb " + std::to_string(inst.wait_cb) + ", " + std::to_string(inst.wait_count) +
                       " pages) but " + std::to_string(s.filled()) + " of " + std::to_string(s.num_pages) +
                       " pages are filled";
                break;
            }
            case WaitKind::CbBack: {
                const CbState& s = inst.core->cbs[inst.wait_cb];
                out += "cb_reserve_back(cb " + std::to_string(inst.wait_cb) + ", " + std::to_string(inst.wait_count) +
                       " pages) but " + std::to_string(s.num_pages - s.filled()) + " of " +
                       std::to_string(s.num_pages) + " pages are free";
                break;
            }
            case WaitKind::L1Equal:
            case WaitKind::L1AtLeast: {
                uint32_t slot = 0, offset = 0;
                const auto addr = reinterpret_cast<uintptr_t>(inst.wait_addr);
                L1Pool::instance().locate(addr, slot, offset);
                std::string what = "L1 address " + hex(offset);
                if (offset >= params::L1_SEMAPHORE_BASE &&
                    offset < params::L1_SEMAPHORE_BASE + params::L1_NUM_SEMAPHORES * params::L1_SEMAPHORE_STRIDE) {
                    what = "semaphore " +
                           std::to_string((offset - params::L1_SEMAPHORE_BASE) / params::L1_SEMAPHORE_STRIDE) + " (" +
                           what + ")";
                }
                out += "noc_semaphore_wait" + std::string(inst.wait == WaitKind::L1AtLeast ? "_min" : "") + " on " +
                       what + " for value " + (inst.wait == WaitKind::L1AtLeast ? ">= " : "== ") +
                       std::to_string(inst.wait_value) + ", current value " + std::to_string(*inst.wait_addr);
                break;
            }
            case WaitKind::Spin:
                out += "polling L1 in a loop that no other kernel satisfies";
                break;
            case WaitKind::FabricSlot:
                out += fabric_->describe_slot_wait(inst.wait_value);
                break;
            case WaitKind::None:
                out += "runnable";
                break;
        }
    }
    return out + fabric_->report();
}

void Run::rethrow_from(const Instance& inst) const {
    try {
        std::rethrow_exception(inst.fiber->error());
    } catch (const std::exception& e) {
        throw EmuError(describe(inst) + ": " + e.what());
    } catch (...) {
        throw EmuError(describe(inst) + ": unknown exception");
    }
}

// ---------------------------------------------------------------- entry points

std::vector<Counters> run_programs(const std::vector<DeviceProgram>& programs) {
    std::vector<Counters> result;
    {
        Run run(programs);
        result = run.execute();
    }
    for (size_t d = 0; d < programs.size(); ++d) programs[d].device->counters().add(result[d]);
    return result;
}

Counters run_program(Device& device, const ProgramDescriptor& program) {
    return run_programs({{&device, &program}}).front();
}

std::vector<std::pair<uint32_t, Counters>> run_mesh_program(Mesh& mesh, const program::MeshProgramDescriptor& mp) {
    std::vector<DeviceProgram> programs;
    for (const auto& [range, prog] : mp.mesh_programs) {
        if (range.end.row >= mesh.rows() || range.end.col >= mesh.cols() || range.start.row > range.end.row ||
            range.start.col > range.end.col) {
            throw std::invalid_argument("mesh program range (" + std::to_string(range.start.row) + ", " +
                                        std::to_string(range.start.col) + ") - (" + std::to_string(range.end.row) +
                                        ", " + std::to_string(range.end.col) + ") is not inside the " +
                                        std::to_string(mesh.rows()) + "x" + std::to_string(mesh.cols()) + " mesh");
        }
        for (uint32_t r = range.start.row; r <= range.end.row; ++r) {
            for (uint32_t c = range.start.col; c <= range.end.col; ++c) {
                programs.push_back({mesh.device(r, c).get(), &prog});
            }
        }
    }
    std::vector<uint64_t> cores_of(programs.size());
    uint64_t cores = 0;
    for (size_t i = 0; i < programs.size(); ++i) cores += cores_of[i] = cores_taking_part(programs[i]).size();
    std::vector<std::pair<uint32_t, Counters>> out;
    if (cores <= L1Pool::instance().num_free()) {
        const std::vector<Counters> counters = run_programs(programs);
        for (size_t i = 0; i < programs.size(); ++i) out.emplace_back(programs[i].device->id(), counters[i]);
    } else {
        // Too few L1 slots for every device at once: the devices that reach each other over the fabric run
        // together, one such group at a time (a program whose devices do not talk: one device at a time; a
        // line all-to-all on a 16x8 mesh: a column of 16). A device that waits on or writes to one outside its
        // group fails the run with the emulator's error, never a wrong result. Every device's run starts at
        // time 0 either way, and groups share no link, so the counters and modeled times are the same.
        const std::vector<std::vector<size_t>> groups = fabric_groups(programs);
        std::vector<Counters> counters(programs.size());
        uint64_t largest = 0;
        try {
            for (const auto& group : groups) {
                std::vector<DeviceProgram> members;
                uint64_t group_cores = 0;
                for (size_t i : group) {
                    members.push_back(programs[i]);
                    group_cores += cores_of[i];
                }
                largest = std::max(largest, group_cores);
                const std::vector<Counters> group_counters = run_programs(members);
                for (size_t j = 0; j < group.size(); ++j) counters[group[j]] = group_counters[j];
            }
        } catch (const EmuError& e) {
            throw EmuError(std::string(e.what()) + " [the mesh program needs " + std::to_string(cores) +
                           " emulated L1 slots at once, " + std::to_string(L1Pool::instance().num_free()) + " of " +
                           std::to_string(L1Pool::instance().num_slots()) + " are free, so its devices ran in " +
                           std::to_string(groups.size()) + " groups joined by their fabric connections, " +
                           std::to_string(largest) + " slots for the largest so far]");
        }
        for (size_t i = 0; i < programs.size(); ++i) out.emplace_back(programs[i].device->id(), counters[i]);
    }
    return out;
}

}  // namespace ttnn_moe::emu
