"""Conformance of our kernels with the real tt-metal 0.81.1 device API (issue "Tensix emulator", item 10).

Every kernel under ttnn_moe/kernels/ and tests/kernels/ is parsed against the
headers of the downloaded ttnn wheel for every processor that runs it; negative
tests prove the check rejects APIs that 0.81.1 does not have.
"""

from __future__ import annotations

import hashlib
import os
import textwrap
from pathlib import Path

import pytest

from tools.conformance import check as conformance
from tools.conformance.registry import Exemption, KernelSpec, discover, parse_line
from tools.tt_wheel import cache_root, ensure_ttnn_wheel

REPO = Path(__file__).resolve().parents[1]
ROOTS = [REPO / "ttnn_moe" / "kernels", REPO / "tests" / "kernels"]
REGISTRY = discover(ROOTS)


@pytest.fixture(scope="session")
def wheel_root() -> Path:
    # First run on a machine downloads the ~100 MB wheel from PyPI.
    return ensure_ttnn_wheel()


@pytest.fixture
def fresh_cache(tmp_path) -> Path:
    return tmp_path / "conformance-cache"


@pytest.fixture(scope="session")
def kernel_dir() -> Path:
    # A stable place for the negative-test kernels, so their results are cached across runs
    # (the cache key covers the source text and the checker itself).
    directory = cache_root() / "conformance_test_kernels"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def _write_kernel(directory: Path, name: str, source: str) -> Path:
    text = textwrap.dedent(source)
    stem, dot, suffix = name.partition(".")
    # Named by content: runs of different checkouts sharing the cache never overwrite each other.
    path = directory / f"{stem}-{hashlib.sha256(text.encode()).hexdigest()[:12]}{dot}{suffix}"
    if not path.is_file() or path.read_text() != text:
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(path)
    return path


def test_registry_covers_the_sample_kernels():
    names = {spec.path.name for spec in REGISTRY.specs}
    assert {"reader_object_api.cpp", "writer_free_functions.cpp", "compute_matmul.cpp", "compute_eltwise.cpp"} <= names
    assert {spec.kind for spec in REGISTRY.specs} == {"dataflow", "compute"}


def test_every_kernel_declares_how_to_check_it():
    assert REGISTRY.undeclared == [], (
        "kernels without a `// conformance:` line (see tools/conformance/registry.py): "
        + ", ".join(str(p.relative_to(REPO)) for p in REGISTRY.undeclared)
    )
    assert all(e.reason for e in REGISTRY.exemptions)


@pytest.mark.parametrize(
    "spec",
    REGISTRY.specs,
    ids=[str(s.path.relative_to(REPO)) + (f"[{s.label}]" if s.label else "") for s in REGISTRY.specs],
)
def test_kernel_conforms_to_ttnn_0_81_1(spec: KernelSpec, wheel_root):
    result = conformance.check_spec(spec, wheel_root=wheel_root)
    expected = ["brisc", "ncrisc"] if spec.kind == "dataflow" else ["trisc0", "trisc1", "trisc2"]
    assert [p.processor for p in result.processors] == expected
    assert result.ok, result.report()


# ---- the check accepts what tt-metal itself builds ---------------------------------------------

_OPS = Path("ttnn/cpp/ttnn/operations")
_DRAM_TILE_ACCESSOR = (2, 2048)  # TensorAccessorArgs of an interleaved DRAM bf16 tile tensor: IsDram, page size
_TENSTORRENT_KERNELS = [
    (
        "matmul/device/kernels/dataflow/reader_bmm_8bank_output_tiles_partitioned.cpp",
        "dataflow",
        dict(
            compile_time_args=(0, 0, *_DRAM_TILE_ACCESSOR, *_DRAM_TILE_ACCESSOR), named_args={"cb_in0": 0, "cb_in1": 1}
        ),
    ),
    (
        "matmul/device/kernels/compute/bmm.cpp",
        "compute",
        dict(compile_time_args=(1, 2, 3, 4), named_args={"cb_in0": 0, "cb_in1": 1, "cb_out": 16}),
    ),
    (
        "eltwise/unary/device/kernels/dataflow/reader_unary_interleaved_start_id.cpp",
        "dataflow",
        dict(compile_time_args=_DRAM_TILE_ACCESSOR),
    ),
    (
        "eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp",
        "dataflow",
        dict(compile_time_args=(16, *_DRAM_TILE_ACCESSOR)),
    ),
    ("eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp", "compute", dict()),
    (
        "eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp",
        "compute",
        dict(
            defines={
                "SFPU_OP_EXP_INCLUDE": "1",
                "SFPU_OP_CHAIN_0": "SFPU_OP_CHAIN_0_INIT_0 SFPU_OP_CHAIN_0_FUNC_0",
                "SFPU_OP_CHAIN_0_INIT_0": "exp_tile_init();",
                "SFPU_OP_CHAIN_0_FUNC_0": "exp_tile(0);",
            }
        ),
    ),
]


@pytest.mark.parametrize(
    "relative, kind, args",
    _TENSTORRENT_KERNELS,
    ids=[f"{Path(k[0]).name}-{i}" for i, k in enumerate(_TENSTORRENT_KERNELS)],
)
def test_tenstorrent_kernels_from_the_wheel_pass(wheel_root, relative, kind, args):
    # The check must not reject valid 0.81.1 kernels: no false alarms from the stand-ins or host flags.
    result = conformance.check_kernel(wheel_root / _OPS / relative, kind, wheel_root=wheel_root, **args)
    assert result.ok, result.report()


# ---- the check must reject what 0.81.1 does not have -------------------------------------------

_COMPUTE_PROLOG = """\
    #include <cstdint>
    #include "api/compute/cb_api.h"
    #include "api/compute/compute_kernel_hw_startup.h"
    #include "api/compute/eltwise_binary.h"
    #include "api/compute/matmul.h"
    #include "api/compute/pack.h"
    #include "api/compute/reg_api.h"
"""


# Gone in 0.81 (compute_kernel_hw_startup + matmul_init / add_init replace them) or misspelled.
_MISSING_COMPUTE_APIS = {
    "mm_init": "mm_init(0, 1, 16);",
    "add_tiles_init": "add_tiles_init(0, 1);",
    "binary_op_init_common": "binary_op_init_common(0, 1, 16);",
    "matmul_tile": "matmul_tile(0, 1, 0, 0, 0);",  # the real one is matmul_tiles
}


def test_compute_apis_that_do_not_exist_fail_on_every_trisc(kernel_dir, wheel_root):
    calls = "\n        ".join(_MISSING_COMPUTE_APIS.values())
    kernel = _write_kernel(
        kernel_dir,
        "bad_compute.cpp",
        _COMPUTE_PROLOG
        + f"""\
    void kernel_main() {{
        compute_kernel_hw_startup(0, 1, 16);
        {calls}
    }}
    """,
    )
    result = conformance.check_kernel(kernel, "compute", wheel_root=wheel_root)
    assert not result.ok
    for processor in result.processors:
        for name in _MISSING_COMPUTE_APIS:
            assert any(f"'{name}'" in d.message and d.file == str(kernel) for d in processor.problems), (
                f"{processor.processor} did not reject {name}:\n{result.report()}"
            )


def test_compute_call_with_wrong_argument_count_fails(kernel_dir, wheel_root):
    kernel = _write_kernel(
        kernel_dir,
        "bad_arity.cpp",
        _COMPUTE_PROLOG
        + """\
    void kernel_main() {
        compute_kernel_hw_startup(0, 1, 16);
        matmul_init(0, 1);
        matmul_tiles(0, 1, 0, 0);  // idst missing
    }
    """,
    )
    result = conformance.check_kernel(kernel, "compute", wheel_root=wheel_root)
    assert not result.ok
    messages = [d.message for d in result.problems()]
    assert any("matmul_tiles" in m for m in messages), result.report()


def test_dataflow_call_with_wrong_argument_count_fails_on_both_riscs(kernel_dir, wheel_root):
    kernel = _write_kernel(
        kernel_dir,
        "bad_writer.cpp",
        """\
    #include <cstdint>
    #include "api/dataflow/dataflow_api.h"
    void kernel_main() {
        const uint32_t addr = get_arg_val<uint32_t>(0);
        noc_async_write(get_read_ptr(16), get_noc_addr_from_bank_id<true>(0, addr));  // size missing
        noc_async_write_barrier();
    }
    """,
    )
    result = conformance.check_kernel(kernel, "dataflow", wheel_root=wheel_root)
    assert [p.processor for p in result.processors] == ["brisc", "ncrisc"]
    for processor in result.processors:
        assert not processor.ok
        assert any("noc_async_write" in d.message for d in processor.problems), result.report()


def test_named_arg_the_caller_does_not_pass_fails(kernel_dir, wheel_root):
    kernel = _write_kernel(
        kernel_dir,
        "named.cpp",
        """\
    #include <cstdint>
    #include "api/dataflow/dataflow_api.h"
    void kernel_main() {
        constexpr uint32_t cb_in = get_named_compile_time_arg_val("cb_in");
        cb_reserve_back(cb_in, 1);
        cb_push_back(cb_in, 1);
    }
    """,
    )
    good = conformance.check_kernel(
        kernel,
        "dataflow",
        named_args={"cb_in": 0},
        wheel_root=wheel_root,
    )
    assert good.ok, good.report()
    bad = conformance.check_kernel(
        kernel,
        "dataflow",
        named_args={"cb_other": 0},
        wheel_root=wheel_root,
    )
    assert not bad.ok


def test_positional_args_are_passed_and_bounds_checked(kernel_dir, wheel_root):
    kernel = _write_kernel(
        kernel_dir,
        "ct.cpp",
        """\
    #include <cstdint>
    #include "api/dataflow/dataflow_api.h"
    void kernel_main() {
        constexpr uint32_t cb = get_compile_time_arg_val(0);
        constexpr uint32_t pages = get_compile_time_arg_val(1);
        static_assert(pages == 4, "the caller's value reaches the kernel");
        cb_reserve_back(cb, pages);
        cb_push_back(cb, pages);
    }
    """,
    )
    ok = conformance.check_kernel(
        kernel,
        "dataflow",
        compile_time_args=(3, 4),
        wheel_root=wheel_root,
    )
    assert ok.ok, ok.report()
    wrong_value = conformance.check_kernel(
        kernel,
        "dataflow",
        compile_time_args=(3, 5),
        wheel_root=wheel_root,
    )
    assert not wrong_value.ok
    too_few = conformance.check_kernel(
        kernel,
        "dataflow",
        compile_time_args=(3,),
        wheel_root=wheel_root,
    )
    assert not too_few.ok


def test_defines_reach_dataflow_and_compute_kernels(kernel_dir, wheel_root):
    body = """\
    #include <cstdint>
    {include}
    #if !defined(TILES_PER_STEP) || TILES_PER_STEP != 2
    #error "TILES_PER_STEP must arrive as 2"
    #endif
    void kernel_main() {{}}
    """
    dataflow = _write_kernel(kernel_dir, "df_define.cpp", body.format(include='#include "api/dataflow/dataflow_api.h"'))
    compute = _write_kernel(kernel_dir, "cp_define.cpp", body.format(include='#include "api/compute/cb_api.h"'))
    for kernel, kind in ((dataflow, "dataflow"), (compute, "compute")):
        with_define = conformance.check_kernel(kernel, kind, defines={"TILES_PER_STEP": "2"}, wheel_root=wheel_root)
        assert with_define.ok, with_define.report()
        without = conformance.check_kernel(kernel, kind, wheel_root=wheel_root)
        assert not without.ok
        assert any("TILES_PER_STEP must arrive" in d.message for d in without.problems())


def test_warning_in_kernel_fails_like_the_device_build(kernel_dir, wheel_root):
    # The device build compiles with -Wall -Werror.
    kernel = _write_kernel(
        kernel_dir,
        "warns.cpp",
        """\
    #include <cstdint>
    #include "api/dataflow/dataflow_api.h"
    uint32_t pick(uint32_t x) {
        if (x = 3) { return 1; }
        return 0;
    }
    int no_return(uint32_t x) { if (x) { return 1; } }
    void kernel_main() { pick(get_arg_val<uint32_t>(0)); no_return(1); }
    """,
    )
    result = conformance.check_kernel(kernel, "dataflow", wheel_root=wheel_root)
    assert not result.ok
    assert any(d.severity == "warning" and d.file == str(kernel) for d in result.problems()), result.report()


def test_results_are_cached_by_sources_and_args(tmp_path, wheel_root, fresh_cache):
    kernel, helper = tmp_path / "cached.cpp", tmp_path / "helper.hpp"
    kernel.write_text(
        textwrap.dedent("""\
    #include <cstdint>
    #include "api/dataflow/dataflow_api.h"
    #include "helper.hpp"
    void kernel_main() { cb_push_back(get_compile_time_arg_val(0), pages()); }
    """)
    )
    helper.write_text("inline uint32_t pages() { return 1; }\n")
    first = conformance.check_kernel(
        kernel, "dataflow", compile_time_args=(0,), wheel_root=wheel_root, cache_dir=fresh_cache
    )
    second = conformance.check_kernel(
        kernel, "dataflow", compile_time_args=(0,), wheel_root=wheel_root, cache_dir=fresh_cache
    )
    assert first.ok and second.ok
    assert (first.cached, second.cached) == (False, True)
    other_args = conformance.check_kernel(
        kernel, "dataflow", compile_time_args=(1,), wheel_root=wheel_root, cache_dir=fresh_cache
    )
    assert not other_args.cached
    helper.write_text("inline uint32_t pages() { return undefined_name; }\n")  # an included project header changed
    after_edit = conformance.check_kernel(
        kernel, "dataflow", compile_time_args=(0,), wheel_root=wheel_root, cache_dir=fresh_cache
    )
    assert not after_edit.cached and not after_edit.ok
    assert any("undefined_name" in d.message for d in after_edit.problems())


# ---- the comment-line convention ---------------------------------------------------------------


def test_conformance_line_is_parsed(tmp_path):
    spec = parse_line(
        " kind=compute ct_args=2,1 named=cb_in0:0,cb_out:16 defines=A=1;B formats=1:bfloat8_b "
        "fp32_dest_acc=1 math_fidelity=HiFi2 label=x",
        tmp_path / "k.cpp",
        "k.cpp:1",
    )
    assert isinstance(spec, KernelSpec)
    assert spec.kind == "compute" and spec.compile_time_args == (2, 1) and spec.label == "x"
    assert spec.named_args == {"cb_in0": 0, "cb_out": 16}
    assert spec.defines == {"A": "1", "B": "1"}
    assert spec.cb_formats == {1: "Bfp8_b"}
    assert spec.compute_config.fp32_dest_acc_en and spec.compute_config.math_fidelity == "HiFi2"
    exempt = parse_line(" exempt reason=fails to compile on purpose", tmp_path / "k.cpp", "k.cpp:1")
    assert isinstance(exempt, Exemption) and exempt.reason == "fails to compile on purpose"


@pytest.mark.parametrize(
    "line, fragment",
    [
        (" ct_args=1", "kind="),
        (" kind=riscv", "'riscv'"),
        (" kind=compute colour=blue", "'colour=blue'"),
        (" kind=compute ct_args=1,-2", "'-2'"),
        (" kind=compute named=cb_in0", "'cb_in0'"),
        (" kind=compute formats=0:float64", "'float64'"),
        (" kind=compute fp32_dest_acc=yes", "'yes'"),
        (" exempt", "reason="),
    ],
)
def test_bad_conformance_line_names_the_problem(tmp_path, line, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace("[", r"\[")):
        parse_line(line, tmp_path / "k.cpp", "k.cpp:7")


def test_check_kernel_rejects_bad_arguments(tmp_path, wheel_root):
    with pytest.raises(ValueError, match="kind"):
        conformance.check_kernel(tmp_path / "k.cpp", "riscv", wheel_root=wheel_root)
    with pytest.raises(ValueError, match="-1"):
        conformance.check_kernel(tmp_path / "k.cpp", "compute", compile_time_args=(-1,), wheel_root=wheel_root)
    with pytest.raises(ValueError, match="not found"):
        conformance.check_kernel(tmp_path / "missing.cpp", "compute", wheel_root=wheel_root)
