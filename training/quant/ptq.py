"""Post-training baselines on the QAT grids: round-to-nearest (RTN) and GPTQ.

Both return ``{weight name: QuantizedWeight}`` for the same targets a ``QuantConfig`` names, so a
PTQ result exports, loads and is measured exactly like a QAT one.

- RTN: every weight to its nearest level; steps from max|W| (``init="max"``) or the per-group
  MSE clip (``init="mse"``).
- GPTQ (Frantar et al., 2022): quantise one input column at a time and push its rounding error onto
  the columns not yet quantised, weighted by the inverse Hessian ``H = X^T X`` of the layer's
  inputs on calibration tokens. Steps are fixed per group before the sweep (GPTQ's "static
  groups"), so the result is on exactly the grid the packed file stores. The Hessians are all
  collected in one pass of the float model (not layer by layer on the partly quantised model):
  simpler, and the usual gap between the two is small next to the 2-bit error.

torchao has GPTQ-style and int-grid quantisers, but on integer grids with zero points over its own
tensor subclasses; the report's balanced half-integer grid and the exact fp16 step round trip the
packed format relies on are a few lines here, so the baselines share ``grid.py`` with QAT instead.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from training.quant import grid
from training.quant.fake_quant import EMBEDDING, QuantConfig, target_modules


def _clip(w: torch.Tensor, bits: int, group: int, init: str):
    return grid.mse_clip(w, bits, group) if init == "mse" else 1.0


@torch.no_grad()
def rtn(model: nn.Module, qc: QuantConfig) -> dict[str, grid.QuantizedWeight]:
    out = {}
    for name, m in target_modules(model, qc.targets).items():
        g = min(qc.linear_group, m.weight.shape[1])
        out[f"{name}.weight"] = grid.quantize(m.weight, _clip(m.weight, qc.linear_bits, g, qc.init),
                                              qc.linear_bits, g)
    if qc.embed_bits:
        w = getattr(model, EMBEDDING).weight
        out[f"{EMBEDDING}.weight"] = grid.quantize(w, _clip(w, qc.embed_bits, qc.embed_group, qc.init),
                                                   qc.embed_bits, qc.embed_group)
    return out


@torch.no_grad()
def hessians(model: nn.Module, names: list[str], batches) -> dict[str, torch.Tensor]:
    """``X^T X / n`` of each named Linear's inputs over the calibration ``batches`` of token ids."""
    mods = dict(model.named_modules())
    H = {n: torch.zeros(mods[n].in_features, mods[n].in_features) for n in names}
    count = {n: 0 for n in names}

    def hook(name):
        def fn(_m, inp, _out):
            x = inp[0].detach().reshape(-1, inp[0].shape[-1]).float()
            H[name] += x.t() @ x
            count[name] += x.shape[0]
        return fn

    handles = [mods[n].register_forward_hook(hook(n)) for n in names]
    try:
        for ids in batches:
            model(ids)
    finally:
        for h in handles:
            h.remove()
    return {n: H[n] / max(count[n], 1) for n in names}


@torch.no_grad()
def gptq_weight(w: torch.Tensor, H: torch.Tensor, bits: int, group: int, init: str = "max",
                damp: float = 0.01) -> grid.QuantizedWeight:
    """One weight ``[out, in]`` by GPTQ given its input Hessian ``[in, in]``."""
    W = w.detach().float().clone()
    step = grid.step_of(W, _clip(W, bits, group, init), bits, group)       # [out, in // group]
    H = H.clone()
    dead = torch.diag(H) == 0
    H[dead, dead] = 1.0
    W[:, dead] = 0.0
    H += damp * torch.diag(H).mean() * torch.eye(H.shape[0])
    Hinv = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(H)), upper=True)
    codes = torch.empty(W.shape, dtype=torch.uint8)
    for i in range(W.shape[1]):
        s = step[:, i // group]
        c = grid.level_code(W[:, i] / s, bits)
        q = (c - grid.max_level(bits)) * s
        codes[:, i] = c.to(torch.uint8)
        err = (W[:, i] - q) / Hinv[i, i]
        W[:, i + 1:] -= err[:, None] * Hinv[i, i + 1:][None, :]
    return grid.QuantizedWeight(codes, step.half(), bits, group)


@torch.no_grad()
def gptq(model: nn.Module, qc: QuantConfig, calibration) -> dict[str, grid.QuantizedWeight]:
    """GPTQ for the targeted Linears (the embedding, if asked for, gets RTN: a lookup table has
    no input Hessian)."""
    mods = target_modules(model, qc.targets)
    Hs = hessians(model, list(mods), calibration)
    out = {}
    for name, m in mods.items():
        g = min(qc.linear_group, m.weight.shape[1])
        out[f"{name}.weight"] = gptq_weight(m.weight, Hs[name], qc.linear_bits, g, qc.init)
    if qc.embed_bits:
        emb_only = QuantConfig(**{**qc.to_dict(), "targets": ()})
        out.update(rtn_embedding(model, emb_only))
    return out


def rtn_embedding(model: nn.Module, qc: QuantConfig) -> dict[str, grid.QuantizedWeight]:
    """The server model's 4-bit post-training embedding (RTN with MSE-searched clipping)."""
    w = getattr(model, EMBEDDING).weight
    bits = qc.embed_bits or 4
    return {f"{EMBEDDING}.weight": grid.quantize(w, grid.mse_clip(w, bits, qc.embed_group), bits,
                                                 qc.embed_group)}
