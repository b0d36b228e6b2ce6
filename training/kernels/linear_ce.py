"""Fused linear + cross-entropy, chunked over the vocabulary: the [N, V] logits never exist.

Reference: ``reference.linear_cross_entropy``. For each vocabulary chunk the logits
``hidden @ W_c.T`` ([N, c], c sized so N*c stays under ~64M elements) come from one cuBLAS
matmul and a Triton kernel folds them into a running max / sum-exp per row (online
log-sum-exp) and picks out the target logit. When gradients are needed a second pass recomputes
each chunk, a Triton kernel turns it in place into ``(softmax - onehot) / n_valid``, and two
matmuls add ``dlogits @ W_c`` to dhidden (float32) and write ``dlogits.T @ hidden`` as dW's rows.
The gradients are computed in the forward (as Liger-Kernel does) and scaled by the incoming
gradient in backward. Cost: four N*V*d matmuls instead of three, for memory bounded in N and V.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import INTERPRET

MAX_CHUNK_ELEMS = 1 << 26
# the interpreter pays per program: big row tiles there; on a GPU 4 rows x 1024 columns
ROWS, BLOCK_V = (64, 1024) if INTERPRET else (4, 1024)


@triton.jit
def _lse_update(LOGITS, M, S, TGT, TLOGIT, N, C, v0, stride,
                ROWS: tl.constexpr, BLOCK_V: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rm = rows < N
    base = LOGITS + rows[:, None].to(tl.int64) * stride
    m_run = tl.load(M + rows, mask=rm, other=0.0)
    s_run = tl.load(S + rows, mask=rm, other=0.0)
    tgt = tl.load(TGT + rows, mask=rm, other=-1)
    for c0 in range(0, C, BLOCK_V):
        cols = c0 + tl.arange(0, BLOCK_V)
        x = tl.load(base + cols[None, :], mask=rm[:, None] & (cols < C)[None, :],
                    other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_run, tl.max(x, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # masked rows: avoid inf - inf
        s_run = s_run * tl.exp(m_run - m_safe) + tl.sum(tl.exp(x - m_safe[:, None]), 1)
        m_run = m_new
    tl.store(M + rows, m_run, mask=rm)
    tl.store(S + rows, s_run, mask=rm)
    t = tgt - v0
    hit = rm & (t >= 0) & (t < C)
    tv = tl.load(LOGITS + rows.to(tl.int64) * stride + t, mask=hit, other=0.0).to(tl.float32)
    tl.store(TLOGIT + rows, tv, mask=hit)


@triton.jit
def _ce_grad(LOGITS, LSE, TGT, SCALE, N, C, v0, stride,
             ROWS: tl.constexpr, BLOCK_V: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    rm = rows < N
    base = LOGITS + rows[:, None].to(tl.int64) * stride
    lse = tl.load(LSE + rows, mask=rm, other=0.0)
    tgt = tl.load(TGT + rows, mask=rm, other=-1)
    sc = tl.load(SCALE + rows, mask=rm, other=0.0)
    for c0 in range(0, C, BLOCK_V):
        cols = c0 + tl.arange(0, BLOCK_V)
        m = rm[:, None] & (cols < C)[None, :]
        x = tl.load(base + cols[None, :], mask=m, other=0.0).to(tl.float32)
        g = tl.exp(x - lse[:, None]) - tl.where(cols[None, :] + v0 == tgt[:, None], 1.0, 0.0)
        tl.store(base + cols[None, :], (g * sc[:, None]).to(LOGITS.dtype.element_ty), mask=m)


def _chunk(N: int, V: int) -> int:
    c = max(128, MAX_CHUNK_ELEMS // max(N, 1))
    return min(V, c)


class _LinearCE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, ignore_index, chunk, want_grad):
        if hidden.dim() != 2 or weight.dim() != 2 or hidden.shape[1] != weight.shape[1]:
            raise ValueError(f"linear_cross_entropy: hidden [N,d] {tuple(hidden.shape)} and "
                             f"weight [V,d] {tuple(weight.shape)} do not match")
        if targets.shape != hidden.shape[:1]:
            raise ValueError(f"targets must be [N]={hidden.shape[0]}, got {tuple(targets.shape)}")
        h = hidden.contiguous()
        N, V = h.shape[0], weight.shape[0]
        dev = h.device
        valid = targets != ignore_index
        n_valid = valid.sum().clamp_min(1).float()
        tgt = torch.where(valid, targets, -1).to(torch.int32).contiguous()
        m = torch.full((N,), float("-inf"), dtype=torch.float32, device=dev)
        s = torch.zeros(N, dtype=torch.float32, device=dev)
        tlogit = torch.zeros(N, dtype=torch.float32, device=dev)
        chunk = chunk or _chunk(N, V)
        for v0 in range(0, V, chunk):
            logits = h @ weight[v0:v0 + chunk].t()
            C = logits.shape[1]
            _lse_update[(triton.cdiv(N, ROWS),)](logits, m, s, tgt, tlogit, N, C, v0,
                                                 logits.stride(0), ROWS=ROWS, BLOCK_V=BLOCK_V)
        lse = m + torch.log(s)
        loss = torch.where(valid, lse - tlogit, 0.0).sum() / n_valid
        if want_grad:
            scale = (valid.float() / n_valid).contiguous()
            dh = torch.zeros(N, h.shape[1], dtype=torch.float32, device=dev)
            dw = torch.empty_like(weight)
            for v0 in range(0, V, chunk):
                wc = weight[v0:v0 + chunk]
                logits = h @ wc.t()
                C = logits.shape[1]
                _ce_grad[(triton.cdiv(N, ROWS),)](logits, lse, tgt, scale, N, C, v0,
                                                  logits.stride(0), ROWS=ROWS, BLOCK_V=BLOCK_V)
                dh += (logits @ wc).float()
                dw[v0:v0 + chunk] = logits.t() @ h
            ctx.save_for_backward(dh, dw)
            ctx.hdtype = hidden.dtype
        return loss

    @staticmethod
    def backward(ctx, g):
        dh, dw = ctx.saved_tensors
        return (dh * g).to(ctx.hdtype), dw * g.to(dw.dtype), None, None, None, None


def linear_cross_entropy(hidden, weight, targets, ignore_index: int = -100,
                         chunk: int | None = None) -> torch.Tensor:
    # Function.forward always runs without grad mode, so decide here whether the second
    # (gradient) pass is needed: not under no_grad / inference, not for frozen inputs.
    want_grad = torch.is_grad_enabled() and (hidden.requires_grad or weight.requires_grad)
    return _LinearCE.apply(hidden, weight, targets, ignore_index, chunk, want_grad)
