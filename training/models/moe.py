"""Top-k token-choice mixture of SwiGLU experts: router, dropless expert compute, auxiliary losses.

Routing: ``p = softmax(x @ router.T)`` in float32; each token goes to its ``top_k`` experts with
weights ``p_topk / sum(p_topk)`` (renormalised, so a zeroed router after sparse upcycling gives
every expert weight ``1/top_k`` and the layer equals the dense MLP it was copied from).
Dropless: no capacity factor, every assignment is computed; ``ops.moe_mlp`` sorts tokens by
expert and runs a grouped matmul.

Auxiliary loss (returned per layer, summed into ``out.aux_loss`` by the model):
``router_aux_coef * E * sum_e f_e * P_e`` (Switch-style load balance: f_e = share of the N*k
assignments sent to expert e, P_e = mean router probability of e; 1.0 when perfectly balanced)
``+ router_z_coef * mean(logsumexp(logits)^2)`` (router z-loss, keeps router logits small).
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from training.kernels import ops
from training.models.config import ModelConfig
from training.models.layers import Linear, SwiGLU


class Experts(nn.Module):
    """E SwiGLU experts stored stacked: ``w_gate, w_up [E, d, f]``, ``w_down [E, f, d]``.

    Expert e computes ``(silu(x @ w_gate[e]) * (x @ w_up[e])) @ w_down[e]``; so copying a dense
    ``SwiGLU`` into expert e is ``w_gate[e] = dense.w_gate.weight.T`` (same for w_up, w_down).
    """

    def __init__(self, n_experts: int, d: int, hidden: int):
        super().__init__()
        self.w_gate = nn.Parameter(torch.empty(n_experts, d, hidden))
        self.w_up = nn.Parameter(torch.empty(n_experts, d, hidden))
        self.w_down = nn.Parameter(torch.empty(n_experts, hidden, d))


class MoE(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_experts, self.top_k = cfg.n_experts, cfg.top_k
        self.aux_coef, self.z_coef = cfg.router_aux_coef, cfg.router_z_coef
        self.impl = cfg.kernels
        self.router = Linear(cfg.d_model, cfg.n_experts)
        self.experts = Experts(cfg.n_experts, cfg.d_model, cfg.expert_hidden)
        self.shared = SwiGLU(cfg.d_model, cfg.expert_hidden, cfg.kernels) if cfg.shared_expert else None

    def route(self, x: torch.Tensor):
        """``x [N, d]`` -> (router logits fp32 [N, E], probs [N, E], topk_idx [N, k], topk_weight [N, k])."""
        logits = F.linear(x.float(), self.router.weight.float())
        probs = torch.softmax(logits, dim=-1)
        w, idx = probs.topk(self.top_k, dim=-1)
        return logits, probs, idx, w / w.sum(-1, keepdim=True)

    def aux_loss(self, logits, probs, idx) -> torch.Tensor:
        N = probs.shape[0]
        counts = torch.zeros(self.n_experts, device=probs.device, dtype=torch.float32)
        counts.scatter_add_(0, idx.reshape(-1), torch.ones(idx.numel(), device=probs.device))
        f = counts / max(N * self.top_k, 1)
        balance = self.n_experts * (f * probs.mean(0)).sum()
        z = torch.logsumexp(logits, dim=-1).pow(2).mean()
        return self.aux_coef * balance + self.z_coef * z

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shape = x.shape
        xf = x.reshape(-1, shape[-1])
        logits, probs, idx, w = self.route(xf)
        e = self.experts  # weights cast to the activations' dtype (a no-op outside autocast)
        y = ops.moe_mlp(xf, idx, w.to(x.dtype), e.w_gate.to(x.dtype), e.w_up.to(x.dtype),
                        e.w_down.to(x.dtype), impl=self.impl)
        if self.shared is not None:
            y = y + self.shared(xf)[0]
        return y.reshape(shape), self.aux_loss(logits, probs, idx)
