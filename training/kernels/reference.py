"""Eager PyTorch references for every fused kernel: the semantics the Triton kernels must match.

Each function computes in float32 and returns the input dtype, so it is both the CPU path the
models run on and the ground truth the kernel tests compare against.

Conventions (shared with the Triton kernels and documented once here):
- RMSNorm: ``y = x / sqrt(mean(x**2, -1) + eps) * weight`` (weight multiplies, no ``1 +``).
- RoPE: half-split rotation (GPT-NeoX / Llama layout): ``x1, x2 = x[..., :D/2], x[..., D/2:]``,
  ``out = cat(x1*cos - x2*sin, x2*cos + x1*sin)``. q/k are ``[B, H, T, D]``; cos/sin are
  ``[T, D/2]``, ``[1, T, D/2]`` or ``[B, T, D/2]`` (one row per position, shared by all heads);
  ``rope_cos_sin`` builds them.
- attention: q ``[B, H, Tq, D]``, k/v ``[B, Hkv, Tk, D]`` with ``H % Hkv == 0`` (grouped-query:
  query head h reads kv head ``h // (H // Hkv)``). Queries are aligned to the END of the keys
  (query i sits at absolute position ``Tk - Tq + i``), so a decode step with a KV cache is just
  ``Tq < Tk``. causal: key j visible iff ``j <= pos(i)``; window W: additionally
  ``pos(i) - j < W`` (a query at t sees keys in ``(t - W, t]``); doc_ids ``[B, T]`` (needs
  ``Tq == Tk``): key j visible only if ``doc_ids[j] == doc_ids[i]``.
- moe_mlp: ``out[n] = sum_k w[n,k] * (silu(x[n] @ Wg[e]) * (x[n] @ Wu[e])) @ Wd[e]`` with
  ``e = topk_idx[n,k]``; dropless (every assignment is computed).
- linear_cross_entropy: mean over targets != ignore_index of CE(hidden @ weight.T, target);
  0 when every target is ignored.
- int8 KV: symmetric, one float32 scale per head vector (per token and head, over the last dim):
  ``scale = max|x| / 127``, ``q = round_half_away(x / scale)`` in [-127, 127].
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()
    return y.to(x.dtype)


def rope_cos_sin(positions: torch.Tensor | int, head_dim: int, theta: float = 10000.0,
                 device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin tables ``[T, D/2]`` (or ``[B, T, D/2]`` for 2-D positions), float32."""
    if isinstance(positions, int):
        positions = torch.arange(positions, device=device)
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=positions.device,
                                             dtype=torch.float64) / head_dim))
    ang = positions.to(torch.float64).unsqueeze(-1) * inv_freq
    return ang.cos().float(), ang.sin().float()


def _rope_table(t: torch.Tensor) -> torch.Tensor:
    """[T, D/2] | [B, T, D/2] -> [B or 1, 1, T, D/2] float32, broadcastable over heads."""
    if t.dim() == 2:
        t = t.unsqueeze(0)
    return t.float().unsqueeze(1)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    xf = x.float()
    x1, x2 = xf[..., :half], xf[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).to(x.dtype)


def apply_rope(q: torch.Tensor, k: torch.Tensor | None, cos: torch.Tensor, sin: torch.Tensor):
    """Rotate q and k (k may be None: layers that reuse another layer's keys); returns (q, k)."""
    c, s = _rope_table(cos), _rope_table(sin)
    return _rotate(q, c, s), (None if k is None else _rotate(k, c, s))


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return (F.silu(gate.float()) * up.float()).to(gate.dtype)


def attention_mask(tq: int, tk: int, causal: bool = True, window: int | None = None,
                   doc_ids: torch.Tensor | None = None, device=None) -> torch.Tensor:
    """Boolean visibility mask ``[B or 1, 1, Tq, Tk]`` (True = may attend)."""
    qpos = torch.arange(tq, device=device).unsqueeze(1) + (tk - tq)
    kpos = torch.arange(tk, device=device).unsqueeze(0)
    m = torch.ones(tq, tk, dtype=torch.bool, device=device)
    if causal:
        m &= kpos <= qpos
    if window is not None:
        m &= (qpos - kpos) < window
    m = m[None, None]
    if doc_ids is not None:
        m = m & (doc_ids[:, None, -tq:, None] == doc_ids[:, None, None, :])
    return m


def check_attention_args(q, k, v, causal, window, doc_ids):
    if q.dim() != 4 or k.dim() != 4 or v.shape != k.shape:
        raise ValueError(f"attention wants q [B,H,T,D], k/v [B,Hkv,T,D]; got {tuple(q.shape)}, "
                         f"{tuple(k.shape)}, {tuple(v.shape)}")
    if q.shape[1] % k.shape[1]:
        raise ValueError(f"query heads {q.shape[1]} not a multiple of kv heads {k.shape[1]}")
    if q.shape[2] > k.shape[2]:
        raise ValueError(f"more queries ({q.shape[2]}) than keys ({k.shape[2]})")
    if window is not None and (not causal or window < 1):
        raise ValueError("window needs causal=True and window >= 1")
    if doc_ids is not None and doc_ids.shape != (k.shape[0], k.shape[2]):
        raise ValueError(f"doc_ids must be [B, Tk] = {(k.shape[0], k.shape[2])}, "
                         f"got {tuple(doc_ids.shape)}")


def attention(q, k, v, causal: bool = True, window: int | None = None, doc_ids=None,
              scale: float | None = None) -> torch.Tensor:
    check_attention_args(q, k, v, causal, window, doc_ids)
    B, H, Tq, D = q.shape
    Hkv, Tk = k.shape[1], k.shape[2]
    scale = 1.0 / math.sqrt(D) if scale is None else scale
    g = H // Hkv
    kf = k.float().repeat_interleave(g, dim=1)
    vf = v.float().repeat_interleave(g, dim=1)
    s = torch.matmul(q.float(), kf.transpose(-1, -2)) * scale
    mask = attention_mask(Tq, Tk, causal, window, doc_ids, device=q.device)
    s = s.masked_fill(~mask, float("-inf"))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)  # a row with no visible key outputs 0
    return torch.matmul(p, vf).to(q.dtype)


def moe_mlp(x, topk_idx, topk_weight, w_gate, w_up, w_down) -> torch.Tensor:
    """Dropless token-choice MoE: sort assignments by expert, run each expert on its rows."""
    N, d = x.shape
    E = w_gate.shape[0]
    k = topk_idx.shape[1]
    flat_e = topk_idx.reshape(-1)
    order = torch.argsort(flat_e, stable=True)
    tok = order // k
    counts = torch.bincount(flat_e, minlength=E).tolist()
    xs = x.float()[tok]
    ys = []
    start = 0
    for e, c in enumerate(counts):
        if c:
            xe = xs[start:start + c]
            h = F.silu(xe @ w_gate[e].float()) * (xe @ w_up[e].float())
            ys.append(h @ w_down[e].float())
        start += c
    y = torch.cat(ys) if ys else xs.new_zeros(0, d)
    y = y * topk_weight.reshape(-1)[order].float().unsqueeze(1)
    out = torch.zeros(N, d, dtype=torch.float32, device=x.device).index_add_(0, tok, y)
    return out.to(x.dtype)


def linear_cross_entropy(hidden, weight, targets, ignore_index: int = -100) -> torch.Tensor:
    logits = hidden.float() @ weight.float().t()
    loss = F.cross_entropy(logits, targets, ignore_index=ignore_index, reduction="sum")
    n = (targets != ignore_index).sum().clamp_min(1)
    return loss / n


def quantize_kv_int8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.float()
    scale = xf.abs().amax(-1, keepdim=True).clamp_min(1e-12) / 127.0
    v = xf / scale
    q = torch.where(v >= 0, torch.floor(v + 0.5), -torch.floor(-v + 0.5)).clamp_(-127, 127)
    return q.to(torch.int8), scale


def dequantize_kv_int8(q: torch.Tensor, scale: torch.Tensor,
                       dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return (q.float() * scale.float()).to(dtype)


def dequant2_matmul(x: torch.Tensor, codes: torch.Tensor, scale: torch.Tensor, group: int) -> torch.Tensor:
    """``x @ W.T`` for 2-bit packed ``W``: codes uint8 ``[N, K/4]`` (four a byte, first weight in
    the lowest bits), scale fp16 ``[N, K/group]``, weight = ``(code - 1.5) * scale``."""
    shifts = torch.arange(4, device=codes.device, dtype=torch.int32) * 2
    c = ((codes.to(torch.int32)[..., None] >> shifts) & 3).reshape(codes.shape[0], -1)
    w = (c.float() - 1.5).reshape(c.shape[0], -1, group) * scale.float()[..., None]
    return (x.float() @ w.reshape(c.shape).t()).to(x.dtype)
