"""Fused rotary embedding for q and k (half-split layout), forward and backward.

Reference: ``reference.apply_rope``. One program handles a tile of (b, h, t) rows of one tensor;
the cos/sin row is picked from ``[Bc, T, D/2]`` (Bc = 1 broadcasts over the batch). The backward
is the same rotation with ``-sin`` (the rotation is orthogonal), so one kernel serves both.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import INTERPRET


@triton.jit
def _rope(X, Y, COS, SIN, R, H, T, HALF, cos_batch_stride, sign,
          BLOCK_H: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_H)
    m = (rows < R)[:, None] & (cols < HALF)[None, :]
    b = rows // (H * T)
    t = rows % T
    crow = (b * cos_batch_stride + t * HALF)[:, None] + cols[None, :]
    c = tl.load(COS + crow, mask=m, other=0.0)
    s = tl.load(SIN + crow, mask=m, other=0.0) * sign
    base = rows[:, None].to(tl.int64) * 2 * HALF + cols[None, :]
    x1 = tl.load(X + base, mask=m, other=0.0).to(tl.float32)
    x2 = tl.load(X + base + HALF, mask=m, other=0.0).to(tl.float32)
    tl.store(Y + base, (x1 * c - x2 * s).to(Y.dtype.element_ty), mask=m)
    tl.store(Y + base + HALF, (x2 * c + x1 * s).to(Y.dtype.element_ty), mask=m)


def _table(t: torch.Tensor, B: int, T: int, half: int) -> tuple[torch.Tensor, int]:
    if t.dim() == 2:
        t = t.unsqueeze(0)
    if t.shape[1:] != (T, half) or t.shape[0] not in (1, B):
        raise ValueError(f"rope cos/sin must be [T, D/2] or [1|B, T, D/2] = [.., {T}, {half}], "
                         f"got {tuple(t.shape)}")
    t = t.float().contiguous()
    return t, (0 if t.shape[0] == 1 else T * half)


def _launch(x, cos, sin, cbs, sign):
    B, H, T, D = x.shape
    xc = x.contiguous()
    y = torch.empty_like(xc)
    R = B * H * T
    BLOCK_H = triton.next_power_of_2(D // 2)
    # the interpreter pays per program: one big tile; on a GPU ~2K elements per program
    rows = min(triton.next_power_of_2(R), 65536 // BLOCK_H) if INTERPRET else max(2, 2048 // BLOCK_H)
    _rope[(triton.cdiv(R, rows),)](xc, y, cos, sin, R, H, T, D // 2, cbs, sign,
                                   BLOCK_H=BLOCK_H, ROWS=rows, num_warps=4)
    return y


class _RoPE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, cos, sin):
        B, _, T, D = q.shape
        if D % 2 or (k is not None and (k.shape[0] != B or k.shape[2] != T or k.shape[3] != D)):
            raise ValueError(f"rope: q {tuple(q.shape)} and k {tuple(k.shape)} must share B, T "
                             f"and an even head dim")
        c, cbs = _table(cos, B, T, D // 2)
        s, _ = _table(sin, B, T, D // 2)
        ctx.save_for_backward(c, s)
        ctx.cbs = cbs
        return _launch(q, c, s, cbs, 1.0), (None if k is None else _launch(k, c, s, cbs, 1.0))

    @staticmethod
    def backward(ctx, dq, dk):
        c, s = ctx.saved_tensors
        gq = _launch(dq, c, s, ctx.cbs, -1.0) if dq is not None else None
        gk = _launch(dk, c, s, ctx.cbs, -1.0) if dk is not None else None
        return gq, gk, None, None


def apply_rope(q, k, cos, sin):
    """Returns (rotated q, rotated k); k may be None (then None comes back)."""
    return _RoPE.apply(q, k, cos, sin)
