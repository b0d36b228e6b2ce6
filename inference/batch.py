"""Many samples of one prompt at once, each under its own grammar state (``n`` typed answers).

One model forward per step for the whole batch and llguidance's parallel mask filler for all
rows. Each row draws from its own seed through a counter-based uniform (a hash of seed and
step), so a row's output depends on its seed only, not on which other rows share the batch.
"""
from __future__ import annotations

import torch

def _uniform(seeds: torch.Tensor, step: int) -> torch.Tensor:
    """Uniform [0, 1) per row from (seed, step): splitmix64-style mixing in wrapping int64."""
    x = seeds * -7046029254386353131 + torch.tensor(step + 1, dtype=torch.int64) * 0x632BE59BD9B4E019
    x = (x ^ (x >> 31)) * -4658895280553007687  # 0xBF58476D1CE4E5B9 as int64
    x = (x ^ (x >> 27)) * -7723592293110705685  # 0x94D049BB133111EB as int64
    x = x ^ (x >> 31)
    return ((x >> 11) & ((1 << 52) - 1)).double() / float(1 << 52)


@torch.no_grad()
def decode_batch(model, engine, schema: dict, prompt: list[int], seeds: list[int], max_new: int,
                 temperature: float, eos_id: int) -> tuple[list[list[int]], list[bool]]:
    import llguidance  # noqa: PLC0415  (lazy: only guided generation needs it)
    B = len(seeds)
    constraints = [engine.constraint(schema) for _ in range(B)]
    executor = llguidance.LLExecutor()
    words = torch.zeros((B, (engine.n_tok + 31) // 32), dtype=torch.int32)
    bits = torch.arange(32, dtype=torch.int32)
    seed_t = torch.tensor(seeds, dtype=torch.int64)
    cache = model.allocate_kv_cache(B, len(prompt) + max_new)
    logits = model.prefill(torch.tensor([prompt] * B), cache).float()
    outs: list[list[int]] = [[] for _ in range(B)]
    done = [False] * B
    for step in range(max_new):
        live = [i for i in range(B) if not done[i] and not constraints[i].finished]
        for i in range(B):
            if not done[i] and constraints[i].finished:
                done[i] = True
        if not live:
            break
        executor.unsafe_compute_mask_ptr([(constraints[i].matcher, i) for i in live], words.data_ptr(),
                                         words.shape[1] * 4, B)
        allowed = ((words.unsqueeze(-1) >> bits) & 1).view(B, -1)[:, : engine.n_tok].bool()
        lg = logits[:, : engine.n_tok].masked_fill(~allowed, float("-inf"))
        if temperature <= 0:
            nxt = lg.argmax(-1)
        else:
            cdf = torch.softmax(lg.double() / temperature, -1).cumsum(-1)
            u = _uniform(seed_t, step).unsqueeze(-1) * cdf[:, -1:]
            nxt = torch.searchsorted(cdf, u).squeeze(-1).clamp_max(engine.n_tok - 1)
        feed = torch.full((B,), eos_id, dtype=torch.long)
        for i in live:
            x = int(nxt[i])
            if x == eos_id:
                done[i] = True
                continue
            constraints[i].advance(x)
            outs[i].append(x)
            feed[i] = x
        if step < max_new - 1:
            logits = model(feed[:, None], cache=cache).logits[:, -1].float()
    finished = [done[i] or constraints[i].finished for i in range(B)]
    return outs, finished
