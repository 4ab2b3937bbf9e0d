// Compute services of the kernel ABI. Wired to the ComputeEngine once the
// numerics branch provides it; until then every compute call fails clearly.
#include "emu/compute/compute_engine.hpp"
#include "emu/services.hpp"

namespace ttnn_moe::emu {

class CbTileAccessImpl {};

Instance::Instance() = default;
Instance::~Instance() = default;

void Run::attach_compute(Instance&) {}
void Run::collect_compute_counters(Instance&) {}

namespace services {
namespace {
[[noreturn]] void not_yet() { fail("the compute API is not wired to the compute engine yet"); }
void c_startup(uint32_t, uint32_t, uint32_t) { not_yet(); }
void c_void() { not_yet(); }
void c_copy(uint32_t, uint32_t, uint32_t) { not_yet(); }
void c_matmul(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) { not_yet(); }
void c_matmul_block(uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) {
    not_yet();
}
void c_binary(ttnn_moe_emu::BinaryOp, ttnn_moe_emu::Broadcast, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) {
    not_yet();
}
void c_unary(ttnn_moe_emu::UnaryOp, uint32_t) { not_yet(); }
void c_pack(uint32_t, uint32_t, uint32_t, uint32_t) { not_yet(); }
void c_block(uint32_t, uint32_t, uint32_t) { not_yet(); }
}  // namespace

void fill_compute_services(ttnn_moe_emu::Services& t) {
    t.compute_hw_startup = &c_startup;
    t.tile_regs_acquire = &c_void;
    t.tile_regs_commit = &c_void;
    t.tile_regs_wait = &c_void;
    t.tile_regs_release = &c_void;
    t.copy_tile = &c_copy;
    t.matmul_tiles = &c_matmul;
    t.matmul_block = &c_matmul_block;
    t.binary_tiles = &c_binary;
    t.unary_tile = &c_unary;
    t.pack_tile = &c_pack;
    t.tilize_block = &c_block;
    t.untilize_block = &c_block;
}
}  // namespace services

}  // namespace ttnn_moe::emu
