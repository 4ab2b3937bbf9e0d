// The tt-fabric part of the kernel ABI: what the emulated worker-side fabric
// headers (WorkerToFabricEdmSender, packet headers) and the runtime's fabric
// (emu/fabric) share. Services::fabric points at a FabricServices table.
#pragma once

#include <cstdint>

namespace ttnn_moe_emu {

// Worker channel of the emulated EDM: buffer slots a sender may fill before
// the fabric drains them, and the largest payload of one packet. 4096 B is at
// most the real Wormhole/Blackhole channel payload, so kernels that respect it
// also fit on hardware.
inline constexpr uint32_t FABRIC_BUFFER_SLOTS = 8;
inline constexpr uint32_t FABRIC_MAX_PAYLOAD_BYTES = 4096;

// How a packet header names its destination chip.
enum class FabricRoute : uint32_t {
    Hops = 0,                 // 1D: distance along the connection's line
    LineDevice = 1,           // 1D: a chip id on the connection's line
    MeshDevice = 2,           // 2D: destination (mesh id, chip id)
    LineMulticast = 3,        // 1D: every chip `hops` .. `hops + range_hops - 1` along the connection's line
    LineSparseMulticast = 4,  // 1D: the chips i + 1 hops along the line for every bit i set in `hops`
};

// A packet header as the kernel hands it over, decoded by the header's own type.
struct FabricPacket {
    uint32_t noc_send_type;          // tt::tt_fabric::NocSendType
    uint32_t payload_size;           // the header's payload_size_bytes
    uint64_t noc_address;            // write / increment / inline-write target
    uint64_t semaphore_noc_address;  // fused write + increment: the increment target
    uint32_t value;                  // increment value, or the inline-write word
    FabricRoute route;
    uint32_t hops;         // FabricRoute::Hops; LineMulticast: the first chip's distance; LineSparseMulticast: hop mask
    uint32_t dst_chip_id;  // FabricRoute::LineDevice / MeshDevice
    uint32_t dst_mesh_id;  // FabricRoute::MeshDevice
    uint32_t inline_payload_l1;  // payload sent right behind the header (0: none)
    uint32_t inline_payload_bytes;
    uint32_t range_hops;  // FabricRoute::LineMulticast: how many chips, from `hops` on
    // NOC_UNICAST_SCATTER_WRITE: chunk i (2 bits of scatter_chunk_encoding each) writes the payload's next
    // scatter_chunk_size[i] bytes to address i (the last write chunk the rest), or increments the word at
    // address i by scatter_chunk_size[i] (taking no payload).
    uint64_t scatter_noc_address[4];
    uint16_t scatter_chunk_size[3];
    uint8_t scatter_chunk_count;
    uint8_t scatter_chunk_encoding;
};

struct FabricServices {
    // Binds a connection from the three runtime args build_from_args consumes; returns its handle.
    uint32_t (*connect)(uint32_t channel_arg, uint32_t teardown_sem_id, uint32_t buffer_index_sem_id);
    void (*open_start)(uint32_t conn);
    void (*open_finish)(uint32_t conn);
    void (*close_start)(uint32_t conn);
    void (*close_finish)(uint32_t conn);
    uint32_t (*free_slots)(uint32_t conn);
    // Blocks until the connection has a free buffer slot.
    void (*wait_for_empty_write_slot)(uint32_t conn);
    // The payload part of a packet (send_payload_without_header_*): copied now, sent with the next header.
    void (*send_payload)(uint32_t conn, uint32_t src_l1_addr, uint32_t size);
    // The header: snapshots the packet and puts it in flight.
    void (*send_header)(uint32_t conn, const FabricPacket* packet);
    // eth_chan_directions value of the first hop from this chip to (mesh, chip).
    uint32_t (*next_hop_direction)(uint32_t dst_mesh_id, uint32_t dst_chip_id);
    // eth_chan_directions value of a connection's channel (the first runtime arg).
    uint32_t (*channel_direction)(uint32_t channel_arg);
};

}  // namespace ttnn_moe_emu
