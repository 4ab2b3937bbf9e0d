"""What tt-metal 0.81.1's kernel JIT feeds the compiler, rebuilt for a host syntax check.

tt-metal never compiles a kernel file directly: it writes a few generated files
into the kernel's build directory and compiles a firmware wrapper from the wheel
(`brisck.cc`, `ncrisck.cc`, `trisck.cc`) that includes them:

- dataflow: `kernel_includes.hpp` (`#include "<kernel>"`), `chlkc_descriptors.h`
  (per-CB data formats and tile shapes); user defines go on the command line;
- compute: `chlkc_unpack.cpp` / `chlkc_math.cpp` / `chlkc_pack.cpp` (each defines
  `TRISC_<STAGE>`, includes `defines_generated.h` and the kernel), the same
  `chlkc_descriptors.h` (plus math fidelity, approx mode, DST accumulation and
  sync mode), and `defines_generated.h` with the user defines.

This module writes those files and builds the compiler command with the include
directories and defines of a Wormhole B0 build (arch, processor, NOC, bank counts),
so the check parses exactly the code the device build would. Only `sfpi.h` and
`lltt.h`, which come with the RISC-V toolchain rather than the wheel, are replaced
by stand-ins (see `tools/conformance/stubs/`).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

NUM_CIRCULAR_BUFFERS = 32  # Wormhole's CB count: every descriptor array has this length.

# DataFormat values of tensix_types.h (Wormhole B0) and the byte size of one 32x32 tile.
_DATA_FORMATS: dict[str, tuple[int, int]] = {
    "Float32": (0, 4096),
    "Float16_b": (5, 2048),
    "Bfp8_b": (6, 1088),
    "Bfp4_b": (7, 576),
    "Int32": (8, 4096),
    "UInt16": (9, 2048),
    "UInt32": (24, 4096),
    "UInt8": (30, 1024),
}
_FORMAT_ALIASES = {
    "float32": "Float32",
    "bfloat16": "Float16_b",
    "bfloat8_b": "Bfp8_b",
    "bfloat4_b": "Bfp4_b",
    "int32": "Int32",
    "uint16": "UInt16",
    "uint32": "UInt32",
    "uint8": "UInt8",
}
_MATH_FIDELITY = {"LoFi": 0, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}

# Device-wide defines of a Wormhole B0 (12 DRAM banks, 64 worker L1 banks), as the real 0.81.1 JIT
# passes them on an n150 (tests/test_real_ttnn.py compares them with its recorded commands).
DEVICE_DEFINES = {
    "ARCH_WORMHOLE": None,
    "TENSIX_FIRMWARE": None,
    "LOCAL_MEM_EN": "0",
    "KERNEL_BUILD": None,
    "ROUTING_FW_ENABLED": None,
    "DISPATCH_MESSAGE_ADDR": "4290183304",
    "PROGRAMMABLE_CORE_TYPE": "0",  # TENSIX
    "NUM_DRAM_BANKS": "12",
    "IS_NOT_POW2_NUM_DRAM_BANKS": "1",
    "NUM_L1_BANKS": "64",
    "LOG_BASE_2_OF_NUM_L1_BANKS": "6",
    "PCIE_NOC_X": "0",
    "PCIE_NOC_Y": "3",
    "NOC_MODE": "0",  # DM_DEDICATED_NOC
}

# Wheel-relative include directories, in the order the JIT passes them.
_COMMON_INCLUDES = [
    ".",
    "ttnn",
    "ttnn/cpp",
    "tt_metal",
    "tt_metal/include",
    "tt_metal/hw/inc",
    "tt_metal/hostdevcommon/api",
    "tt_metal/hw/inc/debug",
    "tt_metal/api",
    "tt_metal/hw/ckernels/wormhole_b0/metal/common",
    "tt_metal/hw/ckernels/wormhole_b0/metal/llk_io",
    "tt_metal/hw/inc/internal/tt-1xx",
    "tt_metal/hw/inc/internal/tt-1xx/wormhole",
    "tt_metal/hw/inc/internal/tt-1xx/wormhole/wormhole_b0_defines",
    "tt_metal/hw/inc/internal/tt-1xx/wormhole/noc",
    "tt_metal/tt-llk/tt_llk_wormhole_b0/common/inc",
    "tt_metal/tt-llk/tt_llk_wormhole_b0/llk_lib",
    "tt_metal/tt-llk/common",
    "tt_metal/tt-llk/tools/include",
]
_COMPUTE_INCLUDES = [
    "tt_metal/hw/ckernels/wormhole_b0/metal/llk_api",
    "tt_metal/hw/ckernels/wormhole_b0/metal/llk_api/llk_sfpu",
]
_FIRMWARE_DIR = "tt_metal/hw/firmware/src/tt-1xx"

# The device build's warning policy: -Wall -Werror, minus these categories.
_DEVICE_WARNING_FLAGS = [
    "-Wall",
    "-Wno-unknown-pragmas",
    "-Wno-deprecated-declarations",
    "-Wno-unused-variable",
    "-Wno-unused-function",
]
# Warnings the device build leaves as warnings (-Wno-error=...).
NON_FATAL_WARNINGS = ("-Wmultistatement-macros", "-Wparentheses", "-Wunused-but-set-variable")
# What parsing 32-bit RISC-V device code on a 64-bit host needs: RISC-V attributes are
# unknown here, and integer <-> pointer casts change width (harmless on the device).
HOST_FLAGS = {
    "gcc": [
        "-fpermissive",
        "-Wno-attributes",
        "-Wno-int-to-pointer-cast",
        "-fdiagnostics-plain-output",
        "-fmax-errors=40",
    ],
    # -fms-extensions turns clang's pointer-to-smaller-int cast error into a warning;
    # the template-keyword check is a clang-only strictness the wheel's headers trip.
    "clang": [
        "-fms-extensions",
        "-Wno-pointer-to-int-cast",
        "-Wno-int-to-pointer-cast",
        "-Wno-unknown-attributes",
        "-Wno-missing-template-arg-list-after-template-kw",
        "-fno-caret-diagnostics",
        "-fno-color-diagnostics",
        "-ferror-limit=40",
    ],
}
# `static_assert(false, ...)` in templates (used by the object API's misuse guards) is
# accepted from GCC 13 and clang 17 on (P2593); older compilers reject the headers.
_MINIMUM_VERSION = {"gcc": 13, "clang": 17}
_CANDIDATES = ["clang++-19", "clang++-18", "clang++-17", "clang++", "g++-14", "g++-13", "g++"]
COMPILER_ENV = "TTNN_MOE_CONFORMANCE_CXX"


@dataclass(frozen=True)
class HostCompiler:
    path: str
    family: str  # gcc or clang
    major: int
    version_line: str

    def flags(self) -> list[str]:
        return ["-std=c++17", "-fsyntax-only", "-fno-exceptions", *_DEVICE_WARNING_FLAGS, *HOST_FLAGS[self.family]]


def probe_compiler(path: str) -> HostCompiler | None:
    """Family and major version of a C++ compiler on PATH (None if it does not run)."""
    executable = shutil.which(path)
    if executable is None:
        return None
    completed = subprocess.run([executable, "--version"], capture_output=True, text=True)
    first_line = completed.stdout.splitlines()[0] if completed.stdout else ""
    match = re.search(r"(\d+)\.\d+(\.\d+)?", first_line)
    if completed.returncode != 0 or match is None:
        return None
    family = "clang" if "clang" in first_line else "gcc"
    return HostCompiler(executable, family, int(match.group(1)), first_line)


@functools.lru_cache(maxsize=None)
def find_compiler(requested: str | None = None) -> HostCompiler:
    """The compiler to check with: `requested`, else $TTNN_MOE_CONFORMANCE_CXX, else the first adequate one."""
    names = [requested] if requested else ([os.environ[COMPILER_ENV]] if os.environ.get(COMPILER_ENV) else _CANDIDATES)
    seen = []
    for name in names:
        compiler = probe_compiler(name)
        if compiler is None:
            continue
        seen.append(f"{name} ({compiler.version_line})")
        if compiler.major >= _MINIMUM_VERSION[compiler.family]:
            return compiler
    raise RuntimeError(
        "the conformance check needs clang++ >= 17 or g++ >= 13 (the 0.81.1 headers use static_assert(false) "
        f"in templates); found: {seen or 'none of ' + str(names)}. On Debian 12: apt-get install -y clang-19"
    )


@dataclass(frozen=True)
class Processor:
    """One RISC-V core a kernel is built for, with the defines tt-metal's HAL gives it."""

    name: str  # brisc, ncrisc, trisc0 (unpack), trisc1 (math), trisc2 (pack)
    wrapper: str  # firmware wrapper source in the wheel
    defines: tuple[tuple[str, str | None], ...]


DATAFLOW_PROCESSORS = (
    Processor("brisc", "brisck.cc", (("COMPILE_FOR_BRISC", None), ("PROCESSOR_INDEX", "0"), ("NOC_INDEX", "0"))),
    Processor("ncrisc", "ncrisck.cc", (("COMPILE_FOR_NCRISC", None), ("PROCESSOR_INDEX", "1"), ("NOC_INDEX", "1"))),
)
COMPUTE_STAGES = ("unpack", "math", "pack")
COMPUTE_PROCESSORS = tuple(
    Processor(
        f"trisc{i}",
        "trisck.cc",
        (
            (f"UCK_CHLKC_{stage.upper()}", None),
            ("NAMESPACE", f"chlkc_{stage}"),
            ("COMPILE_FOR_TRISC", str(i)),
            ("PROCESSOR_INDEX", str(i + 2)),
            ("NOC_INDEX", "0"),
        ),
    )
    for i, stage in enumerate(COMPUTE_STAGES)
)


def canonical_format(name: str) -> str:
    """DataFormat name (`Float16_b`) for a DataFormat or ttnn dtype name (`bfloat16`)."""
    resolved = _FORMAT_ALIASES.get(name, name)
    if resolved not in _DATA_FORMATS:
        raise ValueError(f"unknown data format {name!r}; known: {sorted(_DATA_FORMATS) + sorted(_FORMAT_ALIASES)}")
    return resolved


@dataclass(frozen=True)
class ComputeConfig:
    """The ComputeConfigDescriptor fields that reach the generated descriptors."""

    math_fidelity: str = "HiFi4"
    fp32_dest_acc_en: bool = False
    math_approx_mode: bool = False
    dst_full_sync_en: bool = False

    def __post_init__(self) -> None:
        if self.math_fidelity not in _MATH_FIDELITY:
            raise ValueError(f"unknown math fidelity {self.math_fidelity!r}; known: {sorted(_MATH_FIDELITY)}")


def descriptors_header(cb_formats: dict[int, str], config: ComputeConfig) -> str:
    """`chlkc_descriptors.h`: per-CB formats and tile shapes (Float16_b where not given) and compute modes."""
    formats = []
    for cb in range(NUM_CIRCULAR_BUFFERS):
        formats.append(canonical_format(cb_formats.get(cb, "Float16_b")))
    codes = [_DATA_FORMATS[f][0] for f in formats]
    sizes = [_DATA_FORMATS[f][1] for f in formats]
    float16_b = _DATA_FORMATS["Float16_b"][0]
    float32 = _DATA_FORMATS["Float32"][0]
    # Block-float and bf16 data sit in the source/DST registers as bf16 (fp32 with fp32 accumulation).
    register = [
        float32
        if config.fp32_dest_acc_en and f == "Float32"
        else (float16_b if f.startswith("Bfp") else _DATA_FORMATS[f][0])
        for f in formats
    ]

    def array(ctype: str, name: str, values) -> str:
        return f"constexpr {ctype} {name}[{NUM_CIRCULAR_BUFFERS}] = {{{', '.join(str(v) for v in values)}}};\n"

    def tile_dims(prefix: str) -> str:
        n = NUM_CIRCULAR_BUFFERS
        return (
            array("uint8_t", f"{prefix}_tile_num_faces", [4] * n)
            + array("uint8_t", f"{prefix}_partial_face", [0] * n)
            + array("uint8_t", f"{prefix}_tile_face_r_dim", [16] * n)
            + array("uint8_t", f"{prefix}_narrow_tile", [0] * n)
            + array("uint8_t", f"{prefix}_tile_r_dim", [32] * n)
            + array("uint8_t", f"{prefix}_tile_c_dim", [32] * n)
            + array("uint16_t", f"{prefix}_tile_size", sizes)
            + array("uint8_t", f"{prefix}_num_faces_r_dim", [2] * n)
            + array("uint8_t", f"{prefix}_num_faces_c_dim", [2] * n)
        )

    return (
        "#pragma once\n\n"
        '#if defined(UCK_CHLKC_MATH)\n#include "llk_defs.h"\n'
        "constexpr ckernel::MathFidelity MATH_FIDELITY = "
        f"static_cast<ckernel::MathFidelity>({_MATH_FIDELITY[config.math_fidelity]});\n"
        "#endif\n\n"
        "#if !defined(UCK_CHLKC_PACK)\n"
        + array("std::int32_t", "unpack_src_format", codes)
        + array("std::int32_t", "unpack_dst_format", register)
        + tile_dims("unpack")
        + "#endif\n\n"
        "#if !defined(UCK_CHLKC_MATH) && !defined(UCK_CHLKC_UNPACK)\n"
        + array("unsigned char", "pack_src_format", register)
        + array("unsigned char", "pack_dst_format", codes)
        + tile_dims("pack")
        + "#if defined(UCK_CHLKC_PACK)\n"
        + array("std::int32_t", "unpack_src_format", codes)
        + "#endif\n#endif\n\n"
        "#if defined(UCK_CHLKC_MATH) || defined(UCK_CHLKC_PACK) || defined(UCK_CHLKC_UNPACK)\n"
        f"constexpr bool DST_ACCUM_MODE = {str(config.fp32_dest_acc_en).lower()};\n"
        f"#define DST_SYNC_MODE DstSync::Sync{'Full' if config.dst_full_sync_en else 'Half'}\n"
        # The compute API uses APPROX on the pack thread too (the *_tile_pack SFPU helpers).
        f"constexpr bool APPROX = {str(config.math_approx_mode).lower()};\n"
        "#endif\n"
    )


def write_generated_files(
    gen_dir: Path, kernel: Path, kind: str, defines: dict[str, str], cb_formats: dict[int, str], config: ComputeConfig
) -> None:
    """Write the files the JIT generates for one kernel into `gen_dir`."""
    include_kernel = f'#include "{kernel}"\n'
    (gen_dir / "chlkc_descriptors.h").write_text(descriptors_header(cb_formats, config))
    if kind == "dataflow":
        (gen_dir / "kernel_includes.hpp").write_text(include_kernel)
        return
    (gen_dir / "defines_generated.h").write_text("".join(f"#define {k} {v}\n" for k, v in defines.items()))
    for stage in COMPUTE_STAGES:
        prolog = f'#define TRISC_{stage.upper()}\n#include "defines_generated.h"\n'
        (gen_dir / f"chlkc_{stage}.cpp").write_text(prolog + include_kernel)


def compiler_command(
    compiler: HostCompiler,
    wheel_root: Path,
    stubs_dir: Path,
    gen_dir: Path,
    kernel: Path,
    kind: str,
    processor: Processor,
    compile_time_args: tuple[int, ...],
    named_args: dict[str, int],
    defines: dict[str, str],
) -> list[str]:
    """The -fsyntax-only command that parses `kernel` as `processor` would build it."""
    includes = [gen_dir, kernel.parent] + [wheel_root / d for d in _COMMON_INCLUDES]
    if kind == "compute":
        includes += [wheel_root / d for d in _COMPUTE_INCLUDES]
    includes.append(wheel_root / _FIRMWARE_DIR)
    if kind == "compute":
        includes.append(stubs_dir)  # where the RISC-V toolchain's sfpi/include would be

    macro_defs = {**DEVICE_DEFINES, **dict(processor.defines)}
    if kind == "dataflow":
        macro_defs.update(defines)  # compute defines live in defines_generated.h instead
    if compile_time_args:
        macro_defs["KERNEL_COMPILE_TIME_ARGS"] = ",".join(str(v) for v in compile_time_args)
    if named_args:
        macro_defs["KERNEL_COMPILE_TIME_ARG_MAP"] = ", ".join(f'{{"{k}",{v}}}' for k, v in named_args.items())

    return [
        compiler.path,
        *compiler.flags(),
        *(f"-I{p}" for p in includes),
        *(f"-D{k}" if v is None else f"-D{k}={v}" for k, v in macro_defs.items()),
        str(wheel_root / _FIRMWARE_DIR / processor.wrapper),
    ]
