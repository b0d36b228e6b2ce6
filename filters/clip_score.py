"""CLIP image-text similarity with any open_clip model and a local checkpoint.

`ClipScorer(model, checkpoint).score(images, texts)` returns the cosine similarity of each
(image, text) pair, computed in batches without gradients. Images are encoded bytes (what the
pairs dataset stores); one that does not decode scores NaN instead of failing the batch.
Model building and checkpoint formats live in training/clip/model.py (shared with training).

Pointing the filter at a real pretrained model: put an open_clip checkpoint on local disk (e.g.
the `open_clip_pytorch_model.bin` or `.safetensors` of laion/CLIP-ViT-B-32-laion2B-s34B-b79K, or
OpenAI's ViT-B-32 state dict) and pass `--clip-model ViT-B-32 --clip-checkpoint PATH`.
"""
from __future__ import annotations

import io
import math
import os
from typing import Sequence

import torch
from PIL import Image

from corpus.process_cache import ProcessCache
from training.clip.model import load_clip


class ClipScorer:
    def __init__(self, model_name: str | None = None, checkpoint: str | None = None, device: str = "cpu",
                 batch_size: int = 64, threads: int | None = None):
        self.threads = threads
        if threads:
            torch.set_num_threads(threads)
        self.model, self.preprocess, self.tokenizer, self.model_name = load_clip(model_name, checkpoint, device)
        self.device = device
        self.batch_size = max(1, int(batch_size))

    def _image_tensor(self, blob: bytes):
        try:
            with Image.open(io.BytesIO(blob)) as im:
                return self.preprocess(im.convert("RGB"))
        except Exception:  # noqa: BLE001  (any undecodable image: NaN score, not a failed batch)
            return None

    def score(self, images: Sequence[bytes], texts: Sequence[str]) -> list[float]:
        if len(images) != len(texts):
            raise ValueError("images and texts differ in length")
        if self.threads and torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)   # runner threads may not share the setup thread's setting
        out: list[float] = [math.nan] * len(images)
        for start in range(0, len(images), self.batch_size):
            idx, xs = [], []
            for i in range(start, min(start + self.batch_size, len(images))):
                x = self._image_tensor(images[i]) if images[i] else None
                if x is not None:
                    idx.append(i)
                    xs.append(x)
            if not xs:
                continue
            with torch.inference_mode():
                im = self.model.encode_image(torch.stack(xs).to(self.device), normalize=True)
                tx = self.model.encode_text(self.tokenizer([texts[i] or "" for i in idx]).to(self.device),
                                            normalize=True)
                sims = (im * tx).sum(-1).float().cpu().tolist()
            for i, s in zip(idx, sims):
                out[i] = round(float(s), 6)
        return out


def shared_scorer(model_name: str | None, checkpoint: str | None, batch_size: int = 64,
                  threads: int | None = None) -> ClipScorer:
    """One scorer per process and configuration. Beam runners may set up several DoFn instances in
    one worker; each would otherwise load (and hold) its own copy of the model."""
    stamp = os.stat(checkpoint).st_mtime_ns if checkpoint and os.path.isfile(checkpoint) else None
    key = (model_name, checkpoint, stamp, int(batch_size), threads)   # a rewritten checkpoint reloads
    return SCORERS.get(key, lambda: ClipScorer(model_name, checkpoint, batch_size=batch_size, threads=threads))


# One scorer per worker process and (model, checkpoint and its mtime, batch size, threads): the
# model loaded once however many DoFn instances a runner sets up. Owner: this module; it lives as
# long as the process (nothing closes a model).
SCORERS: ProcessCache[ClipScorer] = ProcessCache("CLIP scorers")

__all__ = ["ClipScorer", "SCORERS", "shared_scorer"]
