"""Linear + cross-entropy in eager torch, chunked over rows: the [N, V] logits never exist at once.

Same semantics as ``reference.linear_cross_entropy`` (mean CE over targets != ignore_index of
``hidden @ weight.T``). The CPU twin of the Triton kernel in ``linear_ce.py`` and built the same
way (as Liger-Kernel does): each chunk of ``rows`` rows computes its logits, its loss and, when
gradients are needed, its gradients right away, so memory is one [rows, V] block instead of
[N, V] logits plus their gradient. Backward only scales the stored gradients.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

ROWS = 2048


class _ChunkedLinearCE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, ignore_index: int, rows: int):
        h, w = hidden.float(), weight.float()
        n_valid = (targets != ignore_index).sum().clamp_min(1)
        need_grad = hidden.requires_grad or weight.requires_grad
        loss = h.new_zeros(())
        dh = torch.zeros_like(h) if need_grad else None
        dw = torch.zeros_like(w) if need_grad else None
        for s in range(0, h.shape[0], rows):
            hc, tc = h[s:s + rows], targets[s:s + rows]
            logits = hc @ w.t()
            loss += F.cross_entropy(logits, tc, ignore_index=ignore_index, reduction="sum")
            if need_grad:
                g = torch.softmax(logits, dim=-1)
                valid = tc != ignore_index
                g[valid, tc[valid]] -= 1.0
                g[~valid] = 0.0
                g /= n_valid
                dh[s:s + rows] = g @ w
                dw += g.t() @ hc
        ctx.save_for_backward(dh, dw)
        ctx.dtypes = (hidden.dtype, weight.dtype)
        return loss / n_valid

    @staticmethod
    def backward(ctx, grad):
        dh, dw = ctx.saved_tensors
        return ((dh * grad).to(ctx.dtypes[0]) if ctx.needs_input_grad[0] else None,
                (dw * grad).to(ctx.dtypes[1]) if ctx.needs_input_grad[1] else None, None, None, None)


def linear_cross_entropy(hidden, weight, targets, ignore_index: int = -100, rows: int = ROWS) -> torch.Tensor:
    return _ChunkedLinearCE.apply(hidden, weight, targets, ignore_index, rows)
