"""The batched/vectorised scoring paths equal their straightforward references, bad input included."""
import random

import numpy as np
import pytest

from filters.chain import TextChain, load_config
from filters.dedup_cluster import near_dedup_in_memory
from filters.dedup_text import (distinct_per_document, normalize_text, normalize_text_reference, shingle_hashes,
                                shingle_hashes_batch, split_words, words_of)
from filters.repetition import NgramIds, dup_ngram_fraction_reference, top_ngram_fraction_reference
from filters.words import split_words as language_split_words

# empty, shorter than the n-gram, a 1 MB single token, mixed scripts, what invalid UTF-8 becomes
# after decoding (U+FFFD, lone surrogates from surrogateescape), control characters, combining
# marks, digits of other scripts, underscores and apostrophes
BAD = ["", " \n\t ", "one", "two words", "four words in all", "x" * 1_000_000,
       "日本語のテキストです。Mixed English text, and 中文的句子。한국어 문장도 있습니다.",
       "caf\u00e9 na\u00efve \ufffd\ufffd broken \udcc3\udca9 bytes", "ctrl\x00chars\x07here and there again",
       "e\u0301 combining marks in a de\u0301ja\u0300 vu text here", "\u0661\u0662\u0663 \u0968\u0969 digits of scripts",
       "snake_case and it's o’clock and ‘quoted’ — dashes … «guillemets» • bullets",
       "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ and ﬁ ligatures and ² superscripts",
       # separators str.split() cuts at (ASCII controls, NEL, NBSP, line separator, ideographic
       # space) and characters whose case folding changes length or script
       "a\x1cb\x1dc\x1e\x1fd\x85e\u2028f\u1680g\u3000h\xa0i\u2003j", "Stra\u00dfe STRA\u1e9eE \u03a3\u0391\u03a3 "
       "\u03c2 \u0130stanbul \u212a \u01c4 \u01c5 \u1f88 \u0149 \u13f8 \uab70 end"]


def _texts():
    rng = random.Random(7)
    vocab = ["alpha", "beta", "gamma", "déjà", "vu", "日本", "語", "naïve", "x_y", "o’clock", "—", "42"]
    made = [" ".join(rng.choice(vocab) for _ in range(rng.randrange(0, 40))) for _ in range(60)]
    # past the length where normalisation collapses spaces in numpy: runs of separators and
    # punctuation at both ends and between words
    seps = [" ", "  ", "\n\n  ", "\t", " — ", ", ", "\u3000", "...", "\x1c"]
    long = [" ".join(rng.choice(vocab) + rng.choice(seps) for _ in range(rng.randrange(100, 400))) for _ in range(8)]
    long += ["\n \t" + "  ".join(BAD[6:]) * 3 + " ,\n ", "  " + "word " * 300, "—" * 600]
    return BAD + made + long


def test_normalisation_and_word_split_equal_the_references():
    for t in _texts():
        norm = normalize_text(t)
        assert norm == normalize_text_reference(t), repr(t[:60])
        # the reference split: str.split on ASCII (as before), the language-aware splitter otherwise
        ref = norm.split() if norm.isascii() else language_split_words(norm)
        assert split_words(norm) == ref, repr(norm[:60])


@pytest.mark.parametrize("ngram", [1, 3, 5, 16])
def test_batched_shingles_and_distinct_sets_equal_per_document(ngram):
    words = [words_of(t) for t in _texts()]
    flat, counts = shingle_hashes_batch(words, ngram)
    off = np.concatenate(([0], np.cumsum(counts)))
    sets, set_counts = distinct_per_document(flat, counts)
    soff = np.concatenate(([0], np.cumsum(set_counts)))
    for i, w in enumerate(words):
        ref = shingle_hashes(w, ngram)
        assert np.array_equal(flat[off[i]:off[i + 1]], ref), i
        assert np.array_equal(sets[soff[i]:soff[i + 1]], np.unique(ref)), i
    assert len(shingle_hashes_batch([], ngram)[0]) == 0 and len(shingle_hashes_batch([[], []], ngram)[0]) == 0


def test_repetition_scores_equal_the_tuple_walk():
    rng = random.Random(3)
    texts = _texts() + [" ".join(rng.choice("ab c d".split()) for _ in range(rng.randrange(0, 80))) for _ in range(80)]
    for t in texts:
        words = language_split_words(t)
        total = sum(map(len, words))
        grams = NgramIds(words)
        for n in (2, 3, 4):
            assert grams.top_fraction(n, total) == top_ngram_fraction_reference(words, n, total), (t[:40], n)
        for n in range(5, 11):
            assert grams.dup_fraction(n, total) == dup_ngram_fraction_reference(words, n, total), (t[:40], n)


def test_dedup_marks_on_bad_input_are_clusters_of_one_or_true_duplicates():
    docs = [(f"bad{i:02d}", t) for i, t in enumerate(BAD)] + [("dup-a", BAD[6]), ("dup-b", BAD[6] + " ")]
    marks, _ = near_dedup_in_memory(docs)
    assert marks["dup-b"].cluster == "bad06" and not marks["dup-b"].keep
    for k in ("bad00", "bad01"):  # nothing to hash: passes as its own cluster
        assert (marks[k].cluster, marks[k].keep) == (k, True)


def test_chain_decisions_on_bad_input_equal_the_reference_scoring(monkeypatch):
    import filters.repetition as rep

    chain = TextChain(load_config(overrides={"stages": ["input", "c4_lines", "gopher", "repetition"]}))
    rows = [{"id": f"d{i}", "text": t} for i, t in enumerate(_texts())]
    rows.append({"id": "bytes", "text": b"caf\xc3\xa9 \xff\xfe broken utf-8 " * 20})
    fast = [chain.process(r) for r in rows]

    class _Reference(NgramIds):
        def top_fraction(self, n, total):
            return top_ngram_fraction_reference(self.words, n, total)

        def dup_fraction(self, n, total):
            return dup_ngram_fraction_reference(self.words, n, total)

    monkeypatch.setattr(rep, "NgramIds", _Reference)
    ref = [chain.process(r) for r in rows]
    assert [r["drop_reason"] for r in fast] == [r["drop_reason"] for r in ref]
    assert fast == ref  # every score too


def test_batched_word_hashes_equal_the_per_word_reference():
    """The numpy byte-polynomial word hashes (whole texts at once, chunked) equal `word_hash`."""
    from filters import dedup_text
    from filters.dedup_text import _spaced_word_hashes, word_hash

    rng = random.Random(11)
    alphabet = "ab z09_é日本\x00\ud800ÿ한"
    words = ["a", "a\x00", "\x00", "x" * 5000, "日本語", "ÿ", "\ud800x"]
    words += ["".join(rng.choice(alphabet.replace(" ", "")) for _ in range(rng.randrange(1, 12))) for _ in range(300)]
    texts = [" ".join(words[i:i + rng.randrange(0, 9)]) for i in range(0, len(words), 5)] + [""]
    for chunk_bytes in (1 << 20, 64):  # one chunk, and many small chunks (a long text alone)
        dedup_text._MAX_CHUNK_BYTES, old = chunk_bytes, dedup_text._MAX_CHUNK_BYTES
        try:
            flat, counts = _spaced_word_hashes(texts)
        finally:
            dedup_text._MAX_CHUNK_BYTES = old
        want = [word_hash(w) for t in texts if t for w in t.split(" ")]
        assert flat.tolist() == want and counts.tolist() == [len(t.split(" ")) if t else 0 for t in texts]
    assert word_hash("a") != word_hash("a\x00") and len({word_hash(w) for w in set(words)}) == len(set(words))
