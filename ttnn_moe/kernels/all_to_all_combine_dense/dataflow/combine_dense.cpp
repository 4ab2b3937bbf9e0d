// all_to_all_combine_dense: this data-movement kernel runs on each of the S cores of a device. The
// first C, (0, 0) .. (C - 1, 0), are the senders, core c with its own block of the fabric links,
// and run steps 1 to 4; the others only sum (step 4) once every sender has signalled sem_ready.
//
// 1. Line barrier with core c of every peer (every member runs this program before remote
//    writes start).
// 2. Each used slot s of core c's share of [0, num_slots) (s = c mod C): slot_source[s] = (q, t); the reduced
//    row goes to partials[position, t] on the device at position q (NOC when q is this
//    device, fabric otherwise), and presence[q][t] is set: in L1 when T fits one presence window,
//    else in this core's outgoing presence page for q in DRAM. The share is taken from both ends
//    in turn (both directions of the line busy, farthest first); slot_source is read kSlotBatch / 2
//    entries at a time per end; two rows are read behind one barrier while the last two are sent.
// 3. Presence row q goes to presence page position * L + (core c's first link) on device q as
//    fused write + increment packets on the core's first link (once they land, so has every row
//    sent on it) to core c there, after a flushed increment on each of its other links (rows
//    take turns on the core's links); above one window, a window at a time read back from DRAM.
//    Once core c of every peer has signalled, and this core's own rows and presence page have
//    landed, the core records its status in core 0's cb_status and increments sem_ready on every
//    one of the S cores: at C, every row sent to this device has landed.
// 4. For each window of core c's share of the tokens, the core merges the presence pages of every
//    (position, core) for it into its presence rows and signals sem_windows_merged; the partial
//    reader (read_partials.cpp, the other RISC and NOC) feeds the partials[q, t] that arrived, in
//    ascending q, to the compute kernel (sum_partials.cpp: fp32 accumulation), and this kernel
//    writes each token's sum (bf16 or fp32) in one go; with return_partials, absent partial rows
//    are written as zeros. Skipping absent partials instead of adding +0.0 can differ from the
//    golden only in the sign of a zero.
//
// The io order, the runtime args and the named compile-time args are listed in
// cpp/ops/all_to_all_combine_dense/all_to_all_combine_dense_shared.hpp; the compile-time
// args are the 7 interleaved accessors (IsDram|RuntimePageSize) in io order.
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130 named=cb_row:0,cb_out:2,cb_presence:3,cb_stage:4,cb_headers:5,sem_init:0,sem_partials:1,sem_windows_merged:2,sem_windows_read:3,cb_status:8,sem_ready:4 defines=ROUTING_MODE=137 label=1d
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130 named=cb_row:0,cb_out:2,cb_presence:3,cb_stage:4,cb_headers:5,sem_init:0,sem_partials:1,sem_windows_merged:2,sem_windows_read:3,cb_status:8,sem_ready:4 defines=ROUTING_MODE=162;FABRIC_2D=1 label=2d
#include <cstdint>
#include <tuple>

#include "../../../cpp/ops/all_to_all_combine_dense/all_to_all_combine_dense_shared.hpp"
#include "../../common/dataflow/fabric_line.hpp"
#include "../../common/dataflow/scratch.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::all_to_all_combine_dense_shared;
using moe_fabric::FabricLine;
using moe_kernel::align_up;

namespace {

constexpr uint32_t cb_row = get_named_compile_time_arg_val(named_arg::kCbRow);
constexpr uint32_t cb_out = get_named_compile_time_arg_val(named_arg::kCbOut);
constexpr uint32_t cb_presence = get_named_compile_time_arg_val(named_arg::kCbPresence);
constexpr uint32_t cb_stage = get_named_compile_time_arg_val(named_arg::kCbStage);
constexpr uint32_t cb_headers = get_named_compile_time_arg_val(named_arg::kCbHeaders);
constexpr uint32_t sem_init = get_named_compile_time_arg_val(named_arg::kSemInit);
constexpr uint32_t sem_partials = get_named_compile_time_arg_val(named_arg::kSemPartials);
constexpr uint32_t sem_windows_merged = get_named_compile_time_arg_val(named_arg::kSemWindowsMerged);
constexpr uint32_t sem_windows_read = get_named_compile_time_arg_val(named_arg::kSemWindowsRead);
constexpr uint32_t cb_status = get_named_compile_time_arg_val(named_arg::kCbStatus);
constexpr uint32_t sem_ready = get_named_compile_time_arg_val(named_arg::kSemReady);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<kNumIo, 0>();

struct Args {
    uint32_t address[kNumIo];
    uint32_t num_tokens, hidden, line_size, position, capacity, max_payload;
    bool output_is_fp32, return_partials;
    uint32_t presence_stride, merge_pages, num_links, core, num_cores, num_sum_cores;
    uint32_t route_arg() const { return dataflow_arg::kRoutes; }
    uint32_t core_noc_arg() const { return dataflow_arg::kRoutes + moe_fabric::kRouteWordsPerPosition * line_size; }
    uint32_t connection_arg() const { return core_noc_arg() + 2 * num_sum_cores; }
    bool sender() const { return core < num_cores; }
    uint32_t core_links() const {
        return ttnn_moe::all_to_all_combine_dense_shared::core_links(core, num_links, num_cores);
    }
    // Presence page of (position q, core c') in the presence tensor.
    uint32_t presence_page(uint32_t q, uint32_t c) const {
        return q * num_links + core_first_link(c, num_links, num_cores);
    }
    // Above one presence window: this core's outgoing presence page for position q.
    uint32_t outgoing_presence_page(uint32_t q) const { return line_size * num_links + presence_page(q, core); }
    bool windowed() const { return presence_windowed(num_tokens); }
    // NOC address of `l1` on core c' of this device.
    uint64_t core_noc_addr(uint32_t c, uint32_t l1) const {
        return get_noc_addr(get_arg_val<uint32_t>(core_noc_arg() + 2 * c),
                            get_arg_val<uint32_t>(core_noc_arg() + 2 * c + 1), l1);
    }
    uint32_t row_bytes() const { return hidden * 2; }
    uint32_t presence_bytes() const { return num_tokens * 4; }
    uint32_t out_element_bytes() const { return output_is_fp32 ? 4 : 2; }
};

Args read_args() {
    Args a;
    for (uint32_t i = 0; i < kNumIo; ++i) a.address[i] = get_arg_val<uint32_t>(i);
    a.num_tokens = get_arg_val<uint32_t>(dataflow_arg::kNumTokens);
    a.hidden = get_arg_val<uint32_t>(dataflow_arg::kHidden);
    a.line_size = get_arg_val<uint32_t>(dataflow_arg::kLineSize);
    a.position = get_arg_val<uint32_t>(dataflow_arg::kPosition);
    a.capacity = get_arg_val<uint32_t>(dataflow_arg::kCapacity);
    a.max_payload = get_arg_val<uint32_t>(dataflow_arg::kMaxPacketPayload);
    a.output_is_fp32 = get_arg_val<uint32_t>(dataflow_arg::kOutputIsFp32) != 0;
    a.return_partials = get_arg_val<uint32_t>(dataflow_arg::kReturnPartials) != 0;
    a.presence_stride = get_arg_val<uint32_t>(dataflow_arg::kPresenceStride);
    a.merge_pages = get_arg_val<uint32_t>(dataflow_arg::kPresenceMergePages);
    a.num_links = get_arg_val<uint32_t>(dataflow_arg::kNumLinks);
    a.core = get_arg_val<uint32_t>(dataflow_arg::kCore);
    a.num_cores = get_arg_val<uint32_t>(dataflow_arg::kNumCores);
    a.num_sum_cores = get_arg_val<uint32_t>(dataflow_arg::kNumSumCores);
    return a;
}

// Accessors take the DRAM-aligned page size (the bank stride of the pages).
uint32_t page_bytes(const Args& a, uint32_t io) {
    switch (io) {
        case kReduced:
        case kPartials:
            return align_up(a.row_bytes());
        case kSlotSource:
            return align_up(8);
        case kOutput:
            return align_up(a.hidden * a.out_element_bytes());
        case kPresence:
            return align_up(a.presence_bytes());
        case kStatus:
            return align_up(kStatusWords * 4);
        default:
            return align_up(4);  // num_slots
    }
}

template <uint32_t I>
auto tensor(const Args& a) {
    return TensorAccessor(std::get<I>(kTensorArgs), a.address[I], page_bytes(a, I));
}

// L1 blocks of the scratch CBs.
struct Scratch {
    uint32_t row, presence, stage, headers, status;
    uint32_t row_stride, presence_stride;
    // The 2 x kRowsPerRead reduced-row buffers.
    uint32_t row_buffer(uint32_t i) const { return row + i * row_stride; }
    volatile uint32_t* stage_words() const { return moe_kernel::words(stage); }
    // presence_row(q)[t - presence_first] != 0: position q holds (after the exchange: sent) a
    // partial of token t, for t in the window the rows hold.
    volatile uint32_t* presence_row(uint32_t q) const { return moe_kernel::words(presence + q * presence_stride); }
    uint32_t presence_first;  // the token of the rows' first word
    bool present(uint32_t q, uint32_t t) const { return presence_row(q)[t - presence_first] != 0; }
    uint32_t page_in;  // merge_pages buffers where presence pages are read in before they are merged into the rows
};

Scratch reserve_scratch(const Args& a) {
    static_assert(sizeof(PACKET_HEADER_TYPE) <= kHeaderSlotBytes, "cb_headers holds one packet header");
    Scratch s;
    s.presence_stride = a.presence_stride;
    s.row_stride = align_up(a.row_bytes());
    s.row = moe_scratch::reserve(cb_row, 2 * kRowsPerRead * s.row_stride);
    s.presence = moe_scratch::reserve(cb_presence, (a.line_size + a.merge_pages) * a.presence_stride);
    s.page_in = s.presence + a.line_size * a.presence_stride;
    s.presence_first = 0;
    s.stage = moe_scratch::reserve(cb_stage, kSlotBatch * moe_kernel::kDramAlign);
    s.headers = moe_scratch::reserve(cb_headers, sizeof(PACKET_HEADER_TYPE));
    s.status = moe_scratch::reserve(cb_status, a.num_cores * kStageBytes);
    return s;
}

void clear_status(uint32_t* status) {
    for (uint32_t w = 0; w < kStatusWords; ++w) status[w] = 0;
    status[kFirstBadSlot] = kNone;
}

// num_slots, clamped to the capacity (recorded in status).
uint32_t read_num_slots(const Args& a, const Scratch& s, uint32_t* status) {
    noc_async_read(tensor<kNumSlots>(a).get_noc_addr(0), s.stage, 4);
    noc_async_read_barrier();
    uint32_t num_slots = s.stage_words()[0];
    if (num_slots > a.capacity) {
        status[kNumSlotsClamped] = 1;
        status[kNumSlotsRead] = num_slots;
        num_slots = a.capacity;
    }
    return num_slots;
}

// Above one window, the source of the presence marks: four words of 1 in row 0, one per word offset
// of a 16-byte DRAM write.
uint32_t presence_marks(const Scratch& s) {
    return s.presence;
}

// Every presence row cleared; above one window, this core's outgoing presence pages instead, by
// writes of the cleared row page_in (row 0 then holds the marks).
void clear_presence(const Args& a, const Scratch& s) {
    if (!a.windowed()) {
        for (uint32_t q = 0; q < a.line_size; ++q)
            moe_kernel::fill_words(s.presence + q * s.presence_stride, a.num_tokens, 0);
        return;
    }
    const auto presence = tensor<kPresence>(a);
    const uint32_t window_bytes = kPresenceWindowTokens * 4;
    moe_kernel::fill_words(s.page_in, kPresenceWindowTokens, 0);
    for (uint32_t q = 0; q < a.line_size; ++q) {
        for (uint32_t done = 0; done < a.presence_bytes(); done += window_bytes) {
            const uint32_t bytes = a.presence_bytes() - done < window_bytes ? a.presence_bytes() - done : window_bytes;
            noc_async_write(s.page_in, presence.get_noc_addr(a.outgoing_presence_page(q), done), bytes);
        }
    }
    moe_kernel::fill_words(presence_marks(s), 4, 1);
    noc_async_write_barrier();  // cleared before any mark lands
}

// presence[q][t] = 1: in L1, or above one window a 4-byte write to the outgoing page from the mark
// word that shares t's offset modulo 16 bytes (DRAM writes keep it).
template <typename Presence>
void mark_present(const Args& a, const Scratch& s, const Presence& presence, uint32_t q, uint32_t t) {
    if (!a.windowed()) {
        s.presence_row(q)[t] = 1;
        return;
    }
    noc_async_write(presence_marks(s) + (t % 4) * 4, presence.get_noc_addr(a.outgoing_presence_page(q), t * 4), 4);
}

// A slot whose row has been read into its buffer and waits to be sent.
struct ReadSlot {
    uint32_t q, t, buffer;
};

// The read slot's row to partials[position, t] on device q (NOC when q is this device, fabric
// otherwise, the remote rows taking turns on the core's links), marking presence[q][t]; its buffer
// may be refilled after.
template <typename Partials, typename Presence>
void send_row(const Args& a, const Scratch& s, FabricLine& line, const Partials& partials, const Presence& presence,
              const ReadSlot& r, uint32_t& remote_rows) {
    const uint64_t dst = partials.get_noc_addr(a.position * a.num_tokens + r.t);
    if (r.q == a.position) {
        noc_async_write(r.buffer, dst, a.row_bytes());
    } else {
        line.write(r.q, r.buffer, dst, a.row_bytes(), remote_rows++ % line.num_links());
    }
    mark_present(a, s, presence, r.q, r.t);
    noc_async_writes_flushed();
}

// A window of slot_source entries of this core's share, read in behind one barrier: the entries of
// share indices [first, end) (slot c + k x C for index k) at its half of cb_stage.
struct SlotEntries {
    uint32_t buffer, first = 1, end = 0;
    bool holds(uint32_t k) const { return k >= first && k < end; }
    volatile uint32_t* entry(uint32_t k) const {
        return moe_kernel::words(buffer + (k - first) * moe_kernel::kDramAlign);
    }
};

// slot_source entry of share index k. When neither window holds it, the window `w` of its end reads
// the kSlotBatch / 2 indices from k upwards (`upward`, the front) or down to k (the back).
template <typename SlotSource>
volatile uint32_t* slot_entry(const Args& a, const SlotSource& slot_source, SlotEntries& w, const SlotEntries& other,
                              uint32_t k, uint32_t share, bool upward) {
    if (other.holds(k)) return other.entry(k);
    if (!w.holds(k)) {
        constexpr uint32_t kWindow = kSlotBatch / 2;
        w.first = upward ? k : (k + 1 > kWindow ? k + 1 - kWindow : 0);
        w.end = upward ? (share - k > kWindow ? k + kWindow : share) : k + 1;
        for (uint32_t i = w.first; i < w.end; ++i) {
            noc_async_read(slot_source.get_noc_addr(a.core + i * a.num_cores),
                           w.buffer + (i - w.first) * moe_kernel::kDramAlign, 8);
        }
        noc_async_read_barrier();
    }
    return w.entry(k);
}

// Every used slot of this core's share to partials[position, t] on its source device q. The share is
// every C-th slot from slot c: slots come in ascending (position, token), so each core, and with it
// each link, carries about 1/C of the rows to every destination (contiguous shares put the rows to
// the far positions of a long line on one link). The share is taken from both ends in turn: its
// front holds the lowest positions, its back the highest, so a device inside the line keeps both
// directions busy from the start (in ascending order it sent every row one way, then the other),
// each farthest first. slot_source entries are read kSlotBatch / 2 at a time per end; each row is
// read into one of two buffers while the previous slot's row is sent from the other. A slot naming
// a source outside the line or the tokens is recorded in status.
void send_slot_rows(const Args& a, const Scratch& s, FabricLine& line, uint32_t num_slots, uint32_t* status) {
    const auto slot_source = tensor<kSlotSource>(a);
    const auto reduced = tensor<kReduced>(a);
    const auto partials = tensor<kPartials>(a);
    const auto presence = tensor<kPresence>(a);
    const uint32_t share = a.core < num_slots ? (num_slots - a.core + a.num_cores - 1) / a.num_cores : 0;
    SlotEntries front{s.stage};
    SlotEntries back{s.stage + kSlotBatch / 2 * moe_kernel::kDramAlign};
    ReadSlot pending[kRowsPerRead];
    uint32_t num_pending = 0;
    uint32_t next_buffer = 0;
    uint32_t remote_rows = 0;
    uint32_t low = 0;  // share indices [low, high) not taken yet
    uint32_t high = share;
    bool from_front = true;
    do {
        ReadSlot batch[kRowsPerRead];
        uint32_t n = 0;
        for (; n < kRowsPerRead && low < high; from_front = !from_front) {
            const uint32_t k = from_front ? low++ : --high;
            const uint32_t slot = a.core + k * a.num_cores;
            volatile uint32_t* source = from_front ? slot_entry(a, slot_source, front, back, k, share, true)
                                                   : slot_entry(a, slot_source, back, front, k, share, false);
            const uint32_t q = source[0];
            const uint32_t t = source[1];
            if (q >= a.line_size || t >= a.num_tokens) {
                ++status[kBadSlots];
                if (slot < status[kFirstBadSlot]) status[kFirstBadSlot] = slot;
                continue;
            }
            batch[n] = ReadSlot{q, t, s.row_buffer(next_buffer)};
            next_buffer = (next_buffer + 1) % (2 * kRowsPerRead);
            noc_async_read(reduced.get_noc_addr(slot), batch[n++].buffer, a.row_bytes());
        }
        for (uint32_t i = 0; i < num_pending; ++i) send_row(a, s, line, partials, presence, pending[i], remote_rows);
        noc_async_read_barrier();
        for (uint32_t i = 0; i < n; ++i) pending[i] = batch[i];
        num_pending = n;
    } while (num_pending > 0);
}

// Presence row q to this core's presence page of `position` on device q, as fused write +
// increment packets on the core's first link after a flushed increment on each of its other links,
// all to core c there; above one window a window at a time, read back from the outgoing pages. Then
// waits for the same from core c of every peer.
void exchange_presence(const Args& a, const Scratch& s, FabricLine& line) {
    const auto presence = tensor<kPresence>(a);
    const uint32_t own_page = a.presence_page(a.position, a.core);
    const uint64_t sem_partials_noc = get_noc_addr(get_semaphore(sem_partials));
    for (uint32_t q = 0; q < a.line_size; ++q) {
        if (q == a.position) continue;
        for (uint32_t link = 1; link < line.num_links(); ++link) line.atomic_inc(q, sem_partials_noc, link);
    }
    if (a.windowed()) noc_async_write_barrier();  // the marks have landed before they are read back
    uint32_t packets = 0;
    for (uint32_t first = 0; first < a.num_tokens; first += kPresenceWindowTokens) {
        const uint32_t left = a.num_tokens - first;
        const uint32_t bytes = 4 * (left < kPresenceWindowTokens ? left : kPresenceWindowTokens);
        if (a.windowed()) {
            for (uint32_t q = 0; q < a.line_size; ++q) {
                noc_async_read(presence.get_noc_addr(a.outgoing_presence_page(q), first * 4),
                               s.presence + q * s.presence_stride, bytes);
            }
            noc_async_read_barrier();
        }
        const uint64_t window_dst = presence.get_noc_addr(own_page, first * 4);
        for (uint32_t q = 0; q < a.line_size; ++q) {
            const uint32_t row = s.presence + q * s.presence_stride;
            if (q == a.position) {
                noc_async_write(row, window_dst, bytes);
            } else {
                line.write_and_signal(q, row, window_dst, bytes, sem_partials_noc);
            }
        }
        noc_async_writes_flushed();  // the rows are refilled with the next window
        packets += line.packets_for(bytes);
    }
    noc_async_write_barrier();
    moe_fabric::wait_for_line(line, sem_partials, packets + line.num_links() - 1);
}

// Until every sender's received rows have landed (sem_ready at C).
void wait_for_senders(const Args& a) {
    noc_semaphore_wait(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_ready)), a.num_cores);
}

// This core's status record into slot `core` of core 0's cb_status, then sem_ready on every one of
// the S cores: this core's own rows, its presence pages and everything core c of the peers sent have
// landed. Returns once every sender has done so (everything sent to this device has landed).
void signal_ready(const Args& a, const Scratch& s, const uint32_t* status) {
    const uint32_t slot = s.status + a.core * kStageBytes;
    for (uint32_t w = 0; w < kStatusWords; ++w) moe_kernel::words(slot)[w] = status[w];
    if (a.core != 0) {
        noc_async_write(slot, a.core_noc_addr(0, slot), kStatusWords * 4);
        noc_async_write_barrier();
    }
    for (uint32_t c = 0; c < a.num_sum_cores; ++c) {
        if (c == a.core) {
            noc_semaphore_inc(get_noc_addr(get_semaphore(sem_ready)), 1);
        } else {
            noc_semaphore_inc(a.core_noc_addr(c, get_semaphore(sem_ready)), 1);
        }
    }
    wait_for_senders(a);
}

// Presence rows of the received partials of tokens [first, end) (at most one window): row q is the
// union of the pages every core of position q sent (their tokens are disjoint: each slot is one
// (position, token) pair). The rows start at the DRAM-aligned token at or below `first`. Core 0's
// pages are read straight into the rows, the other cores' a batch of merge_pages at a time into
// the page buffers, one barrier per batch (a barrier per page cost a DRAM latency each: 64 of
// them on a line of 16 with 4 cores).
void merge_presence(const Args& a, Scratch& s, uint32_t first, uint32_t end) {
    const auto presence = tensor<kPresence>(a);
    s.presence_first = first - first % (moe_kernel::kDramAlign / 4);
    const uint32_t words = end - s.presence_first;
    const uint32_t offset = s.presence_first * 4;
    for (uint32_t q = 0; q < a.line_size; ++q) {
        noc_async_read(presence.get_noc_addr(a.presence_page(q, 0), offset), s.presence + q * s.presence_stride,
                       words * 4);
    }
    const uint32_t others = a.num_cores - 1;
    const uint32_t other_pages = a.line_size * others;
    uint32_t batch = 0;
    do {
        const uint32_t n = other_pages - batch < a.merge_pages ? other_pages - batch : a.merge_pages;
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t q = (batch + i) / others;
            const uint32_t c = 1 + (batch + i) % others;
            noc_async_read(presence.get_noc_addr(a.presence_page(q, c), offset), s.page_in + i * s.presence_stride,
                           words * 4);
        }
        noc_async_read_barrier();
        for (uint32_t i = 0; i < n; ++i) {
            volatile uint32_t* row = s.presence_row((batch + i) / others);
            volatile uint32_t* page = moe_kernel::words(s.page_in + i * s.presence_stride);
            for (uint32_t w = 0; w < words; ++w) row[w] |= page[w];
        }
        batch += n;
    } while (batch < other_pages);
}

// Core 0: the status record of the op, from every core's (counts add up; the first bad slot is
// the lowest of the cores' first ones, kNone being above every slot).
void write_status(const Args& a, const Scratch& s) {
    volatile uint32_t* merged = moe_kernel::words(s.status);
    for (uint32_t c = 1; c < a.num_cores; ++c) {
        volatile uint32_t* other = moe_kernel::words(s.status + c * kStageBytes);
        if (other[kFirstBadSlot] < merged[kFirstBadSlot]) merged[kFirstBadSlot] = other[kFirstBadSlot];
        merged[kBadSlots] += other[kBadSlots];
    }
    noc_async_write(s.status, tensor<kStatus>(a).get_noc_addr(0), kStatusWords * 4);
    noc_async_write_barrier();
}

// With return_partials: zero rows for the partials of tokens [first, end) that did not arrive (s.row
// holds a zero row).
template <typename Partials>
void write_absent_partials(const Args& a, const Scratch& s, const Partials& partials, uint32_t first, uint32_t end) {
    for (uint32_t t = first; t < end; ++t) {
        for (uint32_t q = 0; q < a.line_size; ++q) {
            if (!s.present(q, t)) noc_async_write(s.row, partials.get_noc_addr(q * a.num_tokens + t), a.row_bytes());
        }
        noc_async_writes_flushed();
    }
}

// Token t's summed row from cb_out (one push of all its chunks) to the output.
template <typename Output>
void write_token_sum(const Args& a, const Output& output, uint32_t t) {
    const uint32_t num_chunks = (a.hidden + kTileElements - 1) / kTileElements;
    const uint32_t out_bytes = a.out_element_bytes();
    cb_wait_front(cb_out, num_chunks);
    const uint32_t base = get_read_ptr(cb_out);
    for (uint32_t chunk = 0; chunk < num_chunks; ++chunk) {
        const uint32_t left = a.hidden - chunk * kTileElements;
        const uint32_t elements = left < kTileElements ? left : kTileElements;
        noc_async_write(base + chunk * kTileElements * out_bytes,
                        output.get_noc_addr(t, chunk * kTileElements * out_bytes), elements * out_bytes);
    }
    noc_async_writes_flushed();
    cb_pop_front(cb_out, num_chunks);
}

// Merges the presence rows of core c's token share a window at a time for the partial reader
// (read_partials.cpp, which feeds the partials to the compute kernel) and writes each sum the
// compute kernel returns to the output row, on this RISC's NOC while the reader reads on the other.
void sum_received_partials(const Args& a, Scratch& s) {
    const auto partials = tensor<kPartials>(a);
    const auto output = tensor<kOutput>(a);
    const uint32_t first = share_start(a.core, a.num_tokens, a.num_sum_cores);
    const uint32_t end = share_start(a.core + 1, a.num_tokens, a.num_sum_cores);
    volatile tt_l1_ptr uint32_t* merged =
        reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_windows_merged));
    volatile tt_l1_ptr uint32_t* read = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(sem_windows_read));
    if (a.return_partials) moe_kernel::fill_words(s.row, a.row_bytes() / 4, 0);
    uint32_t windows = 0;
    for (uint32_t window = first; window < end; window += kPresenceWindowTokens) {
        const uint32_t window_end = end - window < kPresenceWindowTokens ? end : window + kPresenceWindowTokens;
        noc_semaphore_wait_min(read, windows);  // the reader has taken the last window's rows
        merge_presence(a, s, window, window_end);
        if (a.return_partials) write_absent_partials(a, s, partials, window, window_end);
        noc_semaphore_set(merged, ++windows);
        for (uint32_t t = window; t < window_end; ++t) write_token_sum(a, output, t);
    }
}

}  // namespace

void kernel_main() {
    const Args args = read_args();
    Scratch scratch = reserve_scratch(args);
    if (!args.sender()) {
        wait_for_senders(args);
        sum_received_partials(args, scratch);
        return;
    }
    FabricLine line(args.line_size, args.position, args.core_links(), args.route_arg(), scratch.headers,
                    args.max_payload);
    line.open(args.connection_arg());
    uint32_t status[kStatusWords];
    clear_status(status);

    const uint32_t num_slots = read_num_slots(args, scratch, status);
    clear_presence(args, scratch);
    moe_fabric::line_barrier(line, sem_init);
    send_slot_rows(args, scratch, line, num_slots, status);
    exchange_presence(args, scratch, line);
    signal_ready(args, scratch, status);
    sum_received_partials(args, scratch);
    if (args.core == 0) write_status(args, scratch);
    line.close();
}
