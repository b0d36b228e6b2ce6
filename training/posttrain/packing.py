"""Several conversations per training row, with no attention between them.

Each conversation of ids ``c`` contributes inputs ``c[:-1]`` and targets ``c[1:]``; a target is
kept (not -100) only where the loss mask marks it, i.e. on assistant tokens. Conversations are
placed first-fit in input order into rows of ``seq_len``; every one gets its own ``doc_id``, so
the model's attention mask is block-diagonal and its RoPE positions restart at 0 per
conversation (``LanguageModel.forward`` with ``doc_ids``). Padding is a document of its own with
no targets.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from training.posttrain.chat import Encoded

IGNORE = -100


@dataclass
class PackedBatch:
    input_ids: torch.Tensor   # [B, T]
    targets: torch.Tensor     # [B, T], -100 off assistant tokens
    doc_ids: torch.Tensor     # [B, T]


def pack(convs: list[Encoded], seq_len: int, pad_id: int) -> PackedBatch:
    rows: list[list[tuple[list[int], list[int]]]] = []
    used: list[int] = []
    for c in convs:
        if len(c.ids) - 1 > seq_len:
            raise ValueError(f"conversation of {len(c.ids)} tokens does not fit rows of {seq_len} + 1")
        x = c.ids[:-1]
        y = [t if m else IGNORE for t, m in zip(c.ids[1:], c.loss_mask[1:])]
        for r, n in enumerate(used):
            if n + len(x) <= seq_len:
                rows[r].append((x, y))
                used[r] += len(x)
                break
        else:
            rows.append([(x, y)])
            used.append(len(x))
    B = max(len(rows), 1)
    inp = torch.full((B, seq_len), pad_id, dtype=torch.long)
    tgt = torch.full((B, seq_len), IGNORE, dtype=torch.long)
    doc = torch.zeros((B, seq_len), dtype=torch.long)
    for r, parts in enumerate(rows):
        at = 0
        for d, (x, y) in enumerate(parts):
            inp[r, at:at + len(x)] = torch.tensor(x)
            tgt[r, at:at + len(y)] = torch.tensor(y)
            doc[r, at:at + len(x)] = d
            at += len(x)
        doc[r, at:] = len(parts)  # padding: its own document
    return PackedBatch(inp, tgt, doc)
