"""The MoE layer on the real ttnn runtime with nothing but ttnn on the host (no torch).

    TTNN_MOE_BACKEND=hardware python -m models.deepseek_v3.device_only_demo --mesh t3k --tokens 32

`scripts/demo.sh --backend hardware` runs this where the real ttnn is installed without torch (the
project's Python 3.12 / 3.10 environment): the full demo needs torch for its random weights and its
reference. Here every weight and the input are allocated on the mesh and left unfilled (their values
are whatever device memory holds; only the expert mapping, which steers the data movement, is
written), and `TtMoE.forward` runs once, op by op, exactly as the model calls them. It shows that the
runtime takes the layer's whole device flow. Its numbers mean nothing, so no PCC is computed.

On a mock device (TT_METAL_MOCK_CLUSTER_DESC_PATH) with the project's compiler stand-in, the runtime
gets as far as its first kernel compile and stops there: the demo says which op reached it and exits 3.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from models.deepseek_v3.config import MESH_PRESETS, DeepseekV3MoEConfig, mesh_shape
from models.deepseek_v3.tt.moe import TtMoE
from models.deepseek_v3.tt.moe_weights import EXPERT_DTYPES, TtMoEWeights, check_layer_fits_mesh
from models.deepseek_v3.tt.preset_mesh import open_preset_mesh
from models.deepseek_v3.tt.ttnn_api import BACKEND, ttnn

CONFIGS = {"mini": DeepseekV3MoEConfig.mini, "full": DeepseekV3MoEConfig}
STAND_IN_MARK = "compiler stand-in: kernel compile reached"
EXIT_STOPPED_AT_COMPILE = 3


def expert_mapping_on_mesh(num_experts: int, mesh_device) -> ttnn.Tensor:
    """(1, 1, E, D) int32 one-hot, replicated: expert e on device e // (E / D), as the model places them."""
    num_devices = mesh_device.get_num_devices()
    per_device = num_experts // num_devices
    one_hot = [int(e // per_device == d) for e in range(num_experts) for d in range(num_devices)]
    return ttnn.Tensor(one_hot, [1, 1, num_experts, num_devices], ttnn.int32, ttnn.ROW_MAJOR_LAYOUT, device=mesh_device)


def allocated_weights(config: DeepseekV3MoEConfig, mesh_device, expert_dtype) -> TtMoEWeights:
    """The layer's weights with their real per-device shapes, dtypes and layouts, allocated, not filled."""
    rows, cols = tuple(mesh_device.shape)
    check_layer_fits_mesh(config, (rows, cols))
    H, I, E = config.hidden_size, config.moe_intermediate_size, config.n_routed_experts
    E_l, Is_c = E // (rows * cols), config.shared_intermediate_size // cols

    def allocate(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT):
        return ttnn.allocate_tensor_on_device(ttnn.Shape(shape), dtype, layout, mesh_device)

    return TtMoEWeights(
        expert_mapping=expert_mapping_on_mesh(E, mesh_device),
        experts_w1_w3=allocate([E_l, H, 2 * I], expert_dtype),
        experts_w2=allocate([E_l, I, H], expert_dtype),
        gate_weight=allocate([E, H]),  # bfloat16, as a checkpoint stores it
        gate_bias=allocate([1, E], ttnn.float32, ttnn.ROW_MAJOR_LAYOUT),
        shared_w1_w3=allocate([1, H, 2 * Is_c]),
        shared_w2=allocate([1, Is_c, H]),
    )


def run(mesh: str, config_name: str, tokens: int, expert_dtype_name: str) -> int:
    rows, cols = mesh_shape(mesh)
    config = CONFIGS[config_name]()
    if tokens % rows:
        raise ValueError(f"--tokens {tokens} must split evenly over the {rows} mesh rows")
    try:
        mesh_device = open_preset_mesh(mesh)  # on the preset's tt-fabric (FABRIC_1D, a QUAD's FABRIC_1D_RING)
    except RuntimeError as error:
        reason = " ".join(line.strip() for line in str(error).splitlines()[:3] if line.strip() and line != "info:")
        raise ValueError(
            f"the runtime opened no {rows}x{cols} mesh ({reason}); without Tenstorrent hardware, point "
            "TT_METAL_MOCK_CLUSTER_DESC_PATH at a mock cluster (tests/data/mock_clusters/)"
        ) from error
    try:
        layer = TtMoE.from_weights(
            allocated_weights(config, mesh_device, EXPERT_DTYPES[expert_dtype_name]), config, mesh_device
        )
        x = ttnn.allocate_tensor_on_device(
            ttnn.Shape([tokens // rows, config.hidden_size // cols]), ttnn.bfloat16, ttnn.TILE_LAYOUT, mesh_device
        )
        reached = []
        try:
            out = layer.forward(x, observer=lambda stage, tensor: reached.append(stage))
        except RuntimeError as error:
            if STAND_IN_MARK not in str(error):
                raise
            after = reached[-1] if reached else "the layer's input"
            print(
                f"device-only demo: the runtime accepted the layer's ops up to its first kernel compile, after stage "
                f"'{after}'; this machine has no Tenstorrent kernel toolchain (a mock device), so it stops here",
                file=sys.stderr,
            )
            return EXIT_STOPPED_AT_COMPILE
        print(f"device-only demo: forward ran on the {rows}x{cols} mesh; output per device {list(out.shape)}")
        return 0
    finally:
        ttnn.close_mesh_device(mesh_device)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mesh", choices=sorted(MESH_PRESETS), default="t3k")
    parser.add_argument("--config", choices=sorted(CONFIGS), default="mini")
    parser.add_argument("--tokens", type=int, default=32, help="total tokens, split evenly over the mesh rows")
    parser.add_argument("--expert-dtype", choices=sorted(EXPERT_DTYPES), default="bfloat16")
    args = parser.parse_args(argv)
    if BACKEND != "hardware":
        print("device-only demo: set TTNN_MOE_BACKEND=hardware (it runs on the real ttnn)", file=sys.stderr)
        return 2
    try:
        return run(args.mesh, args.config, args.tokens, args.expert_dtype)
    except ValueError as error:
        print(f"device-only demo: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
