"""Exact (sha256) and near (perceptual hash) duplicate images, with a deterministic survivor.

Near duplicates: 64-bit pHashes within `max_distance` bits (Hamming). Candidates are found by
banding: split the hash into max_distance + 1 bands; two hashes that differ in at most d bits
agree exactly on at least one band (pigeonhole), so no pair is missed and no all-pairs scan is
needed. Duplicates are closed transitively (union-find); in each cluster the survivor is the item
with the smallest (priority, id), independent of input order, runner or worker count.

`find_duplicates` does it all in memory. The keyed pieces below let a Beam job do the same without
gathering the candidates on one worker (pipelines/images_pipeline.py): every candidate becomes a
node string that sorts like (group, priority, id), so "smallest node of a connected component" is
the survivor; edges come from sha256 groups and from pHash band buckets (each near pair is emitted
in the first band where the two hashes agree, so once); components are closed by
pipelines/dedup.py's ConnectedComponents.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from filters.float_order import order_key

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


def float_order_hex(x: float) -> str:
    """16 hex digits that sort like the float (-inf < ... < -0.0 <= 0.0 < ... < inf)."""
    return f"{order_key(x):016x}"


def node_key(group: str, priority: float, pid: str, sha: str) -> str:
    """A candidate as one string ordered by (group, priority, pid); group must not contain '|'."""
    if "|" in group:
        raise ValueError(f"dedup group {group!r} contains '|'")
    return f"{group}|{float_order_hex(priority)}|{pid}|{sha}"


def parse_node(node: str) -> tuple[str, str, str]:
    """node -> (group, pid, sha)."""
    group, _, pid, sha = node.split("|", 3)
    return group, pid, sha


def band_entries(node: str, ph: str | None, max_distance: int) -> list[tuple[tuple[str, int, int], tuple[str, str]]]:
    """((group, band index, band value), (node, phash)) for each of the max_distance + 1 bands."""
    if not ph or max_distance < 0:
        return []
    group = node.split("|", 1)[0]
    return [((group, i, v), (node, ph)) for i, v in _bands(ph, max_distance + 1)]


def star_edges(nodes: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Edges linking every node of a group (same sha256) to the group's smallest node."""
    nodes = sorted(set(nodes))
    for v in nodes[1:]:
        yield nodes[0], v


def bucket_edges(band: int, members: Iterable[tuple[str, str]], max_distance: int) -> Iterator[tuple[str, str]]:
    """Edges (a, b), a < b, of one band bucket: members with equal pHashes are linked to their
    smallest node, the smallest nodes of distinct pHashes pairwise when within max_distance bits.
    An edge is emitted only by the first band in which both hashes agree, so once over all bands."""
    by_hash: dict[str, list[str]] = {}
    for node, ph in members:
        by_hash.setdefault(ph, []).append(node)
    n = max_distance + 1
    heads = []
    for ph in sorted(by_hash):
        nodes = sorted(set(by_hash[ph]))
        heads.append((ph, nodes[0], _bands(ph, n)))
        if band == 0:   # equal hashes agree in every band: band 0 is their first
            for v in nodes[1:]:
                yield nodes[0], v
    for i in range(len(heads)):
        ph_a, a, bands_a = heads[i]
        for j in range(i + 1, len(heads)):
            ph_b, b, bands_b = heads[j]
            if hamming(ph_a, ph_b) > max_distance:
                continue
            first = next(k for k in range(n) if bands_a[k] == bands_b[k])
            if first == band:
                yield (a, b) if a < b else (b, a)


def duplicate_label(node: str, root: str) -> tuple[str, tuple[str, str]] | None:
    """(pid, (reason, survivor pid)) for a node whose component root is another node, else None.
    Exact when the survivor has the same sha256, near otherwise (as find_duplicates)."""
    if node == root:
        return None
    _, pid, sha = parse_node(node)
    _, root_pid, root_sha = parse_node(root)
    return pid, (R_DUP_EXACT if sha == root_sha else R_DUP_NEAR, root_pid)


__all__ = ["find_duplicates", "hamming", "R_DUP_EXACT", "R_DUP_NEAR", "node_key", "parse_node", "band_entries",
           "star_edges", "bucket_edges", "duplicate_label", "float_order_hex"]
