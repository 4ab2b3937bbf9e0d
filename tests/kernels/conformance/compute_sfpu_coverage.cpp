// Not an op kernel: one call of each compute API family the MoE ops and the
// emulator's own tests rely on (SFPU activations, tilize/untilize, transpose,
// format reconfiguration, DST-to-DST binary SFPU ops). It keeps the conformance
// check honest about its SFPI stand-in: every call instantiates the real LLK SFPU
// templates for all three TRISCs.
//
// conformance: kind=compute

#include <cstdint>

#include "api/compute/binary_max_min.h"
#include "api/compute/compute_kernel_api.h"
#include "api/compute/compute_kernel_hw_startup.h"
#include "api/compute/eltwise_binary_sfpu.h"
#include "api/compute/eltwise_unary/eltwise_unary.h"
#include "api/compute/eltwise_unary/exp.h"
#include "api/compute/eltwise_unary/fill.h"
#include "api/compute/eltwise_unary/gelu.h"
#include "api/compute/eltwise_unary/recip.h"
#include "api/compute/eltwise_unary/relu.h"
#include "api/compute/eltwise_unary/rsqrt.h"
#include "api/compute/eltwise_unary/sqrt.h"
#include "api/compute/reconfig_data_format.h"
#include "api/compute/tile_move_copy.h"
#include "api/compute/tilize.h"
#include "api/compute/transpose.h"
#include "api/compute/untilize.h"

void kernel_main() {
    constexpr uint32_t cb_in = 0, cb_other = 1, cb_out = 16;
    compute_kernel_hw_startup(cb_in, cb_out);

    tile_regs_acquire();
    exp_tile_init();
    exp_tile(0);
    sigmoid_tile_init();
    sigmoid_tile(0);
    silu_tile_init();
    silu_tile(0);
    relu_tile_init();
    relu_tile(0);
    recip_tile_init();
    recip_tile(0);
    sqrt_tile_init();
    sqrt_tile(0);
    rsqrt_tile_init();
    rsqrt_tile(0);
    tanh_tile_init();
    tanh_tile(0);
    gelu_tile_init();
    gelu_tile(0);
    log_tile_init();
    log_tile(0);
    fill_tile_init();
    fill_tile(1, 1.0f);
    add_binary_tile_init();
    add_binary_tile(0, 1, 0);
    mul_binary_tile_init();
    mul_binary_tile(0, 1, 0);
    binary_max_tile_init();
    binary_max_tile(0, 1, 0);
    transpose_init(cb_in);
    transpose_tile(cb_in, 0, 2);
    tile_regs_commit();
    tile_regs_wait();
    pack_tile(0, cb_out);
    tile_regs_release();

    reconfig_data_format(cb_in, cb_other);
    pack_reconfig_data_format(cb_out);
    tilize_init(cb_in, 1, cb_out);
    tilize_block(cb_in, 1, cb_out);
    tilize_uninit(cb_in, cb_out);
    untilize_init(cb_in);
    untilize_block(cb_in, 1, cb_out);
    untilize_uninit(cb_in);
}
