"""The ops through the real ttnn 0.81.1 runtime on mock Wormhole and Blackhole devices.

Each case runs in its own subprocess of the real-ttnn environment (tools/real_ttnn/env.py: Python
3.12 or 3.10, no torch) with a timeout, and ends in one verdict: reached the kernel compile (every
host-side check tt-metal makes passed), rejected by ttnn (its message), crash, or hang. The kernel
compiler there is a stand-in that records each compile command, so the test also sees which
kernels reached the compile: every kernel of the op must. Nothing here runs on silicon.
"""

import ast
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tools.real_ttnn.env import NoInterpreter, ensure_env

ROOT = Path(__file__).resolve().parents[1]
CLUSTERS = ROOT / "tests" / "data" / "mock_clusters"
RUN_CASE = ROOT / "tools" / "real_ttnn" / "run_case.py"
CHECK_API = ROOT / "tools" / "real_ttnn" / "check_api.py"
CASE_TIMEOUT_S = 240

# DeepSeek-V3: H = 7168, I = 2048, K = 8; decode T = 32 and prefill T = 512 tokens per device.
CASES = {
    "prepare_decode": {"op": "prepare_moe_routing_tensors", "T": 32, "K": 8, "E": 8},
    "prepare_prefill": {"op": "prepare_moe_routing_tensors", "T": 512, "K": 8, "E": 8},
    "scatter_decode": {"op": "scatter_moe_input", "T": 32, "H": 7168, "E": 8},
    "moe_bmm_padded_bf16": {"op": "moe_bmm", "E": 8, "T": 32, "H": 7168, "N": 2048, "w_dtype": "bfloat16"},
    "moe_bmm_grouped_bfp8_decode": {"op": "moe_bmm", "E": 8, "M": 256, "H": 7168, "N": 2048, "w_dtype": "bfloat8_b"},
    "moe_bmm_grouped_bfp8_prefill": {"op": "moe_bmm", "E": 8, "M": 2048, "H": 2048, "N": 7168, "w_dtype": "bfloat8_b"},
    "local_reduce_padded": {"op": "local_reduce_moe_output", "E": 8, "T": 32, "H": 7168},
    "local_reduce_grouped": {"op": "local_reduce_moe_output", "E": 8, "M": 512, "H": 7168, "K": 8},
}
DEVICES = {"n150": "wormhole_n150.yaml", "p150": "blackhole_p150.yaml"}
# The fabric ops with FABRIC_1D on a Wormhole n300 (two chips, a 1x2 mesh) and a T3K (eight chips,
# a 1x8 line and a 2x4 mesh): decode (32 tokens per device) and prefill (512), H = 7168, K = 8.
N300 = {"cluster": "wormhole_n300.yaml", "mesh": [1, 2], "fabric": "FABRIC_1D", "axis": 1, "D": 2, "E": 16}
T3K_LINE = {"cluster": "wormhole_t3k.yaml", "mesh": [1, 8], "fabric": "FABRIC_1D", "axis": 1, "D": 8, "E": 256}
T3K_2X4 = {"cluster": "wormhole_t3k.yaml", "mesh": [2, 4], "fabric": "FABRIC_1D", "axis": 0, "D": 8, "E": 256}
DISPATCH, COMBINE = {"op": "all_to_all_dispatch_dense", "H": 7168, "K": 8, "S": 1}, {"op": "all_to_all_combine_dense"}
FABRIC_CASES = {
    "n300_dispatch_decode": {**N300, **DISPATCH, "B": 32},
    "n300_dispatch_prefill": {**N300, **DISPATCH, "B": 512},
    "n300_combine_decode": {**N300, **COMBINE, "B": 32, "S": 1, "H": 7168, "capacity": 768},
    "t3k_1x8_dispatch_decode": {**T3K_LINE, **DISPATCH, "B": 32},
    "t3k_1x8_combine_decode": {**T3K_LINE, **COMBINE, "B": 32, "S": 1, "H": 7168, "capacity": 2048},
    "t3k_2x4_dispatch_decode": {**T3K_2X4, **DISPATCH, "B": 32},
    "t3k_2x4_fabric_2d_dispatch_decode": {**T3K_2X4, **DISPATCH, "B": 32, "fabric": "FABRIC_2D", "topology": "Mesh"},
    "t3k_2x4_fabric_2d_combine_decode": {
        **T3K_2X4,
        **COMBINE,
        "B": 32,
        "S": 1,
        "H": 7168,
        "capacity": 512,
        "fabric": "FABRIC_2D",
        "topology": "Mesh",
    },
}


@pytest.fixture(scope="module")
def env_python():
    try:
        return ensure_env(log=lambda message: None)
    except NoInterpreter as missing:
        pytest.fail(f"the real-runtime checks did not run: {missing}")


def kernels_of(op: str) -> set[str]:
    """The op's kernel files, by name: the ones its program must compile."""
    return {p.stem for p in (ROOT / "ttnn_moe" / "kernels" / op).rglob("*.cpp")}


def run_case(env_python: Path, case: dict, cluster: str, tmp_path: Path) -> tuple[dict, set[str]]:
    log = tmp_path / "compile.log"
    env = dict(
        os.environ,
        TT_METAL_MOCK_CLUSTER_DESC_PATH=str(CLUSTERS / cluster),
        TTNN_MOE_COMPILE_LOG=str(log),
        TT_METAL_CACHE=str(tmp_path / "tt-metal-cache"),
        TTNN_MOE_NO_ATTACH="0",
    )
    try:
        done = subprocess.run(
            [str(env_python), str(RUN_CASE), json.dumps(case)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=CASE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hang: {case} on {cluster} did not finish in {CASE_TIMEOUT_S} s")
    lines = [line for line in done.stdout.splitlines() if line.startswith("VERDICT ")]
    if done.returncode != 0 or not lines:
        pytest.fail(f"crash: {case} on {cluster} exited {done.returncode}:\n{done.stderr[-3000:]}")
    compiled = set(re.findall(r'-DFULL_KERNEL_NAME="([^/"]+)/', log.read_text() if log.exists() else ""))
    return json.loads(lines[-1][len("VERDICT ") :]), compiled


@pytest.mark.parametrize("device", sorted(DEVICES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_reaches_the_kernel_compile_on_the_real_runtime(env_python, tmp_path, name, device):
    case = CASES[name]
    verdict, compiled = run_case(env_python, case, DEVICES[device], tmp_path)
    assert verdict["verdict"] == "compile", f"{name} on {device}: {verdict['verdict']}: {verdict['message']}"
    assert verdict["arch"] == {"n150": "Arch.WORMHOLE_B0", "p150": "Arch.BLACKHOLE"}[device]
    missing = kernels_of(case["op"]) - compiled
    assert not missing, f"{name} on {device}: kernels that never reached the compile: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(FABRIC_CASES))
def test_fabric_op_reaches_the_kernel_compile_on_a_mock_mesh(env_python, tmp_path, name):
    case = FABRIC_CASES[name]
    verdict, compiled = run_case(env_python, case, case["cluster"], tmp_path)
    assert verdict["verdict"] == "compile", f"{name}: {verdict['verdict']}: {verdict['message']}"
    missing = kernels_of(case["op"]) - compiled
    assert not missing, f"{name}: kernels that never reached the compile: {sorted(missing)}"


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


def test_a_program_the_runtime_rejects_is_reported_with_its_message(env_python, tmp_path):
    """Our validation runs first: an expert_mapping for 2 devices on a single device names both."""
    case = {"op": "prepare_moe_routing_tensors", "T": 32, "K": 8, "E": 8, "D": 2}
    verdict, compiled = run_case(env_python, case, DEVICES["n150"], tmp_path)
    assert verdict["verdict"] == "rejected" and not compiled
    assert (
        "prepare_moe_routing_tensors: expert_mapping (1, 1, 8, 2) covers 2 devices, the 1x1 mesh has 1"
        in (verdict["message"])
    )


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
    assert {"all_gather", "reduce_scatter", "from_torch", "matmul"} <= set(calls), "the model's calls were not found"
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
