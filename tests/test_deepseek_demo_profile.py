"""demo --profile DIR: the layer's modeled device time per op and in total, the top three bounds,
and the profile files (ops_perf_results.csv with a row per op and device, trace.json)."""

import csv
import re

from models.deepseek_v3 import demo

LAYER_OPS = [
    "all_to_all_dispatch_dense",
    "moe_bmm",  # routed experts: fused SwiGLU
    "moe_bmm",  # routed experts: down
    "local_reduce_moe_output",
    "all_to_all_combine_dense",
    "moe_bmm",  # shared expert: fused SwiGLU
    "moe_bmm",  # shared expert: down, plus the routed share
]


def test_profile_prints_per_op_device_time_total_and_top_three_bounds(capsys, tmp_path):
    assert demo.main(["--mesh", "t3k", "--tokens", "8", "--seed", "3", "--profile", str(tmp_path)]) == 0
    log = capsys.readouterr().err
    per_op = re.findall(r"^\S+   (\w+)\s+#(\d+)\s+([\d.]+) us   bound: (\w+)", log, re.MULTILINE)
    names = iter(name for name, *_ in per_op)
    assert all(op in names for op in LAYER_OPS)  # in this order (other device ops may run between)
    assert all(bound in ("compute", "dram", "noc", "fabric") for *_, bound in per_op)
    total = float(re.search(rf"layer: device ([\d.]+) us over {len(per_op)} device ops", log).group(1))
    assert abs(total - sum(float(t) for _, _, t, _ in per_op)) < 0.01 * len(per_op)
    top = log.split("top three bounds:")[1].strip().splitlines()[:3]
    assert all(re.search(r"#\d+: (compute|dram|noc|fabric) [\d.]+ us of [\d.]+ us modeled", line) for line in top)
    rows = list(csv.DictReader((tmp_path / "ops_perf_results.csv").open()))
    assert len(rows) == len(per_op) * 8  # every op on each device of the 1x8 mesh
    assert (tmp_path / "trace.json").stat().st_size > 0
