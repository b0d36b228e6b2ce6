"""Loader throughput from disk on one core: tokens/s of packed, mixed batches from token shards.

Target (issue 8): at least 10M tokens/s. Writes a synthetic token dataset (uint32) under a temp
dir, then times PackedLoader.next_batch on a single thread.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import pyarrow as pa


def make_tokens(path: str, n_tokens: int, mean_doc: int, seed: int) -> None:
    from corpus.schemas import TOKENS
    from corpus.writer import DatasetWriter
    rng = np.random.default_rng(seed)
    with DatasetWriter(path, "tokens", TOKENS, target_bytes=64 << 20) as w:
        made = 0
        while made < n_tokens:
            lens = rng.geometric(1 / mean_doc, size=4096).clip(1, 20 * mean_doc)
            flat = rng.integers(0, 150_000, size=int(lens.sum()), dtype=np.uint32)
            offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)
            tokens = pa.ListArray.from_arrays(pa.array(offsets), pa.array(flat, type=pa.uint32()))
            ids = pa.array([f"d{made}-{i}" for i in range(len(lens))])
            n = len(lens)
            w.write_batch(pa.RecordBatch.from_arrays(
                [ids, tokens, pa.array(["bench"] * n), pa.array(["bench"] * n)], schema=TOKENS))
            made += int(lens.sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tokens", type=int, default=200_000_000)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=10.0)
    a = ap.parse_args()
    from bench.results import save_result, start_conditions
    start = start_conditions()
    import torch
    torch.set_num_threads(1)
    from training.data.loader import PackedLoader
    from training.data.token_source import TokenSource
    with tempfile.TemporaryDirectory() as tmp:
        t = time.time()
        make_tokens(os.path.join(tmp, "a"), a.tokens * 3 // 4, 600, 0)
        make_tokens(os.path.join(tmp, "b"), a.tokens // 4, 2000, 1)
        print(f"wrote {a.tokens / 1e6:.0f}M tokens in {time.time() - t:.1f}s")
        t = time.time()
        srcs = [("a", TokenSource(os.path.join(tmp, "a")), 0.7), ("b", TokenSource(os.path.join(tmp, "b")), 0.3)]
        print(f"opened (mmap) in {time.time() - t:.2f}s")
        ld = PackedLoader(srcs, seq_len=a.seq_len, batch_size=a.batch, seed=0)
        n, t = 0, time.time()
        while time.time() - t < a.seconds:
            b = ld.next_batch()
            n += b["input_ids"].numel()
        dt = time.time() - t
        print(f"loader: {n / dt / 1e6:.1f}M tokens/s on one core (seq {a.seq_len}, batch {a.batch}, "
              f"2-way mixture); target >= 10M tokens/s -> {'MET' if n / dt >= 10e6 else 'NOT MET'}")
    save_result("loader", {
        "config": {"tokens": a.tokens, "seq_len": a.seq_len, "batch": a.batch, "seconds": a.seconds},
        "tokens_per_s": round(n / dt),
        "headline": [{"what": f"packed, mixed batches from token shards on one core (seq {a.seq_len}, batch {a.batch})",
                      "figure": f"{n / dt / 1e6:.1f}M tokens/s", "target": ">= 10M tokens/s"}],
        "not_covered": "synthetic uint32 tokens in the page cache (a warm disk); wall clock, no peer loader"},
        packages=["torch", "numpy", "pyarrow"], start=start)


if __name__ == "__main__":
    main()
