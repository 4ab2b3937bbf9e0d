// local_reduce_moe_output reader: builds this core's inverse index (output row -> its
// assignments, ascending l) and feeds the compute kernel.
//
// Rows: the op computes output rows [0, rows): num_used_rows when given (read here, clamped to
// num_out_rows), else num_out_rows. This core takes its share of them (share_begin), sends the
// range to the writer (cb_row_range) and the number of rows to the compute kernel (the first
// page of cb_row_length). Rows past `rows` are neither computed nor written.
//
// Inverse index: the core's rows are taken in windows of at most window_rows rows. For each
// window one scan over every expert's valid map entries (ascending l, then i, read in pieces
// of segment_entries) counts the entries landing in the window per row and keeps them, in
// scan order, in an L1 list; a stable counting sort then groups them by row. Linear in
// assignments. A row keeps at most row_bound of its assignments (the first ones in (l, i)
// order): any more are dropped and counted per row in row_overflow (written for every row of
// this core, 0 when it fits).
//
// The list holds list_capacity entries. When a window keeps more, its rows are fed in groups
// whose lists fit: each group takes one more scan that places every kept entry directly at its
// sorted position (the counts give each row's start). A row alone longer than the list is fed
// one list-sized slice of its assignments per scan and H chunk. Every extra scan reads the map
// again; the sums, and so the output bits, do not depend on how the rows were grouped.
//
// Feed, per output row and per 1024-element chunk of H: one (y chunk, weight scalar tile)
// pair per assignment; a row without assignments gets one zero pair, so the compute
// kernel always sums >= 1 product. Per row, cb_row_length carries that pair count.
//
// The core with reports_status also writes reduce_status: valid entries whose row is past
// `rows` (summed nowhere), counts past the entries of their block (the rest unread),
// grouped blocks overlapping a lower expert's (their rows would be summed twice) and grouped
// offsets that are not multiples of kOffsetAlignment (those blocks are not read).
//
// The tensor order, the runtime args, the named compile-time args and the status words are
// listed in cpp/ops/local_reduce_moe_output/local_reduce_moe_output_shared.hpp; the compile-time
// args are the 8 interleaved accessors (IsDram|RuntimePageSize) in ReaderTensor order.
// conformance: kind=dataflow ct_args=130,130,130,130,130,130,130,130 named=cb_y:0,cb_weight:1,cb_row_length:2,cb_counts:6,cb_offsets:7,cb_map_segment:8,cb_weight_segment:9,cb_entries:10,cb_sorted:11,cb_row_index:12,cb_status_stage:13,cb_status:14,cb_row_range:15 formats=2:uint32,3:float32,4:float32,6:uint32,7:uint32,8:uint32,10:uint32,11:uint32,12:uint32,13:uint32,14:uint32,15:uint32
#include <cstdint>
#include <tuple>

#include "../../../cpp/ops/local_reduce_moe_output/local_reduce_moe_output_shared.hpp"
#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

using namespace ttnn_moe::local_reduce_moe_output_shared;
using namespace moe_kernel;

namespace {

constexpr uint32_t cb_y = get_named_compile_time_arg_val(named_arg::kCbY);
constexpr uint32_t cb_weight = get_named_compile_time_arg_val(named_arg::kCbWeight);
constexpr uint32_t cb_row_length = get_named_compile_time_arg_val(named_arg::kCbRowLength);
constexpr uint32_t cb_counts = get_named_compile_time_arg_val(named_arg::kCbCounts);
constexpr uint32_t cb_offsets = get_named_compile_time_arg_val(named_arg::kCbOffsets);
constexpr uint32_t cb_map_segment = get_named_compile_time_arg_val(named_arg::kCbMapSegment);
constexpr uint32_t cb_weight_segment = get_named_compile_time_arg_val(named_arg::kCbWeightSegment);
constexpr uint32_t cb_entries = get_named_compile_time_arg_val(named_arg::kCbEntries);
constexpr uint32_t cb_sorted = get_named_compile_time_arg_val(named_arg::kCbSorted);
constexpr uint32_t cb_row_index = get_named_compile_time_arg_val(named_arg::kCbRowIndex);
constexpr uint32_t cb_status_stage = get_named_compile_time_arg_val(named_arg::kCbStatusStage);
constexpr uint32_t cb_status = get_named_compile_time_arg_val(named_arg::kCbStatus);
constexpr uint32_t cb_row_range = get_named_compile_time_arg_val(named_arg::kCbRowRange);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<kNumReaderTensors, 0>();

struct Args {
    uint32_t address[kNumReaderTensors];
    bool grouped;
    uint32_t num_local, block_rows, hidden, core, num_cores;
    bool has_used_rows;
    uint32_t list_capacity, row_bound, num_out_rows;
    bool reports_status;
    uint32_t window_rows, segment_entries;
    // Known once num_used_rows is read (take_rows): the rows the op computes, num_used_rows as
    // read (kNone without it) and this core's share [row_begin, row_end) of them.
    uint32_t rows, used_read, row_begin, row_end;
};

Args read_args() {
    Args a;
    for (uint32_t i = 0; i < kNumReaderTensors; ++i) a.address[i] = get_arg_val<uint32_t>(i);
    a.grouped = get_arg_val<uint32_t>(reader_arg::kGrouped) != 0;
    a.num_local = get_arg_val<uint32_t>(reader_arg::kNumLocal);
    a.block_rows = get_arg_val<uint32_t>(reader_arg::kBlockRows);
    a.hidden = get_arg_val<uint32_t>(reader_arg::kHidden);
    a.core = get_arg_val<uint32_t>(reader_arg::kCore);
    a.num_cores = get_arg_val<uint32_t>(reader_arg::kNumCores);
    a.has_used_rows = get_arg_val<uint32_t>(reader_arg::kHasUsedRows) != 0;
    a.list_capacity = get_arg_val<uint32_t>(reader_arg::kListCapacity);
    a.row_bound = get_arg_val<uint32_t>(reader_arg::kRowBound);
    a.num_out_rows = get_arg_val<uint32_t>(reader_arg::kNumOutRows);
    a.reports_status = get_arg_val<uint32_t>(reader_arg::kReportsStatus) != 0;
    a.window_rows = get_arg_val<uint32_t>(reader_arg::kWindowRows);
    a.segment_entries = get_arg_val<uint32_t>(reader_arg::kSegmentEntries);
    return a;
}

// Accessors take the DRAM-aligned page size (the bank stride of the pages).
uint32_t page_bytes(const Args& a, uint32_t tensor) {
    switch (tensor) {
        case kY:
            return align_up(a.hidden * 2);
        case kTokenIdxMap:
            return align_up(a.block_rows * 4);
        case kRoutedTokenWeights:
            return align_up(a.block_rows * 2);
        case kStatus:
            return align_up(kStatusWords * 4);
        default:
            return align_up(4);  // counts, offsets, row_overflow, num_used_rows: one word per page
    }
}

template <uint32_t I>
auto tensor(const Args& a) {
    return TensorAccessor(std::get<I>(kTensorArgs), a.address[I], page_bytes(a, I));
}

// Every local expert's count (and offset), one aligned L1 slot each.
struct Routing {
    uint32_t counts_l1, offsets_l1;
    uint32_t count(uint32_t l) const { return column_entry(counts_l1, l, kDramAlign); }
    uint32_t offset(uint32_t l) const { return column_entry(offsets_l1, l, kDramAlign); }
};

// Where expert l's entries sit: map page, first entry inside it, the first y page, and how
// many of its count the page holds (never read past the page; none from a misaligned offset,
// whose entries cannot be read).
struct Block {
    uint32_t page, column, first_row, room;
    bool aligned;
};

Block block_of(const Args& a, const Routing& routing, uint32_t l) {
    const uint32_t first_row = a.grouped ? routing.offset(l) : l * a.block_rows;
    const uint32_t column = a.grouped ? first_row : 0;
    const bool aligned = column % kOffsetAlignment == 0;
    const uint32_t room = aligned && column < a.block_rows ? a.block_rows - column : 0;
    return {a.grouped ? 0 : l, column, first_row, room, aligned};
}

// The reduce_status record in L1 on the reporting core, nullptr on the others.
volatile uint32_t* start_status(const Args& a) {
    if (!a.reports_status) return nullptr;
    cb_reserve_back(cb_status, 1);
    fill_words(get_write_ptr(cb_status), kStatusWords, kNone);
    volatile uint32_t* status = words(get_write_ptr(cb_status));
    status[kBadRows] = 0;
    status[kClampedCounts] = 0;
    status[kOverlappingBlocks] = 0;
    status[kMisalignedOffsets] = 0;
    status[kUsedRowsRead] = a.used_read;
    status[kRowsComputed] = a.rows;
    return status;
}

// Entries of expert l the scan reads: its count, cut at the end of its map page.
uint32_t entries_read(const Args& a, const Routing& routing, uint32_t l) {
    const uint32_t room = block_of(a, routing, l).room;
    return routing.count(l) < room ? routing.count(l) : room;
}

// Counts grouped experts whose rows [offset, offset + entries read) meet a lower expert's.
void count_overlapping_blocks(const Args& a, const Routing& routing, volatile uint32_t* status) {
    for (uint32_t l = 1; l < a.num_local; ++l) {
        const uint32_t begin = routing.offset(l), end = begin + entries_read(a, routing, l);
        for (uint32_t j = 0; j < l && begin < end; ++j) {
            const uint32_t other_begin = routing.offset(j), other_end = other_begin + entries_read(a, routing, j);
            if (begin < other_end && other_begin < end) {
                if (status[kOverlappingBlocks]++ == 0) status[kFirstOverlapExpert] = l;
                break;
            }
        }
    }
}

void write_status(const Args& a) {
    noc_async_write(get_write_ptr(cb_status), tensor<kStatus>(a).get_noc_addr(0), kStatusWords * 4);
    noc_async_write_barrier();
}

// The rows [begin, end) of the window in hand and, per row (index r = row - begin), its kept
// assignments (count), the first sorted slot of its list (start) and a per-row cursor: the
// dropped assignments until row_overflow is written, then the rank of the next entry a scan
// meets (the sort's fill position, or the placement rank).
struct Window {
    uint32_t begin, end;
    volatile uint32_t* count;
    volatile uint32_t* start;
    volatile uint32_t* cursor;
    uint32_t num_rows() const { return end - begin; }
};

// Reads the counts (and offsets, and num_used_rows into cb_status_stage) and reserves the
// per-row index; the caller issues the read barrier.
Routing start_reading_routing(const Args& a, Window& window) {
    cb_reserve_back(cb_counts, a.num_local);
    cb_reserve_back(cb_offsets, a.num_local);
    const Routing routing{get_write_ptr(cb_counts), get_write_ptr(cb_offsets)};
    read_column_async(tensor<kCounts>(a), routing.counts_l1, a.num_local, kDramAlign);
    if (a.grouped) read_column_async(tensor<kOffsets>(a), routing.offsets_l1, a.num_local, kDramAlign);
    cb_reserve_back(cb_status_stage, 1);
    if (a.has_used_rows) read_column_async(tensor<kUsedRows>(a), get_write_ptr(cb_status_stage), 1, kDramAlign);
    cb_reserve_back(cb_row_index, kRowIndexPages);
    const uint32_t index_l1 = get_write_ptr(cb_row_index);
    const uint32_t page_bytes = align_up((a.window_rows + 1) * 4);
    window.count = words(index_l1);
    window.start = words(index_l1 + page_bytes);
    window.cursor = words(index_l1 + 2 * page_bytes);
    return routing;
}

// The rows the op computes (num_used_rows, read by start_reading_routing, at most num_out_rows;
// else num_out_rows) and this core's share of them; tells the writer its range and the compute
// kernel its number of rows.
void take_rows(Args& a) {
    a.used_read = a.has_used_rows ? words(get_write_ptr(cb_status_stage))[0] : kNone;
    a.rows = a.has_used_rows && a.used_read < a.num_out_rows ? a.used_read : a.num_out_rows;
    a.row_begin = share_begin(a.core, a.rows, a.num_cores);
    a.row_end = share_begin(a.core + 1, a.rows, a.num_cores);
    cb_reserve_back(cb_row_range, 1);
    words(get_write_ptr(cb_row_range))[kRangeBegin] = a.row_begin;
    words(get_write_ptr(cb_row_range))[kRangeEnd] = a.row_end;
    cb_push_back(cb_row_range, 1);
    cb_reserve_back(cb_row_length, 1);
    words(get_write_ptr(cb_row_length))[0] = a.row_end - a.row_begin;
    cb_push_back(cb_row_length, 1);
}

// Counts the experts whose entries a scan skips or cuts (status record): misaligned grouped
// blocks with tokens (not read) and counts past the entries of their block (clamped).
void count_unread_blocks(const Args& a, const Routing& routing, volatile uint32_t* status) {
    for (uint32_t l = 0; l < a.num_local; ++l) {
        const Block block = block_of(a, routing, l);
        const uint32_t count = routing.count(l);
        if (!block.aligned) {
            if (count > 0 && status[kMisalignedOffsets]++ == 0) {
                status[kFirstMisalignedExpert] = l;
                status[kFirstMisalignedOffset] = block.column;
            }
        } else if (count > block.room && status[kClampedCounts]++ == 0) {
            status[kFirstClampedExpert] = l;
            status[kFirstClampedCount] = count;
        }
    }
}

// A scan's place: expert l, its entries from `first` on.
struct ScanPosition {
    uint32_t l, first;
};

// The pieces of the scan from `from` that fit one batch of the segment buffers, in scan order:
// calls on_piece(l, first, entries, slot) for each, a piece being at most segment_entries
// entries of one expert and `slot` its first entry in the buffers (at an aligned L1 address in
// both). Returns where the next batch starts (l == num_local when the scan is done).
template <typename OnPiece>
ScanPosition for_each_piece_of_batch(const Args& a, const Routing& routing, ScanPosition at, OnPiece on_piece) {
    uint32_t slot = 0;
    while (at.l < a.num_local) {
        const uint32_t count = entries_read(a, routing, at.l);
        if (at.first >= count) {
            at = {at.l + 1, 0};
            continue;
        }
        const uint32_t left = count - at.first;
        const uint32_t entries = left < a.segment_entries ? left : a.segment_entries;
        if (slot + entries > a.segment_entries) break;
        on_piece(at.l, at.first, entries, slot);
        slot += align_up(entries * 2) / 2;  // the next weight piece (2 B each) starts aligned, so does the map's
        at.first += entries;
    }
    return at;
}

// One scan over every expert's valid map entries (ascending l, then i), calling
// on_entry(row, y page, weight bits) for each. The entries are read in batches: the pieces of
// consecutive experts that fit the segment buffers, all their reads under one barrier. With a
// status record (the core's first scan on the reporting core) it also counts misaligned blocks,
// clamped counts and rows past the rows computed.
template <typename OnEntry>
void scan_map_entries(const Args& a, const Routing& routing, volatile uint32_t* status, OnEntry on_entry) {
    const auto idx_map = tensor<kTokenIdxMap>(a);
    const auto weights = tensor<kRoutedTokenWeights>(a);
    cb_reserve_back(cb_map_segment, 1);
    cb_reserve_back(cb_weight_segment, 1);
    const uint32_t map_l1 = get_write_ptr(cb_map_segment);
    const uint32_t weight_l1 = get_write_ptr(cb_weight_segment);
    if (status) count_unread_blocks(a, routing, status);
    ScanPosition at{0, 0};
    while (at.l < a.num_local) {
        const ScanPosition next =
            for_each_piece_of_batch(a, routing, at, [&](uint32_t l, uint32_t first, uint32_t entries, uint32_t slot) {
                const Block block = block_of(a, routing, l);
                const uint32_t column = block.column + first;
                noc_async_read(idx_map.get_noc_addr(block.page, column * 4), map_l1 + slot * 4, entries * 4);
                noc_async_read(weights.get_noc_addr(block.page, column * 2), weight_l1 + slot * 2, entries * 2);
            });
        noc_async_read_barrier();
        for_each_piece_of_batch(a, routing, at, [&](uint32_t l, uint32_t first, uint32_t entries, uint32_t slot) {
            const Block block = block_of(a, routing, l);
            for (uint32_t i = 0; i < entries; ++i) {
                const uint32_t row = words(map_l1 + slot * 4)[i];
                if (status && row >= a.rows && status[kBadRows]++ == 0) {
                    status[kFirstBadExpert] = l;
                    status[kFirstBadIndex] = block.column + first + i;
                    status[kFirstBadRow] = row;
                }
                on_entry(row, block.first_row + first + i, halves(weight_l1 + slot * 2)[i]);
            }
        });
        at = next;
    }
}

// The window's first scan: counts each row's kept assignments (at most row_bound) and dropped
// ones, and keeps the kept entries in scan order in `entries` (kEntryWords each) while the list
// has room. Returns the kept assignments of the window (more than the list when it overflowed).
uint32_t count_and_collect(const Args& a, const Routing& routing, Window& window, volatile uint32_t* entries,
                           volatile uint32_t* status) {
    for (uint32_t r = 0; r < window.num_rows(); ++r) {
        window.count[r] = 0;
        window.cursor[r] = 0;
    }
    uint32_t num_kept = 0;
    scan_map_entries(a, routing, status, [&](uint32_t row, uint32_t y_page, uint32_t weight) {
        if (row < window.begin || row >= window.end) return;
        const uint32_t r = row - window.begin;
        if (window.count[r] >= a.row_bound) {
            ++window.cursor[r];  // dropped
            return;
        }
        ++window.count[r];
        if (num_kept < a.list_capacity) {
            entries[num_kept * kEntryWords + 0] = r;
            entries[num_kept * kEntryWords + 1] = y_page;
            entries[num_kept * kEntryWords + 2] = weight;
        }
        ++num_kept;
    });
    return num_kept;
}

// Each row's first slot in the window's sorted order; the cursors restart at 0.
void start_rows(Window& window) {
    uint32_t running = 0;
    for (uint32_t r = 0; r < window.num_rows(); ++r) {
        window.start[r] = running;
        running += window.count[r];
        window.cursor[r] = 0;
    }
}

// Stable counting sort of the collected entries by row into `sorted` (kSortedEntryWords each).
void sort_entries_by_row(Window& window, const volatile uint32_t* entries, uint32_t num_kept,
                         volatile uint32_t* sorted) {
    for (uint32_t e = 0; e < num_kept; ++e) {
        const uint32_t r = entries[e * kEntryWords];
        const uint32_t slot = window.start[r] + window.cursor[r]++;
        sorted[slot * kSortedEntryWords + 0] = entries[e * kEntryWords + 1];
        sorted[slot * kSortedEntryWords + 1] = entries[e * kEntryWords + 2];
    }
}

// One more scan: places the kept assignments of rows [r_begin, r_end) whose rank in their row
// lies in [rank_begin, rank_end) at sorted[start[r] - start[r_begin] + rank - rank_begin].
void place_entries(const Args& a, const Routing& routing, Window& window, uint32_t r_begin, uint32_t r_end,
                   uint32_t rank_begin, uint32_t rank_end, volatile uint32_t* sorted) {
    for (uint32_t r = r_begin; r < r_end; ++r) window.cursor[r] = 0;
    const uint32_t base = window.start[r_begin];
    scan_map_entries(a, routing, nullptr, [&](uint32_t row, uint32_t y_page, uint32_t weight) {
        if (row < window.begin + r_begin || row >= window.begin + r_end) return;
        const uint32_t r = row - window.begin;
        const uint32_t rank = window.cursor[r]++;
        if (rank >= window.count[r] || rank < rank_begin || rank >= rank_end) return;
        const uint32_t slot = window.start[r] - base + rank - rank_begin;
        sorted[slot * kSortedEntryWords + 0] = y_page;
        sorted[slot * kSortedEntryWords + 1] = weight;
    });
}

// row_overflow[row] = its dropped assignments (the window's cursors), one page per row. The words
// are staged in kOverflowStageSlots aligned slots of cb_status_stage, so the writes of a round of
// slots are in flight together; a slot is reused once the round's writes have left.
void write_row_overflow(const Args& a, const Window& window) {
    const auto row_overflow = tensor<kRowOverflow>(a);
    cb_reserve_back(cb_status_stage, kOverflowStageSlots);
    const uint32_t stage_l1 = get_write_ptr(cb_status_stage);
    for (uint32_t r = 0; r < window.num_rows(); ++r) {
        const uint32_t slot = r % kOverflowStageSlots;
        if (slot == 0 && r > 0) noc_async_writes_flushed();
        words(stage_l1 + slot * kDramAlign)[0] = window.cursor[r];
        noc_async_write(stage_l1 + slot * kDramAlign, row_overflow.get_noc_addr(window.begin + r), 4);
    }
    noc_async_writes_flushed();
}

// The (y chunk, weight scalar tile) pairs go to the compute kernel in batches: the reads of up to
// kPairBatch pairs are in flight under one barrier (one at a time, each would wait a whole DRAM
// read latency). A batch never crosses the end of the cb_y / cb_weight rings (the reader knows its
// ring position from the pages it pushed). Rows whose length is pushed before all their pairs are
// at most kPairBatch (every row feeds >= 1 pair), and cb_row_length holds more pages than that, so
// the reader never waits for room there while the compute kernel waits for a pair it holds.
class PairFeed {
public:
    // The pair of one sorted entry (y page, weight bits): its y chunk and weight.
    template <typename Y>
    void add_assignment(const Y& y, const volatile uint32_t* entry, uint32_t chunk, uint32_t chunk_bytes) {
        const uint32_t slot = open_slot();
        noc_async_read(y.get_noc_addr(entry[0], chunk * kChunkElements * 2), y_page(slot), chunk_bytes);
        zero_page_tail(y_page(slot), chunk_bytes, kChunkElements * 2);
        halves(weight_page(slot))[0] = static_cast<uint16_t>(entry[1]);
        close_slot();
    }

    // The pair of a row without assignments: zeros.
    void add_zero() {
        const uint32_t slot = open_slot();
        fill_halves(y_page(slot), kChunkElements, 0);
        halves(weight_page(slot))[0] = 0;
        close_slot();
    }

    // The pair count (>= 1) of a row with `length` assignments, into cb_row_length.
    void add_row_length(uint32_t length) {
        cb_reserve_back(cb_row_length, 1);
        words(get_write_ptr(cb_row_length))[0] = length == 0 ? 1 : length;
        cb_push_back(cb_row_length, 1);
    }

    // Pushes the open batch once its reads have landed.
    void send() {
        if (held_ == 0) return;
        noc_async_read_barrier();
        cb_push_back(cb_y, held_);
        cb_push_back(cb_weight, held_);
        pushed_ += held_;
        held_ = 0;
    }

private:
    uint32_t open_slot() {
        if (held_ == 0) {
            const uint32_t to_ring_end = kPairPages - pushed_ % kPairPages;
            room_ = to_ring_end < kPairBatch ? to_ring_end : kPairBatch;
            cb_reserve_back(cb_y, room_);
            cb_reserve_back(cb_weight, room_);
            y_l1_ = get_write_ptr(cb_y);
            weight_l1_ = get_write_ptr(cb_weight);
        }
        return held_;
    }
    void close_slot() {
        if (++held_ == room_) send();
    }
    uint32_t y_page(uint32_t slot) const { return y_l1_ + slot * get_tile_size(cb_y); }
    uint32_t weight_page(uint32_t slot) const { return weight_l1_ + slot * get_tile_size(cb_weight); }

    uint32_t pushed_ = 0, held_ = 0, room_ = 0, y_l1_ = 0, weight_l1_ = 0;
};

uint32_t chunk_bytes(const Args& a, uint32_t chunk) {
    const uint32_t left = a.hidden - chunk * kChunkElements;
    return (left < kChunkElements ? left : kChunkElements) * 2;
}

// Feeds rows [r_begin, r_end) of the window, whose lists sit in `sorted` from the first of them:
// per row its pair count, then per chunk of H one pair per assignment in list order.
template <typename Y>
void feed_rows(const Args& a, const Y& y, PairFeed& feed, const Window& window, uint32_t r_begin, uint32_t r_end,
               const volatile uint32_t* sorted) {
    const uint32_t num_chunks = (a.hidden + kChunkElements - 1) / kChunkElements;
    for (uint32_t r = r_begin; r < r_end; ++r) {
        const uint32_t first = window.start[r] - window.start[r_begin];
        const uint32_t length = window.count[r];
        feed.add_row_length(length);
        for (uint32_t c = 0; c < num_chunks; ++c) {
            if (length == 0) feed.add_zero();
            for (uint32_t j = 0; j < length; ++j) {
                feed.add_assignment(y, sorted + (first + j) * kSortedEntryWords, c, chunk_bytes(a, c));
            }
        }
    }
    feed.send();
}

// Feeds the window's row r, longer than the list: per chunk of H, its assignments one
// list-sized slice (one scan) at a time.
template <typename Y>
void feed_long_row(const Args& a, const Y& y, PairFeed& feed, const Routing& routing, Window& window, uint32_t r,
                   volatile uint32_t* sorted) {
    const uint32_t num_chunks = (a.hidden + kChunkElements - 1) / kChunkElements;
    const uint32_t length = window.count[r];
    feed.add_row_length(length);
    for (uint32_t c = 0; c < num_chunks; ++c) {
        for (uint32_t rank = 0; rank < length; rank += a.list_capacity) {
            const uint32_t slice = length - rank < a.list_capacity ? length - rank : a.list_capacity;
            place_entries(a, routing, window, r, r + 1, rank, rank + slice, sorted);
            for (uint32_t j = 0; j < slice; ++j) {
                feed.add_assignment(y, sorted + j * kSortedEntryWords, c, chunk_bytes(a, c));
            }
            feed.send();  // before the next scan
        }
    }
}

// Feeds a window whose kept assignments outgrew the list: consecutive rows grouped while their
// lists fit, one placement scan per group; a row alone longer than the list in slices.
template <typename Y>
void feed_window_in_groups(const Args& a, const Y& y, PairFeed& feed, const Routing& routing, Window& window,
                           volatile uint32_t* sorted) {
    uint32_t r = 0;
    while (r < window.num_rows()) {
        if (window.count[r] > a.list_capacity) {
            feed_long_row(a, y, feed, routing, window, r, sorted);
            ++r;
            continue;
        }
        uint32_t end = r, held = 0;
        while (end < window.num_rows() && held + window.count[end] <= a.list_capacity) held += window.count[end++];
        if (held > 0) place_entries(a, routing, window, r, end, 0, a.list_capacity, sorted);
        feed_rows(a, y, feed, window, r, end, sorted);
        r = end;
    }
}

}  // namespace

void kernel_main() {
    Args args = read_args();
    Window window;
    const Routing routing = start_reading_routing(args, window);
    noc_async_read_barrier();
    take_rows(args);

    volatile uint32_t* status = start_status(args);
    if (status && args.grouped) count_overlapping_blocks(args, routing, status);
    cb_reserve_back(cb_entries, 1);
    volatile uint32_t* entries = words(get_write_ptr(cb_entries));
    cb_reserve_back(cb_sorted, 1);
    volatile uint32_t* sorted = words(get_write_ptr(cb_sorted));
    const auto y = tensor<kY>(args);
    PairFeed feed;
    for (uint32_t begin = args.row_begin; begin < args.row_end; begin += args.window_rows) {
        window.begin = begin;
        window.end = args.row_end - begin < args.window_rows ? args.row_end : begin + args.window_rows;
        const uint32_t num_kept = count_and_collect(args, routing, window, entries, status);
        if (status) write_status(args);
        status = nullptr;  // the first scan saw every entry
        write_row_overflow(args, window);
        start_rows(window);
        if (num_kept <= args.list_capacity) {
            sort_entries_by_row(window, entries, num_kept, sorted);
            feed_rows(args, y, feed, window, 0, window.num_rows(), sorted);
        } else {
            feed_window_in_groups(args, y, feed, routing, window, sorted);
        }
    }
    if (status) {  // this core has no rows (none are used): one scan for the record alone
        scan_map_entries(args, routing, status, [](uint32_t, uint32_t, uint32_t) {});
        write_status(args);
    }
    noc_async_write_barrier();  // the row_overflow words have landed
}
