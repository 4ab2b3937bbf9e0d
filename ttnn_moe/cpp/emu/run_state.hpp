// State of one program run: cores with their CBs, kernel instances (fibers),
// and the scheduler. Internal to the runtime (runtime.cpp, services.cpp).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "emu/counters.hpp"
#include "emu/device.hpp"
#include "emu/device_params.hpp"
#include "emu/fabric/fabric_run.hpp"
#include "emu/fiber.hpp"
#include "emu/jit.hpp"
#include "emu/runtime.hpp"
#include "emu/timing/time_model.hpp"

namespace ttnn_moe::emu {

class ComputeEngine;
class CbTileAccessImpl;

// One circular buffer of one core: a byte ring in L1 with tt-metal's counters.
struct CbState {
    bool configured = false;
    uint32_t base = 0;  // L1 offset of the ring
    uint32_t size = 0;
    uint32_t page_size = 0;
    uint32_t num_pages = 0;
    uint32_t rd = 0;  // L1 offsets of the read / write pointers
    uint32_t wr = 0;
    uint32_t received = 0;  // pages pushed / popped since the start
    uint32_t acked = 0;
    program::DataFormat format = program::DataFormat::Invalid;
    uint32_t tile_height = 32;
    uint32_t tile_width = 32;

    uint32_t filled() const { return received - acked; }
    uint32_t end() const { return base + size; }
};

struct CbAllocation {
    uint32_t index;
    uint32_t address;
    uint32_t size;
};

struct CoreState {
    Device* device = nullptr;
    size_t device_index = 0;
    size_t index = 0;  // position among the run's cores (the time model's tables are indexed by it)
    uint32_t lx = 0, ly = 0;
    NocCoord noc;
    uint32_t slot = 0;
    uint8_t* l1 = nullptr;
    uint32_t l1_host = 0;          // the host address of l1 (below 4 GiB)
    uint8_t* l1_shadow = nullptr;  // poison mode: which L1 bytes were written (emu/poison.hpp)
    std::array<CbState, params::MAX_CIRCULAR_BUFFERS> cbs{};
    uint32_t cb_top = params::L1_CB_BASE;
    std::vector<CbAllocation> cb_allocations;
    std::array<bool, 3> processor_used{};
};

enum class WaitKind : uint8_t { None, CbFront, CbBack, L1Equal, L1AtLeast, Spin, FabricSlot };

// One kernel on one core.
struct Instance {
    Instance();
    ~Instance();       // compute_services.cpp (owns the compute engine)
    std::string name;  // kernel path
    KernelKind kind = KernelKind::BRISC;
    CoreState* core = nullptr;
    const program::KernelDescriptor* desc = nullptr;
    std::vector<uint32_t> runtime_args;
    ttnn_moe_emu::KernelEnv env{};
    size_t spec_index = 0;
    KernelEntry entry = nullptr;
    std::unique_ptr<Fiber> fiber;

    WaitKind wait = WaitKind::None;
    uint32_t wait_cb = 0;
    uint32_t wait_count = 0;
    const volatile uint32_t* wait_addr = nullptr;
    uint32_t wait_value = 0;

    // get_local_cb_interface views handed to this kernel (bit i: CB i), and the
    // values the runtime last wrote into them (to see what the kernel changed).
    uint32_t cb_views_handed = 0;
    std::array<ttnn_moe_emu::CbInterface, params::MAX_CIRCULAR_BUFFERS> cb_views{};
    std::array<ttnn_moe_emu::CbInterface, params::MAX_CIRCULAR_BUFFERS> cb_views_written{};

    // NOC reads issued and not yet completed by a read barrier: the source bytes as
    // they were at issue, landing in L1 only at the barrier, so a kernel that uses
    // the data without noc_async_read_barrier() sees stale memory or an error. The bytes
    // are staged back to back in pending_read_data (kept between barriers: no allocation per read).
    // A DRAM source is not staged at issue: only this kernel's NOC writes, or other kernels and
    // fabric deliveries while it is parked, can change DRAM, so it is staged then
    // (services::stage_pending_reads) and otherwise copied once, straight into L1, at the barrier.
    struct PendingRead {
        uint32_t dst_offset;
        uint32_t size;
        size_t data_offset;                 // in pending_read_data, once staged
        int trid;                           // transaction id (noc_async_read_set_trid), -1 for an untagged read
        const uint8_t* unstaged = nullptr;  // the DRAM source while not staged
    };
    std::vector<PendingRead> pending_reads;
    std::vector<uint8_t> pending_read_data;
    bool reads_unstaged = false;  // some pending read has an unstaged source
    // L1 source ranges (offset, size) of NOC writes not yet flushed by a write barrier or
    // noc_async_writes_flushed(). The data left at issue; the record lets the emulator
    // catch a kernel that frees (pops) those pages before the write has left them.
    std::vector<std::pair<uint32_t, uint32_t>> unflushed_writes;

    std::unique_ptr<CbTileAccessImpl> cb_access;  // compute kernels only
    std::unique_ptr<ComputeEngine> compute;
    uint32_t matmul_transpose = 0;    // set by matmul_init, used by matmul_tiles
    bool binary_acc_to_dest = false;  // set by the FPU binary inits, used by add_tiles / sub_tiles
    timing::KernelTime time;          // its clocks in the device-time model
};

class Run {
public:
    explicit Run(const std::vector<DeviceProgram>& programs);
    ~Run();
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

    std::vector<Counters> execute();

    // Used by the services (services.cpp).
    Counters& counters_of(const CoreState& core) { return counters_[core.device_index]; }
    // The worker core at NOC (x, y) of a device in this run, or nullptr.
    CoreState* core_at_noc(size_t device_index, uint32_t x, uint32_t y) {
        return x < 64 && y < 64 ? cores_by_noc_[device_index][y * 64 + x] : nullptr;
    }
    // Index in this run of the device with `id`, or -1.
    int device_index_of(uint32_t id) const {
        for (size_t d = 0; d < devices_.size(); ++d) {
            if (devices_[d]->id() == id) return static_cast<int>(d);
        }
        return -1;
    }
    Device& device(size_t index) { return *devices_[index]; }
    // Fabric connections and packets in flight (emu/fabric).
    fabric::FabricRun& fabric() { return *fabric_; }
    // The device-time model of this run (emu/timing).
    timing::TimeModel& time() { return *time_; }

private:
    CoreState* core_at(size_t device_index, uint32_t x, uint32_t y);
    void setup_cbs(size_t d, const program::ProgramDescriptor& p);
    // The bytes of L1-sharded tensors that CBs alias, written at their CB's base.
    void load_cb_shards(size_t d, const program::ProgramDescriptor& p);
    void load_l1_buffers(size_t d);
    void setup_semaphores(size_t d, const program::ProgramDescriptor& p);
    void setup_packet_header_pools(size_t d);
    void setup_kernels(size_t d, const program::ProgramDescriptor& p);
    size_t add_spec(KernelBuildSpec spec);
    void load_kernels();
    bool condition_holds(const Instance& inst) const;
    std::string describe(const Instance& inst) const;
    std::string deadlock_report() const;
    [[noreturn]] void rethrow_from(const Instance& inst) const;
    void attach_compute(Instance& inst);
    void collect_compute_counters(Instance& inst);

    std::vector<Device*> devices_;
    std::vector<Counters> counters_;
    std::vector<std::vector<CoreState*>> cores_by_noc_;  // per device: [y * 64 + x]
    std::vector<std::unique_ptr<CoreState>> cores_;
    std::vector<uint32_t> slots_;
    std::vector<KernelBuildSpec> specs_;
    std::vector<std::unique_ptr<Instance>> instances_;
    std::unique_ptr<fabric::FabricRun> fabric_;
    std::unique_ptr<timing::TimeModel> time_;
    // Where the device's L1 buffers were copied in (and are copied back from after the kernels).
    struct L1BufferCopy {
        CoreState* core;
        std::vector<uint8_t>* bytes;
        uint32_t address;
    };
    std::vector<L1BufferCopy> l1_buffer_copies_;
};

// Makes a run and its running instance visible to the services on this thread.
class RunScope {
public:
    explicit RunScope(Run* run);
    ~RunScope();
    void enter(Instance* inst);
    void leave();

private:
    Run* previous_run_;
};

// The services table handed to kernels.
const ttnn_moe_emu::Services* services_table();

}  // namespace ttnn_moe::emu
