"""The survey of Tenstorrent's MoE-path kernels against the emulator's headers (tools/ttmetal_kernel_survey)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import ttmetal_kernel_survey as survey
from tools.tt_wheel import ensure_ttnn_wheel


@pytest.fixture(scope="module")
def wheel() -> Path:
    return ensure_ttnn_wheel()


def write_kernel(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def test_a_kernel_using_only_emulated_api_parses_with_placeholder_args(wheel, tmp_path):
    kernel = write_kernel(
        tmp_path,
        "reader_ok.cpp",
        '#include "api/dataflow/dataflow_api.h"\n'
        "void kernel_main() {\n"
        "    constexpr uint32_t n = get_compile_time_arg_val(3);\n"
        '    constexpr uint32_t cb = get_named_compile_time_arg_val("cb_in");\n'
        "    cb_reserve_back(cb, n);\n"
        "    cb_push_back(cb, n);\n"
        "}\n",
    )
    [result] = survey.survey(wheel, [("test", kernel)])
    assert result.parses, result.first_error
    assert result.kind == "NCRISC"


def test_a_missing_header_is_the_reported_error(wheel, tmp_path):
    kernel = write_kernel(
        tmp_path, "writer_missing.cpp", '#include "api/compute/no_such_api.h"\nvoid kernel_main() {}\n'
    )
    [result] = survey.survey(wheel, [("test", kernel)])
    assert not result.parses
    assert result.first_error.startswith("writer_missing.cpp:1: ")
    assert "api/compute/no_such_api.h" in result.first_error


def test_an_undeclared_device_api_is_named_and_compute_kernels_are_built_as_trisc(wheel, tmp_path):
    kernel = write_kernel(
        tmp_path,
        "compute_undeclared.cpp",
        '#include "api/compute/tile_move_copy.h"\n'
        "void kernel_main() {\n"
        "#ifndef COMPILE_FOR_TRISC\n"
        "#error not a TRISC build\n"
        "#endif\n"
        "    copy_tile(0, 0, 0);\n"
        "    no_such_tile_op(0);\n"
        "}\n",
    )
    [result] = survey.survey(wheel, [("test", kernel)])
    assert result.kind == "compute"
    assert result.first_error.startswith("compute_undeclared.cpp:7: ")
    assert "no_such_tile_op" in result.first_error


def test_a_metal2_kernel_gets_placeholder_bindings_for_the_names_it_uses(wheel, tmp_path):
    body = (
        '#include "api/dataflow/dataflow_api.h"\n'
        '#include "api/dataflow/noc_semaphore.h"\n'
        '#include "experimental/kernel_args.h"\n'
        "void kernel_main() {\n"
        "    constexpr uint32_t n = get_arg(args::num_tiles);\n"
        "    Semaphore ready(sem::ready);\n"
        "    const auto out = TensorAccessor(tensor::out);\n"
        "    cb_reserve_back(dfb::in0, n);\n"
        "}\n"
    )
    kernel = write_kernel(tmp_path, "reader_metal2.cpp", body)
    undeclared = write_kernel(tmp_path, "reader_metal2_bad.cpp", body.replace("dfb::in0, n", "dfb::in0, args::n"))
    bindings = survey.placeholder_bindings([kernel])
    assert bindings.compile_time_values == [("num_tiles", survey.PLACEHOLDER_ARG)]
    assert [(t.name, t.accessor_cta_offset) for t in bindings.tensors] == [("out", 0)]
    assert (bindings.dataflow_buffers, bindings.semaphores) == ([("in0", 0)], [("ready", 0)])
    ok, bad = survey.survey(wheel, [("test", kernel), ("test", undeclared)])
    assert ok.parses, ok.first_error
    # An accessor is not a value: only get_arg() reads it.
    assert not bad.parses


def test_every_surveyed_op_has_kernels_in_the_wheel(wheel):
    kernels = survey.wheel_kernels(wheel)
    assert {op for op, _ in kernels} == set(survey.SURVEYED_OPS)
    assert all(path.suffix == ".cpp" and path.is_file() for _, path in kernels)
    assert len({path for _, path in kernels}) == len(kernels)


def test_tenstorrents_unary_kernels_parse_and_the_summary_counts_them(wheel):
    unary = [(op, path) for op, path in survey.wheel_kernels(wheel) if op == "eltwise_unary"]
    results = survey.survey(wheel, unary)
    assert [r.parses for r in results] == [True, True, True], [r.first_error for r in results]
    broken = survey.SurveyResult("test", Path("/x.cpp"), "x.cpp:1: boom")
    assert survey.summary([*results, broken]) == "3 of 4 kernels parse against the emulator's headers"


def test_tenstorrents_deepseek_grouped_gate_kernels_parse(wheel):
    gate = [(op, path) for op, path in survey.wheel_kernels(wheel) if op == "deepseek_grouped_gate"]
    results = survey.survey(wheel, gate)
    assert len(results) == 3 and all(r.parses for r in results), [r.first_error for r in results]


# The MoE compute kernels that run SFPU code below the compute API or LLK calls of their own: moe_compute's
# (activation on the packer's SFPU), the fused fast-reduce's (the FPU binary's MATH init), the prefill
# grouped top-k's (sqrt and softplus through the wheel's SFPU kernels) and moe_gate_mm's (raw SFPU top-k
# networks under TRISC_MATH, which build and fail when run).
MOE_SFPU_COMPUTE_KERNELS = [
    "experimental/ccl/moe_compute/device/kernels/compute.cpp",
    "experimental/reduction/deepseek_moe_fast_reduce_nc_fused/device/kernels/deepseek_moe_fast_reduce_nc_fused_compute.cpp",
    "experimental/deepseek_prefill/moe_grouped_topk/device/kernels/compute/moe_grouped_topk.cpp",
    "experimental/deepseek/moe/moe_gate_mm/device/kernels/compute.cpp",
]


def test_the_moe_sfpu_compute_kernels_parse(wheel):
    wanted = {wheel / survey.OPS_ROOT / k for k in MOE_SFPU_COMPUTE_KERNELS}
    kernels = [(op, path) for op, path in survey.wheel_kernels(wheel) if path in wanted]
    assert {path for _, path in kernels} == wanted
    results = survey.survey(wheel, kernels)
    assert all(r.parses and r.kind == "compute" for r in results), [r.first_error for r in results]
