// moe_bmm writer: derives the same segments as this core's reader and writes the compute
// kernel's results to them (per segment column by column, row tile by row tile). In padded mode it also writes zero
// tiles to its even share of the inactive row tiles of every expert's T range (row
// tiles ceil(count_l / 32) .. Mt - 1), so the whole (E_l, T, N) output is defined; with an
// addend (out = x @ w + addend) it copies the addend's tiles there instead.
// Grouped mode writes active row tiles only: rows outside them are left as they were
// (nobody reads them: see the op's docstring).
// Row-major output (common arg row_major_out = 1; a page is one row of N elements): each tile arrives
// untilized (32 rows of 32 elements) and only its rows below the expert's count are written, as
// 64-byte segments at column 32 n of their rows; nothing else is written, in either mode. Core 0 also writes bmm_status: counts past
// their block, grouped offsets off the tile grid and overlapping grouped blocks.
//
// Compile-time args: TensorAccessorArgs of num_routed_tokens, the output and bmm_status
// (writer_tensor order). Common runtime args (common_arg, then writer_common_arg),
// per-core runtime args (core_arg) and the named compile-time args:
// cpp/ops/moe_bmm/moe_bmm_shared.hpp.
//
// conformance: kind=dataflow ct_args=2,32,130,2,32 named=cb_out:16,cb_zero:5,cb_routing:4,cb_status:7 formats=4:uint32,7:uint32
#include <cstdint>
#include <tuple>

#include "api/dataflow/dataflow_api.h"
#include "moe_bmm_work_split.hpp"

using namespace moe_bmm;

namespace {

constexpr uint32_t cb_out = get_named_compile_time_arg_val(named_arg::kCbOut);
constexpr uint32_t cb_zero = get_named_compile_time_arg_val(named_arg::kCbZero);
constexpr uint32_t cb_routing = get_named_compile_time_arg_val(named_arg::kCbRouting);
constexpr uint32_t cb_status = get_named_compile_time_arg_val(named_arg::kCbStatus);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<writer_tensor::kCount, 0>();

// The inactive row tiles of an expert's padded block: [active, Mt).
struct IdleRows {
    const Routing* routing;
    RowTileRange operator()(uint32_t l) const {
        return RowTileRange{routing->active_row_tiles(l), routing->block_row_tiles()};
    }
};

struct Args {
    Shape shape;
    uint32_t out_addr, counts_addr, offsets_addr, addend_addr, status_addr, out_page_bytes;
    uint32_t core_index, num_cores;
};

Args read_args() {
    Args a;
    a.shape = read_shape();
    a.out_addr = get_common_arg_val<uint32_t>(writer_common_arg::kOutAddr);
    a.counts_addr = get_common_arg_val<uint32_t>(writer_common_arg::kCountsAddr);
    a.offsets_addr = get_common_arg_val<uint32_t>(writer_common_arg::kOffsetsAddr);
    a.addend_addr = get_common_arg_val<uint32_t>(writer_common_arg::kAddendAddr);
    a.status_addr = get_common_arg_val<uint32_t>(writer_common_arg::kStatusAddr);
    a.out_page_bytes = get_common_arg_val<uint32_t>(writer_common_arg::kOutPageBytes);
    a.core_index = get_arg_val<uint32_t>(core_arg::kCoreIndex);
    a.num_cores = get_arg_val<uint32_t>(core_arg::kNumCores);
    return a;
}

// Zero tiles to the inactive tiles of idle_share.
template <typename Out>
void write_zero_tiles(const Args& a, const Routing& routing, const Out& out, const Share& idle_share,
                      TileWalk<IdleRows>& idle) {
    const uint32_t tile_bytes = get_tile_size(cb_out);
    cb_reserve_back(cb_zero, 1);
    moe_kernel::fill_words(get_write_ptr(cb_zero), tile_bytes / sizeof(uint32_t), 0);
    cb_push_back(cb_zero, 1);
    cb_wait_front(cb_zero, 1);
    for (uint32_t t = 0; t < idle_share.count; ++t) {
        const TileCoord tile = t == 0 ? idle.seek(idle_share.first) : idle.next();
        noc_async_write(get_read_ptr(cb_zero), out.get_noc_addr(output_page(a.shape, routing, tile)), tile_bytes);
    }
    noc_async_write_barrier();
    cb_pop_front(cb_zero, 1);
}

// Padded mode with an addend: the inactive row tiles are x @ w = 0 plus the addend, so the addend's
// tiles are copied there, one at a time through cb_zero.
template <typename Out>
void copy_addend_tiles(const Args& a, const Routing& routing, const Out& out, const Share& idle_share,
                       TileWalk<IdleRows>& idle) {
    const uint32_t tile_bytes = get_tile_size(cb_zero);
    const auto addend = TensorAccessor(std::get<writer_tensor::kOut>(kTensorArgs), a.addend_addr, tile_bytes);
    for (uint32_t t = 0; t < idle_share.count; ++t) {
        const uint32_t page = output_page(a.shape, routing, t == 0 ? idle.seek(idle_share.first) : idle.next());
        cb_reserve_back(cb_zero, 1);
        noc_async_read(addend.get_noc_addr(page), get_write_ptr(cb_zero), tile_bytes);
        noc_async_read_barrier();
        cb_push_back(cb_zero, 1);
        cb_wait_front(cb_zero, 1);
        noc_async_write(get_read_ptr(cb_zero), out.get_noc_addr(page), tile_bytes);
        noc_async_write_barrier();
        cb_pop_front(cb_zero, 1);
    }
}

// Padded mode: this core's even share of the inactive row tiles of every expert's T range (they need
// no compute, so they overlap the first matmuls) get zeros, or the addend's tiles.
template <typename Out>
void write_inactive_tiles(const Args& a, const Routing& routing, const Out& out) {
    TileWalk idle(a.shape.num_experts, a.shape.col_tiles, IdleRows{&routing});
    const Share idle_share = even_share(idle.total(), a.core_index, a.num_cores);
    if (idle_share.count == 0) return;
    if (a.shape.addend) {
        copy_addend_tiles(a, routing, out, idle_share, idle);
    } else {
        write_zero_tiles(a, routing, out, idle_share, idle);
    }
}

// Row-major output: the counted rows of an untilized tile at `l1`, each its 32 elements of column
// tile tile.col_tile.
template <typename Out>
void write_tile_rows(const Routing& routing, const Out& out, const TileCoord& tile, uint32_t l1) {
    const uint32_t first = tile.row_tile * kTileRows;  // an active tile: the count reaches past it
    const uint32_t left = routing.valid_rows(tile.expert) - first;
    const uint32_t rows = left < kTileRows ? left : kTileRows;
    const uint32_t row0 = routing.row_base(tile.expert) + first;
    for (uint32_t i = 0; i < rows; ++i) {
        noc_async_write(l1 + i * kTileRowBytes, out.get_noc_addr(row0 + i, tile.col_tile * kTileRowBytes),
                        kTileRowBytes);
    }
}

// The compute kernel's output tiles, in this core's segment order.
template <typename Out>
void write_active_tiles(const Args& a, const Routing& routing, const Out& out) {
    const uint32_t tile_bytes = get_tile_size(cb_out);
    for_each_segment(a.shape, routing, a.core_index, a.num_cores, [&](const Segment& seg) {
        for (uint32_t c = 0; c < seg.cols; ++c) {
            for (uint32_t r = 0; r < seg.rows; ++r) {
                const TileCoord tile{seg.expert, seg.first_row + r, seg.first_col + c};
                cb_wait_front(cb_out, 1);
                if (a.shape.row_major_out) {
                    write_tile_rows(routing, out, tile, get_read_ptr(cb_out));
                } else {
                    noc_async_write(get_read_ptr(cb_out), out.get_noc_addr(output_page(a.shape, routing, tile)),
                                    tile_bytes);
                }
                noc_async_writes_flushed();
                cb_pop_front(cb_out, 1);
            }
        }
    });
    noc_async_write_barrier();
}

// Rows of expert l the data allows from its offset: T (padded), or the rows of x left (grouped).
uint32_t block_room(const Args& a, const Routing& routing, uint32_t l) {
    if (!a.shape.grouped) return a.shape.rows;
    return routing.offset(l) < a.shape.rows ? a.shape.rows - routing.offset(l) : 0;
}

uint32_t rows_written(const Args& a, const Routing& routing, uint32_t l) {
    const uint32_t room = block_room(a, routing, l);
    return routing.count(l) < room ? routing.count(l) : room;
}

// Core 0's bmm_status: experts whose count exceeds their block, grouped experts with tokens at
// an offset off the tile grid, grouped experts whose rows overlap a lower expert's.
template <typename Status>
void write_status(const Args& a, const Routing& routing, const Status& status_out) {
    cb_reserve_back(cb_status, 1);
    volatile uint32_t* status = moe_kernel::words(get_write_ptr(cb_status));
    moe_kernel::fill_words(get_write_ptr(cb_status), kStatusWords, kNone);
    status[kClampedCounts] = status[kMisalignedOffsets] = status[kOverlappingBlocks] = 0;
    for (uint32_t l = 0; l < a.shape.num_experts; ++l) {
        const uint32_t count = routing.count(l), offset = routing.offset(l);
        if (count > block_room(a, routing, l) && status[kClampedCounts]++ == 0) {
            status[kFirstClampedExpert] = l;
            status[kFirstClampedCount] = count;
        }
        if (count > 0 && offset % kTileRows != 0 && status[kMisalignedOffsets]++ == 0) {
            status[kFirstMisalignedExpert] = l;
            status[kFirstMisalignedOffset] = offset;
        }
        const uint32_t end = offset + rows_written(a, routing, l);
        for (uint32_t j = 0; a.shape.grouped && j < l && offset < end; ++j) {
            const uint32_t other = routing.offset(j), other_end = other + rows_written(a, routing, j);
            if (offset < other_end && other < end) {
                if (status[kOverlappingBlocks]++ == 0) status[kFirstOverlapExpert] = l;
                break;
            }
        }
    }
    noc_async_write(get_write_ptr(cb_status), status_out.get_noc_addr(0), kStatusWords * 4);
    noc_async_write_barrier();
}

}  // namespace

void kernel_main() {
    Args args = read_args();
    const auto out = TensorAccessor(std::get<writer_tensor::kOut>(kTensorArgs), args.out_addr, args.out_page_bytes);
    const auto counts = TensorAccessor(std::get<writer_tensor::kRouting>(kTensorArgs), args.counts_addr);
    const auto offsets = TensorAccessor(std::get<writer_tensor::kRouting>(kTensorArgs), args.offsets_addr);

    const Routing routing(load_routing(cb_routing, counts, offsets, args.shape), args.shape);
    args.shape.unit_rows = unit_row_tiles(args.shape, routing, args.num_cores);
    if (args.core_index == 0) {
        write_status(args, routing, TensorAccessor(std::get<writer_tensor::kStatus>(kTensorArgs), args.status_addr));
    }
    if (!args.shape.grouped && !args.shape.row_major_out) write_inactive_tiles(args, routing, out);
    write_active_tiles(args, routing, out);
}
