"""The model bench/compress.py compresses: `tiny` trained on real text, cached on disk.

Text: Debian's English documentation (python3.11-doc and debian-reference-en, fetched with
`apt-get download` + `dpkg -x` by datatools/debian_docs.py into SCRATCH, never committed), split by
page (a page's chunks stay together) into
- ``train``   (75%): float pretraining and QAT,
- ``extra``   (15%): the "additional data" the LoRA recovery adapters train on,
- ``heldout`` (10%): every loss the bench reports.
A byte-level BPE of 4096 tokens is trained on the train split. The float model, its tokens and the
tokenizer are cached under SCRATCH and reused by later runs (training costs a few CPU-minutes).
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
import zlib

import numpy as np
import torch

PACKAGES = ["python3.11-doc", "debian-reference-en"]
SEQ = 128
PRESET = "tiny"  # dense, 4 layers x 128: a few CPU-minutes to train on 2M tokens


def split_of(page: str) -> str:
    h = zlib.crc32(page.encode()) % 100
    return "heldout" if h < 10 else "extra" if h < 25 else "train"


def tokens(scratch: str) -> dict[str, np.ndarray]:
    """Token ids per split (uint16), built once and cached as .npy files."""
    out_dir = os.path.join(scratch, "tokens")
    files = {s: os.path.join(out_dir, f"{s}.npy") for s in ("train", "extra", "heldout")}
    if all(os.path.exists(f) for f in files.values()):
        return {s: np.load(f) for s, f in files.items()}
    from datatools.debian_docs import documents, fetch
    from training.tokenizer import EOS, save_tokenizer, train_tokenizer

    root = fetch(os.path.join(scratch, "debian"), PACKAGES)
    docs = documents(root)
    by_split: dict[str, list[str]] = {"train": [], "extra": [], "heldout": []}
    for d in docs:
        by_split[split_of(d.page)].append(d.text)
    tok = train_tokenizer(by_split["train"], 4096)
    save_tokenizer(tok, os.path.join(scratch, "tokenizer"))
    eos = tok.token_to_id(EOS)
    os.makedirs(out_dir, exist_ok=True)
    for s, texts in by_split.items():
        ids: list[int] = []
        for enc in tok.encode_batch(texts):
            ids.extend(enc.ids)
            ids.append(eos)
        np.save(files[s], np.asarray(ids, dtype=np.uint16))
    return {s: np.load(f) for s, f in files.items()}


def float_model(scratch: str, steps: int = 2000, batch: int = 8, lr: float = 3e-3, log=print):
    """The trained float ``tiny`` (trained once, then loaded from SCRATCH/float)."""
    from training.checkpoint import load_model_from_checkpoint, save_model_weights
    from training.quant.data import batches
    from training.models import build_model, get_preset
    from training.schedule import lr_at

    ckpt = os.path.join(scratch, "float")
    if os.path.exists(os.path.join(ckpt, "model.safetensors")):
        return load_model_from_checkpoint(ckpt)
    data = tokens(scratch)
    cfg = dataclasses.replace(get_preset(PRESET), kernels="reference")
    torch.manual_seed(0)
    model = build_model(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1, betas=(0.9, 0.95))
    t0 = time.process_time()
    for step, (x, y) in zip(range(steps), batches(data["train"], batch, SEQ)):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, lr, steps, 100, "cosine", 0.1)
        loss = model(x, targets=y).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 100 == 0 or step == steps - 1:
            log(f"float step {step} loss {loss.item():.3f} ({time.process_time() - t0:.0f} CPU-s)")
    tmp = ckpt + ".tmp"
    save_model_weights(model, tmp)
    with open(os.path.join(tmp, "train.json"), "w") as f:
        json.dump({"steps": steps, "batch": batch, "seq": SEQ, "lr": lr,
                   "cpu_s": time.process_time() - t0}, f)
    os.replace(tmp, ckpt)
    return model


if __name__ == "__main__":
    import sys
    torch.set_num_threads(1)
    float_model(sys.argv[1] if len(sys.argv) > 1 else "/work/scratch/compress")
