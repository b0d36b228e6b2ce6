"""Text preparation for dedup: normalisation, exact-content hash, CJK-aware words, word n-gram shingles.

Exact and near dedup see the same normalised text (NFKC, case-folded, punctuation and symbols
removed, whitespace collapsed), so two documents that are exact duplicates after normalisation
always have identical shingle sets and therefore identical MinHash signatures: near dedup never
splits an exact-duplicate cluster.

Words come from the project's language-aware splitter (filters/words.py): Han and Kana characters
are one word each, so a 5-gram shingle there is a 5-character window, the usual choice for CJK.
"""
from __future__ import annotations

import re
import unicodedata

import numpy as np
import xxhash

from filters.words import CJK_RE as _CJK_RE
from filters.words import split_words as _lang_split_words

class _PunctToSpace(dict):
    """str.translate table filled lazily: punctuation (P*) and symbols (S*) -> space, others kept."""

    def __missing__(self, cp: int):
        value = " " if unicodedata.category(chr(cp))[0] in "PS" else cp
        self[cp] = value
        return value


_PUNCT_TO_SPACE = _PunctToSpace()
# The ASCII part of the same mapping as a bytes table (bytes >= 128, i.e. UTF-8 multibyte
# sequences, map to themselves): bytes.translate is one C table lookup per byte.
_ASCII_TABLE = bytes(32 if c < 128 and unicodedata.category(chr(c))[0] in "PS" else c for c in range(256))
_NON_ASCII_RUN_RE = re.compile(r"[^\x00-\x7f]+")


def _map_non_ascii(m: re.Match) -> str:
    return m.group().translate(_PUNCT_TO_SPACE)


def _is_punct_or_symbol(c: str) -> bool:
    return _PUNCT_TO_SPACE[ord(c)] == " "


def normalize_text(text: str | None) -> str:
    """NFKC, case-fold, punctuation/symbols -> space, whitespace collapsed. None or a non-string
    (a malformed row) -> "", so such rows pass dedup as clusters of one instead of failing.

    Non-ASCII punctuation is found among the text's distinct characters (a C-level set) and
    replaced with one str.replace each: a document has a handful of distinct non-ASCII marks
    but hundreds of runs of them, which a per-run callback would visit one by one."""
    if not text or not isinstance(text, str):
        return ""
    if text.isascii():  # NFKC is the identity on ASCII
        t = text.lower().encode("ascii").translate(_ASCII_TABLE).decode("ascii")
    else:
        t = unicodedata.normalize("NFKC", text).casefold()
        t = t.encode("utf-8", "replace").translate(_ASCII_TABLE).decode("utf-8", "replace")
        if not t.isascii():
            for c in set(t):
                if c > "\x7f" and _is_punct_or_symbol(c):
                    t = t.replace(c, " ")
    return " ".join(t.split())


def normalize_text_reference(text: str | None) -> str:
    """The straightforward normalisation (a regex callback per non-ASCII run): what the fast
    `normalize_text` must equal (tests compare them)."""
    if not text or not isinstance(text, str):
        return ""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = t.encode("utf-8", "replace").translate(_ASCII_TABLE).decode("utf-8", "replace")
    t = _NON_ASCII_RUN_RE.sub(_map_non_ascii, t)
    return " ".join(t.split())


def hash_normalized(norm: str) -> str:
    """The exact-dedup hash of already-normalised text ("" for empty text)."""
    return xxhash.xxh3_128_hexdigest(norm.encode("utf-8")) if norm else ""


def exact_hash(text: str | None) -> str:
    """128-bit hex hash of the normalised text; "" for text that normalises to nothing."""
    return hash_normalized(normalize_text(text))


def split_words(normalized: str) -> list[str]:
    """Words of already-normalised text: the project's language-aware splitter (filters/words.py,
    one word per CJK character), with a plain split for ASCII text (same result, much faster)."""
    words = normalized.split()
    if normalized.isascii():
        return words
    # no CJK character and nothing but word characters between the spaces: the language-aware
    # splitter would cut exactly at the spaces (re's \w is str.isalnum() or "_"), so skip it
    if not _CJK_RE.search(normalized) and "".join(words).replace("_", "a").isalnum():
        return words
    return _lang_split_words(normalized)


def words_of(text: str | None) -> list[str]:
    return split_words(normalize_text(text))


# Odd 64-bit multipliers that mix the i-th word hash of an n-gram (positions are ordered).
_POSITION_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
     0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9,
     0x2545F4914F6CDD1D, 0x9FB21C651E98DF25, 0x5851F42D4C957F2D, 0x14057B7EF767814F,
     0xDA942042E4DD58B5, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3],
    dtype=np.uint64)


_WORD_HASHES: dict[str, int] = {}  # word -> xxh64; a pure cache, cleared when it grows too big
_WORD_CACHE_MAX = 1_000_000


def _hash_word(w: str) -> int:
    h = xxhash.xxh64_intdigest(w.encode("utf-8"))
    _WORD_HASHES[w] = h
    return h


def shingle_hashes(words: list[str], ngram: int = 5) -> np.ndarray:
    """uint32 hashes of the word n-grams of `words` (order matters inside an n-gram).

    Fewer than `ngram` words (but at least one) give a single shingle of all words; no words give an
    empty array. Word hashes are xxh64; an n-gram's hash is a position-weighted sum of them, folded
    to 32 bits (what the MinHash permutations take)."""
    if ngram < 1 or ngram > len(_POSITION_MULTIPLIERS):
        raise ValueError(f"ngram must be in 1..{len(_POSITION_MULTIPLIERS)}, got {ngram}")
    n = len(words)
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    cache = _WORD_HASHES
    if len(cache) > _WORD_CACHE_MAX:
        cache.clear()
    vals = list(map(cache.get, words))
    if None in vals:
        vals = [_hash_word(w) if v is None else v for w, v in zip(words, vals)]
    wh = np.array(vals, dtype=np.uint64)
    k = min(ngram, n)
    m = n - k + 1
    acc = np.zeros(m, dtype=np.uint64)
    for i in range(k):
        acc += wh[i:i + m] * _POSITION_MULTIPLIERS[i]
    acc ^= acc >> np.uint64(29)
    acc *= np.uint64(0xBF58476D1CE4E5B9)
    acc ^= acc >> np.uint64(32)
    return (acc & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def shingle_hashes_batch(word_lists: list[list[str]], ngram: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """`shingle_hashes` of many documents at once: (flat uint32 hashes, per-document counts).

    All words of the batch are hashed in one pass over one array (distinct words through the
    shared cache), and every document's n-grams are formed by the same position-weighted sum over
    the flat word-hash array; sums that would cross into the next document are cut out. Each
    document's slice equals `shingle_hashes(words, ngram)` bit for bit (a test checks it)."""
    if ngram < 1 or ngram > len(_POSITION_MULTIPLIERS):
        raise ValueError(f"ngram must be in 1..{len(_POSITION_MULTIPLIERS)}, got {ngram}")
    n_words = np.fromiter((len(w) for w in word_lists), dtype=np.int64, count=len(word_lists))
    counts = np.where(n_words >= ngram, n_words - ngram + 1, np.minimum(n_words, 1))
    total = int(n_words.sum())
    if total == 0:
        return np.zeros(0, dtype=np.uint32), counts
    cache = _WORD_HASHES
    if len(cache) > _WORD_CACHE_MAX:
        cache.clear()
    flat_words = [w for ws in word_lists for w in ws]
    vals = list(map(cache.get, flat_words))
    if None in vals:
        vals = [_hash_word(w) if v is None else v for w, v in zip(flat_words, vals)]
    wh = np.array(vals, dtype=np.uint64)
    starts = np.concatenate(([0], np.cumsum(n_words)[:-1]))
    parts = []
    long_docs = n_words >= ngram
    if long_docs.any():
        # windows starting at every word position; keep those whose n words lie in one document
        m = total - ngram + 1
        acc = np.zeros(max(m, 0), dtype=np.uint64)
        for i in range(ngram):
            acc += wh[i:i + m] * _POSITION_MULTIPLIERS[i]
        valid = np.zeros(total + 1, dtype=np.int64)
        np.add.at(valid, starts[long_docs], 1)
        np.add.at(valid, (starts + n_words - ngram + 1)[long_docs], -1)
        keep = np.cumsum(valid[:m]) > 0
        parts.append((acc[keep], np.flatnonzero(long_docs)))
    short = np.flatnonzero((n_words > 0) & ~long_docs)
    acc_short = np.zeros(len(short), dtype=np.uint64)
    for j, d in enumerate(short):  # fewer words than the n-gram: one shingle of all words
        k = int(n_words[d])
        acc_short[j] = int((wh[starts[d]:starts[d] + k] * _POSITION_MULTIPLIERS[:k]).sum(dtype=np.uint64))
    # reassemble in document order: long documents' shingles are already in order in acc[keep]
    out = np.empty(int(counts.sum()), dtype=np.uint64)
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
    if parts:
        vals_long, docs_long = parts[0]
        idx = np.repeat(offsets[docs_long] - np.concatenate(([0], np.cumsum(counts[docs_long])[:-1])),
                        counts[docs_long]) + np.arange(len(vals_long))
        out[idx] = vals_long
    out[offsets[short]] = acc_short
    out ^= out >> np.uint64(29)
    out *= np.uint64(0xBF58476D1CE4E5B9)
    out ^= out >> np.uint64(32)
    return (out & np.uint64(0xFFFFFFFF)).astype(np.uint32), counts


def distinct_per_document(flat: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct values of each document's slice of `flat` (as `np.unique` per slice), for
    all documents with one sort: (flat distinct values, per-document counts)."""
    doc = np.repeat(np.arange(len(counts), dtype=np.uint64), counts)
    keys = np.sort((doc << np.uint64(32)) | flat.astype(np.uint64))  # sort, not np.unique's hash table
    keys = keys[np.concatenate(([True], keys[1:] != keys[:-1]))] if len(keys) else keys
    return (keys & np.uint64(0xFFFFFFFF)).astype(np.uint32), np.bincount((keys >> np.uint64(32)).astype(np.int64),
                                                                          minlength=len(counts))


def shingle_set(words: list[str], ngram: int = 5) -> np.ndarray:
    """Sorted distinct shingle hashes of `words` (uint32): the set exact verification compares."""
    return np.unique(shingle_hashes(words, ngram))


def shingle_set_jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two `shingle_set` arrays (sorted, distinct); two empty sets -> 1.0."""
    if not len(a) and not len(b):
        return 1.0
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def word_ngrams(words: list[str], ngram: int = 5) -> set[tuple[str, ...]]:
    """The exact shingle set (as word tuples) matching `shingle_hashes`: ground truth for Jaccard."""
    if not words:
        return set()
    k = min(ngram, len(words))
    return {tuple(words[i:i + k]) for i in range(len(words) - k + 1)}


def jaccard(a: set, b: set) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
