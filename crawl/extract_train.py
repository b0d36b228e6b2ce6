"""Training the block classifier of crawl/extract.py from pages with known main content.

Development data: a WCXB-style folder (`html/NNNN.html`, `ground-truth/NNNN.json` with
`ground_truth.main_content`, `metadata-dev.json` with page type and domain per file id). It is split
by DOMAIN with a fixed rule (`split_of`): a domain goes to the held-out part when the first 8 bytes
of sha256("cidermill-extract/1:" + domain) fall in the lowest 30%, so pages of one site are never on
both sides and the split needs no list of ids. Only the tuning part trains the model.

A block is labelled main content when its words, in order, occur in the page's main content (or,
for longer blocks, when 80% of its distinct words do); blocks weigh by their word count, since the
metric counts words. The decision threshold is the one that maximises the mean per-page word F1
of OUT-OF-FOLD predictions on the tuning part (folds by domain, same tree settings): the shipped
model is over-confident on the pages it was fitted to, so a cut picked there is too high for new sites.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

HOLDOUT_SHARE = 0.30
SPLIT_SALT = "cidermill-extract/1:"
_WORD = re.compile(r"\w+")


def split_of(domain: str) -> str:
    """'tune' or 'held' for a domain: a fixed hash rule, the same on every machine and run."""
    h = int.from_bytes(hashlib.sha256((SPLIT_SALT + domain.lower()).encode()).digest()[:8], "big")
    return "held" if h / 2 ** 64 < HOLDOUT_SHARE else "tune"


def word_counts(text: str | None) -> Counter:
    return Counter(w.lower() for w in _WORD.findall(text or ""))


def word_prf(pred: str | None, truth: str | None) -> tuple[float, float, float]:
    """The benchmark's word-level (precision, recall, F1): lowercased \\w+ multisets; an empty
    reference scores 1 only for an empty prediction."""
    p, t = word_counts(pred), word_counts(truth)
    if not p or not t:
        return (1.0, 1.0, 1.0) if not p and not t else (0.0, 0.0, 0.0)
    common = sum((p & t).values())
    prec, rec = common / sum(p.values()), common / sum(t.values())
    return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)


@dataclass
class DevPage:
    id: str
    url: str
    page_type: str
    domain: str
    part: str           # tune | held
    path: str
    truth: str


def load_dev(data_dir: str, part: str | None = None, limit: int | None = None) -> list[DevPage]:
    """Pages of a WCXB-style folder (sorted by id), optionally only one part of the domain split."""
    meta_path = os.path.join(data_dir, "metadata-dev.json")
    if not os.path.exists(meta_path):
        raise FileNotFoundError(f"no metadata-dev.json in {data_dir} (unpack wcxb-dev.tar.xz and pass its folder)")
    with open(meta_path, encoding="utf-8") as f:
        files = json.load(f)["files"]
    out = []
    for fid in sorted(files):
        m = files[fid]
        p = split_of(m.get("domain") or fid)
        if part and p != part:
            continue
        gt_path = os.path.join(data_dir, "ground-truth", fid + ".json")
        html_path = os.path.join(data_dir, "html", fid + ".html")
        if not (os.path.exists(gt_path) and os.path.exists(html_path)):
            continue
        with open(gt_path, encoding="utf-8") as f:
            gt = json.load(f)
        out.append(DevPage(fid, gt.get("url") or "http://example.invalid/", m.get("page_type") or "unknown",
                           m.get("domain") or "", p, html_path, (gt.get("ground_truth") or {}).get("main_content") or ""))
        if limit and len(out) >= limit:
            break
    return out


def read_html(path: str) -> str:
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def block_labels(blocks, truth: str) -> np.ndarray:
    """1.0 for blocks that are main content by the ground truth, else 0.0."""
    t_norm = " " + " ".join(_WORD.findall(truth.lower())) + " "
    t_set = set(t_norm.split())
    y = np.zeros(len(blocks))
    for i, b in enumerate(blocks):
        if not b.words:
            continue
        if (" " + b.norm + " ") in t_norm:
            y[i] = 1.0
        elif len(b.words) >= 8:
            distinct = set(b.words)
            y[i] = 1.0 if len(distinct & t_set) >= 0.8 * len(distinct) else 0.0
    return y


def soft_labels(blocks, truth: str) -> np.ndarray:
    """Each block's share of its words found in the truth's word multiset (0 for a block without words)."""
    t = word_counts(truth)
    return np.array([sum((Counter(b.words) & t).values()) / len(b.words) if b.words else 0.0 for b in blocks])


LABELS = ("hard", "soft", "mix")


def labels_of(blocks, truth: str, kind: str = "hard") -> np.ndarray:
    """Training labels: hard (`block_labels`), soft (`soft_labels`), or mix (hard for blocks of at least
    8 words, soft for shorter ones)."""
    if kind == "hard":
        return block_labels(blocks, truth)
    soft = soft_labels(blocks, truth)
    if kind == "soft":
        return soft
    if kind == "mix":
        return np.where(np.array([len(b.words) for b in blocks]) >= 8, block_labels(blocks, truth), soft)
    raise ValueError(f"unknown labels {kind!r} (one of {', '.join(LABELS)})")


def page_matrix(html: str, url: str, fast: bool = True):
    """(segmented page, feature rows, peer output) for one page, through the extractor's own path."""
    from crawl.extract import page_blocks  # noqa: PLC0415
    return page_blocks(html, url, fast=fast)


def build_dataset(pages: list[DevPage], log=print, fast: bool = True, labels: str = "hard"):
    """Feature rows, labels (`labels_of`), words per block, page index per block, each page's blocks,
    and each page's (trafilatura votes, declares an article, declares a product) for block_selection
    (None: no blocks)."""
    X, y, w, page_of, blocks_of, votes_of = [], [], [], [], [], []
    t0 = time.time()
    for k, pg in enumerate(pages):
        pb = page_matrix(read_html(pg.path), pg.url, fast=fast)
        if pb is None or not pb.rows:
            blocks_of.append([])
            votes_of.append(None)
            continue
        lab = labels_of(pb.seg.blocks, pg.truth, labels)
        X.extend(pb.rows)
        y.extend(lab)
        w.extend(len(b.words) for b in pb.seg.blocks)
        page_of.extend([k] * len(pb.rows))
        blocks_of.append(pb.seg.blocks)
        votes_of.append((pb.votes(), pb.article, pb.product))
        if log and (k + 1) % 200 == 0:
            log(f"features: {k + 1}/{len(pages)} pages, {len(X)} blocks, {time.time() - t0:.0f}s")
    return (np.asarray(X, dtype=np.float64), np.asarray(y), np.asarray(w, dtype=np.float64),
            np.asarray(page_of, dtype=np.int64), blocks_of, votes_of)


def block_weights(words: np.ndarray, page_of: np.ndarray) -> np.ndarray:
    """Training weight per block: its words over its page's words, so every page weighs the same
    (the metric averages pages) and, within a page, a block weighs what its words weigh in F1."""
    words = np.maximum(words, 1.0)
    page_words = np.bincount(page_of, words)[page_of]
    w = words / page_words
    return w * len(w) / w.sum()


THRESHOLDS = tuple(float(t) for t in np.round(np.arange(0.2, 0.81, 0.05), 2))


def best_threshold(prob: np.ndarray, page_of: np.ndarray, blocks_of, pages: list[DevPage],
                   thresholds=THRESHOLDS, votes_of=None) -> tuple[float, float]:
    """The probability cut that maximises mean per-page word F1 (and that F1), each page's blocks
    selected exactly as the extractor does (crawl/extract.py `block_selection`)."""
    from crawl.extract import block_selection  # noqa: PLC0415
    truths = [word_counts(p.truth) for p in pages]
    starts = np.searchsorted(page_of, np.arange(len(pages)), side="left")
    ends = np.searchsorted(page_of, np.arange(len(pages)), side="right")
    best = (0.5, -1.0)
    for thr in thresholds:
        fs = []
        for k, blocks in enumerate(blocks_of):
            pred = Counter()
            if blocks:
                votes = (votes_of[k] if votes_of else None) or (None, False)
                for b, s in zip(blocks, block_selection(blocks, prob[starts[k]:ends[k]], thr, *votes)):
                    if s:
                        pred.update(b.words)
            t = truths[k]
            if not pred or not t:
                fs.append(1.0 if not pred and not t else 0.0)
                continue
            c = sum((pred & t).values())
            pr, rc = c / sum(pred.values()), c / sum(t.values())
            fs.append(2 * pr * rc / (pr + rc) if c else 0.0)
        f = float(np.mean(fs)) if fs else 0.0
        if f > best[1]:
            best = (thr, f)
    return best


def fold_of(domain: str, folds: int) -> int:
    """Cross-validation fold of a tuning domain (a fixed hash, apart from the held-out split's)."""
    return int.from_bytes(hashlib.sha256(("cv:" + domain).encode()).digest()[:4], "big") % folds


def fit_trees(X, y, sw, page_of, seed: int = 0, bag: int = 1, names=None, log=None, **fit):
    """One tree ensemble: `bag` fits with row-subsample seeds seed*bag .. seed*bag+bag-1, averaged into one
    (gbdt.bag; a single fit with `seed` when bag is 1). A pairwise objective pairs blocks of one page."""
    from crawl import gbdt  # noqa: PLC0415
    if fit.get("objective", "logloss") != "logloss":
        fit["groups"] = page_of
    if bag <= 1:
        return gbdt.train(X, y, sw, seed=seed, names=names, log=log, **fit)
    return gbdt.bag([gbdt.train(X, y, sw, seed=seed * bag + k, names=names, log=log if k == 0 else None, **fit)
                     for k in range(bag)])


def out_of_fold(X, y, sw, page_of, pages: list[DevPage], folds: int, log=print, what: str = "stage 1",
                **fit) -> np.ndarray | None:
    """Block probabilities from models that never saw the block's DOMAIN (folds by domain), or None
    when the tuning part has too few domains for `folds`. The second stage learns from these (the
    first stage's errors on sites it has not seen) and the cut is chosen on them: a model is
    over-confident on the pages it was fitted to."""
    block_fold = np.array([fold_of(p.domain or p.id, folds) for p in pages])[page_of]
    prob = np.zeros(len(X))
    for f in range(folds):
        tr = block_fold != f
        if tr.all() or not tr.any() or y[tr].min() == y[tr].max():
            return None
        prob[~tr] = fit_trees(X[tr], y[tr], sw[tr], page_of[tr], **fit).predict(X[~tr])
        log(f"train-extractor: {what} fold {f + 1}/{folds} done")
    return prob


def context_matrix(prob: np.ndarray, X: np.ndarray, words: np.ndarray, page_of: np.ndarray, keys_of) -> np.ndarray:
    """Second-stage rows (crawl/extract_context.py) for every page, from first-stage scores `prob`;
    keys_of: each page's context_keys (None for a page without blocks)."""
    from crawl.extract_context import context_features  # noqa: PLC0415
    out = []
    starts = np.searchsorted(page_of, np.arange(len(keys_of)), side="left")
    ends = np.searchsorted(page_of, np.arange(len(keys_of)), side="right")
    for k, keys in enumerate(keys_of):
        if keys is not None:
            s, e = starts[k], ends[k]
            out.append(context_features(prob[s:e], words[s:e], keys[0], keys[1], X[s:e]))
    return np.vstack(out)


def fit_block_model(X, y, words, page_of, pages: list[DevPage], keys_of, pick_threshold, trees: int = 60,
                    depth: int = 5, seed: int = 0, log=print, folds: int = 5, stage2: bool = False,
                    lr: float = 0.2, subsample: float = 0.5, stage2_trees: int = 60, stage2_depth: int = 4,
                    bag: int = 1, objective: str = "logloss", pairwise: float = 1.0):
    """(stage-1 trees, stage-2 trees or None, meta) from block rows. Stage one is fitted on all
    tuning pages. With `stage2` (and enough domains for `folds`), stage one's out-of-fold scores feed
    the second stage, and the cut is chosen on the second stage's own out-of-fold scores (two nested
    looks at unseen sites, both by domain). Stage one is a `bag` of fits (fit_trees) with the given
    objective. pick_threshold(prob, thresholds=None) -> (cut, mean F1)."""
    from crawl import gbdt  # noqa: PLC0415
    from crawl.extract_blocks import FEATURES  # noqa: PLC0415
    from crawl.extract_context import CONTEXT_FEATURES  # noqa: PLC0415
    X = np.asarray(X, dtype=np.float32).astype(np.float64)   # what the extractor feeds the model
    sw = block_weights(words, page_of)
    fit1 = dict(trees=trees, depth=depth, lr=lr, subsample=subsample, seed=seed, bag=bag,
                **({"objective": objective, "pairwise": pairwise} if objective != "logloss" else {}))
    log(f"train-extractor: {len(X)} blocks, {int(y.sum())} labelled content; stage 1: {trees} trees of depth {depth}")
    s1 = fit_trees(X, y, sw, page_of, names=list(FEATURES), log=log, **fit1)
    oof1 = out_of_fold(X, y, sw, page_of, pages, folds, log=log, **fit1) if folds >= 2 else None
    s2, how = None, "in-sample"
    oof1_f = pick_threshold(oof1)[1] if oof1 is not None else None
    if oof1_f is not None:
        log(f"train-extractor: stage 1 out-of-fold page F1 {oof1_f:.4f}")
    if oof1 is None:
        final_oof, final_in = None, s1.predict(X)
        how = "in-sample (too few domains for folds)" if folds >= 2 else "in-sample"
    elif not stage2:
        final_oof, final_in = oof1, s1.predict(X)
        how = f"{folds}-fold out-of-fold by domain"
    else:
        X2 = context_matrix(oof1, X, words, page_of, keys_of)
        fit2 = dict(trees=stage2_trees, depth=stage2_depth, lr=lr, subsample=subsample, seed=seed)
        log(f"train-extractor: stage 2 on out-of-fold stage-1 scores: {stage2_trees} trees of depth {stage2_depth}")
        s2 = gbdt.train(X2, y, sw, names=list(CONTEXT_FEATURES), **fit2)
        final_oof = out_of_fold(X2, y, sw, page_of, pages, folds, log=log, what="stage 2", **fit2)
        final_in = s2.predict(context_matrix(s1.predict(X), X, words, page_of, keys_of))
        how = f"{folds}-fold out-of-fold by domain (both stages)"
    thr, oof_f = pick_threshold(final_in if final_oof is None else final_oof)
    f = pick_threshold(final_in, thresholds=(thr,))[1]
    meta = {"threshold": thr, "threshold_from": how, "oof_f1": round(oof_f, 4) if final_oof is not None else None,
            "stage1_oof_f1": round(oof1_f, 4) if oof1_f is not None else None, "tune_pages": len(pages),
            "tune_blocks": int(len(X)), "tune_f1": round(f, 4), "stages": 2 if s2 is not None else 1, "seed": seed,
            "trees": [trees, stage2_trees if s2 is not None else 0], "lr": lr, "subsample": subsample,
            "split": f"domain sha256 salt {SPLIT_SALT!r}, held-out share {HOLDOUT_SHARE}"}
    meta.update({"bag": bag} if bag > 1 else {})   # recorded only when not the default, as below
    meta.update({"objective": objective, "pairwise": pairwise} if objective != "logloss" else {})
    return s1, s2, meta


def train_extractor(data_dir: str, out: str, trees: int = 60, depth: int = 5, seed: int = 0, limit: int | None = None,
                    log=print, folds: int = 5, stage2: bool = False, vote_fast: bool = False, labels: str = "hard",
                    **fit) -> dict:
    """Train on the tuning part of `data_dir`, write the model JSON to `out`, return its meta."""
    from crawl.extract_context import context_keys  # noqa: PLC0415
    from crawl.extract_stages import BlockModel  # noqa: PLC0415

    pages = load_dev(data_dir, part="tune", limit=limit)
    if not pages:
        raise ValueError(f"no tuning pages found in {data_dir}")
    log(f"train-extractor: {len(pages)} tuning pages")
    X, y, words, page_of, blocks_of, votes_of = build_dataset(pages, log=log, fast=vote_fast, labels=labels)
    if len(X) == 0 or (y >= 0.5).all() or (y < 0.5).all():
        raise ValueError("the tuning pages gave no usable blocks (need both content and boilerplate)")
    keys_of = [context_keys(b) if b else None for b in blocks_of]

    def pick(prob, thresholds=None):
        return best_threshold(prob, page_of, blocks_of, pages, votes_of=votes_of,
                              **({"thresholds": thresholds} if thresholds else {}))

    s1, s2, meta = fit_block_model(X, y, words, page_of, pages, keys_of, pick, trees=trees, depth=depth, seed=seed,
                                   log=log, folds=folds, stage2=stage2, **fit)
    meta["vote_fast"] = vote_fast
    if labels != "hard":
        meta["labels"] = labels
    model = BlockModel(s1, s2, meta)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    model.save(out)
    log(f"train-extractor: threshold {meta['threshold']} ({meta['threshold_from']}), out-of-fold page F1 "
        f"{meta['oof_f1']}, tuning-part page F1 {meta['tune_f1']:.4f}; wrote {out} "
        f"({os.path.getsize(out) / 1024:.0f} KiB)")
    return meta
