"""Length generalisation of a trained model: held-out loss and retrieval accuracy at multiples of
the training length, on the probes of training/data/retrieval_tasks.py.

- loss: mean next-token cross-entropy over the filler tokens (the KEY/QUERY structure excluded),
  i.e. how well the model still models ordinary text at that length;
- retrieval: share of probes whose greedy prediction after ``QUERY k`` is the stored value.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from training.data import retrieval_tasks as rt


@torch.no_grad()
def evaluate_at(model, length: int, n: int, seed: int = 0, start: int = 10**6, pairs: int = 4,
                batch_size: int = 8) -> dict[str, float]:
    """Held-out probes (indices from ``start``, a range training never draws) of ``length`` tokens."""
    model.eval()
    loss_sum, loss_n, hits = 0.0, 0, 0
    for b0 in range(0, n, batch_size):
        m = min(batch_size, n - b0)
        toks, answers = rt.batch(length, start + b0, m, seed=seed, pairs=pairs)
        ids = torch.from_numpy(toks)
        logits = model(ids).logits.float()
        pred = logits[:, -1].argmax(-1)
        hits += int((pred == torch.from_numpy(answers)).sum())
        tgt = ids[:, 1:]
        plain = (tgt >= rt.FILLER.start) & (ids[:, :-1] >= rt.FILLER.start)
        ce = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tgt.reshape(-1), reduction="none")
        loss_sum += float(ce[plain.reshape(-1)].sum())
        loss_n += int(plain.sum())
    model.train()
    return {"length": length, "loss": loss_sum / max(1, loss_n), "retrieval": hits / n, "n": n}
