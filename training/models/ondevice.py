"""On-device model: two blocks at a 5:3 depth ratio; block 2 reuses block 1's last KV cache.

    layers[0 .. n1-1]   block 1: ordinary layers, each with its own K/V (and KV cache)
    layers[n1 .. L-1]   block 2: no wk/wv; queries attend to the keys/values of layer n1-1

(n1 = ``block1_layers``: 35 of 56 in the shipped model.) Only block 1 keeps a KV cache, so the
cache is n1/L = 62.5% of a dense model of the same shape (37.5% less), and block 2 also skips the
K/V projections. In training and in cached decoding block-2 layers see exactly the keys layer
n1-1 attended to.
"""
from __future__ import annotations

import torch.nn as nn

from training.models.base import LanguageModel
from training.models.config import ModelConfig
from training.models.block import TransformerLayer


class OnDeviceTransformer(LanguageModel):
    def __init__(self, cfg: ModelConfig):
        super().__init__(cfg)
        n1 = cfg.block1_layers
        self.layers = nn.ModuleList(TransformerLayer(cfg, i, has_kv=i < n1) for i in range(cfg.n_layers))
        self.init_weights()

    def backbone(self, x, rope, doc_ids, cache):
        n1 = self.config.block1_layers
        aux, shared_kv = None, None
        for i, layer in enumerate(self.layers):
            if i < n1:
                x, kv, a = layer(x, rope, doc_ids, cache.layer(str(i)) if cache else None)
                if i == n1 - 1:
                    shared_kv = kv  # block 1's final keys/values (past cache + new when decoding)
            else:
                x, _, a = layer(x, rope, doc_ids, cache=None, shared_kv=shared_kv)
            if a is not None:
                aux = a if aux is None else aux + a
        return x, aux

    def cache_specs(self) -> dict[str, int | None]:
        return {str(i): None for i in range(self.config.block1_layers)}
