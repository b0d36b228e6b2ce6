"""Dense decoder-only transformer (optionally with MoE layers): the baseline and upcycling source.

    tokens -> tok_embeddings -> layers[0..L-1] (pre-norm attention + SwiGLU/MoE) -> norm -> tied head

With ``moe_every``/``n_experts`` set, every ``moe_every``-th layer's SwiGLU becomes an MoE of the
same class and state-dict prefix (``layers.{i}.mlp``), which is what sparse upcycling produces.
"""
from __future__ import annotations

import torch.nn as nn

from training.models.base import LanguageModel
from training.models.config import ModelConfig
from training.models.block import TransformerLayer


class DenseTransformer(LanguageModel):
    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        self.layers = nn.ModuleList(TransformerLayer(cfg, i) for i in range(cfg.n_layers))
        self.init_weights()

    def backbone(self, x, rope, doc_ids, cache):
        aux = None
        for i, layer in enumerate(self.layers):
            x, _, a = layer(x, rope, doc_ids, cache.layer(str(i)) if cache else None)
            if a is not None:
                aux = a if aux is None else aux + a
        return x, aux

    def cache_specs(self) -> dict[str, int | None]:
        return {str(i): self.config.layer_window(i) for i in range(self.config.n_layers)}
