"""The default CLIP scorer of `cidermill images`: cidermill-tiny-clip trained once on captioned
pictures and cached, so a first run needs no download (the ~11 MB checkpoint is not shipped).

The caller says where the training pairs come from: `cidermill images` passes synthetic captioned
scenes (synth/, through its pipeline); without a writer, colored-shape pairs (toy_pairs.py) are
used and the cache name says so. Cache: $CIDERMILL_CACHE/clip, else ~/.cache/cidermill/clip.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from typing import Any, Callable

from corpus.errors import CidermillError
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
    it is not there yet (written under a temporary name and renamed: a crash leaves no half file).
    A scorer that separates matched from shuffled held-out pairs no better than its random init is
    not cached: an error instead of a scorer that drops every pair."""
    tag = "" if write_pairs is not None else "-toy"
    path = os.path.join(clip_cache_dir(), f"{DEMO_CLIP_VERSION}{tag}-n{n}-s{steps}-seed{seed}.safetensors")
    if os.path.isfile(path):
        if _learned(path + ".metrics.json"):
            return path
        os.remove(path)   # cached by an earlier version that kept a scorer which had not learned: retrain
    os.makedirs(clip_cache_dir(), exist_ok=True)
    if log:
        log(f"images: training the default CLIP scorer once ({n} synthetic pairs, {steps} steps); cached at {path}")
    partial = path + ".partial.safetensors"
    with tempfile.TemporaryDirectory(prefix="cidermill-clip-") as tmp:
        pairs = os.path.join(tmp, "pairs")
        (write_pairs or _toy_pairs)(pairs, n, seed)
        result = train_clip(pairs, partial, steps=steps, seed=seed, log=log)
    auc = result["after"].get("roc_auc_matched_vs_shuffled")
    base = result["before"].get("roc_auc_matched_vs_shuffled")
    if not _beats(auc, base):
        for f in (partial, partial + ".metrics.json"):
            if os.path.exists(f):
                os.remove(f)
        raise CidermillError(f"the default CLIP scorer did not learn (held-out AUC {auc} against {base} at "
                             "random init); nothing cached. Run again, or pass --clip-checkpoint")
    os.replace(partial, path)
    if os.path.exists(partial + ".metrics.json"):
        os.replace(partial + ".metrics.json", path + ".metrics.json")
    return path


def _beats(auc, base) -> bool:
    """Held-out AUC (matched vs shuffled pairs) finite and above the random init's."""
    return auc is not None and math.isfinite(auc) and (base is None or auc > base)


def _learned(metrics_path: str) -> bool:
    """What a cached checkpoint's metrics file says of it (True without one: nothing to judge by)."""
    try:
        with open(metrics_path) as f:
            m = json.load(f)
    except (OSError, ValueError):
        return True
    return _beats((m.get("after") or {}).get("roc_auc_matched_vs_shuffled"),
                  (m.get("before") or {}).get("roc_auc_matched_vs_shuffled"))
