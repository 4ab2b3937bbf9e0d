"""The expert placement every op takes: ttnn.all_to_all_dispatch's (1, 1, E, D) one-hot form."""

from __future__ import annotations

from typing import Any

from ttnn_moe.ops._arguments import require_int


def expert_mapping(num_experts: int, num_devices: int, *, dtype: Any = None) -> Any:
    """(1, 1, E, D) torch tensor with a 1 at [e, d] when expert e lives on device d (devices in
    row-major mesh order): E/D consecutive experts per device, expert e on device e // (E/D).
    dtype: a torch integer dtype (default int32). Upload it with `from_torch(..., ROW_MAJOR_LAYOUT)`,
    replicated over the mesh."""
    import torch  # noqa: PLC0415  (a host-side set-up helper; the ops themselves import without torch)

    require_int("expert_mapping", "num_experts", num_experts, minimum=1)
    require_int("expert_mapping", "num_devices", num_devices, minimum=1)
    if num_experts % num_devices:
        raise ValueError(f"expert_mapping: num_experts {num_experts} is not divisible by num_devices {num_devices}")
    owner = torch.arange(num_experts) // (num_experts // num_devices)
    one_hot = torch.eye(num_devices, dtype=dtype or torch.int32)[owner]
    return one_hot.reshape(1, 1, num_experts, num_devices)
