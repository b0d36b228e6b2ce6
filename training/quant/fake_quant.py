"""Quantisation-aware training: fake-quantised Linear and Embedding weights with learnable clipping.

``prepare_qat(model, QuantConfig(...))`` attaches a ``FakeQuant`` parametrization
(``torch.nn.utils.parametrize``) to the ``weight`` of every named Linear and, optionally, of the
token embedding. The module keeps its float weight (``parametrizations.weight.original``, what the
optimiser updates) and every read of ``module.weight`` returns the fake-quantised value, so the
Linear forward, the embedding lookup and the tied output head all see the quantised weights
without any change to the model code. Rounding uses a straight-through estimator; the clipping
factors (one per output row and group) receive LSQ-style gradients (grid.py).

The report calls its QAT "a combination of learnable weight clipping and weight initialisation":
here the clip is learnable (``learn_clip``) and initialised by a per-group MSE search
(``init="mse"``, see ``grid.mse_clip``); ``init="max"`` starts from clip 1 (plain max scaling).

``freeze(model)`` reads every parametrized weight back as codes + fp16 steps (``QuantizedWeight``);
``load_quantized(model, qweights)`` writes dequantised values into a plain model. Both give the
fake-quantised model's logits exactly.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import torch
import torch.nn as nn
from torch.nn.utils import parametrize

from corpus.errors import CidermillError
from training.quant import grid

DECODER_LINEARS = ("attn.wq", "attn.wk", "attn.wv", "attn.wo", "mlp.w_gate", "mlp.w_up", "mlp.w_down")
EMBEDDING = "tok_embeddings"


@dataclass
class QuantConfig:
    linear_bits: int = 2
    linear_group: int = 128      # inputs per step; the report's 2-bit decoder weights
    embed_bits: int = 0          # 0: float embedding; 4: the report's 4-bit embedding
    embed_group: int = 32
    targets: tuple[str, ...] = field(default=DECODER_LINEARS)  # Linear name suffixes to quantise
    learn_clip: bool = True
    init: str = "mse"            # "mse": clip from grid.mse_clip; "max": clip = 1

    def to_dict(self) -> dict:
        d = asdict(self)
        d["targets"] = list(self.targets)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> QuantConfig:
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise CidermillError(f"unknown quantisation settings: {', '.join(sorted(unknown))}")
        d = dict(d)
        if "targets" in d:
            d["targets"] = tuple(d["targets"])
        return cls(**d)


class FakeQuant(nn.Module):
    """Parametrization ``W -> W_q`` on a ``bits``-bit grid with one clip per (row, group)."""

    def __init__(self, weight: torch.Tensor, bits: int, group: int, learn_clip: bool, init: str):
        super().__init__()
        if bits not in (2, 4, 8):
            raise CidermillError(f"unsupported bit width {bits} (2, 4 or 8)")
        self.bits, self.group = bits, min(group, weight.shape[1])
        if init == "mse":
            clip = grid.mse_clip(weight.detach(), bits, self.group)
        elif init == "max":
            clip = torch.ones(weight.shape[0], weight.shape[1] // self.group)
        else:
            raise CidermillError(f"unknown clip initialisation {init!r} (mse or max)")
        self.clip = nn.Parameter(clip, requires_grad=learn_clip)

    def forward(self, w: torch.Tensor) -> torch.Tensor:
        return grid.fake_quantize(w, self.clip, self.bits, self.group)

    def quantized(self, w: torch.Tensor) -> grid.QuantizedWeight:
        return grid.quantize(w, self.clip, self.bits, self.group)


def target_modules(model: nn.Module, targets: tuple[str, ...]) -> dict[str, nn.Linear]:
    """Named Linears whose name ends with one of ``targets``; refuses a target nothing matches."""
    found = {name: m for name, m in model.named_modules()
             if isinstance(m, nn.Linear) and name.endswith(tuple(targets))}
    missing = [t for t in targets if not any(n.endswith(t) for n in found)]
    if missing:
        raise CidermillError(f"the QAT config names layers this model ({model.config.name}) does not "
                             f"have: {', '.join(missing)}")
    return found


def prepare_qat(model: nn.Module, qc: QuantConfig) -> nn.Module:
    """Attach fake quantisation in place (returns ``model``); refuses unknown layer names."""
    mods = target_modules(model, qc.targets)
    for m in mods.values():
        if m.weight.shape[1] % min(qc.linear_group, m.weight.shape[1]):
            raise CidermillError(f"linear_group {qc.linear_group} does not divide {m.weight.shape[1]} inputs")
        parametrize.register_parametrization(
            m, "weight", FakeQuant(m.weight, qc.linear_bits, qc.linear_group, qc.learn_clip, qc.init))
    if qc.embed_bits:
        emb = getattr(model, EMBEDDING)
        parametrize.register_parametrization(
            emb, "weight", FakeQuant(emb.weight, qc.embed_bits, qc.embed_group, qc.learn_clip, qc.init))
    model.quant_config = qc
    return model


def quantized_modules(model: nn.Module) -> dict[str, nn.Module]:
    return {name: m for name, m in model.named_modules() if parametrize.is_parametrized(m, "weight")}


def kind_of(name: str) -> str:
    """Tensor kind for size accounting: "embedding", "linear" (decoder) or "other" (norms)."""
    if name.startswith(EMBEDDING) or name.startswith("lm_head"):
        return "embedding"
    if name.endswith(".weight") and any(f".{t}." in f".{name}" for t in DECODER_LINEARS):
        return "linear"
    return "other"


@torch.no_grad()
def freeze(model: nn.Module) -> dict[str, grid.QuantizedWeight]:
    """``{"layers.0.attn.wq.weight": QuantizedWeight, ...}`` for every fake-quantised weight."""
    out = {}
    for name, m in quantized_modules(model).items():
        fq = m.parametrizations.weight[0]
        out[f"{name}.weight"] = fq.quantized(m.parametrizations.weight.original)
    return out


@torch.no_grad()
def plain_state_dict(model: nn.Module) -> dict[str, torch.Tensor]:
    """The state dict a plain model of the same config has: fake-quantised weights as values."""
    sd = {}
    quant = quantized_modules(model)
    for name, t in model.state_dict().items():
        if ".parametrizations." in name:
            continue
        sd[name] = t
    for name, m in quant.items():
        sd[f"{name}.weight"] = m.weight.detach().clone()
    return sd


@torch.no_grad()
def load_quantized(model: nn.Module, qweights: dict[str, grid.QuantizedWeight]) -> nn.Module:
    """Write dequantised weights into a plain (not parametrized) model, in place."""
    params = dict(model.named_parameters())
    for name, q in qweights.items():
        if name not in params or tuple(params[name].shape) != tuple(q.codes.shape):
            raise CidermillError(f"quantised tensor {name} {tuple(q.codes.shape)} does not fit this model")
        params[name].copy_(q.dequantize().to(params[name].dtype))
    return model
