"""Which kernels the conformance check covers, and with which arguments.

Every kernel source (`*.cpp`) under the registry roots declares how to build it in
comment lines of its own, one line per configuration to check:

    // conformance: kind=compute ct_args=2,1 named=cb_in0:0,cb_out:16 defines=FUSE_SILU=1;SCALE=2
    // conformance: kind=dataflow named=cb_in:0 formats=0:bfloat8_b
    // conformance: exempt reason=does not compile on purpose (an emulator error test)

Keys (whitespace separates them; values contain no spaces):
- `kind`: `dataflow` (checked as BRISC and NCRISC) or `compute` (checked as
  TRISC0/1/2 = unpack/math/pack). Required.
- `ct_args`: positional compile-time args, comma-separated unsigned ints.
- `named`: named compile-time args, `name:value` pairs separated by commas.
- `defines`: `NAME=VALUE` or `NAME` items separated by semicolons.
- `formats`: CB data formats, `cb:format` pairs (`bfloat16`, `bfloat8_b`, `float32`,
  `uint32`, ... or DataFormat names); unlisted CBs are bfloat16.
- `fp32_dest_acc`, `approx`: `0`/`1`; `math_fidelity`: LoFi/HiFi2/HiFi3/HiFi4.
- `label`: a short name for the configuration in reports.
- `exempt reason=<rest of the line>`: the kernel is not checked, and says why.

The values should be representative of what the kernel's program factory passes:
the check compiles the kernel with exactly these, so a named arg the kernel reads
but the line omits is an error, as it would be on the device.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tools.conformance.jit import ComputeConfig, canonical_format

_LINE = re.compile(r"^\s*//\s*conformance:(.*)$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KEYS = {"kind", "ct_args", "named", "defines", "formats", "fp32_dest_acc", "approx", "math_fidelity", "label"}
KINDS = ("dataflow", "compute")


@dataclass(frozen=True)
class KernelSpec:
    """One configuration of one kernel to check."""

    path: Path
    kind: str
    compile_time_args: tuple[int, ...] = ()
    named_args: dict[str, int] = field(default_factory=dict)
    defines: dict[str, str] = field(default_factory=dict)
    cb_formats: dict[int, str] = field(default_factory=dict)
    compute_config: ComputeConfig = ComputeConfig()
    label: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kernel kind must be one of {KINDS}, got {self.kind!r} for {self.path}")

    @property
    def name(self) -> str:
        return f"{self.path.name}[{self.label}]" if self.label else self.path.name


@dataclass(frozen=True)
class Exemption:
    path: Path
    reason: str


def _parse_uint(text: str, what: str, where: str) -> int:
    if not text.isdigit() or int(text) >= 2**32:
        raise ValueError(f"{where}: {what} must be an unsigned 32-bit integer, got {text!r}")
    return int(text)


def _parse_pairs(text: str, what: str, where: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(","):
        key, sep, value = item.partition(":")
        if not sep or not key or not value:
            raise ValueError(f"{where}: {what} items are key:value, got {item!r}")
        pairs.append((key, value))
    return pairs


def parse_line(text: str, path: Path, where: str) -> KernelSpec | Exemption:
    """Parse the part after `// conformance:` of one line."""
    tokens = text.split()
    if tokens and tokens[0] == "exempt":
        _, _, reason = text.partition("reason=")
        if not reason.strip():
            raise ValueError(f"{where}: an exempt kernel needs reason=<why> (the rest of the line)")
        return Exemption(path, reason.strip())
    fields: dict[str, str] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or key not in _KEYS:
            raise ValueError(f"{where}: unknown conformance field {token!r}; known: {sorted(_KEYS)}")
        if key in fields:
            raise ValueError(f"{where}: field {key!r} given twice")
        fields[key] = value
    if "kind" not in fields:
        raise ValueError(f"{where}: kind=dataflow|compute is required")

    ct_args = (
        tuple(_parse_uint(v, "ct_args", where) for v in fields["ct_args"].split(",")) if "ct_args" in fields else ()
    )
    named = {}
    for key, value in _parse_pairs(fields["named"], "named", where) if "named" in fields else []:
        if not _NAME.match(key):
            raise ValueError(f"{where}: named arg {key!r} is not an identifier")
        named[key] = _parse_uint(value, f"named arg {key}", where)
    defines = {}
    for item in fields["defines"].split(";") if "defines" in fields else []:
        name, _, value = item.partition("=")
        if not _NAME.match(name):
            raise ValueError(f"{where}: define {item!r} does not start with an identifier")
        defines[name] = value if value else "1"
    formats = {}
    for cb, fmt in _parse_pairs(fields["formats"], "formats", where) if "formats" in fields else []:
        index = _parse_uint(cb, "CB index", where)
        formats[index] = canonical_format(fmt)
    flags = {}
    for key in ("fp32_dest_acc", "approx"):
        if key in fields and fields[key] not in ("0", "1"):
            raise ValueError(f"{where}: {key} is 0 or 1, got {fields[key]!r}")
        flags[key] = fields.get(key) == "1"
    config = ComputeConfig(
        math_fidelity=fields.get("math_fidelity", "HiFi4"),
        fp32_dest_acc_en=flags["fp32_dest_acc"],
        math_approx_mode=flags["approx"],
    )
    return KernelSpec(path, fields["kind"], ct_args, named, defines, formats, config, fields.get("label", ""))


def parse_kernel_file(path: Path) -> list[KernelSpec | Exemption]:
    """All `// conformance:` lines of a kernel source, parsed (empty if it has none)."""
    entries = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        match = _LINE.match(line)
        if match:
            entries.append(parse_line(match.group(1), path, f"{path}:{number}"))
    exemptions = [e for e in entries if isinstance(e, Exemption)]
    if exemptions and len(entries) > 1:
        raise ValueError(f"{path}: an exempt kernel cannot also declare configurations")
    return entries


@dataclass
class Registry:
    specs: list[KernelSpec]
    exemptions: list[Exemption]
    undeclared: list[Path]  # kernel sources with no conformance line: a defect to fix


def discover(roots: list[Path]) -> Registry:
    """Every `*.cpp` under `roots` (missing roots are skipped), with its declared configurations."""
    specs, exemptions, undeclared = [], [], []
    for root in roots:
        for path in sorted(root.rglob("*.cpp")) if root.is_dir() else []:
            entries = parse_kernel_file(path)
            if not entries:
                undeclared.append(path)
            for entry in entries:
                (exemptions if isinstance(entry, Exemption) else specs).append(entry)
    return Registry(specs, exemptions, undeclared)
