"""Tiny gradient-boosted decision trees (binary log-loss) in numpy, stored as plain JSON.

Why not a library: the extractor's model has to load in every crawl worker with nothing but numpy,
and be a small reviewable file. Training is histogram-based (features cut into at most `bins`
quantile bins), trees are complete binary trees of a fixed depth stored as arrays (a node that does
not split sends everything left), so prediction is `depth` vectorised steps per tree.
"""
from __future__ import annotations

import json

import numpy as np

MARGIN_CHUNK = 256   # rows per step of Trees.margin: (trees x rows) index arrays that stay in cache


class Trees:
    """A trained ensemble: `predict(X)` gives probabilities."""

    def __init__(self, depth: int, base: float, feats: np.ndarray, thrs: np.ndarray, leaves: np.ndarray,
                 names: list[str] | None = None, meta: dict | None = None):
        self.depth, self.base = depth, base
        self.feats, self.thrs, self.leaves = feats, thrs, leaves   # (T, 2^d - 1), (T, 2^d - 1), (T, 2^d)
        self.names = names or []
        self.meta = meta or {}

    def margin(self, X: np.ndarray) -> np.ndarray:
        """Sum of the trees' leaves for each row of X. Rows go in chunks of MARGIN_CHUNK, and all trees
        walk down a chunk at once (`depth` vectorised steps over (trees, rows) node indices in flat
        arrays), then the leaves are added tree by tree: the rounding of one tree at a time, at
        about a fifth of the cost of a loop over the trees on a page of a few hundred blocks."""
        X = np.asarray(X, dtype=np.float64)
        n = len(X)
        out = np.full(n, self.base)
        if n == 0 or len(self.feats) == 0:
            return out
        n_trees, inner = self.feats.shape
        feats, thrs, leaves = self.feats.ravel(), self.thrs.ravel(), self.leaves.ravel()
        node0 = (np.arange(n_trees) * inner)[:, None]
        leaf0 = (np.arange(n_trees) * (inner + 1) - inner)[:, None]
        for lo in range(0, n, MARGIN_CHUNK):
            xs = np.ascontiguousarray(X[lo:lo + MARGIN_CHUNK])
            cells, row0 = xs.ravel(), (np.arange(len(xs)) * X.shape[1])[None, :]
            idx = np.zeros((n_trees, len(xs)), dtype=np.int64)
            for _ in range(self.depth):
                at = node0 + idx
                idx = 2 * idx + 1 + (cells.take(row0 + feats.take(at)) > thrs.take(at))
            part = out[lo:lo + MARGIN_CHUNK]
            for v in leaves.take(leaf0 + idx):
                part += v
        return out

    def predict(self, X: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.margin(X)))

    def to_json(self) -> dict:
        return {"format": "cidermill.gbdt/1", "depth": self.depth, "base": self.base, "features": self.names,
                "meta": self.meta, "feat": self.feats.tolist(),
                "thr": [[float(x) if np.isfinite(x) else 1e300 for x in row] for row in self.thrs],  # exact: a value can sit on a cut
                "leaf": [[float(f"{x:.5g}") for x in row] for row in self.leaves]}

    @classmethod
    def from_json(cls, o: dict) -> "Trees":
        if o.get("format") != "cidermill.gbdt/1":
            raise ValueError("not a cidermill.gbdt/1 model")
        return cls(int(o["depth"]), float(o["base"]), np.asarray(o["feat"], dtype=np.int64),
                   np.asarray(o["thr"], dtype=np.float64), np.asarray(o["leaf"], dtype=np.float64),
                   list(o.get("features") or []), dict(o.get("meta") or {}))

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, separators=(",", ":"))
            f.write("\n")

    @classmethod
    def load(cls, path: str) -> "Trees":
        with open(path, encoding="utf-8") as f:
            return cls.from_json(json.load(f))


def _bin_edges(x: np.ndarray, bins: int) -> np.ndarray:
    qs = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1]))
    return qs


def bag(models: list[Trees]) -> Trees:
    """One ensemble whose margin is the mean of `models`' margins (same depth): their trees side by
    side, every leaf divided by their number, the mean of their bases. The file format is unchanged."""
    if not models or len({m.depth for m in models}) != 1:
        raise ValueError("bag needs models of one depth")
    k = len(models)
    return Trees(models[0].depth, float(np.mean([m.base for m in models])),
                 np.concatenate([m.feats for m in models]), np.concatenate([m.thrs for m in models]),
                 np.concatenate([m.leaves for m in models]) / k, list(models[0].names), dict(models[0].meta))


class Pairs:
    """Within-group (content, non-content) row pairs for the pairwise term of `train`: every pair of a
    group when it has at most `cap`, else `cap` pairs drawn with probability w_i * w_j. Each group's
    pair weights sum to the group's total row weight, so a group weighs the same in both terms."""

    def __init__(self, y: np.ndarray, w: np.ndarray, groups: np.ndarray, cap: int = 256, seed: int = 0):
        rng = np.random.default_rng(seed + 7919)
        pos, neg, wts = [], [], []
        order = np.argsort(groups, kind="stable")
        bounds = np.flatnonzero(np.diff(groups[order])) + 1
        for rows in np.split(order, bounds):
            p, q = rows[y[rows] >= 0.5], rows[y[rows] < 0.5]
            if not len(p) or not len(q):
                continue
            wp, wq = w[p] / w[p].sum(), w[q] / w[q].sum()
            if len(p) * len(q) <= cap:
                i, j = np.repeat(p, len(q)), np.tile(q, len(p))
                pw = np.outer(wp, wq).ravel()
            else:
                i, j = rng.choice(p, cap, p=wp), rng.choice(q, cap, p=wq)
                pw = np.full(cap, 1.0 / cap)
            pos.append(i)
            neg.append(j)
            wts.append(pw * w[rows].sum())
        self.i = np.concatenate(pos) if pos else np.zeros(0, dtype=np.int64)
        self.j = np.concatenate(neg) if neg else np.zeros(0, dtype=np.int64)
        self.w = np.concatenate(wts) if wts else np.zeros(0)

    def grad_hess(self, margin: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and (diagonal) hessian per row of sum w_ij log(1 + exp(-(m_i - m_j)))."""
        rho = 1.0 / (1.0 + np.exp(margin[self.i] - margin[self.j]))   # sigmoid(-(m_i - m_j))
        g, h = rho * self.w, rho * (1 - rho) * self.w
        return (np.bincount(self.j, g, minlength=n) - np.bincount(self.i, g, minlength=n),
                np.bincount(self.i, h, minlength=n) + np.bincount(self.j, h, minlength=n))

    def loss(self, margin: np.ndarray) -> float:
        return float((self.w * np.logaddexp(0.0, -(margin[self.i] - margin[self.j]))).sum())


def _best_splits(gh: np.ndarray, hh: np.ndarray, n_edges: np.ndarray, usable: np.ndarray, min_hess: float,
                 l2: float) -> tuple[np.ndarray, np.ndarray]:
    """(feature, bin) of the best split of each node of a level from its gradient and hessian
    histograms (nf, width, B); bin -1 where no split gains."""
    nf, width, B = gh.shape
    G, H = gh[0].sum(axis=1), hh[0].sum(axis=1)
    gh, hh = gh.cumsum(axis=2), hh.cumsum(axis=2)
    gr, hr = G[None, :, None] - gh, H[None, :, None] - hh
    ok = (hh >= min_hess) & (hr >= min_hess) & (np.arange(B)[None, None, :] < n_edges[:, None, None])
    ok &= usable[:, None, None]
    gain = gh ** 2 / (hh + l2) + gr ** 2 / (hr + l2) - (G ** 2 / (H + l2))[None, :, None]
    gain = np.where(ok, gain, 0.0)               # the last bin has no edge to split at
    flat = gain.transpose(1, 0, 2).reshape(width, nf * B)
    arg = flat.argmax(axis=1)
    best_gain = flat[np.arange(width), arg]
    return arg // B, np.where(best_gain > 1e-12, arg % B, -1)


def _grow(g: np.ndarray, h: np.ndarray, XbT: np.ndarray, edges: list, n_edges: np.ndarray, usable: np.ndarray,
          depth: int, min_hess: float, l2: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One tree on the given rows' gradients: (split features, split thresholds, leaf G, leaf H)."""
    n_rows, nf = XbT.shape[1], XbT.shape[0]
    B = max(len(e) for e in edges) + 1
    inner = 2 ** depth - 1
    F, T = np.zeros(inner, dtype=np.int64), np.full(inner, np.inf)
    node = np.zeros(n_rows, dtype=np.int32)       # node index within the level
    idx = np.arange(n_rows)
    for level in range(depth):
        width = 2 ** level
        # histograms (nf, width, B) of gradient and hessian; a right child's are its parent's minus
        # its left sibling's, so only the left children's rows are counted
        if level == 0:
            gh = np.stack([np.bincount(XbT[j], g, minlength=B) for j in range(nf)])[:, None, :]
            hh = np.stack([np.bincount(XbT[j], h, minlength=B) for j in range(nf)])[:, None, :]
        else:
            left = idx[(node & 1) == 0]
            keyB = (node[left] >> 1) * B
            gl, hl, xl = g[left], h[left], XbT[:, left]
            half = width // 2
            lg = np.stack([np.bincount(keyB + xl[j], gl, minlength=half * B) for j in range(nf)]).reshape(nf, half, B)
            lh = np.stack([np.bincount(keyB + xl[j], hl, minlength=half * B) for j in range(nf)]).reshape(nf, half, B)
            gh = np.empty((nf, width, B))
            hh = np.empty((nf, width, B))
            gh[:, 0::2], gh[:, 1::2] = lg, prev_g - lg
            hh[:, 0::2], hh[:, 1::2] = lh, prev_h - lh
        prev_g, prev_h = gh, hh
        best_f, best_b = _best_splits(gh, hh, n_edges, usable, min_hess, l2)
        for m in range(width):
            pos = width - 1 + m
            if best_b[m] >= 0:
                F[pos] = best_f[m]
                T[pos] = edges[best_f[m]][best_b[m]]
        split = best_b[node] >= 0
        go_right = (XbT[best_f[node], idx] > best_b[node]) & split
        node = 2 * node + go_right
    return F, T, np.bincount(node, g, minlength=2 ** depth), np.bincount(node, h, minlength=2 ** depth)


def train(X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, trees: int = 150, depth: int = 4,
          lr: float = 0.1, bins: int = 32, l2: float = 1.0, min_hess: float = 1.0, subsample: float = 0.7,
          seed: int = 0, names: list[str] | None = None, log=None, colsample: float = 1.0,
          objective: str = "logloss", groups: np.ndarray | None = None, pairwise: float = 1.0,
          pair_cap: int = 256) -> Trees:
    """Fit `trees` trees of `depth` on features X (n, f), labels y in [0,1], weights w. Deterministic for a seed.
    colsample: share of the features each tree may split on (a fresh draw per tree), so no single
    feature carries the whole model. objective "logloss+pairwise": weighted log-loss plus `pairwise` x
    a RankNet term over (y >= 0.5, y < 0.5) row pairs within each of `groups` (e.g. the page of a
    block; see `Pairs`), so rows are also ranked against their group while the scores stay probabilities."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, nf = X.shape
    w = np.ones(n) if w is None else np.asarray(w, dtype=np.float64)
    if objective not in ("logloss", "logloss+pairwise"):
        raise ValueError(f"unknown objective {objective!r}")
    pairs = Pairs(y, w, np.asarray(groups), pair_cap, seed) if objective != "logloss" else None
    edges = [_bin_edges(X[:, j], bins) for j in range(nf)]
    # bins feature-major (one contiguous row per feature): the histogram loop reads one feature at a time
    XbT = np.stack([np.searchsorted(edges[j], X[:, j], side="left") for j in range(nf)]).astype(np.int32)
    n_edges = np.array([len(e) for e in edges])
    prior = float(np.clip((w * y).sum() / w.sum(), 1e-6, 1 - 1e-6))
    base = float(np.log(prior / (1 - prior)))
    margin = np.full(n, base)
    rng = np.random.default_rng(seed)
    F = np.zeros((trees, 2 ** depth - 1), dtype=np.int64)
    T = np.full((trees, 2 ** depth - 1), np.inf)
    L = np.zeros((trees, 2 ** depth))
    for t in range(trees):
        p = 1.0 / (1.0 + np.exp(-margin))
        g = (p - y) * w
        h = np.maximum(p * (1 - p), 1e-6) * w
        if pairs is not None:
            pg, ph = pairs.grad_hess(margin, n)
            g, h = g + pairwise * pg, h + pairwise * ph
        rows = np.flatnonzero(rng.random(n) < subsample) if subsample < 1 else np.arange(n)
        usable = n_edges > 0
        if colsample < 1:
            usable = usable & (rng.random(nf) < colsample)
        F[t], T[t], G, H = _grow(g[rows], h[rows], XbT[:, rows], edges, n_edges, usable, depth, min_hess, l2)
        L[t] = -lr * G / (H + l2)
        margin += Trees(depth, 0.0, F[t:t + 1], T[t:t + 1], L[t:t + 1]).margin(X)
        if log and (t + 1) % 25 == 0:
            pc = np.clip(1.0 / (1.0 + np.exp(-margin)), 1e-9, 1 - 1e-9)
            loss = -(w * (y * np.log(pc) + (1 - y) * np.log(1 - pc))).sum() / w.sum()
            extra = f", pairwise {pairs.loss(margin) / w.sum():.4f}" if pairs is not None else ""
            log(f"tree {t + 1}/{trees}: weighted log-loss {loss:.4f}{extra}")
    return Trees(depth, base, F, T, L, list(names or []))
