// The fabric of an emulated mesh: its topology (Linear, Ring: 1D lines along
// every mesh row and column; Mesh: 2D), link count, delivery-delay seed, and
// the routes packets take. Chip ids are row-major mesh positions (the devices'
// ids in a Mesh); directions follow tt-fabric: NORTH = row - 1, EAST = col + 1.
// 2D routes go NORTH/SOUTH to the destination row first, then EAST/WEST.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ttnn_moe::emu::fabric {

// tt::tt_fabric::Topology values.
enum class Topology : uint32_t { Linear = 1, Ring = 2, Mesh = 3 };
// tt::tt_fabric::eth_chan_directions values.
enum class Direction : uint32_t { East = 0, West = 1, North = 2, South = 3 };

const char* topology_name(Topology t);
const char* direction_name(Direction d);

// One hop between neighbouring chips.
struct Hop {
    uint32_t from;
    uint32_t to;
};

class MeshFabric {
public:
    static constexpr uint32_t DEFAULT_NUM_LINKS = 4;
    static constexpr uint64_t DEFAULT_SEED = 0x5eed;
    static constexpr uint32_t DEFAULT_MAX_DELAY = 6;

    MeshFabric(uint32_t rows, uint32_t cols) : rows_(rows), cols_(cols) {}

    uint32_t rows() const { return rows_; }
    uint32_t cols() const { return cols_; }
    uint32_t num_chips() const { return rows_ * cols_; }
    uint32_t mesh_id() const { return 0; }

    Topology topology() const { return topology_; }
    void set_topology(Topology t) { topology_ = t; }
    uint32_t num_links() const { return num_links_; }
    void set_num_links(uint32_t n);
    // Delivery delays: each packet waits 0..max_delay scheduler passes after the
    // previous packet of its connection, drawn from a generator seeded per run.
    uint64_t seed() const { return seed_; }
    void set_seed(uint64_t seed) { seed_ = seed; }
    uint32_t max_delay() const { return max_delay_; }
    void set_max_delay(uint32_t passes) { max_delay_ = passes; }

    // The -DROUTING_MODE value tt-metal's JIT gives kernels for this topology (+ FABRIC_2D for Mesh).
    std::vector<std::pair<std::string, std::string>> routing_defines() const;

    // "chip 5 (1, 1)"
    std::string chip_name(uint32_t chip) const;
    // The neighbour of `chip` in direction `d` (Ring wraps along the line), if any.
    std::optional<uint32_t> neighbor(uint32_t chip, Direction d) const;
    // Direction of a connection from src towards dst; error text when there is none.
    std::optional<Direction> connection_direction(uint32_t src, uint32_t dst, std::string& error) const;
    // 1D: `hops` chips from src in direction d. 2D: src -> dst. Empty with `error` set on a bad route.
    std::vector<Hop> route_hops(uint32_t src, Direction d, uint32_t hops, std::string& error) const;
    std::vector<Hop> route_to_line_chip(uint32_t src, Direction d, uint32_t dst, std::string& error) const;
    std::vector<Hop> route_2d(uint32_t src, Direction d, uint32_t dst, std::string& error) const;
    // First-hop direction of the 2D route (or the 1D line) from src to dst.
    std::optional<Direction> first_hop(uint32_t src, uint32_t dst) const;

private:
    bool is_2d() const { return topology_ == Topology::Mesh; }
    // Length of the line through `chip` along d, and chip's position on it.
    uint32_t line_length(Direction d) const;

    uint32_t rows_;
    uint32_t cols_;
    Topology topology_ = Topology::Linear;
    uint32_t num_links_ = DEFAULT_NUM_LINKS;
    uint64_t seed_ = DEFAULT_SEED;
    uint32_t max_delay_ = DEFAULT_MAX_DELAY;
};

}  // namespace ttnn_moe::emu::fabric
