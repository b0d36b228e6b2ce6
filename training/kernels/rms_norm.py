"""Fused RMSNorm (forward + backward): each program normalises a 2-D tile of rows in float32.

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
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_N)
    rm = rows < M
    m = rm[:, None] & (cols[None, :] < N)
    w = tl.load(W + cols, mask=cols < N, other=0.0).to(tl.float32)
    x = tl.load(X + rows[:, None].to(tl.int64) * stride_x + cols[None, :], mask=m,
                other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / N + eps)
    tl.store(RSTD + rows, rstd, mask=rm)
    y = x * rstd[:, None] * w[None, :]
    tl.store(Y + rows[:, None].to(tl.int64) * stride_y + cols[None, :], y.to(Y.dtype.element_ty),
             mask=m)


@triton.jit
def _bwd(X, W, DY, DX, DW, RSTD, M, N, stride_x, stride_dy, stride_dx,
         BLOCK_N: tl.constexpr, ROWS: tl.constexpr, TILES: tl.constexpr):
    # each program handles TILES consecutive tiles of ROWS rows and writes one partial dw row
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    cm = cols < N
    w = tl.load(W + cols, mask=cm, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    for i in range(TILES):
        rows = (pid * TILES + i) * ROWS + tl.arange(0, ROWS)
        rm = rows < M
        m = rm[:, None] & cm[None, :]
        r64 = rows[:, None].to(tl.int64)
        x = tl.load(X + r64 * stride_x + cols[None, :], mask=m, other=0.0).to(tl.float32)
        dy = tl.load(DY + r64 * stride_dy + cols[None, :], mask=m, other=0.0).to(tl.float32)
        rstd = tl.load(RSTD + rows, mask=rm, other=0.0)
        xhat = x * rstd[:, None]
        g = dy * w[None, :]
        c = tl.sum(g * xhat, axis=1) / N
        dx = rstd[:, None] * (g - xhat * c[:, None])
        tl.store(DX + r64 * stride_dx + cols[None, :], dx.to(DX.dtype.element_ty), mask=m)
        dw += tl.sum(dy * xhat, axis=0)
    tl.store(DW + pid * N + cols, dw, mask=cm)


def _rows(M: int, BLOCK_N: int) -> int:
    """Rows per tile: the interpreter pays per program, so it takes as many rows as it can."""
    if INTERPRET:
        return min(triton.next_power_of_2(M), max(1, 65536 // BLOCK_N))
    return max(2, min(16, 4096 // BLOCK_N))  # >= 2: no size-1 aranges


class _RMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        shape = x.shape
        x2 = x.reshape(-1, shape[-1]).contiguous()
        M, N = x2.shape
        y = torch.empty_like(x2)
        rstd = torch.empty(M, dtype=torch.float32, device=x.device)
        BLOCK_N = triton.next_power_of_2(N)
        rows = _rows(M, BLOCK_N)
        warps = min(16, max(1, rows * BLOCK_N // 256))
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
        BLOCK_N = triton.next_power_of_2(N)
        rows = _rows(M, BLOCK_N)
        tiles = 1 if INTERPRET else max(1, min(64, triton.cdiv(M, rows * 1024)))
        grid = triton.cdiv(M, rows * tiles)
        dw_part = torch.empty(grid, N, dtype=torch.float32, device=x2.device)
        warps = min(16, max(1, rows * BLOCK_N // 256))
        _bwd[(grid,)](x2, weight.contiguous(), dy2, dx, dw_part, rstd, M, N, x2.stride(0),
                      dy2.stride(0), dx.stride(0), BLOCK_N=BLOCK_N, ROWS=rows, TILES=tiles,
                      num_warps=warps)
        return dx.reshape(ctx.shape), dw_part.sum(0).to(weight.dtype), None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return _RMSNorm.apply(x, weight, eps)
