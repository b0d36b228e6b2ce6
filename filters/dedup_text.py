"""Text preparation for dedup: normalisation, exact-content hash, CJK-aware words, word n-gram shingles.

Exact and near dedup see the same normalised text (NFKC, case-folded, punctuation and symbols
removed, whitespace collapsed), so two documents that are exact duplicates after normalisation
always have identical shingle sets and therefore identical MinHash signatures: near dedup never
splits an exact-duplicate cluster.

Words come from the project's language-aware splitter (filters/words.py): Han and Kana characters
are one word each, so a 5-gram shingle there is a 5-character window, the usual choice for CJK.
"""
from __future__ import annotations

import functools
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
_ASCII_BYTES = bytes(range(128))


def _map_non_ascii(m: re.Match) -> str:
    return m.group().translate(_PUNCT_TO_SPACE)


def _is_punct_or_symbol(c: str) -> bool:
    return _PUNCT_TO_SPACE[ord(c)] == " "


# _ASCII_TABLE plus the ASCII characters str.split() cuts at, as spaces: the fast path collapses
# runs of spaces in bytes instead of splitting into word objects and joining them again
_SPLIT_TABLE = bytes(32 if c < 128 and chr(c).isspace() else c for c in _ASCII_TABLE)


@functools.lru_cache(maxsize=1 << 16)
def _fold_char(c: str) -> str:
    """What case folding, the punctuation/symbol mapping and whitespace splitting make of one
    non-ASCII character (whitespace -> one space, as str.split() would cut there)."""
    if c.isspace():
        return " "
    f = c.casefold().encode("utf-8", "replace").translate(_SPLIT_TABLE).decode("utf-8")
    return "".join(" " if not ch.isascii() and (_is_punct_or_symbol(ch) or ch.isspace()) else ch for ch in f)


_NUMPY_COLLAPSE_BYTES = 512  # shorter texts: split and join (numpy's per-call cost would dominate)


def _collapse_spaces(b: bytes) -> str:
    """Runs of spaces -> one, none at the ends (as " ".join(t.split()) once every separator is a
    space). Long texts keep each byte that is not a space or follows one that is not, in one
    numpy pass: split and join would make a bytes object per word (a third of the cost of
    normalising a 2,000-word document)."""
    if len(b) < _NUMPY_COLLAPSE_BYTES:
        return b" ".join(b.split()).decode("utf-8")
    a = np.frombuffer(b, dtype=np.uint8)
    space = a == 32
    keep = ~space
    keep[1:] |= keep[:-1].copy()
    return a[keep].tobytes().strip(b" ").decode("utf-8")


def normalize_text(text: str | None) -> str:
    """NFKC, case-fold, punctuation/symbols -> space, whitespace collapsed. None or a non-string
    (a malformed row) -> "", so such rows pass dedup as clusters of one instead of failing.

    Every step after NFKC maps characters one by one, so it runs as C passes over the UTF-8
    bytes (ASCII lower case, punctuation and whitespace: bytes.lower and one translate table;
    runs of spaces collapsed with bytes.replace) plus one bytes.replace per distinct non-ASCII
    character whose folded form differs (found among the text's multibyte characters: one C pass,
    then a set of the few left). A document has a handful of distinct non-ASCII characters but
    thousands of them in all, which str.casefold, str.split or a per-run callback would visit one
    by one. Equal to `normalize_text_reference` (tests compare them)."""
    raw = nfkc_utf8(text)
    if raw.isascii():
        return _collapse_spaces(raw.lower().translate(_SPLIT_TABLE))
    b = raw.lower().translate(_SPLIT_TABLE)
    changed = {}
    for c in set(b.translate(None, _ASCII_BYTES).decode("utf-8")):  # the multibyte characters only
        f = _fold_char(c)
        if f != c:
            changed[c] = f
    for c, f in changed.items():
        if any(ch in changed for ch in f):  # a fold that yields another changed character: no
            return normalize_text_reference(text)  # order of replaces is right; the plain path
        b = b.replace(c.encode("utf-8"), f.encode("utf-8"))
    return _collapse_spaces(b)


def text_utf8(text: str | None) -> bytes:
    """`text` as UTF-8 (a lone surrogate becomes "?"); None or a non-string (a malformed row) -> b""."""
    if not text or not isinstance(text, str):
        return b""
    return text.encode("utf-8", "replace")


def nfkc_utf8(text: str | None) -> bytes:
    """`text_utf8` of the NFKC of `text`: the first step of `normalize_text`. NFKC is the identity
    on ASCII and is skipped where `unicodedata.is_normalized` says the text is already in NFKC."""
    if isinstance(text, str) and not text.isascii() and not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text_utf8(text)


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


def _splits_at_spaces(normalized: str) -> bool:
    """True when the language-aware splitter would cut `normalized` exactly at its spaces: ASCII
    text, or no CJK character and nothing but word characters between the spaces (re's \\w is
    str.isalnum() or "_")."""
    if normalized.isascii():
        return True
    return not _CJK_RE.search(normalized) and normalized.replace(" ", "").replace("_", "a").isalnum()


def split_words(normalized: str) -> list[str]:
    """Words of already-normalised text: the project's language-aware splitter (filters/words.py,
    one word per CJK character), with a plain split where that gives the same result (faster)."""
    return normalized.split() if _splits_at_spaces(normalized) else _lang_split_words(normalized)


def spaced_words(normalized: str) -> str:
    """`split_words(normalized)` joined by single spaces (the normalised text itself when it
    splits at its spaces): the input of `shingle_hashes_spaced`."""
    return normalized if _splits_at_spaces(normalized) else " ".join(_lang_split_words(normalized))


def words_of(text: str | None) -> list[str]:
    return split_words(normalize_text(text))


# Odd 64-bit multipliers that mix the i-th word hash of an n-gram (positions are ordered).
_POSITION_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
     0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9,
     0x2545F4914F6CDD1D, 0x9FB21C651E98DF25, 0x5851F42D4C957F2D, 0x14057B7EF767814F,
     0xDA942042E4DD58B5, 0xA0761D6478BD642F, 0xE7037ED1A0B428DB, 0x8EBC6AF09C88C6E3],
    dtype=np.uint64)


# Word hash: a polynomial over the word's UTF-8 bytes (each byte + 1, times P^position, mod 2^64),
# plus the byte length times an odd constant, avalanched by MurmurHash3's fmix64. Polynomial so
# that a whole batch of texts is hashed with a handful of numpy passes over its bytes (prefix sums
# of byte * P^i; a word's hash is a difference of two prefix sums times P^-start) instead of one
# Python call per word; `word_hash` is the per-word reference the batched path must equal.
_P = 0x9E3779B97F4A7C15
_P_INV = pow(_P, -1, 1 << 64)
_LEN_MULT = 0xC2B2AE3D27D4EB4F
_M64 = (1 << 64) - 1
_POWERS: list[np.ndarray] = [np.ones(0, np.uint64), np.ones(0, np.uint64)]  # P^i and P^-i, grown on demand
_MAX_CHUNK_BYTES = 1 << 20  # texts hashed together per pass: bounds temporaries (~40 MB)


def _fmix64_int(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & _M64
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & _M64
    return h ^ (h >> 33)


@functools.lru_cache(maxsize=1 << 18)
def word_hash(word: str) -> int:
    """64-bit hash of one word (the reference for `_spaced_word_hashes`)."""
    h, p = 0, 1
    data = word.encode("utf-8", "surrogatepass")
    for byte in data:
        h = (h + (byte + 1) * p) & _M64
        p = (p * _P) & _M64
    return _fmix64_int((h + len(data) * _LEN_MULT) & _M64)


def _power_table(base: int, size: int) -> np.ndarray:
    """base^0 .. base^(size-1) mod 2^64 by doubling (log2(size) vectorised multiplies; np.cumprod
    on uint64 runs one element at a time, ~0.2 s per million)."""
    out = np.ones(1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        while len(out) < size:
            out = np.concatenate((out, out * np.uint64(pow(base, len(out), 1 << 64))))
    return out[:size]


def _powers(n: int) -> tuple[np.ndarray, np.ndarray]:
    if len(_POWERS[0]) < n:
        size = max(n, 2 * len(_POWERS[0]), 4096)
        _POWERS[:] = [_power_table(_P, size), _power_table(_P_INV, size)]
    return _POWERS[0][:n], _POWERS[1][:n]


def _fmix64(h: np.ndarray) -> np.ndarray:
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


def _hash_chunk(data: bytes) -> np.ndarray:
    """Word hashes of `data`: words separated by single spaces, no leading or trailing space."""
    b = np.frombuffer(data, dtype=np.uint8)
    n = len(b)
    fwd, inv = _powers(n + 1)
    space = np.flatnonzero(b == 32)
    starts = np.concatenate(([0], space + 1))
    ends = np.concatenate((space, [n]))
    with np.errstate(over="ignore"):
        prefix = np.empty(n + 1, dtype=np.uint64)
        prefix[0] = 0
        np.multiply(b.astype(np.uint64) + np.uint64(1), fwd[:n], out=prefix[1:])
        np.cumsum(prefix, out=prefix)
        h = (prefix[ends] - prefix[starts]) * inv[starts]
        h += (ends - starts).astype(np.uint64) * np.uint64(_LEN_MULT)
    return _fmix64(h)


def _spaced_word_hashes(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Texts of words separated by single spaces (the normalised form) -> (flat uint64 word hashes
    in order, words per text). Empty texts have no words. Texts are hashed together in chunks of
    about 1 MB of UTF-8 (a longer text alone)."""
    counts = np.array([t.count(" ") + 1 if t else 0 for t in texts], dtype=np.int64)
    parts, chunk, size = [], [], 0
    for t in texts:
        if not t:
            continue
        if chunk and size + len(t) > _MAX_CHUNK_BYTES:
            parts.append(_hash_chunk(" ".join(chunk).encode("utf-8", "surrogatepass")))
            chunk, size = [], 0
        chunk.append(t)
        size += len(t) + 1
    if chunk:
        parts.append(_hash_chunk(" ".join(chunk).encode("utf-8", "surrogatepass")))
    flat = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    return flat, counts


def _ngram_hashes(wh: np.ndarray, k: int) -> np.ndarray:
    """Position-weighted sums of k consecutive word hashes (len(wh) - k + 1 of them), unfolded."""
    m = len(wh) - k + 1
    acc = np.zeros(m, dtype=np.uint64)
    for i in range(k):
        acc += wh[i:i + m] * _POSITION_MULTIPLIERS[i]
    return acc


def _fold32(acc: np.ndarray) -> np.ndarray:
    acc ^= acc >> np.uint64(29)
    acc *= np.uint64(0xBF58476D1CE4E5B9)
    acc ^= acc >> np.uint64(32)
    return (acc & np.uint64(0xFFFFFFFF)).astype(np.uint32)


def check_ngram(ngram: int) -> None:
    """The n-gram sizes the position multipliers allow: 1..16 words."""
    if ngram < 1 or ngram > len(_POSITION_MULTIPLIERS):
        raise ValueError(f"ngram must be in 1..{len(_POSITION_MULTIPLIERS)}, got {ngram}")


def shingle_hashes(words: list[str], ngram: int = 5) -> np.ndarray:
    """uint32 hashes of the word n-grams of `words` (order matters inside an n-gram): the
    per-document reference the batched paths equal bit for bit.

    Fewer than `ngram` words (but at least one) give a single shingle of all words; no words give an
    empty array. An n-gram's hash is a position-weighted sum of its `word_hash`es, folded to 32 bits
    (what the MinHash permutations take)."""
    check_ngram(ngram)
    if not words:
        return np.zeros(0, dtype=np.uint32)
    wh = np.array([word_hash(w) for w in words], dtype=np.uint64)
    return _fold32(_ngram_hashes(wh, min(ngram, len(words))))


def shingle_hashes_batch(word_lists: list[list[str]], ngram: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """`shingle_hashes` of many documents at once: (flat uint32 hashes, per-document counts)."""
    return shingle_hashes_spaced([" ".join(ws) for ws in word_lists], ngram)


def shingle_hashes_spaced(texts: list[str], ngram: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """`shingle_hashes` of many documents given as words joined by single spaces (normalised text
    whose words are its space-separated parts, or " ".join(split_words(...))): (flat uint32
    hashes, per-document counts).

    Every word of the batch is hashed from its bytes in a few numpy passes (`_spaced_word_hashes`),
    and every document's n-grams are formed by one position-weighted sum over the flat word-hash
    array; sums that would cross into the next document are cut out. Each document's slice
    equals `shingle_hashes(words, ngram)` bit for bit (a test checks it)."""
    check_ngram(ngram)
    wh, n_words = _spaced_word_hashes(texts)
    counts = np.where(n_words >= ngram, n_words - ngram + 1, np.minimum(n_words, 1))
    total = int(n_words.sum())
    if total == 0:
        return np.zeros(0, dtype=np.uint32), counts
    starts = np.concatenate(([0], np.cumsum(n_words)[:-1]))
    out = np.empty(int(counts.sum()), dtype=np.uint64)
    offsets = np.concatenate(([0], np.cumsum(counts)[:-1]))
    long_docs = n_words >= ngram
    if long_docs.any():
        # windows starting at every word position; keep those whose n words lie in one document
        m = total - ngram + 1
        acc = _ngram_hashes(wh, ngram)
        valid = np.zeros(total + 1, dtype=np.int64)
        np.add.at(valid, starts[long_docs], 1)
        np.add.at(valid, (starts + n_words - ngram + 1)[long_docs], -1)
        vals_long = acc[np.cumsum(valid[:m]) > 0]
        docs_long = np.flatnonzero(long_docs)
        # long documents' shingles are in document order in vals_long
        idx = np.repeat(offsets[docs_long] - np.concatenate(([0], np.cumsum(counts[docs_long])[:-1])),
                        counts[docs_long]) + np.arange(len(vals_long))
        out[idx] = vals_long
    for d in np.flatnonzero((n_words > 0) & ~long_docs).tolist():  # fewer words than the n-gram
        k = int(n_words[d])
        out[offsets[d]] = (wh[starts[d]:starts[d] + k] * _POSITION_MULTIPLIERS[:k]).sum(dtype=np.uint64)
    return _fold32(out), counts


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
