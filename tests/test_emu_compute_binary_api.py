"""Compute APIs binary_ng's kernels use, on the emulator: binary_tiles_init, the packer's ReLU
(pack_relu_config / ReluConfig), the CircularBuffer object in a compute kernel, and the SFPU headers
its SFPU kernel includes. Each against torch or as a build/run error naming what is not emulated."""

import pytest
import torch
from emu_programs import TILE_BYTES, cb, core_set, kernel, tilize, untilize
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd

# Pairs of tiles (a, b) in CB 0 -> op(a, b) in CB 16, through the CircularBuffer object and binary_tiles_init.
ADD_PAIRS = """
#include "api/compute/eltwise_binary.h"
#include "api/compute/pack.h"
#include "api/dataflow/circular_buffer.h"

void kernel_main() {
    const uint32_t pairs = get_arg_val<uint32_t>(0);
    CircularBuffer in(0);
    CircularBuffer out(16);
    compute_kernel_hw_startup(in.get_cb_id(), in.get_cb_id(), out.get_cb_id());
    static_assert(ReluConfig::from_packed(0x00050001).get_mode() == ReluType::ZERO_RELU);
    static_assert(ReluConfig::from_packed(0x00050001).get_threshold() == 5);
    PACK_RELU_SETUP
    binary_tiles_init<true, EltwiseBinaryType::ELWADD>(in.get_cb_id(), in.get_cb_id(), ACC_TO_DEST);
    for (uint32_t p = 0; p < pairs; ++p) {
        in.wait_front(2);
        out.reserve_back(1);
        tile_regs_acquire();
        add_tiles(in.get_cb_id(), in.get_cb_id(), 0, 1, 0);
        tile_regs_commit();
        tile_regs_wait();
        pack_tile(0, out.get_cb_id());
        tile_regs_release();
        out.push_back(1);
        in.pop_front(2);
    }
}
"""


def run_add_pairs(a: torch.Tensor, b: torch.Tensor, relu_setup: str = "", acc_to_dest: str = "false") -> torch.Tensor:
    pairs = a.shape[0] // 32
    interleaved = torch.stack([a.reshape(pairs, 32, 32), b.reshape(pairs, 32, 32)], dim=1).reshape(-1, 32)
    dev = emu.open_device()
    src = dev.allocate(2 * pairs * TILE_BYTES, TILE_BYTES)
    dst = dev.allocate(pairs * TILE_BYTES, TILE_BYTES)
    dev.write(src, TILE_BYTES, tilize(interleaved))
    cores = core_set(1, 2)
    core = pd.CoreCoord(1, 2)
    ct = emu.tensor_accessor_args(TILE_BYTES, True)
    compute = pd.KernelDescriptor(
        kernel_source=ADD_PAIRS,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=cores,
        defines=[("PACK_RELU_SETUP", relu_setup), ("ACC_TO_DEST", acc_to_dest)],
        runtime_args=[(core, [pairs])],
        config=pd.ComputeConfigDescriptor(),
    )
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_pages.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                ct,
                [("cb_out", 0)],
                [(core, [src, 0, 2 * pairs, 2])],
            ),
            compute,
            kernel(
                "writer_pages.cpp", cores, pd.WriterConfigDescriptor(), ct, [("cb_in", 16)], [(core, [dst, 0, pairs])]
            ),
        ],
        cbs=[cb(0, 4, TILE_BYTES, cores), cb(16, 2, TILE_BYTES, cores)],
    )
    emu.run_program(dev, program)
    return untilize(dev.read(dst, TILE_BYTES, pairs * TILE_BYTES), 32 * pairs, 32)


def inputs(pairs: int = 3):
    gen = torch.Generator().manual_seed(11)
    return (torch.randn(32 * pairs, 32, generator=gen) * 4).bfloat16(), torch.randn(
        32 * pairs, 32, generator=gen
    ).bfloat16()


def test_binary_tiles_init_and_the_compute_circular_buffer_add_tile_pairs():
    a, b = inputs()
    got = run_add_pairs(a, b)
    # One fp32 sum rounded to bf16, as torch's bf16 add rounds it.
    assert torch.equal(got, (a.float() + b.float()).bfloat16().float())


def test_pack_relu_zero_packs_negative_sums_as_zero():
    a, b = inputs()
    got = run_add_pairs(a, b, "pack_relu_config(ReluConfig::zero());")
    want = torch.relu((a.float() + b.float()).bfloat16().float())
    assert torch.equal(got, want)
    assert (want == 0).float().mean() > 0.3  # the ReLU mattered
    assert not torch.signbit(got).any()  # -0.0 sums pack as +0


def test_pack_relu_none_turns_it_off_again():
    a, b = inputs()
    got = run_add_pairs(a, b, "pack_relu_config(ReluConfig::zero()); pack_relu_config(ReluConfig::none());")
    assert torch.equal(got, (a.float() + b.float()).bfloat16().float())


def test_threshold_relu_is_reported_as_not_emulated():
    a, b = inputs(1)
    with pytest.raises(emu.EmulatorError, match=r"pack_relu_config with a threshold ReLU \(mode 2, threshold 16256\)"):
        run_add_pairs(a, b, "pack_relu_config(ReluConfig::min_threshold(0x3F80));")


def test_binary_tiles_init_accumulating_onto_a_freshly_acquired_dst_adds_to_zero():
    a, b = inputs(1)
    # tile_regs_acquire hands out a zeroed section: DST = 0 + (a + b), one rounding (more in
    # test_emu_compute_topk_reduce.py).
    assert torch.equal(run_add_pairs(a, b, acc_to_dest="true"), (a.float() + b.float()).bfloat16().float())


SFPU_HEADERS = [
    "binary_bitwise_sfpu",
    "binary_shift",
    "add_int_sfpu",
    "sub_int_sfpu",
    "mul_int_sfpu",
    "div_int32_floor",
    "div_int32_sfpu",
    "binary_remainder",
    "binary_fmod",
    "quantization",
    "binary_max_min",
    "gcd",
    "lcm",
    "xlogy",
    "atan2",
    "nextafter",
    "logaddexp",
    "logaddexp2",
    "binary_comp",
    "isclose",
    "situ_glu",
]


def sfpu_header_kernel(body: str) -> pd.KernelDescriptor:
    includes = "".join(f'#include "api/compute/{h}.h"\n' for h in SFPU_HEADERS)
    return pd.KernelDescriptor(
        kernel_source=includes + "void kernel_main() {\n" + body + "\n}\n",
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=core_set(0, 0),
        config=pd.ComputeConfigDescriptor(),
    )


def test_the_binary_sfpu_headers_exist_and_an_op_they_declare_in_tt_metal_fails_to_build_by_name():
    dev = emu.open_device()
    emu.run_program(dev, pd.ProgramDescriptor(kernels=[sfpu_header_kernel("mul_binary_tile_init();")]))
    with pytest.raises(emu.EmulatorError, match="add_int_tile"):
        emu.run_program(dev, pd.ProgramDescriptor(kernels=[sfpu_header_kernel("add_int_tile(0, 1, 0);")]))


# The matmul kernels' packer L1 accumulation: a tile packed once, then packed onto with accumulation on.
ACCUMULATE_PAIRS = """
#include "api/compute/pack.h"
#include "api/compute/tile_move_copy.h"

void kernel_main() {
    const uint32_t pairs = get_arg_val<uint32_t>(0);
    compute_kernel_hw_startup(0, 0, 16);
    copy_init(0);
    for (uint32_t p = 0; p < pairs; ++p) {
        cb_wait_front(0, 2);
        cb_reserve_back(16, 1);
        for (uint32_t i = 0; i < 2; ++i) {
            pack_reconfig_l1_acc(i);  // the first pack writes, the second adds to it
            tile_regs_acquire();
            copy_tile(0, i, 0);
            tile_regs_commit();
            tile_regs_wait();
            PACK_CALL
            tile_regs_release();
        }
        pack_reconfig_l1_acc(0);
        cb_push_back(16, 1);
        cb_pop_front(0, 2);
    }
}
"""


def run_accumulate_pairs(a: torch.Tensor, b: torch.Tensor, pack_call: str = "pack_tile<true>(0, 16, 0);"):
    pairs = a.shape[0] // 32
    interleaved = torch.stack([a.reshape(pairs, 32, 32), b.reshape(pairs, 32, 32)], dim=1).reshape(-1, 32)
    dev = emu.open_device()
    src = dev.allocate(2 * pairs * TILE_BYTES, TILE_BYTES)
    dst = dev.allocate(pairs * TILE_BYTES, TILE_BYTES)
    dev.write(src, TILE_BYTES, tilize(interleaved))
    cores, core = core_set(0, 1), pd.CoreCoord(0, 1)
    ct = emu.tensor_accessor_args(TILE_BYTES, True)
    compute = pd.KernelDescriptor(
        kernel_source=ACCUMULATE_PAIRS,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=cores,
        defines=[("PACK_CALL", pack_call)],
        runtime_args=[(core, [pairs])],
        config=pd.ComputeConfigDescriptor(),
    )
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_pages.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                ct,
                [("cb_out", 0)],
                [(core, [src, 0, 2 * pairs, 2])],
            ),
            compute,
            kernel(
                "writer_pages.cpp", cores, pd.WriterConfigDescriptor(), ct, [("cb_in", 16)], [(core, [dst, 0, pairs])]
            ),
        ],
        cbs=[cb(0, 4, TILE_BYTES, cores), cb(16, 2, TILE_BYTES, cores)],
    )
    counters = emu.run_program(dev, program)
    return untilize(dev.read(dst, TILE_BYTES, pairs * TILE_BYTES), 32 * pairs, 32), counters


def test_packer_l1_accumulation_adds_to_the_tile_in_the_cb():
    a, b = inputs()
    got, counters = run_accumulate_pairs(a, b)
    # The packer adds the bf16 tile it finds to the new value in fp32 and rounds the sum to the CB's bf16.
    assert torch.equal(got, (a.float() + b.float()).bfloat16().float())
    assert counters["tiles_packed"] == 2 * 3


def test_packer_l1_accumulation_with_the_relu_on_is_reported_as_not_emulated():
    a, b = inputs(1)
    with pytest.raises(emu.EmulatorError, match="L1 accumulation into CB 16 with the packer's ReLU on is not emulated"):
        run_accumulate_pairs(a, b, "pack_relu_config(ReluConfig::zero()); pack_tile<true>(0, 16, 0);")


@pytest.mark.parametrize(
    "call, message",
    [
        ("pack_untilize_init<1>(0, 16);", "pack_untilize_init: the unpack-side pack_untilize is not emulated"),
        ("pack_untilize_block<1>(0, 1, 16);", "pack_untilize_block: the unpack-side pack_untilize is not emulated"),
        ("mailbox_write(ckernel::ThreadId::BriscThreadId, 1);", "mailbox_write from a compute kernel is not emulated"),
    ],
)
def test_apis_the_matmul_kernel_names_but_the_emulator_does_not_run_fail_when_called(call, message):
    code = (
        '#include "api/compute/pack_untilize.h"\n#include "api/compute/transpose.h"\n'
        "void kernel_main() {\n" + call + "\n}\n"
    )
    k = pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=core_set(0, 0),
        config=pd.ComputeConfigDescriptor(),
    )
    with pytest.raises(emu.EmulatorError, match=message.replace("(", r"\(").replace(")", r"\)")):
        emu.run_program(emu.open_device(), pd.ProgramDescriptor(kernels=[k]))


def test_the_division_helpers_divide():
    """internal/mod_div_lib.h: the RISC-V constant-divisor helpers, checked in a kernel with static_asserts."""
    code = """
        #include "internal/mod_div_lib.h"
        #include "api/compute/common.h"
        static_assert(udivsi3_const_divisor<12>(1000) == 83 && umodsi3_const_divisor<12>(1000) == 4);
        void kernel_main() {
            if (fast_udiv_56(1000) != 17 || fast_udiv_7(49) != 7 || mulsi3(6, 7) != 42) {
                ttnn_moe_emu::fail("division helper wrong");
            }
        }
    """
    k = pd.KernelDescriptor(
        kernel_source=code,
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
        core_ranges=core_set(0, 0),
        config=pd.ComputeConfigDescriptor(),
    )
    emu.run_program(emu.open_device(), pd.ProgramDescriptor(kernels=[k]))


# The matmul in0 receiver's hand-off of each batch's validity: one word to each TRISC's mailbox.
MAILBOX_SENDER = """
#include "api/dataflow/dataflow_api.h"
#include "ckernel.h"
#include "ckernel_defs.h"
void kernel_main() {
    const uint32_t words = get_arg_val<uint32_t>(0);
    for (uint32_t i = 0; i < words; ++i) {
        ckernel::mailbox_write(ckernel::ThreadId::UnpackThreadId, 100 + i);
        ckernel::mailbox_write(ckernel::ThreadId::MathThreadId, 200 + i);
        ckernel::mailbox_write(ckernel::ThreadId::PackThreadId, 300 + i);
    }
}
"""
MAILBOX_RECEIVER = """
#include "api/compute/common.h"
void kernel_main() {
    const uint32_t words = get_arg_val<uint32_t>(0);
    for (uint32_t i = 0; i < words; ++i) {
        uint32_t unpack = 0, math = 0, pack = 0;
        UNPACK(unpack = mailbox_read(ckernel::ThreadId::BriscThreadId);)
        MATH(math = mailbox_read(ckernel::ThreadId::BriscThreadId);)
        PACK(pack = mailbox_read(ckernel::ThreadId::BriscThreadId);)
        if (unpack != 100 + i || math != 200 + i || pack != 300 + i) ttnn_moe_emu::fail("mailbox word out of order");
    }
}
"""


def run_mailboxes(sent: int, read: int) -> dict:
    cores, core = core_set(3, 4), pd.CoreCoord(3, 4)

    def source(code, config, count):
        return pd.KernelDescriptor(
            kernel_source=code,
            source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE,
            core_ranges=cores,
            runtime_args=[(core, [count])],
            config=config,
        )

    program = pd.ProgramDescriptor(
        kernels=[
            source(MAILBOX_SENDER, pd.WriterConfigDescriptor(), sent),
            source(MAILBOX_RECEIVER, pd.ComputeConfigDescriptor(), read),
        ]
    )
    return emu.run_program(emu.open_device(), program)


def test_mailboxes_carry_words_from_a_data_movement_kernel_to_each_trisc_in_order():
    # 10 words per TRISC through 4-deep mailboxes: the sender waits for the reader on the way.
    run_mailboxes(10, 10)


def test_reading_a_mailbox_nobody_writes_is_a_reported_deadlock():
    with pytest.raises(emu.EmulatorError, match="deadlock"):
        run_mailboxes(2, 3)
