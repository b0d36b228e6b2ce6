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
import threading
from typing import Sequence

_SHARED: dict[tuple, "ClipScorer"] = {}
_SHARED_LOCK = threading.Lock()


class ClipScorer:
    def __init__(self, model_name: str | None = None, checkpoint: str | None = None, device: str = "cpu",
                 batch_size: int = 64, threads: int | None = None):
        import torch  # noqa: PLC0415

        from training.clip.model import load_clip  # noqa: PLC0415

        self.threads = threads
        if threads:
            torch.set_num_threads(threads)
        self.model, self.preprocess, self.tokenizer, self.model_name = load_clip(model_name, checkpoint, device)
        self.device = device
        self.batch_size = max(1, int(batch_size))

    def _image_tensor(self, blob: bytes):
        from PIL import Image  # noqa: PLC0415

        try:
            with Image.open(io.BytesIO(blob)) as im:
                return self.preprocess(im.convert("RGB"))
        except Exception:  # noqa: BLE001  (any undecodable image: NaN score, not a failed batch)
            return None

    def score(self, images: Sequence[bytes], texts: Sequence[str]) -> list[float]:
        import torch  # noqa: PLC0415

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
    import os  # noqa: PLC0415

    stamp = os.stat(checkpoint).st_mtime_ns if checkpoint and os.path.isfile(checkpoint) else None
    key = (model_name, checkpoint, stamp, int(batch_size), threads)   # a rewritten checkpoint reloads
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = ClipScorer(model_name, checkpoint, batch_size=batch_size, threads=threads)
        return _SHARED[key]


__all__ = ["ClipScorer", "shared_scorer"]
