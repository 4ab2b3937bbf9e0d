"""transformers' DeepseekV3MoE holding one of our state dicts: the independent reference layer."""

import torch
from transformers import DeepseekV3Config
from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3MoE

from models.deepseek_v3.config import DeepseekV3MoEConfig


def hf_moe_with(state_dict, config: DeepseekV3MoEConfig) -> DeepseekV3MoE:
    """transformers' layer in fp32 holding the normalized state dict, packed into its fused expert tensors
    (gate rows before up rows, as DeepseekV3Experts splits them)."""
    hf_config = DeepseekV3Config(
        hidden_size=config.hidden_size,
        moe_intermediate_size=config.moe_intermediate_size,
        n_routed_experts=config.n_routed_experts,
        num_experts_per_tok=config.num_experts_per_tok,
        n_group=config.n_group,
        topk_group=config.topk_group,
        n_shared_experts=config.n_shared_experts,
        routed_scaling_factor=config.routed_scaling_factor,
        norm_topk_prob=config.norm_topk_prob,
    )
    moe = DeepseekV3MoE(hf_config).float().eval()
    experts = range(config.n_routed_experts)
    fused = {
        "experts.gate_up_proj": torch.stack(
            [
                torch.cat([state_dict[f"experts.{e}.gate_proj.weight"], state_dict[f"experts.{e}.up_proj.weight"]])
                for e in experts
            ]
        ),
        "experts.down_proj": torch.stack([state_dict[f"experts.{e}.down_proj.weight"] for e in experts]),
    }
    rest = {k: v for k, v in state_dict.items() if not k.startswith("experts.")}
    moe.load_state_dict({k: v.float() for k, v in {**rest, **fused}.items()}, strict=True)
    return moe
