"""Autoregressive generation with a KV cache: greedy, or temperature + top-p (nucleus) sampling.

    ids = generate(model, prompt_ids, max_new_tokens=32)                       # greedy
    ids = generate(model, prompt_ids, 32, temperature=0.8, top_p=0.95, seed=0)  # sampled
    ids = generate(model, prompt_ids, 32, kv_int8=True)                         # 8-bit KV cache

``prompt_ids [B, P]`` (all rows the same length, no padding) -> ``[B, P + max_new_tokens]`` (fewer
new tokens if ``eos_token_id`` is given and every row produced it; finished rows repeat it).
The prompt is run once (``model.prefill``: fills the cache, returns the last position's logits; the
on-device model skips block 2 there), then one token per step. ``use_cache=False``
recomputes the whole sequence every step (the slow reference the cache must match).
"""
from __future__ import annotations

import torch

from training.models.config import SequenceTooLongError


def sample_next(logits: torch.Tensor, temperature: float = 0.0, top_p: float = 1.0,
                generator: torch.Generator | None = None) -> torch.Tensor:
    """``logits [B, V]`` -> next ids ``[B]``. temperature 0: argmax. top_p < 1: sample only from the
    smallest set of tokens whose probability reaches top_p (the most likely token always stays)."""
    if temperature <= 0:
        return logits.argmax(-1)
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p < 1.0:
        sorted_p, order = probs.sort(dim=-1, descending=True)
        before = sorted_p.cumsum(-1) - sorted_p  # mass of the more likely tokens
        sorted_p = sorted_p.masked_fill(before >= top_p, 0.0)
        probs = torch.zeros_like(probs).scatter_(-1, order, sorted_p)
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)


@torch.no_grad()
def generate(model, prompt_ids: torch.Tensor, max_new_tokens: int, temperature: float = 0.0,
             top_p: float = 1.0, kv_int8: bool = False, seed: int | None = None,
             use_cache: bool = True, eos_token_id: int | None = None) -> torch.Tensor:
    if prompt_ids.dim() != 2 or prompt_ids.shape[1] < 1:
        raise ValueError(f"prompt_ids must be [B, P] with P >= 1, got {tuple(prompt_ids.shape)}")
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    cfg = model.config
    B, P = prompt_ids.shape
    total = P + max_new_tokens
    if total > cfg.max_seq_len:
        raise SequenceTooLongError(f"prompt ({P}) + max_new_tokens ({max_new_tokens}) = {total} "
                                   f"exceeds max_seq_len={cfg.max_seq_len} of model '{cfg.name}'")
    generator = None
    if seed is not None:
        generator = torch.Generator(device=prompt_ids.device)
        generator.manual_seed(seed)

    was_training = model.training
    model.eval()
    try:
        ids = prompt_ids
        cache = model.allocate_kv_cache(B, total, kv_int8=kv_int8) if use_cache else None
        logits = model.prefill(ids, cache) if use_cache else model(ids).logits[:, -1]
        done = torch.zeros(B, dtype=torch.bool, device=ids.device)
        for step in range(max_new_tokens):
            nxt = sample_next(logits, temperature, top_p, generator)
            if eos_token_id is not None:
                nxt = torch.where(done, torch.full_like(nxt, eos_token_id), nxt)
                done |= nxt == eos_token_id
            ids = torch.cat([ids, nxt[:, None]], dim=1)
            if step == max_new_tokens - 1 or (eos_token_id is not None and bool(done.all())):
                break
            if use_cache:
                logits = model(nxt[:, None], cache=cache).logits[:, -1]
            else:
                logits = model(ids).logits[:, -1]
        return ids
    finally:
        model.train(was_training)
