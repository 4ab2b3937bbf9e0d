// Kernel-facing fabric calls: forward to the running program's FabricRun,
// count one API call each, and park the kernel while its connection has no
// free buffer slot.
#include "emu/fabric/services.hpp"

#include "emu/fiber.hpp"
#include "emu/run_state.hpp"
#include "emu/services.hpp"

namespace ttnn_moe::emu::fabric {

namespace {

FabricRun& fabric_run() {
    services::count_call();
    return services::run().fabric();
}

uint32_t svc_connect(uint32_t channel_arg, uint32_t teardown_sem_id, uint32_t buffer_index_sem_id) {
    return fabric_run().connect(services::instance(), channel_arg, teardown_sem_id, buffer_index_sem_id);
}
void svc_open_start(uint32_t conn) {
    fabric_run().open_start(conn);
}
void svc_open_finish(uint32_t conn) {
    fabric_run().open_finish(conn);
}
void svc_close_start(uint32_t conn) {
    fabric_run().close_start(conn);
}
void svc_close_finish(uint32_t conn) {
    fabric_run().close_finish(conn);
}
uint32_t svc_free_slots(uint32_t conn) {
    const uint32_t n = fabric_run().free_slots(conn);
    // Polling loops on the slot count must let the fabric drain.
    if (n == 0) {
        services::instance().wait = WaitKind::Spin;
        Fiber::yield();
    }
    return n;
}

void svc_wait_for_empty_write_slot(uint32_t conn) {
    FabricRun& f = fabric_run();
    if (f.free_slots(conn) > 0) return;
    Instance& inst = services::instance();
    inst.wait_value = conn;
    inst.wait = WaitKind::FabricSlot;
    Fiber::yield();
    inst.wait = WaitKind::None;
}

void svc_send_payload(uint32_t conn, uint32_t src_l1_addr, uint32_t size) {
    fabric_run().send_payload(services::instance(), conn, src_l1_addr, size);
}
void svc_send_header(uint32_t conn, const ttnn_moe_emu::FabricPacket* packet) {
    fabric_run().send_header(services::instance(), conn, *packet);
}
uint32_t svc_next_hop_direction(uint32_t dst_mesh_id, uint32_t dst_chip_id) {
    return fabric_run().next_hop_direction(services::instance(), dst_mesh_id, dst_chip_id);
}
uint32_t svc_channel_direction(uint32_t channel_arg) {
    return fabric_run().channel_direction(services::instance(), channel_arg);
}

ttnn_moe_emu::FabricServices make_table() {
    ttnn_moe_emu::FabricServices t{};
    t.connect = &svc_connect;
    t.open_start = &svc_open_start;
    t.open_finish = &svc_open_finish;
    t.close_start = &svc_close_start;
    t.close_finish = &svc_close_finish;
    t.free_slots = &svc_free_slots;
    t.wait_for_empty_write_slot = &svc_wait_for_empty_write_slot;
    t.send_payload = &svc_send_payload;
    t.send_header = &svc_send_header;
    t.next_hop_direction = &svc_next_hop_direction;
    t.channel_direction = &svc_channel_direction;
    return t;
}

}  // namespace

const ttnn_moe_emu::FabricServices* services_table() {
    static const ttnn_moe_emu::FabricServices table = make_table();
    return &table;
}

}  // namespace ttnn_moe::emu::fabric
