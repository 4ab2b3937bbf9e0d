// local_reduce_moe_output reader: builds this core's inverse index (output row -> its
// assignments, ascending l) and feeds the compute kernel.
//
// Inverse index: one scan over every expert's valid map entries (ascending l, then i)
// keeps the entries whose output row is in [row_begin, row_end) in an L1 list and counts
// them per row; a stable counting sort then groups them by row. Linear in assignments.
// The list holds list_capacity entries and a row keeps at most row_bound of its assignments
// (the first ones in (l, i) order): any more are dropped, never written past the list, and
// counted per row in row_overflow (written for every row of this core, 0 when it fits).
//
// Feed, per output row and per 1024-element chunk of H: one (y chunk, weight scalar tile)
// pair per assignment; a row without assignments gets one zero pair, so the compute
// kernel always sums >= 1 product. Per row, cb_row_length carries that pair count.
//
// compile-time args: 6 interleaved accessors (IsDram|RuntimePageSize): y, token_idx_map,
//   routed_token_weights, num_routed_tokens, expert_offsets (padded mode: unused slot), row_overflow
// named compile-time args: cb_y, cb_weight, cb_row_length, cb_out (unused here), cb_counts,
//   cb_offsets, cb_map_segment, cb_weight_segment, cb_entries, cb_sorted, cb_row_index, cb_status_stage
// runtime args: y_addr, map_addr, weights_addr, counts_addr, offsets_addr, grouped, E_l,
//   block_rows (T padded / M grouped), H, row_begin, row_end, overflow_addr, list_capacity, row_bound
// conformance: kind=dataflow ct_args=130,130,130,130,130,130 named=cb_y:0,cb_weight:1,cb_row_length:2,cb_out:5,cb_counts:6,cb_offsets:7,cb_map_segment:8,cb_weight_segment:9,cb_entries:10,cb_sorted:11,cb_row_index:12,cb_status_stage:13 formats=2:uint32,3:float32,4:float32,6:uint32,7:uint32,8:uint32,10:uint32,11:uint32,12:uint32,13:uint32
#include <cstdint>

#include "../../common/l1_scratch.hpp"
#include "api/dataflow/dataflow_api.h"

namespace {
constexpr uint32_t kChunkElements = 1024;
}  // namespace

void kernel_main() {
    using namespace moe_kernel;
    const uint32_t y_addr = get_arg_val<uint32_t>(0);
    const uint32_t map_addr = get_arg_val<uint32_t>(1);
    const uint32_t weights_addr = get_arg_val<uint32_t>(2);
    const uint32_t counts_addr = get_arg_val<uint32_t>(3);
    const uint32_t offsets_addr = get_arg_val<uint32_t>(4);
    const bool grouped = get_arg_val<uint32_t>(5) != 0;
    const uint32_t num_local = get_arg_val<uint32_t>(6);
    const uint32_t block_rows = get_arg_val<uint32_t>(7);
    const uint32_t hidden = get_arg_val<uint32_t>(8);
    const uint32_t row_begin = get_arg_val<uint32_t>(9);
    const uint32_t row_end = get_arg_val<uint32_t>(10);
    const uint32_t overflow_addr = get_arg_val<uint32_t>(11);
    const uint32_t list_capacity = get_arg_val<uint32_t>(12);  // entries the L1 lists hold
    const uint32_t row_bound = get_arg_val<uint32_t>(13);      // assignments one row may keep

    constexpr uint32_t cb_y = get_named_compile_time_arg_val("cb_y");
    constexpr uint32_t cb_weight = get_named_compile_time_arg_val("cb_weight");
    constexpr uint32_t cb_row_length = get_named_compile_time_arg_val("cb_row_length");
    constexpr uint32_t cb_counts = get_named_compile_time_arg_val("cb_counts");
    constexpr uint32_t cb_offsets = get_named_compile_time_arg_val("cb_offsets");
    constexpr uint32_t cb_map_segment = get_named_compile_time_arg_val("cb_map_segment");
    constexpr uint32_t cb_weight_segment = get_named_compile_time_arg_val("cb_weight_segment");
    constexpr uint32_t cb_entries = get_named_compile_time_arg_val("cb_entries");
    constexpr uint32_t cb_sorted = get_named_compile_time_arg_val("cb_sorted");
    constexpr uint32_t cb_row_index = get_named_compile_time_arg_val("cb_row_index");
    constexpr uint32_t cb_status_stage = get_named_compile_time_arg_val("cb_status_stage");

    constexpr auto y_args = TensorAccessorArgs<0>();
    constexpr auto map_args = TensorAccessorArgs<y_args.next_compile_time_args_offset()>();
    constexpr auto weights_args = TensorAccessorArgs<map_args.next_compile_time_args_offset()>();
    constexpr auto counts_args = TensorAccessorArgs<weights_args.next_compile_time_args_offset()>();
    constexpr auto offsets_args = TensorAccessorArgs<counts_args.next_compile_time_args_offset()>();
    constexpr auto overflow_args = TensorAccessorArgs<offsets_args.next_compile_time_args_offset()>();
    const uint32_t y_row_bytes = hidden * 2;
    const auto y = TensorAccessor(y_args, y_addr, align_up(y_row_bytes));
    const auto idx_map = TensorAccessor(map_args, map_addr, align_up(block_rows * 4));
    const auto weights = TensorAccessor(weights_args, weights_addr, align_up(block_rows * 2));
    const auto counts = TensorAccessor(counts_args, counts_addr, align_up(4));
    const auto offsets = TensorAccessor(offsets_args, offsets_addr, align_up(4));
    const auto row_overflow = TensorAccessor(overflow_args, overflow_addr, align_up(4));

    // Counts (and offsets) of every local expert, one aligned L1 slot each.
    cb_reserve_back(cb_counts, num_local);
    cb_reserve_back(cb_offsets, num_local);
    const uint32_t counts_l1 = get_write_ptr(cb_counts);
    const uint32_t offsets_l1 = get_write_ptr(cb_offsets);
    read_column_async(counts, counts_l1, num_local, kDramAlign);
    if (grouped) read_column_async(offsets, offsets_l1, num_local, kDramAlign);
    const uint32_t num_rows = row_end - row_begin;
    cb_reserve_back(cb_row_index, 3);
    const uint32_t row_count_l1 = get_write_ptr(cb_row_index);  // 3 pages of (num_rows + 1) words: count, start, dropped
    const uint32_t row_page_bytes = align_up((num_rows + 1) * 4);
    volatile uint32_t* row_count = words(row_count_l1);
    volatile uint32_t* row_dropped = words(row_count_l1 + 2 * row_page_bytes);
    fill_words(row_count_l1, num_rows + 1, 0);
    fill_words(row_count_l1 + 2 * row_page_bytes, num_rows + 1, 0);
    noc_async_read_barrier();

    // Scan: entries of this core's rows, in ascending (l, i).
    cb_reserve_back(cb_map_segment, 1);
    cb_reserve_back(cb_weight_segment, 1);
    cb_reserve_back(cb_entries, 1);
    const uint32_t map_l1 = get_write_ptr(cb_map_segment);
    const uint32_t weight_l1 = get_write_ptr(cb_weight_segment);
    volatile uint32_t* entries = words(get_write_ptr(cb_entries));
    uint32_t num_kept = 0;
    for (uint32_t l = 0; l < num_local; ++l) {
        uint32_t count = column_entry(counts_l1, l, kDramAlign);
        const uint32_t first_row = grouped ? column_entry(offsets_l1, l, kDramAlign) : l * block_rows;
        const uint32_t page = grouped ? 0 : l;
        const uint32_t column = grouped ? first_row : 0;  // first entry inside the map page
        if (column >= block_rows) continue;
        if (count > block_rows - column) count = block_rows - column;  // never read past the page
        if (count == 0) continue;
        noc_async_read(idx_map.get_noc_addr(page, column * 4), map_l1, count * 4);
        noc_async_read(weights.get_noc_addr(page, column * 2), weight_l1, count * 2);
        noc_async_read_barrier();
        for (uint32_t i = 0; i < count; ++i) {
            const uint32_t row = words(map_l1)[i];
            if (row < row_begin || row >= row_end) continue;
            if (row_count[row - row_begin] >= row_bound || num_kept >= list_capacity) {
                ++row_dropped[row - row_begin];
                continue;
            }
            entries[num_kept * 3 + 0] = row - row_begin;
            entries[num_kept * 3 + 1] = first_row + i;  // y page of this assignment
            entries[num_kept * 3 + 2] = halves(weight_l1)[i];
            ++row_count[row - row_begin];
            ++num_kept;
        }
    }

    // Stable counting sort by row: row_start[r] = first sorted slot of row r.
    volatile uint32_t* row_start = words(row_count_l1 + row_page_bytes);  // second page
    uint32_t running = 0;
    for (uint32_t r = 0; r < num_rows; ++r) {
        row_start[r] = running;
        running += row_count[r];
    }
    cb_reserve_back(cb_sorted, 1);
    volatile uint32_t* sorted = words(get_write_ptr(cb_sorted));
    for (uint32_t r = 0; r < num_rows; ++r) row_count[r] = row_start[r];  // reused as fill cursors
    for (uint32_t e = 0; e < num_kept; ++e) {
        const uint32_t slot = row_count[entries[e * 3]]++;
        sorted[slot * 2 + 0] = entries[e * 3 + 1];
        sorted[slot * 2 + 1] = entries[e * 3 + 2];
    }

    // row_overflow[row] = its dropped assignments, one page per row.
    cb_reserve_back(cb_status_stage, 1);
    const uint32_t stage_l1 = get_write_ptr(cb_status_stage);
    for (uint32_t r = 0; r < num_rows; ++r) {
        words(stage_l1)[0] = row_dropped[r];
        noc_async_write(stage_l1, row_overflow.get_noc_addr(row_begin + r), 4);
        noc_async_write_barrier();
    }

    // Feed the compute kernel row by row, chunk by chunk.
    const uint32_t num_chunks = (hidden + kChunkElements - 1) / kChunkElements;
    for (uint32_t r = 0; r < num_rows; ++r) {
        const uint32_t first = row_start[r];
        const uint32_t length = row_count[r] - first;  // the cursor ended at the row's end
        const uint32_t fed = length == 0 ? 1 : length;
        cb_reserve_back(cb_row_length, 1);
        words(get_write_ptr(cb_row_length))[0] = fed;
        cb_push_back(cb_row_length, 1);
        for (uint32_t c = 0; c < num_chunks; ++c) {
            const uint32_t chunk_bytes =
                (hidden - c * kChunkElements < kChunkElements ? hidden - c * kChunkElements : kChunkElements) * 2;
            for (uint32_t j = 0; j < fed; ++j) {
                cb_reserve_back(cb_y, 1);
                cb_reserve_back(cb_weight, 1);
                const uint32_t y_l1 = get_write_ptr(cb_y);
                const uint32_t weight_tile_l1 = get_write_ptr(cb_weight);
                if (length == 0) {
                    fill_halves(y_l1, kChunkElements, 0);
                    halves(weight_tile_l1)[0] = 0;
                } else {
                    const uint32_t y_page = sorted[(first + j) * 2 + 0];
                    noc_async_read(y.get_noc_addr(y_page, c * kChunkElements * 2), y_l1, chunk_bytes);
                    halves(weight_tile_l1)[0] = static_cast<uint16_t>(sorted[(first + j) * 2 + 1]);
                    noc_async_read_barrier();
                }
                cb_push_back(cb_y, 1);
                cb_push_back(cb_weight, 1);
            }
        }
    }
}
