"""The extractor's fast paths give what their plain definitions give: the peer's block votes
(one search from where the last block was found), the block model's trees walked all at once, and
class/id words matched on the lowered string. The votes on a long page stay linear (a child
process with a time cap, so a regression fails instead of stalling the suite)."""
import random

import numpy as np
import pytest

from crawl.extract_blocks import Block, _ident_words, _peer_votes
from crawl.gbdt import MARGIN_CHUNK, Trees
from tests.capped_run import run_capped


def _block(words: list[str]) -> Block:
    return Block(" ".join(words), None, None, 0, words, " ".join(words))


@pytest.mark.parametrize("seed", range(30))
def test_peer_votes_are_substring_tests(seed):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(rng.choice([3, 8, 40]))]
    peer = [rng.choice(vocab) for _ in range(rng.randrange(0, 80))]
    blocks = []
    for _ in range(rng.randrange(1, 40)):
        if peer and rng.random() < 0.6:   # a run of the peer's words (in or out of page order) ...
            a = rng.randrange(len(peer))
            words = peer[a:a + rng.randrange(1, 6)]
        else:                             # ... or words of the vocabulary in any order
            words = [rng.choice(vocab) for _ in range(rng.randrange(1, 5))]
        blocks.append(_block(words))
    peer_n = " " + " ".join(peer) + " "
    want = [1.0 if (" " + b.norm + " ") in peer_n else 0.0 for b in blocks]
    assert _peer_votes(blocks, peer_n, set(peer_n.split())) == want


def _reference_margin(trees: Trees, X: np.ndarray) -> np.ndarray:
    """One tree at a time, as the ensemble was first written."""
    out = np.full(len(X), trees.base)
    rows = np.arange(len(X))
    inner = 2 ** trees.depth - 1
    for f, t, v in zip(trees.feats, trees.thrs, trees.leaves):
        idx = np.zeros(len(X), dtype=np.int64)
        for _ in range(trees.depth):
            idx = 2 * idx + 1 + (X[rows, f[idx]] > t[idx])
        out += v[idx - inner]
    return out


@pytest.mark.parametrize("n", [0, 1, 7, MARGIN_CHUNK, MARGIN_CHUNK + 1, 3 * MARGIN_CHUNK + 5])
def test_trees_margin_equals_one_tree_at_a_time(n):
    rng = np.random.default_rng(n)
    depth, n_trees, n_feats = 4, 23, 9
    trees = Trees(depth, 0.3, rng.integers(0, n_feats, (n_trees, 2 ** depth - 1)),
                  rng.normal(size=(n_trees, 2 ** depth - 1)), rng.normal(size=(n_trees, 2 ** depth)))
    X = rng.normal(size=(n, n_feats))
    X[::3, 2] = trees.thrs[0, 0]   # values on a cut go left, as in training
    assert np.array_equal(trees.margin(X), _reference_margin(trees, X))   # bit for bit


def test_class_words_ignore_case():
    assert _ident_words("site-NavBar MainContent") == (True, True, False)
    assert _ident_words("COMMENT-list") == (False, True, True)
    assert _ident_words("Ads top") == (True, False, False)
    assert _ident_words("roads") == (False, False, False)   # "ads" only as a whole word


def test_peer_votes_stay_linear_on_a_long_page():
    """Each block's vote searched the peer's whole text: 20,000 kept paragraphs of 40 words (5 MB,
    segmentation's block cap) cost about 50 GB of comparisons (36 s here), and every block the
    peer left out whose words it still holds (a post's byline of common words) a whole scan or two.
    Now the words after the last block found, then the places of the block's rarest word."""
    out = run_capped("import random\n"
                     "from crawl.extract_blocks import Block, _peer_votes\n"
                     "rng = random.Random(0)\n"
                     "vocab = ['w%d' % i for i in range(5000)]\n"
                     "paras = [[rng.choice(vocab) for _ in range(40)] for _ in range(15000)]\n"
                     "peer = ' ' + ' '.join(' '.join(w) for w in paras) + ' '\n"
                     "words = [x for w in paras for x in ([rng.choice(vocab) for _ in range(4)], w)]\n"
                     "blocks = [Block(' '.join(w), None, None, 0, w, ' '.join(w)) for w in words]\n"
                     "print(sum(_peer_votes(blocks, peer, set(peer.split()))))\n", timeout=20)
    assert float(out) == 15000.0   # the bylines are nowhere in the text
