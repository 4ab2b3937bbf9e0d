"""The benchmark scripts still run (at toy sizes): a broken benchmark is found by CI, not by the next reader."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{args} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_emulator_benchmark_runs():
    out = _run("benchmarks/emulator.py", "--size", "64")
    assert "tile matmuls/s" in out and "empty 64-core program" in out


def test_emulator_speed_benchmark_prints_a_row_per_format_and_the_host_rate():
    out = _run("benchmarks/emulator_speed.py", "--sizes", "64", "--repeats", "1", "--matmul-thread", "on", "off")
    rows = [line.split() for line in out.splitlines() if line.startswith("    64 ")]
    assert [r[1:3] for r in rows[:6]] == [
        [f, m] for f in ("bf16", "bfloat8_b", "bfloat4_b") for m in ("thread", "inline")
    ]
    assert [r[1] for r in rows[6:]] == ["torch"]
    for row in rows[:6]:
        figures = row[3:]
        if row[2] == "inline":  # no matmul thread: its CPU column is "-"
            assert figures[-1] == "-", row
            figures = figures[:-1]
        assert all(float(v.replace(",", "")) > 0 for v in figures), row


def test_tile_math_benchmark_runs():
    out = _run("benchmarks/tile_math.py", "--iterations", "200", "--repeats", "1")
    assert "per second" in out or "/s" in out


def test_soak_benchmark_reports_memory_cache_and_a_bitwise_rerun():
    out = _run("benchmarks/soak.py", "--mesh", "t3k", "--steps", "4", "--report-every", "2", "--tokens", "8")
    reports = [line for line in out.splitlines() if line.startswith("step ")]
    assert len(reports) == 2 and all("RSS" in r and "program cache" in r and "emulator DRAM" in r for r in reports)
    buffers = {r.split("emulator DRAM ")[1].split(" buffers")[0] for r in reports}
    assert len(buffers) == 1, f"the live DRAM buffers changed between reports: {reports}"
    states = {tuple(r.split(" state ")[1].split(", ")[:3]) for r in reports}
    assert len(states) == 1 and all("0 L1 slots in use" in r for r in reports), reports
    assert "fresh process, steps [0, 3]: 2 of 2 bitwise equal" in out


def test_full_scale_benchmark_prints_its_table():
    out = _run("benchmarks/full_scale.py", "--config", "mini", "--mesh", "t3k", "--tokens", "32")
    row = next(line.split() for line in out.splitlines() if line.startswith("t3k "))
    tokens, wall, cpu, rss, expert_mib, executed, needed, ratio, pcc, drops = row[1:]
    assert tokens == "32" and float(wall) > 0 and float(cpu) > 0 and 0 < float(rss) < 8 and float(expert_mib) > 0
    assert executed == needed and ratio == "1.00" and float(pcc) >= 0.999
    assert drops == "0"  # the mini layer moves far less than the 1 GiB between drops


def test_gate_benchmark_times_both_routers():
    out = _run("benchmarks/gate.py", "--decode-tokens", "32", "--prefill-tokens", "64")
    rows = [line for line in out.splitlines() if line.startswith(("decode ", "prefill "))]
    assert len(rows) == 10
    assert sum("deepseek_grouped_gate" in r for r in rows) == 2

    def us_and_dram_mb(row):  # timed rows end with their floor (resource, us), the matmul floor's row does not
        cells = row.split()
        return (float(cells[-2]), float(cells[-1])) if "not run" in row else (float(cells[-4]), float(cells[-3]))

    assert all(us > 0 for us, _ in map(us_and_dram_mb, rows))
    # A float32 gate weight reads 256 x 7168 x 2 bytes more from DRAM than a bfloat16 one.
    for phase in ("decode", "prefill"):
        bf16, fp32 = (
            next(r for r in rows if r.startswith(phase) and f"{dtype} weight" in r) for dtype in ("bf16", "fp32")
        )
        assert us_and_dram_mb(fp32)[1] - us_and_dram_mb(bf16)[1] == pytest.approx(256 * 7168 * 2 / 1e6, abs=0.02)


def test_to_layout_benchmark_times_every_conversion():
    out = _run("benchmarks/to_layout.py", "--decode-rows", "32", "--prefill-rows", "64")
    rows = [line.split() for line in out.splitlines() if " -> " in line]
    assert len(rows) == 6 and all(float(r[-1]) > 0 for r in rows)
    # decode x, one tile row of 224 tiles: its columns over all 64 cores (layout_work_split)
    assert rows[0][-3:-1] == ["32x7168", "64"]


def _vs_ttmetal():
    spec = importlib.util.spec_from_file_location("vs_ttmetal", ROOT / "benchmarks" / "vs_ttmetal.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_dispatch_metadata_benchmark_prints_a_row_per_dispatch():
    out = _run(
        "benchmarks/ttmetal_dispatch_metadata_device_time.py",
        *("--rows", "1", "--cols", "4", "--axis", "1", "--tokens", "4", "--hidden", "64", "--topology", "ring"),
    )
    assert "1x4 mesh, axis 1, 4 tokens per device, H=64" in out
    for name in ("SPARSE_MCAST_SHORTEST_PATH", "SPARSE_UNICAST", "ttnn.all_to_all_dispatch (classic)", "(ours)"):
        assert name in out


def test_moe_compute_benchmark_prints_the_tilize_stage_one_device_and_fullccl_times():
    out = _run(
        "benchmarks/ttmetal_moe_compute_device_time.py",
        *("--rows", "1", "--cols", "2", "--axis", "1", "--tokens", "8", "--hidden", "128", "--intermediate", "384"),
        *("--experts-per-device", "8", "--k", "2"),
    )
    assert "moe_compute tilize stage, 1x2 axis 1, 16 tokens per group, hidden 128" in out
    assert "moe_compute whole op, one device, 8 tokens x 8 experts" in out
    assert "moe_compute FullCcl, 1x2 axis 1, 16 tokens per group, hidden 128, intermediate 384" in out
    times = [float(part.split()[0]) for part in out.split("modeled device time: ")[1:]]
    assert len(times) == 3 and all(t > 0 for t in times)


def test_vs_ttmetal_tables_on_a_toy_mesh(monkeypatch):
    """The comparison's op rows and closing lines from real runs of both layers on a 2x4 mesh."""
    bench = _vs_ttmetal()
    monkeypatch.setitem(bench.MESHES, "toy", (2, 4))
    results = {impl: bench.run_case(impl, "toy", "decode", "mini", "bfloat16", 0) for impl in bench.IMPLEMENTATIONS}
    ours, theirs, optimized = (bench.rows_of(results[impl]) for impl in bench.IMPLEMENTATIONS)
    # tt-metal's optimized flow runs too, every step a device program: moe_compute (its FullCcl path down the
    # columns) on each of the 8 devices.
    assert all(o.where == "device" for o in optimized)
    compute = {o.name: o for o in optimized}["ttnn.experimental.moe_compute"]
    assert compute.programs == 8 and compute.tile_matmuls > 0 and compute.fabric_bytes > 0
    assert all(o.where == "device" and o.device_us > 0 for o in ours)
    by_name = {o.name: o for o in theirs}
    # ttnn.mul of two (K=8, 1, B=32, H=256) bf16 tensors on each of 8 devices: reads a and b, writes out.
    weighted = by_name["ttnn.mul by topk weights"]
    assert weighted.where == "device" and weighted.programs == 8
    assert weighted.dram_bytes == 3 * 8 * 32 * 256 * 2 * 8
    # The expert matmuls run Tenstorrent's programs: a zero fill and the sparse matmul on each device.
    w1 = by_name["ttnn.sparse_matmul w1"]
    assert w1.where == "device" and w1.programs == 2 * 8 and w1.tile_matmuls > 0 and w1.device_us > 0
    # The layout glue runs Tenstorrent's programs too: the sum over K (fast_reduce_nc) reads the 8 x 8 input
    # tiles and writes the 8 output tiles of each of the 8 devices once.
    summed = by_name["ttnn.sum over K"]
    assert summed.where == "device" and summed.programs == 8 and summed.device_us > 0
    assert summed.dram_bytes == (8 * 8 + 8) * 2048 * 8
    assert results["tt-metal classic"]["host_steps"] == []
    # Nothing of tt-metal's layer runs on the host (the gate writes the uint16 indices its dispatch takes),
    # so the classic ratio is a number: the two layers' summed modeled device times.
    assert [o.name for o in theirs if "host" in o.where] == []
    layer, our_layer = bench.layer_row(theirs), bench.layer_row(ours)
    assert layer.where == "device" and layer.device_us == sum(o.device_us for o in theirs)
    lines = bench.final_lines(results)
    classic = our_layer.device_us / layer.device_us
    fast = our_layer.device_us / bench.layer_row(optimized).device_us
    assert lines[-2] == f"TG decode layer, ours / tt-metal classic modeled device time: {classic:.3f}"
    assert lines[-1] == f"TG decode layer, ours / tt-metal optimized modeled device time: {fast:.3f}"
    assert lines[-4] == "tt-metal classic ran entirely as device programs"
    assert lines[-3] == "tt-metal optimized ran entirely as device programs"
    table = bench.format_ops("ours", ours)
    assert table[-1].split()[0] == "layer" and len(table) == len(ours) + 3


def test_long_prefill_benchmark_prints_its_table():
    out = _run("benchmarks/long_prefill.py", "--tokens", "700", "--experts", "16", "--local-experts", "16")
    lines = [line for line in out.splitlines() if line.startswith(("prepare_moe", "scatter_moe", "local_reduce ("))]
    rows = {line.split()[0]: line for line in lines}
    assert set(rows) == {"prepare_moe_routing_tensors", "scatter_moe_input", "local_reduce"} and len(lines) == 4
    assert all("PCC 0.99" in line for line in lines if line.startswith("local_reduce "))
    assert rows["prepare_moe_routing_tensors"].endswith("exact") and rows["scatter_moe_input"].endswith("exact")
    assert "with and without the bound: bitwise equal" in out


def test_long_prefill_benchmark_reports_dispatch_windows():
    """Past the whole tables (T = 600, top-32 of 64 experts on a 1x2 line): ids in two windows."""
    out = _run(
        "benchmarks/long_prefill.py",
        "--dispatch",
        "--tokens",
        "600",
        "--experts",
        "64",
        "--top-k",
        "32",
        "--line",
        "2",
        "--links",
        "2",
        "--capacity",
        "39424",
    )
    assert "ids and weights: 2 windows of 320 tokens per pass; images: 1 windows" in out
    assert out.rstrip().endswith("vs golden: exact")


def test_deepseek_moe_reduce_scatter_benchmark_times_the_four_ops():
    out = _run("benchmarks/deepseek_moe_reduce_scatter.py")
    rows = [line.split() for line in out.splitlines() if line.startswith(("deepseek_moe_", "ttnn.reduce_scatter"))]
    assert [r[0] for r in rows] == [
        "deepseek_moe_fast_reduce_nc",
        "deepseek_moe_fast_reduce_nc_fused,",
        "deepseek_moe_reduce_scatter",
        "ttnn.reduce_scatter",
    ]
    assert all(float(r[-3]) > 0 for r in rows)  # modeled device us
    assert float(rows[2][-2]) == float(rows[3][-2]) > 0  # both reduce-scatters move 7/8 of the partials per device


def test_shared_expert_benchmark_prints_its_launches():
    out = _run("benchmarks/shared_expert.py", "--rows", "64", "--hidden", "256")
    rows = [line.split() for line in out.splitlines() if line.startswith(("moe_bmm ", "ttnn.to_layout"))]
    assert [r[0] for r in rows] == ["moe_bmm", "moe_bmm", "ttnn.to_layout", "moe_bmm"]
    assert all(float(r[-3 if r[0] == "ttnn.to_layout" else -4]) > 0 for r in rows)  # modeled us
    assert [r[-1] for r in rows if r[0] == "moe_bmm"] == ["1.00"] * 3  # each weight tile read once


def test_routed_experts_benchmark_prints_both_launches_per_case():
    out = _run(
        "benchmarks/routed_experts.py",
        "--mesh",
        "tg",
        "--dtype",
        "bfloat4_b",
        "--hidden",
        "256",
        "--intermediate",
        "64",
    )
    launches = [line.split()[0] for line in out.splitlines() if line.startswith(("w1/w3", "w2 ", "both"))]
    assert launches == ["w1/w3", "w2", "both"]
