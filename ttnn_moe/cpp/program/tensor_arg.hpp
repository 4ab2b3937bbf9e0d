// What a program factory needs to know about a device tensor: the buffer it
// lives in and how it is laid out. Built from an emulator tensor or, on
// hardware, from a ttnn tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "program/program_descriptor.hpp"

namespace ttnn_moe::program {

enum class Layout : uint8_t { ROW_MAJOR = 0, TILE = 1 };

struct TensorArg {
    std::vector<uint32_t> shape;  // logical shape, outermost first
    DataFormat dtype = DataFormat::Float16_b;
    Layout layout = Layout::ROW_MAJOR;
    uint32_t address = 0;    // buffer base address (same in every DRAM bank when interleaved)
    uint32_t page_size = 0;  // bytes: one tile (TILE) or one row (ROW_MAJOR)
    uint32_t num_pages = 0;
    bool is_dram = true;  // interleaved over DRAM banks (else interleaved over worker L1)
    // The allocator alignment of the buffer's memory on its device (Wormhole DRAM 32 B,
    // Blackhole DRAM 64 B, L1 16 B): pages are this far apart. 0 for an output spec that
    // has no buffer yet.
    uint32_t alignment = 0;
};

}  // namespace ttnn_moe::program
