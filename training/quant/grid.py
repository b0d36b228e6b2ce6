"""Balanced b-bit grids and the arithmetic every quantised weight shares.

A b-bit grid has ``n = 2**b`` levels ``k - (n - 1) / 2`` for codes ``k = 0 .. n-1``: for 2 bits
{-1.5, -0.5, 0.5, 1.5}, for 4 bits {-7.5 .. 7.5}. No level is zero, so all four 2-bit codes carry
information (a symmetric integer grid would waste one on +-2 or leave only three levels).

A weight matrix ``[out, in]`` is cut into groups of ``group`` consecutive inputs per output row.
Each group has one step::

    step  = fp16(clip * max|W_group| / L)        L = (n - 1) / 2, the largest level
    code  = clamp(floor(W / step + n / 2), 0, n - 1)
    W_q   = (code - (n - 1) / 2) * step

``clip`` in (0, 1] shrinks the range below max|W|: the outermost weights are clipped so that the
many small weights get finer steps. The step is rounded to fp16 in training too, because fp16 is
what the packed file stores: dequantising the file then repeats this exact arithmetic.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

CLIP_MIN = 0.05


def max_level(bits: int) -> float:
    return (2 ** bits - 1) / 2


def grouped(w: torch.Tensor, group: int) -> torch.Tensor:
    """``[out, in] -> [out, in // group, group]`` (``in`` must be a multiple of ``group``)."""
    out, inp = w.shape
    if inp % group:
        raise ValueError(f"a weight with {inp} inputs cannot be cut into groups of {group}")
    return w.reshape(out, inp // group, group)


def level_code(x: torch.Tensor, bits: int) -> torch.Tensor:
    """The grid's code (0 .. 2**bits - 1, as floats) of ``x = W / step``: the one rounding rule
    that QAT's forward, export and the PTQ baselines share."""
    n = 2 ** bits
    return torch.clamp(torch.floor(x + n / 2), 0, n - 1)


class _RoundToLevel(torch.autograd.Function):
    """Forward: the exact grid level of ``x = W / step``. Backward: straight through inside the
    grid's range, zero where the weight is clipped (the LSQ estimator)."""

    @staticmethod
    def forward(ctx, x, bits):
        ctx.save_for_backward(x)
        ctx.half = max_level(bits)
        return level_code(x, bits) - ctx.half

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * (x.abs() <= ctx.half).to(g.dtype), None


class _ToHalf(torch.autograd.Function):
    """Round to fp16 and back; the gradient passes straight through."""

    @staticmethod
    def forward(ctx, x):
        return x.half().float()

    @staticmethod
    def backward(ctx, g):
        return g


def step_of(w: torch.Tensor, clip: torch.Tensor | float, bits: int, group: int) -> torch.Tensor:
    """fp16-representable float32 steps ``[out, in // group]``; gradients flow to ``clip``."""
    amax = grouped(w.detach().float(), group).abs().amax(-1)
    if isinstance(clip, torch.Tensor):
        clip = clip.clamp(CLIP_MIN, 1.0)
    return _ToHalf.apply((clip * amax / max_level(bits)).clamp_min(1e-6))


def fake_quantize(w: torch.Tensor, clip: torch.Tensor | float, bits: int, group: int) -> torch.Tensor:
    """``W_q`` with straight-through gradients to ``w`` and (LSQ-style) to ``clip``."""
    step = step_of(w, clip, bits, group)
    level = _RoundToLevel.apply(grouped(w.float(), group) / step[..., None], bits)
    return (level * step[..., None]).reshape(w.shape).to(w.dtype)


@dataclass
class QuantizedWeight:
    """One weight as stored: codes ``uint8 [out, in]`` (one per weight, unpacked) and fp16 steps
    ``[out, in // group]``."""
    codes: torch.Tensor
    step: torch.Tensor
    bits: int
    group: int

    def dequantize(self) -> torch.Tensor:
        level = self.codes.float() - max_level(self.bits)
        return (grouped(level, self.group) * self.step.float()[..., None]).reshape(self.codes.shape)


def codes_for(w: torch.Tensor, step: torch.Tensor, bits: int, group: int) -> torch.Tensor:
    """Codes of ``w`` on the grid of ``step`` (float32 steps as from ``step_of``)."""
    x = grouped(w.detach().float(), group) / step.float()[..., None]
    return level_code(x, bits).to(torch.uint8).reshape(w.shape)


def quantize(w: torch.Tensor, clip: torch.Tensor | float, bits: int, group: int) -> QuantizedWeight:
    """Round-to-nearest on the grid: the same values ``fake_quantize`` computes, as codes + steps."""
    with torch.no_grad():
        step = step_of(w, clip.detach() if isinstance(clip, torch.Tensor) else clip, bits, group)
        return QuantizedWeight(codes_for(w, step, bits, group), step.half(), bits, group)


@torch.no_grad()
def mse_clip(w: torch.Tensor, bits: int, group: int, candidates: int = 41,
             lo: float = 0.2) -> torch.Tensor:
    """Per-group clipping factor minimising ``||W - W_q||^2`` over ``candidates`` values in
    [lo, 1]: the initialisation of QAT's learnable clipping (and of GPTQ's scales).

    Why: with max|W| scaling, a bell-shaped group puts most weights on the two inner 2-bit levels
    (+-max/3) and the outer levels almost never fire; the MSE-best clip is typically 0.5-0.8 of the
    max at 2 bits. Starting there instead of at 1.0 gives QAT a start whose quantisation error is
    already near a minimum, so the clip and weights only need fine-tuning.
    """
    wg = grouped(w.float(), group)
    best_err = torch.full(wg.shape[:2], float("inf"))
    best = torch.ones(wg.shape[:2])
    for c in torch.linspace(lo, 1.0, candidates):
        q = fake_quantize(w.float(), float(c), bits, group)
        err = (grouped(q, group) - wg).pow(2).sum(-1)
        better = err < best_err
        best_err = torch.where(better, err, best_err)
        best = torch.where(better, c, best)
    return best
