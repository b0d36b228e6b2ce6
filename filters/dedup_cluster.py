"""Dedup clusters without Beam: union-find, the survivor rule, and an in-memory near-dedup.

Survivor rule (documented contract): in every cluster the document with the smallest key (plain
string order of the key field) survives, and the cluster id is that key. It depends only on the
set of keys in the cluster, never on quality scores, arrival order, runner or worker count.

`near_dedup_in_memory` is the single-process reference the Beam transforms are tested against
and the bench's fast path; the Beam version in pipelines/dedup.py never holds the corpus in one
worker.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Hashable, Iterable, Sequence

import numpy as np

from filters.dedup_text import exact_hash, shingle_hashes, shingle_set_jaccard, words_of
from filters.minhash_signature import MinHasher, band_hashes, resolve_bands_rows, signature_jaccard

EXACT_DUPLICATE = "exact_duplicate"
NEAR_DUPLICATE = "near_duplicate"


class UnionFind:
    """Disjoint sets over hashable items with path halving; `union` keeps the smaller item as root,
    so every root is its set's minimum (the survivor rule falls out of the structure)."""

    def __init__(self):
        self.parent: dict = {}

    def add(self, x: Hashable) -> None:
        self.parent.setdefault(x, x)

    def find(self, x: Hashable):
        parent = self.parent
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(self, a: Hashable, b: Hashable) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if rb < ra:
            ra, rb = rb, ra
        self.parent[rb] = ra
        return True

    def components(self) -> dict:
        """root -> sorted members."""
        out = defaultdict(list)
        for x in self.parent:
            out[self.find(x)].append(x)
        return {r: sorted(m) for r, m in out.items()}


def survivor(keys: Iterable[str]) -> str:
    """The key that survives in a cluster: the smallest."""
    return min(keys)


@dataclass(frozen=True)
class DedupMark:
    """What dedup writes on a row."""
    cluster: str
    cluster_size: int
    keep: bool
    reason: str | None

    def fields(self) -> dict:
        return {"dedup_cluster": self.cluster, "dedup_cluster_size": self.cluster_size,
                "dedup_keep": self.keep, "dedup_reason": self.reason}


def mark(key: str, cluster: str, size: int, reason_if_dropped: str) -> DedupMark:
    keep = key == cluster
    return DedupMark(cluster, size, keep, None if keep else reason_if_dropped)


VERIFY_MODES = ("exact", "signature")
DEFAULT_VERIFY = "exact"  # every near-dedup entry point defaults to this


def similarity_for(verify: str) -> Callable[[np.ndarray, np.ndarray], float]:
    """How a candidate pair is verified: "exact" = Jaccard of the two shingle sets (what the
    threshold means; default), "signature" = the MinHash estimate (matching minima / num_perm,
    standard error ~0.035 at 0.8 with 128 permutations, so pairs near the threshold fall either way)."""
    if verify == "exact":
        return shingle_set_jaccard
    if verify == "signature":
        return signature_jaccard
    raise ValueError(f"verify must be one of {', '.join(VERIFY_MODES)}, got {verify!r}")


def verified_bucket_edges(members: Sequence[tuple[str, np.ndarray]], threshold: float,
                          max_pairwise: int = 64,
                          similarity: Callable[[np.ndarray, np.ndarray], float] = signature_jaccard,
                          ) -> list[tuple[str, str]]:
    """Edges (smaller key, larger key) between bucket members whose similarity >= threshold.

    Members are (key, signature) or, with `similarity=shingle_set_jaccard`, (key, shingle set).
    They are taken in key order; each is compared with earlier members that are not already in
    its local component (a local union-find), so the edges form a spanning forest of the bucket's
    verified similarity graph. In buckets larger than `max_pairwise`, a member is compared only with
    the local component roots: bounded work on huge buckets of (near-)identical documents."""
    members = sorted(members, key=lambda m: m[0])
    uf = UnionFind()
    edges = []
    roots: list[int] = []
    for i, (ki, si) in enumerate(members):
        uf.add(i)
        others = range(i) if len(members) <= max_pairwise else list(roots)
        for j in others:
            if uf.find(j) == uf.find(i):
                continue
            if similarity(members[j][1], si) >= threshold:
                uf.union(j, i)
                edges.append((members[j][0], ki))
        if uf.find(i) == i:
            roots.append(i)
    return edges


def exact_dedup_in_memory(docs: Iterable[tuple[str, str]]) -> dict[str, DedupMark]:
    """key -> mark for (key, text) pairs; empty text is a cluster of one."""
    groups = defaultdict(list)
    out = {}
    for key, text in docs:
        h = exact_hash(text)
        if h:
            groups[h].append(key)
        else:
            out[key] = DedupMark(key, 1, True, None)
    for keys in groups.values():
        root = survivor(keys)
        for k in keys:
            out[k] = mark(k, root, len(keys), EXACT_DUPLICATE)
    return out


def near_dedup_in_memory(docs: Iterable[tuple[str, str]], num_perm: int = 128, bands: int | None = None,
                         rows: int | None = None, threshold: float = 0.8, ngram: int = 5, seed: int = 1,
                         batch: int = 2048, verify: str = DEFAULT_VERIFY,
                         ) -> tuple[dict[str, DedupMark], list[tuple[str, str]]]:
    """(key -> mark, verified edges) for (key, text) pairs, all in this process.

    Same steps as the Beam transform (signatures, band buckets, verified edges, components), but
    buckets are found by sorting one numpy array of bucket ids per band. Memory per document:
    bands*8 bytes of bucket ids plus the key, and what verification needs: the distinct shingle
    hashes (4 bytes each; verify="exact") or the signature (num_perm*4 bytes; verify="signature")."""
    bands, rows = resolve_bands_rows(num_perm, bands, rows, threshold)
    similarity = similarity_for(verify)
    exact = verify == "exact"
    hasher = MinHasher(num_perm, seed)
    keys: list[str] = []
    item_blocks, len_blocks, bucket_blocks = [], [], []
    buf_keys, buf_hashes = [], []

    def flush():
        if buf_keys:
            sigs = hasher.signatures(buf_hashes)
            keys.extend(buf_keys)
            bucket_blocks.append(band_hashes(sigs, bands, rows))
            if exact:
                sets = [np.unique(h) for h in buf_hashes]
                len_blocks.append(np.fromiter((len(x) for x in sets), dtype=np.int64, count=len(sets)))
                item_blocks.append(np.concatenate(sets) if sets else np.zeros(0, np.uint32))
            else:
                len_blocks.append(np.full(len(sigs), num_perm, dtype=np.int64)
                                  * ~np.all(sigs == 0xFFFFFFFF, axis=1))
                item_blocks.append(sigs.ravel())
            buf_keys.clear()
            buf_hashes.clear()

    for key, text in docs:
        buf_keys.append(key)
        buf_hashes.append(shingle_hashes(words_of(text), ngram))
        if len(buf_keys) >= batch:
            flush()
    flush()
    buckets = np.concatenate(bucket_blocks) if bucket_blocks else np.zeros((0, bands), np.uint64)
    lengths = np.concatenate(len_blocks) if len_blocks else np.zeros(0, np.int64)
    if exact:
        flat = np.concatenate(item_blocks) if item_blocks else np.zeros(0, np.uint32)
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        item = lambda i: flat[offsets[i]:offsets[i + 1]]  # noqa: E731
    else:
        flat = np.concatenate(item_blocks).reshape(-1, num_perm) if item_blocks else np.zeros((0, num_perm), np.uint32)
        item = flat.__getitem__
    del bucket_blocks, item_blocks, len_blocks
    nonempty = np.flatnonzero(lengths > 0)
    uf = UnionFind()
    edges = set()
    for band in range(bands):
        ids = buckets[nonempty, band]
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        starts = np.flatnonzero(np.concatenate(([True], sorted_ids[1:] != sorted_ids[:-1])))
        ends = np.concatenate((starts[1:], [len(sorted_ids)]))
        for lo, hi in zip(starts[ends - starts > 1], ends[ends - starts > 1]):
            members = nonempty[order[lo:hi]]
            for a, b in verified_bucket_edges([(keys[i], item(i)) for i in members], threshold,
                                              similarity=similarity):
                if (a, b) not in edges:
                    edges.add((a, b))
                    uf.union(a, b)
    out = {}
    for root, members in uf.components().items():
        for k in members:
            out[k] = mark(k, root, len(members), NEAR_DUPLICATE)
    for k in keys:
        if k not in out:
            out[k] = DedupMark(k, 1, True, None)
    return out, sorted(edges)
