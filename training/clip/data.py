"""Pair shards -> preprocessed tensors for CLIP training, with a deterministic held-out split.

Only usable pairs are read (no drop reason, an image, non-empty text). The split is by a hash of
the pair id, so adding pairs never moves an old pair between train and held-out.
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import torch
from PIL import Image

from corpus.buckets import bucket_of
from corpus.errors import CidermillError
from corpus.reader import ShardDataset


@dataclass
class PairSplit:
    train_images: object      # torch.FloatTensor [N, 3, S, S] (preprocessed)
    train_texts: object       # torch.LongTensor [N, context]
    held_images: object
    held_texts: object
    train_ids: list[str]
    held_ids: list[str]
    skipped: int


def is_heldout(pair_id: str, frac: float) -> bool:
    return bucket_of(pair_id, 10_000) < int(round(frac * 10_000))


def read_pairs(dirs: list[str], max_rows: int | None = None) -> list[tuple[str, bytes, str]]:
    """(id, image bytes, text) of usable pairs, in dataset order, ids unique across dirs."""
    out: list[tuple[str, bytes, str]] = []
    seen: set[str] = set()
    for d in dirs:
        ds = ShardDataset(d)
        names = set(ds.schema.names)
        missing = {"id", "image", "text"} - names
        if missing:
            raise CidermillError(f"{d}: not a pairs dataset (missing columns {sorted(missing)})")
        cols = ["id", "image", "text"] + (["drop_reason"] if "drop_reason" in names else [])
        for row in ds.iter_rows(cols):
            if row.get("drop_reason") or not row["image"] or not (row["text"] or "").strip():
                continue
            key = row["id"] if row["id"] not in seen else f"{d}:{row['id']}"
            seen.add(key)
            out.append((key, row["image"], row["text"]))
            if max_rows and len(out) >= max_rows:
                return out
    return out


def load_split(dirs: list[str], preprocess, tokenizer, heldout: float = 0.1, max_rows: int | None = 20000,
               max_heldout: int = 1000) -> PairSplit:
    rows = read_pairs(dirs, max_rows)
    tr_i, tr_t, ho_i, ho_t, tr_id, ho_id, skipped = [], [], [], [], [], [], 0
    for pid, blob, text in rows:
        try:
            with Image.open(io.BytesIO(blob)) as im:
                x = preprocess(im.convert("RGB"))
        except Exception:  # noqa: BLE001  (a pair with an undecodable image is skipped, counted)
            skipped += 1
            continue
        if is_heldout(pid, heldout) and len(ho_i) < max_heldout:
            ho_i.append(x), ho_t.append(text), ho_id.append(pid)
        else:
            tr_i.append(x), tr_t.append(text), tr_id.append(pid)
    if len(tr_i) < 2:
        raise CidermillError(f"{', '.join(dirs)}: only {len(tr_i)} usable training pairs; need at least 2")

    def stack(xs):
        return torch.stack(xs) if xs else torch.empty(0)

    def tok(ts):
        return tokenizer(ts) if ts else torch.empty(0, dtype=torch.long)

    return PairSplit(stack(tr_i), tok(tr_t), stack(ho_i), tok(ho_t), tr_id, ho_id, skipped)
