"""Dedup library without Beam: text normalisation, shingles, MinHash vs datasketch and exact Jaccard,
union-find, survivor rule, bucket verification."""
import random

import numpy as np
import pytest
from datasketch import MinHash

import filters.minhash_signature as ms
from filters.dedup_cluster import (UnionFind, exact_dedup_in_memory, near_dedup_in_memory, survivor,
                                   verified_bucket_edges)
from filters.dedup_text import (exact_hash, jaccard, normalize_text, shingle_hashes, shingle_set, shingle_set_jaccard,
                                split_words, word_ngrams, words_of)
from filters.minhash_signature import (MinHasher, band_buckets, collision_probability, lsh_params,
                                       resolve_bands_rows, signature_jaccard)


def _random_words(rng, n, vocab=20000):
    return [f"w{rng.randrange(vocab)}" for _ in range(n)]


def test_normalisation_ignores_case_punctuation_and_spacing():
    a = "Hello,   World!\n\nThis is   ÉTÉ."
    b = "hello world this is été"
    assert normalize_text(a) == b
    assert exact_hash(a) == exact_hash(b) != exact_hash("hello world this is ete")
    assert exact_hash("") == exact_hash(None) == exact_hash(" !?… ") == exact_hash(b"bytes") == ""
    assert normalize_text("lone \udcff surrogate") == "lone surrogate"


def test_cjk_words_are_characters_and_hangul_keeps_spaces():
    assert split_words(normalize_text("日本語のテキスト、English words 한국어 문장")) == [
        "日", "本", "語", "の", "テ", "キ", "ス", "ト", "english", "words", "한국어", "문장"]


def test_shingles_match_exact_ngram_sets_and_respect_order():
    words = "a b c d e f g".split()
    h = shingle_hashes(words, 5)
    assert len(h) == 3 and h.dtype == np.uint32
    assert len(word_ngrams(words, 5)) == 3
    assert not np.array_equal(shingle_hashes("e d c b a".split(), 5), shingle_hashes("a b c d e".split(), 5))
    assert len(shingle_hashes(["one", "two"], 5)) == 1  # short document: one shingle of all words
    assert len(shingle_hashes([], 5)) == 0


def test_signatures_equal_datasketch_update_batch(monkeypatch):
    rng = np.random.default_rng(3)
    sets = [rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32) for n in (0, 1, 7, 300, 40)]
    hasher = MinHasher(64, seed=7)
    sigs = hasher.signatures(sets)
    for h, sig in zip(sets, sigs):
        ref = MinHash(num_perm=64, seed=7, hashfunc=int)
        ref.update_batch(h.tolist())
        assert np.array_equal(ref.hashvalues, sig)
    monkeypatch.setattr(ms, "_CHUNK_CELLS", 64 * 5)  # forces many chunks and one document split in slices
    assert np.array_equal(MinHasher(64, seed=7).signatures(sets), sigs)


def test_signature_jaccard_tracks_exact_jaccard():
    rng = random.Random(0)
    hasher = MinHasher(128, 1)
    errors = []
    for i in range(40):
        a = _random_words(rng, 300)
        b = list(a)
        for _ in range(rng.randrange(0, 60)):  # random word substitutions: Jaccard spread over 0.2..1
            b[rng.randrange(len(b))] = f"x{rng.randrange(10**6)}"
        exact = jaccard(word_ngrams(a), word_ngrams(b))
        sa, sb = hasher.signatures([shingle_hashes(a), shingle_hashes(b)])
        errors.append(abs(signature_jaccard(sa, sb) - exact))
    assert np.mean(errors) < 0.035 and max(errors) < 0.13


def test_lsh_parameters():
    bands, rows = resolve_bands_rows(128, None, None, 0.8)
    assert bands * rows <= 128 and collision_probability(0.9, bands, rows) > 0.95
    assert collision_probability(0.3, bands, rows) < 0.01
    assert resolve_bands_rows(128, 16, None, 0.8) == (16, 8)
    assert lsh_params(0.8, 128) == lsh_params(0.8, 128)
    with pytest.raises(ValueError):
        resolve_bands_rows(128, 20, 8, 0.8)
    sig = MinHasher(32, 1).signature(shingle_hashes("a b c d e f".split()))
    assert len(set(band_buckets(sig, 4, 8))) == 4  # same minima in two bands still give distinct buckets


def test_union_find_root_is_smallest_member():
    uf = UnionFind()
    for a, b in [("m", "z"), ("c", "m"), ("q", "r"), ("z", "b")]:
        uf.union(a, b)
    assert uf.components() == {"b": ["b", "c", "m", "z"], "q": ["q", "r"]}
    assert uf.union("b", "c") is False
    assert survivor(["k2", "k10", "k1"]) == "k1"


def test_exact_dedup_survivor_is_smallest_key_whatever_the_order():
    docs = [("k3", "Same text."), ("k1", "same   TEXT"), ("k2", "other"), ("e1", ""), ("e2", None)]
    for order in (docs, docs[::-1]):
        marks = exact_dedup_in_memory(order)
        assert marks["k1"].keep and not marks["k3"].keep and marks["k3"].reason == "exact_duplicate"
        assert marks["k3"].cluster == "k1" and marks["k3"].cluster_size == 2
        assert marks["e1"].keep and marks["e2"].keep and marks["e1"].cluster_size == 1


def test_bucket_verification_drops_false_candidates_and_bounds_large_buckets():
    hasher = MinHasher(128, 1)
    rng = random.Random(1)
    a = _random_words(rng, 200)
    near = list(a)
    near[50] = "changed"
    far = _random_words(rng, 200)
    sa, sn, sf = hasher.signatures([shingle_hashes(x) for x in (a, near, far)])
    assert verified_bucket_edges([("b", sn), ("a", sa), ("c", sf)], 0.8) == [("a", "b")]
    many = [(f"k{i:03d}", sa) for i in range(200)]  # 200 identical members: a spanning star, 199 edges
    edges = verified_bucket_edges(many, 0.8)
    assert len(edges) == 199 and {e[0] for e in edges} == {"k000"}


def test_near_dedup_in_memory_is_order_independent():
    rng = random.Random(2)
    docs = []
    for i in range(30):
        base = _random_words(rng, 120)
        docs.append((f"d{i:02d}", " ".join(base)))
        if i % 2:
            v = list(base)
            v[60] = "x"
            docs.append((f"v{i:02d}", " ".join(v)))
    m1, e1 = near_dedup_in_memory(docs)
    m2, e2 = near_dedup_in_memory(list(reversed(docs)))
    assert m1 == m2 and e1 == e2
    assert sum(not m.keep for m in m1.values()) == 15
    assert all(m1[f"v{i:02d}"].cluster == f"d{i:02d}" for i in range(1, 30, 2))


def _near_threshold_pairs(seed=11, n=60):
    """(docs, exact Jaccard of each variant with its base): 300-word bases, variants with 4-9
    substituted words, i.e. word 5-gram Jaccard spread over ~0.74..0.88 around the 0.8 threshold."""
    rng = random.Random(seed)
    docs, truth = [], {}
    for i in range(n):
        base = _random_words(rng, 300, vocab=10**6)
        var = list(base)
        for pos in rng.sample(range(0, 300, 6), rng.randrange(4, 10)):  # spaced: no shared 5-grams lost twice
            var[pos] = f"sub{rng.randrange(10**6)}"
        docs += [(f"b{i:02d}", " ".join(base)), (f"v{i:02d}", " ".join(var))]
        truth[(f"b{i:02d}", f"v{i:02d}")] = jaccard(word_ngrams(base), word_ngrams(var))
    return docs, truth


def test_shingle_set_jaccard_is_the_exact_word_ngram_jaccard():
    docs, truth = _near_threshold_pairs(n=20)
    text = dict(docs)
    for (a, b), j in truth.items():
        sa, sb = (shingle_set(words_of(text[k])) for k in (a, b))
        assert np.all(np.diff(sa.astype(np.int64)) > 0)  # sorted, distinct
        assert shingle_set_jaccard(sa, sb) == pytest.approx(j, abs=1e-9)
    assert shingle_set_jaccard(shingle_set([]), shingle_set([])) == 1.0


def test_exact_verification_never_links_pairs_below_the_threshold():
    docs, truth = _near_threshold_pairs()
    above = {p for p, j in truth.items() if j >= 0.8}
    assert 10 < len(above) < len(truth) - 10  # the fixture straddles the threshold
    results = {}
    for verify in ("exact", "signature"):
        marks, edges = near_dedup_in_memory(docs, verify=verify)
        assert all(e in truth for e in edges)  # bases never match each other
        results[verify] = set(edges)
    exact = results["exact"]
    assert exact <= above and len(exact) >= 0.9 * len(above)  # precision 1, only LSH can miss
    assert results["signature"] != above  # the 128-minima estimate errs on pairs this close
    with pytest.raises(ValueError):
        near_dedup_in_memory(docs, verify="approximately")


def test_lsh_params_and_permutations_equal_datasketch():
    """The numpy Gauss-Legendre optimum and the permutation draws equal datasketch's (which
    integrates every (bands, rows) with scipy and is imported only here)."""
    from datasketch.lsh import _optimal_param

    from filters.minhash_signature import affine32_permutations, lsh_params

    for threshold, num_perm, fpw in ((0.8, 128, 0.05), (0.8, 128, 0.5), (0.5, 64, 0.5), (0.9, 256, 0.05),
                                     (0.7, 100, 0.3)):
        assert lsh_params(threshold, num_perm, fpw) == _optimal_param(threshold, num_perm, fpw, 1 - fpw)
    for num_perm, seed in ((128, 1), (7, 42)):
        a, b = affine32_permutations(num_perm, seed)
        ref = MinHash(num_perm=num_perm, seed=seed, scheme="affine32").permutations
        assert np.array_equal(a, ref[0]) and np.array_equal(b, ref[1]) and a.dtype == b.dtype == np.uint32


def _buckets(packs):
    """The reference reading of packed band entries: (bucket, [(key hash, fp), ...]) for every bucket
    id with two or more entries, one at a time in Python."""
    ids = np.concatenate([np.frombuffer(i, dtype=np.uint64) for i, _, _ in packs])
    fps = np.concatenate([np.frombuffer(f, dtype=np.uint32) for _, f, _ in packs]).astype(np.uint64)
    keys = np.concatenate([np.frombuffer(k, dtype=np.uint64) for _, _, k in packs])
    by_id = {}
    for b, k, f in zip(ids.tolist(), keys.tolist(), fps.tolist()):
        by_id.setdefault(b, []).append((k, f))
    return [(b, members) for b, members in by_id.items() if len(members) > 1]


def test_partition_pairs_equal_the_per_bucket_rule():
    """The numpy pairing of a whole partition proposes exactly the pairs that candidate_pairs gives
    each bucket of it: two-entry buckets, exact-duplicate buckets (one signature, many keys), one
    key under two signatures, and buckets past SMALL_BUCKET (star and chain)."""
    from filters.dedup_lsh import SMALL_BUCKET, candidate_pairs, partition_pairs
    rng = np.random.default_rng(7)
    shapes = [(600, 200, 5, 300), (300, 5, 60, 200), (50, 2, 1, 3), (40, 1, 2 * SMALL_BUCKET, 1000), (1, 1, 1, 1)]
    for n, n_ids, n_fps, n_keys in shapes:
        for _ in range(20):
            packs = []
            for _ in range(int(rng.integers(1, 4))):
                m = int(rng.integers(0, n + 1))
                packs.append((rng.integers(0, n_ids, m).astype(np.uint64).tobytes(),
                              rng.integers(0, n_fps, m).astype(np.uint32).tobytes(),
                              (rng.integers(0, n_keys, m).astype(np.uint64) * np.uint64(2 ** 40 + 7)).tobytes()))
            want = {p for bucket in _buckets(packs) for p in candidate_pairs(bucket)}
            got = partition_pairs((0, packs))
            assert got == sorted(want)
    assert partition_pairs((0, [])) == []
    one_key_two_signatures = [(np.array([9, 9], np.uint64).tobytes(), np.array([1, 2], np.uint32).tobytes(),
                               np.array([5, 5], np.uint64).tobytes())]
    assert partition_pairs((0, one_key_two_signatures)) == [(5, 5)]
    same = [(np.array([9, 9], np.uint64).tobytes(), np.array([1, 1], np.uint32).tobytes(),
             np.array([5, 5], np.uint64).tobytes())]
    assert partition_pairs((0, same)) == []
