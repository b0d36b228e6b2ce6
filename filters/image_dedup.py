"""Exact (sha256) and near (perceptual hash) duplicate images, with a deterministic survivor.

Near duplicates: 64-bit pHashes within `max_distance` bits (Hamming). Candidates are found by
banding: split the hash into max_distance + 1 bands; two hashes that differ in at most d bits
agree exactly on at least one band (pigeonhole), so no pair is missed and no all-pairs scan is
needed. Duplicates are closed transitively (union-find); in each cluster the survivor is the item
with the smallest (priority, id), independent of input order, runner or worker count.
"""
from __future__ import annotations

from typing import Iterable

R_DUP_EXACT = "duplicate_image_exact"
R_DUP_NEAR = "duplicate_image_near"


def hamming(a: str, b: str) -> int:
    return bin(int(a, 16) ^ int(b, 16)).count("1")


def _bands(ph: str, n: int) -> list[tuple[int, int]]:
    v = int(ph, 16)
    bits = 4 * len(ph)
    edges = [round(i * bits / n) for i in range(n + 1)]
    return [(i, (v >> edges[i]) & ((1 << (edges[i + 1] - edges[i])) - 1)) for i in range(n)]


def find_duplicates(items: Iterable[tuple[str, str, str | None, str, tuple]], max_distance: int = 4
                    ) -> dict[str, tuple[str, str]]:
    """items: (id, sha256, phash or None, group, priority). Within each group, returns
    {dropped id: (reason, survivor id)}; max_distance < 0 disables near dedup."""
    by_group: dict[str, list[tuple[tuple, str, str, str | None]]] = {}
    for pid, sha, ph, group, prio in items:
        by_group.setdefault(group, []).append((tuple(prio), pid, sha, ph))
    out: dict[str, tuple[str, str]] = {}
    for group in sorted(by_group):
        lst = sorted(by_group[group])
        parent = list(range(len(lst)))

        def find(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        def union(i: int, j: int) -> None:
            a, b = find(i), find(j)
            if a != b:
                parent[max(a, b)] = min(a, b)   # the smaller index (= better priority) is the root

        first_sha: dict[str, int] = {}
        for i, (_, _, sha, _) in enumerate(lst):
            if sha in first_sha:
                union(first_sha[sha], i)
            else:
                first_sha[sha] = i
        if max_distance >= 0:
            buckets: dict[tuple[int, int], list[int]] = {}
            for i, (_, _, _, ph) in enumerate(lst):
                if not ph:
                    continue
                for band in _bands(ph, max_distance + 1):
                    for j in buckets.get(band, ()):
                        if find(i) != find(j) and hamming(ph, lst[j][3]) <= max_distance:
                            union(i, j)
                    buckets.setdefault(band, []).append(i)
        for i, (_, pid, sha, _) in enumerate(lst):
            root = find(i)
            if root != i:
                out[pid] = (R_DUP_EXACT if lst[root][2] == sha else R_DUP_NEAR, lst[root][1])
    return out


__all__ = ["find_duplicates", "hamming", "R_DUP_EXACT", "R_DUP_NEAR"]
