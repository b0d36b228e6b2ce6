"""2-bit dequantise-and-matmul: ``y = x @ W.T`` with ``W`` read straight from packed codes.

Reference: ``reference.dequant2_matmul``. ``x [M, K]``; ``codes`` uint8 ``[N, K / 4]`` (four 2-bit
codes a byte, the first weight in the lowest bits: training/quant/packed.py); ``scale`` fp16
``[N, K / group]``. Weight ``(n, k)`` is ``(code - 1.5) * scale[n, k // group]``. Each program
computes a ``[BLOCK_M, BLOCK_N]`` tile of ``y``, walking K in ``BLOCK_K`` steps: it loads the
bytes of the tile, shifts each weight's code out of its byte, scales it and feeds ``tl.dot``, so
the float weight matrix never exists in memory (a quarter of the bytes of int8 move instead).
Inference only (no backward).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import INTERPRET, dot_precision, mma

BLOCK_M, BLOCK_N, BLOCK_K = (16, 32, 32) if INTERPRET else (32, 64, 64)


@triton.jit
def _dequant2_mm(X, C, S, Y, M, N, K, G, PREC: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    KB = K // 4
    NG = K // G
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        km = rk < K
        x = tl.load(X + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & km[None, :], other=0.0)
        wm = (rn[:, None] < N) & km[None, :]
        byte = tl.load(C + rn[:, None] * KB + (rk[None, :] // 4), mask=wm, other=0).to(tl.int32)
        code = (byte >> ((rk[None, :] % 4) * 2)) & 3
        s = tl.load(S + rn[:, None] * NG + (rk[None, :] // G), mask=wm, other=0.0).to(tl.float32)
        w = (code.to(tl.float32) - 1.5) * s                      # [BLOCK_N, BLOCK_K]
        acc = mma(x.to(tl.float32), tl.trans(w), acc, PREC)
    tl.store(Y + rm[:, None] * N + rn[None, :], acc.to(Y.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def dequant2_matmul(x: torch.Tensor, codes: torch.Tensor, scale: torch.Tensor, group: int) -> torch.Tensor:
    K = x.shape[-1]
    N = codes.shape[0]
    if codes.shape[1] * 4 != K or scale.shape != (N, K // group) or K % group:
        raise ValueError(f"codes {tuple(codes.shape)} / scale {tuple(scale.shape)} do not fit K={K}, "
                         f"group={group}")
    xc = x.reshape(-1, K).contiguous()
    M = xc.shape[0]
    y = torch.empty(M, N, dtype=x.dtype, device=x.device)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    _dequant2_mm[grid](xc, codes.contiguous(), scale.contiguous(), y, M, N, K, group,
                       PREC=dot_precision(torch.float32), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
                       BLOCK_K=BLOCK_K)
    return y.reshape(*x.shape[:-1], N)
