// The circular buffers of moe_bmm on every core, shared by validation (L1 budget)
// and the program factory, so both always agree.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/moe_bmm/moe_bmm_device_operation.hpp"
#include "program/program_descriptor.hpp"

namespace ttnn_moe::ops::moe_bmm {

// CB indices (named compile-time args of the kernels).
constexpr uint8_t kCbX = 0;              // x tiles, bf16: two k blocks of a segment's rows
constexpr uint8_t kCbW = 1;              // w tiles, bf16, bfloat8_b or bfloat4_b: two k blocks of one column
constexpr uint8_t kCbWork = 2;           // reader -> compute: one word per segment, then 0
constexpr uint8_t kCbRoutingReader = 3;  // reader's copy of counts and offsets
constexpr uint8_t kCbRoutingWriter = 4;  // writer's copy of counts and offsets
constexpr uint8_t kCbZero = 5;           // writer's zero tile (padded mode), or an addend tile it copies
constexpr uint8_t kCbAddend = 6;         // the addend's tiles (with an addend only): two, or a segment's (row-major)
constexpr uint8_t kCbStatus = 7;         // writer's status record (core 0)
constexpr uint8_t kCbXRows = 8;          // row-major x only: one k block of row strips, bf16
constexpr uint8_t kCbAddendRows = 9;     // row-major addend only: two strips of its rows, bf16
constexpr uint8_t kCbOut = 16;           // output tiles, bf16
constexpr uint8_t kCbPartial = 24;       // partial sums between k blocks, bf16 (fp32 with fp32_dest_acc_en)

// Semaphore ids of the x and the weight multicast handshakes (moe_bmm_x_sharing.hpp,
// moe_bmm_w_sharing.hpp), on every core.
constexpr uint32_t kSemXReady = 0;  // x sender: receivers ready for the next x block
constexpr uint32_t kSemXValid = 1;  // x receiver: the block has landed
constexpr uint32_t kSemWReady = 2;  // weight sender: receivers ready for the next weight block
constexpr uint32_t kSemWValid = 3;  // weight receiver: the block has landed

// CB ids a core has (tt-metal's NUM_CIRCULAR_BUFFERS): the length of unpack_to_dest_mode.
constexpr uint32_t kNumCircularBuffers = 32;

// One routing entry per slot; a slot is as wide as the strictest DRAM read alignment
// (64 B on Blackhole, 32 B on Wormhole), so each 4-byte entry lands at an address
// with the same alignment as its DRAM page.
constexpr uint32_t kRoutingSlotBytes = 64;
// Page of cb_work: one uint32, padded to the L1 alignment of a CB page (two pages: the
// reader may post the next run's length while the compute kernel reads the current one).
constexpr uint32_t kWorkPageBytes = 32;

struct CircularBuffer {
    uint8_t index;
    program::DataFormat format;
    uint32_t page_size;
    uint32_t pages;
};

std::vector<CircularBuffer> circular_buffers(const Dims& dims, program::DataFormat weight_format);

}  // namespace ttnn_moe::ops::moe_bmm
