"""Alt-text junk rules, image dedup (deterministic survivor), CLIP selection, metrics."""
from __future__ import annotations

import math
import random

import numpy as np
import pytest

from filters.alt_text import alt_text_reason, normalize
from filters.clip_select import ClipSelectConfig, clip_reason, cutoff, resolve_threshold
from filters.image_dedup import find_duplicates, hamming
from training.clip.metrics import best_threshold, derangement, recall_at_k, retrieval_metrics, roc_auc


@pytest.mark.parametrize("text,reason", [
    ("", "alt_empty"), (None, "alt_empty"), ("   ", "alt_empty"),
    ("IMG_2041.JPG", "alt_filename"), ("DSC_0042", "alt_filename"), ("hero-banner_v2.webp", "alt_filename"),
    ("https://cdn.example.com/a.png", "alt_url"), ("see www.example.org", "alt_url"),
    ("image", "alt_generic"), ("Logo", "alt_generic"), ("photo 3", "alt_filename"), ("thumbnail", "alt_generic"),
    ("cat", "alt_too_short"), ("x" * 600, "alt_too_long"), ("12345 678", "alt_no_letters"),
    ("cheap shoes cheap shoes cheap shoes cheap shoes", "alt_repetitive"),
    ("A red bicycle leaning against a brick wall", None), ("東京タワーの夜景", None),
    ("Apfelbäume im Herbst am Bodensee", None),
])
def test_alt_text_rules(text, reason):
    assert alt_text_reason(text) == reason


def test_normalize():
    assert normalize("  a\u00a0red\n\tcar ") == "a red car"


def test_dedup_exact_and_near_with_order_free_survivor():
    base = 0xF0F0F0F0F0F0F0F0
    items = [
        ("b", "sha1", f"{base:016x}", "alt", ("b",)),
        ("a", "sha1", f"{base:016x}", "alt", ("a",)),                 # exact copy of b
        ("c", "sha2", f"{base ^ 0b101:016x}", "alt", ("c",)),         # 2 bits from a: near
        ("d", "sha3", f"{base ^ 0xFFFF:016x}", "alt", ("d",)),        # 16 bits: distinct
        ("e", "sha1", f"{base:016x}", "caption", ("e",)),             # other group: kept
    ]
    expect = {"b": ("duplicate_image_exact", "a"), "c": ("duplicate_image_near", "a")}
    for seed in range(5):
        random.Random(seed).shuffle(items)
        assert find_duplicates(items, max_distance=4) == expect
    assert find_duplicates(items, max_distance=-1) == {"b": ("duplicate_image_exact", "a")}


def test_dedup_banding_finds_every_pair_within_distance():
    rng = np.random.default_rng(0)
    hashes = [int(x) for x in rng.integers(0, 2**63, size=60)]
    items = []
    for i, h in enumerate(hashes):
        items.append((f"{i:03d}a", f"s{i}a", f"{h:016x}", "g", (f"{i:03d}a",)))
        flips = rng.choice(64, size=4, replace=False)
        h2 = h
        for f in flips:
            h2 ^= 1 << int(f)
        items.append((f"{i:03d}b", f"s{i}b", f"{h2:016x}", "g", (f"{i:03d}b",)))
        assert hamming(f"{h:016x}", f"{h2:016x}") == 4
    dups = find_duplicates(items, max_distance=4)
    for i in range(60):
        assert dups.get(f"{i:03d}b") == ("duplicate_image_near", f"{i:03d}a")


def test_clip_selection_threshold_and_top_percent():
    scores = [0.1, 0.5, 0.3, float("nan"), 0.3, 0.9]
    assert cutoff(scores, ClipSelectConfig(0.25)) == 0.25
    cut = cutoff(scores, ClipSelectConfig(None, top_percent=40))   # 5 finite -> best 2
    assert cut == 0.5
    assert [clip_reason(s, cut) for s in scores] == ["clip_low_score", None, "clip_low_score", "clip_low_score",
                                                     "clip_low_score", None]
    assert resolve_threshold(ClipSelectConfig(), 0.61).threshold == 0.61
    assert resolve_threshold(ClipSelectConfig(), None).threshold == 0.28
    assert math.isinf(cutoff(scores, ClipSelectConfig(None)))


def test_metrics():
    assert roc_auc(np.array([0.9, 0.8]), np.array([0.1, 0.2])) == 1.0
    assert roc_auc(np.array([0.5]), np.array([0.5])) == 0.5
    sim = np.eye(4)
    assert recall_at_k(sim, 1) == 1.0
    assert recall_at_k(np.ones((4, 4)), 1) == 0.0            # ties count against the query
    p = derangement(50, 3)
    assert sorted(p.tolist()) == list(range(50)) and not np.any(p == np.arange(50))
    e = np.eye(8, dtype=np.float32)
    m = retrieval_metrics(e, e)
    assert m["i2t_recall@1"] == 1.0 and m["roc_auc_matched_vs_shuffled"] == 1.0
    assert 0.0 < m["suggested_threshold"] <= 1.0
    assert best_threshold(np.array([0.9, 0.8]), np.array([0.1, 0.3])) == pytest.approx(0.55)
