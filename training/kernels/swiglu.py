"""Fused SwiGLU ``silu(gate) * up`` (forward + backward), elementwise over flattened tensors.

Reference: ``reference.swiglu``. Backward recomputes the sigmoid instead of saving it:
``dgate = dy * up * s * (1 + gate * (1 - s))``, ``dup = dy * gate * s``.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import INTERPRET

BLOCK = 65536 if INTERPRET else 1024  # the interpreter pays per program, not per element


@triton.jit
def _fwd(G, U, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    g = tl.load(G + offs, mask=m, other=0.0).to(tl.float32)
    u = tl.load(U + offs, mask=m, other=0.0).to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-g))
    tl.store(Y + offs, (g * s * u).to(Y.dtype.element_ty), mask=m)


@triton.jit
def _bwd(G, U, DY, DG, DU, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    g = tl.load(G + offs, mask=m, other=0.0).to(tl.float32)
    u = tl.load(U + offs, mask=m, other=0.0).to(tl.float32)
    dy = tl.load(DY + offs, mask=m, other=0.0).to(tl.float32)
    s = 1.0 / (1.0 + tl.exp(-g))
    tl.store(DG + offs, (dy * u * s * (1.0 + g * (1.0 - s))).to(DG.dtype.element_ty), mask=m)
    tl.store(DU + offs, (dy * g * s).to(DU.dtype.element_ty), mask=m)


class _SwiGLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, gate, up):
        if gate.shape != up.shape:
            raise ValueError(f"swiglu: gate {tuple(gate.shape)} != up {tuple(up.shape)}")
        g, u = gate.contiguous(), up.contiguous()
        y = torch.empty_like(g)
        n = g.numel()
        _fwd[(triton.cdiv(n, BLOCK),)](g, u, y, n, BLOCK=BLOCK)
        ctx.save_for_backward(g, u)
        return y

    @staticmethod
    def backward(ctx, dy):
        g, u = ctx.saved_tensors
        dg, du = torch.empty_like(g), torch.empty_like(u)
        n = g.numel()
        _bwd[(triton.cdiv(n, BLOCK),)](g, u, dy.contiguous(), dg, du, n, BLOCK=BLOCK)
        return dg, du


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return _SwiGLU.apply(gate, up)
