"""Dedup preparation of a batch in compiled code (filters/dedup_native.c), loaded with ctypes.

Profiles of the dedup job put most of its CPU in normalising text and hashing words: numpy does
each step in C, but as a dozen passes over the batch with temporaries, plus Python work per
document. The C kernel does normalisation, word and n-gram hashes, distinct shingle sets and
MinHash signatures in two passes, and gives the same values bit for bit as the numpy path
(filters/dedup_text.py, filters/minhash_signature.py), which stays the reference and the fallback.

The library is built on first use with the system C compiler (`cc`, or $CC) into a cache folder
($CIDERMILL_NATIVE_DIR, else ~/.cache/cidermill/native, else a private folder under the temp
directory), under a name that hashes the source and the flags, so a changed source is rebuilt and
concurrent builders never see a half-written file.
No compiler, a failed build, or CIDERMILL_NATIVE=0: `available()` is False and callers use the
numpy path; the output is the same either way.
"""
from __future__ import annotations

import ctypes
import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import unicodedata
from pathlib import Path

import numpy as np

from filters.dedup_text import _POSITION_MULTIPLIERS, _SPLIT_TABLE, _fold_char, check_ngram, nfkc_utf8, text_utf8
from filters.nfkc_chars import per_char
from filters.words import CJK_RANGES, CJK_RE

log = logging.getLogger(__name__)

_SRC = Path(__file__).with_name("dedup_native.c")
_CFLAGS = ("-O3", "-shared", "-fPIC", "-std=c99")
_P = ctypes.c_void_p
_I64 = ctypes.c_int64


def _cache_dirs() -> list[Path]:
    """Where the library may live, in order: $CIDERMILL_NATIVE_DIR alone when set; else the user's
    cache folder, then a private (0700, this user's) folder under the temp directory for a home
    that cannot be written."""
    env = os.environ.get("CIDERMILL_NATIVE_DIR")
    if env:
        return [Path(env)]
    dirs = []
    try:
        dirs.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cidermill/native")
    except RuntimeError:  # no home directory
        pass
    dirs.append(Path(tempfile.gettempdir()) / f"cidermill-native-{os.getuid()}")
    return dirs


def _private_enough(d: Path) -> bool:
    """A folder under a shared temp directory is used only when this user owns it and nobody else
    can write to it (else someone could plant a library for us to load)."""
    if not str(d).startswith(tempfile.gettempdir()):
        return True
    st = d.stat()
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _library_name() -> str:
    key = hashlib.sha256(_SRC.read_bytes() + repr((_CFLAGS, platform.machine(), sys.platform)).encode())
    return f"dedup-{key.hexdigest()[:16]}.so"


def build() -> Path:
    """The compiled kernel's path: found in a cache folder, or compiled into the first one that can
    be written (atomically: concurrent builders never load a half-written file)."""
    name = _library_name()
    dirs = _cache_dirs()
    for d in dirs:
        if (d / name).exists() and _private_enough(d):
            return d / name
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not cc:
        raise RuntimeError("no C compiler (cc) on PATH")
    errors = []
    for d in dirs:
        try:
            d.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not _private_enough(d):
                raise PermissionError(f"{d} is not private to this user")
            return _compile(cc, d / name)
        except OSError as e:
            errors.append(f"{d}: {e}")
    raise RuntimeError("no cache folder can be written: " + "; ".join(errors))


def _compile(cc: str, path: Path) -> Path:
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=path.parent)
    os.close(fd)
    try:
        subprocess.run([cc, *_CFLAGS, "-o", tmp, str(_SRC)], check=True, capture_output=True, timeout=120)
        os.replace(tmp, path)
    except subprocess.CalledProcessError as e:
        raise RuntimeError(f"{cc} failed on {_SRC.name}: {e.stderr.decode(errors='replace')[-500:]}") from e
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


@functools.lru_cache(maxsize=1)
def _library():
    if os.environ.get("CIDERMILL_NATIVE", "1") == "0":
        return None
    try:
        lib = ctypes.CDLL(str(build()))
    except (OSError, RuntimeError, subprocess.SubprocessError) as e:
        log.warning("dedup: compiled kernel unavailable (%s); using the numpy path (same output)", e)
        return None
    lib.cm_codepoints.argtypes = [_P, _I64, _P, _P, _I64]
    lib.cm_codepoints.restype = _I64
    lib.cm_normalize.argtypes = [_P, _P, _I64, _P, _P, _P, _P, _P, _I64, _P, _P, _P, _P]
    lib.cm_normalize.restype = _I64
    lib.cm_space_words.argtypes = [_P, _P, _I64, _P, _P, _I64, _P, _P, _P]
    lib.cm_space_words.restype = _I64
    lib.cm_signatures.argtypes = [_P, _P, _I64, ctypes.c_int, _P, _P, _P, ctypes.c_int, _P, _P, _I64, _P]
    lib.cm_signatures.restype = ctypes.c_int
    return lib


def available() -> bool:
    return _library() is not None


def _ptr(a: np.ndarray) -> int:
    """The address of an array's data: the caller holds the array for as long as C reads it."""
    return a.ctypes.data


_CJK_RANGES = np.array(CJK_RANGES, dtype=np.uint32).ravel()
_ASCII_TABLE = np.frombuffer(bytes(range(128)).lower().translate(_SPLIT_TABLE), dtype=np.uint8).copy()


PLAIN, OTHER, CJK_WORD = 0, 1, 2  # how a character splits into words (the kernel's flags)
NEEDS_NFKC = 4  # a character NFKC does not map one by one: its text is normalised whole first


# Multibyte characters that separate words (no word character, no space), one byte per code
# point: set as characters are folded, so every one that a normalised text can hold is marked
# before `spaced_batch` reads it (a byte store per character: no lost update between threads)
_SEPARATOR = np.zeros(0x110000, dtype=np.uint8)


def _entry(c: str, f: str) -> tuple[bytes | None, int]:
    """(UTF-8 of `f`, the fold of character `c`, or None when it is `c` itself; how `f` splits)."""
    if f == c and CJK_RE.match(c):
        kind = CJK_WORD
    elif all(ch == " " or (ch.isalnum() and not CJK_RE.match(ch)) for ch in f):
        kind = PLAIN
    else:
        kind = OTHER
        for ch in f:
            if ord(ch) > 127 and not (ch.isalnum() or ch.isspace() or CJK_RE.match(ch)):
                _SEPARATOR[ord(ch)] = 1
    return (None if f == c else f.encode("utf-8", "surrogatepass")), kind


@functools.lru_cache(maxsize=1 << 16)
def _code_point(cp: int) -> tuple[bytes | None, int]:
    """For a character of text already in NFKC: (folded UTF-8 bytes, or None when the character
    stays as it is; how the result splits: PLAIN, spaces and word characters of a language
    written with spaces; CJK_WORD, a Han or Kana character, a word by itself; OTHER, anything
    else: its non-word characters separate words, see `spaced_batch`)."""
    c = chr(cp)
    return _entry(c, _fold_char(c))


_MAX_FOLD_BYTES = 6  # the longest fold of one character of NFKC text (casefold: 3 two-byte characters)


@functools.lru_cache(maxsize=1 << 16)
def _code_point_raw(cp: int) -> tuple[bytes | None, int]:
    """As `_code_point` for a character of text not yet in NFKC: the fold of its NFKC where NFKC
    maps it one by one (filters/nfkc_chars.py), else NEEDS_NFKC. A character whose fold would be
    longer than any fold of NFKC text (a few ligatures and squared words) also takes the whole-text
    path, which bounds the kernel's output buffer."""
    c = chr(cp)
    if not per_char(c):
        return None, NEEDS_NFKC
    n = unicodedata.normalize("NFKC", c)
    if n == c:
        return _code_point(cp)
    f = "".join(_fold_char(ch) for ch in n)
    if len(f.encode("utf-8", "surrogatepass")) > _MAX_FOLD_BYTES:
        return None, NEEDS_NFKC
    return _entry(c, f)


_SCRATCH = threading.local()


def _scratch(name: str, size: int, dtype) -> np.ndarray:
    """A buffer of at least `size` items kept for the next batch of this thread: fresh tens of MB
    per batch cost more in page faults than the kernel's work on them."""
    buf = getattr(_SCRATCH, name, None)
    if buf is None or len(buf) < size:
        buf = np.empty(max(size, 2 * (0 if buf is None else len(buf))), dtype=dtype)
        setattr(_SCRATCH, name, buf)
    return buf


def offsets(parts: list[bytes]) -> np.ndarray:
    off = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter((len(p) for p in parts), dtype=np.int64, count=len(parts)), out=off[1:])
    return off


def normalize_batch(texts: list) -> tuple[bytes, np.ndarray, np.ndarray]:
    """`normalize_text` of every text as UTF-8: (bytes of all, int64 offsets (n+1), uint8 flags:
    how each text splits into words; see `spaced_batch`). NFKC is folded per character with the
    rest where it maps characters one by one; the few texts with other characters (combining
    marks, jamo) go through `unicodedata.normalize` first and the kernel again."""
    buf, off, flags = _normalize_parts([text_utf8(t) for t in texts], _code_point_raw)
    redo = np.flatnonzero(flags & NEEDS_NFKC)
    if not len(redo):
        return buf, off, flags
    sub_buf, sub_off, sub_flags = _normalize_parts([nfkc_utf8(texts[d]) for d in redo.tolist()], _code_point)
    bounds, sub_bounds = off.tolist(), sub_off.tolist()
    parts = [buf[lo:hi] for lo, hi in zip(bounds, bounds[1:])]
    for j, d in enumerate(redo.tolist()):
        parts[d] = sub_buf[sub_bounds[j]:sub_bounds[j + 1]]
    flags = flags.copy()
    flags[redo] = sub_flags
    return b"".join(parts), offsets(parts), flags


def _normalize_parts(parts: list[bytes], code_point) -> tuple[bytes, np.ndarray, np.ndarray]:
    """The kernel's normalisation of UTF-8 texts, each distinct multibyte character folded once
    by `code_point` (-> (fold bytes or None, flag bits))."""
    lib = _library()
    src = b"".join(parts)
    off = offsets(parts)
    seen = np.zeros(0x110000 // 8, dtype=np.uint8)
    found = np.empty(4096, dtype=np.uint32)
    n_found = lib.cm_codepoints(src, len(src), _ptr(seen), _ptr(found), len(found))
    if n_found < 0:  # more distinct characters than the first try holds: room for all of them
        seen[:] = 0
        found = np.empty(len(src) + 1, dtype=np.uint32)
        n_found = lib.cm_codepoints(src, len(src), _ptr(seen), _ptr(found), len(found))
    cps, repl, flags = [], [], []
    for cp in sorted(found[:n_found].tolist()):
        fold, kind = code_point(cp)
        if fold is not None or kind != PLAIN:
            cps.append(cp)
            repl.append(fold if fold is not None else chr(cp).encode("utf-8"))
            flags.append(kind)
    repl_off = offsets(repl)
    repl_len = np.diff(repl_off)
    growth = max([len(r) for r in repl] + [1])  # a character of 2+ bytes becomes at most `growth` bytes
    out = _scratch("text", len(src) * max(1, (growth + 1) // 2) + 1, np.uint8)
    out_off = np.empty(len(parts) + 1, dtype=np.int64)
    doc_flag = np.empty(len(parts), dtype=np.uint8)
    cps_a, flags_a = np.array(cps, dtype=np.uint32), np.array(flags, dtype=np.uint8)  # held: C reads them
    repl_start = repl_off[:-1].copy()
    n_out = lib.cm_normalize(src, _ptr(off), len(parts), _ptr(_ASCII_TABLE), _ptr(cps_a), _ptr(repl_start),
                             _ptr(repl_len), _ptr(flags_a), len(cps), b"".join(repl) or b"\0",
                             _ptr(out), _ptr(out_off), _ptr(doc_flag))
    return out[:n_out].tobytes(), out_off, doc_flag


def spaced_batch(buf: bytes, off: np.ndarray, flags: np.ndarray) -> tuple[bytes, np.ndarray]:
    """`spaced_words` of every normalised text of `normalize_batch` (whose folds mark the
    separators), as UTF-8 (bytes, offsets): texts of flag PLAIN as they are, the others split by
    the kernel as Python's word splitter splits them (Han and Kana characters are words of their
    own; marks, format and control characters separate words)."""
    if not flags.any():
        return buf, off
    lib = _library()
    n = len(flags)
    out = _scratch("spaced", len(buf) * 5 // 3 + n + 1, np.uint8)
    out_off = np.empty(n + 1, dtype=np.int64)
    off64 = np.ascontiguousarray(off, dtype=np.int64)
    flags8 = np.ascontiguousarray(flags, dtype=np.uint8)
    n_out = lib.cm_space_words(buf, _ptr(off64), n, _ptr(flags8), _ptr(_CJK_RANGES), len(_CJK_RANGES) // 2,
                               _ptr(_SEPARATOR), _ptr(out), _ptr(out_off))
    return out[:n_out].tobytes(), out_off


def signatures_batch(buf: bytes, off: np.ndarray, ngram: int, a: np.ndarray, b: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For documents given as words joined by single spaces (buf[off[d]:off[d+1]]): (uint32
    signatures (n, len(a)), flat sorted distinct shingle hashes, their counts per document), as
    `shingle_hashes_spaced` + `distinct_per_document` + `MinHasher.signatures` give them."""
    check_ngram(ngram)
    lib = _library()
    n = len(off) - 1
    sigs = np.empty((n, len(a)), dtype=np.uint32)
    counts = np.empty(n, dtype=np.int64)
    a32, b32 = np.ascontiguousarray(a, dtype=np.uint32), np.ascontiguousarray(b, dtype=np.uint32)
    off64 = np.ascontiguousarray(off, dtype=np.int64)
    # words joined by single spaces: at most (bytes + 1) / 2 words per text; else count the spaces
    for attempt in range(2):
        words = (len(buf) + n) // 2 + 1 if attempt == 0 else buf.count(b" ") + n + 1
        sets = _scratch("sets", words, np.uint32)
        status = lib.cm_signatures(buf or b"\0", _ptr(off64), n, int(ngram), _ptr(_POSITION_MULTIPLIERS), _ptr(a32),
                                   _ptr(b32), len(a32), _ptr(sigs), _ptr(sets), len(sets), _ptr(counts))
        if status != -2:
            break
    if status != 0:
        raise MemoryError("dedup kernel: out of memory")
    return sigs, sets[:int(counts.sum())].copy(), counts
