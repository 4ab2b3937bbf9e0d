"""Which of Tenstorrent's MoE-path kernels the emulator's headers can build today.

    .venv/bin/python -m tools.ttmetal_kernel_survey [--wheel DIR]

For every kernel file of the tt-metal 0.81.1 ops on DeepSeek-V3's MoE paths (SURVEYED_OPS), read
from the unpacked ttnn wheel, runs a syntax-only parse with the host compiler the emulator's JIT
uses (`$CXX`, default g++), the emulator's include tree first, the wheel's `ttnn/cpp`,
`tt_metal/api` and SFPU kernels after it (as `ttmetal.use_wheel` sets them), the wheel's `ttnn` (the CCL helpers include
`cpp/ttnn/operations/...`, as `ccl_common.use_kernel_includes` adds it), then the wheel's root (tt-metal's JIT
has the repository root on its path, and the kernel library is included as `ttnn/cpp/ttnn/...`),
and the JIT's flags (-fpermissive: tt-metal's CCL helpers cast L1 pointers to uint32_t) and defines (KERNEL_BUILD,
ARCH_WORMHOLE, NOC_INDEX, COMPILE_FOR_*, TRISC_MATH, TRISC_PACK; see ttnn_moe/cpp/emu/jit.cpp) over the same generated
wrapper and `emu_kernel_config.h` (every CB bfloat16, 32x32 tiles). Prints one line per kernel,
`parses` or the first compiler error (usually the missing header or symbol), then
"N of M kernels parse against the emulator's headers".

A kernel's arguments are the factory's business, so the parse fills them with placeholders:
every compile-time arg is 2 (a TensorAccessorArgs config word of 2 is an interleaved DRAM tensor,
whose next word, its page size, is 2 again), every named compile-time arg the kernel or its
headers ask for is 2 (or the value NAMED_ARG_VALUES gives it), and a few kernels get the defines their
factory always sets (KERNEL_DEFINES, read from the real runtime's recorded builds) without which they are not
meant to compile.
Passing means the emulator declares everything the kernel uses, not that it runs it.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ttnn_moe._C import emu
from ttnn_moe._C import program as pd
from ttnn_moe.emu.ttmetal.wheel import sfpu_header_dir

REPO_ROOT = Path(__file__).resolve().parents[1]
EMU_INCLUDE = REPO_ROOT / "ttnn_moe" / "cpp" / "emu" / "include"
OPS_ROOT = "ttnn/cpp/ttnn/operations"

# op label -> kernel files (relative to OPS_ROOT): a directory stands for every .cpp under it.
SURVEYED_OPS: dict[str, list[str]] = {
    "all_to_all_dispatch": ["ccl/all_to_all_dispatch/device/kernels"],
    "all_to_all_combine": ["ccl/all_to_all_combine/device/kernels"],
    "moe_expert_token_remap": ["data_movement/moe_expert_token_remap/device/kernels"],
    # What ttnn.sparse_matmul builds in 0.81.1 (recorded from the real runtime on a mock n150): the output's zero
    # fill (a unary fill_tile program) and the sparse 1D-multicast matmul, both Metal 2.0 programs whose kernels
    # (the *_metal2 forks) read the JIT's generated kernel_args/kernel_bindings headers.
    "sparse_matmul": [
        "eltwise/unary/device/kernels/dataflow/reader_unary.cpp",
        "eltwise/unary/device/kernels/dataflow/writer_unary.cpp",
        "eltwise/unary/device/kernels/compute/eltwise_sfpu_metal2.cpp",
        "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0_sender_padding_metal2.cpp",
        "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0_receiver_metal2.cpp",
        "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in1_sender_writer_padding_metal2.cpp",
        "matmul/device/kernels/compute/bmm_large_block_zm_fused_bias_activation_metal2.cpp",
    ],
    # Their forks for the factories still on ProgramDescriptors (the same sparse-aware algorithm).
    "matmul 1D mcast (descriptor)": [
        "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0_sender_padding.cpp",
        "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in0_receiver.cpp",
        "matmul/device/kernels/dataflow/reader_bmm_tile_layout_in1_sender_writer_padding.cpp",
        "matmul/device/kernels/compute/bmm_large_block_zm_fused_bias_activation.cpp",
    ],
    # ttnn.mul / ttnn.add on interleaved tiles in 0.81.1 (binary_ng: SFPU mul, FPU add).
    "binary_ng": [
        "eltwise/binary_ng/device/kernels_ng/dataflow/reader_interleaved_no_bcast.cpp",
        "eltwise/binary_ng/device/kernels_ng/dataflow/writer_interleaved_no_bcast.cpp",
        "eltwise/binary_ng/device/kernels/compute/eltwise_binary_sfpu_no_bcast.cpp",
        "eltwise/binary_ng/device/kernels/compute/eltwise_binary_no_bcast.cpp",
    ],
    "eltwise_binary (legacy)": [
        "eltwise/binary/device/kernels/dataflow/reader_binary_interleaved_start_id.cpp",
        "eltwise/binary/device/kernels/compute/eltwise_binary_kernel.cpp",
    ],
    "eltwise_unary": [
        "eltwise/unary/device/kernels/dataflow/reader_unary_interleaved_start_id.cpp",
        "eltwise/unary/device/kernels/dataflow/writer_unary_interleaved_start_id.cpp",
        "eltwise/unary/device/kernels/compute/eltwise_sfpu.cpp",
    ],
    "all_to_all_dispatch_metadata": ["experimental/ccl/all_to_all_dispatch_metadata/device/kernels"],
    "moe_compute": ["experimental/ccl/moe_compute/device/kernels"],
    "selective_reduce_combine": ["experimental/ccl/moe/selective_reduce_combine/device/kernels"],
    "deepseek_moe_reduce_scatter": ["experimental/ccl/deepseek_moe_reduce_scatter/device/kernels"],
    "deepseek_moe_fast_reduce_nc": [
        "experimental/reduction/deepseek_moe_fast_reduce_nc/device/kernels",
        "experimental/reduction/deepseek_moe_fast_reduce_nc_fused/device/kernels",
    ],
    "deepseek_grouped_gate": ["experimental/reduction/deepseek_grouped_gate/device/kernels"],
    # DeepSeek's fused gate matmul with SFPU top-k merges, and the prefill grouped top-k.
    "moe_gate_mm": ["experimental/deepseek/moe/moe_gate_mm/device/kernels"],
    "moe_grouped_topk": ["experimental/deepseek_prefill/moe_grouped_topk/device/kernels"],
}

# Defines a factory always sets for a kernel (from the real 0.81.1 runtime's builds of ttnn.mul / ttnn.add
# and the unary and legacy binary factories): the kernel is not written to compile without them.
KERNEL_DEFINES: dict[str, dict[str, str]] = {
    "eltwise_binary_sfpu_no_bcast.cpp": {
        "BCAST_INPUT": "",
        "BINARY_SFPU_INIT": "mul_binary_tile_init();",
        "BINARY_SFPU_OP": "mul_binary_tile",
        "PROCESS_LHS_ACTIVATIONS(i)": "",
        "PROCESS_RHS_ACTIVATIONS(i)": "",
        "PROCESS_POST_ACTIVATIONS(i)": "",
    },
    "eltwise_binary_no_bcast.cpp": {
        "BCAST_INPUT": "",
        "BINARY_OP": "add_tiles",
        "BINARY_OP_TYPE": "EltwiseBinaryType::ELWADD",
        "PROCESS_LHS_ACTIVATIONS(i)": "",
        "PROCESS_RHS_ACTIVATIONS(i)": "",
        "PROCESS_POST_ACTIVATIONS(i)": "",
    },
    "eltwise_binary_kernel.cpp": {"ELTWISE_OP": "mul_tiles", "ELTWISE_OP_TYPE": "EltwiseBinaryType::ELWMUL"},
    "reader_interleaved_no_bcast.cpp": {"SRC_SHARDED": "0", "SRC_SHARDED_B": "0"},
    "writer_interleaved_no_bcast.cpp": {"DST_SHARDED": "0"},
}
# The fabric CCL writers' routing defines (every factory sets them), for the placeholder mesh of 2 devices.
_CCL_WRITER_DEFINES = {
    "DEST_CHIP_ID": "{0,1}",
    "DEST_MESH_ID": "{0,0}",
    "DIRECTIONS": "{true,true,false,false}",
    "REPLICATE_GROUP_AXIS": "1",
}
for _writer in ("writer_all_to_all_dispatch.cpp", "writer_all_to_all_combine.cpp", "writer.cpp"):
    KERNEL_DEFINES[_writer] = _CCL_WRITER_DEFINES
# all_to_all_dispatch_metadata's factory also picks the routing algorithm (3: the sparse multicast, its default).
# moe_compute's dm1 writes to the combine cores at the NOC coordinates its factory serializes (2 cores here).
KERNEL_DEFINES["dm1.cpp"] = {"OUTPUT_SHARD_CORE_MAP": "{1,1,1,2}"}
KERNEL_DEFINES["writer_all_to_all_dispatch_metadata.cpp"] = {
    **_CCL_WRITER_DEFINES,
    "AXIS": "1",
    "DISPATCH_ALGORITHM": "3",
}

PLACEHOLDER_ARG = 2
# Named args whose placeholder would break a kernel's constant arithmetic, at the value their factory passes on a
# Wormhole: moe_compute's e_t entries (a token id and its k slot, one L1 alignment unit) and its NOC burst size
# (dm1 divides it by a tile's bytes).
NAMED_ARG_VALUES = {"e_t_entry_size": 16, "noc_max_burst_bytes": 8192}
PLACEHOLDER_ARG_COUNT = 96
NUM_CIRCULAR_BUFFERS = 32  # Wormhole (ttnn_moe_emu/abi.h)
FLOAT16_B = 5  # program::DataFormat::Float16_b
_NAMED_ARG = re.compile(r'get_named_compile_time_arg_val\(\s*"([^"]+)"\s*\)')
_QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_BINDING = re.compile(r"\b(args|dfb|sem|tensor)::([A-Za-z_]\w*)")
_COMPUTE_HEADER = re.compile(r'#\s*include\s*[<"](api/compute/|compute_kernel_api)')


@dataclass
class SurveyResult:
    op: str
    kernel: Path  # absolute
    first_error: str | None = None  # None: parses
    kind: str = ""
    defines: dict[str, str] = field(default_factory=dict)

    @property
    def parses(self) -> bool:
        return self.first_error is None

    def line(self, wheel: Path) -> str:
        try:
            name = self.kernel.relative_to(wheel / OPS_ROOT)
        except ValueError:
            name = self.kernel
        return f"{self.op:30s} {name}: {'parses' if self.parses else self.first_error}"


def wheel_kernels(wheel: Path) -> list[tuple[str, Path]]:
    """(op, kernel file) for every surveyed kernel in the wheel, in SURVEYED_OPS order."""
    found = []
    for op, entries in SURVEYED_OPS.items():
        for entry in entries:
            path = wheel / OPS_ROOT / entry
            if path.is_dir():
                found += [(op, p) for p in sorted(path.rglob("*.cpp"))]
            elif path.is_file():
                found.append((op, path))
            else:
                raise FileNotFoundError(f"the ttnn wheel at {wheel} has no {OPS_ROOT}/{entry}")
    return found


def reachable_sources(kernel: Path, search: list[Path]) -> list[Path]:
    """The kernel and every file it reaches through quoted includes found in `search` or beside the includer."""
    seen, todo = [], [kernel]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.append(path)
        for name in _QUOTED_INCLUDE.findall(path.read_text(errors="replace")):
            for base in [path.parent, *search]:
                candidate = (base / name).resolve()
                if candidate.is_file():
                    todo.append(candidate)
                    break
    return seen


def kernel_kind(kernel: Path, sources: list[Path]) -> str:
    """compute, or the data-movement processor the emulator gives it (readers NCRISC, writers BRISC)."""
    if any(_COMPUTE_HEADER.search(s.read_text(errors="replace")) for s in sources):
        return "compute"
    return "NCRISC" if "reader" in kernel.name else "BRISC"


def config_header() -> str:
    """The emulator JIT's generated emu_kernel_config.h for bfloat16 CBs and the default compute config."""

    def array(ctype: str, name: str, value: int) -> str:
        return f"inline constexpr {ctype} {name}[] = {{{','.join([str(value)] * NUM_CIRCULAR_BUFFERS)}}};\n"

    return (
        "#pragma once\n#include <cstdint>\nnamespace ttnn_moe_emu_config {\n"
        + array("uint8_t", "cb_format", FLOAT16_B)
        + array("uint32_t", "cb_tile_size", 2048)
        + array("uint8_t", "cb_tile_r_dim", 32)
        + array("uint8_t", "cb_tile_c_dim", 32)
        + "inline constexpr bool fp32_dest_acc_en = false;\n"
        "inline constexpr bool dst_full_sync_en = false;\n"
        "inline constexpr bool math_approx_mode = false;\n"
        "inline constexpr uint32_t math_fidelity = 4;\n"
        "}  // namespace ttnn_moe_emu_config\n"
    )


def placeholder_bindings(sources: list[Path]):
    """Metal 2.0 kernels: every `args::` name a placeholder compile-time value and every `dfb::`, `sem::` and
    `tensor::` name a binding (None when the kernel uses none). Only the op's own sources count: the emulator's
    headers define the token types, not tokens."""
    used: dict[str, set[str]] = {"args": set(), "dfb": set(), "sem": set(), "tensor": set()}
    for source in sources:
        if EMU_INCLUDE in source.parents:
            continue
        for space, name in _BINDING.findall(source.read_text(errors="replace")):
            used[space].add(name)
    if not any(used.values()):
        return None
    return pd.KernelBindingsDescriptor(
        compile_time_values=[(n, PLACEHOLDER_ARG) for n in sorted(used["args"])],
        dataflow_buffers=[(n, i) for i, n in enumerate(sorted(used["dfb"]))],
        semaphores=[(n, i) for i, n in enumerate(sorted(used["sem"]))],
        tensors=[pd.TensorBindingDescriptor(n, 0, 0) for n in sorted(used["tensor"])],
    )


def compiler() -> str:
    return os.environ.get("CXX") or "g++"


_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<message>.*)$", re.MULTILINE)


def first_error(output: str) -> str:
    """`file:line: message` of the compiler's first error (file by name only)."""
    found = _DIAGNOSTIC.search(output)
    if found:
        return f"{Path(found['file']).name}:{found['line']}: {found['message'].strip()}"
    return output.strip().splitlines()[-1] if output.strip() else "failed without a diagnostic"


def survey_kernel(op: str, kernel: Path, wheel: Path, workdir: Path) -> SurveyResult:
    sfpu = sfpu_header_dir(wheel)
    search = [EMU_INCLUDE, wheel / "ttnn" / "cpp", wheel / "tt_metal" / "api", sfpu, wheel / "ttnn", wheel]
    sources = reachable_sources(kernel, search)
    named = sorted({n for s in sources for n in _NAMED_ARG.findall(s.read_text(errors="replace"))})
    kind = kernel_kind(kernel, sources)
    defines = KERNEL_DEFINES.get(kernel.name, {})
    build = Path(tempfile.mkdtemp(prefix=kernel.stem + "_", dir=workdir))
    (build / "emu_kernel_config.h").write_text(config_header())
    binding_includes = ""
    bindings = placeholder_bindings(sources)
    if bindings is not None:
        args_header, bindings_header = emu.kernel_binding_headers(bindings)
        (build / "kernel_args_generated.h").write_text(args_header)
        (build / "kernel_bindings_generated.h").write_text(bindings_header)
        binding_includes = '#include "kernel_args_generated.h"\n#include "kernel_bindings_generated.h"\n'
    wrapper = build / "kernel_wrapper.cpp"
    wrapper.write_text(
        '#include "emu_kernel_config.h"\n#include "ttnn_moe_emu/kernel_prelude.h"\n'
        + binding_includes
        + f'#include "{kernel}"\n'
        'extern "C" void ttnn_moe_emu_kernel_entry(const ttnn_moe_emu::Services* services) {\n'
        "    ttnn_moe_emu::services = services;\n    kernel_main();\n}\n"
    )
    argv = [compiler(), "-std=c++20", "-fsyntax-only", "-w", "-fpermissive", f"-I{build}", f"-I{EMU_INCLUDE}"]
    argv += [f"-I{kernel.parent}"]
    argv += [f"-I{wheel / 'ttnn' / 'cpp'}", f"-I{wheel / 'tt_metal' / 'api'}", f"-I{sfpu}", f"-I{wheel / 'ttnn'}"]
    argv.append(f"-I{wheel}")
    argv += ["-DKERNEL_BUILD", "-DARCH_WORMHOLE"]
    argv += {
        "compute": ["-DNOC_INDEX=0", "-DCOMPILE_FOR_TRISC", "-DTRISC_MATH", "-DTRISC_PACK"],
        "NCRISC": ["-DNOC_INDEX=1", "-DCOMPILE_FOR_NCRISC"],
        "BRISC": ["-DNOC_INDEX=0", "-DCOMPILE_FOR_BRISC"],
    }[kind]
    argv.append("-DKERNEL_COMPILE_TIME_ARGS=" + ",".join([str(PLACEHOLDER_ARG)] * PLACEHOLDER_ARG_COUNT))
    if named:
        values = {n: NAMED_ARG_VALUES.get(n, PLACEHOLDER_ARG) for n in named}
        argv.append("-DKERNEL_COMPILE_TIME_ARG_MAP=" + ",".join(f'{{"{n}",{v}}}' for n, v in values.items()))
    argv += [f"-D{name}={value}" for name, value in defines.items()]
    argv.append(str(wrapper))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    error = None if done.returncode == 0 else first_error(done.stdout + done.stderr)
    return SurveyResult(op, kernel, error, kind, dict(defines))


def survey(wheel: Path, kernels: list[tuple[str, Path]] | None = None, workers: int = 2) -> list[SurveyResult]:
    kernels = wheel_kernels(wheel) if kernels is None else kernels
    with tempfile.TemporaryDirectory(prefix="ttmetal_survey_") as workdir, ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda item: survey_kernel(item[0], item[1], wheel, Path(workdir)), kernels))


def summary(results: list[SurveyResult]) -> str:
    return f"{sum(r.parses for r in results)} of {len(results)} kernels parse against the emulator's headers"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="unpacked ttnn wheel (default: tools.tt_wheel.ensure_ttnn_wheel())")
    args = parser.parse_args(argv)
    if args.wheel is None:
        from tools.tt_wheel import ensure_ttnn_wheel

        args.wheel = ensure_ttnn_wheel()
    results = survey(args.wheel)
    for result in results:
        print(result.line(args.wheel))
    print(summary(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
