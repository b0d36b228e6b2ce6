"""Contrastive training of an open_clip model on pair shards (`cidermill train-clip`).

Symmetric InfoNCE (open_clip's ClipLoss) with AdamW, linear warmup and cosine decay, batches drawn
by a seeded generator: the same pairs, seed and step count give the same checkpoint on CPU. The
held-out split is scored before and after training (recall@1/@5 both ways, ROC-AUC of matched
vs shuffled pairs) and the figures go into the checkpoint metadata and a JSON file beside it.
"""
from __future__ import annotations

import json
import math
import os
import time
from typing import Any, Callable, Sequence

import numpy as np
import open_clip
import torch

from corpus.errors import CidermillError
from training.clip.data import load_split
from training.clip.metrics import retrieval_metrics
from training.clip.model import DEFAULT_MODEL, build, save_checkpoint
from training.clip.vision_tower import attach
from training.vision.config import get_vision_preset


def embed(model, images, texts, batch_size: int = 256):
    """L2-normalised (image, text) embeddings as numpy arrays, in eval mode, no grad."""
    was_training = model.training
    model.eval()
    ims, txs = [], []
    with torch.no_grad():
        for i in range(0, len(images), batch_size):
            ims.append(model.encode_image(images[i:i + batch_size], normalize=True).float().numpy())
            txs.append(model.encode_text(texts[i:i + batch_size], normalize=True).float().numpy())
    model.train(was_training)
    if not ims:
        return np.zeros((0, 1), np.float32), np.zeros((0, 1), np.float32)
    return np.concatenate(ims), np.concatenate(txs)


def evaluate(model, images, texts, seed: int = 0) -> dict[str, float]:
    if len(images) < 2:
        return {"n": int(len(images))}
    img, txt = embed(model, images, texts)
    return retrieval_metrics(img, txt, seed=seed)


def lr_at(step: int, steps: int, lr: float, warmup: int) -> float:
    if step < warmup:
        return lr * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, t)))


def train_clip(pairs_dirs: str | Sequence[str], out_path: str, steps: int = 300, seed: int = 0,
               model_name: str = DEFAULT_MODEL, batch_size: int = 64, lr: float = 1e-3, weight_decay: float = 0.1,
               warmup: int = 20, heldout: float = 0.1, max_rows: int | None = 10000,
               log: Callable[[str], None] | None = print, threads: int | None = None,
               vision: str | None = None) -> dict[str, Any]:
    """Train on the pairs in `pairs_dirs`, write a safetensors checkpoint to `out_path`.

    `vision`: a training.vision preset (e.g. vitdet-tiny) replacing open_clip's image tower.

    Returns {"model", "steps", "train_pairs", "heldout_pairs", "before": metrics, "after": metrics,
    "loss_first", "loss_last", "seconds", "checkpoint"}; also written to `<out_path>.metrics.json`."""
    dirs = [pairs_dirs] if isinstance(pairs_dirs, str) else list(pairs_dirs)
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    t0 = time.time()
    model, preprocess, tokenizer = build(model_name)
    vcfg = None
    if vision:
        vcfg = get_vision_preset(vision)
        model, preprocess = attach(model, vcfg)
    split = load_split(dirs, preprocess, tokenizer, heldout=heldout, max_rows=max_rows)
    n = len(split.train_ids)
    if log:
        log(f"train-clip: {model_name}{f' with a {vision} image tower' if vision else ''}, {n} training pairs, {len(split.held_ids)} held out"
            f"{f', {split.skipped} undecodable skipped' if split.skipped else ''}; {steps} steps of {batch_size}")
    before = evaluate(model, split.held_images, split.held_texts, seed)
    bs = min(batch_size, n)
    losses, skipped = _train(model, split, steps, bs, lr, weight_decay, warmup, seed, log)
    if skipped > steps // 4 or not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        raise CidermillError(f"CLIP training diverged: {skipped} of {steps} steps had a non-finite loss or "
                             f"gradient (lr {lr}); no checkpoint written. Try a lower --lr")
    after = evaluate(model, split.held_images, split.held_texts, seed)
    head = losses[: max(1, min(10, len(losses)))]
    tail = losses[-max(1, min(10, len(losses))):]
    result: dict[str, Any] = {
        "model": model_name, "steps": steps, "batch_size": bs, "seed": seed, "lr": lr,
        "train_pairs": n, "heldout_pairs": len(split.held_ids), "skipped": split.skipped, "skipped_steps": skipped,
        "before": before, "after": after,
        "loss_first": float(np.mean(head)) if losses else None, "loss_last": float(np.mean(tail)) if losses else None,
        "inputs": [os.path.abspath(d) for d in dirs], "seconds": round(time.time() - t0, 1),
    }
    if vcfg is not None:
        result["vision_encoder"] = vcfg.to_dict()
    save_checkpoint(model, out_path, model_name, extra=result)
    result["checkpoint"] = os.path.abspath(out_path)
    with open(out_path + ".metrics.json", "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    if log:
        log("train-clip: held-out " + ", ".join(f"{k} {after[k]:.3f}" for k in
            ("i2t_recall@1", "i2t_recall@5", "t2i_recall@1", "t2i_recall@5", "roc_auc_matched_vs_shuffled")
            if k in after) + f" (random init AUC {before.get('roc_auc_matched_vs_shuffled', float('nan')):.3f})")
    return result


def _optimizer(model, lr: float, weight_decay: float) -> torch.optim.AdamW:
    """AdamW as open_clip trains: weight decay on matrices only (not on gains, biases, embeddings)."""
    decay = [p for nm, p in model.named_parameters() if p.ndim >= 2 and "embedding" not in nm]
    no_decay = [p for nm, p in model.named_parameters() if not (p.ndim >= 2 and "embedding" not in nm)]
    return torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.98), eps=1e-6)


def _train(model, split, steps: int, bs: int, lr: float, weight_decay: float, warmup: int, seed: int,
           log: Callable[[str], None] | None) -> tuple[list[float], int]:
    """`steps` optimiser steps on batches of `bs` training pairs, each epoch in a fresh seeded
    order -> (the loss of every step applied, how many steps were skipped). The logit scale stays
    within CLIP's clamp (at most 100). A step whose loss or gradient norm is not finite changes
    nothing: clipping an infinite norm scales every gradient by 0 * inf, which made every weight
    NaN (seen once in a run of the default scorer's training; its checkpoint then scored every
    pair NaN, and `cidermill images` kept none)."""
    opt = _optimizer(model, lr, weight_decay)
    loss_fn = open_clip.ClipLoss()
    rng = np.random.default_rng(seed)
    n = len(split.train_ids)
    order = rng.permutation(n)
    pos = 0
    losses: list[float] = []
    skipped = 0
    model.train()
    for step in range(steps):
        if pos + bs > n:
            order, pos = rng.permutation(n), 0
        idx = torch.from_numpy(order[pos:pos + bs].copy())
        pos += bs
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, lr, warmup)
        img_f, txt_f, scale = model(split.train_images[idx], split.train_texts[idx])[:3]
        loss = loss_fn(img_f, txt_f, scale)
        opt.zero_grad(set_to_none=True)
        if not torch.isfinite(loss):
            skipped += 1
            continue
        loss.backward()
        if not torch.isfinite(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)):
            opt.zero_grad(set_to_none=True)
            skipped += 1
            continue
        opt.step()
        with torch.no_grad():
            model.logit_scale.clamp_(0, math.log(100))
        losses.append(float(loss.detach()))
        if log and (step + 1) % max(1, steps // 10) == 0:
            log(f"train-clip: step {step + 1}/{steps} loss {np.mean(losses[-max(1, steps // 10):]):.4f}"
                + (f" ({skipped} steps skipped: non-finite)" if skipped else ""))
    return losses, skipped
