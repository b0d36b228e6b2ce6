"""Flash attention (forward + backward) with grouped-query heads, causal, sliding-window and
document masking, all in-kernel.

Reference: ``reference.attention`` (same argument conventions: q ``[B,H,Tq,D]``, k/v
``[B,Hkv,Tk,D]``, queries aligned to the end of the keys). FlashAttention-2 scheme: the forward
keeps a running max/sum per query row in base-2 (``exp2``) and saves the log-sum-exp; the
backward recomputes probabilities, one kernel accumulating dK/dV per key block (looping over
the G query heads that share the kv head, so no atomics) and one accumulating dQ per query block.
Causal and window masks also shrink the loop ranges, so a sliding-window layer costs O(T * W).
"""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import configs, device_fn, dot_precision, mma, pow2
from training.kernels.reference import check_attention_args

LOG2E = 1.4426950408889634


@device_fn
def _visible(qpos, kpos, Tk, dq, dk, WINDOW, CAUSAL: tl.constexpr, HAS_WINDOW: tl.constexpr,
             HAS_DOC: tl.constexpr):
    ok = kpos[None, :] < Tk
    if CAUSAL:
        ok = ok & (kpos[None, :] <= qpos[:, None])
    if HAS_WINDOW:
        ok = ok & ((qpos[:, None] - kpos[None, :]) < WINDOW)
    if HAS_DOC:
        ok = ok & (dq[:, None] == dk[None, :])
    return ok


@triton.autotune(
    configs=configs([dict(BLOCK_M=128, BLOCK_N=64, num_warps=4, num_stages=3),
                     dict(BLOCK_M=128, BLOCK_N=64, num_warps=8, num_stages=3),
                     dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3),
                     dict(BLOCK_M=128, BLOCK_N=128, num_warps=8, num_stages=2)],
                    dict(BLOCK_M=16, BLOCK_N=16)),
    key=["Tq", "Tk", "BLOCK_D", "CAUSAL", "HAS_WINDOW", "HAS_DOC"])
@triton.jit
def _fwd(Q, K, V, O, LSE, DOC, sqb, sqh, sqt, skb, skh, skt, svb, svh, svt, sob, soh, sot, sdb,
         H, G, Tq, Tk, D, qk_scale, WINDOW,
         CAUSAL: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_DOC: tl.constexpr,
         BLOCK_D: tl.constexpr, PREC: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    hk = h // G
    off = Tk - Tq
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    qpos = offs_m + off
    q = tl.load(Q + b * sqb + h * sqh + offs_m[:, None] * sqt + offs_d[None, :],
                mask=(offs_m[:, None] < Tq) & dmask[None, :], other=0.0)
    dq = qpos
    if HAS_DOC:
        dq = tl.load(DOC + b * sdb + qpos, mask=offs_m < Tq, other=-1)
    lo = 0
    hi = Tk
    if CAUSAL:
        hi = tl.minimum(Tk, pid_m * BLOCK_M + BLOCK_M + off)
    if HAS_WINDOW:
        lo = tl.maximum(0, pid_m * BLOCK_M + off - WINDOW + 1)
        lo = (lo // BLOCK_N) * BLOCK_N
    m_i = tl.full([BLOCK_M], -1.0e30, dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    kbase = K + b * skb + hk * skh
    vbase = V + b * svb + hk * svh
    for start_n in range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kmask = offs_n < Tk
        kt = tl.load(kbase + offs_n[None, :] * skt + offs_d[:, None],
                     mask=kmask[None, :] & dmask[:, None], other=0.0)
        s = mma(q, kt, tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32), PREC) * qk_scale
        dk = offs_n
        if HAS_DOC:
            dk = tl.load(DOC + b * sdb + offs_n, mask=kmask, other=-2)
        ok = _visible(qpos, offs_n, Tk, dq, dk, WINDOW, CAUSAL, HAS_WINDOW, HAS_DOC)
        s = tl.where(ok, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp2(m_i - m_new)
        p = tl.exp2(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(vbase + offs_n[:, None] * svt + offs_d[None, :],
                    mask=kmask[:, None] & dmask[None, :], other=0.0)
        acc = acc * alpha[:, None]
        acc = mma(p.to(v.dtype), v, acc, PREC)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)
    o = acc / l_safe[:, None]
    tl.store(O + b * sob + h * soh + offs_m[:, None] * sot + offs_d[None, :],
             o.to(O.dtype.element_ty), mask=(offs_m[:, None] < Tq) & dmask[None, :])
    tl.store(LSE + bh * Tq + offs_m, m_i + tl.log2(l_safe), mask=offs_m < Tq)


@triton.autotune(
    configs=configs([dict(BLOCK_M=32, BLOCK_N=128, num_warps=4, num_stages=3),
                     dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3),
                     dict(BLOCK_M=32, BLOCK_N=64, num_warps=4, num_stages=2)],
                    dict(BLOCK_M=16, BLOCK_N=16)),
    key=["Tq", "Tk", "BLOCK_D", "CAUSAL", "HAS_WINDOW", "HAS_DOC"])
@triton.jit
def _bwd_dkdv(Q, K, V, DO, LSE, DELTA, DK, DV, DOC,
              sqb, sqh, sqt, skb, skh, skt, sdb,
              H, Hkv, G, Tq, Tk, D, qk_scale, sm_scale, WINDOW,
              CAUSAL: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_DOC: tl.constexpr,
              BLOCK_D: tl.constexpr, PREC: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # q/do/o share strides (sq*); k/v/dk/dv share strides (sk*) (all made contiguous).
    pid_n = tl.program_id(0)
    bhk = tl.program_id(1)
    b = bhk // Hkv
    hk = bhk % Hkv
    off = Tk - Tq
    start_n = pid_n * BLOCK_N
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    kmask = offs_n < Tk
    kvoff = b * skb + hk * skh + offs_n[:, None] * skt + offs_d[None, :]
    kvmask = kmask[:, None] & dmask[None, :]
    k = tl.load(K + kvoff, mask=kvmask, other=0.0)
    v = tl.load(V + kvoff, mask=kvmask, other=0.0)
    dk_doc = offs_n
    if HAS_DOC:
        dk_doc = tl.load(DOC + b * sdb + offs_n, mask=kmask, other=-2)
    lo = 0
    hi = Tq
    if CAUSAL:
        lo = tl.maximum(0, start_n - off)
        lo = (lo // BLOCK_M) * BLOCK_M
    if HAS_WINDOW:
        hi = tl.minimum(Tq, start_n + BLOCK_N - 1 + WINDOW - off)
    dk = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
    for g in range(G):
        h = hk * G + g
        qbase = b * sqb + h * sqh
        for start_m in range(lo, hi, BLOCK_M):
            offs_m = start_m + tl.arange(0, BLOCK_M)
            mmask = offs_m < Tq
            qpos = offs_m + off
            qoff = qbase + offs_m[:, None] * sqt + offs_d[None, :]
            qm = mmask[:, None] & dmask[None, :]
            q = tl.load(Q + qoff, mask=qm, other=0.0)
            do = tl.load(DO + qoff, mask=qm, other=0.0)
            lse = tl.load(LSE + (b * H + h) * Tq + offs_m, mask=mmask, other=float("inf"))
            delta = tl.load(DELTA + (b * H + h) * Tq + offs_m, mask=mmask, other=0.0)
            dq_doc = qpos
            if HAS_DOC:
                dq_doc = tl.load(DOC + b * sdb + qpos, mask=mmask, other=-1)
            s = mma(q, tl.trans(k), tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32), PREC) * qk_scale  # [M, N]
            ok = _visible(qpos, offs_n, Tk, dq_doc, dk_doc, WINDOW, CAUSAL, HAS_WINDOW, HAS_DOC)
            p = tl.where(ok, tl.exp2(s - lse[:, None]), 0.0)
            dv = mma(tl.trans(p.to(do.dtype)), do, dv, PREC)
            dp = mma(do, tl.trans(v), tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32), PREC)
            ds = p * (dp - delta[:, None])
            dk = mma(tl.trans(ds.to(q.dtype)), q, dk, PREC)
    tl.store(DK + kvoff, (dk * sm_scale).to(DK.dtype.element_ty), mask=kvmask)
    tl.store(DV + kvoff, dv.to(DV.dtype.element_ty), mask=kvmask)


@triton.autotune(
    configs=configs([dict(BLOCK_M=128, BLOCK_N=32, num_warps=4, num_stages=3),
                     dict(BLOCK_M=64, BLOCK_N=64, num_warps=4, num_stages=3),
                     dict(BLOCK_M=64, BLOCK_N=32, num_warps=4, num_stages=2)],
                    dict(BLOCK_M=16, BLOCK_N=16)),
    key=["Tq", "Tk", "BLOCK_D", "CAUSAL", "HAS_WINDOW", "HAS_DOC"])
@triton.jit
def _bwd_dq(Q, K, V, DO, LSE, DELTA, DQ, DOC,
            sqb, sqh, sqt, skb, skh, skt, sdb,
            H, G, Tq, Tk, D, qk_scale, sm_scale, WINDOW,
            CAUSAL: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_DOC: tl.constexpr,
            BLOCK_D: tl.constexpr, PREC: tl.constexpr,
            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    hk = h // G
    off = Tk - Tq
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    dmask = offs_d < D
    mmask = offs_m < Tq
    qpos = offs_m + off
    qoff = b * sqb + h * sqh + offs_m[:, None] * sqt + offs_d[None, :]
    qm = mmask[:, None] & dmask[None, :]
    q = tl.load(Q + qoff, mask=qm, other=0.0)
    do = tl.load(DO + qoff, mask=qm, other=0.0)
    lse = tl.load(LSE + bh * Tq + offs_m, mask=mmask, other=float("inf"))
    delta = tl.load(DELTA + bh * Tq + offs_m, mask=mmask, other=0.0)
    dq_doc = qpos
    if HAS_DOC:
        dq_doc = tl.load(DOC + b * sdb + qpos, mask=mmask, other=-1)
    lo = 0
    hi = Tk
    if CAUSAL:
        hi = tl.minimum(Tk, pid_m * BLOCK_M + BLOCK_M + off)
    if HAS_WINDOW:
        lo = tl.maximum(0, pid_m * BLOCK_M + off - WINDOW + 1)
        lo = (lo // BLOCK_N) * BLOCK_N
    acc = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
    kbase = b * skb + hk * skh
    for start_n in range(lo, hi, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        kmask = offs_n < Tk
        kvoff = kbase + offs_n[:, None] * skt + offs_d[None, :]
        kvm = kmask[:, None] & dmask[None, :]
        k = tl.load(K + kvoff, mask=kvm, other=0.0)
        v = tl.load(V + kvoff, mask=kvm, other=0.0)
        dk_doc = offs_n
        if HAS_DOC:
            dk_doc = tl.load(DOC + b * sdb + offs_n, mask=kmask, other=-2)
        s = mma(q, tl.trans(k), tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32), PREC) * qk_scale
        ok = _visible(qpos, offs_n, Tk, dq_doc, dk_doc, WINDOW, CAUSAL, HAS_WINDOW, HAS_DOC)
        p = tl.where(ok, tl.exp2(s - lse[:, None]), 0.0)
        dp = mma(do, tl.trans(v), tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32), PREC)
        ds = p * (dp - delta[:, None])
        acc = mma(ds.to(k.dtype), k, acc, PREC)
    tl.store(DQ + qoff, (acc * sm_scale).to(DQ.dtype.element_ty), mask=qm)


def _common(q, k, causal, window, doc_ids, scale):
    B, H, Tq, D = q.shape
    Hkv, Tk = k.shape[1], k.shape[2]
    sm_scale = 1.0 / math.sqrt(D) if scale is None else float(scale)
    doc = doc_ids.to(torch.int32).contiguous() if doc_ids is not None else q.new_zeros(1, 1, dtype=torch.int32)
    flags = dict(CAUSAL=bool(causal), HAS_WINDOW=window is not None, HAS_DOC=doc_ids is not None,
                 BLOCK_D=pow2(D), PREC=dot_precision(q.dtype))
    return B, H, Hkv, Tq, Tk, D, sm_scale, doc, flags


class _FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, window, doc_ids, scale):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, H, Hkv, Tq, Tk, D, sm_scale, doc, flags = _common(q, k, causal, window, doc_ids, scale)
        o = torch.empty_like(q)
        lse = torch.empty(B, H, Tq, dtype=torch.float32, device=q.device)
        grid = lambda META: (triton.cdiv(Tq, META["BLOCK_M"]), B * H)  # noqa: E731
        _fwd[grid](q, k, v, o, lse, doc, *q.stride()[:3], *k.stride()[:3], *v.stride()[:3],
                   *o.stride()[:3], doc.stride(0), H, H // Hkv, Tq, Tk, D, sm_scale * LOG2E,
                   window or 0, **flags)
        ctx.save_for_backward(q, k, v, o, lse, doc)
        ctx.args = (causal, window, doc_ids is not None, scale)
        return o

    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse, doc = ctx.saved_tensors
        causal, window, has_doc, scale = ctx.args
        B, H, Hkv, Tq, Tk, D, sm_scale, _, flags = _common(q, k, causal, window,
                                                           doc if has_doc else None, scale)
        do = do.contiguous()
        delta = (do.float() * o.float()).sum(-1)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        common = (*q.stride()[:3], *k.stride()[:3], doc.stride(0))
        _bwd_dkdv[lambda META: (triton.cdiv(Tk, META["BLOCK_N"]), B * Hkv)](
            q, k, v, do, lse, delta, dk, dv, doc, *common, H, Hkv, H // Hkv, Tq, Tk, D,
            sm_scale * LOG2E, sm_scale, window or 0, **flags)
        _bwd_dq[lambda META: (triton.cdiv(Tq, META["BLOCK_M"]), B * H)](
            q, k, v, do, lse, delta, dq, doc, *common, H, H // Hkv, Tq, Tk, D,
            sm_scale * LOG2E, sm_scale, window or 0, **flags)
        return dq, dk, dv, None, None, None, None


def attention(q, k, v, causal: bool = True, window: int | None = None, doc_ids=None,
              scale: float | None = None) -> torch.Tensor:
    check_attention_args(q, k, v, causal, window, doc_ids)
    if k.dtype != q.dtype or v.dtype != q.dtype:  # tl.dot needs one dtype (e.g. an fp32 cache)
        k, v = k.to(q.dtype), v.to(q.dtype)
    return _FlashAttention.apply(q, k, v, causal, window, doc_ids, scale)
