"""One op on a mock device of the real ttnn 0.81.1 runtime; prints one JSON verdict line.

Runs inside the real-ttnn environment (tools/real_ttnn/env.py), without torch, as

    python run_case.py '{"op": "moe_bmm", "E": 8, "T": 64, ...}'

with TT_METAL_MOCK_CLUSTER_DESC_PATH naming the mock cluster and TTNN_MOE_COMPILE_LOG the file the
compiler stand-in appends each compile command to. A case with "mesh" opens that mesh with the
given tt-fabric configuration (the fabric ops' connections are set up by the real runtime).
The op is called the way the model calls it, `ttnn.<op>(...)` after ttnn_moe attached itself
to the real module, on tensors allocated with `ttnn.allocate_tensor_on_device`. Verdicts:
"compile" (the program passed every host-side check and reached the kernel compile), "rejected"
(ttnn or our validation raised, or the mock did not open: the message says why), "ran" (no
compile happened: an op that returned, or a check that compiles nothing, e.g. the accessor args
compared with ttnn's). "misfit" cases hand a program past one device limit to our launch check and
then to ttnn.generic_op alone, to show what tt-metal would have done with it.
"""

import json
import sys

import ttnn
from misfit_programs import misfit_programs
from ttnn_moe._C import program as pd

import ttnn_moe  # attaches the ops to ttnn
from ttnn_moe import hardware

STAND_IN_MARK = "compiler stand-in: kernel compile reached"
DTYPES = {
    "bfloat16": ttnn.bfloat16,
    "bfloat8_b": ttnn.bfloat8_b,
    "bfloat4_b": ttnn.bfloat4_b,
    "uint16": ttnn.uint16,
    "uint32": ttnn.uint32,
    "int32": ttnn.int32,
}


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
            strict=False,
        )
    elif op == "moe_bmm":
        rows = [case["M"]] if "M" in case else [case["E"], case["T"]]
        options = {"expert_offsets": alloc([case["E"], 1], "uint32")} if "M" in case else {}
        weight_columns = case["N"] * (2 if case.get("activation") == "swiglu" else 1)  # gate and up interleaved
        if case.get("activation"):
            options["activation"] = case["activation"]
        if case.get("addend"):
            addend_layout = getattr(ttnn.Layout, case.get("addend_layout", "TILE"))
            options["addend"] = alloc([*rows, case["N"]], "bfloat16", addend_layout)
        if case.get("output_layout"):
            options["output_layout"] = getattr(ttnn.Layout, case["output_layout"])
        ttnn.moe_bmm(
            alloc([*rows, case["H"]], "bfloat16", getattr(ttnn.Layout, case.get("x_layout", "TILE"))),
            alloc([case["E"], case["H"], weight_columns], case["w_dtype"], ttnn.TILE_LAYOUT),
            alloc([case["E"], 1], "uint32"),
            strict=False,
            **options,
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
                num_used_rows=alloc([1], "uint32"),
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
    elif op == "all_to_all_dispatch_dense":
        B, S, H, K, E = case["B"], case["S"], case["H"], case["K"], case["E"]
        ttnn.all_to_all_dispatch_dense(
            alloc([B, S, 1, H], "bfloat16"),
            alloc([B, S, 1, K], "uint32"),
            alloc([B, S, 1, K], "bfloat16"),
            alloc([1, 1, E, case["D"]], "int32"),
            cluster_axis=case["axis"],
            num_links=case["links"],
            strict=False,
        )
    elif op == "all_to_all_combine_dense":
        # The handle a dispatch of B x S tokens with this capacity hands over.
        handle = ttnn_moe.DispatchHandle(
            slot_source=alloc([case["capacity"], 2], "uint32"),
            num_slots=alloc([1], "uint32"),
            dispatch_status=alloc([1, 8], "uint32"),
            cluster_axis=case["axis"],
            batch=case["B"],
            seq=case["S"],
            unit_dim=True,
            capacity=case["capacity"],
            num_links=case["links"],
            topology=None,
        )
        ttnn.all_to_all_combine_dense(alloc([case["capacity"], case["H"]], "bfloat16"), handle, strict=False)
    elif op == "moe_gate":

        def fp32(shape, layout):
            return ttnn.allocate_tensor_on_device(
                ttnn.Shape(shape), ttnn.float32, layout, device, ttnn.DRAM_MEMORY_CONFIG
            )

        ttnn.moe_gate(
            alloc([case["T"], case["H"]], "bfloat16", ttnn.TILE_LAYOUT),
            fp32([case["E"], case["H"]], ttnn.TILE_LAYOUT),
            fp32([case["E"]], ttnn.ROW_MAJOR_LAYOUT),
            n_group=case["G"],
            topk_group=case["TG"],
            top_k=case["K"],
            routed_scaling_factor=2.5,
            strict=False,
        )
    elif op == "ttmetal_moe_compute":  # tt-metal's own op, as far as its validation: placeholder tensors
        tokens, hidden, k, experts, intermediate = 32, 512, 2, 2, case["intermediate"]
        ttnn.experimental.moe_compute(
            alloc([1, tokens, hidden], "bfloat16"),
            alloc([1, tokens, k], "uint16"),
            alloc([1, tokens, k], "bfloat16"),
            alloc([1, experts], "uint16"),
            alloc([12, 1, experts, 1, hidden, 128], "bfloat4_b", ttnn.TILE_LAYOUT),
            alloc([12, 1, experts, 1, intermediate, 128], "bfloat4_b", ttnn.TILE_LAYOUT),
            layer_id=0,
            intermediate_size=intermediate,
            output_height_shard_dim=4,
            compute_only=True,
        )
    elif op == "misfit":
        run_misfit(case["misfit"], device, [alloc([32, 32], "uint32"), alloc([32, 32], "uint32")])
    elif op == "tensor_accessor_args":
        compare_accessor_args(device, alloc)
    elif op != "open_mesh":
        raise ValueError(f"unknown op {op!r}")


def run_misfit(name: str, device, io_tensors) -> None:
    """A program past one of the device's limits: our check (with the device's limits read through the
    real runtime) must reject it.
    What tt-metal alone does with it is appended to the message."""
    limits = hardware.HardwareTarget(ttnn).device_limits(device)
    program, words = misfit_programs(limits)[name]
    try:  # the check every op's program passes when it is built, with the limits the runtime reports
        pd.check_program_fits("misfit", program, limits)
        ours = None
    except ValueError as rejected:
        ours = str(rejected)
    try:
        hardware.run_program(ttnn, io_tensors, program)
        alone = "ran"
    except Exception as error:  # whatever tt-metal raises is the answer
        alone = "reached the kernel compile" if STAND_IN_MARK in str(error) else f"rejected ({str(error)[:300]})"
    if ours is None or words not in ours:
        raise AssertionError(f"our check let {name} through (got {ours!r}); tt-metal alone: {alone}")
    raise ValueError(f"{ours} [tt-metal alone: {alone}]")


def compare_accessor_args(device, alloc) -> None:
    """Our TensorAccessorArgs compile-time args equal ttnn.TensorAccessorArgs' for interleaved DRAM and
    L1 tensors, row-major pages of several sizes and tiles (Blackhole aligns DRAM pages to 64 B)."""
    target = hardware.HardwareTarget(ttnn)
    mismatches = []
    for memory in (ttnn.DRAM_MEMORY_CONFIG, ttnn.L1_MEMORY_CONFIG):
        for shape, dtype, layout in (
            ([4, 70], "bfloat16", ttnn.ROW_MAJOR_LAYOUT),
            ([4, 3], "uint32", ttnn.ROW_MAJOR_LAYOUT),
            ([4, 1024], "bfloat16", ttnn.ROW_MAJOR_LAYOUT),
            ([64, 64], "bfloat8_b", ttnn.TILE_LAYOUT),
        ):
            tensor = ttnn.allocate_tensor_on_device(ttnn.Shape(shape), DTYPES[dtype], layout, device, memory)
            real = list(ttnn.TensorAccessorArgs(tensor).get_compile_time_args())
            ours = list(pd.tensor_accessor_args(target.to_arg(tensor)))
            if real != ours:
                mismatches.append(f"{shape} {dtype} {memory.buffer_type}: ttnn {real}, ours {ours}")
    if mismatches:
        raise ValueError("accessor args differ: " + "; ".join(mismatches))


def main() -> None:
    case = json.loads(sys.argv[1])
    try:
        if "mesh" in case:
            if "fabric" in case:  # tt-fabric, as the fabric ops need
                ttnn.set_fabric_config(getattr(ttnn.FabricConfig, case["fabric"]))
            device = ttnn.open_mesh_device(ttnn.MeshShape(*case["mesh"]))
        else:
            device = ttnn.open_device(device_id=0)
    except Exception as refused:  # the mock did not open: that is the verdict
        print("VERDICT " + json.dumps({"verdict": "rejected", "message": str(refused)[:4000]}), flush=True)
        return
    try:
        run(case, device)
        verdict = {"verdict": "ran", "message": "the op returned without compiling a kernel"}
    except Exception as error:  # the verdict is the message, whatever raised it
        message = str(error)
        kind = "compile" if STAND_IN_MARK in message else "rejected"
        verdict = {"verdict": kind, "message": message[:4000]}
    finally:
        arch = str(device.arch())
        (ttnn.close_mesh_device if "mesh" in case else ttnn.close_device)(device)
    verdict["arch"] = arch
    print("VERDICT " + json.dumps(verdict), flush=True)


if __name__ == "__main__":
    main()
