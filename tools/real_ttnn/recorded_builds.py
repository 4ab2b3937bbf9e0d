"""Our kernels, compiled on the host with the very flags the real 0.81.1 JIT used for them.

When a case reaches the kernel compile, tt-metal's JIT has already written each kernel's generated
files (`kernel_includes.hpp` or `chlkc_{unpack,math,pack}.cpp`, `chlkc_descriptors.h`,
`defines_generated.h`, `named_ct_arg_map_generated.h`) into its build directory and handed the
RISC-V compiler one command per processor; the compiler stand-in recorded each command with its
working directory (one line, tab-separated). This module replays those commands with a host clang
in syntax-only mode: the include paths, defines, forced includes, language and warning flags are the
real build's (per architecture: a Blackhole build has Blackhole's), only the RISC-V code-generation
flags are dropped and the RISC-V toolchain's `sfpi.h` / `lltt.h` come from our stand-ins
(`tools/conformance/stubs`). A build passes under the same rule as the conformance check: no error,
and no warning the device build makes fatal pointing into our own sources.

Results are cached in `$TTNN_MOE_CACHE/recorded-builds/` under a hash of the command (with the
case's scratch directory taken out), the generated files, our installed kernel sources and the
compiler, so a repeated run compiles nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tools.conformance import jit
from tools.conformance.check import Diagnostic, classify_diagnostics, stubs_dir
from tools.tt_wheel import cache_root

_KERNEL_NAME = re.compile(r'^-DFULL_KERNEL_NAME="?([^/"]+)/')
# Flags of the RISC-V build that only steer code generation (or GCC's own extensions): a syntax
# check has no use for them and clang rejects some (-ftt-*, -mcpu=tt-*, --param=...).
_CODEGEN_PREFIXES = ("-O", "-ftt-", "-flto", "-mcpu=", "--param", "-g", "-fno-tree-loop-distribute-patterns")
_CODEGEN_FLAGS = {
    "-ffast-math",
    "-fno-finite-math-only",
    "-fsigned-zeros",
    "-fno-associative-math",
    "-fno-use-cxa-atexit",
    "-MMD",
    "-c",
    # clang's -Wall is wider than GCC's and flags the wheel's own headers; the warnings are classified
    # instead: one pointing into our sources fails the build (tools.conformance.check.classify_diagnostics).
    "-Werror",
}
_FLAGS_WITH_VALUE = {"-o", "-MF"}  # dropped with their value
_TIMEOUT_S = 300
_ASM_REGISTER = re.compile(r"^unknown register name '\w+' in asm$")


@dataclass(frozen=True)
class RecordedCompile:
    """One compile command the JIT issued, as the stand-in recorded it."""

    cwd: Path
    args: tuple[str, ...]

    @property
    def kernel(self) -> str:
        return next((m[1] for a in self.args if (m := _KERNEL_NAME.match(a))), "")

    @property
    def source(self) -> str:
        return next((a for a in self.args if a.endswith((".cc", ".cpp"))), "")

    @property
    def processor(self) -> str:
        """brisc, ncrisc, trisc0..2 (the directory the JIT builds that processor's object in)."""
        return self.cwd.name

    @property
    def is_kernel_compile(self) -> bool:
        """A compile (not a link) of a user kernel (not tt-metal's fabric router)."""
        return "-c" in self.args and bool(self.kernel) and not self.kernel.startswith("fabric_")


@dataclass(frozen=True)
class HostBuild:
    kernel: str
    processor: str
    ok: bool
    problems: tuple[Diagnostic, ...]
    cached: bool

    def __str__(self) -> str:
        head = f"{'ok' if self.ok else 'FAIL'} {self.kernel} ({self.processor})"
        return head + "".join(f"\n    {d}" for d in self.problems)


def read_compile_log(path: Path) -> list[RecordedCompile]:
    """Every recorded command of the log (an absent log has none)."""
    if not path.exists():
        return []
    commands = []
    for line in path.read_text().splitlines():
        cwd, *args = line.split("\t")
        commands.append(RecordedCompile(Path(cwd), tuple(args)))
    return commands


# What parsing 32-bit RISC-V code on a 64-bit host needs on top of the real flags: the conformance
# check's clang flags, and silence for the GCC-only warning options among the real flags.
_HOST_ONLY_FLAGS = [*jit.HOST_FLAGS["clang"], "-Wno-unknown-warning-option"]


def host_command(recorded: RecordedCompile, compiler: jit.HostCompiler) -> list[str]:
    """The recorded command as a host syntax check: the real build's includes, defines and warnings."""
    kept: list[str] = []
    args = iter(recorded.args)
    for arg in args:
        if arg in _FLAGS_WITH_VALUE:
            next(args, None)
        elif arg in _CODEGEN_FLAGS or arg.startswith(_CODEGEN_PREFIXES):
            continue
        else:
            kept.append(arg)
    # Last on the include path: the RISC-V toolchain's own headers (sfpi.h, lltt.h) are not in the wheel.
    return [compiler.path, "-fsyntax-only", *kept, *_HOST_ONLY_FLAGS, f"-I{stubs_dir()}"]


def _foreign_roots(recorded: RecordedCompile) -> list[Path]:
    """Trees whose warnings are not ours: the ttnn wheel, the toolchain stand-ins, the JIT's generated files."""
    wheel = Path(recorded.source).resolve().parents[5]  # .../ttnn/tt_metal/hw/firmware/src/tt-1xx/<wrapper>
    return [wheel, stubs_dir().resolve(), recorded.cwd.parent.resolve()]


def _is_host_artifact(diagnostic: Diagnostic, wheel: Path) -> bool:
    """The wheel's inline assembly names RISC-V registers (Blackhole's `t1` clobbers), which an x86 host
    compiler cannot know; the code around it still parses. Nothing else is forgiven."""
    in_wheel = wheel in Path(diagnostic.file).resolve().parents
    return in_wheel and _ASM_REGISTER.match(diagnostic.message) is not None


def _cache_key(recorded: RecordedCompile, command: list[str], scratch: Path, our_sources: list[Path]) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps([a.replace(str(scratch), "<scratch>") for a in command]).encode())
    generated = sorted(p for p in recorded.cwd.parent.iterdir() if p.is_file())
    checker = [Path(__file__), *sorted(stubs_dir().iterdir())]
    for path in generated + sorted(p for d in our_sources for p in d.rglob("*") if p.is_file()) + checker:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _build(recorded: RecordedCompile, compiler: jit.HostCompiler, scratch: Path, our_sources: list[Path]) -> HostBuild:
    command = host_command(recorded, compiler)
    cache_file = cache_root() / "recorded-builds" / f"{_cache_key(recorded, command, scratch, our_sources)}.json"
    if cache_file.is_file():
        problems = tuple(Diagnostic(**d) for d in json.loads(cache_file.read_text()))
        return HostBuild(recorded.kernel, recorded.processor, not problems, problems, cached=True)
    done = subprocess.run(command, cwd=recorded.cwd, capture_output=True, text=True, timeout=_TIMEOUT_S)
    foreign = _foreign_roots(recorded)
    problems = tuple(
        d
        for d in classify_diagnostics(done.stdout + done.stderr, done.returncode, foreign)
        if not _is_host_artifact(d, foreign[0])
    )
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    partial = cache_file.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps([d.__dict__ for d in problems]))
    partial.replace(cache_file)
    return HostBuild(recorded.kernel, recorded.processor, not problems, problems, cached=False)


def build_recorded(log: Path, scratch: Path, our_sources: list[Path], jobs: int = 2) -> list[HostBuild]:
    """Host-compiles every user-kernel command in `log`. `scratch`: the case's directory (left out of
    cache keys); `our_sources`: the directories of the installed `ttnn_moe` kernels and the headers they include."""
    compiler = jit.find_compiler()
    if compiler.family != "clang":
        raise RuntimeError(f"the recorded builds need clang (the real flags are GCC/clang-common); got {compiler}")
    commands = [c for c in read_compile_log(log) if c.is_kernel_compile]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda c: _build(c, compiler, scratch, our_sources), commands))
