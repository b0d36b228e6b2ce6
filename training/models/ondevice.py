"""On-device model: two blocks at a 5:3 depth ratio; block 2 reuses block 1's last KV cache.

    layers[0 .. n1-1]   block 1: ordinary layers, each with its own K/V (and KV cache)
    layers[n1 .. L-1]   block 2: no wk/wv; queries attend to the keys/values of layer n1-1

(n1 = ``block1_layers``: 35 of 56 in the shipped model.) Only block 1 keeps a KV cache, so the
cache is n1/L = 62.5% of a dense model of the same shape (37.5% less), and block 2 also skips the
K/V projections. In training and in cached decoding block-2 layers see exactly the keys layer
n1-1 attended to.

Prefill (time to first token): block 2 writes no cache, and its outputs at a position feed only
that position's later layers. A prompt's block-2 outputs are therefore read only at its last
position (the logits of the first new token), so ``prefill`` runs block 1 over the whole prompt
and block 2 over the last position alone: (L - n1)/L of the layers (37.5%) skip all but one
token, and the cache and the logits are those of a full forward.
"""
from __future__ import annotations

import torch
import torch.nn as nn

from training.models.base import LanguageModel
from training.models.block import TransformerLayer
from training.models.config import ModelConfig
from training.models.layers import rope_tables


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

    @torch.no_grad()
    def prefill(self, input_ids, cache):
        """Block 1 over the prompt (filling the cache), block 2 over the last position only."""
        n1 = self.config.block1_layers
        B, T = input_ids.shape
        start = self._check_length(T, cache)
        cos, sin = rope_tables(torch.arange(start, start + T, device=input_ids.device), self.config)
        x = self.tok_embeddings(input_ids)
        for i in range(n1):
            x, shared_kv, _ = self.layers[i](x, (cos, sin), None, cache.layer(str(i)))
        x = x[:, -1:]
        for layer in self.layers[n1:]:
            x, _, _ = layer(x, (cos[-1:], sin[-1:]), None, cache=None, shared_kv=shared_kv)
        cache.pos += T
        return self.head(self.norm(x), None, None, True).logits[:, -1]

    @torch.no_grad()
    def full_prefill(self, input_ids, cache):
        """Every layer over every prompt position (what ``prefill`` saves): the baseline."""
        return LanguageModel.prefill(self, input_ids, cache)
