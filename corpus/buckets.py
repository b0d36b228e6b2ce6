"""Which of n buckets a string key falls in: xxh64 of its UTF-8 bytes, modulo n.

The one hash every stage uses to spread keys: rows to shards (`pipelines/shards_io.py`, the synth
writer), hosts to crawl slots, ids to held-out splits. Stable across processes, runs and machines
(unlike Python's salted `hash`), so the same input gives the same shards and splits anywhere.
"""
from __future__ import annotations

import xxhash


def key_hash(key: str) -> int:
    """A 64-bit hash of `key`, the same in every process."""
    return xxhash.xxh64_intdigest(key.encode("utf-8"))


def bucket_of(key: str, n: int) -> int:
    """The bucket in [0, n) that `key` falls in."""
    return key_hash(key) % n
