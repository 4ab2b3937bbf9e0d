"""One op on a mock device of the real ttnn 0.81.1 runtime; prints one JSON verdict line.

Runs inside the real-ttnn environment (tools/real_ttnn/env.py), without torch, as

    python run_case.py '{"op": "moe_bmm", "E": 8, "T": 64, ...}'

with TT_METAL_MOCK_CLUSTER_DESC_PATH naming the mock cluster and TTNN_MOE_COMPILE_LOG the file the
compiler stand-in appends each compile command to. The op is called the way the model calls it,
`ttnn.<op>(...)` after ttnn_moe attached itself to the real module, on tensors allocated with
`ttnn.allocate_tensor_on_device`. Verdicts: "compile" (the program passed every host-side check
and reached the kernel compile), "rejected" (ttnn or our validation raised: the message says why),
"ran" (no compile happened: nothing checked the kernels).
"""

import json
import sys

import ttnn

import ttnn_moe  # noqa: F401  (attaches the ops to ttnn)

STAND_IN_MARK = "compiler stand-in: kernel compile reached"
DTYPES = {"bfloat16": ttnn.bfloat16, "bfloat8_b": ttnn.bfloat8_b, "uint32": ttnn.uint32, "int32": ttnn.int32}


def run(case: dict, device) -> None:
    def alloc(shape, dtype, layout=ttnn.ROW_MAJOR_LAYOUT):
        return ttnn.allocate_tensor_on_device(ttnn.Shape(shape), DTYPES[dtype], layout, device, ttnn.DRAM_MEMORY_CONFIG)

    op = case["op"]
    if op == "prepare_moe_routing_tensors":
        ttnn.prepare_moe_routing_tensors(
            alloc([case["T"], case["K"]], "uint32"),
            alloc([case["T"], case["K"]], "bfloat16"),
            alloc([1, 1, case["E"], case.get("D", 1)], "int32"),
            strict=False,
        )
    elif op == "scatter_moe_input":
        ttnn.scatter_moe_input(
            alloc([case["T"], case["H"]], "bfloat16"),
            alloc([case["E"], 1], "uint32"),
            alloc([case["E"], case["T"]], "uint32"),
        )
    elif op == "moe_bmm":
        rows = [case["M"]] if "M" in case else [case["E"], case["T"]]
        offsets = {"expert_offsets": alloc([case["E"], 1], "uint32")} if "M" in case else {}
        ttnn.moe_bmm(
            alloc([*rows, case["H"]], "bfloat16", ttnn.TILE_LAYOUT),
            alloc([case["E"], case["H"], case["N"]], case["w_dtype"], ttnn.TILE_LAYOUT),
            alloc([case["E"], 1], "uint32"),
            strict=False,
            **offsets,
        )
    elif op == "local_reduce_moe_output":
        if "M" in case:
            ttnn.local_reduce_moe_output(
                alloc([case["M"], case["H"]], "bfloat16"),
                alloc([case["M"]], "uint32"),
                alloc([case["M"]], "bfloat16"),
                alloc([case["E"], 1], "uint32"),
                num_out_rows=case["M"],
                expert_offsets=alloc([case["E"], 1], "uint32"),
                max_assignments_per_row=case["K"],
                strict=False,
            )
        else:
            ttnn.local_reduce_moe_output(
                alloc([case["E"], case["T"], case["H"]], "bfloat16"),
                alloc([case["E"], case["T"]], "uint32"),
                alloc([case["E"], case["T"]], "bfloat16"),
                alloc([case["E"], 1], "uint32"),
                num_out_rows=case["T"],
                strict=False,
            )
    else:
        raise ValueError(f"unknown op {op!r}")


def main() -> None:
    case = json.loads(sys.argv[1])
    device = ttnn.open_device(device_id=0)
    try:
        run(case, device)
        verdict = {"verdict": "ran", "message": "the op returned without compiling a kernel"}
    except Exception as error:  # the verdict is the message, whatever raised it
        message = str(error)
        kind = "compile" if STAND_IN_MARK in message else "rejected"
        verdict = {"verdict": kind, "message": message[:4000]}
    finally:
        ttnn.close_device(device)
    verdict["arch"] = str(device.arch())
    print("VERDICT " + json.dumps(verdict), flush=True)


if __name__ == "__main__":
    main()
