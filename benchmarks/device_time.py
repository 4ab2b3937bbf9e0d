"""The device-time model: calibration against published Wormhole figures, and the per-op
roofline of the DeepSeek-V3 MoE layer on TG 4x8.

    python benchmarks/device_time.py --calibrate            # published vs modeled vs ratio
    python benchmarks/device_time.py --roofline decode      # or prefill; both by default

Calibration: one parameter set (ttnn_moe/cpp/emu/timing/wormhole_b0.cpp) for every case,
ratio = modeled / published, target 0.75 .. 1.33. Roofline: each op at DeepSeek-V3 dims
(benchmarks/device_time_roofline.py says what is run and how).
"""

from __future__ import annotations

import argparse
import sys

import torch
from device_time_calibration import calibration_cases, within_target


def print_calibration() -> bool:
    cases = calibration_cases()
    header = f"{'case':<58}{'unit':>12}{'published':>11}{'modeled':>10}{'ratio':>7}  source"
    print(header)
    print("-" * len(header))
    for c in cases:
        mark = "" if within_target(c) else "  <- outside 0.75..1.33"
        print(f"{c.name:<58}{c.unit:>12}{c.published:>11.2f}{c.modeled:>10.2f}{c.ratio:>7.2f}  {c.source}{mark}")
        if c.note:
            print(f"{'':<58}{'':>40}  ({c.note})")
    inside = sum(within_target(c) for c in cases)
    print(f"{inside} of {len(cases)} cases within 0.75..1.33")
    return inside == len(cases)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calibrate", action="store_true", help="published vs modeled figures")
    parser.add_argument(
        "--roofline", nargs="*", choices=["decode", "prefill"], help="per-op roofline at DeepSeek-V3 dims"
    )
    parser.add_argument("--expert-dtype", choices=["bfloat16", "bfloat8_b", "bfloat4_b"], default="bfloat8_b")
    parser.add_argument("--hidden", type=int, default=7168, help="roofline H (DeepSeek-V3: 7168)")
    parser.add_argument("--intermediate", type=int, default=2048, help="roofline moe intermediate (DeepSeek-V3: 2048)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if not args.calibrate and args.roofline is None:
        args.calibrate, args.roofline = True, []
    if args.calibrate:
        print_calibration()
    if args.roofline is not None:
        from device_time_roofline import print_roofline  # noqa: PLC0415

        for phase in args.roofline or ["decode", "prefill"]:
            print_roofline(phase, args.expert_dtype, args.hidden, args.intermediate)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
