"""Token windows for QAT, LoRA, calibration and evaluation, from a token dataset or an array.

Documents are concatenated in dataset order (``cidermill tokenize`` ends each with its EOS), and
training batches are random windows of ``seq + 1`` tokens; evaluation takes fixed, evenly spread
windows, so the same data gives the same figures.
"""
from __future__ import annotations

import numpy as np
import torch

from training.data.token_source import TokenSource


def token_array(directory: str, split: str = "train", holdout_permille: int = 0) -> np.ndarray:
    """All tokens of a token dataset (one split of it when ``holdout_permille`` > 0), concatenated."""
    src = TokenSource(directory, holdout_permille=holdout_permille, split=split)
    return np.concatenate([src.doc_tokens(i) for i in range(src.num_docs)]).astype(np.int64)


def batches(ids: np.ndarray, batch: int, seq: int, seed: int = 0):
    """Endless random windows: ``(inputs, targets)`` of shape ``[batch, seq]``."""
    if len(ids) < seq + 2:
        raise ValueError(f"{len(ids)} tokens are too few for windows of {seq + 1}")
    g = np.random.default_rng(seed)
    while True:
        starts = g.integers(0, len(ids) - seq - 1, batch)
        x = torch.from_numpy(np.stack([ids[s:s + seq + 1] for s in starts]).astype(np.int64))
        yield x[:, :-1], x[:, 1:]


def eval_windows(ids: np.ndarray, n: int, seq: int) -> torch.Tensor:
    """``n`` fixed windows of ``seq + 1`` tokens spread evenly over ``ids``: ``[n, seq + 1]``."""
    n = max(1, min(n, (len(ids) - 1) // (seq + 1)))
    step = (len(ids) - seq - 1) // n
    return torch.from_numpy(np.stack([ids[i * step:i * step + seq + 1] for i in range(n)]).astype(np.int64))
