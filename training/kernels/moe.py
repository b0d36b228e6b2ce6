"""Dropless MoE experts: token permutation fused into a grouped matmul, forward and backward.

Reference: ``reference.moe_mlp``. The N*k (token, expert) assignments are sorted by expert
(stable, on device, no host sync); a tile table maps each program to (expert, first row), so
one launch runs every expert's GEMM however unevenly tokens are routed (no capacity, nothing
dropped). Steps: gather-GEMM ``x[tok] @ Wg[e]`` and ``@ Wu[e]`` (the permutation is the row
index of the A load), the SwiGLU kernel, GEMM ``@ Wd[e]``, then a combine kernel that sums each
token's k outputs weighted by the router (a deterministic gather, not an atomic scatter).
Backward: grouped GEMMs against transposed weights (strides only), a per-expert weight-gradient
kernel reducing over the expert's rows, and the same combine kernel (weight 1) to un-permute dx.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from training.kernels._triton_util import INTERPRET, dot_precision, mma
from training.kernels.swiglu import swiglu

if INTERPRET:
    BM, BN, BK, WARPS, STAGES = 16, 128, 128, 1, 1  # few, large programs for the interpreter
else:
    BM, BN, BK, WARPS, STAGES = 64, 128, 64, 4, 3


@triton.jit
def _gmm(A, A_IDX, B, C, TILE_E, TILE_R0, TILE_END, K, N, sam, sbe, sbk, sbn, scm,
         GATHER: tl.constexpr, PREC: tl.constexpr,
         BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """C[r] = A[idx(r)] @ B[e] for the rows r of tile t (expert e)."""
    t = tl.program_id(0)
    pn = tl.program_id(1)
    e = tl.load(TILE_E + t)
    if e >= 0:
        r0 = tl.load(TILE_R0 + t)
        r1 = tl.load(TILE_END + t)
        rows = r0 + tl.arange(0, BM)
        rmask = rows < r1
        arow = rows
        if GATHER:
            arow = tl.load(A_IDX + rows, mask=rmask, other=0)
        cols = pn * BN + tl.arange(0, BN)
        cmask = cols < N
        acc = tl.zeros([BM, BN], dtype=tl.float32)
        bbase = B + e.to(tl.int64) * sbe
        for k0 in range(0, K, BK):
            ks = k0 + tl.arange(0, BK)
            kmask = ks < K
            a = tl.load(A + arow[:, None].to(tl.int64) * sam + ks[None, :],
                        mask=rmask[:, None] & kmask[None, :], other=0.0)
            b = tl.load(bbase + ks[:, None] * sbk + cols[None, :] * sbn,
                        mask=kmask[:, None] & cmask[None, :], other=0.0)
            acc = mma(a, b, acc, PREC)
        tl.store(C + rows[:, None].to(tl.int64) * scm + cols[None, :], acc.to(C.dtype.element_ty),
                 mask=rmask[:, None] & cmask[None, :])


@triton.jit
def _gmm_wgrad(X, X_IDX, DY, DW, SEG_START, SEG_END, K, N, sxm, sdym,
               GATHER: tl.constexpr, PREC: tl.constexpr,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """DW[e] = X[idx(rows_e)].T @ DY[rows_e]  ([K, N] per expert)."""
    e = tl.program_id(0)
    pk = tl.program_id(1)
    pn = tl.program_id(2)
    s0 = tl.load(SEG_START + e)
    s1 = tl.load(SEG_END + e)
    ks = pk * BK + tl.arange(0, BK)
    ns = pn * BN + tl.arange(0, BN)
    kmask = ks < K
    nmask = ns < N
    acc = tl.zeros([BK, BN], dtype=tl.float32)
    for r0 in range(s0, s1, BM):
        rows = r0 + tl.arange(0, BM)
        rm = rows < s1
        xr = rows
        if GATHER:
            xr = tl.load(X_IDX + rows, mask=rm, other=0)
        xt = tl.load(X + xr[None, :].to(tl.int64) * sxm + ks[:, None],
                     mask=rm[None, :] & kmask[:, None], other=0.0)
        dy = tl.load(DY + rows[:, None].to(tl.int64) * sdym + ns[None, :],
                     mask=rm[:, None] & nmask[None, :], other=0.0)
        acc = mma(xt, dy, acc, PREC)
    tl.store(DW + e.to(tl.int64) * K * N + ks[:, None] * N + ns[None, :],
             acc.to(DW.dtype.element_ty), mask=kmask[:, None] & nmask[None, :])


@triton.jit
def _combine(Y, POS, W, OUT, N, D, KTOP, HAS_W: tl.constexpr, ROWS: tl.constexpr,
             BLOCK_D: tl.constexpr):
    """OUT[n] = sum_j W[n, j] * Y[POS[n, j]] for a tile of tokens n."""
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    rm = rows < N
    m = rm[:, None] & (cols < D)[None, :]
    acc = tl.zeros([ROWS, BLOCK_D], dtype=tl.float32)
    for j in range(KTOP):
        p = tl.load(POS + rows * KTOP + j, mask=rm, other=0).to(tl.int64)
        y = tl.load(Y + p[:, None] * D + cols[None, :], mask=m, other=0.0).to(tl.float32)
        if HAS_W:
            y = y * tl.load(W + rows * KTOP + j, mask=rm, other=0.0).to(tl.float32)[:, None]
        acc += y
    tl.store(OUT + rows[:, None].to(tl.int64) * D + cols[None, :], acc.to(OUT.dtype.element_ty),
             mask=m)


class Routing:
    """Assignments sorted by expert plus the tile table of the grouped GEMM (all on device)."""

    def __init__(self, topk_idx: torch.Tensor, E: int):
        N, k = topk_idx.shape
        M = N * k
        flat = topk_idx.reshape(-1).to(torch.int64)
        order = torch.argsort(flat, stable=True)
        self.tok = (order // k).to(torch.int32)             # sorted row -> token
        self.pos = torch.empty_like(order)
        self.pos[order] = torch.arange(M, device=flat.device)
        self.pos = self.pos.to(torch.int32)                 # (token, j) -> sorted row
        self.order = order
        counts = torch.bincount(flat, minlength=E)
        ends = torch.cumsum(counts, 0)
        starts = ends - counts
        self.seg_start, self.seg_end = starts.to(torch.int32), ends.to(torch.int32)
        tiles = (counts + BM - 1) // BM
        tcum = torch.cumsum(tiles, 0)
        self.n_tiles = triton.cdiv(M, BM) + E               # upper bound, no host sync
        p = torch.arange(self.n_tiles, device=flat.device)
        e = torch.searchsorted(tcum, p, right=True)
        ec = e.clamp(max=E - 1)
        self.tile_e = torch.where(e < E, ec, -1).to(torch.int32)
        self.tile_r0 = (starts[ec] + (p - (tcum[ec] - tiles[ec])) * BM).to(torch.int32)
        self.tile_end = ends[ec].to(torch.int32)
        self.M, self.N, self.k, self.E = M, N, k, E


def _gmm_launch(a, r: Routing, w, gather: bool, transpose_w: bool = False):
    """Grouped ``a[rows] @ w[e]`` (``w[e].T`` when transpose_w); w is [E, K, N] (or [E, N, K])."""
    if transpose_w:
        E, Nout, K = w.shape
        sbe, sbk, sbn = w.stride(0), w.stride(2), w.stride(1)
    else:
        E, K, Nout = w.shape
        sbe, sbk, sbn = w.stride(0), w.stride(1), w.stride(2)
    out = torch.empty(r.M, Nout, dtype=a.dtype, device=a.device)
    _gmm[(r.n_tiles, triton.cdiv(Nout, BN))](
        a, r.tok, w, out, r.tile_e, r.tile_r0, r.tile_end, K, Nout, a.stride(0), sbe, sbk, sbn,
        out.stride(0), GATHER=gather, PREC=dot_precision(a.dtype), BM=BM, BN=BN, BK=BK,
        num_warps=WARPS, num_stages=STAGES)
    return out


def _wgrad_launch(x, r: Routing, dy, gather: bool, dtype):
    K, N = x.shape[1], dy.shape[1]
    dw = torch.empty(r.E, K, N, dtype=dtype, device=x.device)
    wbk, wbn = (128, 128) if INTERPRET else (64, 128)
    _gmm_wgrad[(r.E, triton.cdiv(K, wbk), triton.cdiv(N, wbn))](
        x, r.tok, dy, dw, r.seg_start, r.seg_end, K, N, x.stride(0), dy.stride(0),
        GATHER=gather, PREC=dot_precision(x.dtype), BM=BM if INTERPRET else 32, BN=wbn, BK=wbk,
        num_warps=WARPS, num_stages=STAGES)
    return dw


def _combine_launch(y, r: Routing, w, N, dtype):
    D = y.shape[1]
    out = torch.empty(N, D, dtype=dtype, device=y.device)
    bd = triton.next_power_of_2(D) if INTERPRET else min(1024, triton.next_power_of_2(D))
    rows = min(triton.next_power_of_2(N), max(1, 65536 // bd)) if INTERPRET else max(2, 1024 // bd)
    _combine[(triton.cdiv(N, rows), triton.cdiv(D, bd))](
        y, r.pos, w if w is not None else y, out, N, D, r.k, HAS_W=w is not None, ROWS=rows,
        BLOCK_D=bd)
    return out


class _MoE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, topk_idx, topk_weight, w_gate, w_up, w_down):
        N, d = x.shape
        E, d2, f = w_gate.shape
        if d2 != d or w_up.shape != w_gate.shape or w_down.shape != (E, f, d):
            raise ValueError(f"moe_mlp: x [N,{d}], w_gate/w_up [E,d,f] {tuple(w_gate.shape)}/"
                             f"{tuple(w_up.shape)}, w_down [E,f,d] {tuple(w_down.shape)} disagree")
        if topk_weight.shape != topk_idx.shape or topk_idx.shape[0] != N:
            raise ValueError("moe_mlp: topk_idx and topk_weight must both be [N, k]")
        x = x.contiguous()
        r = Routing(topk_idx, E)
        g = _gmm_launch(x, r, w_gate, gather=True)
        u = _gmm_launch(x, r, w_up, gather=True)
        h = swiglu(g, u)
        y = _gmm_launch(h, r, w_down, gather=False)
        w = topk_weight.contiguous()
        out = _combine_launch(y, r, w, N, x.dtype)
        ctx.save_for_backward(x, w, w_gate, w_up, w_down, g, u, h, y)
        ctx.r = r
        return out

    @staticmethod
    def backward(ctx, dout):
        x, w, w_gate, w_up, w_down, g, u, h, y = ctx.saved_tensors
        r = ctx.r
        dout = dout.contiguous()
        dsel = dout[r.tok.long()]                                   # [M, d] per sorted row
        w_sorted = w.reshape(-1)[r.order]
        dw = torch.empty(r.M, dtype=torch.float32, device=x.device)
        dw[r.order] = (dsel.float() * y.float()).sum(-1)
        dy = (dsel.float() * w_sorted.float().unsqueeze(1)).to(y.dtype)
        dh = _gmm_launch(dy, r, w_down, gather=False, transpose_w=True)
        dWd = _wgrad_launch(h, r, dy, gather=False, dtype=w_down.dtype)
        with torch.enable_grad():
            gg, uu = g.detach().requires_grad_(), u.detach().requires_grad_()
            hh = swiglu(gg, uu)
        dg, du = torch.autograd.grad(hh, (gg, uu), dh)
        dxs = _gmm_launch(dg, r, w_gate, gather=False, transpose_w=True)
        dxs += _gmm_launch(du, r, w_up, gather=False, transpose_w=True)
        dWg = _wgrad_launch(x, r, dg, gather=True, dtype=w_gate.dtype)
        dWu = _wgrad_launch(x, r, du, gather=True, dtype=w_up.dtype)
        dx = _combine_launch(dxs, r, None, r.N, x.dtype)
        return dx, None, dw.reshape(r.N, r.k).to(w.dtype), dWg, dWu, dWd


def moe_mlp(x, topk_idx, topk_weight, w_gate, w_up, w_down) -> torch.Tensor:
    return _MoE.apply(x, topk_idx, topk_weight, w_gate, w_up, w_down)
