"""The dependency arrows: model -> ops -> program -> {emulator, hardware}, nothing back.

The ops package names no target: the emulator and the hardware adapter register themselves as
launch targets (`register_target`). The model gets its ttnn from one resolver (tt/ttnn_api.py),
the only model file that may name the emulator."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "ttnn_moe" / "python" / "ttnn_moe"


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def offenders(files, forbidden: tuple[str, ...]) -> dict[str, set[str]]:
    found = {}
    for path in files:
        bad = {m for m in imported_modules(path) if m.startswith(forbidden)}
        if bad:
            found[str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)] = bad
    return found


def test_the_ops_import_neither_the_emulator_nor_the_hardware_adapter():
    assert offenders(sorted((PACKAGE / "ops").rglob("*.py")), ("ttnn_moe.emu", "ttnn_moe.hardware")) == {}


def test_only_the_resolver_of_the_model_names_the_emulator():
    model_files = sorted((ROOT / "models").rglob("*.py"))
    assert set(offenders(model_files, ("ttnn_moe.emu",))) == {"models/deepseek_v3/tt/ttnn_api.py"}


def test_the_checker_sees_an_import_of_the_emulator(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from ttnn_moe.emu.generic_op import last_run_counters\n")
    assert offenders([probe], ("ttnn_moe.emu",)) == {
        str(probe): {"ttnn_moe.emu.generic_op", "ttnn_moe.emu.generic_op.last_run_counters"}
    }
