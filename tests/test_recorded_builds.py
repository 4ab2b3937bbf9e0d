"""Replaying the real JIT's compile commands on the host (tools/real_ttnn/recorded_builds.py): what is
kept of the recorded command, what is dropped, and the one host artifact forgiven."""

from pathlib import Path

from tools.conformance.check import Diagnostic
from tools.conformance.jit import HostCompiler
from tools.real_ttnn import recorded_builds
from tools.real_ttnn.recorded_builds import RecordedCompile, host_command, read_compile_log

WHEEL = Path("/env/site-packages/ttnn")
CLANG = HostCompiler("/usr/bin/clang++-19", "clang", 19, "clang version 19")
ARGS = (
    "-O2 -std=c++17 -ftt-nttp -flto=1 -ffast-math -g -MMD -Wall -Werror -Wno-error=parentheses "
    "--param=min-pagesize=0 -mcpu=tt-bh -I. -I.. -I/env/site-packages/ttnn/tt_metal/hw/inc -DARCH_BLACKHOLE "
    '-DNOC_INDEX=1 -DFULL_KERNEL_NAME="writer_rows/123/" -DKERNEL_COMPILE_TIME_ARGS=2,32 '
    "-include named_ct_arg_map_generated.h -c -o /scratch/k/writer_rows/123/brisc/brisck.o "
    f"{WHEEL}/tt_metal/hw/firmware/src/tt-1xx/brisck.cc -MF /scratch/k/writer_rows/123/brisc/brisck.d"
).split(" ")


def test_log_lines_give_the_directory_kernel_and_processor(tmp_path):
    log = tmp_path / "compile.log"
    fabric = ["-c", '-DFULL_KERNEL_NAME="fabric_erisc_router/9/"', "router.cc"]
    link = ["-o", "out.elf", '-DFULL_KERNEL_NAME="writer_rows/123/"']
    lines = [
        "/scratch/k/writer_rows/123/brisc\t" + "\t".join(ARGS),
        "/x\t" + "\t".join(fabric),
        "/y\t" + "\t".join(link),
    ]
    log.write_text("\n".join(lines) + "\n")
    recorded, router, linker = read_compile_log(log)
    assert (recorded.kernel, recorded.processor, recorded.cwd) == (
        "writer_rows",
        "brisc",
        Path(lines[0].split("\t")[0]),
    )
    assert recorded.source == f"{WHEEL}/tt_metal/hw/firmware/src/tt-1xx/brisck.cc"
    assert recorded.is_kernel_compile and not router.is_kernel_compile and not linker.is_kernel_compile
    assert read_compile_log(tmp_path / "absent.log") == []


def test_host_command_keeps_the_real_includes_defines_and_warnings_and_drops_code_generation():
    command = host_command(RecordedCompile(Path("/scratch"), ARGS), CLANG)
    assert command[:2] == [CLANG.path, "-fsyntax-only"]
    for kept in ("-std=c++17", "-Wall", "-Wno-error=parentheses", "-I.", "-I..", "-DARCH_BLACKHOLE", "-DNOC_INDEX=1"):
        assert kept in command
    assert command[command.index("-include") + 1] == "named_ct_arg_map_generated.h"
    assert f"{WHEEL}/tt_metal/hw/firmware/src/tt-1xx/brisck.cc" in command
    for dropped in ("-O2", "-ftt-nttp", "-flto=1", "-ffast-math", "-g", "-MMD", "-Werror", "-mcpu=tt-bh", "-c"):
        assert dropped not in command
    assert not any(a.endswith((".o", ".d")) for a in command), "the object and dependency files are not written"
    assert command[-1] == f"-I{recorded_builds.stubs_dir()}", "the toolchain stand-ins come last on the path"


def test_only_the_wheels_riscv_register_names_are_forgiven():
    in_wheel = f"{WHEEL}/tt_metal/hw/inc/internal/tt-1xx/risc_common.h"
    register = "unknown register name 't1' in asm"
    assert recorded_builds._is_host_artifact(Diagnostic(in_wheel, 157, 19, "error", register), WHEEL)
    assert not recorded_builds._is_host_artifact(Diagnostic("/ours/kernel.cpp", 3, 1, "error", register), WHEEL)
    other = "no member named 'x' in namespace 'sfpi'"
    assert not recorded_builds._is_host_artifact(Diagnostic(in_wheel, 1, 1, "error", other), WHEEL)
