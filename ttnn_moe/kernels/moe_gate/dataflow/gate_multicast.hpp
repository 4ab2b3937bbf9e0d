// moe_gate, resident split: a block multicast from a line's first core (a grid row's for x, a grid
// column's for the gate weight) into the same L1 address of the line's other cores, which lie in one
// NOC rectangle.
#pragma once

#include <cstdint>

#include "api/dataflow/dataflow_api.h"

namespace moe_gate {

// The line's other cores: the rectangle from (start_x, start_y) to (end_x, end_y) in NOC coordinates
// of NOC 0, and how many cores it holds.
struct Receivers {
    uint32_t start_x, start_y, end_x, end_y, count;

    // The multicast address of `addr` on every receiver. NOC 1 runs the other way round, so its
    // rectangle starts at the far corner.
    uint64_t addr(uint32_t l1) const {
        if (noc_index == 1) return get_noc_multicast_addr(end_x, end_y, start_x, start_y, l1);
        return get_noc_multicast_addr(start_x, start_y, end_x, end_y, l1);
    }
};

}  // namespace moe_gate
