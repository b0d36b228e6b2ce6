"""Retrieval and separation metrics for an image-text model on held-out pairs (numpy only).

recall@k: share of images whose own caption is among the k most similar captions (and the
reverse). ROC-AUC: how well the cosine separates matched pairs from shuffled (mismatched) pairs,
the exact decision a CLIP-score filter makes.
"""
from __future__ import annotations

import numpy as np


def recall_at_k(sim: np.ndarray, k: int) -> float:
    """sim[i, j] = similarity of query i to candidate j; the right candidate of i is j = i.

    Ties count against the query (a constant model scores 0, not 1)."""
    n = sim.shape[0]
    if n == 0:
        return float("nan")
    own = np.diag(sim)
    better = (sim > own[:, None]).sum(axis=1) + ((sim == own[:, None]).sum(axis=1) - 1)
    return float(np.mean(better < k))


def roc_auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """P(score of a random positive > random negative), ties counted half (Mann-Whitney U)."""
    pos, neg = np.asarray(pos, dtype=np.float64), np.asarray(neg, dtype=np.float64)
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    allv = np.concatenate([pos, neg])
    order = np.argsort(allv, kind="mergesort")
    ranks = np.empty(len(allv), dtype=np.float64)
    sorted_v = allv[order]
    i = 0
    while i < len(allv):  # average ranks over ties
        j = i
        while j + 1 < len(allv) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    u = ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2.0
    return float(u / (len(pos) * len(neg)))


def derangement(n: int, seed: int) -> np.ndarray:
    """A permutation with no fixed point (every caption moved to another image)."""
    if n < 2:
        return np.arange(n)
    perm = np.random.default_rng(seed).permutation(n)
    shift = np.roll(perm, 1)
    out = np.empty(n, dtype=np.int64)
    out[perm] = shift          # a single cycle through perm: no index maps to itself
    return out


def best_threshold(pos: np.ndarray, neg: np.ndarray) -> float:
    """The cosine cut that best separates matched from shuffled pairs (max TPR - FPR, Youden's J)."""
    pos, neg = np.sort(np.asarray(pos, np.float64)), np.sort(np.asarray(neg, np.float64))
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    cands = np.unique(np.concatenate([pos, neg]))
    tpr = 1.0 - np.searchsorted(pos, cands, side="left") / len(pos)   # share of pos >= cut
    fpr = 1.0 - np.searchsorted(neg, cands, side="left") / len(neg)
    j = tpr - fpr
    i = int(np.argmax(j))
    below = neg[neg < cands[i]]
    # halfway between the cut and the highest negative under it: a margin on both sides
    return float((cands[i] + below.max()) / 2.0) if len(below) else float(cands[i])


def retrieval_metrics(img: np.ndarray, txt: np.ndarray, seed: int = 0) -> dict[str, float]:
    """img, txt: L2-normalised embeddings, row i of each is one pair."""
    sim = img @ txt.T
    perm = derangement(len(img), seed)
    matched = np.diag(sim)
    shuffled = sim[np.arange(len(img)), perm] if len(img) > 1 else np.array([])
    return {
        "n": int(len(img)),
        "i2t_recall@1": recall_at_k(sim, 1), "i2t_recall@5": recall_at_k(sim, 5),
        "t2i_recall@1": recall_at_k(sim.T, 1), "t2i_recall@5": recall_at_k(sim.T, 5),
        "roc_auc_matched_vs_shuffled": roc_auc(matched, shuffled),
        "mean_cos_matched": float(matched.mean()) if len(matched) else float("nan"),
        "mean_cos_shuffled": float(shuffled.mean()) if len(shuffled) else float("nan"),
        "suggested_threshold": best_threshold(matched, shuffled),
    }
