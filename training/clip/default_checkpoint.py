"""The default CLIP scorer of `cidermill images`: cidermill-tiny-clip trained once on captioned
pictures and cached, so a first run needs no download (the ~11 MB checkpoint is not shipped).

The caller says where the training pairs come from: `cidermill images` passes synthetic captioned
scenes (synth/, through its pipeline); without a writer, colored-shape pairs (toy_pairs.py) are
used and the cache name says so. Cache: $CIDERMILL_CACHE/clip, else ~/.cache/cidermill/clip.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any, Callable

from training.clip.toy_pairs import write_toy_pairs
from training.clip.train import train_clip

DEMO_CLIP_VERSION = "demo-tiny-clip-v1"
PairsWriter = Callable[[str, int, int], Any]   # (out_dir, n, seed) -> writes a pairs dataset at out_dir


def clip_cache_dir() -> str:
    return os.path.join(os.environ.get("CIDERMILL_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                           "cidermill"), "clip")


def _toy_pairs(out_dir: str, n: int, seed: int) -> None:
    write_toy_pairs(out_dir, n, seed=seed, overwrite=True)


def default_clip_checkpoint(write_pairs: PairsWriter | None = None, n: int = 1500, steps: int = 300, seed: int = 0,
                            log=print) -> str:
    """Path of the cached checkpoint, trained by `train_clip` on n pairs from `write_pairs` first if
    it is not there yet (written under a temporary name and renamed: a crash leaves no half file)."""
    tag = "" if write_pairs is not None else "-toy"
    path = os.path.join(clip_cache_dir(), f"{DEMO_CLIP_VERSION}{tag}-n{n}-s{steps}-seed{seed}.safetensors")
    if os.path.isfile(path):
        return path
    os.makedirs(clip_cache_dir(), exist_ok=True)
    if log:
        log(f"images: training the default CLIP scorer once ({n} synthetic pairs, {steps} steps); cached at {path}")
    partial = path + ".partial.safetensors"
    with tempfile.TemporaryDirectory(prefix="cidermill-clip-") as tmp:
        pairs = os.path.join(tmp, "pairs")
        (write_pairs or _toy_pairs)(pairs, n, seed)
        train_clip(pairs, partial, steps=steps, seed=seed, log=log)
    os.replace(partial, path)
    if os.path.exists(partial + ".metrics.json"):
        os.replace(partial + ".metrics.json", path + ".metrics.json")
    return path
