"""Grow a model's embedding (and tied output) for an extended tokenizer.

Each new token's row starts as the mean of the embedding rows of the pieces the OLD tokenizer
splits it into, so the extended model starts close to where it was; old rows are untouched,
so logits over the old vocabulary on old-vocabulary text do not change.
"""
from __future__ import annotations

import torch

from training.tokenizer import token_pieces


def new_token_rows(embedding: torch.Tensor, base_tokenizer, new_tokens: list[str]) -> torch.Tensor:
    rows = []
    for tok in new_tokens:
        pieces = token_pieces(base_tokenizer, tok)
        rows.append(embedding[pieces].mean(0) if pieces else embedding.mean(0))
    return torch.stack(rows) if rows else embedding.new_zeros((0, embedding.shape[1]))


@torch.no_grad()
def grow_model_vocab(model, base_tokenizer, new_tokens: list[str], new_vocab_size: int | None = None) -> None:
    emb = model.tok_embeddings.weight
    rows = new_token_rows(emb.detach(), base_tokenizer, new_tokens)
    target = new_vocab_size or emb.shape[0] + len(new_tokens)
    if target > emb.shape[0] + rows.shape[0]:  # pad (e.g. vocab rounded up): mean row
        pad = emb.mean(0, keepdim=True).expand(target - emb.shape[0] - rows.shape[0], -1)
        rows = torch.cat([rows, pad])
    model.resize_token_embeddings(target, rows)
