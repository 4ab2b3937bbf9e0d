"""The SFPU programming model on the emulator: sfpi lane vectors over DST (addressing, predication, rounding),
the LLK SFPU call macros, and the PACK thread's DST hand-off, as tt-metal's moe_compute issues them."""

import numpy as np
import pytest
import torch
from emu_programs import BF16, KERNELS, TILE_BYTES, cb, core_set, kernel, tilize, untilize
from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal.wheel import use_kernel_library_includes

SFPU_KERNELS = KERNELS.parent / "sfpu"
FP32 = pd.DataFormat.Float32
CORE = (1, 2)


def run_compute(source, tiles: torch.Tensor, out_tiles: int, fp32_dest: bool, out_format=BF16, steps=1, defines=()):
    """tiles (n*32, 32) in bf16 through cb 0 -> the compute kernel `source` (a file or code) -> out_tiles tiles
    from cb 16 in out_format, as an (out_tiles*32, 32) float tensor."""
    in_tiles = tiles.shape[0] // 32
    out_bytes = TILE_BYTES * (2 if out_format == FP32 else 1)
    dev = emu.open_device()
    src = dev.allocate(in_tiles * TILE_BYTES, TILE_BYTES)
    dst = dev.allocate(out_tiles * out_bytes, out_bytes)
    dev.write(src, TILE_BYTES, tilize(tiles))
    cores = core_set(*CORE)
    core = pd.CoreCoord(*CORE)
    compute = pd.KernelDescriptor(
        kernel_source=str(source),
        source_type=pd.KernelDescriptor.SourceType.SOURCE_CODE
        if "kernel_main" in str(source)
        else pd.KernelDescriptor.SourceType.FILE_PATH,
        core_ranges=cores,
        named_compile_time_args=[("cb_in", 0), ("cb_out", 16)],
        runtime_args=[(core, [steps])],
        defines=list(defines),
        config=pd.ComputeConfigDescriptor(fp32_dest_acc_en=fp32_dest),
    )
    program = pd.ProgramDescriptor(
        kernels=[
            kernel(
                "reader_pages.cpp",
                cores,
                pd.ReaderConfigDescriptor(),
                emu.tensor_accessor_args(TILE_BYTES, True),
                [("cb_out", 0)],
                [(core, [src, 0, in_tiles, 1])],
            ),
            compute,
            kernel(
                "writer_pages.cpp",
                cores,
                pd.WriterConfigDescriptor(),
                emu.tensor_accessor_args(out_bytes, True),
                [("cb_in", 16)],
                [(core, [dst, 0, out_tiles])],
            ),
        ],
        cbs=[cb(0, 4, TILE_BYTES, cores), cb(16, 2, out_bytes, cores, out_format)],
    )
    emu.run_program(dev, program)
    dtype = torch.float32 if out_format == FP32 else torch.bfloat16
    return untilize(dev.read(dst, out_bytes, out_tiles * out_bytes), out_tiles * 32, 32, dtype)


SILU, SWIGLU, GELU, CLAMPED_SILU = 0, 1, 2, 3  # moe_compute's MoEActivationFunction
CLAMP_LIMIT = 3.0


def activation_golden(activation: int, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    """What moe_compute's activation computes, in float64: act(gate) * up for SILU / GELU (tanh form), moe_gpt's
    clamped SwiGLU (GPT-OSS: alpha 1.702, limit 7, up + 1) and clamped SiLU (alpha 1, CLAMP_LIMIT, no bias)."""
    gate, up = gate.double(), up.double()
    if activation == SILU:
        return torch.nn.functional.silu(gate) * up
    if activation == GELU:
        return torch.nn.functional.gelu(gate, approximate="tanh") * up
    alpha, limit, bias = (1.702, 7.0, 1.0) if activation == SWIGLU else (1.0, CLAMP_LIMIT, 0.0)
    g = gate.clamp(max=limit)
    return (up.clamp(-limit, limit) + bias) * g * torch.sigmoid(alpha * g)


@pytest.mark.parametrize("fp32_dest", [False, True])
@pytest.mark.parametrize("activation", [SILU, SWIGLU, GELU, CLAMPED_SILU])
def test_pack_activation_matches_torch(wheel, activation, fp32_dest):
    """moe_compute's PackActivation on the PACK thread after its DST hand-off: silu (the wheel's
    ckernel_sfpu_silu.h / sigmoid / reciprocal, unmodified) or gelu then the SFPU multiply, or moe_gpt's
    swiglu_sfpu.h (unmodified), on DST 0 / 1 and 2 / 3, two steps (both DST halves)."""
    use_kernel_library_includes()  # swiglu_sfpu.h is included from the wheel's root
    steps = 2
    gen = torch.Generator().manual_seed(11 + 2 * activation + fp32_dest)
    gate = (torch.randn(steps, 2, 32, 32, generator=gen) * 4).bfloat16()
    up = (torch.randn(steps, 2, 32, 32, generator=gen) * 4).bfloat16()
    # Per step the four tiles gate 0, up 0, gate 1, up 1.
    tiles = torch.stack([gate[:, 0], up[:, 0], gate[:, 1], up[:, 1]], dim=1).reshape(-1, 32)
    out_format = FP32 if fp32_dest else BF16
    defines = [("ACTIVATION", str(activation)), ("CLAMP_LIMIT", f"{CLAMP_LIMIT}f")]
    got = run_compute(SFPU_KERNELS / "pack_activation.cpp", tiles, 2 * steps, fp32_dest, out_format, steps, defines)
    want = activation_golden(activation, gate, up).reshape(-1, 32)
    error = (got.double() - want).abs()
    pcc = np.corrcoef(got.flatten().numpy(), want.flatten().numpy())[0, 1]
    assert pcc > 0.99999
    floor = 1e-6 * want.abs().max()
    if fp32_dest:
        # fp32 all the way to an fp32 CB: the SFPU exp and reciprocal are within a few fp32 ULP.
        assert (error <= 1e-5 * want.abs() + floor).all(), error.max()
    elif activation in (SILU, GELU):
        # The activation rounded to bf16 (nearest), the product truncated to bf16 by the 16-bit DST store.
        assert (error <= 2**-6 * want.abs() + floor).all(), error.max()
        # The store truncates: a product never grows in magnitude, so only the activation's rounding (1/2 bf16
        # ULP, 2^-8) can lift a result above the exact one (a rounding store would add up to another 1/2 ULP).
        assert (got.double().abs() <= want.abs() * (1 + 2**-8 + 1e-6) + floor).all()
    else:
        # SwiGLU rounds its fp32 result to bf16 (nearest) itself before the store.
        assert (error <= 2**-8 * want.abs() * (1 + 1e-5) + floor).all(), error.max()


def one_tile_kernel(math: str, *, pack_side: str = "tile_regs_wait();", prelude: str = "", includes=()) -> str:
    """A compute kernel on one tile: tile 0 of cb_in copied to DST 0, `math` on the MATH thread, `pack_side`
    once DST is committed (by default the compute API's wait for it), DST 0 packed to cb_out."""
    headers = ("api/compute/common.h", "api/compute/compute_kernel_api.h", "api/compute/tile_move_copy.h", *includes)
    return (
        "".join(f'#include "{header}"\n' for header in headers)
        + prelude
        + """
        void kernel_main() {
            constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
            constexpr uint32_t cb_out = get_named_compile_time_arg_val("cb_out");
            compute_kernel_hw_startup(cb_in, cb_out);
            cb_wait_front(cb_in, 1);
            tile_regs_acquire();
            copy_tile(cb_in, 0, 0);
        """
        + math
        + "\ntile_regs_commit();\n"
        + pack_side
        + """
            cb_reserve_back(cb_out, 1);
            pack_tile(0, cb_out);
            tile_regs_release();
            cb_push_back(cb_out, 1);
            cb_pop_front(cb_in, 1);
        }
        """
    )


def sfpu_function(name: str, body: str) -> str:
    """An sfpi function `name` over DST, as SFPU_UNARY_CALL takes it."""
    return f"""
        namespace ckernel::sfpu {{
        template <int ITERATIONS>
        inline void {name}() {{
            {body}
        }}
        }}  // namespace ckernel::sfpu
    """


SFPU_MACROS = ("llk_math_eltwise_unary_sfpu_macros.h",)


def sfpu_kernel(body: str, mode: str = "RC") -> str:
    """The sfpi function `body` over DST 0 by SFPU_UNARY_CALL on the MATH thread (one_tile_kernel)."""
    call = (
        f"MATH(SFPU_UNARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, emu_test_body, (8), 0, ::ckernel::VectorMode::{mode}));"
    )
    return one_tile_kernel(call, prelude=sfpu_function("emu_test_body", body), includes=SFPU_MACROS)


def test_dst_reg_addresses_rows_and_columns_as_the_hardware():
    """One call at face 0 (RC_custom): dst_reg[i] is DST rows 4 (i div 2) .. +3, even columns for even i, odd
    for odd i; face f of the tile starts at dst_reg[8 f] (SFPLOAD's addressing, 16-wide DST rows)."""
    body = """
        for (int i = 0; i < 32; ++i) sfpi::dst_reg[i] = float(i + 1);
    """
    got = run_compute(sfpu_kernel(body, "RC_custom"), torch.zeros(32, 32), 1, False)
    want = torch.zeros(32, 32)
    for i in range(32):
        face, step = divmod(i, 8)
        rows = range(16 * (face // 2) + 4 * (step // 2), 16 * (face // 2) + 4 * (step // 2) + 4)
        cols = range(16 * (face % 2) + step % 2, 16 * (face % 2) + 16, 2)
        for r in rows:
            for c in cols:
                want[r, c] = i + 1
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_vector_mode_r_covers_the_top_faces_and_c_the_left_ones():
    body = """
        for (int d = 0; d < ITERATIONS; d++) {
            sfpi::dst_reg[0] = sfpi::dst_reg[0] + 1.0f;
            sfpi::dst_reg++;
        }
    """
    ones_r = run_compute(sfpu_kernel(body, "R"), torch.zeros(32, 32), 1, False)
    ones_c = run_compute(sfpu_kernel(body, "C"), torch.zeros(32, 32), 1, False)
    top, left = torch.zeros(32, 32), torch.zeros(32, 32)
    top[:16, :] = 1
    left[:, :16] = 1
    torch.testing.assert_close(ones_r, top, rtol=0, atol=0)
    torch.testing.assert_close(ones_c, left, rtol=0, atol=0)


def test_nested_predication_matches_hand_computed_values():
    """v_if / v_elseif / v_else / v_and, nested, and integer lanes: each value of a ramp lands in its branch."""
    body = """
        for (int d = 0; d < ITERATIONS; d++) {
            sfpi::vFloat x = sfpi::dst_reg[0];
            sfpi::vFloat y = -1.0f;
            v_if(x < 0.0f) {
                v_if(x < -4.0f) { y = 10.0f; }
                v_else { y = 20.0f; }
                v_endif;
            }
            v_elseif(x == 0.0f) { y = 30.0f; }
            v_else {
                y = 40.0f;
                v_and(x > 4.0f);
                y = 50.0f;
            }
            v_endif;
            // Integer lanes: the exponent field of x (biased) for |x| >= 8, compared as integers.
            sfpi::vInt e = sfpi::exexp(x);
            v_if(e >= 3) { y = y + sfpi::int32_to_float(e); }
            v_endif;
            sfpi::dst_reg[0] = y;
            sfpi::dst_reg++;
        }
    """
    x = (torch.arange(32 * 32, dtype=torch.float32).reshape(32, 32) % 41 - 20).bfloat16().float()
    got = run_compute(sfpu_kernel(body), x, 1, False)
    want = torch.empty_like(x)
    for idx, v in np.ndenumerate(x.numpy()):
        y = 10.0 if v < -4 else 20.0 if v < 0 else 30.0 if v == 0 else 50.0 if v > 4 else 40.0
        if v != 0 and abs(v) >= 8:
            y += int(np.floor(np.log2(abs(v))))
        want[idx] = y
    torch.testing.assert_close(got, want, rtol=0, atol=0)


def test_stores_truncate_into_a_16_bit_dst_and_convert_rounds_to_nearest():
    """bf16 keeps 7 mantissa bits: 1 + 2^-8 + 2^-9 lies between 1 and 1 + 2^-7, nearer the latter. A store into
    a 16-bit DST truncates it to 1, convert<vFloat16b> rounds it to 1 + 2^-7, an fp32 DST keeps it."""
    value = 1.0 + 2**-8 + 2**-9
    body_store = f"""
        for (int d = 0; d < ITERATIONS; d++) {{ sfpi::dst_reg[0] = sfpi::vFloat({value!r}f); sfpi::dst_reg++; }}
    """
    body_round = f"""
        for (int d = 0; d < ITERATIONS; d++) {{
            sfpi::dst_reg[0] = sfpi::convert<sfpi::vFloat16b>(sfpi::vFloat({value!r}f), sfpi::RoundMode::Nearest);
            sfpi::dst_reg++;
        }}
    """
    stored = run_compute(sfpu_kernel(body_store), torch.zeros(32, 32), 1, False)
    rounded = run_compute(sfpu_kernel(body_round), torch.zeros(32, 32), 1, False)
    kept = run_compute(sfpu_kernel(body_store), torch.zeros(32, 32), 1, True, FP32)
    assert (stored == 1.0).all()
    assert (rounded == 1.0 + 2**-7).all()
    assert (kept == np.float32(value)).all()


DOUBLE_DST = "for (int d = 0; d < ITERATIONS; d++) { sfpi::dst_reg[0] = sfpi::dst_reg[0] * 2.0f; sfpi::dst_reg++; }"


def handoff_kernel(semaphore: str, setc16: str) -> str:
    """DST 0 doubled by the PACK thread's SFPU after moe_compute's hand-off: its semaphore wait on `semaphore`,
    then `setc16`."""
    pack_side = f"""
        PACK(TTI_SEMWAIT(p_stall::STALL_TDMA, semaphore::t6_sem({semaphore}), p_stall::STALL_ON_ZERO));
        {setc16}
        PACK(SFPU_UNARY_CALL(DST_SYNC_MODE, DST_ACCUM_MODE, emu_double, (8), 0, ::ckernel::VectorMode::RC));
    """
    return one_tile_kernel(
        "", pack_side=pack_side, prelude=sfpu_function("emu_double", DOUBLE_DST), includes=SFPU_MACROS
    )


SET_PACKER_HALF = "PACK(TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32, ckernel::packer::get_packer_dest_offset()));"


def test_the_pack_thread_sfpu_works_on_the_packers_dst_half():
    x = torch.randn(32, 32, generator=torch.Generator().manual_seed(3)).bfloat16().float()
    got = run_compute(handoff_kernel("semaphore::MATH_PACK", SET_PACKER_HALF), x, 1, False)
    torch.testing.assert_close(got, 2 * x, rtol=0, atol=0)


@pytest.mark.parametrize(
    "semaphore, setc16, message",
    [
        # The PACK thread's SFPU still points at the MATH thread's half.
        ("semaphore::MATH_PACK", "", r"PACK thread.*TT_SETC16\(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32"),
        # A configuration register the emulator does not model.
        ("semaphore::MATH_PACK", "PACK(TT_SETC16(7, 0));", r"TT_SETC16 of configuration register 7 .*not modelled"),
        # Pointing the SFPU at the half the packer does not hold.
        (
            "semaphore::MATH_PACK",
            "PACK(TT_SETC16(DEST_TARGET_REG_CFG_MATH_Offset_ADDR32, 512));",
            r"holds the DST half at row 0",
        ),
        # Waiting on another semaphore.
        ("3", SET_PACKER_HALF, r"TTI_SEMWAIT on semaphore mask 8 .*not modelled"),
    ],
)
def test_an_unmodelled_hand_off_is_an_error(semaphore, setc16, message):
    source = handoff_kernel(semaphore, setc16)
    with pytest.raises(emu.EmulatorError, match=message):
        run_compute(source, torch.zeros(32, 32), 1, False)


def test_zeroacc_clears_dst():
    source = one_tile_kernel("MATH((ckernel::zeroacc()));")
    got = run_compute(source, torch.ones(32, 32), 1, False)
    assert (got == 0).all()


def test_a_raw_sfpu_instruction_builds_and_fails_when_run():
    """Kernels written in Tensix instructions (moe_gate_mm's top-k) build; executing one is an error naming it."""
    source = """
        #include "api/compute/common.h"
        #include "api/compute/compute_kernel_api.h"
        void kernel_main() {
            tile_regs_acquire();
            MATH(TTI_SFPLOAD(p_sfpu::LREG0, InstrModLoadStore::FP16B, ADDR_MOD_3, 0));
        }
    """
    with pytest.raises(emu.EmulatorError, match=r"raw SFPU instruction SFPLOAD is not emulated"):
        run_compute(source, torch.zeros(32, 32), 1, False)


UNARY_API_HEADERS = ("api/compute/eltwise_unary/softplus.h", "api/compute/eltwise_unary/sqrt.h")


def bits(value: float) -> str:
    return hex(np.float32(value).view(np.uint32).item()) + "u"


@pytest.mark.parametrize("fp32_dest", [False, True])
@pytest.mark.parametrize("op", ["sqrt", "softplus"])
def test_the_wheels_sqrt_and_softplus_run_unmodified_through_the_compute_api(wheel, op, fp32_dest):
    gen = torch.Generator().manual_seed(7)
    x = (torch.randn(32, 32, generator=gen) * 6).bfloat16().float()
    if op == "sqrt":
        x = x.abs()
        call = "sqrt_tile_init(); sqrt_tile(0);"
        want = torch.sqrt(x.double())
    else:
        beta, threshold = 2.0, 20.0
        call = f"softplus_tile_init(); softplus_tile(0, {bits(beta)}, {bits(1 / beta)}, {bits(threshold)});"
        want = torch.nn.functional.softplus(x.double(), beta=beta, threshold=threshold)
    got = run_compute(
        one_tile_kernel(call, includes=UNARY_API_HEADERS), x, 1, fp32_dest, FP32 if fp32_dest else BF16
    ).double()
    # bf16 DST: the result rounded to bf16 (nearest); fp32 DST into an fp32 CB: the SFPU kernel's own accuracy.
    relative = 1e-5 if fp32_dest else 2**-8 * (1 + 1e-3)
    # softplus without INP_FLOAT32 (the build of a bf16 input) is the wheel's bf16 kernel: a degree-6 polynomial
    # of the residual log(1 + exp(-|t|)) on [0, 5] and none past it, within 4e-3 absolute by its own design.
    absolute = 1e-6 if op == "sqrt" else 4e-3
    assert ((got - want).abs() <= relative * want.abs() + absolute).all(), (got - want).abs().max()
