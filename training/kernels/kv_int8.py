"""int8 KV-cache quantise / dequantise: symmetric, one float32 scale per head vector.

Reference: ``reference.quantize_kv_int8``. Inference only (no backward). ``x [..., D]`` is viewed
as rows of D; each program handles ROWS rows: ``scale = max|x| / 127``,
``q = round_half_away(x / scale)``. Rounding matches the reference bit for bit.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import INTERPRET

ROWS = 256 if INTERPRET else 16


@triton.jit
def _quant(X, Q, S, R, D, BLOCK_D: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_D)
    m = (rows[:, None] < R) & (cols[None, :] < D)
    x = tl.load(X + rows[:, None] * D + cols[None, :], mask=m, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=1)
    scale = tl.maximum(amax, 1e-12) / 127.0
    v = x / scale[:, None]
    q = tl.where(v >= 0, tl.floor(v + 0.5), -tl.floor(-v + 0.5))
    q = tl.minimum(tl.maximum(q, -127.0), 127.0)
    tl.store(Q + rows[:, None] * D + cols[None, :], q.to(tl.int8), mask=m)
    tl.store(S + rows, scale, mask=rows < R)


@triton.jit
def _dequant(Q, S, Y, R, D, BLOCK_D: tl.constexpr, ROWS: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK_D)
    m = (rows[:, None] < R) & (cols[None, :] < D)
    q = tl.load(Q + rows[:, None] * D + cols[None, :], mask=m, other=0).to(tl.float32)
    s = tl.load(S + rows, mask=rows < R, other=0.0)
    tl.store(Y + rows[:, None] * D + cols[None, :], (q * s[:, None]).to(Y.dtype.element_ty), mask=m)


def quantize_kv_int8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xc = x.contiguous()
    D = x.shape[-1]
    R = xc.numel() // D
    q = torch.empty(x.shape, dtype=torch.int8, device=x.device)
    s = torch.empty(x.shape[:-1] + (1,), dtype=torch.float32, device=x.device)
    _quant[(triton.cdiv(R, ROWS),)](xc, q, s, R, D, BLOCK_D=triton.next_power_of_2(D), ROWS=ROWS)
    return q, s


def dequantize_kv_int8(q: torch.Tensor, scale: torch.Tensor,
                       dtype: torch.dtype = torch.float32) -> torch.Tensor:
    D = q.shape[-1]
    if scale.shape != q.shape[:-1] + (1,):
        raise ValueError(f"scale {tuple(scale.shape)} must be {tuple(q.shape[:-1]) + (1,)}")
    qc, sc = q.contiguous(), scale.float().contiguous()
    R = qc.numel() // D
    y = torch.empty(q.shape, dtype=dtype, device=q.device)
    _dequant[(triton.cdiv(R, ROWS),)](qc, sc, y, R, D, BLOCK_D=triton.next_power_of_2(D), ROWS=ROWS)
    return y
