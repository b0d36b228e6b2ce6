"""MinHash signatures, LSH banding and signature Jaccard, batched in numpy.

The permutations are datasketch 2.0's "affine32" scheme, drawn as `datasketch.MinHash(num_perm,
seed)` draws them: each uint32 shingle hash is pre-mixed with the MurmurHash3 finalizer, then permuted as
a*h+b mod 2^32. `MinHasher.signature(h)` equals `MinHash(num_perm, seed, hashfunc=int)
.update_batch(h)` bit for bit (a test checks it); computing many documents at once with one
`np.minimum.reduceat` is what makes it fast, instead of one MinHash object per document.
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

# Max number of (shingle x permutation) cells computed at once: bounds temporary memory (4 MB: a chunk that stays in cache is ~3x faster than 64 MB).
_CHUNK_CELLS = 1024 * 1024


def _fmix32(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def affine32_permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) uint32 arrays of datasketch 2.0's affine32 permutations for (num_perm, seed): the
    same draws from the same generator (a test compares them with `datasketch.MinHash`), without
    importing datasketch, whose import pulls in scipy (~0.5 CPU-s per process and Beam worker)."""
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


class MinHasher:
    """Signatures of shingle-hash sets: `num_perm` uint32 values per document; empty set -> all 0xFFFFFFFF."""

    def __init__(self, num_perm: int = 128, seed: int = 1):
        if num_perm < 1:
            raise ValueError("num_perm must be positive")
        self.num_perm, self.seed = num_perm, seed
        self.a, self.b = affine32_permutations(num_perm, seed)

    def _permuted(self, hv: np.ndarray) -> np.ndarray:
        """(num_perm, len(hv)) matrix a_k * h + b_k mod 2^32; permutation-major so that the
        per-document minimum runs over contiguous memory (about 3x faster than shingle-major)."""
        phv = np.empty((self.num_perm, len(hv)), dtype=np.uint32)
        np.multiply(self.a[:, None], hv[None, :], out=phv)
        phv += self.b[:, None]
        return phv

    def signature(self, hashes: np.ndarray) -> np.ndarray:
        return self.signatures([hashes])[0]

    def signatures(self, hash_sets: Sequence[np.ndarray]) -> np.ndarray:
        """(len(hash_sets), num_perm) uint32 matrix, one row per shingle-hash array."""
        n = len(hash_sets)
        out = np.full((n, self.num_perm), 0xFFFFFFFF, dtype=np.uint32)
        lengths = np.fromiter((len(h) for h in hash_sets), dtype=np.int64, count=n)
        max_rows = max(1, _CHUNK_CELLS // self.num_perm)
        start = 0
        while start < n:
            # take documents until the chunk holds max_rows shingles (at least one document)
            end, total = start, 0
            while end < n and (end == start or total + lengths[end] <= max_rows):
                total += lengths[end]
                end += 1
            idx = [i for i in range(start, end) if lengths[i] > 0]
            if len(idx) == 1 and total > max_rows:  # one document longer than a chunk: fold slices
                hv = _fmix32(np.asarray(hash_sets[idx[0]], dtype=np.uint32))
                for lo in range(0, len(hv), max_rows):
                    out[idx[0]] = np.minimum(out[idx[0]], self._permuted(hv[lo:lo + max_rows]).min(axis=1))
            elif idx:
                hv = _fmix32(np.concatenate([np.asarray(hash_sets[i], dtype=np.uint32) for i in idx]))
                offsets = np.concatenate(([0], np.cumsum(lengths[idx])[:-1]))
                out[idx] = np.minimum.reduceat(self._permuted(hv), offsets, axis=1).T
            start = end
        return out


def is_empty_signature(sig: np.ndarray) -> bool:
    return bool(np.all(sig == 0xFFFFFFFF))


def signature_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Estimated Jaccard: the fraction of permutations whose minima agree."""
    return float(np.count_nonzero(a == b)) / len(a)


def _s_curve_areas(threshold: float, num_perm: int) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """Every (bands, rows) with bands*rows <= num_perm and its false-positive area (the integral of
    the collision probability 1-(1-s^r)^b over [0, threshold]) and false-negative area (of its
    complement over [threshold, 1]). The integrands are polynomials of degree b*r <= num_perm,
    so Gauss-Legendre with num_perm/2+1 nodes integrates them exactly (up to rounding)."""
    nodes, weights = np.polynomial.legendre.leggauss(max(8, num_perm // 2 + 1))
    pairs = [(b, r) for b in range(1, num_perm + 1) for r in range(1, num_perm // b + 1)]
    bs = np.array([p[0] for p in pairs], dtype=np.float64)[:, None]
    rs = np.array([p[1] for p in pairs], dtype=np.float64)[:, None]

    def area(lo, hi, false_negative):
        s = (hi - lo) / 2 * nodes[None, :] + (hi + lo) / 2
        collide = 1 - (1 - s ** rs) ** bs
        return ((1 - collide) if false_negative else collide) @ weights * (hi - lo) / 2

    return pairs, area(0.0, threshold, False), area(threshold, 1.0, True)


@functools.lru_cache(maxsize=64)
def lsh_params(threshold: float = 0.8, num_perm: int = 128, false_positive_weight: float = 0.5) -> tuple[int, int]:
    """(bands, rows) with bands*rows <= num_perm minimising the weighted false-positive and
    false-negative areas of the LSH S-curve around `threshold` (datasketch's rule; a test
    compares with `datasketch.lsh._optimal_param`, which integrates each pair with scipy).

    Candidates are verified by signature Jaccard afterwards, so false positives only cost time; a
    weight below 0.5 favours recall."""
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be in (0, 1), got {threshold}")
    if num_perm < 1:
        raise ValueError(f"num_perm must be positive, got {num_perm}")
    pairs, fp, fn = _s_curve_areas(float(threshold), int(num_perm))
    error = fp * false_positive_weight + fn * (1.0 - false_positive_weight)
    return pairs[int(np.argmin(error))]  # first minimum, as datasketch's strict "<" keeps


def resolve_bands_rows(num_perm: int, bands: int | None, rows: int | None, threshold: float) -> tuple[int, int]:
    """Fill in whichever of bands/rows is missing; checks bands*rows <= num_perm.

    Default: datasketch's optimum with false positives weighted 0.05, i.e. 16 x 8 for 128
    permutations at 0.8 (a pair at Jaccard 0.8 shares a bucket with probability 0.95, one at 0.5
    with 0.06). Recall is what LSH must provide: every candidate is verified afterwards (exact
    shingle-set Jaccard by default), so a false candidate only costs time. On SPDX licence texts
    16 x 8 misses 4 of 394 true pairs (bench/dedup.py)."""
    if bands is None and rows is None:
        bands, rows = lsh_params(threshold, num_perm, 0.05)
    elif bands is None:
        bands = num_perm // rows
    elif rows is None:
        rows = num_perm // bands
    if bands < 1 or rows < 1 or bands * rows > num_perm:
        raise ValueError(f"bands*rows must be between 1 and num_perm={num_perm}, got {bands}x{rows}")
    return int(bands), int(rows)


def _fmix64(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> np.uint64(33))


@functools.lru_cache(maxsize=16)
def _row_multipliers(rows: int) -> np.ndarray:
    return np.random.RandomState(20250).randint(0, 1 << 62, size=rows, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def band_hashes(sigs: np.ndarray, bands: int, rows: int) -> np.ndarray:
    """(n, bands) uint64 bucket ids of signatures (n, num_perm): a position-weighted sum of a
    band's `rows` minima plus the band index, avalanched (MurmurHash3 fmix64). Vectorised over
    all documents; different bands never share an id except by a 2^-64 accident (and every
    candidate is verified anyway). Ids are masked to 63 bits so they are plain Beam int keys."""
    sigs = np.atleast_2d(sigs)
    n = sigs.shape[0]
    s = sigs[:, :bands * rows].astype(np.uint64).reshape(n, bands, rows)
    h = (s * _row_multipliers(rows)).sum(axis=2, dtype=np.uint64)
    h += np.arange(1, bands + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    return _fmix64(h) & np.uint64((1 << 63) - 1)


def band_buckets(sig: np.ndarray, bands: int, rows: int) -> list[int]:
    """Bucket ids of one signature (see band_hashes)."""
    return [int(x) for x in band_hashes(sig, bands, rows)[0]]


def collision_probability(similarity: float, bands: int, rows: int) -> float:
    """Probability that two documents of Jaccard `similarity` share at least one band bucket."""
    return 1.0 - (1.0 - similarity ** rows) ** bands
