"""The MoE layer's weights as device tensors on a mesh.

Placement, devices numbered row-major over the (R, C) mesh:
- routed experts: device d owns the E_l = E / (R*C) experts its column of the
  expert mapping names, stacked in local-slot order as moe_bmm's (E_l, Kd, N)
  TILE weights: w1_w3 (E_l, H, 2I), gate (w1) and up (w3) interleaved per
  column tile for moe_bmm's fused SwiGLU (`ttnn_moe.interleave_gate_up`), and
  w2 (E_l, I, H). They are converted one expert at a time and written one
  device at a time, so the host holds one expert in torch form and one
  device's share in device form, never a layer;
- gate: the (E, H) weight in bf16 when every value of it is a bf16 value (a
  checkpoint stores the router's weight in bf16, so nothing is rounded and
  moe_gate reads half the bytes), else in fp32 (routing near-ties must not flip
  on a rounding); the (1, E) score-correction bias in fp32; replicated: every
  device of a row routes the same tokens;
- shared expert, tensor parallel over the C columns, as a single-expert
  moe_bmm weight: w1, w3 split by output column (H, Is/C) and interleaved,
  (1, H, 2 Is/C), w2 split by input row (1, Is/C, H); the same shard on every row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

from loguru import logger

from models.deepseek_v3.config import DeepseekV3MoEConfig
from models.deepseek_v3.tt.ttnn_api import ttnn, ttnn_moe

if TYPE_CHECKING:  # the weights arrive as torch tensors; building them needs no torch module call
    import torch

# The routed experts' weight dtypes, by the name the demos take.
EXPERT_DTYPES = {"bfloat16": ttnn.bfloat16, "bfloat8_b": ttnn.bfloat8_b, "bfloat4_b": ttnn.bfloat4_b}
# moe_bmm's weight of each projection: (Kd, N) = the nn.Linear (out, in) weight transposed;
# "w1_w3" interleaves the gate's and the up's (Kd, 2N) for the fused SwiGLU.
EXPERT_PROJECTIONS = {"w1_w3": ("gate_proj", "up_proj"), "w2": ("down_proj",)}

# (projection "w1_w3" / "w2", device index, the device's experts in local-slot order)
#   -> host tensor (E_l, Kd, N) TILE in the expert dtype: one device's share of a projection.
ExpertShardSource = Callable[[str, int, Sequence[int]], ttnn.Tensor]


def expert_shard_from_state_dict(state_dict: Mapping[str, torch.Tensor], expert_dtype) -> ExpertShardSource:
    """Converts a device's experts from a (possibly lazy) state dict, one expert at a time."""

    def convert(projection: str, device: int, experts: Sequence[int]) -> ttnn.Tensor:
        pieces = [
            ttnn.from_torch(
                moe_bmm_weight(state_dict, f"experts.{e}.", EXPERT_PROJECTIONS[projection]).unsqueeze(0),
                dtype=expert_dtype,
                layout=ttnn.TILE_LAYOUT,
            )  # (1, Kd, N)
            for e in experts
        ]
        return ttnn.concat(pieces, dim=0)  # (E_l, Kd, N)

    return convert


def moe_bmm_weight(state_dict: Mapping[str, torch.Tensor], prefix: str, projections: Sequence[str]) -> torch.Tensor:
    """moe_bmm's (Kd, N) weight of the nn.Linear `prefix + projection` (out, in): transposed; two
    projections (gate, up) interleaved per column tile for the fused SwiGLU, (Kd, 2N)."""
    weights = [state_dict[f"{prefix}{projection}.weight"].T for projection in projections]
    return ttnn_moe.interleave_gate_up(*weights) if len(weights) == 2 else weights[0]


class UploadProgress:
    """One log line per eighth of the mesh while a projection's experts are written: converting a
    full-size layer takes minutes, and the user sees where it is."""

    def __init__(self, projection: str, num_devices: int):
        self.projection, self.num_devices = projection, num_devices
        self.every = max(1, -(-num_devices // 8))
        self.start = time.perf_counter()

    def device_done(self, device: int) -> None:
        done = device + 1
        if done % self.every == 0 or done == self.num_devices:
            bar = "#" * (8 * done // self.num_devices)
            logger.info(
                f"experts {self.projection}: [{bar:<8}] {done}/{self.num_devices} devices "
                f"({time.perf_counter() - self.start:.1f} s)"
            )


@dataclass(frozen=True)
class TtMoEWeights:
    expert_mapping: ttnn.Tensor  # (1, 1, E, R*C) int32 ROW_MAJOR one-hot, replicated
    experts_w1_w3: ttnn.Tensor  # (E_l, H, 2I) TILE per device, gate and up interleaved per column tile
    experts_w2: ttnn.Tensor  # (E_l, I, H) TILE per device
    gate_weight: ttnn.Tensor  # (E, H) bfloat16 or float32 TILE (gate_weight_dtype), replicated
    gate_bias: ttnn.Tensor  # (1, E) float32 ROW_MAJOR, replicated
    shared_w1_w3: ttnn.Tensor  # (1, H, 2 Is/C) bfloat16 TILE, column c's slices of gate and up interleaved
    shared_w2: ttnn.Tensor  # (1, Is/C, H) bfloat16 TILE, column c's slice

    @property
    def experts_per_device(self) -> int:
        return int(self.experts_w2.shape[0])


def gate_weight_dtype(gate_weight: torch.Tensor):
    """The device dtype of the router's (E, H) weight: bfloat16 when every value is a bfloat16 value
    (then the device holds exactly the weight the reference computes with), else float32, with the
    reason logged."""
    weight = gate_weight.float()
    changed = (weight.bfloat16().float() != weight) & (weight == weight)  # a NaN stays a NaN
    rounded = int(changed.sum())
    if rounded == 0:
        return ttnn.bfloat16
    logger.info(
        f"gate weight kept in float32: {rounded} of its {weight.numel()} values are not bfloat16 values "
        f"(it is {gate_weight.dtype}); bfloat16 would change the routing scores"
    )
    return ttnn.float32


def check_layer_fits_mesh(config: DeepseekV3MoEConfig, mesh_shape: tuple[int, int]) -> None:
    """ValueError naming the size that does not split over the mesh or into tiles."""
    rows, cols = mesh_shape
    H, I, Is, E = (
        config.hidden_size,
        config.moe_intermediate_size,
        config.shared_intermediate_size,
        config.n_routed_experts,
    )
    if E % (rows * cols):
        raise ValueError(f"n_routed_experts={E} does not split over the {rows * cols} devices of a {rows}x{cols} mesh")
    if H % (32 * cols):
        raise ValueError(
            f"hidden_size={H} must split into whole tiles over {cols} mesh columns (a multiple of {32 * cols})"
        )
    if I % 32:
        raise ValueError(f"moe_intermediate_size={I} must be a multiple of 32 (moe_bmm works on tiles)")
    if Is % (32 * cols):
        raise ValueError(
            f"shared intermediate size {Is} must split into whole tiles over {cols} mesh columns "
            f"(a multiple of {32 * cols})"
        )


def load_tt_moe_weights(
    state_dict: Mapping[str, torch.Tensor],
    config: DeepseekV3MoEConfig,
    mesh_device: ttnn.MeshDevice,
    *,
    expert_dtype=ttnn.bfloat16,
    expert_source: Optional[ExpertShardSource] = None,
) -> TtMoEWeights:
    """Device tensors of a normalized state dict (`weights.load_moe_layer`, or a lazy mapping with
    its keys such as `checkpoint_layer.CheckpointMoELayer`) on `mesh_device`. `expert_source`,
    if given, supplies each device's routed experts instead (e.g. from a converted-weight cache)."""
    if not isinstance(mesh_device, ttnn.MeshDevice):
        raise TypeError(f"mesh_device must be a MeshDevice, got {mesh_device!r}")
    if expert_dtype not in EXPERT_DTYPES.values():
        raise ValueError(f"expert_dtype must be one of {', '.join(EXPERT_DTYPES)}, got {expert_dtype!r}")
    mesh_shape = tuple(mesh_device.shape)
    check_layer_fits_mesh(config, mesh_shape)
    num_devices = mesh_device.get_num_devices()

    # E_l consecutive experts per device (expert e on device e // E_l), devices in row-major order.
    mapping = ttnn_moe.expert_mapping(config.n_routed_experts, num_devices)  # (1, 1, E, D)
    owner = mapping[0, 0].argmax(dim=1)  # (E,)
    # Device d's experts in local-slot order (ascending id).
    device_experts = [(owner == d).nonzero()[:, 0].tolist() for d in range(num_devices)]
    source = expert_shard_from_state_dict(state_dict, expert_dtype) if expert_source is None else expert_source
    H, I, E_l = config.hidden_size, config.moe_intermediate_size, config.n_routed_experts // num_devices
    shapes = {"w1_w3": (E_l, H, 2 * I), "w2": (E_l, I, H)}

    def experts(projection: str) -> ttnn.Tensor:  # -> (E_l, Kd, N) per device, filled device by device
        tensor = ttnn.allocate_tensor_on_device(
            ttnn.Shape(shapes[projection]), expert_dtype, ttnn.TILE_LAYOUT, mesh_device
        )
        progress = UploadProgress(projection, num_devices)
        for device, (view, local) in enumerate(zip(ttnn.get_device_tensors(tensor), device_experts)):
            ttnn.copy_host_to_device_tensor(source(projection, device, local), view)
            progress.device_done(device)
        return tensor

    def tp_shard(t: torch.Tensor, dim: int) -> ttnn.Tensor:  # column c's slice along dim
        return ttnn.from_torch(
            t,
            dtype=ttnn.bfloat16,
            layout=ttnn.TILE_LAYOUT,
            device=mesh_device,
            mesh_mapper=ttnn.ShardTensor2dMesh(mesh_device, mesh_shape, dims=(None, dim)),
        )

    def replicated(t: torch.Tensor, dtype, layout) -> ttnn.Tensor:
        return ttnn.from_torch(t, dtype=dtype, layout=layout, device=mesh_device)

    gate_weight = state_dict["gate.weight"]  # read once: a checkpoint layer reads it from its file
    # Column c's gate and up slices interleaved, side by side for the C columns: sharding the last
    # dim C ways gives column c exactly its own (H, 2 Is/C) fused weight.
    cols = mesh_shape[1]
    shared_gate, shared_up = (
        state_dict[f"shared_experts.{p}.weight"].T.reshape(H, cols, -1).permute(1, 0, 2)
        for p in ("gate_proj", "up_proj")
    )  # (C, H, Is/C) each
    shared_w1_w3 = ttnn_moe.interleave_gate_up(shared_gate, shared_up).permute(1, 0, 2).reshape(H, -1)  # (H, 2 Is)

    return TtMoEWeights(
        expert_mapping=replicated(mapping, ttnn.int32, ttnn.ROW_MAJOR_LAYOUT),
        experts_w1_w3=experts("w1_w3"),
        experts_w2=experts("w2"),
        gate_weight=replicated(gate_weight, gate_weight_dtype(gate_weight), ttnn.TILE_LAYOUT),
        gate_bias=replicated(
            state_dict["gate.e_score_correction_bias"].float().reshape(1, -1), ttnn.float32, ttnn.ROW_MAJOR_LAYOUT
        ),
        shared_w1_w3=tp_shard(shared_w1_w3.unsqueeze(0), dim=2),  # (1, H, 2 Is) -> (1, H, 2 Is/C)
        shared_w2=tp_shard(state_dict["shared_experts.down_proj.weight"].T.unsqueeze(0), dim=1),  # -> (1, Is/C, H)
    )
