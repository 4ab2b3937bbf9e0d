#include "emu/fabric/fabric_run.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "emu/device_params.hpp"
#include "emu/error.hpp"
#include "emu/fabric/connection_args.hpp"
#include "emu/l1_pool.hpp"
#include "emu/poison.hpp"
#include "emu/run_state.hpp"
#include "emu/services.hpp"

namespace ttnn_moe::emu::fabric {

using services::fail;
using ttnn_moe_emu::FABRIC_BUFFER_SLOTS;
using ttnn_moe_emu::FABRIC_MAX_PAYLOAD_BYTES;
using ttnn_moe_emu::FabricPacket;
using ttnn_moe_emu::FabricRoute;

namespace {

// tt::tt_fabric::NocSendType values the emulator delivers.
constexpr uint32_t NOC_UNICAST_WRITE = 0;
constexpr uint32_t NOC_UNICAST_INLINE_WRITE = 1;
constexpr uint32_t NOC_UNICAST_ATOMIC_INC = 2;
constexpr uint32_t NOC_FUSED_UNICAST_ATOMIC_INC = 3;
constexpr uint32_t NOC_UNICAST_SCATTER_WRITE = 4;
constexpr uint32_t NOC_SCATTER_WRITE_MAX_CHUNKS = 4;
// What a scatter chunk does (tt::tt_fabric::NocScatterWriteChunkEncoding, 2 bits per chunk).
constexpr uint32_t CHUNK_ENCODING_UNICAST_WRITE = 1;
constexpr uint32_t CHUNK_ENCODING_SEMINC_NO_FLUSH = 2;
constexpr uint32_t CHUNK_ENCODING_SEMINC_FLUSH = 3;

uint32_t chunk_encoding(const FabricPacket& header, uint32_t chunk) {
    return (header.scatter_chunk_encoding >> (2 * chunk)) & 3u;
}
bool chunk_increments(const FabricPacket& header, uint32_t chunk) {
    const uint32_t e = chunk_encoding(header, chunk);
    return e == CHUNK_ENCODING_SEMINC_NO_FLUSH || e == CHUNK_ENCODING_SEMINC_FLUSH;
}
// The last chunk that writes takes the payload its earlier write chunks leave.
uint32_t last_write_chunk(const FabricPacket& header) {
    uint32_t last = 0;
    for (uint32_t i = 0; i < header.scatter_chunk_count; ++i) {
        if (!chunk_increments(header, i)) last = i;
    }
    return last;
}
// What a packet delivers past the bytes its sender wrote into the buffer slot.
constexpr uint8_t kStaleSlotByte = 0xA5;

std::string hex(uint64_t v) {
    std::ostringstream o;
    o << "0x" << std::hex << v;
    return o.str();
}

std::string owner_of(const Instance& inst) {
    return "kernel " + inst.name + " [" + kernel_kind_name(inst.kind) + "] on device " +
           std::to_string(inst.core->device->id()) + " core (" + std::to_string(inst.core->lx) + ", " +
           std::to_string(inst.core->ly) + ")";
}

// A local L1 address of the running core (raw offset or host address) -> L1 offset.
uint32_t local_l1_offset(const CoreState& core, uint64_t addr, uint32_t size, const char* what) {
    uint64_t offset = addr;
    if (addr >= core.l1_host && addr < static_cast<uint64_t>(core.l1_host) + params::L1_SIZE)
        offset = addr - core.l1_host;
    if (offset + size > params::L1_SIZE) {
        fail(std::string(what) + ": L1 address " + hex(addr) + " (+" + std::to_string(size) +
             " bytes) is outside this core's L1");
    }
    return static_cast<uint32_t>(offset);
}

std::string route_text(const MeshFabric& mesh, const std::vector<Hop>& hops) {
    std::string s = mesh.chip_name(hops.front().from);
    for (const Hop& h : hops) s += " -> " + mesh.chip_name(h.to);
    return s;
}

// A scatter command names 1 .. 4 chunks, each a write or a semaphore increment, at least one a write, and its
// leading write chunks leave a last one to the payload.
void check_scatter(const Connection& c, const FabricPacket& header) {
    const uint32_t count = header.scatter_chunk_count;
    if (count == 0 || count > NOC_SCATTER_WRITE_MAX_CHUNKS) {
        fail("fabric send on " + c.name() + ": a scatter write of " + std::to_string(count) + " chunks (1 to " +
             std::to_string(NOC_SCATTER_WRITE_MAX_CHUNKS) + " are possible)");
    }
    bool any_write = false;
    for (uint32_t i = 0; i < count; ++i) {
        const uint32_t e = chunk_encoding(header, i);
        if (e != CHUNK_ENCODING_UNICAST_WRITE && !chunk_increments(header, i)) {
            fail("fabric send on " + c.name() + ": scatter chunk " + std::to_string(i) + " has encoding " +
                 std::to_string(e) + " (a write or a semaphore increment is emulated)");
        }
        any_write = any_write || e == CHUNK_ENCODING_UNICAST_WRITE;
    }
    if (!any_write) fail("fabric send on " + c.name() + ": a scatter write none of whose chunks writes");
    uint32_t leading = 0;
    const uint32_t last = last_write_chunk(header);
    for (uint32_t i = 0; i < last; ++i) {
        if (!chunk_increments(header, i)) leading += header.scatter_chunk_size[i];
    }
    if (leading > header.payload_size) {
        fail("fabric send on " + c.name() + ": scatter chunks of " + std::to_string(leading) +
             " bytes before the last one exceed the payload of " + std::to_string(header.payload_size) + " bytes");
    }
}

}  // namespace

std::string Connection::name() const {
    return "link " + std::to_string(link) + " " + direction_name(direction) + " from " + mesh->chip_name(src_chip) +
           " towards " + mesh->chip_name(target_chip);
}

FabricRun::FabricRun(Run& run) : run_(run) {}

// ---------------------------------------------------------------- kernel side

const MeshFabric& FabricRun::mesh_of(const Instance& inst, const char* what) {
    const auto& mesh = inst.core->device->fabric();
    if (!mesh) {
        fail(std::string(what) + ": device " + std::to_string(inst.core->device->id()) +
             " is not part of a mesh, so it has no fabric");
    }
    return *mesh;
}

Connection& FabricRun::connection(uint32_t conn, const char* what) {
    if (conn >= connections_.size()) {
        fail(std::string(what) + " on a fabric sender that was not built with build_from_args");
    }
    return *connections_[conn];
}

uint32_t FabricRun::connect(Instance& inst, uint32_t channel_arg, uint32_t teardown_sem_id,
                            uint32_t buffer_index_sem_id) {
    const char* what = "WorkerToFabricEdmSender::build_from_args";
    const MeshFabric& mesh = mesh_of(inst, what);
    const auto channel = decode_channel_arg(channel_arg);
    if (!channel) {
        fail(std::string(what) + ": runtime arg " + hex(channel_arg) +
             " is not a fabric channel made by setup_fabric_connection (wrong arg_idx?)");
    }
    const uint32_t chip = inst.core->device->id();
    if (channel->src_chip != chip) {
        fail(std::string(what) + ": the connection args were made for chip " + std::to_string(channel->src_chip) +
             " but the kernel runs on chip " + std::to_string(chip));
    }
    if (channel->link >= mesh.num_links()) {
        fail(std::string(what) + ": link " + std::to_string(channel->link) + " but the mesh has " +
             std::to_string(mesh.num_links()) + " links per direction");
    }
    if (teardown_sem_id >= params::L1_NUM_SEMAPHORES || buffer_index_sem_id >= params::L1_NUM_SEMAPHORES ||
        teardown_sem_id == buffer_index_sem_id) {
        fail(std::string(what) + ": bad semaphore ids " + std::to_string(teardown_sem_id) + ", " +
             std::to_string(buffer_index_sem_id));
    }
    std::string error;
    const auto direction = mesh.connection_direction(chip, channel->dst_chip, error);
    if (!direction) fail(std::string(what) + ": " + error);
    if (!seeded_) {
        rng_state_ = mesh.seed();
        seeded_ = true;
    }
    auto c = std::make_unique<Connection>();
    c->owner = owner_of(inst);
    c->instance = &inst;
    c->device_index = inst.core->device_index;
    c->mesh = &mesh;
    c->src_chip = chip;
    c->target_chip = channel->dst_chip;
    c->link = channel->link;
    c->mux_client = channel->mux_client;
    c->direction = *direction;
    connections_.push_back(std::move(c));
    return static_cast<uint32_t>(connections_.size() - 1);
}

void FabricRun::open_start(uint32_t conn) {
    Connection& c = connection(conn, "open_start");
    if (c.state != Connection::State::Closed) fail("open_start on fabric " + c.name() + ", which is already open");
    // One worker at a time per EDM worker channel (device, direction, link); the clients of a fabric mux
    // share the mux's channel.
    for (const auto& other : connections_) {
        if (other.get() != &c && other->state != Connection::State::Closed && other->device_index == c.device_index &&
            other->direction == c.direction && other->link == c.link && !(c.mux_client && other->mux_client)) {
            fail("open_start on fabric " + c.name() + ": the channel is held by " + other->owner +
                 " (one worker per link and direction at a time)");
        }
    }
    c.state = Connection::State::Opening;
}

void FabricRun::open_finish(uint32_t conn) {
    Connection& c = connection(conn, "open_finish");
    if (c.state != Connection::State::Opening) fail("open_finish on fabric " + c.name() + " without open_start");
    c.state = Connection::State::Open;
}

void FabricRun::close_start(uint32_t conn) {
    Connection& c = connection(conn, "close_start");
    if (c.state != Connection::State::Open) fail("close_start on fabric " + c.name() + ", which is not open");
    if (c.pending_payload) fail("close on fabric " + c.name() + " with a payload sent but not its header");
    c.state = Connection::State::Closing;
}

void FabricRun::close_finish(uint32_t conn) {
    Connection& c = connection(conn, "close_finish");
    if (c.state != Connection::State::Closing) fail("close_finish on fabric " + c.name() + " without close_start");
    c.state = Connection::State::Closed;
}

uint32_t FabricRun::free_slots(uint32_t conn) {
    const Connection& c = connection(conn, "get_num_free_write_slots");
    return FABRIC_BUFFER_SLOTS - static_cast<uint32_t>(std::min<size_t>(c.in_flight.size(), FABRIC_BUFFER_SLOTS));
}

bool FabricRun::slot_free(uint32_t conn) const {
    return connections_[conn]->in_flight.size() < FABRIC_BUFFER_SLOTS;
}

void FabricRun::send_payload(Instance& inst, uint32_t conn, uint32_t src_l1_addr, uint32_t size) {
    Connection& c = connection(conn, "send_payload_without_header");
    if (c.state != Connection::State::Open) fail("fabric send on " + c.name() + ", which is not open (open() first)");
    if (c.pending_payload) {
        fail("fabric send on " + c.name() + ": a second payload before the header of the first");
    }
    if (size > FABRIC_MAX_PAYLOAD_BYTES) {
        fail("fabric send on " + c.name() + ": payload of " + std::to_string(size) + " bytes exceeds the " +
             std::to_string(FABRIC_MAX_PAYLOAD_BYTES) + "-byte packet limit (split it into packets)");
    }
    const uint32_t offset = local_l1_offset(*inst.core, src_l1_addr, size, "fabric payload source");
    services::check_no_pending_read(offset, size, "fabric send of a payload from L1");
    services::check_written_l1(*inst.core, offset, size, "fabric send of a payload from L1");
    c.payload.assign(inst.core->l1 + offset, inst.core->l1 + offset + size);
    c.pending_payload = true;
}

void FabricRun::send_header(Instance& inst, uint32_t conn, const FabricPacket& header) {
    Connection& c = connection(conn, "fabric send");
    const MeshFabric& mesh = *c.mesh;
    if (c.state != Connection::State::Open) fail("fabric send on " + c.name() + ", which is not open (open() first)");
    if (c.in_flight.size() >= FABRIC_BUFFER_SLOTS) {
        fail("fabric send on " + c.name() + ": all " + std::to_string(FABRIC_BUFFER_SLOTS) +
             " buffer slots are in flight (wait_for_empty_write_slot() first)");
    }
    Packet p;
    p.header = header;
    if (header.inline_payload_bytes > 0) {
        if (c.pending_payload)
            fail("fabric send on " + c.name() + ": a payload was sent both before and with the header");
        if (header.inline_payload_bytes > FABRIC_MAX_PAYLOAD_BYTES) {
            fail("fabric send on " + c.name() + ": payload of " + std::to_string(header.inline_payload_bytes) +
                 " bytes exceeds the " + std::to_string(FABRIC_MAX_PAYLOAD_BYTES) + "-byte packet limit");
        }
        const uint32_t offset =
            local_l1_offset(*inst.core, header.inline_payload_l1, header.inline_payload_bytes, "fabric payload source");
        services::check_written_l1(*inst.core, offset, header.inline_payload_bytes, "fabric send of a payload from L1");
        p.payload.assign(inst.core->l1 + offset, inst.core->l1 + offset + header.inline_payload_bytes);
    } else if (c.pending_payload) {
        p.payload = std::move(c.payload);
        c.payload.clear();
        c.pending_payload = false;
    }
    const uint32_t type = header.noc_send_type;
    const bool writes =
        type == NOC_UNICAST_WRITE || type == NOC_FUSED_UNICAST_ATOMIC_INC || type == NOC_UNICAST_SCATTER_WRITE;
    if (!writes && type != NOC_UNICAST_ATOMIC_INC && type != NOC_UNICAST_INLINE_WRITE) {
        fail("fabric send on " + c.name() + ": NocSendType " + std::to_string(type) +
             " is not emulated (unicast write, inline write, atomic inc, fused write + inc and scatter write are)");
    }
    if (type == NOC_UNICAST_SCATTER_WRITE) check_scatter(c, header);
    // The router forwards the header's payload size from the buffer slot. tt-metal's CCL helpers round it up
    // to the L1 alignment past the bytes they sent; the rest of the slot holds stale bytes (a fill pattern here).
    const size_t sent = p.payload.size();
    p.sent_bytes = sent;
    const size_t rounded = (sent + params::NOC_L1_ALIGNMENT - 1) / params::NOC_L1_ALIGNMENT * params::NOC_L1_ALIGNMENT;
    if (writes && header.payload_size > sent && header.payload_size <= rounded) {
        p.payload.resize(header.payload_size, kStaleSlotByte);
    } else if (writes && header.payload_size != sent) {
        fail("fabric send on " + c.name() + ": the header says " + std::to_string(header.payload_size) +
             " payload bytes but " + std::to_string(sent) + " were sent");
    }
    if (!writes && !p.payload.empty()) {
        fail("fabric send on " + c.name() + ": a payload of " + std::to_string(p.payload.size()) + " bytes with a " +
             send_type_name(type) + " header, which carries none");
    }

    std::string error;
    std::vector<Hop> hops;
    size_t first_destination_hop = 0;  // hops[i].to is a destination for i >= this (all but a multicast's last)
    const bool mesh_2d = mesh.topology() == Topology::Mesh;
    switch (header.route) {
        case FabricRoute::Hops:
        case FabricRoute::LineDevice:
            if (mesh_2d) fail("fabric send on " + c.name() + ": a 1D (hop) route on a 2D Mesh fabric");
            hops = header.route == FabricRoute::Hops
                       ? mesh.route_hops(c.src_chip, c.direction, header.hops, error)
                       : mesh.route_to_line_chip(c.src_chip, c.direction, header.dst_chip_id, error);
            first_destination_hop = hops.empty() ? 0 : hops.size() - 1;
            break;
        case FabricRoute::LineMulticast:
            if (mesh_2d) fail("fabric send on " + c.name() + ": a 1D multicast route on a 2D Mesh fabric");
            if (header.hops == 0 || header.range_hops == 0) {
                error = "a multicast must start at least one hop away and cover at least one chip (start " +
                        std::to_string(header.hops) + ", range " + std::to_string(header.range_hops) + ")";
            } else {
                hops = mesh.route_hops(c.src_chip, c.direction, header.hops + header.range_hops - 1, error);
                first_destination_hop = header.hops - 1;
            }
            break;
        case FabricRoute::LineSparseMulticast: {
            if (mesh_2d) fail("fabric send on " + c.name() + ": a 1D sparse multicast route on a 2D Mesh fabric");
            uint32_t farthest = 0;
            for (uint32_t bit = 0; bit < 32; ++bit) {
                if (header.hops & (1u << bit)) farthest = bit + 1;
            }
            hops = mesh.route_hops(c.src_chip, c.direction, farthest, error);
            break;
        }
        case FabricRoute::MeshDevice:
            if (!mesh_2d) fail("fabric send on " + c.name() + ": a 2D (mesh) route on a 1D fabric");
            if (header.dst_mesh_id != mesh.mesh_id()) {
                error = "destination mesh " + std::to_string(header.dst_mesh_id) + " (only mesh " +
                        std::to_string(mesh.mesh_id()) + " exists; routing between meshes is not emulated)";
            } else {
                hops = mesh.route_2d(c.src_chip, c.direction, header.dst_chip_id, error);
                first_destination_hop = hops.empty() ? 0 : hops.size() - 1;
            }
            break;
        default:
            error = "unknown route kind";
            break;
    }
    if (hops.empty()) fail("fabric route error on " + c.name() + ": " + error);
    p.route = route_text(mesh, hops);
    for (size_t i = first_destination_hop; i < hops.size(); ++i) {
        if (header.route == FabricRoute::LineSparseMulticast && !(header.hops & (1u << i))) continue;
        const uint32_t chip = hops[i].to;
        const int dst_index = run_.device_index_of(chip);
        if (dst_index < 0) {
            fail("fabric send on " + c.name() + " to " + mesh.chip_name(chip) +
                 ": that device runs no program in this run (mesh programs that talk over the fabric must run "
                 "together)");
        }
        p.dst_chips.push_back(chip);
        p.dst_device_indices.push_back(static_cast<size_t>(dst_index));
    }

    FabricTraffic& traffic = run_.counters_of(*inst.core).fabric;
    const uint64_t bytes = p.payload.size();
    for (const uint32_t chip : p.dst_chips) {
        traffic.flows[{c.src_chip, chip, c.link, inst.core->lx, inst.core->ly, type}].add(1, bytes);
    }
    for (const Hop& h : hops) traffic.links[{h.from, h.to, c.link}].add(1, bytes);

    std::vector<uint32_t> chips{c.src_chip};
    for (const Hop& h : hops) chips.push_back(h.to);
    p.arrival_cycle = run_.time().fabric_send(inst, conn, chips, c.link, static_cast<uint32_t>(bytes), mesh_2d);

    const uint64_t delay = next_random() % (static_cast<uint64_t>(mesh.max_delay()) + 1);
    p.ready_pass = std::max(c.last_ready_pass, pass_ + delay);
    c.last_ready_pass = p.ready_pass;
    c.in_flight.push_back(std::move(p));
}

uint32_t FabricRun::next_hop_direction(Instance& inst, uint32_t dst_mesh_id, uint32_t dst_chip_id) {
    const MeshFabric& mesh = mesh_of(inst, "get_next_hop_router_direction");
    const uint32_t chip = inst.core->device->id();
    std::string error;
    if (dst_mesh_id != mesh.mesh_id())
        fail("get_next_hop_router_direction: mesh " + std::to_string(dst_mesh_id) + " does not exist");
    const auto d = mesh.connection_direction(chip, dst_chip_id, error);
    if (!d) fail("get_next_hop_router_direction: " + error);
    return static_cast<uint32_t>(*d);
}

uint32_t FabricRun::channel_direction(Instance& inst, uint32_t channel_arg) {
    const MeshFabric& mesh = mesh_of(inst, "get_router_direction");
    const auto channel = decode_channel_arg(channel_arg);
    if (!channel) fail("get_router_direction: " + hex(channel_arg) + " is not a fabric channel");
    std::string error;
    const auto d = mesh.connection_direction(channel->src_chip, channel->dst_chip, error);
    if (!d) fail("get_router_direction: " + error);
    return static_cast<uint32_t>(*d);
}

uint64_t FabricRun::next_random() {
    // splitmix64: the same sequence on every platform (std:: distributions are not).
    uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// ---------------------------------------------------------------- delivery

bool FabricRun::advance(bool stalled) {
    ++pass_;
    if (stalled) {
        // Nothing else can happen before the next packet lands: jump there.
        uint64_t next = UINT64_MAX;
        for (const auto& c : connections_) {
            if (!c->in_flight.empty()) next = std::min(next, c->in_flight.front().ready_pass);
        }
        if (next != UINT64_MAX) pass_ = std::max(pass_, next);
    }
    bool delivered = false;
    for (const auto& c : connections_) {
        while (!c->in_flight.empty() && c->in_flight.front().ready_pass <= pass_) {
            deliver(*c, c->in_flight.front());
            c->in_flight.pop_front();
            delivered = true;
        }
    }
    return delivered;
}

void FabricRun::deliver(const Connection& c, const Packet& p) {
    for (const size_t dst_device_index : p.dst_device_indices) deliver_to(c, p, dst_device_index);
}

void FabricRun::deliver_to(const Connection& c, const Packet& p, size_t dst_device_index) {
    Device& dev = run_.device(dst_device_index);
    auto error = [&](const std::string& why) {
        throw EmuError(c.owner + ": fabric packet (" + send_type_name(p.header.noc_send_type) + ") on " + c.name() +
                       ", route " + p.route + ": " + why);
    };
    // The destination bytes of a NOC address on the destination device.
    // The destination bytes of a NOC address on the destination device; its first `written` bytes are
    // recorded as written (poison mode).
    auto target = [&](uint64_t noc_addr, uint32_t size, bool semaphore, size_t written) -> uint8_t* {
        const uint32_t x = static_cast<uint32_t>(noc_addr >> params::NOC_ADDR_LOCAL_BITS) & params::NOC_COORD_MASK;
        const uint32_t y =
            static_cast<uint32_t>(noc_addr >> (params::NOC_ADDR_LOCAL_BITS + params::NOC_ADDR_NODE_ID_BITS)) &
            params::NOC_COORD_MASK;
        const uint64_t local = noc_addr & params::NOC_ADDR_LOCAL_MASK;
        const int bank = Device::dram_bank_from_noc(x, y);
        if (bank >= 0) {
            if (semaphore) error("the increment targets DRAM; semaphores live in L1");
            DramBuffer* buf =
                local + size <= 0xffffffffull ? dev.dram().find(static_cast<uint32_t>(local), size) : nullptr;
            if (!buf) {
                error(std::to_string(size) + " bytes at DRAM bank " + std::to_string(bank) + " address " + hex(local) +
                      " of device " + std::to_string(dev.id()) + " are outside every allocated buffer");
            }
            if (local % params::NOC_DRAM_WRITE_ALIGNMENT != 0)
                error("DRAM address " + hex(local) + " is not " + std::to_string(params::NOC_DRAM_WRITE_ALIGNMENT) +
                      "-byte aligned");
            uint8_t* at = buf->at(static_cast<uint32_t>(bank), static_cast<uint32_t>(local));
            buf->reserve_for_write(at, size);
            buf->note_access(size);
            poison::mark(buf->shadow_of(at), written);
            return at;
        }
        CoreState* core = run_.core_at_noc(dst_device_index, x, y);
        if (!core) {
            error("NOC (" + std::to_string(x) + ", " + std::to_string(y) + ") of device " + std::to_string(dev.id()) +
                  " is no core that runs a kernel in this program");
        }
        uint32_t offset = 0;
        if (local + size <= params::L1_SIZE) {
            offset = static_cast<uint32_t>(local);
        } else {
            uint32_t slot = 0;
            if (!L1Pool::instance().locate(local, slot, offset) ||
                static_cast<uint64_t>(offset) + size > params::L1_SIZE) {
                error("L1 address " + hex(local) + " (+" + std::to_string(size) + " bytes) is outside L1");
            }
        }
        if (semaphore && offset % 4 != 0) error("semaphore address " + hex(local) + " is not 4-byte aligned");
        services::mark_written_l1(*core, offset, static_cast<uint32_t>(written));
        return core->l1 + offset;
    };
    auto increment = [&](uint64_t addr, uint32_t value) {
        uint32_t* word = reinterpret_cast<uint32_t*>(target(addr, 4, true, 4));
        const uint32_t before = *word;
        *word += value;
        run_.time().record_word(word, before, *word, p.arrival_cycle);
    };
    switch (p.header.noc_send_type) {
        case NOC_UNICAST_WRITE:
            std::memcpy(target(p.header.noc_address, p.payload.size(), false, p.sent_bytes), p.payload.data(),
                        p.payload.size());
            break;
        case NOC_UNICAST_INLINE_WRITE: {
            uint8_t* at = target(p.header.noc_address, 4, false, 4);
            uint32_t before = 0;
            std::memcpy(&before, at, 4);
            std::memcpy(at, &p.header.value, 4);
            if (reinterpret_cast<uintptr_t>(at) % 4 == 0) {
                run_.time().record_word(reinterpret_cast<const volatile uint32_t*>(at), before, p.header.value,
                                        p.arrival_cycle);
            }
            break;
        }
        case NOC_UNICAST_ATOMIC_INC:
            increment(p.header.noc_address, p.header.value);
            break;
        case NOC_UNICAST_SCATTER_WRITE: {
            // Write chunks in order, each the next piece of the payload (the last write chunk what the others
            // leave); increment chunks after the writes, as the data lands before the increment announcing it.
            const uint32_t count = p.header.scatter_chunk_count;
            const uint32_t last = last_write_chunk(p.header);
            size_t at = 0;
            for (uint32_t i = 0; i < count; ++i) {
                if (chunk_increments(p.header, i)) continue;
                const size_t size = i < last ? p.header.scatter_chunk_size[i] : p.payload.size() - at;
                const size_t written = at >= p.sent_bytes ? 0 : std::min(size, p.sent_bytes - at);
                std::memcpy(target(p.header.scatter_noc_address[i], static_cast<uint32_t>(size), false, written),
                            p.payload.data() + at, size);
                at += size;
            }
            for (uint32_t i = 0; i < count; ++i) {
                if (chunk_increments(p.header, i)) {
                    increment(p.header.scatter_noc_address[i], p.header.scatter_chunk_size[i]);
                }
            }
            break;
        }
        case NOC_FUSED_UNICAST_ATOMIC_INC:
            // The data lands before the increment that announces it.
            std::memcpy(target(p.header.noc_address, p.payload.size(), false, p.sent_bytes), p.payload.data(),
                        p.payload.size());
            increment(p.header.semaphore_noc_address, p.header.value);
            break;
        default:
            error("unexpected packet type");
    }
}

void FabricRun::finish() {
    // Packets still in flight when the kernels end land anyway, as on hardware.
    while (advance(true)) {
    }
    for (const auto& c : connections_) {
        if (c->state != Connection::State::Closed) {
            throw EmuError(c->owner + ": fabric " + c->name() +
                           " is still open when the kernel ends (missing close())");
        }
    }
}

std::string FabricRun::report() const {
    if (connections_.empty()) return "";
    std::string out;
    for (const auto& c : connections_) {
        if (c->in_flight.empty()) continue;
        out += "\n  fabric " + c->name() + " of " + c->owner + ": " + std::to_string(c->in_flight.size()) +
               " packets in flight";
    }
    return out.empty() ? "\n  fabric: no packets in flight" : out;
}

std::string FabricRun::describe_slot_wait(uint32_t conn) const {
    const Connection& c = *connections_[conn];
    return "wait_for_empty_write_slot on fabric " + c.name() + " (" + std::to_string(c.in_flight.size()) + " of " +
           std::to_string(FABRIC_BUFFER_SLOTS) + " slots in flight)";
}

}  // namespace ttnn_moe::emu::fabric
