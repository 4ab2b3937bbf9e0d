// moe_bmm reader: derives this core's segments (moe_bmm_work_split.hpp) from the
// device-resident counts and feeds the compute kernel. Weights of experts without tokens are
// never read.
//
// Schedule for the compute kernel, through cb_work (one uint32 per page, read there with
// read_tile_value): one word per segment (its rows | cols << segment_word::kColsShift), then 0.
//
// Per segment, for each k block [k0, k0 + inner_block) of Kt:
//   x: the segment's rows x inner_block x tiles into cb_x in one push of row_block x inner_block
//      pages (row after row; rows past the expert's count zeroed), once for all the segment's
//      columns: read from DRAM by the round's sender and multicast to the other cores of the round
//      (moe_bmm_x_sharing.hpp), which only receive it, and push it after their first two weight
//      columns of the block (at once with an addend);
//   w: for each column of the segment, its inner_block weight tiles into cb_w in one push (SwiGLU,
//      common arg weight_halves = 2: the gate's column tile 2n, then the up's 2n + 1), read once
//      for all the segment's rows: read from DRAM by the weight round's sender and multicast to the
//      cores computing the same columns in the expert's other row blocks (moe_bmm_w_sharing.hpp).
// The compute kernel keeps the segment's partial sums between blocks, so every weight tile leaves
// DRAM once per weight round (once per segment on a core whose share straddles two row blocks) and
// every x tile once per round of its row block (likewise).
// Every segment's first x block goes to slot 0 of cb_x's two (align_x_ring), and its first weight
// block to slot 0 of cb_w's two (align_w_ring), as the multicasts need.
// Row-major x (common arg row_major_x = 1; a page is one row of Kd elements): the block goes to
// cb_x_rows instead, as one strip per row tile, 32 rows x inner_block * 32 elements (tilize_block's
// input, the bytes of inner_block tiles), read row by row; only the expert's counted rows are read,
// the rest of its last row tile is zeroed. That row-major block is what the round shares, and each
// core's compute kernel tilizes it into cb_x. cb_x_rows holds one block, so every block lands at the
// same address on every core and needs no alignment; the reader fills the next one while the compute
// kernel multiplies the tilized one from cb_x.
// Addend (common arg addend = 1): during the first k block, the addend's tile of each output tile
// (in the compute kernel's order: column by column, row tile by row tile) goes to cb_addend right
// after its column's weights; the compute kernel starts the tile's sum from it.
// Row-major addend (common arg row_major_addend = 1; a page is one row of N elements): right after
// the first x block, the segment's addend rows go to cb_addend_rows row tile by row tile, each row
// tile's columns in strips of up to kAddendStripTiles tiles (32 rows x width * 32 elements, one read
// per row); the compute kernel tilizes all of them before the block's matmuls. Rows the output does
// not have (past T, or past M) are zeroed. Every strip is pushed as kAddendStripTiles (or Nt, if
// fewer) pages, half of cb_addend_rows, so that no strip straddles the end of the ring.
//
// Compile-time args: TensorAccessorArgs of x, w, num_routed_tokens, addend (reader_tensor order).
// Common runtime args (common_arg, then reader_common_arg and the grid's NOC coordinates),
// per-core runtime args (core_arg) and the named compile-time args (CBs, semaphores):
// cpp/ops/moe_bmm/moe_bmm_shared.hpp.
//
// conformance: kind=dataflow ct_args=130,2,2048,2,32,130 named=cb_x:0,cb_x_rows:8,cb_w:1,cb_work:2,cb_routing:3,cb_addend:6,cb_addend_rows:9,sem_x_ready:0,sem_x_valid:1,sem_w_ready:2,sem_w_valid:3 formats=2:uint32,3:uint32 label=bf16-weights
// conformance: kind=dataflow ct_args=130,2,1088,2,32,130 named=cb_x:0,cb_x_rows:8,cb_w:1,cb_work:2,cb_routing:3,cb_addend:6,cb_addend_rows:9,sem_x_ready:0,sem_x_valid:1,sem_w_ready:2,sem_w_valid:3 formats=1:bfloat8_b,2:uint32,3:uint32 label=bfp8-weights
// conformance: kind=dataflow ct_args=130,2,576,2,32,130 named=cb_x:0,cb_x_rows:8,cb_w:1,cb_work:2,cb_routing:3,cb_addend:6,cb_addend_rows:9,sem_x_ready:0,sem_x_valid:1,sem_w_ready:2,sem_w_valid:3 formats=1:bfloat4_b,2:uint32,3:uint32 label=bfp4-weights
#include <cstdint>
#include <tuple>

#include "api/dataflow/dataflow_api.h"
#include "moe_bmm_w_sharing.hpp"
#include "moe_bmm_work_split.hpp"
#include "moe_bmm_x_sharing.hpp"

using namespace moe_bmm;

namespace {

constexpr uint32_t cb_x = get_named_compile_time_arg_val(named_arg::kCbX);
constexpr uint32_t cb_x_rows = get_named_compile_time_arg_val(named_arg::kCbXRows);
constexpr uint32_t cb_w = get_named_compile_time_arg_val(named_arg::kCbW);
constexpr uint32_t cb_work = get_named_compile_time_arg_val(named_arg::kCbWork);
constexpr uint32_t cb_routing = get_named_compile_time_arg_val(named_arg::kCbRouting);
constexpr uint32_t cb_addend = get_named_compile_time_arg_val(named_arg::kCbAddend);
constexpr uint32_t cb_addend_rows = get_named_compile_time_arg_val(named_arg::kCbAddendRows);
constexpr uint32_t sem_x_ready = get_named_compile_time_arg_val(named_arg::kSemXReady);
constexpr uint32_t sem_x_valid = get_named_compile_time_arg_val(named_arg::kSemXValid);
constexpr uint32_t sem_w_ready = get_named_compile_time_arg_val(named_arg::kSemWReady);
constexpr uint32_t sem_w_valid = get_named_compile_time_arg_val(named_arg::kSemWValid);
constexpr auto kTensorArgs = make_tensor_accessor_args_tuple<reader_tensor::kCount, 0>();

struct Args {
    Shape shape;
    uint32_t x_addr, w_addr, counts_addr, offsets_addr, addend_addr, x_page_bytes, addend_page_bytes;
    uint32_t core_index, num_cores;
    Grid grid;
};

Args read_args() {
    Args a;
    a.shape = read_shape();
    a.x_addr = get_common_arg_val<uint32_t>(reader_common_arg::kXAddr);
    a.w_addr = get_common_arg_val<uint32_t>(reader_common_arg::kWAddr);
    a.counts_addr = get_common_arg_val<uint32_t>(reader_common_arg::kCountsAddr);
    a.offsets_addr = get_common_arg_val<uint32_t>(reader_common_arg::kOffsetsAddr);
    a.addend_addr = get_common_arg_val<uint32_t>(reader_common_arg::kAddendAddr);
    a.x_page_bytes = get_common_arg_val<uint32_t>(reader_common_arg::kXPageBytes);
    a.addend_page_bytes = get_common_arg_val<uint32_t>(reader_common_arg::kAddendPageBytes);
    a.core_index = get_arg_val<uint32_t>(core_arg::kCoreIndex);
    a.num_cores = get_arg_val<uint32_t>(core_arg::kNumCores);
    a.grid = Grid{get_common_arg_val<uint32_t>(reader_common_arg::kGridCols),
                  get_common_arg_val<uint32_t>(reader_common_arg::kGridRows), reader_common_arg::kCount};
    return a;
}

// Zeroes rows [first_row, 32) of a bfloat16 tile in L1 (four 16x16 faces: top-left,
// top-right, bottom-left, bottom-right; row-major inside a face). Rows of the last
// active row tile past count_l may hold anything (grouped inputs leave them
// unwritten), so they are cleared before the matmul: output rows past count_l are 0.
void zero_bf16_tile_rows(uint32_t tile_addr, uint32_t first_row) {
    constexpr uint32_t face_dim = 16;
    constexpr uint32_t face_row_words = face_dim * sizeof(uint16_t) / sizeof(uint32_t);
    constexpr uint32_t face_words = face_dim * face_row_words;
    auto* tile = reinterpret_cast<volatile uint32_t*>(tile_addr);
    for (uint32_t row = first_row; row < 2 * face_dim; ++row) {
        const uint32_t left_face = row < face_dim ? 0 : 2;
        const uint32_t row_in_face = (row % face_dim) * face_row_words;
        for (uint32_t face = left_face; face < left_face + 2; ++face) {
            for (uint32_t w = 0; w < face_row_words; ++w) tile[face * face_words + row_in_face + w] = 0;
        }
    }
}

// One word of the compute kernel's schedule (it reads it with read_tile_value).
void send_word(uint32_t value) {
    cb_reserve_back(cb_work, 1);
    moe_kernel::words(get_write_ptr(cb_work))[0] = value;
    cb_push_back(cb_work, 1);
}

// Starts reading `count` tiles (of cb's tile size) of `tensor` from page first_page on, `stride`
// pages apart, to L1 from address l1 on.
template <typename Tensor>
void read_tiles_async_at(uint32_t l1, uint32_t cb, const Tensor& tensor, uint32_t first_page, uint32_t stride,
                         uint32_t count) {
    const uint32_t tile_bytes = get_tile_size(cb);
    for (uint32_t j = 0; j < count; ++j) {
        noc_async_read(tensor.get_noc_addr(first_page + j * stride), l1 + j * tile_bytes, tile_bytes);
    }
}

// The CB the reader fills with x blocks: cb_x (tiles), or cb_x_rows (row strips the compute kernel
// tilizes).
uint32_t x_cb(const Shape& shape) {
    return shape.row_major_x ? cb_x_rows : cb_x;
}

// The segment's rows x inner_block x tiles of k block k0 from DRAM to `l1` (a cb_x slot); rows past
// the expert's count are zeroed.
template <typename X>
void read_x_tiles(const Shape& shape, const X& x, const Routing& routing, const Segment& seg, uint32_t k0,
                  uint32_t l1) {
    const uint32_t tile_bytes = get_tile_size(cb_x);
    for (uint32_t r = 0; r < seg.rows; ++r) {
        const uint32_t first_page = (routing.row_tile_base(seg.expert) + seg.first_row + r) * shape.inner_tiles + k0;
        read_tiles_async_at(l1 + r * shape.inner_block * tile_bytes, cb_x, x, first_page, 1, shape.inner_block);
    }
    noc_async_read_barrier();
    const uint32_t last_rows = routing.valid_rows(seg.expert) - (seg.first_row + seg.rows - 1) * kTileRows;
    if (last_rows < kTileRows) {  // the segment holds the expert's last, partial row tile
        const uint32_t last = l1 + (seg.rows - 1) * shape.inner_block * tile_bytes;
        for (uint32_t j = 0; j < shape.inner_block; ++j) zero_bf16_tile_rows(last + j * tile_bytes, last_rows);
    }
}

// Row-major x: the segment's row strips of k block k0 to `l1` (a cb_x_rows slot), strip r holding rows
// 32 r .. 32 r + 31 of the segment, each the inner_block * 32 elements from column 32 k0 on. Only the
// expert's counted rows are read; the rest of its last row tile is zeroed.
template <typename X>
void read_x_row_strips(const Shape& shape, const X& x, const Routing& routing, const Segment& seg, uint32_t k0,
                       uint32_t l1) {
    const uint32_t segment_bytes = shape.inner_block * kTileRowBytes;  // of one row, in one strip
    const uint32_t strip_bytes = kTileRows * segment_bytes;
    const uint32_t valid = routing.valid_rows(seg.expert);
    const uint32_t first_row = seg.first_row * kTileRows;
    const uint32_t end_row = first_row + seg.rows * kTileRows;
    const uint32_t read_end = valid < end_row ? valid : end_row;
    const uint32_t base = routing.row_base(seg.expert);
    for (uint32_t row = first_row; row < read_end; ++row) {
        noc_async_read(x.get_noc_addr(base + row, k0 * kTileRowBytes), l1 + (row - first_row) * segment_bytes,
                       segment_bytes);
    }
    if (read_end < end_row) {  // the segment holds the expert's last, partial row tile
        const uint32_t zero_from = l1 + (read_end - first_row) * segment_bytes;
        const uint32_t strips_end = l1 + seg.rows * strip_bytes;
        moe_kernel::fill_words(zero_from, (strips_end - zero_from) / sizeof(uint32_t), 0);
    }
    noc_async_read_barrier();
}

ShareSemaphores x_semaphores() {
    return {static_cast<uint32_t>(get_semaphore(sem_x_ready)), static_cast<uint32_t>(get_semaphore(sem_x_valid))};
}

// Starts the segment's x block k0 into cb_x (cb_x_rows for a row-major x): the round's sender (or a core
// reading alone) reads it, multicasts it to the round's other cores and pushes it (returns true); a
// receiver reserves its slot and tells the sender so (returns false), and pushes the block later
// (x_block_finish), so that it can read weights while the block is on its way. Every push is row_block x
// inner_block pages, however many rows the segment has, so that a block never straddles the end of the
// ring (the pages past the segment's rows go unread).
template <typename X>
bool x_block_start(const Args& a, const X& x, const Routing& routing, const Segment& seg, const XRound& round,
                   uint32_t k0) {
    const Shape& shape = a.shape;
    const uint32_t cb = x_cb(shape);
    cb_reserve_back(cb, shape.row_block * shape.inner_block);
    const uint32_t l1 = get_write_ptr(cb);
    if (round.sender() != a.core_index) {
        post_ready(a.grid, round.sender(), x_semaphores());
        return false;
    }
    if (shape.row_major_x) {
        read_x_row_strips(shape, x, routing, seg, k0, l1);
    } else {
        read_x_tiles(shape, x, routing, seg, k0, l1);
    }
    if (round.receivers() > 0) {
        multicast_block(a.grid, round, x_semaphores(), l1, seg.rows * shape.inner_block * get_tile_size(cb));
    }
    cb_push_back(cb, shape.row_block * shape.inner_block);
    return true;
}

// A receiver's x block: waits for the sender's multicast and pushes it.
void x_block_finish(const Shape& shape) {
    wait_block(x_semaphores());
    cb_push_back(x_cb(shape), shape.row_block * shape.inner_block);
}

// Starts the next segment in slot 0 of cb_x's two: an unread block fills slot 1 when the previous
// segments pushed an odd number of blocks (the compute kernel pops it the same way). cb_x_rows has
// one slot.
void align_x_ring(const Shape& shape, uint32_t& x_blocks) {
    if (shape.row_major_x || x_blocks % 2 == 0) return;
    const uint32_t pages = shape.row_block * shape.inner_block;
    cb_reserve_back(x_cb(shape), pages);
    cb_push_back(x_cb(shape), pages);
    ++x_blocks;
}

// Weight tiles [k0, k0 + inner_block) of output column `col` of `expert` from DRAM to `l1` (a cb_w
// slot), k step by k step, each step's halves side by side (SwiGLU: the gate's tile, then the up's), as
// the compute kernel's block matmul takes a row of its second operand (in w the halves of a step are
// adjacent pages).
template <typename W>
void read_w_tiles(const Shape& shape, const W& w, uint32_t expert, uint32_t col, uint32_t k0, uint32_t l1) {
    const uint32_t stride = shape.weight_col_tiles();
    const uint32_t first_page = (expert * shape.inner_tiles + k0) * stride + shape.weight_halves * col;
    const uint32_t tile_bytes = get_tile_size(cb_w);
    for (uint32_t k = 0; k < shape.inner_block; ++k) {
        read_tiles_async_at(l1 + k * shape.weight_halves * tile_bytes, cb_w, w, first_page + k * stride, 1,
                            shape.weight_halves);
    }
    noc_async_read_barrier();
}

// The weight block k0 of output column `col` of the segment's expert into cb_w: read (and multicast by
// the weight round's sender) or received.
template <typename W>
void w_block(const Args& a, const W& w, const Segment& seg, const WRound& round, uint32_t col, uint32_t k0) {
    const uint32_t pages = a.shape.weight_halves * a.shape.inner_block;
    const ShareSemaphores sem{static_cast<uint32_t>(get_semaphore(sem_w_ready)),
                              static_cast<uint32_t>(get_semaphore(sem_w_valid))};
    cb_reserve_back(cb_w, pages);
    const uint32_t l1 = get_write_ptr(cb_w);
    if (round.sender() != a.core_index) {
        receive_block(a.grid, round.sender(), sem);
    } else {
        read_w_tiles(a.shape, w, seg.expert, col, k0, l1);
        if (round.receivers() > 0) multicast_block(a.grid, round, sem, l1, pages * get_tile_size(cb_w));
    }
    cb_push_back(cb_w, pages);
}

// Starts the next segment's weight blocks in slot 0 of cb_w's two: an unread block fills slot 1 when
// the previous segments pushed an odd number of blocks (the compute kernel pops it the same way).
void align_w_ring(const Shape& shape, uint32_t& w_blocks) {
    if (w_blocks % 2 == 0) return;
    const uint32_t pages = shape.weight_halves * shape.inner_block;
    cb_reserve_back(cb_w, pages);
    cb_push_back(cb_w, pages);
    ++w_blocks;
}

// The addend's tile at `page` (the output tile's page) into cb_addend.
template <typename Addend>
void read_addend_tile(const Addend& addend, uint32_t page) {
    cb_reserve_back(cb_addend, 1);
    read_tiles_async_at(get_write_ptr(cb_addend), cb_addend, addend, page, 1, 1);
    noc_async_read_barrier();
    cb_push_back(cb_addend, 1);
}

// Row-major addend: the segment's addend rows into cb_addend_rows, row tile by row tile, each row tile's
// columns in strips of up to kAddendStripTiles tiles: strip row i holds the width * 32 elements of output
// row 32 r + i from column 32 c0 on. Rows the output does not have are zeroed.
template <typename Addend>
void read_addend_strips(const Shape& shape, const Addend& addend, const Routing& routing, const Segment& seg) {
    const uint32_t strip = shape.col_tiles < kAddendStripTiles ? shape.col_tiles : kAddendStripTiles;
    const uint32_t held = routing.block_rows(seg.expert);  // past the first row of every active row tile
    const uint32_t base = routing.row_base(seg.expert);
    for (uint32_t r = 0; r < seg.rows; ++r) {
        const uint32_t first = (seg.first_row + r) * kTileRows;
        const uint32_t end = held < first + kTileRows ? held : first + kTileRows;
        for (uint32_t c0 = 0; c0 < seg.cols; c0 += strip) {
            const uint32_t row_bytes = (seg.cols - c0 < strip ? seg.cols - c0 : strip) * kTileRowBytes;
            cb_reserve_back(cb_addend_rows, strip);
            const uint32_t l1 = get_write_ptr(cb_addend_rows);
            const uint32_t column_byte = (seg.first_col + c0) * kTileRowBytes;
            for (uint32_t row = first; row < end; ++row) {
                noc_async_read(addend.get_noc_addr(base + row, column_byte), l1 + (row - first) * row_bytes, row_bytes);
            }
            if (end < first + kTileRows) {  // the output ends inside this row tile
                moe_kernel::fill_words(l1 + (end - first) * row_bytes,
                                       (first + kTileRows - end) * row_bytes / sizeof(uint32_t), 0);
            }
            noc_async_read_barrier();
            cb_push_back(cb_addend_rows, strip);
        }
    }
}

}  // namespace

void kernel_main() {
    Args args = read_args();
    const Shape& shape = args.shape;
    const auto x = TensorAccessor(std::get<reader_tensor::kX>(kTensorArgs), args.x_addr, args.x_page_bytes);
    const auto w = TensorAccessor(std::get<reader_tensor::kW>(kTensorArgs), args.w_addr);
    const auto counts = TensorAccessor(std::get<reader_tensor::kRouting>(kTensorArgs), args.counts_addr);
    const auto offsets = TensorAccessor(std::get<reader_tensor::kRouting>(kTensorArgs), args.offsets_addr);
    const auto addend =
        TensorAccessor(std::get<reader_tensor::kAddend>(kTensorArgs), args.addend_addr, args.addend_page_bytes);

    const Routing routing(load_routing(cb_routing, counts, offsets, shape), shape);
    args.shape.unit_rows = unit_row_tiles(shape, routing, args.num_cores);
    const uint32_t total = active_tiles(shape, routing);
    uint32_t x_blocks = 0, w_blocks = 0;
    for_each_segment(shape, routing, args.core_index, args.num_cores, [&](const Segment& seg) {
        send_word(seg.rows | seg.cols << segment_word::kColsShift);
        align_x_ring(shape, x_blocks);
        align_w_ring(shape, w_blocks);
        const XRound round(shape, total, args.num_cores, args.core_index, seg);
        const WRound w_round(shape, routing, total, args.num_cores, args.core_index, seg);
        // A receiver of the x round reads the block's first weight columns (up to the two cb_w holds
        // before the compute kernel needs the x block) while its x block is multicast; with an addend,
        // whose tiles the compute kernel takes after the block's x, it waits for x first.
        const uint32_t x_wait_col = shape.addend ? 0 : (seg.cols < 2 ? seg.cols : 2);
        for (uint32_t k0 = 0; k0 < shape.inner_tiles; k0 += shape.inner_block, ++x_blocks) {
            bool x_pending = !x_block_start(args, x, routing, seg, round, k0);
            auto finish_x = [&] {
                if (x_pending) x_block_finish(shape);
                x_pending = false;
            };
            if (x_wait_col == 0) finish_x();
            if (shape.row_major_addend && k0 == 0) read_addend_strips(shape, addend, routing, seg);
            for (uint32_t c = 0; c < seg.cols; ++c, ++w_blocks) {
                if (c == x_wait_col) finish_x();
                w_block(args, w, seg, w_round, seg.first_col + c, k0);
                if (!shape.addend || shape.row_major_addend || k0 > 0) continue;
                for (uint32_t r = 0; r < seg.rows; ++r) {
                    read_addend_tile(addend,
                                     output_page(shape, routing, {seg.expert, seg.first_row + r, seg.first_col + c}));
                }
            }
            finish_x();
        }
    });
    send_word(0);
    noc_async_write_barrier();  // the last multicasts have landed before the kernel ends
}
