"""Fused RMSNorm (forward + backward): one program per block of rows, float32 math, rstd saved.

Reference: ``reference.rms_norm``. Backward: ``dx = rstd * (g - xhat * mean(g * xhat))`` with
``g = dy * w``; ``dw`` is summed per program in float32, then across programs in torch.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import INTERPRET


@triton.jit
def _fwd(X, W, Y, RSTD, M, N, stride_x, stride_y, eps,
         BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    for r in range(ROWS):
        row = pid * ROWS + r
        if row < M:
            x = tl.load(X + row * stride_x + cols, mask=cmask, other=0.0).to(tl.float32)
            rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / N + eps)
            tl.store(RSTD + row, rstd)
            tl.store(Y + row * stride_y + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=cmask)


@triton.jit
def _bwd(X, W, DY, DX, DW, RSTD, M, N, stride_x, stride_dy, stride_dx,
         BLOCK_N: tl.constexpr, ROWS: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < N
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    for r in range(ROWS):
        row = pid * ROWS + r
        if row < M:
            x = tl.load(X + row * stride_x + cols, mask=cmask, other=0.0).to(tl.float32)
            dy = tl.load(DY + row * stride_dy + cols, mask=cmask, other=0.0).to(tl.float32)
            rstd = tl.load(RSTD + row)
            xhat = x * rstd
            g = dy * w
            c = tl.sum(g * xhat, axis=0) / N
            dx = rstd * (g - xhat * c)
            tl.store(DX + row * stride_dx + cols, dx.to(DX.dtype.element_ty), mask=cmask)
            dw += dy * xhat
    tl.store(DW + pid * N + cols, dw, mask=cmask)


def _rows_per_prog(M: int) -> int:
    return max(1, min(64 if not INTERPRET else 16, triton.cdiv(M, 1024)))


class _RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).contiguous()
        M, N = x2.shape
        y = torch.empty_like(x2)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        BLOCK_N = triton.next_power_of_2(N)
        rows = _rows_per_prog(M)
        warps = min(16, max(1, BLOCK_N // 256))
        _fwd[(triton.cdiv(M, rows),)](x2, weight.contiguous(), y, rstd, M, N, x2.stride(0),
                                      y.stride(0), eps, BLOCK_N=BLOCK_N, ROWS=rows,
                                      num_warps=warps)
        ctx.save_for_backward(x2, weight, rstd)
        ctx.shape = shape
        return y.reshape(shape)

    @staticmethod
    def backward(ctx, dy):
        x2, weight, rstd = ctx.saved_tensors
        M, N = x2.shape
        dy2 = dy.reshape(M, N).contiguous()
        dx = torch.empty_like(x2)
        rows = _rows_per_prog(M)
        grid = triton.cdiv(M, rows)
        dw_part = torch.empty(grid, N, dtype=torch.float32, device=x2.device)
        BLOCK_N = triton.next_power_of_2(N)
        warps = min(16, max(1, BLOCK_N // 256))
        _bwd[(grid,)](x2, weight.contiguous(), dy2, dx, dw_part, rstd, M, N, x2.stride(0),
                      dy2.stride(0), dx.stride(0), BLOCK_N=BLOCK_N, ROWS=rows, num_warps=warps)
        return dx.reshape(ctx.shape), dw_part.sum(0).to(weight.dtype), None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return _RMSNorm.apply(x, weight, eps)
