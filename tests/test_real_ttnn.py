"""The ops through the real ttnn 0.81.1 runtime on mock Wormhole and Blackhole devices and meshes.

The cases are scripts/real_ttnn.sh's (tools/real_ttnn/matrix.py), each in its own subprocess of the
real-ttnn environment (Python 3.12 or 3.10, no torch) with a timeout, judged as the runner judges
them. Also here: the ops import without torch, the model calls only real ttnn API, the installed
kernels find their headers. Nothing here runs on silicon.
"""

import ast
import json
import os
import subprocess
from pathlib import Path

import pytest
from ttnn_moe.emu.kernel_programs import EMULATOR_KERNEL_DIRS

from tools.conformance.jit import DEVICE_DEFINES
from tools.real_ttnn import matrix
from tools.real_ttnn.env import NoInterpreter, ensure_env, installed_project
from tools.real_ttnn.recorded_builds import HostBuild, build_recorded, read_compile_log

ROOT = Path(__file__).resolve().parents[1]
CHECK_API = ROOT / "tools" / "real_ttnn" / "check_api.py"
CASES = {f"{case.device}-{case.name}": case for case in matrix.all_cases()}


@pytest.fixture(scope="module")
def env_python():
    try:
        return ensure_env(log=lambda message: None)
    except NoInterpreter as missing:
        pytest.fail(f"the real-runtime checks did not run: {missing}")


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_case_of_the_real_ttnn_matrix(env_python, tmp_path, case_id):
    """Every case of scripts/real_ttnn.sh, judged as the runner judges it."""
    case = CASES[case_id]
    passed, text = matrix.judge(case, matrix.run_case(env_python, case, tmp_path))
    assert passed, f"{case.op} {case.device} {case.name}: {text}"


def test_the_matrix_covers_every_op_on_every_device():
    ops = {p.name for p in (ROOT / "ttnn_moe" / "kernels").iterdir() if p.is_dir() and p.name != "common"}
    ops -= set(EMULATOR_KERNEL_DIRS)
    single = {c.op for c in CASES.values() if c.device == "n150" and c.expect == "compile"}
    assert ops - {"all_to_all_dispatch_dense", "all_to_all_combine_dense"} <= single
    assert {c.op for c in CASES.values() if c.device == "p150" and c.expect == "compile"} == single
    fabric = {(c.device, c.op) for c in CASES.values() if "mesh" in c.spec and c.expect == "compile"}
    for device in ("n300", "t3k_1x8", "t3k_2x4_2d"):
        assert {(device, "all_to_all_dispatch_dense"), (device, "all_to_all_combine_dense")} <= fabric
    # An op whose cases name their kernels (one program each) compiles every kernel in some case.
    for op in ops:
        named = [set(c.spec["kernels"]) for c in CASES.values() if c.op == op and "kernels" in c.spec]
        if named:
            assert set().union(*named) == matrix.kernels_of(op), op


def test_a_rejected_case_fails_the_judgement():
    """The judge is not a rubber stamp: a compile that misses a kernel, a kernel that does not build with
    the recorded flags (or no recorded build at all), or the wrong verdict, fails."""
    case = CASES["n150-scatter_decode"]
    both = {"reader_gather_rows", "writer_rows"}
    clean = [HostBuild(k, "brisc", True, (), False) for k in sorted(both)]
    assert matrix.judge(case, matrix.Verdict("compile", "", both, host_builds=clean))[0]
    broken = [clean[0], HostBuild("writer_rows", "brisc", False, (), False)]
    passed, text = matrix.judge(case, matrix.Verdict("compile", "", both, host_builds=broken))
    assert not passed and "host builds with the recorded flags: 1/2 clean" in text and "FAIL writer_rows" in text
    assert not matrix.judge(case, matrix.Verdict("compile", "", both))[0]
    missing_one = matrix.judge(case, matrix.Verdict("compile", "", {"reader_gather_rows"}))
    assert missing_one == (False, "compile (1/2 kernels); never compiled: ['writer_rows']")
    assert not matrix.judge(case, matrix.Verdict("rejected", "too big"))[0]
    negative = CASES["n150-misfit_cb_past_l1"]
    assert not matrix.judge(negative, matrix.Verdict("compile", ""))[0]


def test_ops_and_hardware_adapter_import_without_torch(env_python, tmp_path):
    probe = (
        "import sys, ttnn, ttnn_moe, ttnn_moe.hardware\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "assert ttnn.moe_bmm is ttnn_moe.moe_bmm\n"
        "assert ttnn.all_to_all_dispatch_dense is ttnn_moe.all_to_all_dispatch_dense\n"
        "print('ok')\n"
    )
    done = subprocess.run([str(env_python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]
    torch_present = subprocess.run([str(env_python), "-c", "import torch"], capture_output=True, timeout=120)
    assert torch_present.returncode != 0, "the real-ttnn environment must not have torch"


def model_ttnn_calls() -> dict[str, set[str]]:
    """Every `ttnn.<function>(..., keyword=...)` call in the model, with its keywords."""
    calls: dict[str, set[str]] = {}
    for path in (ROOT / "models").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            function = getattr(node, "func", None)
            if isinstance(node, ast.Call) and isinstance(function, ast.Attribute):
                if isinstance(function.value, ast.Name) and function.value.id == "ttnn":
                    calls.setdefault(function.attr, set()).update(k.arg for k in node.keywords if k.arg)
    return calls


def test_the_model_calls_only_functions_and_keywords_of_the_real_ttnn(env_python, tmp_path):
    calls = model_ttnn_calls()
    assert {"all_gather", "reduce_scatter", "from_torch", "to_layout"} <= set(calls), "the model's calls were not found"
    table = json.dumps({name: sorted(keywords) for name, keywords in calls.items()})
    done = subprocess.run(
        [str(env_python), str(CHECK_API), table], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("API ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    assert json.loads(lines[-1][len("API ") :]) == []


def test_the_api_check_finds_a_missing_function_and_a_wrong_keyword(env_python, tmp_path):
    table = json.dumps({"all_gather": ["dim", "cluster_axes"], "moe_gate_fused": []})
    done = subprocess.run(
        [str(env_python), str(CHECK_API), table], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    problems = json.loads(next(line for line in done.stdout.splitlines() if line.startswith("API "))[4:])
    assert problems == ["ttnn.all_gather takes no keyword 'cluster_axes'", "ttnn.moe_gate_fused does not exist"]


def test_the_installed_kernels_find_the_project_headers_they_include(env_python, tmp_path):
    """The kernels the runtime compiles are the wheel's copies: every header they include by a path
    relative to themselves (shared headers, kernels/common) must be installed beside them."""
    probe = (
        "import pathlib, re, ttnn_moe.paths as paths\n"
        "root = paths.kernels_dir()\n"
        "assert 'site-packages' in str(root), root\n"
        "missing, checked = [], 0\n"
        "for source in sorted(root.rglob('*')):\n"
        "    if source.suffix not in ('.cpp', '.hpp', '.h'):\n"
        "        continue\n"
        '    for name in re.findall(r\'#include "([^"]+)"\', source.read_text()):\n'
        "        target = (source.parent / name).resolve()\n"
        "        if name.startswith('.') or target.exists():\n"
        "            checked += 1\n"
        "            if not target.exists():\n"
        "                missing.append(f'{source.relative_to(root)}: {name}')\n"
        "print('INCLUDES', checked, missing)\n"
    )
    done = subprocess.run([str(env_python), "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    line = next((line for line in done.stdout.splitlines() if line.startswith("INCLUDES ")), None)
    assert done.returncode == 0 and line, done.stderr[-3000:]
    checked, missing = line.split(" ", 2)[1:]
    assert int(checked) > 20 and missing == "[]", line


def test_the_recorded_real_api_listing_is_current(env_python, tmp_path):
    """tests/data/real_ttnn_0.81.1_api.json (what the test double is checked against) is what the
    real ttnn prints now."""
    done = subprocess.run(
        [str(env_python), str(ROOT / "tools" / "real_ttnn" / "record_api.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    recorded = json.loads((ROOT / "tests" / "data" / "real_ttnn_0.81.1_api.json").read_text())
    assert json.loads(done.stdout) == recorded


def test_recorded_builds_use_the_architectures_own_flags_and_catch_a_bad_kernel(env_python, tmp_path):
    """A Blackhole case's recorded commands carry Blackhole's defines and headers, and replaying them
    fails once a kernel calls the dataflow API wrongly: the check is not a rubber stamp."""
    case = CASES["p150-scatter_decode"]
    verdict = matrix.run_case(env_python, case, tmp_path)
    assert verdict.kind == "compile" and all(b.ok for b in verdict.host_builds), verdict.host_builds
    recorded = [c for c in read_compile_log(tmp_path / "compile.log") if c.is_kernel_compile]
    assert {c.kernel for c in recorded} == {"reader_gather_rows", "writer_rows"}
    for command in recorded:
        assert "-DARCH_BLACKHOLE" in command.args and "-DARCH_WORMHOLE" not in command.args
        assert any(a.startswith("-I") and "ckernels/blackhole" in a for a in command.args)

    # The writer's build now also includes code calling the dataflow API with a wrong argument count.
    writer = next(c for c in recorded if c.kernel == "writer_rows")
    generated = writer.cwd.parent / "kernel_includes.hpp"
    misuse = tmp_path / "misuse.hpp"
    misuse.write_text("inline void flush_writes() { noc_async_write_barrier(7, 8); }\n")
    generated.write_text(generated.read_text() + f'#include "{misuse}"\n')

    project = installed_project(env_python)
    builds = {b.kernel: b for b in build_recorded(tmp_path / "compile.log", tmp_path, [project / "kernels"])}
    assert builds["reader_gather_rows"].ok
    assert not builds["writer_rows"].ok
    assert any(d.file == str(misuse) and d.severity == "error" for d in builds["writer_rows"].problems)


def test_the_conformance_checks_device_defines_are_the_real_wormhole_builds(env_python, tmp_path):
    """The offline conformance check (tools/conformance) parses kernels with a Wormhole B0's device-wide
    defines; they are the ones the real JIT passes on an n150, not invented ones."""
    verdict = matrix.run_case(env_python, CASES["n150-scatter_decode"], tmp_path)
    assert verdict.kind == "compile", verdict.message
    per_kernel = ("PROCESSOR_INDEX", "COMPILE_FOR_", "NOC_INDEX", "FULL_KERNEL_NAME", "KERNEL_COMPILE_TIME_ARGS")
    for command in (c for c in read_compile_log(tmp_path / "compile.log") if c.is_kernel_compile):
        defines = dict(
            (a[2:].split("=", 1) + [None])[:2]
            for a in command.args
            if a.startswith("-D") and not a[2:].startswith(per_kernel)
        )
        assert defines == DEVICE_DEFINES, f"{command.kernel} ({command.processor})"


def run_device_only_demo(env_python, workdir, cluster=None):
    env = dict(os.environ, TTNN_MOE_BACKEND="hardware", PYTHONPATH=str(ROOT), TT_METAL_CACHE=str(workdir / "cache"))
    env.pop("TT_METAL_MOCK_CLUSTER_DESC_PATH", None)
    if cluster:
        env.update(TT_METAL_MOCK_CLUSTER_DESC_PATH=str(matrix.CLUSTERS / cluster))
        env.update(TTNN_MOE_COMPILE_LOG=str(workdir / "compile.log"))
    command = [str(env_python), "-m", "models.deepseek_v3.device_only_demo", "--mesh", "t3k"]
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=matrix.CASE_TIMEOUT_S)


def test_the_hardware_demo_without_torch_runs_the_layer_to_the_first_kernel_compile(env_python, tmp_path):
    """`demo.sh --backend hardware` on a mock T3K: the layer (model code unchanged, weights allocated on the
    mesh) goes through the real runtime until its first kernel compile, and says so in one line."""
    done = run_device_only_demo(env_python, tmp_path, cluster="wormhole_t3k.yaml")
    lines = [line for line in done.stderr.splitlines() if line.startswith("device-only demo:")]
    assert done.returncode == 3, done.stderr[-3000:]
    assert lines == [
        "device-only demo: the runtime accepted the layer's ops up to its first kernel compile, after stage "
        "'input'; this machine has no Tenstorrent kernel toolchain (a mock device), so it stops here"
    ]
    assert any(c.is_kernel_compile for c in read_compile_log(tmp_path / "compile.log"))


def test_the_hardware_demo_without_a_device_says_how_to_use_a_mock(env_python, tmp_path):
    done = run_device_only_demo(env_python, tmp_path)
    lines = [line for line in done.stderr.splitlines() if line.startswith("device-only demo:")]
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-3000:]
    assert "No chips detected" in lines[0] and "TT_METAL_MOCK_CLUSTER_DESC_PATH" in lines[0]
