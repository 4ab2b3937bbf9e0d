// What the reader and the writer of the line reduce_scatter (reduce_scatter_line_reader.cpp,
// reduce_scatter_line_writer.cpp) agree on: their runtime args and the walk of one direction.
//
// Every member of the line runs, per link, the same number of workers in each direction, each
// owning the same range [first, first + count) of output pages of every slice (slice d = the
// pages member d keeps), and sending through its link's fabric mux for its direction. Forward (direction 0): the partial sums of slices N-1, N-2, ..., position+1 go to the
// next member; the member at position 0 starts them with its own input, every other member adds
// its input to the partial the previous member sent and passes the sum on. The partial of its
// own slice (the last one to arrive) is its final forward sum. Backward (direction 1): the
// mirror image, slices 0, 1, ..., position-1 towards position-1. So each slice crosses each
// link once per direction, and is added to on the way.
//
// Pages move in chunks of `granularity` (a named compile-time arg): every CB reservation, push and
// pop is a whole chunk, the last chunk of a range using only the pages left, so the readers issue a
// chunk's DRAM reads under one barrier.
//
// Final sums: an end member has one direction's partial: out = own + partial. A middle member
// adds both, in a fixed order (forward first): the forward worker writes own + forward partial
// to the output and signals the backward worker page by page, which writes
// output + backward partial over it. Every add is in fp32 DST, rounded to the input format once.
// A line of one member copies its input.
//
// Runtime args (both kernels): input, staging and output addresses, page bytes, first and count,
// chunk (output pages per slab of the split dim), out_pages, line size, position, direction,
// the opposite-direction worker's NOC x and y (its counterpart on the same link), max packet
// payload; the writer's go on with the next member's fabric node (chip id | mesh id << 16) and,
// if the worker sends, its mux channel (the 11 args of a FabricMuxV2Sender).
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace moe_rs_line {

constexpr uint32_t kForward = 0;
constexpr uint32_t kNextNodeArg = 14;
constexpr uint32_t kMuxArg = 15;

struct Args {
    uint32_t input, staging, output, page_bytes, first, count, chunk, out_pages, line_size, position, direction;
    uint32_t opposite_x, opposite_y, max_payload;

    bool forward() const { return direction == kForward; }
    // The member that starts this direction's partials: it has nothing to receive.
    bool first_in_direction() const { return forward() ? position == 0 : position + 1 == line_size; }
    // Slices this worker sends on (0 at the far end of its direction).
    uint32_t targets() const { return forward() ? line_size - 1 - position : position; }
    // Slices it receives: the ones it forwards and its own.
    uint32_t received() const { return first_in_direction() ? 0 : targets() + 1; }
    // The i-th slice of this direction's walk (i == targets(): its own slice).
    uint32_t slice(uint32_t i) const { return forward() ? line_size - 1 - i : i; }
    // A line of one: its forward worker copies the input to the output.
    bool copies_own_slice() const { return line_size == 1 && forward(); }
    // A middle member's final sum takes both directions: forward writes, then backward adds.
    bool middle() const { return position > 0 && position + 1 < line_size; }
    // Input page that holds slice d's share of output page k.
    uint32_t input_page(uint32_t k, uint32_t d) const {
        return (k / chunk) * (line_size * chunk) + d * chunk + k % chunk;
    }
    // Staging keeps one input-sized half per direction.
    uint32_t staging_page(uint32_t k, uint32_t d) const {
        return (forward() ? 0 : line_size * out_pages) + input_page(k, d);
    }
    // Pages of the chunk starting at page k.
    uint32_t chunk_pages(uint32_t k, uint32_t granularity) const {
        return first + count - k < granularity ? first + count - k : granularity;
    }
};

inline Args read_args() {
    Args a;
    a.input = get_arg_val<uint32_t>(0);
    a.staging = get_arg_val<uint32_t>(1);
    a.output = get_arg_val<uint32_t>(2);
    a.page_bytes = get_arg_val<uint32_t>(3);
    a.first = get_arg_val<uint32_t>(4);
    a.count = get_arg_val<uint32_t>(5);
    a.chunk = get_arg_val<uint32_t>(6);
    a.out_pages = get_arg_val<uint32_t>(7);
    a.line_size = get_arg_val<uint32_t>(8);
    a.position = get_arg_val<uint32_t>(9);
    a.direction = get_arg_val<uint32_t>(10);
    a.opposite_x = get_arg_val<uint32_t>(11);
    a.opposite_y = get_arg_val<uint32_t>(12);
    a.max_payload = get_arg_val<uint32_t>(13);
    return a;
}

}  // namespace moe_rs_line
