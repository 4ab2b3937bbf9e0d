"""Conformance check: do our kernels use the tt-metal 0.81.1 device API as it really is?

The emulator runs kernels against its own re-implementation of the kernel API, so a
kernel calling something that does not exist in 0.81.1 (`mm_init`, `add_tiles_init`),
or calling a real function with the wrong arguments, could pass every emulator test
and still fail to build on hardware. This check parses each kernel with a host C++
compiler (`-fsyntax-only`) against the REAL headers of the `ttnn==0.81.1` wheel, the
way tt-metal's JIT builds it for a Wormhole B0 (see `tools.conformance.jit`):

- dataflow kernels twice, as BRISC (NOC 0) and NCRISC (NOC 1);
- compute kernels three times, as TRISC0/1/2 (unpack, math, pack).

A configuration passes when no build reports an error, and no warning that the
device build turns into an error (`-Wall -Werror`, minus the categories it exempts)
points into the kernel's own sources. Two host artifacts are tolerated: pointer to
32-bit integer casts (fine on the 32-bit RISC-V target) and anything the wheel's own
headers warn about.

The compiler must accept `static_assert(false)` in templates, which the 0.81.1
object-API headers use: clang++ >= 17 or g++ >= 13 (Debian 12: `apt-get install -y
clang-19`). `$TTNN_MOE_CONFORMANCE_CXX` overrides the choice.

Usage:
    from tools.conformance.check import check_kernel
    result = check_kernel("reader.cpp", "dataflow", compile_time_args=(2, 2048), named_args={"cb_in": 0})
    assert result.ok, result.report()

Kernels declare their own configurations in `// conformance:` comment lines (the
convention is documented in `tools.conformance.registry`); `check_registry()` checks every
kernel under `ttnn_moe/kernels/` and `tests/kernels/`.

Results are cached in `$TTNN_MOE_CACHE/conformance/` under a hash of the kernel
sources (and the project headers they include), the arguments, the wheel version,
the compiler version and this checker's own files, so an unchanged suite compiles
nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from loguru import logger

from tools.conformance import jit
from tools.conformance.jit import ComputeConfig
from tools.conformance.registry import KernelSpec, Registry, discover
from tools.tt_wheel import DEFAULT_VERSION, cache_root, ensure_ttnn_wheel

_TOOL_DIR = Path(__file__).resolve().parent
_REPO_ROOT = _TOOL_DIR.parents[1]
_DIAGNOSTIC = re.compile(
    r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): (?P<severity>fatal error|error|warning): "
    r"(?P<message>.*)$"
)
_LOCAL_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)
_COMPILE_TIMEOUT_S = 300
_OUTPUT_KEPT_CHARS = 6000


def stubs_dir() -> Path:
    """The stand-ins for the RISC-V toolchain's sfpi.h / lltt.h."""
    return _TOOL_DIR / "stubs"


def default_roots() -> list[Path]:
    """Where the project's kernels live: the ops' kernels and the test kernels."""
    return [_REPO_ROOT / "ttnn_moe" / "kernels", _REPO_ROOT / "tests" / "kernels"]


@dataclass(frozen=True)
class Diagnostic:
    file: str
    line: int
    column: int
    severity: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.message}"


@dataclass
class ProcessorResult:
    processor: str  # brisc, ncrisc, trisc0, trisc1, trisc2
    ok: bool
    problems: list[Diagnostic]
    output: str  # the compiler's output (truncated), for context around the problems


@dataclass
class CheckResult:
    kernel: Path
    kind: str
    label: str
    processors: list[ProcessorResult]
    cached: bool
    seconds: float

    @property
    def ok(self) -> bool:
        return all(p.ok for p in self.processors)

    def problems(self) -> list[Diagnostic]:
        return [d for p in self.processors for d in p.problems]

    def report(self) -> str:
        """One line per processor, then the problems (with compiler context) of those that failed."""
        title = f"{'PASS' if self.ok else 'FAIL'} {self.kernel}" + (f" [{self.label}]" if self.label else "")
        lines = [f"{title} ({self.kind}{', cached' if self.cached else ''}, {self.seconds:.1f} s)"]
        for p in self.processors:
            lines.append(f"  {p.processor}: {'ok' if p.ok else f'{len(p.problems)} problem(s)'}")
        for p in self.processors:
            if not p.ok:
                lines.append(f"--- {p.processor}:")
                lines += [f"  {d}" for d in p.problems]
                lines += ["  compiler output:", *("    " + line for line in p.output.splitlines())]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"processors": [asdict(p) for p in self.processors]}

    @classmethod
    def from_json(cls, data: dict, kernel: Path, kind: str, label: str, seconds: float) -> CheckResult:
        processors = [
            ProcessorResult(p["processor"], p["ok"], [Diagnostic(**d) for d in p["problems"]], p["output"])
            for p in data["processors"]
        ]
        return cls(kernel, kind, label, processors, cached=True, seconds=seconds)


def _is_under(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def classify_diagnostics(output: str, returncode: int, foreign_roots: list[Path]) -> list[Diagnostic]:
    """The diagnostics that fail the check. `foreign_roots`: trees whose own warnings are not ours to fix."""
    problems = []
    for line in output.splitlines():
        match = _DIAGNOSTIC.match(line)
        if not match:
            continue
        d = Diagnostic(match["file"], int(match["line"]), int(match["column"]), match["severity"], match["message"])
        if d.severity != "warning":
            problems.append(d)
            continue
        location = Path(d.file).resolve()
        if _is_under(location, foreign_roots) or location.parts[:2] == ("/", "usr"):
            continue
        host_pointer_width = d.message.endswith("[-fpermissive]") and "loses precision" in d.message
        exempt_category = any(d.message.endswith(f"[{flag}]") for flag in jit.NON_FATAL_WARNINGS)
        if not host_pointer_width and not exempt_category:
            problems.append(d)
    if returncode != 0 and not problems:
        problems.append(Diagnostic("<compiler>", 0, 0, "error", f"exited with code {returncode}"))
    return problems


def _project_sources(kernel: Path, foreign_roots: list[Path]) -> list[Path]:
    """The kernel and the project headers it includes with quotes (recursively); wheel headers excluded."""
    found, pending = [], [kernel]
    while pending:
        source = pending.pop()
        if source in found:
            continue
        found.append(source)
        for name in _LOCAL_INCLUDE.findall(source.read_text(errors="replace")):
            for base in (source.parent, kernel.parent):
                candidate = (base / name).resolve()
                if candidate.is_file() and not _is_under(candidate, foreign_roots):
                    pending.append(candidate)
                    break
    return sorted(found)


def _cache_key(spec: KernelSpec, wheel_root: Path, compiler: jit.HostCompiler, foreign_roots: list[Path]) -> str:
    digest = hashlib.sha256()
    description = {
        "kind": spec.kind,
        "ct_args": list(spec.compile_time_args),
        "named": sorted(spec.named_args.items()),
        "defines": sorted(spec.defines.items()),
        "formats": sorted(spec.cb_formats.items()),
        "config": asdict(spec.compute_config),
        "wheel": (wheel_root / ".unpacked").read_text() if (wheel_root / ".unpacked").is_file() else str(wheel_root),
        "compiler": compiler.version_line,
    }
    digest.update(json.dumps(description, sort_keys=True).encode())
    checker_files = [Path(jit.__file__), Path(__file__), *sorted(stubs_dir().iterdir())]
    for source in _project_sources(spec.path, foreign_roots) + checker_files:
        digest.update(str(source).encode() if source == spec.path else source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()


def _check_processor(
    spec: KernelSpec, processor: jit.Processor, wheel_root: Path, compiler: jit.HostCompiler
) -> ProcessorResult:
    with tempfile.TemporaryDirectory(prefix="ttnn_moe_conformance_") as tmp:
        gen_dir = Path(tmp)
        jit.write_generated_files(gen_dir, spec.path, spec.kind, spec.defines, spec.cb_formats, spec.compute_config)
        command = jit.compiler_command(
            compiler,
            wheel_root,
            stubs_dir(),
            gen_dir,
            spec.path,
            spec.kind,
            processor,
            spec.compile_time_args,
            spec.named_args,
            spec.defines,
        )
        completed = subprocess.run(command, capture_output=True, text=True, timeout=_COMPILE_TIMEOUT_S)
        output = completed.stdout + completed.stderr
        foreign = [wheel_root.resolve(), stubs_dir().resolve(), gen_dir.resolve()]
        problems = classify_diagnostics(output, completed.returncode, foreign)
    return ProcessorResult(processor.name, not problems, problems, output[:_OUTPUT_KEPT_CHARS])


def check_spec(
    spec: KernelSpec,
    *,
    wheel_root: Path | None = None,
    cache_dir: Path | None = None,
    compiler: str | None = None,
    jobs: int = 2,
) -> CheckResult:
    """Check one kernel configuration on every processor of its kind (cached).

    `compiler`: a C++ compiler command (default: see `conformance_jit.find_compiler`).
    """
    spec = dataclasses.replace(spec, path=Path(spec.path).resolve())
    if not spec.path.is_file():
        raise ValueError(f"kernel source not found: {spec.path}")
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    wheel_root = (wheel_root or ensure_ttnn_wheel(DEFAULT_VERSION)).resolve()
    cache_dir = cache_dir or cache_root() / "conformance"
    foreign_roots = [wheel_root, stubs_dir().resolve()]
    host_compiler = jit.find_compiler(compiler)
    start = time.perf_counter()

    key = _cache_key(spec, wheel_root, host_compiler, foreign_roots)
    cache_file = cache_dir / f"{key}.json"
    if cache_file.is_file():
        result = CheckResult.from_json(
            json.loads(cache_file.read_text()), spec.path, spec.kind, spec.label, time.perf_counter() - start
        )
    else:
        processors = jit.DATAFLOW_PROCESSORS if spec.kind == "dataflow" else jit.COMPUTE_PROCESSORS
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(lambda p: _check_processor(spec, p, wheel_root, host_compiler), processors))
        result = CheckResult(
            spec.path, spec.kind, spec.label, results, cached=False, seconds=time.perf_counter() - start
        )
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = cache_file.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps(result.to_json()))
        partial.replace(cache_file)
    logger.info(
        "conformance {} {}{} ({}: {}){}",
        "PASS" if result.ok else "FAIL",
        spec.path.name,
        f" [{spec.label}]" if spec.label else "",
        spec.kind,
        ", ".join(p.processor for p in result.processors),
        " cached" if result.cached else "",
    )
    return result


def check_kernel(
    path: str | Path,
    kind: str,
    defines: dict[str, str] | None = None,
    compile_time_args: tuple[int, ...] | list[int] = (),
    named_args: dict[str, int] | None = None,
    *,
    cb_formats: dict[int, str] | None = None,
    compute_config: ComputeConfig | None = None,
    label: str = "",
    wheel_root: Path | None = None,
    cache_dir: Path | None = None,
    compiler: str | None = None,
    jobs: int = 2,
) -> CheckResult:
    """Check one kernel with the given compile-time args, named args and defines (see the module doc)."""
    for value in list(compile_time_args) + list((named_args or {}).values()):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**32:
            raise ValueError(f"compile-time args are unsigned 32-bit integers, got {value!r}")
    spec = KernelSpec(
        path=Path(path).resolve(),
        kind=kind,
        compile_time_args=tuple(compile_time_args),
        named_args=dict(named_args or {}),
        defines={k: str(v) for k, v in (defines or {}).items()},
        cb_formats={int(k): jit.canonical_format(v) for k, v in (cb_formats or {}).items()},
        compute_config=compute_config or ComputeConfig(),
        label=label,
    )
    return check_spec(spec, wheel_root=wheel_root, cache_dir=cache_dir, compiler=compiler, jobs=jobs)


def check_registry(roots: list[Path] | None = None, **options) -> tuple[Registry, list[CheckResult]]:
    """Discover the kernels under `roots` (default: `default_roots()`) and check every declared configuration."""
    registry = discover(roots if roots is not None else default_roots())
    return registry, [check_spec(spec, **options) for spec in registry.specs]
