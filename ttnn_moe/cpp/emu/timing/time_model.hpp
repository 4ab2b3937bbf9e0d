// The device-time model of one program run: a discrete-event model over what the
// kernels execute, driven by the emulator's service calls. It never changes what a
// kernel computes or the order the emulator runs kernels in; it only keeps clocks.
//
// - Every data-movement RISC has a clock in cycles; a compute kernel has three
//   (TRISC0 unpack, TRISC1 math, TRISC2 pack), which the compute calls advance in
//   program order: math waits for its operands' unpack, pack for the math commit, the
//   next DST acquire for the pack that freed its half (double-buffered DST).
// - Dependencies in model time: cb_push_back stamps the pages with the producer's clock,
//   cb_wait_front moves the consumer to the stamp of the last page it needs; cb_pop_front
//   stamps the freed pages, cb_reserve_back waits for them. A semaphore word keeps the
//   history of its updates (value after, time): remote writes at their arrival, local stores
//   (noc_semaphore_set, mailbox counters) at the storing RISC's clock; a wait that is
//   satisfied moves the waiter to the update that made its condition true (and every update
//   before it since the word was last set).
// - NOC transfers take latency + bytes / rate and occupy, in busy-interval timelines,
//   the DRAM bank or source core's NOC port and the destination's port (Timeline).
//   Read barriers wait for the reads' completion, write barriers for the writes' arrival.
// - Fabric packets cross each link direction as wire bytes / Ethernet rate (header and
//   framing included) plus the per-hop latency; each connection has 8 buffer slots,
//   freed when a packet has left the first link.
// Stamps follow data dependencies, not the emulator's scheduling order, so the model is
// deterministic and independent of which kernel the emulator happens to run first.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "emu/timing/arch_params.hpp"
#include "emu/timing/device_timing.hpp"
#include "emu/timing/timeline.hpp"

namespace ttnn_moe::emu {
struct CbState;
struct CoreState;
struct Instance;
}  // namespace ttnn_moe::emu

namespace ttnn_moe::emu::timing {

// The architecture the next runs are modeled for (process-wide; default "wormhole_b0").
void set_arch(const std::string& name);
const ArchParams& current_arch();

enum Thread : uint8_t { kData = 0, kUnpack = 0, kMath = 1, kPack = 2 };

// The clocks and outstanding transfers of one kernel instance.
struct KernelTime {
    std::array<uint64_t, 3> clock{};             // dataflow: [0]; compute: unpack, math, pack
    uint32_t noc = 0;                            // NOC index of a dataflow kernel
    uint64_t reads_done = 0;                     // completion of the reads issued since the last read barrier
    std::array<uint64_t, 16> trid_reads_done{};  // the same for the reads of each transaction id
    uint64_t writes_arrived = 0;                 // arrival of the writes issued since the last write barrier
    uint64_t writes_left = 0;                    // when their data left this core (noc_async_writes_flushed)
    uint64_t posted_order = 0;                   // ordering of posted writes and atomics on this kernel's NOC
    // Compute: release times of the two DST halves, acquires so far, the last commit.
    std::array<uint64_t, 2> dst_released{};
    uint64_t acquires = 0;
    uint64_t committed = 0;
    std::array<RiscSpan, 3> spans{};
};

class TimeModel {
public:
    // device_ids: the chip id of each device of the run, by device index; num_cores: the run's
    // cores (CoreState::index < num_cores), whose CB stamps and NOC ports are kept in flat tables.
    TimeModel(std::vector<uint32_t> device_ids, size_t num_cores);
    const ArchParams& arch() const { return *arch_; }

    // A dataflow API call's issue cost (dataflow_call_cycles); a NOC command's hook adds the rest
    // of noc_issue_cycles.
    void on_call(Instance& inst);

    // Circular buffers (the consumer side is the unpack thread of a compute kernel, the producer
    // side its pack thread). Call before the counters move (push, pop) or after the wait (reserve, wait).
    void cb_reserved(Instance& inst, const CbState& cb, uint32_t pages);
    void cb_pushed(Instance& inst, const CbState& cb, uint32_t pages);
    void cb_waited(Instance& inst, const CbState& cb, uint32_t pages);
    void cb_popped(Instance& inst, const CbState& cb, uint32_t pages);

    // NOC. `remote` is the other core (nullptr for DRAM, then `bank` applies).
    // trid: the read's transaction id (noc_async_read_set_trid), -1 for none.
    void noc_read(Instance& inst, const CoreState* remote, int bank, uint32_t bytes, int trid = -1);
    void noc_write(Instance& inst, const CoreState* remote, int bank, uint32_t bytes);
    void noc_multicast(Instance& inst, const std::vector<CoreState*>& targets, uint32_t bytes);
    // A remote 4-byte update of an L1 word (atomic increment, inline write, small write): the
    // arrival time is recorded in the word's history.
    void noc_word_update(Instance& inst, const CoreState& remote, const volatile uint32_t* word, uint32_t before,
                         uint32_t after);
    void noc_barrier(Instance& inst, bool reads, bool writes_arrived, bool writes_left);
    void noc_read_barrier_with_trid(Instance& inst, uint32_t trid);
    // A satisfied wait of `thread` (a compute kernel's TRISC, else kData) for word == value (>= if at_least).
    void semaphore_waited(Instance& inst, Thread thread, const volatile uint32_t* word, uint32_t value, bool at_least);
    // A local store into an L1 word by `thread` of `inst`, at its clock. A plain store starts the word's history
    // (its value depends on nothing before); a read-modify-write extends it.
    void word_stored(Instance& inst, Thread thread, const volatile uint32_t* word, uint32_t before, uint32_t after,
                     bool read_modify_write);
    // A word update landing at `arrival` on another path (a fabric packet).
    void record_word(const volatile uint32_t* word, uint32_t before, uint32_t after, uint64_t arrival);

    // Compute.
    void unpack_math(Instance& inst, uint64_t unpack_bytes, uint64_t math_cycles);
    void math_only(Instance& inst, uint64_t math_cycles);
    // SFPU work issued through the LLK, on the MATH thread or (after the DST hand-off) the PACK thread.
    void sfpu(Instance& inst, bool pack_thread, uint64_t sfpu_cycles);
    void pack(Instance& inst, uint64_t bytes);
    void dst_acquire(Instance& inst, bool full_sync);
    void dst_commit(Instance& inst);
    void dst_wait(Instance& inst);
    void dst_release(Instance& inst);

    // Fabric: a packet of `payload` bytes sent by `inst` over connection `conn` along the chips
    // `route` (route[0] the sender's chip), on `link`. Returns its arrival cycle at the destination.
    uint64_t fabric_send(Instance& inst, uint32_t conn, const std::vector<uint32_t>& route, uint32_t link,
                         uint32_t payload, bool mesh_2d);

    // The timing of each device of the run, from the instances' final clocks.
    std::vector<DeviceTiming> finish(const std::vector<std::unique_ptr<Instance>>& instances);

private:
    struct CbStamps {
        std::vector<uint64_t> pushed;  // by page slot (sequence number mod pages)
        std::vector<uint64_t> popped;
    };
    struct WordHistory {
        std::vector<std::pair<uint32_t, uint64_t>> events;  // (value after, latest update time so far)
    };
    using LinkKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // from chip, to chip, link

    // The stamps of `cb`, one of the CBs of `inst`'s core.
    CbStamps& stamps(const Instance& inst, const CbState& cb);
    Timeline& port(const CoreState& core, uint32_t noc, bool inbound);
    Timeline& dram_bank(size_t device, int bank);
    uint64_t transfer_cycles(uint64_t bytes, double rate) const;
    // A NOC command costs noc_issue_cycles in all, dataflow_call_cycles of which on_call charged.
    void issue_noc_command(Instance& inst);
    uint32_t read_latency(const CoreState& self, uint32_t x, uint32_t y) const;
    uint32_t write_latency(const CoreState& self, uint32_t x, uint32_t y) const;
    // Moves `thread` of `inst` to at least `time`, recording the wait.
    void wait_until(Instance& inst, Thread thread, uint64_t time, WaitKind kind);
    static Thread consumer_thread(const Instance& inst);
    static Thread producer_thread(const Instance& inst);

    const ArchParams* arch_;
    std::vector<uint32_t> device_ids_;
    // Looked up on every CB and NOC call: indexed by core (and CB, NOC and direction), not hashed.
    std::vector<CbStamps> cb_stamps_;             // [core index * MAX_CIRCULAR_BUFFERS + cb]
    std::vector<std::array<Timeline, 4>> ports_;  // [core index][noc * 2 + inbound]
    std::unordered_map<const volatile uint32_t*, WordHistory> words_;
    std::vector<std::vector<Timeline>> dram_banks_;
    std::map<LinkKey, Timeline> links_;
    std::map<LinkKey, LinkSpan> link_spans_;
    std::map<LinkKey, size_t> link_sender_;  // device index of the first kernel that sent over the link
    std::unordered_map<uint32_t, std::vector<uint64_t>> departures_;  // per fabric connection
};

}  // namespace ttnn_moe::emu::timing
