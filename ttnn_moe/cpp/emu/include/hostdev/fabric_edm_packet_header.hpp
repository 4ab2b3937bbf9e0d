// tt-fabric packet headers as worker kernels see them (tt-metal 0.81.1 names,
// field layout and sizes): the command structs, PacketHeaderBase with the
// to_chip_* / to_noc_* builders, LowLatencyPacketHeader (1D, 64 B),
// HybridMeshPacketHeader (2D, 96 B), and PACKET_HEADER_TYPE chosen by
// ROUTING_MODE like the real header. Emulated subset: chip unicast, 1D chip
// multicast (a range or a sparse hop mask); NOC unicast write, inline write,
// atomic increment, fused write + increment, scatter write (each chunk a write
// or a semaphore increment, as its 2-bit encoding says; the fused scatter write +
// increment is two write chunks and an increment). NOC multicast and
// read commands are not declared, so a kernel using them fails to build
// instead of misbehaving.
//
// The routing fields hold the emulator's own encoding (the hop count, or a
// chip id); the runtime computes the route, so kernels must not decode them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>

#include "hostdevcommon/fabric_common.h"
#include "tt_metal/fabric/hw/inc/fabric_routing_mode.h"
#include "ttnn_moe_emu/fabric_abi.h"

namespace tt::tt_fabric {

enum NocSendType : uint8_t {
    NOC_UNICAST_WRITE = 0,
    NOC_UNICAST_INLINE_WRITE = 1,
    NOC_UNICAST_ATOMIC_INC = 2,
    NOC_FUSED_UNICAST_ATOMIC_INC = 3,
    NOC_UNICAST_SCATTER_WRITE = 4,
    NOC_MULTICAST_WRITE = 5,
    NOC_MULTICAST_ATOMIC_INC = 6,
    NOC_UNICAST_READ = 7,
    NOC_SPARSE_MCAST_WRITE = 8,
    NOC_SEND_TYPE_LAST = NOC_SPARSE_MCAST_WRITE
};
enum ChipSendType : uint8_t { CHIP_UNICAST = 0, CHIP_MULTICAST = 1, CHIP_SEND_TYPE_LAST = CHIP_MULTICAST };

struct NocUnicastCommandHeader {
    uint64_t noc_address;
};
struct NocUnicastInlineWriteCommandHeader {
    uint64_t noc_address;
    uint32_t value;
};
struct NocUnicastAtomicIncCommandHeader {
    NocUnicastAtomicIncCommandHeader(uint64_t noc_address, uint32_t val, bool flush = true)
        : noc_address(noc_address), val(val), flush(flush) {}
    uint64_t noc_address;
    uint32_t val;
    bool flush;
};
struct NocUnicastAtomicIncFusedCommandHeader {
    NocUnicastAtomicIncFusedCommandHeader(uint64_t noc_address, uint64_t semaphore_noc_address, uint32_t val,
                                          bool flush = true)
        : noc_address(noc_address), semaphore_noc_address(semaphore_noc_address), val(val), flush(flush) {}
    uint64_t noc_address;
    uint64_t semaphore_noc_address;
    uint32_t val;
    bool flush;
};
// Up to four NOC addresses one payload is cut across; chunk_size gives all but the last.
inline constexpr size_t NOC_SCATTER_WRITE_MAX_CHUNKS = 4;
struct NocUnicastScatterCommandHeader {
    uint64_t noc_address[NOC_SCATTER_WRITE_MAX_CHUNKS];
    uint16_t chunk_size[NOC_SCATTER_WRITE_MAX_CHUNKS - 1];
    uint8_t chunk_count;
    uint8_t chunk_encoding;
    NocUnicastScatterCommandHeader(std::initializer_list<uint64_t> addresses,
                                   std::initializer_list<uint16_t> chunk_sizes = {})
        : noc_address{}, chunk_size{}, chunk_count(static_cast<uint8_t>(addresses.size())), chunk_encoding(0) {
        size_t i = 0;
        for (uint64_t a : addresses) noc_address[i++ % NOC_SCATTER_WRITE_MAX_CHUNKS] = a;
        i = 0;
        for (uint16_t c : chunk_sizes) chunk_size[i++ % (NOC_SCATTER_WRITE_MAX_CHUNKS - 1)] = c;
    }
    // addresses[num_addresses], chunk_sizes[num_addresses - 1]; more than four addresses is an error when sent.
    NocUnicastScatterCommandHeader(const uint64_t* addresses, const uint16_t* chunk_sizes, uint8_t num_addresses)
        : noc_address{}, chunk_size{}, chunk_count(num_addresses), chunk_encoding(0) {
        for (size_t i = 0; i < num_addresses && i < NOC_SCATTER_WRITE_MAX_CHUNKS; ++i) noc_address[i] = addresses[i];
        for (size_t i = 0; i + 1 < num_addresses && i + 1 < NOC_SCATTER_WRITE_MAX_CHUNKS; ++i) {
            chunk_size[i] = chunk_sizes[i];
        }
    }
};
// What a scatter chunk does (2 bits per chunk in chunk_encoding): a chunk that increments a semaphore carries
// no payload, its chunk_size is the increment.
enum NocScatterWriteChunkEncoding : uint8_t {
    CHUNK_ENCODING_NOP = 0,
    CHUNK_ENCODING_UNICAST_WRITE = 1,
    CHUNK_ENCODING_SEMINC_NO_FLUSH = 2,
    CHUNK_ENCODING_SEMINC_FLUSH = 3,
    CHUNK_ENCODING_LAST = CHUNK_ENCODING_SEMINC_FLUSH
};
constexpr uint8_t expand_encoding_to_all_chunks(NocScatterWriteChunkEncoding encoding) {
    const uint8_t e = static_cast<uint8_t>(encoding);
    return static_cast<uint8_t>(e | (e << 2) | (e << 4) | (e << 6));
}
inline void set_chunk_encoding(uint8_t& chunk_encoding, NocScatterWriteChunkEncoding encoding, uint32_t chunk_index) {
    chunk_encoding |= static_cast<uint8_t>(static_cast<uint8_t>(encoding) << (chunk_index * 2));
}
// Two write chunks and a semaphore increment in one packet (the only fused scatter form of 0.81.1).
inline constexpr uint8_t NOC_SCATTER_WRITE_ATOMIC_INC_FUSED_WRITE_CHUNKS = 2;
struct NocUnicastScatterAtomicIncFusedCommandHeader {
    uint64_t noc_address[NOC_SCATTER_WRITE_ATOMIC_INC_FUSED_WRITE_CHUNKS];
    uint64_t semaphore_noc_address;
    uint16_t chunk_size[NOC_SCATTER_WRITE_ATOMIC_INC_FUSED_WRITE_CHUNKS - 1];  // the last write chunk's is implicit
    uint16_t val;
    bool flush;
    NocUnicastScatterAtomicIncFusedCommandHeader(std::initializer_list<uint64_t> noc_addresses,
                                                 uint64_t semaphore_noc_address,
                                                 std::initializer_list<uint16_t> chunk_sizes, uint16_t val,
                                                 bool flush = true)
        : noc_address{}, semaphore_noc_address(semaphore_noc_address), chunk_size{}, val(val), flush(flush) {
        size_t i = 0;
        for (uint64_t a : noc_addresses) noc_address[i++ % NOC_SCATTER_WRITE_ATOMIC_INC_FUSED_WRITE_CHUNKS] = a;
        i = 0;
        for (uint16_t c : chunk_sizes) chunk_size[i++ % (NOC_SCATTER_WRITE_ATOMIC_INC_FUSED_WRITE_CHUNKS - 1)] = c;
    }
};
static_assert(sizeof(NocUnicastScatterAtomicIncFusedCommandHeader) == 32);

// The scatter command as the header stores it (a plain struct, so the command union stays trivial).
struct NocScatterWriteFields {
    uint64_t noc_address[NOC_SCATTER_WRITE_MAX_CHUNKS];
    uint16_t chunk_size[NOC_SCATTER_WRITE_MAX_CHUNKS - 1];
    uint8_t chunk_count;
    uint8_t chunk_encoding;
};
static_assert(sizeof(NocScatterWriteFields) == 40);
// 1D chip multicast: the chips start_distance_in_hops .. start + range_hops - 1 along the line.
struct MulticastRoutingCommandHeader {
    uint8_t start_distance_in_hops;
    uint8_t range_hops;
};
static_assert(sizeof(MulticastRoutingCommandHeader) == 2);
static_assert(sizeof(NocUnicastCommandHeader) == 8);
static_assert(sizeof(NocUnicastInlineWriteCommandHeader) == 16);
static_assert(sizeof(NocUnicastAtomicIncCommandHeader) == 16);
static_assert(sizeof(NocUnicastAtomicIncFusedCommandHeader) == 24);

// 40 bytes, as the real union (its largest member is the scatter command).
union NocCommandFields {
    NocUnicastCommandHeader unicast_write;
    NocScatterWriteFields unicast_scatter_write;
    NocUnicastInlineWriteCommandHeader unicast_inline_write;
    NocUnicastAtomicIncCommandHeader unicast_seminc;
    NocUnicastAtomicIncFusedCommandHeader unicast_seminc_fused;
    uint8_t raw[40];
};
static_assert(sizeof(NocCommandFields) == 40);

template <typename Derived>
struct PacketHeaderBase {
private:
    PacketHeaderBase() = default;
    friend Derived;

public:
    NocCommandFields command_fields;
    uint16_t payload_size_bytes;
    NocSendType noc_send_type;
    uint8_t src_ch_id;

    size_t get_payload_size_excluding_header() volatile const { return this->payload_size_bytes; }
    size_t get_payload_size_including_header() volatile const {
        return get_payload_size_excluding_header() + sizeof(Derived);
    }
    NocSendType get_noc_send_type() volatile const { return this->noc_send_type; }
    void set_payload_size_bytes(uint16_t size) volatile { this->payload_size_bytes = size; }
    void set_src_ch_id(uint8_t ch_id) volatile { this->src_ch_id = ch_id; }

    // Builders on a header in L1 (volatile), the form the fabric wrappers use.
    volatile Derived* to_chip_unicast(uint8_t distance_in_hops) volatile {
        static_cast<volatile Derived*>(this)->to_chip_unicast_impl(distance_in_hops);
        return static_cast<volatile Derived*>(this);
    }
    volatile Derived* to_chip_multicast(const MulticastRoutingCommandHeader& mcast) volatile {
        static_cast<volatile Derived*>(this)->to_chip_multicast_impl(mcast);
        return static_cast<volatile Derived*>(this);
    }
    // The payload is cut across the command's addresses: chunk_size[i] bytes to address i, the rest to the last.
    volatile Derived* to_noc_unicast_scatter_write(const NocUnicastScatterCommandHeader& cmd,
                                                   size_t payload_size_bytes) volatile {
        this->noc_send_type = NOC_UNICAST_SCATTER_WRITE;
        for (size_t i = 0; i < NOC_SCATTER_WRITE_MAX_CHUNKS; ++i) {
            this->command_fields.unicast_scatter_write.noc_address[i] = cmd.noc_address[i];
        }
        for (size_t i = 0; i + 1 < NOC_SCATTER_WRITE_MAX_CHUNKS; ++i) {
            this->command_fields.unicast_scatter_write.chunk_size[i] = cmd.chunk_size[i];
        }
        this->command_fields.unicast_scatter_write.chunk_count = cmd.chunk_count;
        this->command_fields.unicast_scatter_write.chunk_encoding =
            expand_encoding_to_all_chunks(CHUNK_ENCODING_UNICAST_WRITE);
        this->payload_size_bytes = static_cast<uint16_t>(payload_size_bytes);
        return static_cast<volatile Derived*>(this);
    }
    // A scatter write whose chunks 0 and 1 are writes (chunk 1 takes what chunk 0 leaves of the payload) and
    // chunk 2 increments the semaphore by `val`.
    volatile Derived* to_noc_fused_unicast_scatter_write_atomic_inc(
        const NocUnicastScatterAtomicIncFusedCommandHeader& cmd, size_t payload_size_bytes) volatile {
        constexpr uint8_t writes = NOC_SCATTER_WRITE_ATOMIC_INC_FUSED_WRITE_CHUNKS;
        this->noc_send_type = NOC_UNICAST_SCATTER_WRITE;
        auto& fields = this->command_fields.unicast_scatter_write;
        fields.chunk_count = writes + 1;
        uint8_t encoding = 0;
        size_t leading = 0;
        for (uint8_t i = 0; i < writes; ++i) {
            fields.noc_address[i] = cmd.noc_address[i];
            set_chunk_encoding(encoding, CHUNK_ENCODING_UNICAST_WRITE, i);
            if (i + 1 < writes) {
                fields.chunk_size[i] = cmd.chunk_size[i];
                leading += cmd.chunk_size[i];
            }
        }
        fields.chunk_size[writes - 1] = static_cast<uint16_t>(payload_size_bytes - leading);
        fields.noc_address[writes] = cmd.semaphore_noc_address;
        fields.chunk_size[writes] = cmd.val;
        set_chunk_encoding(encoding, cmd.flush ? CHUNK_ENCODING_SEMINC_FLUSH : CHUNK_ENCODING_SEMINC_NO_FLUSH, writes);
        for (size_t i = writes + 1; i < NOC_SCATTER_WRITE_MAX_CHUNKS; ++i) fields.noc_address[i] = 0;
        fields.chunk_encoding = encoding;
        this->payload_size_bytes = static_cast<uint16_t>(payload_size_bytes);
        return static_cast<volatile Derived*>(this);
    }
    volatile Derived* to_noc_unicast_write(const NocUnicastCommandHeader& cmd, size_t payload_size_bytes) volatile {
        this->noc_send_type = NOC_UNICAST_WRITE;
        this->command_fields.unicast_write.noc_address = cmd.noc_address;
        this->payload_size_bytes = static_cast<uint16_t>(payload_size_bytes);
        return static_cast<volatile Derived*>(this);
    }
    volatile Derived* to_noc_unicast_inline_write(const NocUnicastInlineWriteCommandHeader& cmd) volatile {
        this->noc_send_type = NOC_UNICAST_INLINE_WRITE;
        this->command_fields.unicast_inline_write.noc_address = cmd.noc_address;
        this->command_fields.unicast_inline_write.value = cmd.value;
        this->payload_size_bytes = 0;
        return static_cast<volatile Derived*>(this);
    }
    volatile Derived* to_noc_unicast_atomic_inc(const NocUnicastAtomicIncCommandHeader& cmd) volatile {
        this->noc_send_type = NOC_UNICAST_ATOMIC_INC;
        this->command_fields.unicast_seminc.noc_address = cmd.noc_address;
        this->command_fields.unicast_seminc.val = cmd.val;
        this->command_fields.unicast_seminc.flush = cmd.flush;
        this->payload_size_bytes = 0;
        return static_cast<volatile Derived*>(this);
    }
    volatile Derived* to_noc_fused_unicast_write_atomic_inc(const NocUnicastAtomicIncFusedCommandHeader& cmd,
                                                            size_t payload_size_bytes) volatile {
        this->noc_send_type = NOC_FUSED_UNICAST_ATOMIC_INC;
        this->command_fields.unicast_seminc_fused.noc_address = cmd.noc_address;
        this->command_fields.unicast_seminc_fused.semaphore_noc_address = cmd.semaphore_noc_address;
        this->command_fields.unicast_seminc_fused.val = cmd.val;
        this->command_fields.unicast_seminc_fused.flush = cmd.flush;
        this->payload_size_bytes = static_cast<uint16_t>(payload_size_bytes);
        return static_cast<volatile Derived*>(this);
    }
    void set_fused_unicast_write_atomic_inc_write_noc_address(uint64_t noc_address) volatile {
        this->command_fields.unicast_seminc_fused.noc_address = noc_address;
    }
    void set_fused_unicast_write_atomic_inc_value(uint32_t val) volatile {
        this->command_fields.unicast_seminc_fused.val = val;
    }

    // The same builders on a header object (non-volatile), returning a reference.
    Derived& to_chip_unicast(uint8_t distance_in_hops) {
        as_volatile()->to_chip_unicast(distance_in_hops);
        return derived();
    }
    Derived& to_chip_multicast(const MulticastRoutingCommandHeader& mcast) {
        as_volatile()->to_chip_multicast(mcast);
        return derived();
    }
    Derived& to_noc_unicast_write(const NocUnicastCommandHeader& cmd, size_t payload_size_bytes) {
        as_volatile()->to_noc_unicast_write(cmd, payload_size_bytes);
        return derived();
    }
    Derived& to_noc_unicast_scatter_write(const NocUnicastScatterCommandHeader& cmd, size_t payload_size_bytes) {
        as_volatile()->to_noc_unicast_scatter_write(cmd, payload_size_bytes);
        return derived();
    }
    Derived& to_noc_unicast_inline_write(const NocUnicastInlineWriteCommandHeader& cmd) {
        as_volatile()->to_noc_unicast_inline_write(cmd);
        return derived();
    }
    Derived& to_noc_unicast_atomic_inc(const NocUnicastAtomicIncCommandHeader& cmd) {
        as_volatile()->to_noc_unicast_atomic_inc(cmd);
        return derived();
    }
    Derived& to_noc_fused_unicast_write_atomic_inc(const NocUnicastAtomicIncFusedCommandHeader& cmd,
                                                   size_t payload_size_bytes) {
        as_volatile()->to_noc_fused_unicast_write_atomic_inc(cmd, payload_size_bytes);
        return derived();
    }

private:
    volatile PacketHeaderBase* as_volatile() { return this; }
    Derived& derived() { return *static_cast<Derived*>(this); }
};

// 1D header: 44 B of command + 8 B of routing fields, padded to 64 B.
struct LowLatencyRoutingFields {
    uint32_t value;  // hop count, a multicast's first hop, or a sparse multicast's hop mask (emulator encoding)
    uint32_t route_buffer[1];  // [0]: destination chip id + 1 when routed by chip id, MULTICAST | range,
                               // SPARSE_MULTICAST, or 0
    static constexpr uint32_t MULTICAST = 0x80000000u;
    static constexpr uint32_t SPARSE_MULTICAST = 0x40000000u;
} __attribute__((packed));

struct LowLatencyPacketHeader : public PacketHeaderBase<LowLatencyPacketHeader> {
    LowLatencyRoutingFields routing_fields;
    uint8_t padding0[12];

    void to_chip_unicast_impl(uint8_t distance_in_hops) volatile {
        this->routing_fields.value = distance_in_hops;
        this->routing_fields.route_buffer[0] = 0;
    }
    void to_chip_multicast_impl(const MulticastRoutingCommandHeader& mcast) volatile {
        this->routing_fields.value = mcast.start_distance_in_hops;
        this->routing_fields.route_buffer[0] = LowLatencyRoutingFields::MULTICAST | mcast.range_hops;
    }
};
static_assert(sizeof(LowLatencyPacketHeader) == 64, "the 1D header is 64 B as in tt-metal 0.81.1");

// 2D header: the destination (mesh, chip) travels in the header; 96 B.
struct LowLatencyMeshRoutingFields {
    uint32_t value;
};

template <int RouteBufferSize = 36>
struct HybridMeshPacketHeaderT : PacketHeaderBase<HybridMeshPacketHeaderT<RouteBufferSize>> {
    LowLatencyMeshRoutingFields routing_fields;
    uint8_t route_buffer[RouteBufferSize];
    union {
        struct {
            uint16_t dst_start_chip_id;
            uint16_t dst_start_mesh_id;
        };
        uint32_t dst_start_node_id;
    };
    union {
        uint16_t mcast_params[4];
        uint64_t mcast_params_64;
    };

    // 2D headers route by destination ids (fabric_set_unicast_route); the hop count is unused.
    void to_chip_unicast_impl(uint8_t) volatile {}
    // 2D multicast routes (fabric_set_mcast_route) are not emulated.
    void to_chip_multicast_impl(const MulticastRoutingCommandHeader&) volatile {
        ttnn_moe_emu::fail("to_chip_multicast on a 2D (HybridMesh) packet header: 2D multicast is not emulated");
    }
} __attribute__((packed, aligned(16)));

using HybridMeshPacketHeader = HybridMeshPacketHeaderT<>;
static_assert(sizeof(HybridMeshPacketHeader) == 96, "the 2D header is 96 B as in tt-metal 0.81.1");

// The unified-data-movement variant of the 2D header. Declared for helpers that test for it; no
// emulated build selects it as PACKET_HEADER_TYPE.
struct UDMHybridMeshPacketHeader : HybridMeshPacketHeader {};

}  // namespace tt::tt_fabric

// The header type of this build, as tt-metal chooses it from ROUTING_MODE.
#if !defined(ROUTING_MODE)
#define PACKET_HEADER_TYPE tt::tt_fabric::LowLatencyPacketHeader
#define ROUTING_FIELDS_TYPE tt::tt_fabric::LowLatencyRoutingFields
#elif (ROUTING_MODE & ROUTING_MODE_1D) != 0
#if (ROUTING_MODE & ROUTING_MODE_LOW_LATENCY) == 0
#error "the emulator's fabric implements the low-latency 1D header only"
#endif
#define PACKET_HEADER_TYPE tt::tt_fabric::LowLatencyPacketHeader
#define ROUTING_FIELDS_TYPE tt::tt_fabric::LowLatencyRoutingFields
#elif (ROUTING_MODE & ROUTING_MODE_2D) != 0
#if (ROUTING_MODE & ROUTING_MODE_LOW_LATENCY) == 0
#error "the emulator's fabric implements the low-latency 2D header only"
#endif
#define PACKET_HEADER_TYPE tt::tt_fabric::HybridMeshPacketHeader
#define ROUTING_FIELDS_TYPE tt::tt_fabric::LowLatencyMeshRoutingFields
#else
#error "unsupported ROUTING_MODE"
#endif

namespace ttnn_moe_emu {

// Decodes a header in L1 into the ABI form the runtime delivers.
template <typename Header>
FabricPacket fabric_packet_of(const volatile Header& h) {
    using namespace tt::tt_fabric;
    FabricPacket p{};
    p.noc_send_type = h.noc_send_type;
    p.payload_size = h.payload_size_bytes;
    switch (h.noc_send_type) {
        case NOC_UNICAST_WRITE:
            p.noc_address = h.command_fields.unicast_write.noc_address;
            break;
        case NOC_UNICAST_INLINE_WRITE:
            p.noc_address = h.command_fields.unicast_inline_write.noc_address;
            p.value = h.command_fields.unicast_inline_write.value;
            break;
        case NOC_UNICAST_ATOMIC_INC:
            p.noc_address = h.command_fields.unicast_seminc.noc_address;
            p.value = h.command_fields.unicast_seminc.val;
            break;
        case NOC_FUSED_UNICAST_ATOMIC_INC:
            p.noc_address = h.command_fields.unicast_seminc_fused.noc_address;
            p.semaphore_noc_address = h.command_fields.unicast_seminc_fused.semaphore_noc_address;
            p.value = h.command_fields.unicast_seminc_fused.val;
            break;
        case NOC_UNICAST_SCATTER_WRITE:
            for (size_t i = 0; i < NOC_SCATTER_WRITE_MAX_CHUNKS; ++i) {
                p.scatter_noc_address[i] = h.command_fields.unicast_scatter_write.noc_address[i];
            }
            for (size_t i = 0; i + 1 < NOC_SCATTER_WRITE_MAX_CHUNKS; ++i) {
                p.scatter_chunk_size[i] = h.command_fields.unicast_scatter_write.chunk_size[i];
            }
            p.scatter_chunk_count = h.command_fields.unicast_scatter_write.chunk_count;
            p.scatter_chunk_encoding = h.command_fields.unicast_scatter_write.chunk_encoding;
            break;
        default:
            break;  // the runtime rejects the type by number
    }
    if constexpr (std::is_same_v<Header, tt::tt_fabric::LowLatencyPacketHeader>) {
        const uint32_t route_word = h.routing_fields.route_buffer[0];
        p.hops = h.routing_fields.value;
        if (route_word & LowLatencyRoutingFields::MULTICAST) {
            p.route = FabricRoute::LineMulticast;
            p.range_hops = route_word & ~LowLatencyRoutingFields::MULTICAST;
        } else if (route_word & LowLatencyRoutingFields::SPARSE_MULTICAST) {
            p.route = FabricRoute::LineSparseMulticast;
        } else {
            p.route = route_word ? FabricRoute::LineDevice : FabricRoute::Hops;
            p.dst_chip_id = route_word ? route_word - 1 : 0;
        }
    } else {
        p.route = FabricRoute::MeshDevice;
        p.dst_chip_id = h.dst_start_chip_id;
        p.dst_mesh_id = h.dst_start_mesh_id;
    }
    return p;
}

}  // namespace ttnn_moe_emu
