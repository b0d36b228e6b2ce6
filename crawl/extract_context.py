"""Second look at a page: each block's first-stage score next to the scores around it.

The first-stage classifier (crawl/extract_blocks.py features) judges blocks one at a time, so on a
forum or a product page it keeps a paragraph of the footer and drops the third post. A block's
neighbours say what it is: the blocks before and after it, the blocks under the same parent and
grandparent, the blocks with the same tag/class path (all the posts of a thread share one), and the
page's own score distribution (a page where nothing scores high is judged against its best block).
The second-stage model reads these (CONTEXT_FEATURES) and gives the final score; it is trained on
out-of-fold first-stage scores, so it learns how the first stage errs on sites it has not seen.
"""
from __future__ import annotations

import numpy as np

from crawl.extract_layout import tag_path

CONTEXT_FEATURES: tuple[str, ...] = (
    "p", "p_prev", "p_next", "p_prev2", "p_next2",
    "p_parent", "log_words_parent", "p_grand", "log_words_grand", "p_great", "log_words_great",
    "p_same_path", "log_words_same_path",
    "p_page_max", "p_page_mean", "p_minus_page_mean", "words_scored_higher", "words_above_half",
    "log_words", "log_chars", "link_density", "avg_word_len", "vote_main",
)


def context_keys(blocks) -> tuple[np.ndarray, np.ndarray]:
    """(ancestors (n, 3): small ints naming each block's parent, grandparent, great-grandparent, -1
    above the root; paths (n,): small ints naming each block's tag/class path). Elements are keyed
    by themselves, never id(): lxml proxies are short-lived and their ids are reused."""
    ids: dict = {}
    anc = np.full((len(blocks), 3), -1, dtype=np.int64)
    for i, b in enumerate(blocks):
        a = b.el
        for k in range(3):
            a = a.getparent() if a is not None else None
            if a is None:
                break
            anc[i, k] = ids.setdefault(a, len(ids))
    paths: dict[str, int] = {}
    path = np.array([paths.setdefault(tag_path(b.el), len(paths)) for b in blocks], dtype=np.int64)
    return anc, path


def _shift(x: np.ndarray, k: int) -> np.ndarray:
    out = np.full(len(x), -1.0)
    if k > 0:
        out[k:] = x[:-k]
    else:
        out[:k] = x[-k:]
    return out


def context_features(prob: np.ndarray, words: np.ndarray, anc: np.ndarray, path: np.ndarray,
                     base: np.ndarray) -> np.ndarray:
    """CONTEXT_FEATURES rows for one page. prob: first-stage scores; words: words per block;
    base: the page's first-stage feature rows, of which the first four columns (size, length, link
    density, word length) and vote_main are passed through."""
    from crawl.extract_blocks import FEATURES  # noqa: PLC0415
    n = len(prob)
    w = np.maximum(np.asarray(words, dtype=np.float64), 1.0)
    cols = [prob, _shift(prob, 1), _shift(prob, -1), _shift(prob, 2), _shift(prob, -2)]
    for key in (anc[:, 0], anc[:, 1], anc[:, 2], path):
        k = np.where(key < 0, key.max(initial=0) + 1, key)
        s, c = np.bincount(k, w * prob), np.bincount(k, w)
        cols += [(s / np.maximum(c, 1e-12))[k], np.log1p(c[k])]
    tot = w.sum()
    mean = float((w * prob).sum() / tot)
    order = np.argsort(-prob, kind="stable")
    higher = np.empty(n)
    higher[order] = (np.cumsum(w[order]) - w[order]) / tot
    cols += [np.full(n, prob.max()), np.full(n, mean), prob - mean, higher,
             np.full(n, float((w * (prob > 0.5)).sum() / tot))]
    vi = FEATURES.index("vote_main")
    return np.column_stack(cols + [base[:, :4], base[:, vi]])
